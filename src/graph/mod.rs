//! The link graph in memory, for algorithms over the whole stored graph
//! (PageRank). Pure: the caller feeds the fetched pages and the edges it
//! reads from the db; nothing here touches storage.
//!
//! Nodes are every fetched page plus every URL a stored link points to.
//! Edges arrive grouped by target, as the `inlinks` column family holds
//! them (target id ‖ source id, in key order), and are kept that way: a
//! target's in-edges are one run of source indices, which is what a
//! pull-style PageRank iteration reads.

pub mod colinks;
pub mod pagerank;

use crate::model::UrlId;

/// A sorted set of URL ids, looked up through a table of where each value
/// of the ids' top bits starts. Ids are xxh3 hashes, spread evenly, so a
/// lookup reads one table slot and a bucket of about 8 ids (two cache
/// lines). The table is an eighth of the ids in size so that it stays in
/// the CPU cache (512 KB at a million ids): with a slot an id, a lookup
/// cost two misses to memory and was 45 % of `rank pagerank`'s time.
struct IdIndex {
    ids: Vec<u128>,
    starts: Vec<u32>,
    shift: u32,
}

impl IdIndex {
    fn new(mut ids: Vec<u128>) -> IdIndex {
        ids.sort_unstable();
        ids.dedup();
        // About eight ids a bucket, at least 2 buckets.
        let bits = ((ids.len() / 8).max(2) as u64)
            .next_power_of_two()
            .trailing_zeros();
        let shift = 128 - bits;
        let buckets = 1usize << bits;
        let mut starts = Vec::with_capacity(buckets + 1);
        let mut i = 0usize;
        for b in 0..buckets {
            while i < ids.len() && ((ids[i] >> shift) as usize) < b {
                i += 1;
            }
            starts.push(i as u32);
        }
        starts.push(ids.len() as u32);
        IdIndex { ids, starts, shift }
    }

    fn find(&self, id: u128) -> Option<u32> {
        let b = (id >> self.shift) as usize;
        let (lo, hi) = (self.starts[b] as usize, self.starts[b + 1] as usize);
        self.ids[lo..hi]
            .binary_search(&id)
            .ok()
            .map(|i| (lo + i) as u32)
    }

    fn heap_bytes(&self) -> usize {
        self.ids.capacity() * 16 + self.starts.capacity() * 4
    }
}

/// Edges resolved together; see [`GraphBuilder::add_pending`].
const BATCH: usize = 4096;

/// Collects edges in target order into a graph; [`finish`](Self::finish)
/// completes it.
pub struct GraphBuilder {
    /// The graph so far (`in_degree` is filled by `finish`).
    graph: LinkGraph,
    last_target: Option<u128>,
    /// Edges (target, source) not yet added, and their sources' nodes once
    /// looked up: resolved a batch at a time (see `add_pending`).
    pending: Vec<(u128, u128)>,
    found: Vec<Option<u32>>,
}

impl GraphBuilder {
    /// A builder over the fetched pages (any order; duplicates ignored),
    /// with room for `edges` edges.
    pub fn new(pages: Vec<UrlId>, edges: usize) -> GraphBuilder {
        let pages = IdIndex::new(pages.into_iter().map(|u| u.0).collect());
        let out_degree = vec![0; pages.ids.len()];
        GraphBuilder {
            graph: LinkGraph {
                pages,
                others: Vec::new(),
                targets: Vec::new(),
                runs: Vec::new(),
                // Positions are u32: graphs of up to 4 G links.
                sources: Vec::with_capacity(edges.min(u32::MAX as usize)),
                out_degree,
                in_degree: Vec::new(),
                unknown_sources: 0,
                self_links: 0,
            },
            last_target: None,
            pending: Vec::with_capacity(BATCH),
            found: Vec::with_capacity(BATCH),
        }
    }

    /// Adds the link `src -> dst`. Edges must come grouped by `dst` in
    /// ascending order (`inlinks` key order); a repeated pair is counted
    /// twice.
    pub fn add_edge(&mut self, dst: UrlId, src: UrlId) {
        if dst == src {
            self.graph.self_links += 1;
            return;
        }
        self.pending.push((dst.0, src.0));
        if self.pending.len() == BATCH {
            self.add_pending();
        }
    }

    /// Adds the pending edges. Their sources are looked up first, in a
    /// loop of independent lookups whose cache misses the CPU overlaps;
    /// one lookup at a time between the db reads, the misses came one after
    /// another (7.5 -> 5.2–6.0 s to read a million pages' 19 M links).
    fn add_pending(&mut self) {
        let g = &mut self.graph;
        self.found.clear();
        self.found
            .extend(self.pending.iter().map(|(_, src)| g.pages.find(*src)));
        for (&(dst, _), &s) in self.pending.iter().zip(&self.found) {
            let Some(s) = s else {
                g.unknown_sources += 1;
                continue;
            };
            if self.last_target != Some(dst) {
                self.last_target = Some(dst);
                let node = match g.pages.find(dst) {
                    Some(n) => n,
                    None => {
                        g.others.push(dst);
                        g.out_degree.push(0);
                        (g.out_degree.len() - 1) as u32
                    }
                };
                g.targets.push(node);
                g.runs.push(g.sources.len() as u32);
            }
            g.sources.push(s);
            g.out_degree[s as usize] += 1;
        }
        self.pending.clear();
    }

    pub fn finish(mut self) -> LinkGraph {
        self.add_pending();
        let mut g = self.graph;
        g.runs.push(g.sources.len() as u32);
        g.in_degree = vec![0u32; g.out_degree.len()];
        for (t, w) in g.targets.iter().zip(g.runs.windows(2)) {
            g.in_degree[*t as usize] += w[1] - w[0];
        }
        // Shrinking copies; worth it only where much is unused.
        for v in [&mut g.targets, &mut g.runs, &mut g.sources] {
            if v.capacity() - v.len() > v.len() / 8 {
                v.shrink_to_fit();
            }
        }
        g.others.shrink_to_fit();
        g
    }
}

/// Fetched pages and link targets as nodes `0..nodes()`, the pages first.
pub struct LinkGraph {
    pages: IdIndex,
    /// Link targets that were never fetched, in the order met (ascending,
    /// as edges come in target order); node `pages.len() + i`.
    others: Vec<u128>,
    /// One entry a target with in-edges: its node, and where its run of
    /// sources starts in `sources`.
    targets: Vec<u32>,
    runs: Vec<u32>,
    sources: Vec<u32>,
    out_degree: Vec<u32>,
    in_degree: Vec<u32>,
    /// Edges whose source is not a fetched page (none in a db trawl wrote;
    /// counted, not trusted), left out.
    pub unknown_sources: u64,
    /// Links from a page to itself: left out, as in the usual definition.
    pub self_links: u64,
}

impl LinkGraph {
    pub fn nodes(&self) -> usize {
        self.out_degree.len()
    }

    /// Nodes that are fetched pages (`0..pages()`).
    pub fn pages(&self) -> usize {
        self.pages.ids.len()
    }

    pub fn edges(&self) -> usize {
        self.sources.len()
    }

    pub fn id(&self, node: u32) -> UrlId {
        let n = node as usize;
        UrlId(match self.pages.ids.get(n) {
            Some(id) => *id,
            None => self.others[n - self.pages.ids.len()],
        })
    }

    pub fn is_page(&self, node: u32) -> bool {
        (node as usize) < self.pages()
    }

    pub fn in_degree(&self, node: u32) -> u32 {
        self.in_degree[node as usize]
    }

    pub fn out_degree(&self, node: u32) -> u32 {
        self.out_degree[node as usize]
    }

    /// Each target with in-edges and the nodes linking to it.
    fn in_edges(&self) -> impl Iterator<Item = (u32, &[u32])> + '_ {
        self.targets
            .iter()
            .zip(self.runs.windows(2))
            .map(|(t, w)| (*t, &self.sources[w[0] as usize..w[1] as usize]))
    }

    /// Bytes the graph holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.pages.heap_bytes()
            + self.others.capacity() * 16
            + (self.targets.capacity()
                + self.runs.capacity()
                + self.sources.capacity()
                + self.out_degree.capacity()
                + self.in_degree.capacity())
                * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_index_finds_every_id_and_no_other() {
        let ids: Vec<u128> = (0..5000u128)
            .map(|i| xxhash_rust::xxh3::xxh3_128(&i.to_le_bytes()))
            .collect();
        let idx = IdIndex::new(ids.clone());
        for id in &ids {
            let n = idx.find(*id).unwrap();
            assert_eq!(idx.ids[n as usize], *id);
        }
        assert_eq!(idx.find(12345), None);
        assert_eq!(idx.find(u128::MAX), None);
        let small = IdIndex::new(vec![u128::MAX, 0]);
        assert_eq!((small.find(0), small.find(u128::MAX)), (Some(0), Some(1)));
        assert_eq!(IdIndex::new(Vec::new()).find(7), None);
    }

    #[test]
    fn builder_numbers_pages_then_targets_and_counts_degrees() {
        let (a, b, c, x) = (UrlId(10), UrlId(20), UrlId(30), UrlId(25));
        let mut g = GraphBuilder::new(vec![c, a, b], 0);
        // inlinks order: by target, then source.
        g.add_edge(a, b);
        g.add_edge(a, c);
        g.add_edge(b, b); // self link
        g.add_edge(x, a); // x never fetched
        g.add_edge(x, UrlId(99)); // source not a page
        let g = g.finish();
        assert_eq!((g.self_links, g.unknown_sources), (1, 1));
        assert_eq!((g.nodes(), g.pages(), g.edges()), (4, 3, 3));
        assert_eq!(g.id(0), a);
        assert_eq!(g.id(3), x);
        assert!(g.is_page(2) && !g.is_page(3));
        assert_eq!((g.in_degree(0), g.in_degree(3), g.in_degree(1)), (2, 1, 0));
        assert_eq!(
            (g.out_degree(0), g.out_degree(1), g.out_degree(3)),
            (1, 1, 0)
        );
    }
}
