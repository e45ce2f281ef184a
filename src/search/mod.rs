//! The full-text index beside the db (`search/` in its directory): a
//! tantivy index of each stored page's title and stored text (denoised
//! when it was), its URL, host and date, and the facts filters read,
//! ranked by BM25. `reindex search` builds it from the db (`build`); the
//! crawl keeps it current from the db's `search_log` (`live`), and the
//! log sequence it has taken rides in each commit's payload ([`Mark`]).

mod build;
pub mod contains;
mod live;
pub mod source;
mod tokens;

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{Query, QueryParser};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument};

use crate::model::UrlId;
pub use build::{Builder, rebuild};
pub use live::{Indexer, LIVE_MEMORY, LiveIndex};
pub use tokens::{ANALYZER, MAX_WORD, WORDS_ANALYZER, analyzer, register};

/// The index's layout: its fields and its analyzer. An index of another
/// layout is rebuilt, not read.
const LAYOUT: u32 = 4;

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

impl From<crate::store::StoreError> for SearchError {
    fn from(e: crate::store::StoreError) -> Self {
        SearchError(e.to_string())
    }
}

impl From<std::io::Error> for SearchError {
    fn from(e: std::io::Error) -> Self {
        SearchError(format!("search index: {e}"))
    }
}

pub type Result<T> = std::result::Result<T, SearchError>;

/// The index's fields: one table, read by the writers and the searcher.
/// Titles and texts are what a query's words match; `url:`, `host:`,
/// `date:`, `verdict:`, `status:`, `depth:`, `fetched:` (ms) and the scores
/// can be named in a query.
#[derive(Clone, Copy)]
struct Fields {
    /// The page's url id (16 bytes): what a hit is, and what a new
    /// version of the page replaces.
    id: Field,
    /// Stored, and its words indexed.
    url: Field,
    host: Field,
    title: Field,
    text: Field,
    date: Field,
    verdict: Field,
    status: Field,
    depth: Field,
    fetched: Field,
    topic_score: Field,
    relevance: Field,
    /// When the document was made (ms; stored): `why` says it.
    indexed: Field,
    /// The title's and the text's words, folded and unstemmed: what
    /// `title ~` and `text ~` are answered from (see `contains`).
    words_title: Field,
    words_text: Field,
    /// 1 when the document lacks some of the page's text (cut at
    /// [`source::MAX_TEXT`], or not read), else 0.
    partial: Field,
}

const FIELD_NAMES: [&str; 16] = [
    "id",
    "url",
    "host",
    "title",
    "text",
    "date",
    "verdict",
    "status",
    "depth",
    "fetched",
    "topic_score",
    "relevance",
    "indexed",
    "words_title",
    "words_text",
    "partial",
];

fn schema() -> (Schema, Fields) {
    use tantivy::schema::{FAST, INDEXED, STRING};
    let mut b = Schema::builder();
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let unstemmed = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(WORDS_ANALYZER)
            .set_index_option(IndexRecordOption::Basic),
    );
    let fields = Fields {
        id: b.add_bytes_field("id", STORED | INDEXED),
        url: b.add_text_field("url", words.clone() | STORED),
        host: b.add_text_field("host", STRING),
        title: b.add_text_field("title", words.clone()),
        text: b.add_text_field("text", words),
        date: b.add_text_field("date", STRING),
        verdict: b.add_text_field("verdict", STRING | FAST),
        status: b.add_u64_field("status", INDEXED | FAST),
        depth: b.add_u64_field("depth", INDEXED | FAST),
        fetched: b.add_u64_field("fetched", INDEXED | FAST),
        topic_score: b.add_f64_field("topic_score", INDEXED | FAST),
        relevance: b.add_f64_field("relevance", INDEXED | FAST),
        indexed: b.add_u64_field("indexed", STORED),
        words_title: b.add_text_field("words_title", unstemmed.clone()),
        words_text: b.add_text_field("words_text", unstemmed),
        partial: b.add_u64_field("partial", INDEXED),
    };
    (b.build(), fields)
}

fn fields_of(schema: &Schema) -> Result<Fields> {
    let mut got = Vec::with_capacity(FIELD_NAMES.len());
    for name in FIELD_NAMES {
        got.push(schema.get_field(name).map_err(|_| {
            SearchError(format!(
                "the search index was made by an older trawl (no field {name}): `reindex search` rebuilds it"
            ))
        })?);
    }
    Ok(Fields {
        id: got[0],
        url: got[1],
        host: got[2],
        title: got[3],
        text: got[4],
        date: got[5],
        verdict: got[6],
        status: got[7],
        depth: got[8],
        fetched: got[9],
        topic_score: got[10],
        relevance: got[11],
        indexed: got[12],
        words_title: got[13],
        words_text: got[14],
        partial: got[15],
    })
}

impl Fields {
    /// The index's document of `page`.
    fn document(&self, page: &source::Document) -> TantivyDocument {
        let mut doc = TantivyDocument::default();
        doc.add_bytes(self.id, &page.id.to_bytes());
        doc.add_text(self.url, &page.url);
        doc.add_text(self.host, &page.host);
        doc.add_text(self.title, &page.title);
        doc.add_text(self.text, &page.text);
        if let Some(d) = &page.date {
            doc.add_text(self.date, d);
        }
        doc.add_text(self.verdict, page.verdict);
        doc.add_u64(self.status, page.status.into());
        doc.add_u64(self.depth, page.depth.into());
        doc.add_u64(self.fetched, page.fetched_ms);
        if let Some(s) = page.topic_score {
            doc.add_f64(self.topic_score, s);
        }
        if let Some(r) = page.relevance {
            doc.add_f64(self.relevance, r);
        }
        doc.add_u64(self.indexed, crate::model::now_ms());
        doc.add_text(self.words_title, &page.title);
        doc.add_text(self.words_text, &page.text);
        doc.add_u64(self.partial, page.partial.into());
        doc
    }
}

/// What an index's last commit recorded: where in the db's `search_log`
/// it stands.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Mark {
    /// Pages the last build indexed.
    pub pages: u64,
    /// The db's fetched-pages counter when the last build began.
    pub fetched: u64,
    /// When the last commit was made (ms).
    pub at_ms: u64,
    /// The first `search_log` sequence not yet taken: every change logged
    /// before it is in the index (None: an index of schema 25, built
    /// before the log).
    #[serde(default)]
    pub next_seq: Option<u64>,
    /// The index's [`LAYOUT`] (0 before layouts were recorded).
    #[serde(default)]
    pub layout: u32,
}

impl Mark {
    /// Whether the log can bring the index up to date: it records where
    /// it stands and holds what this trawl writes.
    pub fn followable(&self) -> bool {
        self.next_seq.is_some() && self.layout == LAYOUT
    }

    fn of(index: &Index) -> Result<Mark> {
        let meta = index.load_metas()?;
        Ok(meta
            .payload
            .and_then(|p| serde_json::from_str(&p).ok())
            .unwrap_or_default())
    }

    fn payload(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
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
    /// The index of the db at `db`, None when it has none. A reader
    /// renames nothing: between a build's renames it reads the old index
    /// where it was put aside (writers put it back).
    pub fn open(db: &Path) -> Result<Option<SearchIndex>> {
        let dir = [DIR, OLD_DIR]
            .map(|d| db.join(d))
            .into_iter()
            .find(|d| d.join("meta.json").exists());
        let Some(dir) = dir else {
            return Ok(None);
        };
        let (index, fields) = open_dir(&dir)?;
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

    /// Pages the index holds.
    pub fn pages(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// When page `id`'s document was made (ms), None when the index lacks
    /// it.
    pub fn indexed_at(&self, id: UrlId) -> Result<Option<u64>> {
        let term = tantivy::Term::from_field_bytes(self.fields.id, &id.to_bytes());
        let query = tantivy::query::TermQuery::new(term, IndexRecordOption::Basic);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(1).order_by_score())?;
        let Some((_, at)) = top.first() else {
            return Ok(None);
        };
        let doc: TantivyDocument = searcher.doc(*at)?;
        Ok(doc.get_first(self.fields.indexed).and_then(|v| v.as_u64()))
    }

    /// Where the index stands in the db's log.
    pub fn mark(&self) -> Result<Mark> {
        Mark::of(&self.index)
    }

    /// Reads the index as its last commit left it.
    pub fn reload(&self) -> Result<()> {
        Ok(self.reader.reload()?)
    }

    /// A query whose hits include every page whose title (`title`) or
    /// stored text holds `pattern`, ignoring case, as `~` tests it; None
    /// when the pattern gives the index nothing to look up (see
    /// `contains::parts`). Pages the index does not hold whole are not
    /// among its hits: [`with_partial`](Self::with_partial) adds them.
    pub fn contains(&self, title: bool, pattern: &str) -> Option<Box<dyn Query>> {
        let field = match title {
            true => self.fields.words_title,
            false => self.fields.words_text,
        };
        contains::query(field, &contains::parts(pattern)?)
    }

    /// `query` or a page the index does not hold whole: a word over
    /// [`MAX_WORD`] bytes, or a text cut or not read.
    pub fn with_partial(&self, query: Box<dyn Query>) -> Box<dyn Query> {
        use tantivy::query::{BooleanQuery, Occur, TermQuery};
        let term = |t: tantivy::Term| -> (Occur, Box<dyn Query>) {
            let q = TermQuery::new(t, IndexRecordOption::Basic);
            (Occur::Should, Box::new(q))
        };
        let long = |f| tantivy::Term::from_field_text(f, tokens::LONG_WORD);
        Box::new(BooleanQuery::new(vec![
            (Occur::Should, query),
            term(long(self.fields.words_title)),
            term(long(self.fields.words_text)),
            term(tantivy::Term::from_field_u64(self.fields.partial, 1)),
        ]))
    }

    /// The pages `query` finds, in no order, unless more than `max` match
    /// (None then).
    pub fn ids(&self, query: &dyn Query, max: u64) -> Result<Option<Vec<UrlId>>> {
        let searcher = self.reader.searcher();
        if searcher.search(query, &tantivy::collector::Count)? as u64 > max {
            return Ok(None);
        }
        let found = searcher.search(query, &tantivy::collector::DocSetCollector)?;
        let mut ids = Vec::with_capacity(found.len());
        for at in found {
            let doc: TantivyDocument = searcher.doc(at)?;
            let id = doc.get_first(self.fields.id).and_then(|v| v.as_bytes());
            if let Some(id) = id.and_then(UrlId::from_slice) {
                ids.push(id);
            }
        }
        Ok(Some(ids))
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
        self.search_from(query, 0, limit)
    }

    /// [`search`](Self::search) past the best `offset` pages.
    pub fn search_from(
        &self,
        query: &dyn Query,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Hit>, u64)> {
        let searcher = self.reader.searcher();
        // The collector sizes its heap by the limit: no more than the pages.
        let pages = searcher.num_docs().max(1) as usize;
        let limit = limit.clamp(1, pages);
        let top_docs = TopDocs::with_limit(limit).and_offset(offset.min(pages));
        let (top, matched) = searcher.search(
            query,
            &(top_docs.order_by_score(), tantivy::collector::Count),
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

/// A build stopped between its renames leaves the old index aside: it
/// stands until a build is whole.
fn restore_old(db: &Path) -> Result<()> {
    let (dir, old) = (db.join(DIR), db.join(OLD_DIR));
    if !dir.exists() && old.join("meta.json").exists() {
        std::fs::rename(&old, &dir)?;
    }
    Ok(())
}

/// The index in `dir`, with its fields (an error names the fix).
fn open_dir(dir: &Path) -> Result<(Index, Fields)> {
    let index = Index::open_in_dir(dir).map_err(|e| {
        SearchError(format!(
            "the search index cannot be read ({e}): `reindex search` rebuilds it"
        ))
    })?;
    register(&index);
    let fields = fields_of(&index.schema())?;
    Ok((index, fields))
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

    fn page(n: u128, title: &str, text: &str) -> source::Document {
        source::Document {
            id: UrlId(n),
            url: format!("http://{n}.example/"),
            title: title.into(),
            text: text.into(),
            host: format!("{n}.example"),
            status: 200,
            depth: 0,
            fetched_ms: 0,
            verdict: "keep",
            topic_score: None,
            relevance: None,
            date: None,
            partial: false,
        }
    }

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
        b.add(&page(1, "first", "one page")).unwrap();
        assert_eq!(b.finish(1, 1).unwrap(), 1);
        let index = SearchIndex::open(db.path()).unwrap().unwrap();
        assert_eq!(ids(&index, "page"), [UrlId(1)]);
        let mark = index.mark().unwrap();
        assert_eq!((mark.pages, mark.next_seq), (1, Some(1)));
        assert!(mark.followable());
        drop(index);
        let mut cut = Builder::start(db.path()).unwrap();
        cut.add(&page(2, "second", "other page")).unwrap();
        drop(cut);
        assert!(!db.path().join(NEW_DIR).exists());
        let index = SearchIndex::open(db.path()).unwrap().unwrap();
        assert_eq!(ids(&index, "page"), [UrlId(1)]);
        drop(index);
        // Stopped between its renames: readers read the old index where
        // it was put aside, and leave it there; a writer puts it back.
        std::fs::rename(db.path().join(DIR), db.path().join(OLD_DIR)).unwrap();
        let index = SearchIndex::open(db.path()).unwrap().unwrap();
        assert_eq!(ids(&index, "first"), [UrlId(1)]);
        assert!(!db.path().join(DIR).exists());
        restore_old(db.path()).unwrap();
        assert!(bytes(db.path()) > 0);
    }

    /// `contains` finds pages by parts of their unstemmed words, in any
    /// case; a page with a word past [`MAX_WORD`] or a cut text is a
    /// candidate of every such query, and a whole page without the part
    /// is not.
    #[test]
    fn contains_finds_parts_of_words_and_every_page_held_in_part() {
        let db = tempfile::tempdir().unwrap();
        let mut b = Builder::start(db.path()).unwrap();
        b.add(&page(1, "Pricing", "Running shoes 运动员训练"))
            .unwrap();
        let long = format!("lead {} tail", "q".repeat(MAX_WORD + 1));
        b.add(&page(2, "other", &long)).unwrap();
        let mut cut = page(3, "cut", "nothing here");
        cut.partial = true;
        b.add(&cut).unwrap();
        b.add(&page(4, "plain", "nothing here")).unwrap();
        b.finish(4, 4).unwrap();
        let index = SearchIndex::open(db.path()).unwrap().unwrap();
        let found = |title: bool, p: &str, partial: bool| {
            let q = index.contains(title, p).unwrap();
            let q = if partial { index.with_partial(q) } else { q };
            let mut got: Vec<u128> = (index.ids(&*q, 10).unwrap().unwrap())
                .into_iter()
                .map(|id| id.0)
                .collect();
            got.sort_unstable();
            got
        };
        assert_eq!(found(false, "UNNING SH", false), [1]);
        // Unstemmed: "runs" is not a part of "running".
        assert_eq!(found(false, "runs", false), Vec::<u128>::new());
        assert_eq!(found(false, "员训", false), [1]);
        assert_eq!(found(false, "员", false), [1]);
        assert_eq!(found(true, "pric", false), [1]);
        assert_eq!(found(true, "shoes", false), Vec::<u128>::new());
        assert_eq!(found(false, "runn", true), [1, 2, 3]);
        assert_eq!(found(false, &"q".repeat(MAX_WORD + 5), false), [2]);
        assert_eq!(found(false, "here", false), [3, 4]);
        assert!(index.contains(false, "--").is_none());
        // Past the cap: None, for the caller to scan.
        let every = index.contains(false, "e").unwrap();
        assert!(index.ids(&*every, 2).unwrap().is_none());
    }
}
