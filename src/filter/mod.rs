//! The focused-crawl filters of the source documents, as pure functions of
//! settings and stored features, so the crawl and `refilter` share them:
//!
//! - [`domain`]: stage 1 of document 000 — key domains derived from the
//!   seeds by removing common labels; a host passes when it contains one.
//! - [`topic`]: stage 2 of document 000 — formula (1), the keyword score
//!   over title and body.
//! - [`relevance`]: document 001 — cosine of the page's keyword vector with
//!   the weighted topic vector.
//! - [`links`]: document 001 — the five link types and the per-type policy.
//! - [`judge`]: whether a link is followed, all reasons in order; with
//!   [`scope`] (which hosts the crawl enters) and [`robots_tag`]
//!   (X-Robots-Tag), the whole "is this link followed" decision.
//! - [`denoise`]: document 003 — the lines of a page the filters leave out
//!   (navigation, ads, copyright), and its title, author and date.

mod dates;
pub mod denoise;
pub mod domain;
pub mod judge;
pub mod keywords;
pub mod links;
pub mod relevance;
pub mod robots_tag;
pub mod scope;
mod site_titles;
pub mod topic;

use crate::model::named_enum;
use crate::model::{LinkVerdict, Verdict};
use domain::DomainFilter;
use keywords::Keywords;
use links::{LinkFacts, LinkPolicy, LinkType, PolicyVerdict};
use relevance::Topic;
use topic::TopicParams;

/// Which of the source documents' filters the crawl applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// No focusing: every in-scope link is followed.
    #[default]
    None,
    /// 000 stage 1: links to hosts without a key domain are dropped.
    Domain,
    /// 000 stages 1 + 2: such links are fetched, and the page's links are
    /// followed only when its topic score is above the threshold.
    DomainTopic,
    /// 001: links are followed from pages with cos ≥ r.
    Relevance,
    /// 001 with the link-type policy on each link.
    RelevanceLinkType,
}

named_enum!(Mode {
    None => "none",
    Domain => "domain",
    DomainTopic => "domain+topic",
    Relevance => "relevance",
    RelevanceLinkType => "relevance+linktype",
});

/// The filters' settings; every field is settable from the shell.
#[derive(Clone, Debug, PartialEq)]
pub struct FilterSettings {
    pub mode: Mode,
    /// Labels removed from seed hosts to leave key domains.
    pub common_domains: Vec<String>,
    /// Key domains added by hand.
    pub extra_keys: Vec<String>,
    /// Derived key domains removed by hand.
    pub removed_keys: Vec<String>,
    pub topic: TopicParams,
    pub topic_keywords: Vec<String>,
    /// Keywords with weights for the cosine relevance.
    pub relevance_keywords: Vec<(String, f64)>,
    /// r: a page is relevant when cos ≥ r.
    pub relevance_threshold: f64,
    pub links: LinkPolicy,
}

impl Default for FilterSettings {
    fn default() -> Self {
        let kw: Vec<String> = TopicParams::PRESET_B_KEYWORDS.map(String::from).to_vec();
        FilterSettings {
            mode: Mode::None,
            common_domains: domain::DEFAULT_COMMON.map(String::from).to_vec(),
            extra_keys: Vec::new(),
            removed_keys: Vec::new(),
            topic: TopicParams::PRESET_B,
            relevance_keywords: kw.iter().map(|k| (k.clone(), 1.0)).collect(),
            topic_keywords: kw,
            relevance_threshold: 0.1,
            links: LinkPolicy::default(),
        }
    }
}

/// A page's scores and whether its links are followed, with the reason.
#[derive(Clone, Debug, PartialEq)]
pub struct PageVerdict {
    pub topic_score: Option<f64>,
    pub relevance: Option<f64>,
    pub follow: bool,
    /// Whether the page passed the page filters.
    pub verdict: Verdict,
    /// The numbers that decided it.
    pub detail: String,
}

/// A link's type and the policy's decision.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkJudgement {
    pub kind: LinkType,
    /// `None` to follow; else the filter that dropped it
    /// ([`LinkVerdict::Domain`] or [`LinkVerdict::LinkType`]).
    pub dropped_by: Option<LinkVerdict>,
    pub detail: String,
}

/// Settings made ready to apply: tries and automata built once.
#[derive(Clone, Debug)]
pub struct Filters {
    pub settings: FilterSettings,
    pub domain: DomainFilter,
    topic_kw: Keywords,
    relevance: Topic,
}

impl Filters {
    /// The filters for seed URLs `seeds` (their hosts give the key
    /// domains; a seed that does not parse gives none).
    pub fn for_seeds<'a>(
        settings: &FilterSettings,
        seeds: impl Iterator<Item = &'a String>,
    ) -> Filters {
        let hosts: Vec<String> = seeds
            .filter_map(|u| crate::model::normalize(u).ok())
            .map(|u| u.host().to_string())
            .collect();
        Filters::new(settings, hosts.iter().map(String::as_str))
    }

    /// Builds the filters; key domains come from `seed_hosts`.
    pub fn new<'a>(
        settings: &FilterSettings,
        seed_hosts: impl IntoIterator<Item = &'a str>,
    ) -> Filters {
        let mut domain = DomainFilter::from_seeds(seed_hosts, &settings.common_domains);
        for k in &settings.removed_keys {
            domain.remove_key(k);
        }
        for k in &settings.extra_keys {
            domain.add_key(k);
        }
        let weighted: Vec<(&str, f64)> = settings
            .relevance_keywords
            .iter()
            .map(|(k, w)| (k.as_str(), *w))
            .collect();
        Filters {
            settings: settings.clone(),
            domain,
            topic_kw: Keywords::new(&settings.topic_keywords),
            relevance: Topic::new(&weighted, settings.relevance_threshold),
        }
    }

    /// Similarity of a page to the query: the relevance cosine over the
    /// relevance keywords, whatever the mode (Shark-search's sim(q, p)),
    /// and whether it passes the threshold r.
    pub fn similarity(&self, title: &str, text: &str) -> (f64, bool) {
        let cos = relevance::relevance_of_parts(&self.relevance, &[title, text]).cosine;
        (cos, self.is_relevant(cos))
    }

    /// Shark-search's anchor-context score of a link: 1 when its anchor
    /// holds a keyword, else the similarity of the anchor and the text
    /// around it.
    pub fn anchor_score(&self, before: &str, anchor: &str, after: &str) -> f64 {
        let mut counts = self.relevance.keywords.counts(anchor);
        if counts.iter().any(|&c| c > 0) {
            return 1.0;
        }
        for part in [before, after] {
            self.relevance.keywords.add_counts(part, &mut counts);
        }
        relevance::relevance_of_counts(&self.relevance, &counts).cosine
    }

    /// The topic score of a page under the topic keywords, whatever the
    /// mode (a candidate seed site's home page, say).
    pub fn topic(&self, title: &str, text: &str) -> f64 {
        topic::topic_score(&self.topic_kw, &self.settings.topic, title, text).score
    }

    /// Whether the relevance threshold r is met by `cosine`.
    pub fn is_relevant(&self, cosine: f64) -> bool {
        cosine > 0.0 && cosine >= self.relevance.threshold
    }

    /// Whether [`Filters::page`] reads the title and text in this mode.
    pub fn reads_text(&self) -> bool {
        !matches!(self.settings.mode, Mode::None | Mode::Domain)
    }

    /// Judges a fetched page on `host` from its title and body text.
    pub fn page(&self, host: &str, title: &str, text: &str) -> PageVerdict {
        let s = &self.settings;
        match s.mode {
            Mode::None | Mode::Domain => PageVerdict {
                topic_score: None,
                relevance: None,
                follow: true,
                verdict: Verdict::Keep,
                detail: String::new(),
            },
            Mode::DomainTopic => {
                let t = topic::topic_score(&self.topic_kw, &s.topic, title, text);
                let on_domain = self.domain.passes(host);
                let follow = on_domain || t.passes(&s.topic);
                let detail = format!(
                    "domain {}; topic score {:.4} {} threshold {} (title keywords {}, body keywords {}, distinct {})",
                    if on_domain { "passes" } else { "fails" },
                    t.score,
                    if t.passes(&s.topic) { ">" } else { "≤" },
                    s.topic.threshold,
                    t.in_title,
                    t.in_body,
                    t.distinct
                );
                PageVerdict {
                    topic_score: Some(t.score),
                    relevance: None,
                    follow,
                    verdict: if follow {
                        Verdict::Keep
                    } else {
                        Verdict::Topic
                    },
                    detail,
                }
            }
            Mode::Relevance | Mode::RelevanceLinkType => {
                let r = relevance::relevance_of_parts(&self.relevance, &[title, text]);
                let relevant = r.relevant(&self.relevance);
                // Links of an irrelevant page are followed only when the
                // policy does not restrict them to relevant pages.
                let follow = relevant || !s.links.relevant_only;
                let detail = format!(
                    "cos {:.4} {} r = {}",
                    r.cosine,
                    if relevant { "≥" } else { "<" },
                    s.relevance_threshold
                );
                PageVerdict {
                    topic_score: None,
                    relevance: Some(r.cosine),
                    follow,
                    verdict: if relevant {
                        Verdict::Keep
                    } else {
                        Verdict::Relevance
                    },
                    detail,
                }
            }
        }
    }

    /// Judges one link of type `kind` between pages with ids `ids`, on a
    /// page that counts as relevant (`source_relevant`: kept by the page
    /// filters, or followed under soft focus); `dst_host` is needed only in
    /// domain mode.
    pub fn link(
        &self,
        kind: LinkType,
        ids: (u128, u128),
        dst_host: Option<&str>,
        text: [&str; 3],
        source_relevant: bool,
    ) -> LinkJudgement {
        let keep = |kind| LinkJudgement {
            kind,
            dropped_by: None,
            detail: String::new(),
        };
        match self.settings.mode {
            Mode::Domain => {
                let host = dst_host.unwrap_or("");
                if self.domain.passes(host) {
                    keep(kind)
                } else {
                    let keys = self.domain.keys().join(" ");
                    LinkJudgement {
                        kind,
                        dropped_by: Some(LinkVerdict::Domain),
                        detail: format!("host {host} contains no key domain ({keys})"),
                    }
                }
            }
            Mode::RelevanceLinkType => {
                let facts = LinkFacts {
                    kind,
                    src: ids.0,
                    dst: ids.1,
                    before: text[0],
                    anchor: text[1],
                    after: text[2],
                    source_relevant,
                };
                match links::decide(&self.settings.links, &self.relevance.keywords, &facts) {
                    PolicyVerdict::Follow => keep(kind),
                    PolicyVerdict::IrrelevantSource => LinkJudgement {
                        kind,
                        dropped_by: Some(LinkVerdict::LinkType),
                        detail: "the linking page is not relevant".into(),
                    },
                    PolicyVerdict::Coin(c) => LinkJudgement {
                        kind,
                        dropped_by: Some(LinkVerdict::LinkType),
                        detail: format!(
                            "upward link, coin {c:.4} ≥ p = {}",
                            self.settings.links.upward_p
                        ),
                    },
                    PolicyVerdict::AnchorContext(n) => LinkJudgement {
                        kind,
                        dropped_by: Some(LinkVerdict::LinkType),
                        detail: format!(
                            "{} link, {n} keyword(s) around the anchor < {}",
                            kind.name(),
                            self.settings.links.min_anchor_hits
                        ),
                    },
                }
            }
            _ => keep(kind),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_decide_pages_and_links() {
        let u = |s: &str| url::Url::parse(s).unwrap();
        let seeds = ["www.uestc.edu.cn"];
        let mut s = FilterSettings {
            mode: Mode::Domain,
            ..FilterSettings::default()
        };
        let f = Filters::new(&s, seeds);
        let home = u("http://www.uestc.edu.cn/a/index.html");
        let off = u("http://www.other.com/x");
        let kind = links::classify(&home, &off);
        let j = f.link(
            kind,
            (1, 2),
            off.host_str(),
            ["", "", ""],
            f.page("www.uestc.edu.cn", "", "").verdict == Verdict::Keep,
        );
        assert_eq!(
            (j.kind, j.dropped_by),
            (LinkType::Outward, Some(LinkVerdict::Domain))
        );
        let on = u("http://lib.uestc.edu.cn/y");
        let j = f.link(
            links::classify(&home, &on),
            (1, 3),
            on.host_str(),
            ["", "", ""],
            f.page("", "", "").verdict == Verdict::Keep,
        );
        assert_eq!(j.dropped_by, None);

        s.mode = Mode::DomainTopic;
        let f = Filters::new(&s, seeds);
        // Off-domain but on-topic (score 1.44 > 0.5): links followed.
        let v = f.page(
            "www.other.com",
            "研究生论文答辩",
            "今年研究生毕业典礼后举行篮球赛",
        );
        assert!(v.follow && (v.topic_score.unwrap() - 1.44).abs() < 1e-9);
        let v = f.page("www.other.com", "购物", "价格");
        assert_eq!((v.follow, v.verdict), (false, Verdict::Topic));
        assert!(
            f.page("news.uestc.edu.cn", "购物", "价格").follow,
            "on-domain pages pass stage 1"
        );

        s.mode = Mode::Relevance;
        let f = Filters::new(&s, seeds);
        assert!(f.page("x", "篮球", "").follow);
        assert_eq!(f.page("x", "购物", "").verdict, Verdict::Relevance);
        assert!(!f.page("x", "购物", "").follow);
    }
}
