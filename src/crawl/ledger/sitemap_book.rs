//! The sitemap files the crawl knows (`sitemaps` rows) and how many each
//! host has, against `sitemaps.max_per_host`.

use std::collections::{HashMap, HashSet};

use crate::model::{self, HostId, UrlId};
use crate::schema::tables::Sitemaps;
use crate::store::{Store, StoreError};

#[derive(Default)]
pub(super) struct SitemapBook {
    files: HashSet<UrlId>,
    per_host: HashMap<HostId, u32>,
}

impl SitemapBook {
    /// The sitemap files `store` records.
    pub fn load(store: &Store) -> Result<SitemapBook, StoreError> {
        let mut book = SitemapBook::default();
        for row in store.rows::<Sitemaps>(&[]) {
            let (id, rec) = row?;
            book.files.insert(id);
            if let Ok(u) = model::normalize(&rec.url) {
                *book.per_host.entry(u.host_id()).or_default() += 1;
            }
        }
        Ok(book)
    }

    pub fn contains(&self, id: UrlId) -> bool {
        !self.files.is_empty() && self.files.contains(&id)
    }

    /// Whether `host` has its share (`max`) of sitemap files.
    pub fn host_is_full(&self, host: HostId, max: u32) -> bool {
        self.per_host.get(&host).copied().unwrap_or(0) >= max
    }

    /// Sitemap `id` of `host` is recorded.
    pub fn add(&mut self, host: HostId, id: UrlId) {
        *self.per_host.entry(host).or_default() += 1;
        self.files.insert(id);
    }
}
