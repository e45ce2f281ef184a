//! Filling `page_index` from `pages`: for a db created before schema 3,
//! whose pages were stored without index rows.

use super::{Result, Store};
use crate::model::{self, UrlId};
use crate::schema::{
    CF_META, CF_PAGE_INDEX, CF_PAGES, PageRecord, Versioned, meta_keys, page_index,
};

/// Pages per batch: bounds the memory of one write.
const CHUNK: usize = 4096;

impl Store {
    /// Writes every stored page's index rows, then marks the index complete.
    /// `progress(done)` returns false to stop early (the index then stays
    /// incomplete, and queries keep scanning). Returns the pages indexed and
    /// whether every page was.
    pub fn reindex_pages(&self, progress: &mut dyn FnMut(u64) -> bool) -> Result<(u64, bool)> {
        let mut done = 0u64;
        let mut b = self.batch();
        for row in self.scan(CF_PAGES, &[]) {
            let (k, v) = row?;
            let (Some(id), Ok(page)) = (UrlId::from_slice(&k), PageRecord::decode(&v)) else {
                continue;
            };
            let host = model::parsed_host(&page.url);
            for key in page_index::keys(page.status, &host, id) {
                b.put_raw(CF_PAGE_INDEX, &key, &[]);
            }
            done += 1;
            if done.is_multiple_of(CHUNK as u64) {
                std::mem::replace(&mut b, self.batch()).write()?;
                if !progress(done) {
                    return Ok((done, false));
                }
            }
        }
        b.put_raw(CF_META, meta_keys::PAGE_INDEX_COMPLETE, &[]);
        b.write()?;
        progress(done);
        Ok((done, true))
    }
}
