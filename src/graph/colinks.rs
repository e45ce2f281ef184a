//! Co-link analysis (document 003): the hosts that crawled pages link to
//! and that are not seed sites, counted by the distinct sites and pages
//! that link to them, with the anchor texts most used for them. A site is
//! a registrable domain (an IP address's site is its origin): `www.x.org`
//! linking to `x.org`, or two blogs of one platform linking to it, are one
//! site, and a host's own site's links do not count. Pure: the caller
//! streams each page's links in. Memory grows with the hosts met and the
//! (candidate, linking site) pairs, not with pages or links.

use std::collections::{HashMap, HashSet};

use crate::filter::scope::site_key;

/// Anchor texts kept a candidate (the space-saving sketch's size: the
/// most used ones are found, their counts are upper bounds).
const ANCHORS: usize = 8;
/// An anchor text is cut to this many characters.
const ANCHOR_CHARS: usize = 80;

/// A host proposed as a seed site.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// `scheme://host[:port]`.
    pub origin: String,
    /// Distinct crawled sites (other than its own) linking to it.
    pub sites: u32,
    /// Distinct pages linking to it.
    pub pages: u64,
    /// Links to it.
    pub links: u64,
    /// The anchor texts most used for it, most used first, with counts.
    pub anchors: Vec<(String, u32)>,
}

#[derive(Default)]
struct Tally {
    sites: u32,
    pages: u64,
    links: u64,
    anchors: Vec<(String, u32)>,
}

impl Tally {
    /// Space-saving: a new text takes the place of the least counted one,
    /// with its count plus one.
    fn anchor(&mut self, text: &str) {
        // Stored anchors are collapsed already (`parse::html::collapse`):
        // a copy only for one that is not, or a text the sketch keeps.
        let collapsed = !text.starts_with(' ')
            && !text.ends_with(' ')
            && !text.contains("  ")
            && !text.contains(|c: char| c.is_whitespace() && c != ' ');
        let joined;
        let text = if collapsed {
            text
        } else {
            joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
            joined.as_str()
        };
        if text.is_empty() {
            return;
        }
        let text = text
            .char_indices()
            .nth(ANCHOR_CHARS)
            .map_or(text, |(cut, _)| &text[..cut]);
        if let Some(a) = self.anchors.iter_mut().find(|(t, _)| t == text) {
            a.1 += 1;
        } else if self.anchors.len() < ANCHORS {
            self.anchors.push((text.to_string(), 1));
        } else if let Some(min) = self.anchors.iter_mut().min_by_key(|(_, n)| *n) {
            *min = (text.to_string(), min.1 + 1);
        }
    }
}

/// The counts as pages are read.
#[derive(Default)]
pub struct CoLinks {
    index: HashMap<String, u32>,
    names: Vec<String>,
    /// By host number: a seed site's host, or one a person decided about.
    excluded: Vec<bool>,
    /// By host number: its site's number.
    site_of: Vec<u32>,
    sites: HashMap<String, u32>,
    tallies: HashMap<u32, Tally>,
    /// (candidate, linking site) pairs met.
    pairs: HashSet<(u32, u32)>,
}

impl CoLinks {
    /// The number of the host `origin`; `excluded` is asked once a host.
    pub fn host(&mut self, origin: &str, excluded: impl FnOnce(&str) -> bool) -> u32 {
        if let Some(&i) = self.index.get(origin) {
            return i;
        }
        let i = self.names.len() as u32;
        self.index.insert(origin.to_string(), i);
        self.names.push(origin.to_string());
        self.excluded.push(excluded(origin));
        let next = self.sites.len() as u32;
        let site = *self
            .sites
            .entry(site_key(origin).to_string())
            .or_insert(next);
        self.site_of.push(site);
        i
    }

    /// Whether links to host `i` are not counted.
    pub fn is_excluded(&self, i: u32) -> bool {
        self.excluded[i as usize]
    }

    /// A page of host `src` with its links to hosts, each with its anchor.
    pub fn page<'a>(&mut self, src: u32, links: impl IntoIterator<Item = (u32, &'a str)>) {
        let mut on_page: Vec<u32> = Vec::new();
        let site = self.site_of[src as usize];
        for (dst, anchor) in links {
            if self.site_of[dst as usize] == site || self.is_excluded(dst) {
                continue;
            }
            let t = self.tallies.entry(dst).or_default();
            t.links += 1;
            t.anchor(anchor);
            if !on_page.contains(&dst) {
                on_page.push(dst);
                t.pages += 1;
                if self.pairs.insert((dst, site)) {
                    t.sites += 1;
                }
            }
        }
    }

    /// Hosts counted so far.
    pub fn candidates_met(&self) -> usize {
        self.tallies.len()
    }

    /// The candidates linked from at least `min_sites` sites and
    /// `min_pages` pages: most linking sites first, then most pages.
    pub fn candidates(&self, min_sites: u32, min_pages: u64) -> Vec<Candidate> {
        let mut v: Vec<Candidate> = self
            .tallies
            .iter()
            .filter(|(_, t)| t.sites >= min_sites && t.pages >= min_pages)
            .map(|(&i, t)| {
                let mut anchors = t.anchors.clone();
                anchors.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                Candidate {
                    origin: self.names[i as usize].clone(),
                    sites: t.sites,
                    pages: t.pages,
                    links: t.links,
                    anchors,
                }
            })
            .collect();
        v.sort_by(|a, b| {
            (b.sites, b.pages, b.links)
                .cmp(&(a.sites, a.pages, a.links))
                .then_with(|| a.origin.cmp(&b.origin))
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_distinct_sites_and_pages_and_leaves_out_seeds_and_own_site_links() {
        let mut c = CoLinks::default();
        let seed = |o: &str| o.contains("seed");
        let (a, b) = (
            c.host("http://seed-a.org", seed),
            c.host("http://seed-b.org", seed),
        );
        let x = c.host("http://x.org", seed);
        let y = c.host("http://y.org", seed);
        assert!(c.is_excluded(a) && !c.is_excluded(x));
        // Two pages of a link to x, one twice; b links to x and y.
        c.page(a, [(x, "X  home"), (x, "X home"), (b, "b")]);
        c.page(a, [(x, "the x")]);
        c.page(b, [(x, "X home"), (y, "why")]);
        // x links to itself and to a seed: neither counts.
        c.page(x, [(x, "self"), (a, "a")]);
        let all = c.candidates(1, 1);
        assert_eq!(all.len(), 2);
        assert_eq!(
            (
                all[0].origin.as_str(),
                all[0].sites,
                all[0].pages,
                all[0].links
            ),
            ("http://x.org", 2, 3, 4)
        );
        assert_eq!(all[0].anchors[0], ("X home".to_string(), 3));
        assert_eq!(c.candidates(2, 1).len(), 1);
        assert_eq!(c.candidates(1, 2).len(), 1);
        assert_eq!(c.candidates_met(), 2);
        // www.x.org is x.org's site: its links to x.org do not count, and
        // two hosts of one site count once.
        let www = c.host("http://www.x.org", seed);
        let blog = c.host("https://blog.y.org", seed);
        c.page(www, [(x, "own site")]);
        c.page(blog, [(x, "from y")]);
        c.page(y, [(x, "from y again")]);
        assert_eq!(c.candidates(1, 1)[0].sites, 3, "a, b and y.org");
        // Loopback servers on other ports are other sites.
        let (p1, p2) = (
            c.host("http://127.0.0.1:81", seed),
            c.host("http://127.0.0.1:82", seed),
        );
        c.page(p1, [(p2, "next door")]);
        assert!(
            c.candidates(1, 1)
                .iter()
                .any(|k| k.origin == "http://127.0.0.1:82")
        );
    }

    #[test]
    fn the_anchor_sketch_keeps_the_most_used_texts() {
        let mut t = Tally::default();
        for i in 0..100 {
            t.anchor("often");
            t.anchor(&format!("rare {i}"));
        }
        t.anchor(&"long ".repeat(100));
        assert!(t.anchors.len() <= ANCHORS);
        assert!(t.anchors.contains(&("often".to_string(), 100)));
        assert!(
            t.anchors
                .iter()
                .all(|(a, _)| a.chars().count() <= ANCHOR_CHARS)
        );
    }
}
