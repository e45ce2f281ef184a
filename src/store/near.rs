//! The `simhash` band index: a page's near-duplicates found by four
//! prefix seeks (see `dedup`), and the rows a hashed page adds.

use std::collections::{HashMap, HashSet};

use rocksdb::ReadOptions;

use super::{Batch, Result, Store};
use crate::dedup::{self, BANDS};
use crate::model::UrlId;
use crate::schema::{CF_SIMHASH, SimhashKey};

/// Rows read at most in one band's block: with hashes spread evenly a
/// block holds one row per 65,536 pages, and a block crowded past this
/// (pages of a template or a calendar, near one another) has plenty of
/// matches in its first rows; the cap keeps such a site from making each
/// lookup a scan of it.
const MAX_ROWS_PER_BLOCK: usize = 256;

/// A stored page near a hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NearMatch {
    pub page: UrlId,
    pub distance: u32,
    /// The first page of its cluster.
    pub cluster: UrlId,
}

impl Store {
    /// A stored page within `max_distance` bits of `hash` (at most
    /// `dedup::MAX_DISTANCE`, which the bands guarantee to find), other than
    /// `page` itself: the nearest in the first band that has one (ties to
    /// the first found), among the first [`MAX_ROWS_PER_BLOCK`] rows.
    pub fn nearest_simhash(
        &self,
        hash: u64,
        max_distance: u32,
        page: UrlId,
    ) -> Result<Option<NearMatch>> {
        let mut best: Option<NearMatch> = None;
        // One iterator for the four seeks: in prefix mode each seek reads
        // its own prefix (creating an iterator a band was a third of the
        // lookup's cost).
        let mut opts = ReadOptions::default();
        opts.set_prefix_same_as_start(true);
        let mut it = self.db.raw_iterator_cf_opt(self.cf(CF_SIMHASH), opts);
        for band in 0..BANDS {
            let prefix = SimhashKey::prefix(band, hash);
            it.seek(prefix);
            let mut rows = 0;
            while let (Some(k), Some(v)) = (it.key(), it.value()) {
                if !k.starts_with(&prefix) || rows == MAX_ROWS_PER_BLOCK {
                    break;
                }
                rows += 1;
                if let Some(m) = candidate(k, v, hash, page) {
                    let better = best.is_none_or(|b| m.distance < b.distance);
                    if m.distance <= max_distance && better {
                        best = Some(m);
                    }
                }
                it.next();
            }
            it.status()?;
            if best.is_some() {
                break;
            }
        }
        Ok(best)
    }
}

impl Store {
    /// Up to `per` pages of each cluster in `clusters` besides its first,
    /// from one pass over the index's first band (a row a hashed page).
    pub fn cluster_members(
        &self,
        clusters: &HashSet<UrlId>,
        per: usize,
    ) -> Result<HashMap<UrlId, Vec<UrlId>>> {
        let mut out: HashMap<UrlId, Vec<UrlId>> = HashMap::new();
        // Across prefixes: a total-order scan, not a prefix seek.
        let mut opts = ReadOptions::default();
        opts.set_total_order_seek(true);
        opts.set_iterate_upper_bound(vec![1u8]);
        let mut it = self.db.raw_iterator_cf_opt(self.cf(CF_SIMHASH), opts);
        it.seek_to_first();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            let row = SimhashKey::from_key(k).zip(UrlId::from_slice(v));
            it.next();
            let Some((key, cluster)) = row else {
                continue;
            };
            if key.page == cluster || !clusters.contains(&cluster) {
                continue;
            }
            let members = out.entry(cluster).or_default();
            if members.len() < per {
                members.push(key.page);
            }
        }
        it.status()?;
        Ok(out)
    }
}

/// A row of the index as a match for `hash`, unless it is `page`'s own or
/// unreadable.
fn candidate(key: &[u8], value: &[u8], hash: u64, page: UrlId) -> Option<NearMatch> {
    let k = SimhashKey::from_key(key)?;
    if k.page == page {
        return None;
    }
    Some(NearMatch {
        page: k.page,
        distance: dedup::distance(hash, k.hash),
        cluster: UrlId::from_slice(value)?,
    })
}

impl Batch<'_> {
    /// `page`'s rows in the index, one a band, naming its cluster.
    pub fn put_simhash(&mut self, hash: u64, page: UrlId, cluster: UrlId) {
        for band in 0..BANDS {
            let key = SimhashKey { band, hash, page }.to_key();
            self.put_raw(CF_SIMHASH, &key, &cluster.to_bytes());
        }
    }
}
