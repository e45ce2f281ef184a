//! The `simhash` band index: the rows a hashed page adds, read back into
//! the crawl's in-memory index (`dedup::BandIndex`) and for cluster lists.

use std::collections::{HashMap, HashSet};

use rocksdb::ReadOptions;

use super::{Batch, Result, Store};
use crate::dedup::BandIndex;
use crate::model::UrlId;
use crate::schema::{CF_SIMHASH, SimhashKey};

impl Store {
    /// The index held in memory by the crawl, from one pass over the first
    /// band (a row a hashed page).
    pub fn load_band_index(&self) -> Result<BandIndex> {
        let mut index = BandIndex::default();
        self.first_band_rows(|key, cluster| index.insert(key.hash, key.page, cluster))?;
        Ok(index)
    }

    /// Up to `per` pages of each cluster in `clusters` besides its first,
    /// from one pass over the index's first band (a row a hashed page).
    pub fn cluster_members(
        &self,
        clusters: &HashSet<UrlId>,
        per: usize,
    ) -> Result<HashMap<UrlId, Vec<UrlId>>> {
        let mut out: HashMap<UrlId, Vec<UrlId>> = HashMap::new();
        self.first_band_rows(|key, cluster| {
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

    /// Each row of the index's first band: its key and its cluster.
    fn first_band_rows(&self, mut each: impl FnMut(SimhashKey, UrlId)) -> Result<()> {
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
                each(key, cluster);
            }
            it.next();
        }
        it.status()?;
        Ok(())
    }
}

impl Batch<'_> {
    /// `page`'s row in the index, naming its cluster: band 0's only (from
    /// schema 20). Every reader loads band 0 and builds the four tables in
    /// memory; the other bands' rows cost three writes a page on the
    /// crawl's serial stage and were never read.
    pub fn put_simhash(&mut self, hash: u64, page: UrlId, cluster: UrlId) {
        let key = SimhashKey {
            band: 0,
            hash,
            page,
        }
        .to_key();
        self.put_raw(CF_SIMHASH, &key, &cluster.to_bytes());
    }
}
