//! Typed reads of the value-less and raw-valued column families:
//! the URL table, the page index and `meta` flags.

use std::collections::HashSet;

use super::{Batch, Result, Store, StoreError};
use crate::model::{SeenState, UrlId};
use crate::schema::tables::Targets;
use crate::schema::{
    CF_CONTENT, CF_LINKS, CF_META, CF_PAGE_INDEX, CF_PATHS, CF_SEEN, CF_URLS, CF_VERDICTS,
    PageLinksBuilder, meta_keys, page_index,
};

impl Store {
    /// The target list (`targets import`), and how many of it have been
    /// fetched (a `seen` row in state fetched); one MultiGet per 4,096.
    pub fn targets_and_fetched(&self) -> Result<(HashSet<UrlId>, u64)> {
        let mut targets = HashSet::new();
        let mut fetched = 0;
        let mut chunk = Vec::with_capacity(4096);
        let mut rows = self.rows::<Targets>(&[]);
        loop {
            let row = rows.next().transpose()?;
            if let Some((id, _)) = row {
                targets.insert(id);
                chunk.push(id);
            }
            if chunk.len() == 4096 || (row.is_none() && !chunk.is_empty()) {
                fetched += self
                    .seen_many(&chunk)?
                    .into_iter()
                    .flatten()
                    .filter(|s| matches!(s.state, SeenState::Fetched { .. }))
                    .count() as u64;
                chunk.clear();
            }
            if row.is_none() {
                return Ok((targets, fetched));
            }
        }
    }

    /// Every stored URL, in id order.
    pub fn all_urls(&self) -> impl Iterator<Item = Result<String>> + '_ {
        self.scan(CF_URLS, &[])
            .map(|r| r.map(|(_, v)| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Whether `page_index` covers every stored page.
    pub fn page_index_complete(&self) -> Result<bool> {
        Ok(self
            .get_raw(CF_META, meta_keys::PAGE_INDEX_COMPLETE)?
            .is_some())
    }

    /// The pages of the `page_index` rows with `from <= key < to` (a
    /// prefix when `to` is None), in key order; a page may come twice.
    pub fn page_index_pages<'a>(
        &'a self,
        from: &'a [u8],
        to: Option<&'a [u8]>,
    ) -> Box<dyn Iterator<Item = Result<UrlId>> + 'a> {
        let id = |r: Result<super::Row>| {
            let (k, _) = r?;
            page_index::url_id(&k).ok_or_else(|| StoreError::Codec {
                cf: CF_PAGE_INDEX,
                err: crate::schema::CodecError::Malformed("a page_index key is malformed".into()),
            })
        };
        match to {
            None => Box::new(self.scan(CF_PAGE_INDEX, from).map(id)),
            Some(to) => Box::new(self.scan_range(CF_PAGE_INDEX, from, Some(to)).map(id)),
        }
    }

    /// The ids in the URL-seen set, in id order.
    pub fn seen_ids(&self) -> impl Iterator<Item = Result<UrlId>> + '_ {
        self.scan(CF_SEEN, &[])
            .map(|r| r.map(|(k, _)| UrlId::from_slice(&k)))
            .filter_map(|r| r.transpose())
    }

    /// The first page stored with body `md5`.
    pub fn content_owner(&self, md5: &[u8; 16]) -> Result<Option<UrlId>> {
        Ok(self
            .get_raw(CF_CONTENT, md5)?
            .and_then(|v| UrlId::from_slice(&v)))
    }

    /// Query strings queued for the path with key `path` so far.
    pub fn path_variants(&self, path: &[u8; 16]) -> Result<u32> {
        Ok(self
            .get_raw(CF_PATHS, path)?
            .and_then(|v| v.as_slice().try_into().ok().map(u32::from_be_bytes))
            .unwrap_or(0))
    }

    /// Queued URLs an interrupted refilter left for its drop step.
    pub fn refilter_drops(&self) -> impl Iterator<Item = Result<UrlId>> + '_ {
        let n = meta_keys::REFILTER_DROP_PREFIX.len();
        self.scan(CF_META, meta_keys::REFILTER_DROP_PREFIX)
            .map(move |r| r.map(|(k, _)| UrlId::from_slice(&k[n..])))
            .filter_map(|r| r.transpose())
    }

    /// A cursor over the `seen` rows (borrowed: for scans of millions).
    pub fn seen_cursor(&self) -> super::Cursor<'_> {
        self.cursor(CF_SEEN, &[])
    }

    /// Cursors over the `links` and `verdicts` rows of the pages with ids
    /// from `from` to before `to` (a refilter scanner's share; both walk
    /// alongside `docs_range`).
    pub fn links_cursor(&self, from: &[u8], to: Option<&[u8]>) -> super::Cursor<'_> {
        self.cursor_range(CF_LINKS, from, to)
    }

    pub fn verdicts_cursor(&self, from: &[u8], to: Option<&[u8]>) -> super::Cursor<'_> {
        self.cursor_range(CF_VERDICTS, from, to)
    }

    pub fn pages_cursor(&self, from: &[u8], to: Option<&[u8]>) -> super::Cursor<'_> {
        self.cursor_range(crate::schema::CF_PAGES, from, to)
    }

    /// The `docs` rows of the pages with ids from `from` to before `to`,
    /// undecoded (a scanner reads them in place with `DocView`).
    pub fn docs_range<'a>(
        &'a self,
        from: &[u8],
        to: Option<&[u8]>,
    ) -> impl Iterator<Item = Result<super::Row>> + 'a {
        self.scan_range(crate::schema::CF_DOCS, from, to)
    }

    /// Whether `trawl demo` created this db.
    pub fn is_demo(&self) -> Result<bool> {
        Ok(self.get_raw(CF_META, meta_keys::DEMO)?.is_some())
    }
}

impl Batch<'_> {
    /// Marks the db as one `trawl demo` created (and may replace).
    pub fn mark_demo(&mut self) {
        self.put_raw(CF_META, meta_keys::DEMO, &[]);
    }

    /// A new URL's row in the URL table.
    pub fn put_url(&mut self, id: UrlId, url: &str) {
        self.put_raw(CF_URLS, &id.to_bytes(), url.as_bytes());
    }

    /// A page's out-links, as one row.
    pub fn put_links(&mut self, src: UrlId, links: &PageLinksBuilder) {
        self.put_raw(CF_LINKS, &src.to_bytes(), &links.encode());
    }

    /// A `links` row (a page's, or a per-link row of schema 4) already
    /// encoded by a refilter scanner.
    pub fn put_links_encoded(&mut self, key: &[u8], value: &[u8]) {
        self.put_raw(CF_LINKS, key, value);
    }

    /// A `docs` row already encoded by a refilter scanner.
    pub fn put_doc_encoded(&mut self, page: &[u8], value: &[u8]) {
        self.put_raw(super::CF_DOCS, page, value);
    }

    /// A `verdicts` row already encoded by a refilter scanner.
    pub fn put_verdict_encoded(&mut self, page: &[u8], value: &[u8]) {
        self.put_raw(CF_VERDICTS, page, value);
    }

    /// A page's `page_index` rows: its status and its host.
    pub fn put_page_index(&mut self, status: u16, host: &str, id: UrlId) {
        for key in page_index::keys(status, host, id) {
            self.put_raw(CF_PAGE_INDEX, &key, &[]);
        }
    }

    /// A page's old version goes (a revisit found a new one): its links
    /// row, an in-link, its `page_index` rows, its claim on a body.
    pub fn delete_links(&mut self, src: UrlId) {
        self.delete(CF_LINKS, &src.to_bytes());
    }

    pub fn delete_page_index(&mut self, status: u16, host: &str, id: UrlId) {
        for key in page_index::keys(status, host, id) {
            self.delete(CF_PAGE_INDEX, &key);
        }
    }

    pub fn delete_content_owner(&mut self, md5: &[u8; 16]) {
        self.delete(CF_CONTENT, md5);
    }

    /// `id` is the first page with body `md5`.
    pub fn put_content_owner(&mut self, md5: &[u8; 16], id: UrlId) {
        self.put_raw(CF_CONTENT, md5, &id.to_bytes());
    }

    /// `n` query strings queued for the path with key `path`.
    pub fn put_path_variants(&mut self, path: &[u8; 16], n: u32) {
        self.put_raw(CF_PATHS, path, &n.to_be_bytes());
    }

    /// A queued URL a refilter's drop step must judge.
    pub fn put_refilter_drop(&mut self, id: UrlId) {
        self.put_raw(CF_META, &meta_keys::refilter_drop(id), &[]);
    }

    pub fn delete_refilter_drop(&mut self, id: UrlId) {
        self.delete(CF_META, &meta_keys::refilter_drop(id));
    }
}
