//! The band index as the crawl holds it in memory: the `simhash` column
//! family's rows (its durable copy, which the ledger writes with each page)
//! loaded once, then looked up without touching RocksDB. Four prefix seeks
//! a page cost the ledger — the crawl's one serial stage — about a fifth of
//! its throughput on the benchmark web; four hash lookups cost nothing
//! measurable.
//!
//! Bounded: it holds at most `dedup.max_indexed` pages, the latest placed
//! (near-duplicates come close together: a site's calendar or facets, an
//! article copied as it is published); placing one more forgets the
//! oldest, whose row the caller deletes. A page whose version changed or
//! went is taken out ([`BandIndex::remove`]): no lookup finds text the db
//! no longer holds. Memory: 56 bytes a page in the slots, four 16-byte
//! entries (hash and slot) in the block lists, and the lists' overhead.
//! A block's entries carry the hash so that a lookup compares a row
//! without a read elsewhere in memory (a random read a row was most of a
//! lookup's time). A block keeps at most [`MAX_ROWS_PER_BLOCK`] pages; a
//! page whose four blocks are all full is not held (no lookup would read
//! it).

use std::collections::HashMap;

use super::{BANDS, block, distance};
use crate::model::UrlId;

/// Rows compared at most in one band's block: with hashes spread evenly a
/// block holds one page per 65,536, and a block crowded past this (pages
/// of a template or a calendar, near one another) has plenty of matches in
/// its first rows; the cap keeps such a site from making each lookup a
/// scan of it. They are the first added of the pages held.
const MAX_ROWS_PER_BLOCK: usize = 256;

/// No slot.
const NONE: u32 = u32::MAX;

/// A stored page near a hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NearMatch {
    pub page: UrlId,
    pub distance: u32,
    /// The first page of its cluster.
    pub cluster: UrlId,
}

/// A page held: its hash, when it was placed (`seq`, which orders the
/// pages oldest first), its cluster, and its neighbours in that order.
#[derive(Clone, Copy)]
struct Slot {
    hash: u64,
    seq: u64,
    page: UrlId,
    cluster: UrlId,
    older: u32,
    newer: u32,
}

/// A row of the index as stored: what [`BandIndex::load`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexRow {
    pub hash: u64,
    pub page: UrlId,
    pub cluster: UrlId,
    pub seq: u64,
}

/// What placing a page did to the index.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The page's place in the order (its row's), when it is held; None
    /// when its four blocks were full (no row is kept for it).
    pub seq: Option<u64>,
    /// Pages forgotten to keep the bound: (hash, page) of each.
    pub evicted: Vec<(u64, UrlId)>,
}

/// Hashed pages (at most the bound given to each insert) and, for each
/// band and block, the pages whose hash has that block in that band.
pub struct BandIndex {
    slots: Vec<Slot>,
    free: Vec<u32>,
    blocks: HashMap<u32, Vec<(u64, u32)>>,
    oldest: u32,
    newest: u32,
    len: usize,
    next_seq: u64,
}

impl Default for BandIndex {
    fn default() -> Self {
        BandIndex {
            slots: Vec::new(),
            free: Vec::new(),
            blocks: HashMap::new(),
            oldest: NONE,
            newest: NONE,
            len: 0,
            next_seq: 1,
        }
    }
}

impl BandIndex {
    /// The index of stored `rows` (any order), at most `max` pages: the
    /// latest placed. Returns it with the rows it does not hold (over the
    /// bound, or in four full blocks), which the caller deletes.
    pub fn load(mut rows: Vec<IndexRow>, max: usize) -> (BandIndex, Vec<(u64, UrlId)>) {
        // Rows of a schema before 21 carry no order: seq 0, key order.
        rows.sort_by_key(|r| r.seq);
        let mut index = BandIndex::default();
        let mut dropped = Vec::new();
        let skip = rows.len().saturating_sub(max.max(1));
        for r in rows.drain(..skip) {
            dropped.push((r.hash, r.page));
        }
        for r in rows {
            index.next_seq = index.next_seq.max(r.seq + 1);
            let mut p = index.add(r.hash, r.page, r.cluster, r.seq, max);
            dropped.append(&mut p.evicted);
            if p.seq.is_none() {
                dropped.push((r.hash, r.page));
            }
        }
        (index, dropped)
    }

    /// Adds `page`, whose cluster starts at `cluster`, as the latest
    /// placed; the oldest go while more than `max` pages are held.
    pub fn insert(&mut self, hash: u64, page: UrlId, cluster: UrlId, max: usize) -> Placement {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.add(hash, page, cluster, seq, max)
    }

    fn add(&mut self, hash: u64, page: UrlId, cluster: UrlId, seq: u64, max: usize) -> Placement {
        let mut placed = Placement::default();
        while self.len >= max.max(1) {
            let Some(gone) = self.evict_oldest() else {
                break;
            };
            placed.evicted.push(gone);
        }
        let room = |b: &HashMap<u32, Vec<(u64, u32)>>, band| {
            b.get(&key(band, hash))
                .is_none_or(|rows| rows.len() < MAX_ROWS_PER_BLOCK)
        };
        if !(0..BANDS).any(|band| room(&self.blocks, band)) {
            return placed;
        }
        let slot = Slot {
            hash,
            seq,
            page,
            cluster,
            older: self.newest,
            newer: NONE,
        };
        let at = match self.free.pop() {
            Some(at) => {
                self.slots[at as usize] = slot;
                at
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        for band in 0..BANDS {
            let rows = self.blocks.entry(key(band, hash)).or_default();
            if rows.len() < MAX_ROWS_PER_BLOCK {
                rows.push((hash, at));
            }
        }
        match self.newest {
            NONE => self.oldest = at,
            n => self.slots[n as usize].newer = at,
        }
        self.newest = at;
        self.len += 1;
        placed.seq = Some(seq);
        placed
    }

    /// Takes `page` (held under `hash`) out; returns whether it was held.
    pub fn remove(&mut self, hash: u64, page: UrlId) -> bool {
        let found = (0..BANDS).find_map(|band| {
            let rows = self.blocks.get(&key(band, hash))?;
            rows.iter()
                .map(|&(_, at)| at)
                .find(|&at| self.slots[at as usize].page == page)
        });
        match found {
            Some(at) => {
                self.unlink(at);
                true
            }
            None => false,
        }
    }

    /// Forgets the oldest page held: its hash and id.
    fn evict_oldest(&mut self) -> Option<(u64, UrlId)> {
        let at = self.oldest;
        if at == NONE {
            return None;
        }
        let s = self.slots[at as usize];
        self.unlink(at);
        Some((s.hash, s.page))
    }

    /// Removes slot `at` from its blocks and the order, and frees it.
    fn unlink(&mut self, at: u32) {
        let s = self.slots[at as usize];
        for band in 0..BANDS {
            let k = key(band, s.hash);
            if let Some(rows) = self.blocks.get_mut(&k) {
                // In place: a block's order is which rows a full one keeps.
                rows.retain(|&(_, x)| x != at);
                if rows.is_empty() {
                    self.blocks.remove(&k);
                }
            }
        }
        match s.older {
            NONE => self.oldest = s.newer,
            o => self.slots[o as usize].newer = s.newer,
        }
        match s.newer {
            NONE => self.newest = s.older,
            n => self.slots[n as usize].older = s.older,
        }
        self.free.push(at);
        self.len -= 1;
    }

    /// The nearest page within `max_distance` bits of `hash` (at most
    /// `MAX_DISTANCE`, which the bands guarantee to find), other than
    /// `page` itself, over all four bands (ties to the earliest placed).
    pub fn nearest(&self, hash: u64, max_distance: u32, page: UrlId) -> Option<NearMatch> {
        let mut best: Option<(u32, u64, u32)> = None;
        for band in 0..BANDS {
            let Some(rows) = self.blocks.get(&key(band, hash)) else {
                continue;
            };
            for &(h, at) in rows {
                let d = distance(hash, h);
                if d > max_distance || best.is_some_and(|(bd, _, _)| d > bd) {
                    continue;
                }
                let s = &self.slots[at as usize];
                if s.page != page && best.is_none_or(|b| (d, s.seq) < (b.0, b.1)) {
                    best = Some((d, s.seq, at));
                }
            }
        }
        best.map(|(distance, _, at)| {
            let s = &self.slots[at as usize];
            NearMatch {
                page: s.page,
                distance,
                cluster: s.cluster,
            }
        })
    }

    /// Hashed pages held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries in the block lists (at most four a page held).
    pub fn block_entries(&self) -> usize {
        self.blocks.values().map(Vec::len).sum()
    }
}

/// A block's key: its band above its 16 bits.
fn key(band: u8, hash: u64) -> u32 {
    u32::from(band) << 16 | u32::from(block(hash, band))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_BOUND: usize = usize::MAX;

    #[test]
    fn finds_the_nearest_within_the_distance_in_any_band_but_not_itself() {
        let mut index = BandIndex::default();
        let h = 0x0123_4567_89ab_cdef_u64;
        // Three bits apart, each in another block: one block still agrees.
        let near = h ^ (1 << 3) ^ (1 << 20) ^ (1 << 40);
        let nearer = h ^ 1;
        index.insert(near, UrlId(1), UrlId(1), NO_BOUND);
        assert_eq!(index.nearest(h, 3, UrlId(9)).map(|m| m.distance), Some(3));
        assert_eq!(index.nearest(h, 2, UrlId(9)), None);
        index.insert(nearer, UrlId(2), UrlId(1), NO_BOUND);
        let m = index.nearest(h, 3, UrlId(9)).unwrap();
        assert_eq!((m.page, m.distance, m.cluster), (UrlId(2), 1, UrlId(1)));
        // Not the page itself: the next nearest.
        assert_eq!(index.nearest(h, 3, UrlId(2)).unwrap().page, UrlId(1));
        // Far in every block: not found.
        assert_eq!(index.nearest(!h, 3, UrlId(9)), None);
        assert_eq!(index.len(), 2);
    }

    #[test]
    fn the_nearest_is_the_nearest_over_all_bands_not_the_first_band_with_a_match() {
        let mut index = BandIndex::default();
        let h = 0x0123_4567_89ab_cdef_u64;
        // Agrees with h in band 0 only, three bits off in bands 1 to 3.
        let far = h ^ (1 << 16) ^ (1 << 32) ^ (1 << 48);
        // Agrees in bands 1 to 3, one bit off in band 0.
        let near = h ^ 1;
        index.insert(far, UrlId(1), UrlId(1), NO_BOUND);
        index.insert(near, UrlId(2), UrlId(2), NO_BOUND);
        let m = index.nearest(h, 3, UrlId(9)).unwrap();
        assert_eq!((m.page, m.distance), (UrlId(2), 1));
        // Ties go to the earliest placed, whatever its band.
        let tie = h ^ (1 << 17);
        index.insert(tie, UrlId(3), UrlId(3), NO_BOUND);
        assert_eq!(index.nearest(h, 3, UrlId(9)).unwrap().page, UrlId(2));
    }

    #[test]
    fn the_index_holds_at_most_its_bound_the_latest_placed() {
        let mut index = BandIndex::default();
        let hash = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut evicted = Vec::new();
        for i in 0..1000 {
            let p = index.insert(hash(i), UrlId(i.into()), UrlId(i.into()), 100);
            assert!(p.seq.is_some());
            evicted.extend(p.evicted);
        }
        // Counted, not timed: 100 pages, four block entries each.
        assert_eq!((index.len(), index.block_entries()), (100, 400));
        assert_eq!(index.slots.len(), 100, "slots are reused");
        assert_eq!(evicted.len(), 900);
        assert_eq!(evicted[0], (hash(0), UrlId(0)), "the oldest go first");
        assert!(index.nearest(hash(899), 0, UrlId(u128::MAX)).is_none());
        assert!(index.nearest(hash(900), 0, UrlId(u128::MAX)).is_some());
    }

    #[test]
    fn a_removed_page_is_found_no_more_and_its_slot_is_reused() {
        let mut index = BandIndex::default();
        let h = 0x0123_4567_89ab_cdef_u64;
        index.insert(h, UrlId(1), UrlId(1), NO_BOUND);
        index.insert(h ^ 1, UrlId(2), UrlId(1), NO_BOUND);
        assert!(index.remove(h, UrlId(1)));
        assert!(!index.remove(h, UrlId(1)), "held once");
        assert_eq!(index.nearest(h, 0, UrlId(9)), None);
        assert_eq!(index.nearest(h, 1, UrlId(9)).unwrap().page, UrlId(2));
        index.insert(h ^ 2, UrlId(3), UrlId(1), NO_BOUND);
        assert_eq!((index.len(), index.slots.len()), (2, 2));
        // Churn at a steady size keeps the size: a changed page's old
        // hash goes, its new one comes.
        let mut held = h ^ 1;
        for i in 1..1000u64 {
            assert!(index.remove(held, UrlId(2)));
            held = h ^ (i << 8);
            index.insert(held, UrlId(2), UrlId(1), NO_BOUND);
        }
        assert_eq!((index.len(), index.slots.len()), (2, 2));
        assert!(index.block_entries() <= 8);
    }

    #[test]
    fn a_load_keeps_the_latest_rows_within_the_bound_and_names_the_rest() {
        let rows: Vec<IndexRow> = (0..10u64)
            .map(|i| IndexRow {
                hash: i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                page: UrlId(i.into()),
                cluster: UrlId(i.into()),
                // Stored in another order than placed.
                seq: (i * 7) % 10 + 1,
            })
            .collect();
        let (index, dropped) = BandIndex::load(rows.clone(), 4);
        assert_eq!(index.len(), 4);
        let mut kept: Vec<u64> = rows
            .iter()
            .filter(|r| !dropped.contains(&(r.hash, r.page)))
            .map(|r| r.seq)
            .collect();
        kept.sort();
        assert_eq!(kept, [7, 8, 9, 10]);
        let mut index = index;
        let next = index.insert(1, UrlId(99), UrlId(99), 4);
        assert_eq!(next.seq, Some(11), "placed after every stored row");
        assert_eq!(next.evicted.len(), 1);
    }

    #[test]
    fn a_page_whose_four_blocks_are_full_is_not_held() {
        let mut index = BandIndex::default();
        let h = 0x0123_4567_89ab_cdef_u64;
        for i in 0..MAX_ROWS_PER_BLOCK as u128 {
            assert!(index.insert(h, UrlId(i), UrlId(0), NO_BOUND).seq.is_some());
        }
        let p = index.insert(h, UrlId(1000), UrlId(0), NO_BOUND);
        assert_eq!(p.seq, None);
        assert_eq!(index.len(), MAX_ROWS_PER_BLOCK);
    }
}
