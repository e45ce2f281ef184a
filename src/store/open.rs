//! Opening a database: per-CF options, the format check, friendly errors.

use std::path::Path;

use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ColumnFamilyDescriptor, DB, DBCompressionType,
    Options,
};

use super::{Result, StoreError};
use crate::schema::{
    self, CF_CONTENT, CF_DOCS, CF_INLINKS, CF_LINKS, CF_META, CF_PAGE_FACTS, CF_PAGE_INDEX,
    CF_PAGES, CF_SEARCH_LOG, CF_SEEN, CF_SIMHASH, CF_URLS, CF_VERDICTS, SCHEMA_VERSION, meta_keys,
};

/// Total memtable budget across CFs: keeps RSS bounded however many CFs are
/// hot. With the block cache it is most of a crawl's memory; the two are
/// sized so that a 1,000,000-page crawl stays under 256 MB of RSS.
const WRITE_BUFFER_TOTAL: usize = 64 << 20;
const BLOCK_CACHE: usize = 40 << 20;

/// The CFs read by point lookups (Get, MultiGet), not only by scans.
const POINT_LOOKUP_CFS: [&str; 7] = [
    CF_SEEN,
    CF_URLS,
    CF_CONTENT,
    CF_PAGES,
    CF_PAGE_FACTS,
    CF_DOCS,
    CF_VERDICTS,
];

/// The CFs the crawl writes and does not read back (but for a revisit's
/// few lookups): whatever reads them (the shell, refilter, rank) reads
/// through a bloom filter or a scan.
const APPEND_CFS: [&str; 8] = [
    CF_INLINKS,
    CF_PAGE_INDEX,
    CF_LINKS,
    CF_PAGES,
    CF_PAGE_FACTS,
    CF_DOCS,
    CF_VERDICTS,
    CF_SIMHASH,
];

fn db_options(path: &Path) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_max_background_jobs(2);
    o.set_db_write_buffer_size(WRITE_BUFFER_TOTAL);
    o.set_max_open_files(max_open_files(path));
    o.set_keep_log_file_num(3);
    // The crawl has one writer; the vector memtables below need this off.
    o.set_allow_concurrent_memtable_write(false);
    o
}

/// Files RocksDB may keep open. Unlimited (-1) when the process may open
/// several times the files the db has: RocksDB then opens every table file
/// at DB open instead of at the first read that touches it, which made the
/// first `page URL` of a shell on a 1,000,000-page db cost 12–17 ms
/// instead of 2–4. Otherwise a bound under the limit, so that reading many
/// blob files (a refilter) cannot run out of descriptors.
fn max_open_files(path: &Path) -> i32 {
    let files = std::fs::read_dir(path).map_or(0, |d| d.count() as u64);
    match open_file_limit() {
        Some((soft, _)) if soft >= 4 * files + 4096 => -1,
        Some((soft, _)) => soft.saturating_sub(256).clamp(64, i32::MAX as u64) as i32,
        None => 1024,
    }
}

/// The process's (soft, hard) limit on open files, if the OS says.
fn open_file_limit() -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct we pass.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
            return Some((lim.rlim_cur, lim.rlim_max));
        }
    }
    None
}

/// Raises the soft limit on open files to the hard one, as servers that
/// keep many files open do, so that [`max_open_files`] can let RocksDB
/// open every table file (a 1,000,000-page db has over a thousand files,
/// past the usual soft limit of 1,024). For a binary's `main`, before any
/// database is opened.
pub fn raise_open_file_limit() {
    #[cfg(unix)]
    if let Some((_, hard)) = open_file_limit().filter(|(soft, hard)| soft < hard) {
        let lim = libc::rlimit {
            rlim_cur: hard,
            rlim_max: hard,
        };
        // SAFETY: setrlimit reads the struct we pass. A refusal leaves the
        // soft limit as it was, which max_open_files copes with.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
}

fn cf_options(name: &str, cache: &Cache) -> Options {
    let mut o = Options::default();
    o.set_compression_type(DBCompressionType::Lz4);
    // Flushes and the first compactions write uncompressed: those files are
    // rewritten soon, and LZ4 on every flush was ~7 % of a crawl's CPU.
    o.set_compression_per_level(&[
        DBCompressionType::None,
        DBCompressionType::None,
        DBCompressionType::Lz4,
        DBCompressionType::Lz4,
        DBCompressionType::Lz4,
        DBCompressionType::Lz4,
        DBCompressionType::Lz4,
    ]);
    o.set_write_buffer_size(16 << 20);
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    // Index (and filter) blocks live in the shared block cache so memory stays
    // bounded however large the db grows. Partitioned into 4 KB pieces behind
    // a pinned top level: a lookup that misses the cache reads one small
    // partition, not a whole SST's index or filter (a full filter block of a
    // 64 MB file is ~2 MB; re-reading those per lookup once the cache was
    // full dropped a crawl from 2,200 to 450 pages/s past 200,000 pages).
    table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    table.set_metadata_block_size(4096);
    table.set_cache_index_and_filter_blocks(true);
    table.set_cache_index_and_filter_blocks_with_high_priority(true);
    table.set_pin_top_level_index_and_filter(true);
    table.set_pin_l0_filter_and_index_blocks_in_cache(true);
    if POINT_LOOKUP_CFS.contains(&name) {
        // Read by whole key: a bloom filter answers a level that lacks the
        // key without touching a data block. For `seen` and `content` most
        // lookups are misses (a new URL, a new body); for the others it
        // spares the upper levels of every shell lookup.
        table.set_bloom_filter(10.0, false);
        table.set_partition_filters(true);
    }
    o.set_block_based_table_factory(&table);
    if name == CF_PAGES || name == CF_DOCS {
        // Bodies and their visible text are most of the bytes and are written
        // once: in blob files compaction never rewrites them (the docs CF's
        // text was 75 % of all compaction work of a 100,000-page crawl).
        // Bodies are zstd-compressed by trawl already.
        let compression = if name == CF_PAGES {
            DBCompressionType::None
        } else {
            DBCompressionType::Lz4
        };
        blob_files(&mut o, compression, false);
        o.set_write_buffer_size(32 << 20);
    }
    if name == CF_PAGE_FACTS || name == CF_SEARCH_LOG {
        // ~120 (under 30) bytes a page, never read by the crawl: small
        // memtables keep its memory near where it was before the column
        // families.
        o.set_write_buffer_size(4 << 20);
    }
    if name == CF_LINKS {
        // A page's links are one row of a few KiB (schema 5): LZ4 blob
        // files, like the docs text. Unlike a page, a row is rewritten by
        // every refilter that changes one of its links, so blob GC stays on
        // to reclaim the old rows (it cost no measurable CPU in a crawl:
        // 472–514 µs a page with it, 457–501 without).
        blob_files(&mut o, DBCompressionType::Lz4, true);
    }
    if APPEND_CFS.contains(&name) {
        // Appended to, sorted once at flush: a skiplist insert per row was
        // the crawl's largest single cost (FindSplice, 9-11 %), and the
        // crawl never reads these rows back while it writes them.
        o.set_memtable_factory(rocksdb::MemtableFactory::Vector);
        if POINT_LOOKUP_CFS.contains(&name) || name == CF_LINKS || name == CF_INLINKS {
            // A point lookup in a vector memtable sorts a copy of it: a
            // whole-key bloom filter lets every lookup of a key the
            // memtable lacks (all but the last seconds' pages; for
            // `inlinks`, a revisit's group rows of past windows) skip that.
            o.set_memtable_whole_key_filtering(true);
            o.set_memtable_prefix_bloom_ratio(0.02);
        }
    }
    if name == CF_INLINKS {
        // Written a window at a time (schema 23: a group row per target,
        // ~1.6 MiB for a window of 100,000 links). A query's iterator sorts
        // a copy of the live vector memtable, so it stays small (2 MiB),
        // and four sealed ones (sorted once) flush together into one file
        // the size a 16 MiB memtable made.
        o.set_write_buffer_size(2 << 20);
        o.set_max_write_buffer_number(6);
        o.set_min_write_buffer_number_to_merge(4);
    }
    if name == CF_LINKS || name == CF_INLINKS {
        o.set_compaction_style(rocksdb::DBCompactionStyle::Universal);
    }
    o
}

/// Values of 1 KiB and more go to blob files, compressed with
/// `compression`; `gc` reclaims the space of overwritten ones.
fn blob_files(o: &mut Options, compression: DBCompressionType, gc: bool) {
    o.set_enable_blob_files(true);
    o.set_min_blob_size(1024);
    o.set_blob_compression_type(compression);
    o.set_enable_blob_gc(gc);
}

fn descriptors() -> Vec<ColumnFamilyDescriptor> {
    let cache = Cache::new_lru_cache(BLOCK_CACHE);
    schema::COLUMN_FAMILIES
        .iter()
        .map(|&n| ColumnFamilyDescriptor::new(n, cf_options(n, &cache)))
        .collect()
}

/// What is at `path` before we open it.
enum Found {
    /// Nothing, or something a new db may be built over (see [`create`]).
    Nothing(Place),
    /// A trawl db.
    Trawl,
}

/// Where a new db goes.
enum Place {
    /// `path` does not exist: built beside it and renamed into place.
    New,
    /// `path` is an empty directory (`--db .`, a mount point): built in
    /// place, as a rename over it may not be allowed.
    EmptyDir,
    /// `path` holds only the files RocksDB writes first, no `CURRENT`: a
    /// creation in place killed before it was done. Cleared, then built
    /// in place.
    Killed(Vec<std::path::PathBuf>),
}

fn check_existing(path: &Path) -> Result<Found> {
    let Ok(m) = std::fs::metadata(path) else {
        return Ok(Found::Nothing(Place::New));
    };
    if !m.is_dir() {
        return Err(StoreError::NotTrawl(path.into(), "it is a file".into()));
    }
    if !path.join("CURRENT").exists() {
        let files: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| StoreError::Open(path.into(), e.to_string()))?
            .filter_map(|e| e.ok())
            .collect();
        if files.is_empty() {
            return Ok(Found::Nothing(Place::EmptyDir));
        }
        let names: Vec<_> = files.iter().map(|e| e.file_name()).collect();
        if names.iter().any(|n| n == "LOCK") && names.iter().all(|n| is_bootstrap_file(n)) {
            if lock_is_held(&path.join("LOCK")) {
                // Another process is creating it right now.
                return Err(StoreError::Locked(path.into()));
            }
            return Ok(Found::Nothing(Place::Killed(
                files.iter().map(|e| e.path()).collect(),
            )));
        }
        return Err(StoreError::NotTrawl(
            path.into(),
            "a non-empty directory without a RocksDB".into(),
        ));
    }
    let cfs = DB::list_cf(&Options::default(), path).map_err(|e| classify(path, e))?;
    if !cfs.iter().any(|c| c == CF_META) {
        return Err(StoreError::NotTrawl(
            path.into(),
            "a RocksDB without trawl's column families".into(),
        ));
    }
    Ok(Found::Trawl)
}

/// A file RocksDB writes before `CURRENT` when it creates a db (`LOCK`
/// first, always), by its exact name pattern; a directory without
/// `CURRENT` that holds only these holds no data (table and blob files
/// come later, and would make us refuse), while a user's `crawl.log` or
/// notes do not match and are never cleared.
fn is_bootstrap_file(name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let numbered = |prefix: &str, suffix: &str| {
        name.strip_prefix(prefix)
            .and_then(|n| n.strip_suffix(suffix))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    ["LOCK", "IDENTITY", "LOG"].contains(&name)
        || numbered("LOG.old.", "")
        || numbered("MANIFEST-", "")
        || numbered("OPTIONS-", "")
        || numbered("", ".log")
        || numbered("", ".dbtmp")
}

/// Whether a process holds RocksDB's lock on `lock` (a POSIX record lock,
/// as RocksDB takes it), without taking it.
fn lock_is_held(lock: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(lock)
        else {
            return false;
        };
        // SAFETY: an all-zero flock is valid; F_GETLK fills in the struct.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        // SAFETY: a valid descriptor and a pointer to our struct.
        let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETLK, &mut fl) };
        return r == 0 && fl.l_type != libc::F_UNLCK as libc::c_short;
    }
    #[allow(unreachable_code)]
    false
}

fn classify(path: &Path, e: rocksdb::Error) -> StoreError {
    let msg = e.to_string();
    let lower = msg.to_ascii_lowercase();
    if lower.contains("lock")
        && (lower.contains("temporarily unavailable") || lower.contains("no locks"))
    {
        StoreError::Locked(path.into())
    } else if lower.contains("permission denied") || lower.contains("read-only file system") {
        StoreError::NotWritable(path.into(), msg)
    } else {
        StoreError::Open(path.into(), msg)
    }
}

/// Creates a new db at `place`. A new path is built beside its place and
/// renamed into it once it has every column family and its schema
/// version, so a kill while it is being created never leaves a half-made
/// database at `path`; a db built in place that is killed early is
/// cleared by the next open ([`Place::Killed`]), or made whole if it got
/// as far as `CURRENT` ([`open_primary`]).
fn create(path: &Path, place: Place) -> Result<()> {
    let name = match (&place, path.file_name()) {
        (Place::New, Some(name)) => name.to_string_lossy().into_owned(),
        (Place::Killed(files), _) => {
            for f in files {
                std::fs::remove_file(f).map_err(|e| {
                    StoreError::Open(
                        path.into(),
                        format!("cannot clear a killed creation ({}): {e}", f.display()),
                    )
                })?;
            }
            return build(path, path);
        }
        // An empty directory, or a path such as `x/..` that names one.
        _ => return build(path, path),
    };
    let building = path.with_file_name(format!(".{name}.trawl-creating"));
    // Left by a creation that was killed.
    let _ = std::fs::remove_dir_all(&building);
    build(path, &building)?;
    std::fs::rename(&building, path).map_err(|e| {
        StoreError::Open(
            path.into(),
            format!("cannot move the new database into place: {e}"),
        )
    })
}

/// Writes a new trawl db at `at`, for `path` (named in errors).
fn build(path: &Path, at: &Path) -> Result<()> {
    let db = DB::open_cf_descriptors(&db_options(at), at, descriptors())
        .map_err(|e| classify(path, e))?;
    mark_new(&db)?;
    db.flush_wal(true)?;
    Ok(())
}

/// What makes a db a new trawl db, in one write: its schema version, and
/// the mark that its page index covers every page (it will).
fn mark_new(db: &DB) -> Result<()> {
    let meta = db.cf_handle(CF_META).expect("meta opened");
    let mut b = rocksdb::WriteBatch::default();
    b.put_cf(
        meta,
        meta_keys::SCHEMA_VERSION,
        SCHEMA_VERSION.to_be_bytes(),
    );
    b.put_cf(meta, meta_keys::PAGE_INDEX_COMPLETE, []);
    Ok(db.write(b)?)
}

/// Opens for writing; returns the db and, when it is of an older schema
/// version, that version (the caller migrates it).
pub(super) fn open_primary(path: &Path) -> Result<(DB, Option<u32>)> {
    if let Found::Nothing(place) = check_existing(path)? {
        create(path, place)?;
    }
    let db = DB::open_cf_descriptors(&db_options(path), path, descriptors())
        .map_err(|e| classify(path, e))?;
    let meta = db.cf_handle(CF_META).expect("meta opened");
    let older = match db.get_cf(meta, meta_keys::SCHEMA_VERSION)? {
        Some(v) => Some(check_version(path, &v)?).filter(|found| *found < SCHEMA_VERSION),
        // A db built in place (all of them before schema 7) that was
        // killed after RocksDB wrote `CURRENT` has an empty meta, and is
        // made whole now.
        None if db
            .iterator_cf(meta, rocksdb::IteratorMode::Start)
            .next()
            .is_none() =>
        {
            mark_new(&db)?;
            None
        }
        None => {
            return Err(StoreError::NotTrawl(
                path.into(),
                "no schema version in meta".into(),
            ));
        }
    };
    Ok((db, older))
}

pub(super) fn open_secondary(path: &Path, scratch: &Path) -> Result<DB> {
    if let Found::Nothing(_) = check_existing(path)? {
        return Err(StoreError::Open(
            path.into(),
            "no trawl database there".into(),
        ));
    }
    // A secondary cannot create the column families a newer schema added:
    // say so, not RocksDB's "Column family not found".
    let present = DB::list_cf(&Options::default(), path).map_err(|e| classify(path, e))?;
    let missing: Vec<&str> = schema::COLUMN_FAMILIES
        .into_iter()
        .filter(|cf| !present.iter().any(|p| p == cf))
        .collect();
    if !missing.is_empty() {
        return Err(StoreError::Open(
            path.into(),
            format!(
                "an older trawl wrote it and a read-only attach cannot add what this one reads ({}); open it read-write once to migrate it (after the crawl that holds it stops), or query it with the trawl that wrote it",
                missing.join(", ")
            ),
        ));
    }
    let mut opts = db_options(path);
    opts.create_if_missing(false);
    opts.set_max_open_files(-1);
    let db = DB::open_cf_descriptors_as_secondary(&opts, path, scratch, descriptors())
        .map_err(|e| classify(path, e))?;
    let meta = db.cf_handle(CF_META).expect("meta opened");
    match db.get_cf(meta, meta_keys::SCHEMA_VERSION)? {
        Some(v) => {
            check_version(path, &v)?;
        }
        None => {
            return Err(StoreError::NotTrawl(
                path.into(),
                "no schema version in meta".into(),
            ));
        }
    }
    Ok(db)
}

/// The stored format version, if this build can read it.
fn check_version(path: &Path, v: &[u8]) -> Result<u32> {
    let found = v
        .try_into()
        .map(u32::from_be_bytes)
        .map_err(|_| StoreError::NotTrawl(path.into(), "malformed schema version".into()))?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: path.into(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(found)
}
