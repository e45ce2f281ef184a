//! A page's links as the current shape, whatever layout stored them: its
//! `links` row (schema 5 on), or the per-link rows of schema 4 and older,
//! with the target's URL filled in where old records lack it.

use super::{Cursor, Result, Store, StoreError};
use crate::model::UrlId;
use crate::schema::{CF_LINKS, CodecError, LinkRecord, LinkView, OutLinkKey, PageLinks, Versioned};

/// A page's `links` rows copied out of a cursor that walks `links` in key
/// order (a merge join with another column family keyed by page): its page
/// row (schema 5 on; it sorts first and supersedes per-link rows an earlier
/// fetch under schema 4 left) or, in an older db, its per-link rows.
pub struct PageLinkRows {
    page_row: Option<Vec<u8>>,
    legacy: Vec<(UrlId, Vec<u8>)>,
}

impl PageLinkRows {
    /// Reads page `page`'s rows (its id's bytes), passing over the rows of
    /// pages before it; leaves the cursor on the next page's first row.
    pub fn read(cursor: &mut Cursor<'_>, page: &[u8]) -> Result<PageLinkRows> {
        cursor.skip_before(page)?;
        let mut rows = PageLinkRows {
            page_row: None,
            legacy: Vec::new(),
        };
        while let Some((k, v)) = cursor.next_row()? {
            if !k.starts_with(page) {
                break;
            }
            if k.len() == page.len() {
                rows.page_row = Some(v.to_vec());
            } else if rows.page_row.is_none()
                && let Some(key) = OutLinkKey::from_key(k)
            {
                rows.legacy.push((key.dst, v.to_vec()));
            }
        }
        Ok(rows)
    }

    /// Each link in the current shape and the page's order, or the error
    /// of a row that could not be read (a page row counts as one).
    fn decoded(&self) -> Vec<std::result::Result<(UrlId, LinkView<'_>), CodecError>> {
        match &self.page_row {
            Some(row) => match PageLinks::decode(row) {
                Ok(links) => links.into_iter().map(Ok).collect(),
                Err(e) => vec![Err(e)],
            },
            None => self
                .legacy
                .iter()
                .map(|(dst, v)| Ok((*dst, LinkView::decode(v)?)))
                .collect(),
        }
    }

    /// The links that could be read, and how many rows could not (left
    /// out).
    pub fn links(&self) -> (Vec<(UrlId, LinkView<'_>)>, u64) {
        let mut bad = 0;
        let links = self
            .decoded()
            .into_iter()
            .filter_map(|l| l.map_err(|_| bad += 1).ok())
            .collect();
        (links, bad)
    }

    /// The links, or the first error reading them.
    pub fn links_strict(&self) -> std::result::Result<Vec<(UrlId, LinkView<'_>)>, CodecError> {
        self.decoded().into_iter().collect()
    }
}

impl Store {
    /// Calls `f` with each page that has links, and its links (or why its
    /// rows could not be read), in page-id order.
    pub fn each_page_links(
        &self,
        mut f: impl FnMut(UrlId, std::result::Result<Vec<(UrlId, LinkView<'_>)>, CodecError>),
    ) -> Result<()> {
        self.each_page_links_while(|src, links| {
            f(src, links);
            true
        })
    }

    /// As [`Store::each_page_links`], stopping when `f` says false.
    pub fn each_page_links_while(
        &self,
        mut f: impl FnMut(UrlId, std::result::Result<Vec<(UrlId, LinkView<'_>)>, CodecError>) -> bool,
    ) -> Result<()> {
        let mut cursor = self.cursor(CF_LINKS, &[]);
        while let Some((k, _)) = cursor.current()? {
            let Some(src) = k.get(..16).and_then(UrlId::from_slice) else {
                cursor.advance();
                continue;
            };
            let rows = PageLinkRows::read(&mut cursor, &src.to_bytes())?;
            if !f(src, rows.links_strict()) {
                break;
            }
        }
        Ok(())
    }

    /// A page's out-links (at most `limit`), each with its target's URL:
    /// its `links` row, and in a db written by schema 4 or older its
    /// per-link rows (whose records before version 4 lack the URL: one
    /// MultiGet of `urls` fills those).
    pub fn links_from(&self, src: UrlId, limit: usize) -> Result<Vec<(UrlId, LinkRecord)>> {
        let mut links = self.stored_links_from(src, limit)?;
        let missing: Vec<UrlId> = links
            .iter()
            .filter(|(_, l)| l.dst_url.is_empty())
            .map(|(id, _)| *id)
            .collect();
        if missing.is_empty() {
            return Ok(links);
        }
        let mut found = self.urls_many(&missing)?.into_iter();
        for (id, l) in links.iter_mut().filter(|(_, l)| l.dst_url.is_empty()) {
            l.dst_url = found.next().flatten().unwrap_or_else(|| id.to_string());
        }
        Ok(links)
    }

    fn stored_links_from(&self, src: UrlId, limit: usize) -> Result<Vec<(UrlId, LinkRecord)>> {
        self.with_links(src, |links| {
            links
                .iter()
                .take(limit)
                .map(|(dst, l)| (*dst, l.to_record()))
                .collect()
        })
    }

    /// Calls `f` with page `src`'s out-links as stored, borrowed (no copy
    /// of their text); a link of a schema-4-or-older record may have an
    /// empty `dst_url` (see [`Store::links_from`]).
    pub fn with_links<R>(
        &self,
        src: UrlId,
        f: impl FnOnce(&[(UrlId, LinkView<'_>)]) -> R,
    ) -> Result<R> {
        let page = src.to_bytes();
        let mut cursor = self.cursor(CF_LINKS, &page);
        let rows = PageLinkRows::read(&mut cursor, &page)?;
        let links = rows
            .links_strict()
            .map_err(|err| StoreError::Codec { cf: CF_LINKS, err })?;
        Ok(f(&links))
    }

    /// The link from `src` to `dst`, in either layout of [`Store::links_from`].
    pub fn link(&self, src: UrlId, dst: UrlId) -> Result<Option<LinkRecord>> {
        let codec = |err| StoreError::Codec { cf: CF_LINKS, err };
        if let Some(v) = self.db.get_pinned_cf(self.cf(CF_LINKS), src.to_bytes())? {
            let links = PageLinks::decode(&v).map_err(codec)?;
            return Ok(links
                .iter()
                .find(|(d, _)| *d == dst)
                .map(|(_, l)| l.to_record()));
        }
        let legacy = OutLinkKey { src, dst };
        match self.get_raw(CF_LINKS, &legacy.to_key())? {
            Some(v) => Ok(Some(LinkRecord::decode(&v).map_err(codec)?)),
            None => Ok(None),
        }
    }

    /// The first stored link to `dst` (by source id) and its source.
    pub fn first_link_to(&self, dst: UrlId) -> Result<Option<(UrlId, LinkRecord)>> {
        self.inlinks()?.first_link(self, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_read_per_link_rows_of_schema_4_and_page_rows_that_supersede_them() {
        use crate::schema::{LinkView, PageLinksBuilder};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (src, old_dst, new_dst) = (UrlId(7), UrlId(8), UrlId(9));
        // As schema 4 wrote them: one row per link, a v3 record (no URL).
        let mut v3 = vec![3u8];
        v3.extend(
            postcard::to_stdvec(&("a", "", "", false, "outward", "follow", "", "h.org")).unwrap(),
        );
        let legacy = OutLinkKey { src, dst: old_dst };
        let mut b = store.batch();
        b.put_raw(CF_LINKS, &legacy.to_key(), &v3);
        b.write().unwrap();
        let links = store.links_from(src, usize::MAX).unwrap();
        assert_eq!(links.len(), 1);
        assert_eq!((links[0].0, links[0].1.anchor.as_str()), (old_dst, "a"));
        assert_eq!(store.link(src, old_dst).unwrap().unwrap().dst_host, "h.org");
        assert!(store.link(src, new_dst).unwrap().is_none());
        assert!(store.links_from(UrlId(6), 5).unwrap().is_empty());

        // The page fetched again under schema 5: its row is the truth.
        let mut row = PageLinksBuilder::default();
        let link = LinkView {
            anchor: "b",
            dst_url: "http://h.org/b",
            ..LinkView::default()
        };
        row.push(new_dst, &link);
        let mut b = store.batch();
        b.put_raw(CF_LINKS, &src.to_bytes(), &row.encode());
        b.write().unwrap();
        let links = store.links_from(src, usize::MAX).unwrap();
        assert_eq!(links, vec![(new_dst, link.to_record())]);
        assert!(store.link(src, old_dst).unwrap().is_none());
        assert_eq!(store.link(src, new_dst).unwrap().unwrap().anchor, "b");
    }
}
