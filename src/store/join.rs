//! A page's rows in the column families keyed by its id, read for page
//! after page through one cursor per column family moved forward (a merge
//! join) instead of a point lookup each: `export pages` over 1,000,000
//! pages spent a fifth of its time in those lookups. Ids out of order (a
//! sorted table, a status range of the page index) cost a seek each.

use super::{Cursor, Result, Store, StoreError};
use crate::model::UrlId;
use crate::schema::tables::{Key, Table};
use crate::schema::{
    CF_DOCS, CF_PAGES, CF_VERDICTS, DocRecord, DocView, PageDoc, VerdictRecord, Versioned,
};

/// Rows a cursor steps over before it seeks instead: a step is a
/// comparison in the current block, a seek searches every level's index.
pub(super) const NEAR: usize = 32;

/// A cursor for lookups by key, cheap when the keys rise: it steps
/// forward from where it stands when no row at or after the key can be
/// behind it, and seeks otherwise.
pub struct Joined<'a> {
    cursor: Cursor<'a>,
    /// Rows stepped over before seeking (0: always seek).
    near: usize,
    /// Every row with a key after `floor` (or equal to it, unless
    /// `passed`) is at or after the cursor.
    floor: Vec<u8>,
    passed: bool,
}

impl<'a> Joined<'a> {
    pub(super) fn new(cursor: Cursor<'a>, near: usize) -> Joined<'a> {
        Joined {
            cursor,
            near,
            floor: Vec::new(),
            passed: false,
        }
    }

    /// Moves to the first row at or after `key`.
    pub fn seek_near(&mut self, key: &[u8]) -> Result<()> {
        let ahead = match self.floor.as_slice().cmp(key) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Equal => !self.passed,
            std::cmp::Ordering::Greater => false,
        };
        self.floor.clear();
        self.floor.extend_from_slice(key);
        self.passed = false;
        if ahead {
            for _ in 0..self.near {
                match self.cursor.current()? {
                    Some((k, _)) if k < key => self.cursor.it.next(),
                    _ => return Ok(()),
                }
            }
        }
        self.cursor.seek(key);
        Ok(())
    }

    /// The value of the row at `key`.
    pub fn find(&mut self, key: &[u8]) -> Result<Option<&[u8]>> {
        self.seek_near(key)?;
        Ok(self
            .cursor
            .current()?
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v))
    }

    /// The row at the cursor (where [`seek_near`](Self::seek_near) stopped).
    pub fn current(&self) -> Result<Option<(&[u8], &[u8])>> {
        self.cursor.current()
    }

    /// Moves past the row at the cursor.
    pub fn advance(&mut self) -> Result<()> {
        if let Some((k, _)) = self.cursor.current()? {
            self.floor.clear();
            self.floor.extend_from_slice(k);
            self.passed = true;
            self.cursor.it.next();
        }
        Ok(())
    }
}

/// Reads pages' rows by id through [`Joined`] cursors, one per column
/// family, opened at the first read of each.
pub struct PageJoin<'a> {
    store: &'a Store,
    /// Every page (or nearly) is asked for, in id order.
    dense: bool,
    cursors: Vec<(&'static str, Joined<'a>)>,
}

impl<'a> PageJoin<'a> {
    /// Stepping over a row of a table in blob files reads its value: page
    /// records (read for a scan's matches only) are always sought, docs
    /// unless every page's is read.
    fn near(&self, cf: &str) -> usize {
        match cf {
            CF_PAGES => 0,
            CF_DOCS if !self.dense => 0,
            _ => NEAR,
        }
    }

    fn joined(&mut self, cf: &'static str) -> &mut Joined<'a> {
        let at = match self.cursors.iter().position(|(c, _)| *c == cf) {
            Some(at) => at,
            None => {
                let j = Joined::new(self.store.cursor(cf, &[]), self.near(cf));
                self.cursors.push((cf, j));
                self.cursors.len() - 1
            }
        };
        &mut self.cursors[at].1
    }

    /// Page `id`'s row of table `T`.
    pub fn row<T: Table<Key = UrlId>>(&mut self, id: UrlId) -> Result<Option<T::Value>> {
        let key = id.bytes();
        match self.joined(T::CF).find(&key)? {
            Some(v) => T::Value::decode(v)
                .map(Some)
                .map_err(|err| StoreError::Codec { cf: T::CF, err }),
            None => Ok(None),
        }
    }

    /// Page `id`'s doc with its verdict, as [`Store::doc`] reads them.
    pub fn doc(&mut self, id: UrlId) -> Result<Option<PageDoc>> {
        let key = id.bytes();
        let verdict = match self.joined(CF_VERDICTS).find(&key)? {
            Some(v) => Some(VerdictRecord::decode(v).map_err(|err| StoreError::Codec {
                cf: CF_VERDICTS,
                err,
            })?),
            None => None,
        };
        match self.joined(CF_DOCS).find(&key)? {
            Some(bytes) => doc_of(bytes, verdict).map(Some),
            None => Ok(None),
        }
    }
}

/// A `docs` value with the page's verdict; without a `verdicts` row, the
/// one a schema-1 doc carries (or `keep`).
pub(super) fn doc_of(bytes: &[u8], verdict: Option<VerdictRecord>) -> Result<PageDoc> {
    let corrupt = |err| StoreError::Codec { cf: CF_DOCS, err };
    let doc = DocRecord::decode(bytes).map_err(corrupt)?;
    let verdict = match verdict {
        Some(v) => v,
        None => (DocView::decode(bytes).map_err(corrupt)?)
            .legacy_verdict
            .unwrap_or_default(),
    };
    Ok(PageDoc { doc, verdict })
}

impl Store {
    /// A reader of pages' rows by id (see [`PageJoin`]); `dense` when
    /// nearly every page is asked for, in id order (a full scan).
    pub fn page_join(&self, dense: bool) -> PageJoin<'_> {
        PageJoin {
            store: self,
            dense,
            cursors: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::CF_URLS;
    use crate::schema::tables::Ranks;

    /// Rising keys step, falling or far keys seek: every lookup finds
    /// exactly the row at its key, whatever the order and whatever rows
    /// were passed in between.
    #[test]
    fn lookups_find_their_row_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut b = store.batch();
        for k in (0u32..2000).filter(|k| k % 3 != 0) {
            b.put_raw(CF_URLS, &k.to_be_bytes(), &k.to_le_bytes());
        }
        b.write().unwrap();
        for near in [0, NEAR] {
            let mut j = Joined::new(store.cursor(CF_URLS, &[]), near);
            let order: Vec<u32> = (0..2000)
                .step_by(7)
                .chain((0..2000).rev().step_by(11))
                .chain([5, 1999, 4, 4, 1500, 2, 3000, 1])
                .collect();
            for k in order {
                let found = j.find(&k.to_be_bytes()).unwrap().map(<[u8]>::to_vec);
                let want = (k % 3 != 0 && k < 2000).then(|| k.to_le_bytes().to_vec());
                assert_eq!(found, want, "key {k}, near {near}");
            }
            // Rows passed after a lookup: a key among them is sought again,
            // a key past them steps on.
            j.seek_near(&9u32.to_be_bytes()).unwrap();
            let mut passed = Vec::new();
            for _ in 0..2 {
                passed.push(j.current().unwrap().map(|(k, _)| k.to_vec()));
                j.advance().unwrap();
            }
            let key = |k: u32| Some(k.to_be_bytes().to_vec());
            assert_eq!(passed, vec![key(10), key(11)]);
            assert_eq!(
                j.find(&10u32.to_be_bytes()).unwrap(),
                Some(&10u32.to_le_bytes()[..])
            );
            assert_eq!(
                j.find(&10u32.to_be_bytes()).unwrap(),
                Some(&10u32.to_le_bytes()[..])
            );
            j.advance().unwrap();
            assert_eq!(
                j.find(&10u32.to_be_bytes()).unwrap(),
                Some(&10u32.to_le_bytes()[..])
            );
            assert!(j.find(&13u32.to_be_bytes()).unwrap().is_some());
            assert!(j.find(&12u32.to_be_bytes()).unwrap().is_none());
        }
    }

    /// The same over a column family in vector memtables (the crawl's
    /// page tables), rows written in many batches, ids in random order.
    #[test]
    fn lookups_in_vector_memtables_find_their_row_in_any_order() {
        use crate::schema::CF_PAGE_FACTS;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let id = |k: u64| UrlId(u128::from(k.wrapping_mul(0x9E37_79B9_7F4A_7C15)) << 32);
        for chunk in (0u64..3000).collect::<Vec<_>>().chunks(7) {
            let mut b = store.batch();
            for &k in chunk {
                b.put_raw(CF_PAGE_FACTS, &id(k).to_bytes(), &k.to_le_bytes());
            }
            b.write().unwrap();
        }
        for near in [0, NEAR] {
            let mut j = Joined::new(store.cursor(CF_PAGE_FACTS, &[]), near);
            for k in (0u64..3200).map(|k| (k * 7919) % 3200) {
                let found = j.find(&id(k).to_bytes()).unwrap().map(<[u8]>::to_vec);
                let want = (k < 3000).then(|| k.to_le_bytes().to_vec());
                assert_eq!(found, want, "key {k}, near {near}");
            }
        }
    }

    #[test]
    fn a_page_join_reads_typed_rows_and_docs_with_their_verdicts() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (a, b) = (UrlId(7), UrlId(9));
        let mut w = store.batch();
        let doc = DocRecord {
            title: "t".into(),
            ..DocRecord::default()
        };
        w.put_row::<crate::schema::tables::Docs>(&a, &doc);
        let verdict = VerdictRecord {
            relevance: Some(0.5),
            ..VerdictRecord::default()
        };
        w.put_row::<crate::schema::tables::Verdicts>(&a, &verdict);
        let rank = crate::schema::RankRecord { pagerank: 0.25 };
        w.put_row::<Ranks>(&b, &rank);
        w.write().unwrap();
        let mut join = store.page_join(false);
        let got = join.doc(a).unwrap().unwrap();
        assert_eq!(
            (got.doc.title.as_str(), got.verdict.relevance),
            ("t", Some(0.5))
        );
        assert_eq!(join.doc(b).unwrap(), None);
        assert_eq!(join.row::<Ranks>(a).unwrap(), None);
        assert_eq!(
            join.row::<Ranks>(b).unwrap().map(|r| r.pagerank),
            Some(0.25)
        );
        assert_eq!(
            join.doc(a).unwrap(),
            store.doc(a).unwrap(),
            "back to an earlier id"
        );
    }
}
