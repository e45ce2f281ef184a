//! Keeping the index current while the db changes. The ledger logs each
//! page whose document changed in its batch (`search_log`); a writer takes
//! the log from where the index's last commit left it ([`Mark::next_seq`]),
//! replaces each page's document by the page as the db holds it, commits
//! with the new mark, and trims what it took. After a `kill -9` the next
//! writer starts from the last commit: the log still holds everything
//! after it, so the index neither misses a page nor lists one the db
//! lacks. The crawl runs one on a side thread ([`Indexer`]), a commit
//! every few seconds, never one a page.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tantivy::indexer::LogMergePolicy;
use tantivy::{Index, IndexWriter, Term};

use super::source::PageReader;
use super::{DIR, Fields, Mark, Result, SearchError, open_dir, rebuild, restore_old};
use crate::schema::tables::PageFacts;
use crate::store::Store;

/// Memory the live writer buffers (tantivy's least is 15 MB a thread).
const WRITER_BYTES: usize = 16 << 20;
/// What the crawl's indexer holds at most, about: its writer's buffers,
/// a commit's documents and its threads. The crawl takes it out of its
/// fetch budget (beside a crawl at its budget the indexer added 20-30 MB).
pub const LIVE_MEMORY: usize = 32 << 20;
/// Threads that index: one, as a second one's buffers took the crawl of
/// 32 pages of 10 MB past its memory bound.
const WRITER_THREADS: usize = 1;
/// Log rows one commit takes at most.
const ROWS: usize = 8192;
/// Log rows taken before they are deleted: a delete is a write to the db,
/// best made seldom from an idle-priority thread the crawl's writes may
/// queue behind.
const TRIM_ROWS: u64 = 65_536;
/// How long the crawl's indexer may take, once the crawl is over, to take
/// what the log holds; the rest waits for the next crawl or search.
const DRAIN_LIMIT: Duration = Duration::from_secs(120);
/// Text bytes one commit takes at most: tantivy queues up to 10,000
/// documents whatever their size, so a commit is what bounds it.
const TEXT_BYTES: usize = 4 << 20;
/// How often the crawl's indexer takes the log.
const INTERVAL: Duration = Duration::from_secs(2);
/// How often it looks again while the crawl holds much of its memory.
const BUSY_WAIT: Duration = Duration::from_millis(50);
/// Segments past this many pages are not merged further (a merge maps the
/// segments it reads).
const MERGE_MAX_DOCS: usize = 200_000;

/// The db's index, open for writing from its log.
pub struct LiveIndex {
    writer: IndexWriter,
    fields: Fields,
    mark: Mark,
    /// Log rows before this are deleted.
    trimmed: u64,
}

impl LiveIndex {
    /// The db's index opened for writing, when its log can bring it up to
    /// date: an index this trawl made, or a new empty one for a db without
    /// pages (every page it gets is logged). None when it must be rebuilt
    /// (none, one of an older layout, or one built before the log).
    pub fn open(store: &Store) -> Result<Option<LiveIndex>> {
        let db = store.path();
        restore_old(db)?;
        let dir = db.join(DIR);
        // Read before the pages: a page stored after it is logged after it.
        let logged = store.counters()?.search_seq;
        if !dir.join("meta.json").exists() {
            let empty = store.rows::<PageFacts>(&[]).next().is_none();
            return match empty {
                true => Self::create(&dir, logged).map(Some),
                false => Ok(None),
            };
        }
        let Ok((index, fields)) = open_dir(&dir) else {
            return Ok(None);
        };
        let mark = Mark::of(&index)?;
        // An index ahead of the db (a db restored from a copy, or one an
        // OS crash took its last writes from) lists pages it may lack.
        if !mark.followable() || mark.next_seq > Some(logged) {
            return Ok(None);
        }
        Ok(Some(LiveIndex {
            writer: Self::writer(&index)?,
            fields,
            trimmed: 0,
            mark,
        }))
    }

    fn create(dir: &Path, next_seq: u64) -> Result<LiveIndex> {
        std::fs::create_dir_all(dir)?;
        let (schema, fields) = super::schema();
        let index = Index::create_in_dir(dir, schema)?;
        super::register(&index);
        let mut live = LiveIndex {
            writer: Self::writer(&index)?,
            fields,
            trimmed: 0,
            mark: Mark {
                at_ms: crate::model::now_ms(),
                next_seq: Some(next_seq),
                layout: super::LAYOUT,
                ..Mark::default()
            },
        };
        live.commit()?;
        Ok(live)
    }

    fn writer(index: &Index) -> Result<IndexWriter> {
        let writer = index.writer_with_num_threads(WRITER_THREADS, WRITER_BYTES)?;
        let mut merges = LogMergePolicy::default();
        merges.set_max_docs_before_merge(MERGE_MAX_DOCS);
        writer.set_merge_policy(Box::new(merges));
        Ok(writer)
    }

    fn commit(&mut self) -> Result<()> {
        self.mark.at_ms = crate::model::now_ms();
        let mut c = self.writer.prepare_commit()?;
        c.set_payload(&self.mark.payload());
        c.commit()?;
        Ok(())
    }

    /// The first log sequence the index has not taken.
    pub fn next_seq(&self) -> u64 {
        self.mark.next_seq.unwrap_or_default()
    }

    /// Takes the next logged changes (up to [`ROWS`] rows or
    /// [`TEXT_BYTES`] of text) in one commit: each page's document
    /// replaces the one it had. Returns the rows taken (0: up to date).
    pub fn catch_up(&mut self, store: &Store) -> Result<usize> {
        let from = self.next_seq();
        let rows = store.search_log(from, ROWS)?;
        let Some(&(last, _)) = rows.last() else {
            return Ok(0);
        };
        let (mut next, mut bytes, mut done) = (last + 1, 0, HashSet::new());
        let mut reader = PageReader::new(store, false);
        for &(seq, id) in &rows {
            if bytes > TEXT_BYTES {
                next = seq;
                break;
            }
            if !done.insert(id) {
                continue;
            }
            let term = Term::from_field_bytes(self.fields.id, &id.to_bytes());
            self.writer.delete_term(term);
            if let Some(page) = reader.read(id)? {
                bytes += page.text.len() + page.title.len();
                self.writer.add_document(self.fields.document(&page))?;
            }
        }
        self.mark.next_seq = Some(next);
        // The pages the commit holds outlive an OS crash, as it will.
        store.sync_wal()?;
        self.commit()?;
        if next - self.trimmed >= TRIM_ROWS {
            self.trim(store)?;
        }
        Ok((next - from) as usize)
    }

    /// Deletes the log rows the index has committed.
    pub fn trim(&mut self, store: &Store) -> Result<()> {
        let next = self.next_seq();
        if next > self.trimmed {
            store.trim_search_log(next)?;
            self.trimmed = next;
        }
        Ok(())
    }
}

/// The crawl's indexer: a side thread that takes the db's log into its
/// index every [`INTERVAL`], rebuilding the index first when the log
/// cannot bring it up to date.
pub struct Indexer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Where the indexer tells what the user should know (the crawl's
/// notices).
pub type Tell = Box<dyn Fn(String) + Send>;

/// Whether the crawl holds much of its memory now (its fetches' bodies):
/// the indexer, which reads whole page records, waits until it does not.
pub type Busy = Box<dyn Fn() -> bool + Send>;

impl Indexer {
    pub fn start(store: Arc<Store>, tell: Tell, busy: Busy) -> Indexer {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("search-index".into())
            .spawn(move || {
                idle_priority();
                if let Err(e) = follow(&store, &flag, &tell, &busy) {
                    tell(format!(
                        "search index: {e}; it is no longer kept current (searches say how far behind it is)"
                    ));
                }
            })
            .ok();
        Indexer { stop, thread }
    }

    /// Takes what the log holds now, then stops.
    pub fn finish(mut self) {
        self.signal();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    fn signal(&self) {
        let (lock, cv) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }
}

impl Drop for Indexer {
    fn drop(&mut self) {
        self.signal();
    }
}

/// The indexer (and the tantivy threads it starts, which inherit it) runs
/// only when the crawl leaves a processor idle: on a crawl that keeps
/// every core busy the index falls behind and takes the rest when the
/// crawl ends, rather than slowing it (indexing costs more processor time
/// a page than fetching, parsing and storing it).
fn idle_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: for the calling thread (0), with a valid parameter; a
        // refusal leaves it at normal priority.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    }
}

/// Back to the normal priority, for the drain after the crawl.
fn normal_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: as in `idle_priority`.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
    }
}

/// Whether a stop was asked for, after waiting for one up to `wait`.
fn stopped(stop: &(Mutex<bool>, Condvar), wait: Duration) -> bool {
    let (lock, cv) = stop;
    let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    let (guard, _) = cv
        .wait_timeout_while(guard, wait, |s| !*s)
        .unwrap_or_else(|e| e.into_inner());
    *guard
}

/// The indexer's loop: open (or rebuild) the index, then take the log
/// every interval until stopped, and once more after.
fn follow(store: &Store, stop: &(Mutex<bool>, Condvar), tell: &Tell, busy: &Busy) -> Result<()> {
    let mut live = match LiveIndex::open(store)? {
        Some(live) => live,
        None => {
            let pages = store.counters()?.fetched;
            tell(format!(
                "search index: building it from the db's {pages} pages beside the crawl (searches scan until it is done)"
            ));
            let mut go_on = |_| !stopped(stop, Duration::ZERO);
            match rebuild(store, &mut go_on)? {
                Some(n) => tell(format!("search index: built, {n} pages")),
                None => {
                    tell("search index: the crawl ended before the index was built; `reindex search` builds it (or the next crawl)".into());
                    return Ok(());
                }
            }
            LiveIndex::open(store)?.ok_or_else(|| {
                SearchError("search index: the new index cannot follow the log".into())
            })?
        }
    };
    loop {
        if stopped(stop, INTERVAL) {
            return drain(store, &mut live, tell);
        }
        loop {
            while busy() {
                if stopped(stop, BUSY_WAIT) {
                    return drain(store, &mut live, tell);
                }
            }
            if live.catch_up(store)? == 0 {
                break;
            }
            if stopped(stop, Duration::ZERO) {
                return drain(store, &mut live, tell);
            }
        }
    }
}

/// The crawl is over: takes what the log holds, at normal priority (the
/// machine is no longer busy with the crawl) and for [`DRAIN_LIMIT`] at
/// most; what is left waits for the next crawl or search.
fn drain(store: &Store, live: &mut LiveIndex, tell: &Tell) -> Result<()> {
    normal_priority();
    let started = std::time::Instant::now();
    while live.catch_up(store)? > 0 {
        if started.elapsed() > DRAIN_LIMIT {
            let left = store.counters()?.search_seq.saturating_sub(live.next_seq());
            tell(format!(
                "search index: {left} page changes left to take; the next crawl, or a search in the shell, takes them"
            ));
            break;
        }
    }
    live.trim(store)
}
