//! Document 001's link analysis: each link is downward, upward, horizontal,
//! crosswise or outward from the URL paths of its source p and target q,
//! and each type has its own policy:
//!
//! - downward and horizontal: followed;
//! - upward: followed with probability p (0.5), decided by a hash of the
//!   link so that a rerun decides the same;
//! - crosswise and outward: followed when topic keywords occur in the
//!   anchor text plus about 50 bytes of text on each side.
//!
//! Only links of relevant pages are followed (settable).

use xxhash_rust::xxh3::xxh3_64;

use super::keywords::Keywords;

pub use crate::model::LinkType;

/// The directory of a path: everything up to and including the last `/`.
fn dir(path: &str) -> &str {
    path.rfind('/').map_or("/", |i| &path[..=i])
}

pub fn classify(p: &url::Url, q: &url::Url) -> LinkType {
    if p.host_str() != q.host_str() || p.port_or_known_default() != q.port_or_known_default() {
        return LinkType::Outward;
    }
    let (dp, dq) = (dir(p.path()), dir(q.path()));
    if dp == dq {
        LinkType::Horizontal
    } else if dq.starts_with(dp) {
        LinkType::Downward
    } else if dp.starts_with(dq) {
        LinkType::Upward
    } else {
        LinkType::Crosswise
    }
}

/// The reproducible coin: a uniform number in [0, 1) from the link's ids.
pub fn coin(src: u128, dst: u128) -> f64 {
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(&src.to_be_bytes());
    key[16..].copy_from_slice(&dst.to_be_bytes());
    (xxh3_64(&key) >> 11) as f64 / (1u64 << 53) as f64
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkPolicy {
    /// Probability of following an upward link.
    pub upward_p: f64,
    /// Keyword occurrences needed around a crosswise or outward link.
    pub min_anchor_hits: u32,
    /// Follow links of relevant pages only.
    pub relevant_only: bool,
}

impl Default for LinkPolicy {
    fn default() -> Self {
        LinkPolicy {
            upward_p: 0.5,
            min_anchor_hits: 1,
            relevant_only: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum PolicyVerdict {
    Follow,
    /// The source page is not relevant.
    IrrelevantSource,
    /// An upward link that lost the coin (with the coin's value).
    Coin(f64),
    /// Too few keywords around a crosswise/outward link (with the count).
    AnchorContext(u32),
}

/// What the policy says about one link.
pub struct LinkFacts<'a> {
    pub kind: LinkType,
    pub src: u128,
    pub dst: u128,
    pub anchor: &'a str,
    pub before: &'a str,
    pub after: &'a str,
    pub source_relevant: bool,
}

pub fn decide(policy: &LinkPolicy, keywords: &Keywords, f: &LinkFacts<'_>) -> PolicyVerdict {
    if policy.relevant_only && !f.source_relevant {
        return PolicyVerdict::IrrelevantSource;
    }
    match f.kind {
        LinkType::Downward | LinkType::Horizontal => PolicyVerdict::Follow,
        LinkType::Upward => {
            let c = coin(f.src, f.dst);
            if c < policy.upward_p {
                PolicyVerdict::Follow
            } else {
                PolicyVerdict::Coin(c)
            }
        }
        LinkType::Crosswise | LinkType::Outward => {
            let hits = anchor_hits(keywords, f.before, f.anchor, f.after);
            if hits >= policy.min_anchor_hits {
                PolicyVerdict::Follow
            } else {
                PolicyVerdict::AnchorContext(hits)
            }
        }
    }
}

/// Keyword occurrences in the anchor text and the context on each side.
pub fn anchor_hits(keywords: &Keywords, before: &str, anchor: &str, after: &str) -> u32 {
    keywords.total(before) + keywords.total(anchor) + keywords.total(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    #[test]
    fn the_five_link_types() {
        let p = u("http://site.org/news/sport/index.html");
        assert_eq!(
            classify(&p, &u("http://site.org/news/sport/2024/a.html")),
            LinkType::Downward
        );
        assert_eq!(
            classify(&p, &u("http://site.org/news/b.html")),
            LinkType::Upward
        );
        assert_eq!(classify(&p, &u("http://site.org/")), LinkType::Upward);
        assert_eq!(
            classify(&p, &u("http://site.org/news/sport/c.html?x=1")),
            LinkType::Horizontal
        );
        assert_eq!(
            classify(&p, &u("http://site.org/news/sport/")),
            LinkType::Horizontal
        );
        assert_eq!(
            classify(&p, &u("http://site.org/edu/d.html")),
            LinkType::Crosswise
        );
        assert_eq!(
            classify(&p, &u("http://site.org/news/finance/e.html")),
            LinkType::Crosswise
        );
        assert_eq!(
            classify(&p, &u("http://other.org/news/sport/f.html")),
            LinkType::Outward
        );
        assert_eq!(
            classify(&p, &u("http://site.org:8080/news/sport/g.html")),
            LinkType::Outward
        );
        assert_eq!(
            classify(&p, &u("https://site.org/news/sport/h.html")),
            LinkType::Outward,
            "another port (443)"
        );
    }

    #[test]
    fn the_upward_coin_is_reproducible_and_fair() {
        assert_eq!(coin(1, 2), coin(1, 2));
        let n = 100_000u128;
        let heads = (0..n).filter(|i| coin(7, *i) < 0.5).count() as f64 / n as f64;
        assert!((heads - 0.5).abs() < 0.01, "rate {heads}");
        let k = Keywords::new(&["体育"]);
        let policy = LinkPolicy::default();
        let follow = |i: u128| {
            let f = LinkFacts {
                kind: LinkType::Upward,
                src: 9,
                dst: i,
                anchor: "",
                before: "",
                after: "",
                source_relevant: true,
            };
            decide(&policy, &k, &f) == PolicyVerdict::Follow
        };
        let verdicts: Vec<bool> = (0..1000u128).map(follow).collect();
        // Decided by the link's hash, so a rerun decides the same, at rate p.
        assert_eq!(verdicts, (0..1000u128).map(follow).collect::<Vec<_>>());
        let rate = verdicts.iter().filter(|v| **v).count();
        assert!((430..570).contains(&rate), "{rate} of 1000 followed");
    }

    #[test]
    fn anchor_context_counts_cjk_keywords() {
        let k = Keywords::new(&["体育", "篮球"]);
        let policy = LinkPolicy::default();
        let f = |before, anchor, after| LinkFacts {
            kind: LinkType::Outward,
            src: 1,
            dst: 2,
            anchor,
            before,
            after,
            source_relevant: true,
        };
        assert_eq!(anchor_hits(&k, "学校体育新闻", "篮球比赛", "体育馆开放"), 3);
        assert_eq!(
            decide(&policy, &k, &f("学校新闻", "比赛", "体育馆")),
            PolicyVerdict::Follow
        );
        assert_eq!(
            decide(&policy, &k, &f("学校新闻", "比赛", "开放")),
            PolicyVerdict::AnchorContext(0)
        );
        let strict = LinkPolicy {
            min_anchor_hits: 2,
            ..LinkPolicy::default()
        };
        assert_eq!(
            decide(&strict, &k, &f("学校新闻", "比赛", "体育馆")),
            PolicyVerdict::AnchorContext(1)
        );
        let irrelevant = LinkFacts {
            source_relevant: false,
            ..f("", "", "")
        };
        assert_eq!(
            decide(&policy, &k, &irrelevant),
            PolicyVerdict::IrrelevantSource
        );
    }
}
