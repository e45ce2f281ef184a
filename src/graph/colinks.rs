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

/// Whether `text` is collapsed already: words one space apart, no space
/// at either end (stored anchors are: `parse::html::collapse`).
fn is_collapsed(text: &str) -> bool {
    !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.contains("  ")
        && !text.contains(|c: char| c.is_whitespace() && c != ' ')
}

/// `text` as the sketch counts it: collapsed, cut to [`ANCHOR_CHARS`].
/// Borrowed when it is so already.
fn sketch_text(text: &str) -> std::borrow::Cow<'_, str> {
    let cut = |t: &str| {
        t.char_indices()
            .nth(ANCHOR_CHARS)
            .map_or(t.len(), |(at, _)| at)
    };
    if is_collapsed(text) {
        return std::borrow::Cow::Borrowed(&text[..cut(text)]);
    }
    let mut out = String::new();
    push_sketch_text(&mut out, text);
    std::borrow::Cow::Owned(out)
}

/// Appends `text` to `out` as the sketch counts it, without a copy of
/// the whole: words one space apart, at most [`ANCHOR_CHARS`] characters
/// (as the collapsed text cut there).
fn push_sketch_text(out: &mut String, text: &str) {
    let mut left = ANCHOR_CHARS;
    for (i, word) in text.split_whitespace().enumerate() {
        if left == 0 {
            break;
        }
        if i > 0 {
            out.push(' ');
            left -= 1;
        }
        for c in word.chars().take(left) {
            out.push(c);
            left -= 1;
        }
    }
}

impl Tally {
    /// Space-saving: a new text takes the place of the least counted one,
    /// with its count plus one.
    fn anchor(&mut self, text: &str) {
        let text = sketch_text(text);
        let text = text.as_ref();
        if text.is_empty() {
            return;
        }
        if let Some(a) = self.anchors.iter_mut().find(|(t, _)| t == text) {
            a.1 += 1;
        } else if self.anchors.len() < ANCHORS {
            self.anchors.push((text.to_string(), 1));
        } else if let Some(min) = self.anchors.iter_mut().min_by_key(|(_, n)| *n) {
            // The replaced text's buffer is reused.
            min.0.clear();
            min.0.push_str(text);
            min.1 += 1;
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

/// Bytes [`Pending`] holds before it asks to be resolved.
pub const PENDING_BYTES: usize = 4 << 20;

/// Pages whose links to candidates wait for their own host (looked up for
/// many pages at once), each link's anchor as the sketch counts it
/// (collapsed, cut to [`ANCHOR_CHARS`]) in one buffer: what is held is
/// bounded by [`Pending::is_full`], not by the pages' anchors, plus one
/// page's links (at most `crawl.max_outlinks`, each a few hundred bytes).
pub struct Pending<K> {
    /// Each page's source and the end of its links in `links`.
    pages: Vec<(K, usize)>,
    /// Each link's host and the end of its anchor in `text`.
    links: Vec<(u32, usize)>,
    text: String,
}

impl<K> Default for Pending<K> {
    fn default() -> Self {
        Pending {
            pages: Vec::new(),
            links: Vec::new(),
            text: String::new(),
        }
    }
}

impl<K: Copy> Pending<K> {
    /// Page `src` with its links to hosts, each with its anchor (nothing
    /// is held for a page without any).
    pub fn push<'a>(&mut self, src: K, links: impl IntoIterator<Item = (u32, &'a str)>) {
        let start = self.links.len();
        for (host, anchor) in links {
            push_sketch_text(&mut self.text, anchor);
            self.links.push((host, self.text.len()));
        }
        if self.links.len() > start {
            self.pages.push((src, self.links.len()));
        }
    }

    /// Whether `max_pages` pages or [`PENDING_BYTES`] are held.
    pub fn is_full(&self, max_pages: usize) -> bool {
        self.pages.len() >= max_pages || self.bytes() >= PENDING_BYTES
    }

    /// Bytes held (anchors, links and pages).
    pub fn bytes(&self) -> usize {
        self.text.len()
            + self.links.len() * std::mem::size_of::<(u32, usize)>()
            + self.pages.len() * std::mem::size_of::<(K, usize)>()
    }

    /// The pages held, in order.
    pub fn sources(&self) -> Vec<K> {
        self.pages.iter().map(|(k, _)| *k).collect()
    }

    /// Each page held with its links and their anchors, in order.
    pub fn pages(&self) -> impl Iterator<Item = (K, impl Iterator<Item = (u32, &str)>)> {
        let mut first: usize = 0;
        self.pages.iter().map(move |&(src, end)| {
            let mut at = first.checked_sub(1).map_or(0, |i| self.links[i].1);
            let links = self.links[first..end].iter().map(move |&(host, stop)| {
                let anchor = &self.text[at..stop];
                at = stop;
                (host, anchor)
            });
            first = end;
            (src, links)
        })
    }

    /// Lets go of what is held (keeping the buffers).
    pub fn clear(&mut self) {
        self.pages.clear();
        self.links.clear();
        self.text.clear();
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
    fn pending_pages_hold_anchors_as_counted_and_ask_to_be_resolved_by_bytes() {
        let mut p: Pending<u32> = Pending::default();
        p.push(1, [(7, "  Physics\n  Hub "), (8, "")]);
        p.push(2, std::iter::empty());
        let long = "word ".repeat(10_000);
        p.push(3, [(9, long.as_str())]);
        let pages: Vec<(u32, Vec<(u32, String)>)> = p
            .pages()
            .map(|(k, l)| (k, l.map(|(h, a)| (h, a.to_string())).collect()))
            .collect();
        let cut = sketch_text(&long).into_owned();
        assert_eq!(cut.chars().count(), ANCHOR_CHARS);
        assert_eq!(
            pages,
            [
                (1, vec![(7, "Physics Hub".into()), (8, String::new())]),
                (3, vec![(9, cut)])
            ],
            "a page without links is not held; anchors as the sketch counts them"
        );
        // Counted, not timed: a page of 6,000 links with 50 KB anchors
        // holds ~2 MB, not 300 MB, and a few such pages fill it.
        p.clear();
        assert_eq!(p.bytes(), 0);
        let mut pages = 0;
        while !p.is_full(4096) {
            p.push(pages, (0..6000).map(|h| (h, long.as_str())));
            pages += 1;
        }
        assert!(pages < 4096 && pages > 1, "{pages}");
        let one_page = 6000 * (ANCHOR_CHARS + 16) + 16;
        assert!(p.bytes() < PENDING_BYTES + one_page, "{}", p.bytes());
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
