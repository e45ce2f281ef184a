//! A new index built from every page of the db, written beside the db's
//! index (which stays until the new one is whole) and put in its place.

use std::path::{Path, PathBuf};

use tantivy::{Index, IndexWriter};

use super::source::PageReader;
use super::{
    DIR, Fields, LAYOUT, Mark, NEW_DIR, OLD_DIR, Result, SearchError, WRITER_BYTES, register,
    schema,
};
use crate::schema::tables::PageFacts;
use crate::store::Store;

/// Builds a new index of every page of `store` and puts it in place of
/// the db's. `progress(pages)` is told every 1,024 pages and returns
/// false to stop: None then, and the old index stands. Returns the pages
/// indexed.
pub fn rebuild(store: &Store, progress: &mut dyn FnMut(u64) -> bool) -> Result<Option<u64>> {
    // Read before the pages: a change logged from here on is taken again
    // by the next catch-up (a page the scan read already is replaced by
    // itself), and every change before it is in a page the scan reads.
    let counters = store.counters()?;
    let mut b = Builder::start(store.path())?;
    let mut reader = PageReader::new(store, true);
    for row in store.rows::<PageFacts>(&[]) {
        let (id, facts) = row?;
        b.add(&reader.read_with(id, &facts)?)?;
        if b.pages.is_multiple_of(1024) && !progress(b.pages) {
            return Ok(None);
        }
    }
    let pages = b.finish(counters.fetched, counters.search_seq)?;
    store.trim_search_log(counters.search_seq)?;
    Ok(Some(pages))
}

/// A new index being written beside the db's (which stays until
/// [`Builder::finish`] replaces it: a build cut short leaves the old one).
pub struct Builder {
    /// Taken when the build ends (its threads stop before the scratch
    /// directory goes).
    writer: Option<IndexWriter>,
    fields: Fields,
    db: PathBuf,
    pages: u64,
    /// Text added since the last commit.
    bytes: usize,
    finished: bool,
}

/// Text the build adds between commits: tantivy queues up to 10,000
/// documents whatever their size (the build's peak RSS was 370 MiB on the
/// 50,000-page bench db without this), and a commit waits for the queue.
const BUILD_TEXT_BYTES: usize = 16 << 20;
/// Segments merged into one after the build: a query visits every
/// segment, and 1,000,000 pages left ~500 (a search for a word no page has
/// took 64 ms, against 13-17 ms over 175). Merged a group at a time, so a
/// merge maps no more than a group's files.
const MERGE_GROUP: usize = 16;

impl Drop for Builder {
    /// A build cut short (Ctrl-C, an error) leaves nothing behind.
    fn drop(&mut self) {
        drop(self.writer.take());
        if !self.finished {
            let _ = std::fs::remove_dir_all(self.db.join(NEW_DIR));
        }
    }
}

impl Builder {
    pub fn start(db: &Path) -> Result<Builder> {
        let new_dir = db.join(NEW_DIR);
        if new_dir.exists() {
            std::fs::remove_dir_all(&new_dir)?;
        }
        std::fs::create_dir_all(&new_dir)?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(&new_dir, schema)?;
        register(&index);
        let writer = index.writer_with_num_threads(1, WRITER_BYTES)?;
        // Merging maps every segment it reads: over 1,000,000 pages the
        // build's peak RSS was 2.1 GB with the default policy. A segment
        // per WRITER_BYTES of postings is few enough to search.
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        Ok(Builder {
            writer: Some(writer),
            fields,
            db: db.to_path_buf(),
            pages: 0,
            bytes: 0,
            finished: false,
        })
    }

    fn writer(&mut self) -> Result<&mut IndexWriter> {
        self.writer
            .as_mut()
            .ok_or_else(|| SearchError("search index: the build is over".into()))
    }

    /// Adds a page (each once: the index is new).
    pub fn add(&mut self, page: &super::source::Document) -> Result<()> {
        let doc = self.fields.document(page);
        self.writer()?.add_document(doc)?;
        self.pages += 1;
        self.bytes += page.text.len() + page.title.len();
        if self.bytes > BUILD_TEXT_BYTES {
            self.bytes = 0;
            self.writer()?.commit()?;
        }
        Ok(())
    }

    /// Merges the committed segments [`MERGE_GROUP`] at a time.
    fn merge_groups(&mut self) -> Result<()> {
        let writer = self.writer()?;
        let ids = writer.index().searchable_segment_ids()?;
        for group in ids.chunks(MERGE_GROUP).filter(|g| g.len() > 1) {
            writer.merge(group).wait()?;
        }
        Ok(())
    }

    /// Commits, marked as holding every change logged before `next_seq`,
    /// and puts the index in place of the db's (renamed aside first: a
    /// crash between the renames leaves it there, and opening puts it
    /// back). Returns the pages indexed.
    pub fn finish(mut self, fetched: u64, next_seq: u64) -> Result<u64> {
        let mark = Mark {
            pages: self.pages,
            fetched,
            at_ms: crate::model::now_ms(),
            next_seq: Some(next_seq),
            layout: LAYOUT,
        };
        self.writer()?.commit()?;
        self.merge_groups()?;
        let mut commit = self.writer()?.prepare_commit()?;
        commit.set_payload(&mark.payload());
        commit.commit()?;
        drop(self.writer.take());
        let (dir, old) = (self.db.join(DIR), self.db.join(OLD_DIR));
        if old.exists() {
            std::fs::remove_dir_all(&old)?;
        }
        if dir.exists() {
            std::fs::rename(&dir, &old)?;
        }
        std::fs::rename(self.db.join(NEW_DIR), &dir)?;
        self.finished = true;
        if old.exists() {
            std::fs::remove_dir_all(&old)?;
        }
        Ok(self.pages)
    }
}
