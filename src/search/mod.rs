//! The full-text index beside the db (`search/` in its directory): a
//! tantivy index of each stored page's title and stored text (denoised
//! when it was), ranked by BM25. `reindex search` builds it from the db;
//! the crawl does not feed it yet, so a search says when the db has
//! changed since (the page count it was built at rides in the commit's
//! payload).

mod tokens;

use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::query::{Query, QueryParser};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument};

use crate::model::UrlId;
pub use tokens::{ANALYZER, MAX_WORD, analyzer};

/// The index directory inside the db's, and where a rebuild is written
/// before it replaces it.
const DIR: &str = "search";
const NEW_DIR: &str = "search.new";
/// The index being replaced, for the moment between the two renames.
const OLD_DIR: &str = "search.old";

/// Memory the writer buffers before it writes a segment.
const WRITER_BYTES: usize = 32 << 20;

/// A search index error, as one line.
#[derive(Debug)]
pub struct SearchError(pub String);

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<tantivy::TantivyError> for SearchError {
    fn from(e: tantivy::TantivyError) -> Self {
        SearchError(format!("search index: {e}"))
    }
}

impl From<std::io::Error> for SearchError {
    fn from(e: std::io::Error) -> Self {
        SearchError(format!("search index: {e}"))
    }
}

pub type Result<T> = std::result::Result<T, SearchError>;

/// The index's fields: one table, read by the builder and the searcher.
#[derive(Clone, Copy)]
struct Fields {
    /// The page's url id (16 bytes): what a hit is.
    id: Field,
    url: Field,
    title: Field,
    text: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        id: b.add_bytes_field("id", STORED | tantivy::schema::INDEXED),
        url: b.add_text_field("url", STORED),
        title: b.add_text_field("title", words.clone()),
        text: b.add_text_field("text", words),
    };
    (b.build(), fields)
}

fn fields_of(schema: &Schema) -> Result<Fields> {
    let get = |name: &str| {
        schema.get_field(name).map_err(|_| {
            SearchError(format!(
                "search index: no field {name}: `reindex search` rebuilds it"
            ))
        })
    };
    Ok(Fields {
        id: get("id")?,
        url: get("url")?,
        title: get("title")?,
        text: get("text")?,
    })
}

/// What a build recorded in its commit.
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Built {
    /// Pages indexed.
    pub pages: u64,
    /// The db's fetched-pages counter when the build began.
    pub fetched: u64,
    pub at_ms: u64,
}

/// A found page.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub id: UrlId,
    pub url: String,
    pub score: f32,
}

/// An open index, for searching.
pub struct SearchIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

impl SearchIndex {
    /// The index of the db at `db`, None when it has none.
    pub fn open(db: &Path) -> Result<Option<SearchIndex>> {
        let dir = db.join(DIR);
        let old = db.join(OLD_DIR);
        if !dir.exists() && old.join("meta.json").exists() {
            // A build stopped between its renames: the old index stands.
            std::fs::rename(&old, &dir)?;
        }
        if !dir.join("meta.json").exists() {
            return Ok(None);
        }
        let index = Index::open_in_dir(&dir).map_err(|e| {
            SearchError(format!(
                "the search index cannot be read ({e}): `reindex search` rebuilds it"
            ))
        })?;
        index.tokenizers().register(ANALYZER, analyzer());
        let fields = fields_of(&index.schema())?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Some(SearchIndex {
            index,
            reader,
            fields,
        }))
    }

    /// What the build that made it recorded.
    pub fn built(&self) -> Result<Built> {
        let meta = self.index.load_metas()?;
        Ok(meta
            .payload
            .and_then(|p| serde_json::from_str(&p).ok())
            .unwrap_or_default())
    }

    /// The query a user wrote, over titles and texts; every word must be
    /// there unless `OR` says otherwise; `"…"` is a phrase.
    pub fn parse(&self, q: &str) -> Result<Box<dyn Query>> {
        let mut p = QueryParser::for_index(&self.index, vec![self.fields.title, self.fields.text]);
        p.set_conjunction_by_default();
        p.parse_query(q)
            .map_err(|e| SearchError(format!("cannot read the query {q:?}: {e}")))
    }

    /// The best `limit` pages for `query`, best first, and how many
    /// pages match in all.
    pub fn search(&self, query: &dyn Query, limit: usize) -> Result<(Vec<Hit>, u64)> {
        let searcher = self.reader.searcher();
        // The collector sizes its heap by the limit: no more than the pages.
        let limit = limit.clamp(1, searcher.num_docs().max(1) as usize);
        let (top, matched) = searcher.search(
            query,
            &(
                TopDocs::with_limit(limit).order_by_score(),
                tantivy::collector::Count,
            ),
        )?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, at) in top {
            let doc: TantivyDocument = searcher.doc(at)?;
            let id = doc
                .get_first(self.fields.id)
                .and_then(|v| v.as_bytes())
                .and_then(UrlId::from_slice);
            let url = doc.get_first(self.fields.url).and_then(|v| v.as_str());
            if let (Some(id), Some(url)) = (id, url) {
                hits.push(Hit {
                    id,
                    url: url.to_string(),
                    score,
                });
            }
        }
        Ok((hits, matched as u64))
    }

    /// What cuts passages of texts around `query`'s words, of about
    /// `bytes` (tantivy counts bytes: a CJK passage has a third as many
    /// characters).
    pub fn passages(&self, query: &dyn Query, bytes: usize) -> Result<Passages> {
        let mut g = SnippetGenerator::create(&self.reader.searcher(), query, self.fields.text)?;
        g.set_max_num_chars(bytes);
        Ok(Passages(g))
    }
}

/// See [`SearchIndex::passages`].
pub struct Passages(SnippetGenerator);

impl Passages {
    /// A passage of `text` around the query's words, each match in `**`.
    pub fn of(&self, text: &str) -> String {
        let s = self.0.snippet(text);
        let frag = s.fragment();
        // Pairs of CJK characters overlap: marked as one run.
        let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
        let mut ranges = s.highlighted().to_vec();
        ranges.sort_by_key(|r| r.start);
        for r in ranges {
            match runs.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => runs.push(r),
            }
        }
        let (mut out, mut at) = (String::new(), 0);
        for r in runs {
            let (Some(before), Some(hit)) = (frag.get(at..r.start), frag.get(r.clone())) else {
                break;
            };
            out.push_str(before);
            out.push_str("**");
            out.push_str(hit);
            out.push_str("**");
            at = r.end;
        }
        out.push_str(frag.get(at..).unwrap_or_default());
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }
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
    finished: bool,
}

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
        index.tokenizers().register(ANALYZER, analyzer());
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
            finished: false,
        })
    }

    fn writer(&mut self) -> Result<&mut IndexWriter> {
        self.writer
            .as_mut()
            .ok_or_else(|| SearchError("search index: the build is over".into()))
    }

    /// Adds a page (each once: the index is new).
    pub fn add(&mut self, id: UrlId, url: &str, title: &str, text: &str) -> Result<()> {
        let f = self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_bytes(f.id, &id.to_bytes());
        doc.add_text(f.url, url);
        doc.add_text(f.title, title);
        doc.add_text(f.text, text);
        self.writer()?.add_document(doc)?;
        self.pages += 1;
        Ok(())
    }

    /// Commits with what was built and puts it in place of the db's index
    /// (renamed aside first: a crash between the renames leaves it there,
    /// and [`SearchIndex::open`] puts it back).
    pub fn finish(mut self, fetched: u64) -> Result<u64> {
        let built = Built {
            pages: self.pages,
            fetched,
            at_ms: crate::model::now_ms(),
        };
        let mut commit = self.writer()?.prepare_commit()?;
        commit.set_payload(&serde_json::to_string(&built).unwrap_or_default());
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

/// Bytes the index of the db at `db` takes on disk (0 without one).
pub fn bytes(db: &Path) -> u64 {
    std::fs::read_dir(db.join(DIR))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(index: &SearchIndex, q: &str) -> Vec<UrlId> {
        let query = index.parse(q).unwrap();
        index
            .search(&*query, 10)
            .unwrap()
            .0
            .into_iter()
            .map(|h| h.id)
            .collect()
    }

    /// A build cut short leaves the old index and no scratch; a finished
    /// one replaces it; one stopped between its renames is put back.
    #[test]
    fn builds_replace_the_index_whole_or_not_at_all() {
        let db = tempfile::tempdir().unwrap();
        assert!(SearchIndex::open(db.path()).unwrap().is_none());
        let mut b = Builder::start(db.path()).unwrap();
        b.add(UrlId(1), "http://a.org/", "first", "one page")
            .unwrap();
        assert_eq!(b.finish(1).unwrap(), 1);
        let index = SearchIndex::open(db.path()).unwrap().unwrap();
        assert_eq!(ids(&index, "page"), [UrlId(1)]);
        assert_eq!(index.built().unwrap().pages, 1);
        drop(index);
        let mut cut = Builder::start(db.path()).unwrap();
        cut.add(UrlId(2), "http://b.org/", "second", "other page")
            .unwrap();
        drop(cut);
        assert!(!db.path().join(NEW_DIR).exists());
        let index = SearchIndex::open(db.path()).unwrap().unwrap();
        assert_eq!(ids(&index, "page"), [UrlId(1)]);
        drop(index);
        std::fs::rename(db.path().join(DIR), db.path().join(OLD_DIR)).unwrap();
        let index = SearchIndex::open(db.path()).unwrap().unwrap();
        assert_eq!(ids(&index, "first"), [UrlId(1)]);
        assert!(bytes(db.path()) > 0);
    }
}
