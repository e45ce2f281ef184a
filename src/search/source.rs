//! What the search index holds of a page, read from the db: its title and
//! stored text (denoised when it was), its URL and host, its date, and the
//! facts a search's filters read (status, depth, fetch time, verdict,
//! scores). One reader serves a rebuild (every page, in id order) and the
//! live writer (the pages the log names, in log order).

use crate::model::UrlId;
use crate::schema::tables::{PageFacts, Pages};
use crate::schema::{DocRecord, PageDoc, PageFactsRecord, PageRecord};
use crate::store::{PageJoin, Store, StoreError};

/// Text of a page the index takes, in bytes: the rest of a longer one is
/// not searchable (a 10 MB text's postings took tens of MB while the crawl
/// held its fetch budget; real pages' texts are a few KB).
pub const MAX_TEXT: usize = 1 << 20;

/// A page whose body is larger is indexed by its title, URL and facts (and
/// the text its doc keeps), not its frame's text: reading that frame
/// decompresses the whole body, tens of MB beside a crawl that may hold
/// its whole memory budget.
pub const MAX_BODY: u64 = 4 << 20;

/// A page as the index holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub id: UrlId,
    pub url: String,
    pub host: String,
    pub title: String,
    pub text: String,
    pub status: u16,
    pub depth: u16,
    pub fetched_ms: u64,
    pub verdict: &'static str,
    pub topic_score: Option<f64>,
    pub relevance: Option<f64>,
    /// The page's date as denoising found it (`YYYY-MM-DD`).
    pub date: Option<String>,
    /// The text is not all of the page's: cut at [`MAX_TEXT`], or its
    /// record was not read ([`MAX_BODY`]) or did not decode.
    pub partial: bool,
}

/// The page's visible text as stored: its frame's text, or the doc's when
/// the frame holds none (a body too large to stream into one).
pub fn raw_text(record: Option<&PageRecord>, doc: Option<&DocRecord>) -> String {
    record
        .and_then(|p| p.frame_text().ok().flatten())
        .unwrap_or_else(|| doc.map_or(String::new(), |d| d.text.clone()))
}

/// [`raw_text`], denoised when it was: the text the index holds and `text
/// ~` scans.
pub fn stored_text(record: Option<&PageRecord>, doc: Option<&DocRecord>) -> String {
    let text = raw_text(record, doc);
    match doc.and_then(|d| d.denoise.as_ref()) {
        Some(d) => {
            crate::filter::denoise::clean_text(&text, crate::filter::denoise::noise_of(&d.noise))
        }
        None => text,
    }
}

/// Reads pages' documents through cursors joined on the page id.
pub struct PageReader<'s> {
    join: PageJoin<'s>,
    /// Page records that did not decode (their documents have no text).
    pub unreadable: u64,
}

impl<'s> PageReader<'s> {
    /// `dense`: nearly every page is read, in id order (see `PageJoin`).
    pub fn new(store: &'s Store, dense: bool) -> PageReader<'s> {
        PageReader {
            join: store.page_join(dense),
            unreadable: 0,
        }
    }

    /// Page `id`'s document, None when the db holds no page there.
    pub fn read(&mut self, id: UrlId) -> Result<Option<Document>, StoreError> {
        match self.join.row::<PageFacts>(id)? {
            Some(facts) => self.read_with(id, &facts).map(Some),
            None => Ok(None),
        }
    }

    /// The document of page `id`, whose facts the caller read.
    pub fn read_with(
        &mut self,
        id: UrlId,
        facts: &PageFactsRecord,
    ) -> Result<Document, StoreError> {
        let PageDoc { doc, verdict } = self.join.doc(id)?.unwrap_or_default();
        let record = match (facts.body_len <= MAX_BODY).then(|| self.join.row::<Pages>(id)) {
            None => None,
            Some(Err(StoreError::Codec { .. })) => {
                self.unreadable += 1;
                None
            }
            Some(r) => r?,
        };
        let mut partial = record.is_none();
        let mut text = stored_text(record.as_ref(), Some(&doc));
        if text.len() > MAX_TEXT {
            partial = true;
            let mut end = MAX_TEXT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        Ok(Document {
            id,
            host: crate::model::host_of(&facts.url).to_string(),
            url: facts.url.clone(),
            text,
            status: facts.status,
            depth: facts.depth,
            fetched_ms: facts.fetched_ms,
            verdict: verdict.verdict.name(),
            topic_score: verdict.topic_score,
            relevance: verdict.relevance,
            date: doc.denoise.as_ref().and_then(|d| d.date.clone()),
            title: doc.title,
            partial,
        })
    }
}
