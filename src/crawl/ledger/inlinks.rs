//! The in-links of the crawl's last pages, grouped by target before they
//! are written: one group row per target and window instead of one row per
//! link (on rust-doc a page's 34 in-link rows were two thirds of the rows
//! the crawl wrote, and writing and flushing them a fifth of its CPU).
//!
//! Nothing is lost on a crash: each page's batch marks it waiting
//! (`inlink_pages`), readers add the waiting pages' links from their
//! `links` rows, and a ledger opened after a crash fills its window again
//! from those.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use crate::model::{IdHasher, UrlId};
use crate::schema::InLinkKey;
use crate::store::{Batch, Store, StoreError};

type IdMap<V> = HashMap<UrlId, V, BuildHasherDefault<IdHasher>>;
type IdSet = HashSet<UrlId, BuildHasherDefault<IdHasher>>;

/// A window is written when it holds this many links...
const WINDOW_LINKS: usize = 100_000;
/// ... or this many pages: a reader reads every waiting page's links.
const WINDOW_PAGES: usize = 4_096;

pub(super) struct InLinkWindow {
    /// Its number: its pages' `p` rows and its group rows carry it.
    number: u64,
    by_target: IdMap<Vec<UrlId>>,
    pages: IdSet,
    links: usize,
}

impl InLinkWindow {
    /// The window the store was filling, with the links of its waiting
    /// pages (a crash left them there).
    pub fn load(store: &Store) -> Result<InLinkWindow, StoreError> {
        let (number, waiting) = store.waiting_links()?;
        let mut w = InLinkWindow {
            number,
            by_target: IdMap::default(),
            pages: IdSet::default(),
            links: 0,
        };
        for (src, targets) in waiting {
            w.pages.insert(src);
            for dst in targets {
                w.push(dst, src);
            }
        }
        Ok(w)
    }

    /// The link `src -> dst`, recorded in `src`'s batch `b` (a page's
    /// targets come once each).
    pub fn add(&mut self, b: &mut Batch<'_>, dst: UrlId, src: UrlId) {
        if self.pages.insert(src) {
            b.put_inlinks_waiting(self.number, src);
        }
        self.push(dst, src);
    }

    fn push(&mut self, dst: UrlId, src: UrlId) {
        self.by_target.entry(dst).or_default().push(src);
        self.links += 1;
    }

    pub fn is_full(&self) -> bool {
        self.links >= WINDOW_LINKS || self.pages.len() >= WINDOW_PAGES
    }

    /// `src`'s in-links to `targets` go (a revisit found a new version of
    /// it), wherever they are: in the window, in a window's group rows, or
    /// in pair rows of an older schema.
    pub fn forget(
        &mut self,
        store: &Store,
        b: &mut Batch<'_>,
        src: UrlId,
        targets: &[UrlId],
    ) -> Result<(), StoreError> {
        if self.pages.remove(&src) {
            for dst in targets {
                if let Some(srcs) = self.by_target.get_mut(dst)
                    && let Some(i) = srcs.iter().position(|s| *s == src)
                {
                    srcs.swap_remove(i);
                    self.links -= 1;
                }
            }
            b.delete_inlinks_waiting(self.number, src);
            return Ok(());
        }
        match store.inlinks_placed(src)? {
            Some(window) => {
                for dst in targets {
                    let mut srcs = store.inlink_group(*dst, window)?;
                    srcs.retain(|s| *s != src);
                    b.put_inlink_group(*dst, window, &srcs);
                }
                b.delete_inlinks_placed(src);
            }
            None => {
                for dst in targets {
                    b.delete_inlink(InLinkKey { dst: *dst, src });
                }
            }
        }
        Ok(())
    }

    /// Writes the window as group rows in one batch, with its pages' new
    /// places, and starts the next one.
    pub fn write(&mut self, store: &Store) -> Result<(), StoreError> {
        if self.pages.is_empty() {
            return Ok(());
        }
        let pages = self.pages.iter().copied();
        store.write_inlink_window(self.number, self.by_target.iter_mut(), pages)?;
        self.number += 1;
        self.by_target.clear();
        self.pages.clear();
        self.links = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{LinkView, PageLinksBuilder};

    fn url(n: u32) -> String {
        format!("http://h.org/{n}")
    }

    fn id(n: u32) -> UrlId {
        UrlId::of(&url(n))
    }

    /// Page `src`'s links to `targets`, as the crawl records them: its
    /// links row and its in-links in one batch.
    fn record(store: &Store, w: &mut InLinkWindow, src: u32, targets: &[u32]) {
        let mut b = store.batch();
        let mut row = PageLinksBuilder::default();
        for t in targets {
            let dst_url = url(*t);
            let link = LinkView {
                dst_url: &dst_url,
                ..LinkView::default()
            };
            if row.push_own(id(*t), &link) {
                w.add(&mut b, id(*t), id(src));
            }
        }
        b.put_links(id(src), &row);
        b.write().unwrap();
    }

    /// Every (target, sources) as readers see them, both ways of reading.
    fn read(store: &Store, targets: &[u32]) -> Vec<(UrlId, Vec<UrlId>)> {
        let mut all = store.all_inlinks().unwrap();
        let mut scanned = Vec::new();
        while let Some(t) = all.next_target().unwrap() {
            scanned.push(t);
        }
        let mut by_target: Vec<_> = targets
            .iter()
            .map(|t| (id(*t), store.inlinks_to(id(*t)).unwrap()))
            .filter(|(_, s)| !s.is_empty())
            .collect();
        by_target.sort();
        assert_eq!(scanned, by_target, "a scan and lookups agree");
        scanned
    }

    fn ids(ns: &[u32]) -> Vec<UrlId> {
        let mut v: Vec<_> = ns.iter().map(|n| id(*n)).collect();
        v.sort();
        v
    }

    #[test]
    fn in_links_read_the_same_waiting_written_and_after_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut w = InLinkWindow::load(&store).unwrap();
        record(&store, &mut w, 1, &[10, 11, 10]);
        record(&store, &mut w, 2, &[10]);
        let targets = [1, 2, 10, 11];
        let waiting = read(&store, &targets);
        assert_eq!(waiting, {
            let mut v = vec![(id(10), ids(&[1, 2])), (id(11), ids(&[1]))];
            v.sort();
            v
        });
        // A crash: the window in memory is gone; a new one finds its pages.
        drop(w);
        let mut w = InLinkWindow::load(&store).unwrap();
        assert_eq!((w.pages.len(), w.links), (2, 3));
        w.write(&store).unwrap();
        assert_eq!(store.waiting_pages(0).unwrap(), vec![]);
        assert_eq!(store.inlink_window().unwrap(), 1);
        assert_eq!(store.inlinks_placed(id(1)).unwrap(), Some(0));
        assert_eq!(store.inlink_group(id(10), 0).unwrap(), ids(&[1, 2]));
        assert_eq!(read(&store, &targets), waiting);
        // The next window's pages wait beside the written rows, and a
        // target in both reads as one.
        record(&store, &mut w, 3, &[10, 12]);
        assert_eq!(store.waiting_pages(1).unwrap(), vec![id(3)]);
        let both = read(&store, &[1, 2, 3, 10, 11, 12]);
        assert!(both.contains(&(id(10), ids(&[1, 2, 3]))), "{both:?}");
        assert!(both.contains(&(id(12), ids(&[3]))), "{both:?}");
        assert_eq!(both.len(), 3);
        w.write(&store).unwrap();
        assert_eq!(read(&store, &[1, 2, 3, 10, 11, 12]), both);
    }

    #[test]
    fn a_revisit_takes_a_pages_in_links_from_wherever_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut w = InLinkWindow::load(&store).unwrap();
        // Page 1's in-links in a written window, page 2's waiting, page
        // 3's in pair rows as schema 22 wrote them.
        record(&store, &mut w, 1, &[10, 11]);
        w.write(&store).unwrap();
        record(&store, &mut w, 2, &[10, 11]);
        let mut b = store.batch();
        for dst in [10, 11] {
            let key = InLinkKey {
                dst: id(dst),
                src: id(3),
            };
            b.put_raw(crate::schema::CF_INLINKS, &key.to_key(), &[]);
        }
        b.write().unwrap();
        let targets = [10, 11];
        let mut all = vec![(id(10), ids(&[1, 2, 3])), (id(11), ids(&[1, 2, 3]))];
        all.sort();
        assert_eq!(read(&store, &targets), all);
        for page in [1, 2, 3] {
            let mut b = store.batch();
            w.forget(&store, &mut b, id(page), &ids(&[10, 11])).unwrap();
            b.delete_links(id(page));
            b.write().unwrap();
        }
        assert_eq!(read(&store, &targets), vec![]);
        assert_eq!(store.inlinks_placed(id(1)).unwrap(), None);
        assert_eq!(store.waiting_pages(1).unwrap(), vec![]);
        assert_eq!(w.links, 0);
        // Recorded again after the revisit, page 1 waits in the window.
        record(&store, &mut w, 1, &[11]);
        w.write(&store).unwrap();
        assert_eq!(read(&store, &targets), vec![(id(11), ids(&[1]))]);
    }

    /// A new db whose window holds pages 1 and 2, each linking to 10.
    fn two_pages_linking_to_10() -> (tempfile::TempDir, Store, InLinkWindow) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut w = InLinkWindow::load(&store).unwrap();
        record(&store, &mut w, 1, &[10]);
        record(&store, &mut w, 2, &[10]);
        (dir, store, w)
    }

    #[test]
    fn an_unreadable_group_row_is_an_error_not_rewritten_empty() {
        let (_dir, store, mut w) = two_pages_linking_to_10();
        w.write(&store).unwrap();
        let key = crate::schema::InLinkRow::group_key(id(10), 0);
        let mut b = store.batch();
        b.put_raw(crate::schema::CF_INLINKS, &key, &[7; 31]);
        b.write().unwrap();
        let mut b = store.batch();
        let err = w.forget(&store, &mut b, id(1), &ids(&[10]));
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("group row of 31 bytes")
        );
        drop(b);
        assert!(
            store
                .get_raw(crate::schema::CF_INLINKS, &key)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_waiting_page_whose_links_row_is_unreadable_stops_no_reader() {
        let (_dir, store, _window) = two_pages_linking_to_10();
        let mut b = store.batch();
        b.put_raw(crate::schema::CF_LINKS, &id(2).to_bytes(), &[99, 1, 2]);
        b.write().unwrap();
        assert_eq!(store.inlinks_to(id(10)).unwrap(), vec![id(1)]);
        assert_eq!(InLinkWindow::load(&store).unwrap().links, 1);
        let problems = crate::crawl::audit(&store).unwrap();
        assert!(
            problems.iter().any(|p| p.contains("links unreadable")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_window_is_written_when_it_holds_enough_links_or_pages() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut w = InLinkWindow::load(&store).unwrap();
        let mut b = store.batch();
        for page in 0..WINDOW_PAGES as u32 - 1 {
            w.add(&mut b, id(1), id(page));
        }
        assert!(!w.is_full());
        w.add(&mut b, id(1), id(u32::MAX));
        assert!(w.is_full());
        let mut w = InLinkWindow::load(&store).unwrap();
        for dst in 0..WINDOW_LINKS as u32 - 1 {
            w.add(&mut b, id(dst), id(1));
        }
        assert!(!w.is_full());
        w.add(&mut b, id(u32::MAX), id(1));
        assert!(w.is_full());
    }
}
