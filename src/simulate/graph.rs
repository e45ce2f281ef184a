//! The stored crawl as the replay reads it: every fetched page (a node,
//! numbered in url-id order, the order of the `seen` and `links` column
//! families) with its verdict, similarity and URL shape, and its followable
//! links to other fetched pages, in page order.

use std::collections::HashSet;

use crate::filter::Filters;
use crate::frontier::order::url_shape;
use crate::model::SeenState;
use crate::model::{self, LinkVerdict, UrlId, Verdict};
use crate::schema::tables::Verdicts;
use crate::schema::{SeenRecord, Versioned};
use crate::store::{Store, StoreError};

/// What a replay knows of a fetched page.
#[derive(Clone, Copy, Debug, Default)]
pub struct PageFacts {
    /// The page filters judged it (parsed HTML).
    pub judged: bool,
    /// They kept it.
    pub relevant: bool,
    /// On the target list.
    pub target: bool,
    /// Its stored relevance cosine (0 when the mode did not compute it).
    pub sim: f64,
}

/// A link to another fetched page.
#[derive(Clone, Copy, Debug)]
pub struct ReplayLink {
    pub target: u32,
    /// Shark-search's anchor-context score of the link.
    pub anchor: f32,
}

pub struct ReplayGraph {
    ids: Vec<UrlId>,
    pages: Vec<PageFacts>,
    shapes: Vec<f32>,
    /// Node i's links are `links[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    links: Vec<ReplayLink>,
    seeds: Vec<u32>,
    /// Links whose rows could not be read (left out).
    pub unreadable: u64,
}

/// Rows read per MultiGet.
const CHUNK: usize = 4096;

impl ReplayGraph {
    /// Reads the graph of `store`; `filters` score anchors (with the
    /// relevance keywords) and `patterns` give URL shapes. `progress` is
    /// told the rows read and may stop the read (false).
    pub fn read(
        store: &Store,
        filters: &Filters,
        patterns: &[String],
        mut progress: impl FnMut(&str) -> bool,
    ) -> Result<Option<ReplayGraph>, StoreError> {
        let mut ids = Vec::new();
        let mut cur = store.seen_cursor();
        while let Some((k, v)) = cur.next_row()? {
            let fetched =
                SeenRecord::decode(v).is_ok_and(|r| matches!(r.state, SeenState::Fetched { .. }));
            if let (true, Some(id)) = (fetched, UrlId::from_slice(k)) {
                ids.push(id);
            }
        }
        let (targets, _) = store.targets_and_fetched()?;
        let mut pages = Vec::with_capacity(ids.len());
        let mut shapes = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(CHUNK) {
            let urls = store.urls_many(chunk)?;
            for ((id, url), v) in chunk.iter().zip(urls).zip(verdicts(store, chunk)?) {
                shapes.push(
                    url.and_then(|u| model::normalize(&u).ok())
                        .map_or(0.0, |u| url_shape(u.url(), patterns)),
                );
                pages.push(PageFacts {
                    judged: v.is_some(),
                    relevant: v.is_some_and(|v| v.0 == Verdict::Keep),
                    target: targets.contains(id),
                    sim: v.and_then(|v| v.1).unwrap_or(0.0),
                });
            }
            if !progress(&format!("read {} of {} pages", pages.len(), ids.len())) {
                return Ok(None);
            }
        }
        let mut g = ReplayGraph {
            ids,
            pages,
            shapes,
            starts: vec![0],
            links: Vec::new(),
            seeds: Vec::new(),
            unreadable: 0,
        };
        if !g.read_links(store, filters, &mut progress)? {
            return Ok(None);
        }
        let list = store.seeds()?;
        for u in list.urls.iter().chain(list.derived.iter().map(|d| &d.url)) {
            if let Some(n) = model::normalize(u).ok().and_then(|u| g.node(u.id())) {
                g.seeds.push(n);
            }
        }
        Ok(Some(g))
    }

    /// The links rows, page by page in id order (the nodes' order).
    fn read_links(
        &mut self,
        store: &Store,
        filters: &Filters,
        progress: &mut impl FnMut(&str) -> bool,
    ) -> Result<bool, StoreError> {
        let mut next = 0u32;
        let mut going = true;
        let mut pages = 0u64;
        store.each_page_links(|src, links| {
            let Some(n) = self.node(src).filter(|_| going) else {
                return;
            };
            while next < n {
                self.starts.push(self.links.len() as u32);
                next += 1;
            }
            match links {
                Ok(links) => {
                    let verdicts = links.iter().map(|(dst, l)| (*dst, l.verdict));
                    for (i, m) in followed(&self.ids, verdicts) {
                        let l = &links[i].1;
                        let anchor = filters.anchor_score(l.before, l.anchor, l.after) as f32;
                        self.links.push(ReplayLink { target: m, anchor });
                    }
                }
                Err(_) => self.unreadable += 1,
            }
            self.starts.push(self.links.len() as u32);
            next += 1;
            pages += 1;
            if pages.is_multiple_of(CHUNK as u64) {
                going = progress(&format!("read the links of {pages} pages"));
            }
        })?;
        while (next as usize) < self.ids.len() {
            self.starts.push(self.links.len() as u32);
            next += 1;
        }
        Ok(going)
    }

    fn node(&self, id: UrlId) -> Option<u32> {
        node(&self.ids, id)
    }

    /// Which of node `n`'s stored links (`(target, verdict)` in the row's
    /// order) are the replay's links of `n`, by position, with their nodes.
    pub fn followed(&self, links: impl Iterator<Item = (UrlId, LinkVerdict)>) -> Vec<(usize, u32)> {
        followed(&self.ids, links)
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn id(&self, n: u32) -> UrlId {
        self.ids[n as usize]
    }

    pub fn page(&self, n: u32) -> PageFacts {
        self.pages[n as usize]
    }

    pub fn url_shape(&self, n: u32) -> f32 {
        self.shapes[n as usize]
    }

    pub fn links(&self, n: u32) -> &[ReplayLink] {
        let (a, b) = (self.starts[n as usize], self.starts[n as usize + 1]);
        &self.links[a as usize..b as usize]
    }

    pub fn seeds(&self) -> &[u32] {
        &self.seeds
    }

    /// Pages the page filters kept: what the replay hopes to find.
    pub fn relevant(&self) -> u64 {
        self.pages.iter().filter(|p| p.relevant).count() as u64
    }

    pub fn targets(&self) -> u64 {
        self.pages.iter().filter(|p| p.target).count() as u64
    }

    /// Links the replay may follow.
    pub fn edges(&self) -> usize {
        self.links.len()
    }

    /// Bytes of memory the graph holds.
    pub fn heap_bytes(&self) -> usize {
        self.ids.capacity() * 16
            + self.pages.capacity() * std::mem::size_of::<PageFacts>()
            + self.shapes.capacity() * 4
            + self.starts.capacity() * 4
            + self.links.capacity() * std::mem::size_of::<ReplayLink>()
    }
}

fn node(ids: &[UrlId], id: UrlId) -> Option<u32> {
    ids.binary_search(&id).ok().map(|i| i as u32)
}

/// The links of a page the replay follows, by position in its row with
/// their nodes: links to fetched pages the stored crawl could follow,
/// each target once.
fn followed(ids: &[UrlId], links: impl Iterator<Item = (UrlId, LinkVerdict)>) -> Vec<(usize, u32)> {
    let mut seen = HashSet::new();
    links
        .enumerate()
        .filter_map(|(i, (dst, verdict))| {
            let m = node(ids, dst)?;
            (followable(verdict) && seen.insert(m)).then_some((i, m))
        })
        .collect()
}

/// Whether the stored crawl could follow a link: one it followed, or one
/// it left only for its page's verdict (the replay's focus decides those).
fn followable(v: LinkVerdict) -> bool {
    matches!(
        v,
        LinkVerdict::Follow
            | LinkVerdict::Unjudged
            | LinkVerdict::PageTopic
            | LinkVerdict::PageRelevance
            | LinkVerdict::PageFiltered
    )
}

/// A page's verdict and its relevance cosine, if the mode computed it.
type Judged = (Verdict, Option<f64>);

/// The verdict and relevance of each page of `chunk` (None: not judged).
fn verdicts(store: &Store, chunk: &[UrlId]) -> Result<Vec<Option<Judged>>, StoreError> {
    chunk
        .iter()
        .map(|id| Ok(store.row::<Verdicts>(id)?.map(|v| (v.verdict, v.relevance))))
        .collect()
}
