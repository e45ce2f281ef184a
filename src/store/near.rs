//! The `simhash` band index: the rows a hashed page adds, read back into
//! the crawl's in-memory index (`dedup::BandIndex`) and for cluster lists.

use std::collections::{HashMap, HashSet};

use rocksdb::ReadOptions;

use super::{Batch, Result, Store};
use crate::dedup::{BandIndex, IndexRow};
use crate::model::UrlId;
use crate::schema::{CF_SIMHASH, SimhashKey};

impl Store {
    /// The index held in memory by the crawl, from one pass over the first
    /// band (a row a hashed page), holding at most `max` pages; with the
    /// rows it does not hold (over the bound), which the caller deletes.
    pub fn load_band_index(&self, max: usize) -> Result<(BandIndex, Vec<(u64, UrlId)>)> {
        let mut rows = Vec::new();
        self.first_band_rows(|key, cluster, seq| {
            rows.push(IndexRow {
                hash: key.hash,
                page: key.page,
                cluster,
                seq,
            })
        })?;
        Ok(BandIndex::load(rows, max))
    }

    /// Up to `per` pages of each cluster in `clusters` besides its first,
    /// from one pass over the index's first band (a row a hashed page).
    pub fn cluster_members(
        &self,
        clusters: &HashSet<UrlId>,
        per: usize,
    ) -> Result<HashMap<UrlId, Vec<UrlId>>> {
        let mut out: HashMap<UrlId, Vec<UrlId>> = HashMap::new();
        self.first_band_rows(|key, cluster, _| {
            if key.page == cluster || !clusters.contains(&cluster) {
                return;
            }
            let members = out.entry(cluster).or_default();
            if members.len() < per {
                members.push(key.page);
            }
        })?;
        Ok(out)
    }

    /// Each row of the index's first band: its key, its cluster and its
    /// place in the order pages were placed (0 in a row of a schema
    /// before 21, which had none).
    fn first_band_rows(&self, mut each: impl FnMut(SimhashKey, UrlId, u64)) -> Result<()> {
        // Across prefixes: a total-order scan, not a prefix seek.
        let mut opts = ReadOptions::default();
        opts.set_total_order_seek(true);
        opts.set_iterate_upper_bound(vec![1u8]);
        // Read once: its blocks would only push hot ones out of the cache.
        opts.fill_cache(false);
        let mut it = self.db.raw_iterator_cf_opt(self.cf(CF_SIMHASH), opts);
        it.seek_to_first();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            if let Some((key, cluster)) = SimhashKey::from_key(k).zip(UrlId::from_slice(v)) {
                let seq = v
                    .get(16..24)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, u64::from_be_bytes);
                each(key, cluster, seq);
            }
            it.next();
        }
        it.status()?;
        Ok(())
    }
}

impl Batch<'_> {
    /// `page`'s row in the index, naming its cluster and its place in the
    /// order pages were placed: band 0's only (from schema 20). Every
    /// reader loads band 0 and builds the four tables in memory; the other
    /// bands' rows cost three writes a page on the crawl's serial stage and
    /// were never read.
    pub fn put_simhash(&mut self, hash: u64, page: UrlId, cluster: UrlId, seq: u64) {
        let mut value = [0u8; 24];
        value[..16].copy_from_slice(&cluster.to_bytes());
        value[16..].copy_from_slice(&seq.to_be_bytes());
        self.put_raw(CF_SIMHASH, &band_zero(hash, page), &value);
    }

    /// Deletes `page`'s row in the index (held under `hash`).
    pub fn delete_simhash(&mut self, hash: u64, page: UrlId) {
        self.delete(CF_SIMHASH, &band_zero(hash, page));
    }
}

fn band_zero(hash: u64, page: UrlId) -> [u8; SimhashKey::LEN] {
    SimhashKey {
        band: 0,
        hash,
        page,
    }
    .to_key()
}
