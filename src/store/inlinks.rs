//! In-links as readers see them, whatever wrote them: pair rows (schema
//! 22 and older), group rows (a crawl window's links to one target), and
//! the links of the pages whose in-links still wait in the crawl's window
//! (`inlink_pages` `p` rows), read from their `links` rows.

use std::collections::HashMap;

use super::{Batch, Cursor, Joined, PageLinkRows, Result, Store, StoreError};
use crate::model::UrlId;
use crate::schema::{
    CF_INLINK_PAGES, CF_INLINKS, CF_LINKS, CF_META, CodecError, InLinkKey, InLinkRow, LinkRecord,
    inlink_pages, meta_keys,
};

/// A page and the targets of its links.
pub type PageTargets = (UrlId, Vec<UrlId>);

/// Reads the in-links of one target after another through one cursor (a
/// new iterator over the live `inlinks` memtable, a vector, sorts a copy
/// of it). The waiting pages' links are read first, before the cursor: a
/// window written in between is then read twice (and counted once), never
/// missed.
pub struct InLinks<'a> {
    cursor: Joined<'a>,
    waiting: HashMap<UrlId, Vec<UrlId>>,
}

impl<'a> InLinks<'a> {
    /// The pages linking to `dst`, in id order.
    pub fn sources(&mut self, dst: UrlId) -> Result<Vec<UrlId>> {
        let prefix = dst.to_bytes();
        // Targets asked for in id order (a scan) step from one to the next.
        self.cursor.seek_near(&prefix)?;
        let mut found = Vec::new();
        while let Some((k, v)) = self.cursor.current()? {
            if !k.starts_with(&prefix) {
                break;
            }
            found.extend(InLinkRow::read(k, v).into_iter().flat_map(|r| r.sources()));
            self.cursor.advance()?;
        }
        if let Some(w) = self.waiting.get(&dst) {
            found.extend_from_slice(w);
        }
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }

    /// The first page linking to `dst` (by id) and its link.
    pub fn first_link(&mut self, store: &Store, dst: UrlId) -> Result<Option<(UrlId, LinkRecord)>> {
        let Some(&src) = self.sources(dst)?.first() else {
            return Ok(None);
        };
        Ok(store.link(src, dst)?.map(|l| (src, l)))
    }

    /// How many pages link to `dst`.
    pub fn count(&mut self, dst: UrlId) -> Result<u64> {
        Ok(self.sources(dst)?.len() as u64)
    }
}

/// Every target with the pages linking to it, in target order (the order of
/// `inlinks` keys), the waiting pages' links merged in.
pub struct AllInLinks<'a> {
    cursor: Cursor<'a>,
    /// The waiting pages' links, by target, in target order, reversed (the
    /// next one is popped).
    waiting: Vec<(UrlId, Vec<UrlId>)>,
}

impl AllInLinks<'_> {
    /// The next target and its sources (ascending), or None at the end.
    pub fn next_target(&mut self) -> Result<Option<(UrlId, Vec<UrlId>)>> {
        let stored = self.peek_target()?;
        let waiting = self.waiting.last().map(|(d, _)| *d);
        let Some(dst) = stored.into_iter().chain(waiting).min() else {
            return Ok(None);
        };
        let mut sources = Vec::new();
        if stored == Some(dst) {
            while let Some((k, v)) = self.cursor.current()? {
                match InLinkRow::read(k, v) {
                    Some(row) if row.dst == dst => sources.extend(row.sources()),
                    Some(_) => break,
                    None => {}
                }
                self.cursor.advance();
            }
        }
        if waiting == Some(dst) {
            sources.extend(self.waiting.pop().map(|(_, s)| s).unwrap_or_default());
        }
        sources.sort_unstable();
        sources.dedup();
        Ok(Some((dst, sources)))
    }

    /// The target of the next readable row, passing over unreadable ones.
    fn peek_target(&mut self) -> Result<Option<UrlId>> {
        while let Some((k, v)) = self.cursor.current()? {
            if let Some(row) = InLinkRow::read(k, v) {
                return Ok(Some(row.dst));
            }
            self.cursor.advance();
        }
        Ok(None)
    }
}

impl Store {
    /// A reader of in-links by target (see [`InLinks`]).
    pub fn inlinks(&self) -> Result<InLinks<'_>> {
        let waiting = self.waiting_inlinks()?;
        Ok(InLinks {
            cursor: Joined::new(self.cursor(CF_INLINKS, &[]), super::join::NEAR),
            waiting,
        })
    }

    /// Every target's in-links, in target order (see [`AllInLinks`]).
    pub fn all_inlinks(&self) -> Result<AllInLinks<'_>> {
        // Waiting pages first, then the cursor (see `InLinks`).
        let mut waiting: Vec<_> = self.waiting_inlinks()?.into_iter().collect();
        waiting.sort_unstable_by_key(|w| std::cmp::Reverse(w.0));
        Ok(AllInLinks {
            cursor: self.cursor(CF_INLINKS, &[]),
            waiting,
        })
    }

    /// The pages linking to `dst`, in id order.
    pub fn inlinks_to(&self, dst: UrlId) -> Result<Vec<UrlId>> {
        self.inlinks()?.sources(dst)
    }

    /// The crawl's in-link window being filled (0 before schema 23).
    pub fn inlink_window(&self) -> Result<u64> {
        Ok(self
            .get_raw(CF_META, meta_keys::INLINK_WINDOW)?
            .and_then(|v| Some(u64::from_be_bytes(v.get(..8)?.try_into().ok()?)))
            .unwrap_or(0))
    }

    /// The pages whose in-links wait in `window`, ascending.
    pub fn waiting_pages(&self, window: u64) -> Result<Vec<UrlId>> {
        let prefix = inlink_pages::pending_prefix(window);
        let mut cursor = self.cursor(CF_INLINK_PAGES, &prefix);
        let mut pages = Vec::new();
        while let Some((k, _)) = cursor.next_row()? {
            pages.extend(inlink_pages::pending_source(k));
        }
        Ok(pages)
    }

    /// The targets of each of `pages` (ascending), read through one cursor;
    /// a links row that cannot be read counts as none (the audit reports
    /// it), so one bad row stops no reader and no crawl.
    pub fn link_targets(&self, pages: &[UrlId]) -> Result<Vec<PageTargets>> {
        let mut cursor = self.cursor(CF_LINKS, &[]);
        let mut out = Vec::with_capacity(pages.len());
        for src in pages {
            let page = src.to_bytes();
            cursor.seek(&page);
            let rows = PageLinkRows::read(&mut cursor, &page)?;
            let (links, _) = rows.links();
            out.push((*src, links.into_iter().map(|(d, _)| d).collect()));
        }
        Ok(out)
    }

    /// The crawl's window and each page waiting in it with its targets.
    pub fn waiting_links(&self) -> Result<(u64, Vec<PageTargets>)> {
        let window = self.inlink_window()?;
        let pages = self.waiting_pages(window)?;
        Ok((window, self.link_targets(&pages)?))
    }

    /// The links of the pages whose in-links wait in the crawl's window,
    /// by target.
    fn waiting_inlinks(&self) -> Result<HashMap<UrlId, Vec<UrlId>>> {
        let mut by_target: HashMap<UrlId, Vec<UrlId>> = HashMap::new();
        for (src, targets) in self.waiting_links()?.1 {
            for dst in targets {
                by_target.entry(dst).or_default().push(src);
            }
        }
        Ok(by_target)
    }

    /// Writes window `number` in one batch: a group row per target (its
    /// sources sorted, deduplicated), each page's place instead of its
    /// waiting mark, and the next window's number.
    pub fn write_inlink_window<'g>(
        &self,
        number: u64,
        groups: impl Iterator<Item = (&'g UrlId, &'g mut Vec<UrlId>)>,
        pages: impl Iterator<Item = UrlId>,
    ) -> Result<()> {
        let mut b = self.batch();
        for (dst, srcs) in groups.filter(|(_, s)| !s.is_empty()) {
            srcs.sort_unstable();
            srcs.dedup();
            b.put_inlink_group(*dst, number, srcs);
        }
        for src in pages {
            b.delete_inlinks_waiting(number, src);
            b.put_inlinks_placed(src, number);
        }
        b.put_inlink_window(number + 1);
        b.write()
    }

    /// The window whose group rows hold `src`'s in-links, if they are in
    /// group rows.
    pub fn inlinks_placed(&self, src: UrlId) -> Result<Option<u64>> {
        Ok(self
            .get_raw(CF_INLINK_PAGES, &inlink_pages::placed(src))?
            .and_then(|v| Some(u64::from_be_bytes(v.get(..8)?.try_into().ok()?))))
    }

    /// The sources in `dst`'s group row of `window`; an error for a row
    /// that cannot be read (rewritten without one page, it would lose the
    /// others).
    pub fn inlink_group(&self, dst: UrlId, window: u64) -> Result<Vec<UrlId>> {
        let key = InLinkRow::group_key(dst, window);
        let Some(v) = self.get_raw(CF_INLINKS, &key)? else {
            return Ok(Vec::new());
        };
        match InLinkRow::read(&key, &v) {
            Some(r) => Ok(r.sources().collect()),
            None => Err(StoreError::Codec {
                cf: CF_INLINKS,
                err: CodecError::Malformed(format!("a group row of {} bytes", v.len())),
            }),
        }
    }
}

impl Batch<'_> {
    /// `src`'s in-links wait in `window` (its links row is in this batch).
    pub fn put_inlinks_waiting(&mut self, window: u64, src: UrlId) {
        self.put_raw(CF_INLINK_PAGES, &inlink_pages::pending(window, src), &[]);
    }

    pub fn delete_inlinks_waiting(&mut self, window: u64, src: UrlId) {
        self.delete(CF_INLINK_PAGES, &inlink_pages::pending(window, src));
    }

    /// `src`'s in-links are in `window`'s group rows.
    pub fn put_inlinks_placed(&mut self, src: UrlId, window: u64) {
        self.put_raw(
            CF_INLINK_PAGES,
            &inlink_pages::placed(src),
            &window.to_be_bytes(),
        );
    }

    pub fn delete_inlinks_placed(&mut self, src: UrlId) {
        self.delete(CF_INLINK_PAGES, &inlink_pages::placed(src));
    }

    /// `dst`'s group row of `window`: `sources` (ascending), or none when
    /// empty.
    pub fn put_inlink_group(&mut self, dst: UrlId, window: u64, sources: &[UrlId]) {
        let key = InLinkRow::group_key(dst, window);
        if sources.is_empty() {
            self.delete(CF_INLINKS, &key);
        } else {
            self.put_raw(CF_INLINKS, &key, &InLinkRow::group_value(sources));
        }
    }

    /// A pair row (schema 22 and older) goes.
    pub fn delete_inlink(&mut self, link: InLinkKey) {
        self.delete(CF_INLINKS, &link.to_key());
    }

    pub fn put_inlink_window(&mut self, window: u64) {
        self.put_raw(CF_META, meta_keys::INLINK_WINDOW, &window.to_be_bytes());
    }
}
