//! The band index as the crawl holds it in memory: the `simhash` column
//! family's rows (its durable copy, which the ledger writes with each page)
//! loaded once, then looked up without touching RocksDB. Four prefix seeks
//! a page cost the ledger — the crawl's one serial stage — about a fifth of
//! its throughput on the benchmark web; four hash lookups cost nothing
//! measurable.
//!
//! Memory grows with the hashed pages of the db: 32 bytes each in the page
//! lists, four 16-byte entries (hash and position) in the block lists, and
//! the lists' own overhead. A block's entries carry the hash so that a
//! lookup compares a row without a read elsewhere in memory (a random read
//! a row was most of a lookup's time).
//! A block keeps at most [`MAX_ROWS_PER_BLOCK`] pages: past that no lookup
//! would read them.

use std::collections::HashMap;

use super::{BANDS, block, distance};
use crate::model::UrlId;

/// Rows compared at most in one band's block: with hashes spread evenly a
/// block holds one page per 65,536, and a block crowded past this (pages
/// of a template or a calendar, near one another) has plenty of matches in
/// its first rows; the cap keeps such a site from making each lookup a
/// scan of it. They are the first added (after a restart, the first in
/// the column family's key order, which sorts by hash).
const MAX_ROWS_PER_BLOCK: usize = 256;

/// A stored page near a hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NearMatch {
    pub page: UrlId,
    pub distance: u32,
    /// The first page of its cluster.
    pub cluster: UrlId,
}

/// Hashed pages and, for each band and block, the pages whose hash has
/// that block in that band.
#[derive(Default)]
pub struct BandIndex {
    pages: Vec<UrlId>,
    clusters: Vec<UrlId>,
    blocks: HashMap<u32, Vec<(u64, u32)>>,
}

impl BandIndex {
    /// Adds `page`, whose cluster starts at `cluster`.
    pub fn insert(&mut self, hash: u64, page: UrlId, cluster: UrlId) {
        let at = self.pages.len() as u32;
        self.pages.push(page);
        self.clusters.push(cluster);
        for band in 0..BANDS {
            let rows = self.blocks.entry(key(band, hash)).or_default();
            if rows.len() < MAX_ROWS_PER_BLOCK {
                rows.push((hash, at));
            }
        }
    }

    /// A page within `max_distance` bits of `hash` (at most
    /// `MAX_DISTANCE`, which the bands guarantee to find), other than
    /// `page` itself: the nearest in the first band that has one (ties to
    /// the earliest added), among the first [`MAX_ROWS_PER_BLOCK`] of a
    /// block.
    pub fn nearest(&self, hash: u64, max_distance: u32, page: UrlId) -> Option<NearMatch> {
        for band in 0..BANDS {
            let Some(rows) = self.blocks.get(&key(band, hash)) else {
                continue;
            };
            let best = rows
                .iter()
                .map(|&(h, at)| (distance(hash, h), at as usize))
                .filter(|&(d, at)| d <= max_distance && self.pages[at] != page)
                .min_by_key(|&(d, at)| (d, at));
            if let Some((distance, at)) = best {
                return Some(NearMatch {
                    page: self.pages[at],
                    distance,
                    cluster: self.clusters[at],
                });
            }
        }
        None
    }

    /// Hashed pages held.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}

/// A block's key: its band above its 16 bits.
fn key(band: u8, hash: u64) -> u32 {
    u32::from(band) << 16 | u32::from(block(hash, band))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_nearest_within_the_distance_in_any_band_but_not_itself() {
        let mut index = BandIndex::default();
        let h = 0x0123_4567_89ab_cdef_u64;
        // Three bits apart, each in another block: one block still agrees.
        let near = h ^ (1 << 3) ^ (1 << 20) ^ (1 << 40);
        let nearer = h ^ 1;
        index.insert(near, UrlId(1), UrlId(1));
        assert_eq!(index.nearest(h, 3, UrlId(9)).map(|m| m.distance), Some(3));
        assert_eq!(index.nearest(h, 2, UrlId(9)), None);
        index.insert(nearer, UrlId(2), UrlId(1));
        let m = index.nearest(h, 3, UrlId(9)).unwrap();
        assert_eq!((m.page, m.distance, m.cluster), (UrlId(2), 1, UrlId(1)));
        // Not the page itself: the next nearest.
        assert_eq!(index.nearest(h, 3, UrlId(2)).unwrap().page, UrlId(1));
        // Far in every block: not found.
        assert_eq!(index.nearest(!h, 3, UrlId(9)), None);
        assert_eq!(index.len(), 2);
    }
}
