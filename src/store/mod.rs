//! The only module that talks to RocksDB: opening (read-write or as a
//! catching-up secondary), per-CF tuning, typed reads and atomic batches.
//!
//! Durability: every [`Batch`] is written through the WAL without fsync, so
//! a killed process loses nothing it wrote; an OS crash may lose the last
//! moments. Visibility: a batch is visible to every reader once `write`
//! returns; a secondary sees it after its next [`Store::catch_up`].

mod open;
pub use open::raise_open_file_limit;
mod batch;
mod dictionaries;
mod inlinks;
mod join;
mod links;
mod lookups;
mod migrate;
mod near;
mod reindex;
mod search_log;
mod typed;
pub use batch::Batch;
pub use inlinks::{AllInLinks, InLinks};
pub use join::{Joined, PageJoin};
pub use links::PageLinkRows;
pub use typed::Rows;

use std::path::{Path, PathBuf};

use rocksdb::{DB, Direction, IteratorMode, ReadOptions, WriteBatch};

use crate::model::{HostId, UrlId};
use crate::schema::{
    self, CF_DOCS, CF_FRONTIER, CF_HOSTS, CF_META, CF_PAGES, CF_ROBOTS, CF_SEEN, CF_URLS,
    CF_VERDICTS, CodecError, Counters, DetailRecord, FrontierEntry, FrontierKey, HostRecord,
    PageDoc, PageRecord, SeedList, SeenRecord, VerdictRecord, Versioned, meta_keys,
};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "{0}: locked by another trawl process; stop it, or open with --read-only to inspect it"
    )]
    Locked(PathBuf),
    #[error("{0}: not a trawl database ({1}); pass a new or empty directory")]
    NotTrawl(PathBuf, String),
    #[error(
        "{path}: written by a newer trawl (schema version {found}, this one reads up to {supported}); upgrade trawl"
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("{0}: cannot open the database: {1}")]
    Open(PathBuf, String),
    #[error("{0}: cannot write the database ({1}); open it with --read-only to query it")]
    NotWritable(PathBuf, String),
    #[error("database error: {0}")]
    Rocks(#[from] rocksdb::Error),
    #[error("corrupt {cf} value: {err}")]
    Codec { cf: &'static str, err: CodecError },
    #[error("the database is open read-only; this command writes")]
    ReadOnly,
    #[error(
        "{path}: the disk is full ({detail}); nothing after the last recorded page was lost: free some space and run the same command again"
    )]
    DiskFull { path: PathBuf, detail: String },
    #[error(
        "{path}: cannot write WARC ({detail}); nothing after the last recorded page was lost: fix it (free space, permissions, or set warc.dir elsewhere) and run the same command again"
    )]
    Warc { path: PathBuf, detail: String },
}

impl StoreError {
    /// A write error, named for what the user can do about it.
    fn write(path: &Path, e: rocksdb::Error) -> StoreError {
        let msg = e.to_string();
        let lower = msg.to_ascii_lowercase();
        if lower.contains("no space left") || lower.contains("file too large") {
            StoreError::DiskFull {
                path: path.to_path_buf(),
                detail: msg,
            }
        } else {
            StoreError::Rocks(e)
        }
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// A raw key and value read from a column family.
pub type Row = (Box<[u8]>, Box<[u8]>);

/// See [`Store::cursor`]: rows lent in key order, and a position that can
/// be moved forward by hand (for merge joins of two column families).
pub struct Cursor<'a> {
    it: rocksdb::DBRawIteratorWithThreadMode<'a, DB>,
    first: bool,
}

impl Cursor<'_> {
    /// The next row, borrowed until the following call.
    pub fn next_row(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if !std::mem::take(&mut self.first) {
            self.it.next();
        }
        self.current()
    }

    /// Moves past the row at the cursor; [`next_row`](Self::next_row)
    /// then returns the one after it.
    pub fn advance(&mut self) {
        if self.it.valid() {
            self.it.next();
        }
        self.first = true;
    }

    /// The row at the cursor, without moving it.
    pub fn current(&self) -> Result<Option<(&[u8], &[u8])>> {
        if !self.it.valid() {
            self.it.status()?;
            return Ok(None);
        }
        Ok(self.it.key().zip(self.it.value()))
    }

    /// Moves to the first row at or after `key`; [`next_row`](Self::next_row)
    /// then returns it.
    pub fn seek(&mut self, key: &[u8]) {
        self.it.seek(key);
        self.first = true;
    }

    /// Moves past the rows with keys before `key` (a merge join's step to
    /// the next key of the other side); [`next_row`](Self::next_row) then
    /// returns the row the cursor stopped at.
    pub fn skip_before(&mut self, key: &[u8]) -> Result<()> {
        while self.current()?.is_some_and(|(k, _)| k < key) {
            self.it.next();
        }
        self.first = true;
        Ok(())
    }

    /// The value of the row at `key`, for a cursor moved forward through
    /// keys in order (a merge join): rows before it are passed over.
    pub fn row_at(&mut self, key: &[u8]) -> Result<Option<&[u8]>> {
        self.skip_before(key)?;
        Ok(self.current()?.filter(|(k, _)| *k == key).map(|(_, v)| v))
    }
}

/// The smallest key after every key that starts with `prefix` (None when
/// the prefix is empty or all 0xff: no bound).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

fn text_of(page: &PageRecord) -> Result<Option<String>> {
    page.frame_text().map_err(|e| StoreError::Codec {
        cf: CF_PAGES,
        err: CodecError::Malformed(format!("page frame: {e}")),
    })
}

/// An open trawl database.
pub struct Store {
    db: DB,
    path: PathBuf,
    secondary: bool,
    /// What the schema migrations run at open did (see `migrate`).
    migrated: Vec<String>,
}

impl Store {
    /// Opens (creating if missing) a database for reading and writing.
    /// A db of an older schema version is migrated first.
    pub fn open(path: &Path) -> Result<Store> {
        let (db, older) = open::open_primary(path)?;
        let mut store = Store {
            db,
            path: path.to_path_buf(),
            secondary: false,
            migrated: Vec::new(),
        };
        // A migration step may read page frames.
        store.register_dictionaries()?;
        if let Some(found) = older {
            store.migrated = migrate::migrate(&store, found)?;
        }
        Ok(store)
    }

    /// One line per schema migration step that converted rows when this
    /// db was opened (empty for a current db).
    pub fn migrations(&self) -> &[String] {
        &self.migrated
    }

    /// Opens a database another process may be writing, as a RocksDB
    /// secondary whose private files live in `scratch`.
    pub fn open_secondary(path: &Path, scratch: &Path) -> Result<Store> {
        let db = open::open_secondary(path, scratch)?;
        let store = Store {
            db,
            path: path.to_path_buf(),
            secondary: true,
            migrated: Vec::new(),
        };
        store.register_dictionaries()?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_read_only(&self) -> bool {
        self.secondary
    }

    /// Makes a secondary see what the primary has written since.
    pub fn catch_up(&self) -> Result<()> {
        if self.secondary {
            self.db.try_catch_up_with_primary()?;
            // A crawl may have trained its dictionary since.
            self.register_dictionaries()?;
        }
        Ok(())
    }

    fn cf(&self, name: &str) -> &rocksdb::ColumnFamily {
        // Every CF in schema::COLUMN_FAMILIES is opened (or created) by `open`.
        self.db
            .cf_handle(name)
            .expect("column family opened at start")
    }

    pub fn get_raw(&self, cf: &'static str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.db.get_cf(self.cf(cf), key)?)
    }

    pub fn get<T: Versioned>(&self, cf: &'static str, key: &[u8]) -> Result<Option<T>> {
        match self.db.get_pinned_cf(self.cf(cf), key)? {
            Some(v) => T::decode(&v)
                .map(Some)
                .map_err(|err| StoreError::Codec { cf, err }),
            None => Ok(None),
        }
    }

    pub fn seen(&self, id: UrlId) -> Result<Option<SeenRecord>> {
        self.get(CF_SEEN, &id.to_bytes())
    }

    /// Looks up many URLs at once (one RocksDB MultiGet).
    pub fn seen_many(&self, ids: &[UrlId]) -> Result<Vec<Option<SeenRecord>>> {
        self.get_many(CF_SEEN, ids, |v| {
            SeenRecord::decode(v).map_err(|err| StoreError::Codec { cf: CF_SEEN, err })
        })
    }

    /// The values of many ids' rows in one RocksDB MultiGet (it sorts the
    /// keys and reads each block once), each read by `read`.
    fn get_many<T>(
        &self,
        cf: &'static str,
        ids: &[UrlId],
        read: impl Fn(&[u8]) -> Result<T>,
    ) -> Result<Vec<Option<T>>> {
        let keys: Vec<[u8; 16]> = ids.iter().map(|id| id.to_bytes()).collect();
        self.db
            .batched_multi_get_cf(self.cf(cf), keys.iter(), false)
            .into_iter()
            .map(|r| r?.map(|v| read(&v)).transpose())
            .collect()
    }

    pub fn url(&self, id: UrlId) -> Result<Option<String>> {
        Ok(self
            .get_raw(CF_URLS, &id.to_bytes())?
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// The URLs of many ids at once: a page's out- and in-links.
    pub fn urls_many(&self, ids: &[UrlId]) -> Result<Vec<Option<String>>> {
        self.get_many(
            CF_URLS,
            ids,
            |v| Ok(String::from_utf8_lossy(v).into_owned()),
        )
    }

    /// The detail behind a URL's failure (error text, refused address).
    pub fn detail(&self, id: UrlId) -> Result<Option<DetailRecord>> {
        self.get(schema::CF_DETAILS, &id.to_bytes())
    }

    pub fn page(&self, id: UrlId) -> Result<Option<PageRecord>> {
        self.get(CF_PAGES, &id.to_bytes())
    }

    /// A page's doc with its verdict (from `verdicts`; a doc written by
    /// schema 1 without a `verdicts` row keeps its own).
    pub fn doc(&self, id: UrlId) -> Result<Option<PageDoc>> {
        let key = id.to_bytes();
        let Some(bytes) = self.db.get_pinned_cf(self.cf(CF_DOCS), key)? else {
            return Ok(None);
        };
        let verdict = self.get::<VerdictRecord>(CF_VERDICTS, &key)?;
        join::doc_of(&bytes, verdict).map(Some)
    }

    /// [`Store::doc`] with its text, which a page stored from schema 9 on
    /// keeps in its page frame (`PageRecord::frame_text`) instead.
    pub fn doc_with_text(&self, id: UrlId) -> Result<Option<PageDoc>> {
        let Some(mut d) = self.doc(id)? else {
            return Ok(None);
        };
        if d.doc.text.is_empty() {
            d.doc.text = self.page_text(id)?.unwrap_or_default();
        }
        Ok(Some(d))
    }

    /// The text stored in a page's frame (schema 9 on), if any.
    pub fn page_text(&self, id: UrlId) -> Result<Option<String>> {
        match self.page(id)? {
            Some(page) => text_of(&page),
            None => Ok(None),
        }
    }

    /// [`Store::page_text`] read through `cursor` on `pages` (from
    /// [`Store::pages_cursor`]): a scan in key order joins pages to it
    /// without a point lookup each.
    pub fn page_text_at(cursor: &mut Cursor<'_>, id: UrlId) -> Result<Option<String>> {
        match Store::page_at(cursor, id)? {
            Some(page) => text_of(&page),
            None => Ok(None),
        }
    }

    /// A page's `pages` row read through `cursor`, as [`Store::page_text_at`].
    pub fn page_at(cursor: &mut Cursor<'_>, id: UrlId) -> Result<Option<PageRecord>> {
        let Some(v) = cursor.row_at(&id.to_bytes())? else {
            return Ok(None);
        };
        let page = PageRecord::decode(v).map_err(|err| StoreError::Codec { cf: CF_PAGES, err })?;
        Ok(Some(page))
    }

    /// A host's state with its robots.txt record, which schema 6 keeps in
    /// `robots` (older dbs have it inside the host's row).
    pub fn host(&self, id: HostId) -> Result<Option<HostRecord>> {
        Ok(self.host_and_robots_place(id)?.map(|(rec, _)| rec))
    }

    /// [`Store::host`], and whether its robots.txt record was still inside
    /// the host's row (a db older than schema 6) rather than in `robots`.
    pub fn host_and_robots_place(&self, id: HostId) -> Result<Option<(HostRecord, bool)>> {
        let Some(mut rec) = self.get::<HostRecord>(CF_HOSTS, &id.to_bytes())? else {
            return Ok(None);
        };
        let embedded = rec.robots.is_some();
        if !embedded {
            rec.robots = self.get(CF_ROBOTS, &id.to_bytes())?;
        }
        Ok(Some((rec, embedded)))
    }

    pub fn counters(&self) -> Result<Counters> {
        Ok(self.get(CF_META, meta_keys::COUNTERS)?.unwrap_or_default())
    }

    pub fn seeds(&self) -> Result<SeedList> {
        Ok(self.get(CF_META, meta_keys::SEEDS)?.unwrap_or_default())
    }

    /// Up to `limit` frontier entries of `host` with keys `>= from`, in key
    /// order, and whether the scan reached the end of the host's range.
    pub fn frontier_range(
        &self,
        host: HostId,
        from: &[u8],
        limit: usize,
    ) -> Result<(Vec<(FrontierKey, FrontierEntry)>, bool)> {
        let mut opts = ReadOptions::default();
        let upper = host.0.checked_add(1).map(|h| h.to_be_bytes().to_vec());
        if let Some(upper) = upper {
            opts.set_iterate_upper_bound(upper);
        }
        let mut it = self.db.raw_iterator_cf_opt(self.cf(CF_FRONTIER), opts);
        it.seek(from);
        let mut out = Vec::new();
        while it.valid() && out.len() < limit {
            let (Some(k), Some(v)) = (it.key(), it.value()) else {
                break;
            };
            let key = FrontierKey::from_key(k);
            if let Some(key) = key.filter(|key| key.host == host) {
                let entry = FrontierEntry::decode(v).map_err(|err| StoreError::Codec {
                    cf: schema::CF_FRONTIER,
                    err,
                })?;
                out.push((key, entry));
            } else {
                return Ok((out, true));
            }
            it.next();
        }
        it.status()?;
        Ok((out, !it.valid()))
    }

    /// Every host that has at least one queued URL, found by skipping from
    /// one host's range to the next (one seek per host, not per URL).
    pub fn frontier_hosts(&self) -> Result<Vec<HostId>> {
        let mut it = self.db.raw_iterator_cf(self.cf(CF_FRONTIER));
        let mut hosts = Vec::new();
        it.seek_to_first();
        while it.valid() {
            let Some(host) = it.key().and_then(HostId::from_slice) else {
                break;
            };
            hosts.push(host);
            match host.0.checked_add(1) {
                Some(next) => it.seek(next.to_be_bytes()),
                None => break,
            }
        }
        it.status()?;
        Ok(hosts)
    }

    /// Every row of a column family whose key starts with `prefix`, in key order.
    pub fn scan<'a>(
        &'a self,
        cf: &'static str,
        prefix: &'a [u8],
    ) -> impl Iterator<Item = Result<Row>> + 'a {
        self.db
            .iterator_cf(self.cf(cf), IteratorMode::From(prefix, Direction::Forward))
            .map(|r| r.map_err(StoreError::from))
            .take_while(move |r| {
                r.as_ref()
                    .map(|(k, _)| k.starts_with(prefix))
                    .unwrap_or(true)
            })
    }

    /// A cursor over the rows whose key starts with `prefix`: rows are
    /// lent, not copied, for scans that read most rows and keep few.
    pub fn cursor(&self, cf: &'static str, prefix: &[u8]) -> Cursor<'_> {
        self.cursor_range(cf, prefix, prefix_end(prefix).as_deref())
    }

    /// A cursor over the rows with `from <= key < to` (`to` None: to the
    /// end), positioned at the first.
    pub fn cursor_range(&self, cf: &'static str, from: &[u8], to: Option<&[u8]>) -> Cursor<'_> {
        let mut opts = ReadOptions::default();
        if let Some(to) = to {
            opts.set_iterate_upper_bound(to.to_vec());
        }
        let mut it = self.db.raw_iterator_cf_opt(self.cf(cf), opts);
        it.seek(from);
        Cursor { it, first: true }
    }

    /// Every row of a column family with `from <= key < to` (`to` None: to
    /// the end), in key order.
    pub fn scan_range<'a>(
        &'a self,
        cf: &'static str,
        from: &[u8],
        to: Option<&[u8]>,
    ) -> impl Iterator<Item = Result<Row>> + 'a {
        let mut opts = ReadOptions::default();
        if let Some(to) = to {
            opts.set_iterate_upper_bound(to.to_vec());
        }
        self.db
            .iterator_cf_opt(
                self.cf(cf),
                opts,
                IteratorMode::From(from, Direction::Forward),
            )
            .map(|r| r.map_err(StoreError::from))
    }

    /// Starts an atomic batch of writes.
    pub fn batch(&self) -> Batch<'_> {
        Batch {
            store: self,
            wb: WriteBatch::default(),
        }
    }

    /// Flushes memtables so that the next open replays no WAL.
    pub fn flush(&self) -> Result<()> {
        if self.secondary {
            return Ok(());
        }
        for cf in schema::COLUMN_FAMILIES {
            self.db
                .flush_cf(self.cf(cf))
                .map_err(|e| StoreError::write(&self.path, e))?;
        }
        Ok(())
    }

    /// RocksDB's estimate of the rows in a column family (for sizing
    /// buffers before a full scan; 0 when unknown).
    pub fn estimated_rows(&self, cf: &'static str) -> u64 {
        self.db
            .property_int_value_cf(self.cf(cf), "rocksdb.estimate-num-keys")
            .ok()
            .flatten()
            .unwrap_or(0)
    }

    /// Bytes per column family in SST files, blob files and memtables,
    /// and RocksDB's estimate of its rows, in schema order.
    pub fn disk_usage(&self) -> Vec<TableUsage> {
        let prop = |cf: &'static str, name: &str| {
            self.db
                .property_int_value_cf(self.cf(cf), name)
                .ok()
                .flatten()
                .unwrap_or(0)
        };
        crate::schema::COLUMN_FAMILIES
            .iter()
            .map(|&cf| TableUsage {
                table: cf,
                sst: prop(cf, "rocksdb.total-sst-files-size"),
                blob: prop(cf, "rocksdb.total-blob-file-size"),
                memtable: prop(cf, "rocksdb.size-all-mem-tables"),
                rows: prop(cf, "rocksdb.estimate-num-keys"),
            })
            .collect()
    }

    /// Approximate bytes on disk (SST and blob files), for reports.
    pub fn disk_bytes(&self) -> u64 {
        dir_size(&self.path)
    }
}

/// One column family's share of the db (`Store::disk_usage`).
pub struct TableUsage {
    pub table: &'static str,
    pub sst: u64,
    pub blob: u64,
    pub memtable: u64,
    pub rows: u64,
}

fn dir_size(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_bounds_a_prefix() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn cursors_lend_rows_in_order_within_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut b = store.batch();
        for k in [[1u8, 1], [1, 2], [2, 0], [2, 0xff], [3, 0]] {
            b.put_raw(CF_URLS, &k, &[k[1]]);
        }
        b.write().unwrap();
        let mut c = store.cursor(CF_URLS, &[2]);
        let mut rows = Vec::new();
        while let Some((k, v)) = c.next_row().unwrap() {
            rows.push((k.to_vec(), v.to_vec()));
        }
        assert_eq!(
            rows,
            vec![(vec![2, 0], vec![0]), (vec![2, 0xff], vec![0xff])]
        );
        let mut c = store.cursor_range(CF_URLS, &[1, 2], Some(&[3]));
        assert_eq!(
            c.current().unwrap().map(|(k, _)| k.to_vec()),
            Some(vec![1, 2])
        );
        c.skip_before(&[2, 1]).unwrap();
        assert_eq!(
            c.current().unwrap().map(|(k, _)| k.to_vec()),
            Some(vec![2, 0xff])
        );
        c.skip_before(&[3]).unwrap();
        assert_eq!(c.current().unwrap(), None, "the upper bound is exclusive");
    }
}
