//! Values derived from a fetched page: its facts (the record without its
//! body), its doc (title, text) and its verdict (the out-links are in
//! `links`). Rebuildable from `pages`;
//! `refilter` rewrites the verdicts. Field order is the encoding, as in
//! `values`.

use serde::{Deserialize, Serialize};

use super::{CodecError, PageRecord, Versioned};
use crate::model::Verdict;

/// `search_log` value: the page whose search document changed (a fetch,
/// a revisit, a refilter's new verdict or text). The search index reads
/// the page as it is when it takes the row (schema 26).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchLogRecord {
    pub page: u128,
}
impl Versioned for SearchLogRecord {
    const VERSION: u8 = 1;
}

/// `page_facts` value: a page's record without its body, headers, HTTP
/// version and text length, so a scan over every page's fields reads ~120
/// bytes a page instead of the record in a blob file (schema 25).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct PageFactsRecord {
    pub url: String,
    pub status: u16,
    pub depth: u16,
    pub content_type: String,
    pub fetched_ms: u64,
    pub elapsed_ms: u32,
    /// MD5 of the decoded body.
    pub md5: [u8; 16],
    pub wire_len: u64,
    pub body_len: u64,
    pub truncated: bool,
    pub redirect_to: Option<String>,
}
impl Versioned for PageFactsRecord {
    const VERSION: u8 = 1;
}

impl PageFactsRecord {
    pub fn of(p: &PageRecord) -> PageFactsRecord {
        PageFactsRecord {
            url: p.url.clone(),
            status: p.status,
            depth: p.depth,
            content_type: p.content_type.clone(),
            fetched_ms: p.fetched_ms,
            elapsed_ms: p.elapsed_ms,
            md5: p.md5,
            wire_len: p.wire_len,
            body_len: p.body_len,
            truncated: p.truncated,
            redirect_to: p.redirect_to.clone(),
        }
    }
}

/// `docs` value: what parsing derived from a page; rebuildable from `pages`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct DocRecord {
    pub title: String,
    pub text: String,
    pub charset: String,
    /// Where the charset came from: bom, http, meta, sniff, default.
    pub charset_source: String,
    pub canonical: Option<String>,
    pub noindex: bool,
    pub nofollow: bool,
    pub outlinks: u32,
    /// Url id of the first page with the same MD5, when this one repeats it.
    pub duplicate_of: Option<u128>,
    /// What denoising found (version 4; None when it was off).
    pub denoise: Option<DenoiseRecord>,
    /// The simhash of the page's (denoised) text (version 5; None when
    /// near-duplicate detection was off or the text too short).
    pub simhash: Option<u64>,
    /// The nearest stored page it is a near-duplicate of (version 5).
    pub near: Option<NearRecord>,
    // Version 2 stored the page's verdict here; from version 3 it lives in
    // `verdicts` (a small value, so refilter rewrites no text): `PageDoc`
    // holds the two together.
}

/// A page's doc with its verdict, as `Store::doc` reads them.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PageDoc {
    pub doc: DocRecord,
    pub verdict: VerdictRecord,
}

/// What denoising (document 003) found on a page.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct DenoiseRecord {
    /// The page's title: its `<h1>` when the `<title>` names no page.
    pub title: String,
    pub author: Option<String>,
    /// `YYYY-MM-DD`.
    pub date: Option<String>,
    /// Lines of the visible text (0-based) the rules removed, each with
    /// the rule's number: 3 navigation, 4 ad, 5 text in `<…>` cut from the
    /// line, 6 copyright.
    pub noise: Vec<(u32, u8)>,
}

/// A page's nearest near-duplicate when it was stored.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NearRecord {
    /// Url id of the stored page nearest to it.
    pub of: u128,
    /// Bits their simhashes differ in.
    pub distance: u8,
    /// Url id of the first page of the cluster (the `clusters` key).
    pub cluster: u128,
    /// False when the cluster was past its budget: the page's links were
    /// not followed.
    pub expanded: bool,
}

impl DocRecord {
    /// Whether the page's links were recorded (its `links` row, and
    /// `outlinks` in the `links` counter): not for an exact duplicate, nor
    /// a near-duplicate past its cluster's budget.
    pub fn links_recorded(&self) -> bool {
        self.duplicate_of.is_none() && self.near.is_none_or(|n| n.expanded)
    }

    /// Where the page was placed among near-duplicates, if it was (an
    /// exact duplicate is not, unless an earlier version of it was): its
    /// nearest page, or None for the first page of a cluster.
    pub fn near_place(&self) -> Option<Option<NearRecord>> {
        let placed = self.simhash.is_some() && (self.duplicate_of.is_none() || self.near.is_some());
        placed.then_some(self.near)
    }
}

/// A `docs` value read in place, for scans over every page: the title and
/// text stay unvalidated bytes until a filter reads them.
#[derive(Clone, Debug, PartialEq)]
pub struct DocView<'a> {
    pub title: &'a [u8],
    pub text: &'a [u8],
    pub nofollow: bool,
    /// The verdict a version 1 or 2 value carries (v1: `keep`).
    pub legacy_verdict: Option<VerdictRecord>,
    /// What denoising found (version 4).
    pub denoise: Option<DenoiseRecord>,
}

impl<'a> DocView<'a> {
    pub fn decode(bytes: &'a [u8]) -> Result<DocView<'a>, CodecError> {
        let (version, rest) = super::split_version(bytes, 1, DocRecord::VERSION)?;
        // postcard writes a string as a length and its bytes, like a byte
        // slice: read as bytes, nothing is validated or copied.
        type Fields<'b> = (
            &'b [u8],
            &'b [u8],
            &'b [u8],
            &'b [u8],
            Option<&'b [u8]>,
            bool,
            bool,
            u32,
            Option<u128>,
        );
        let ((title, text, _, _, _, _, nofollow, _, _), rest) =
            postcard::take_from_bytes::<Fields<'a>>(rest).map_err(super::malformed)?;
        let legacy_verdict = match version {
            1 => Some(VerdictRecord::default()),
            2 => Some(VerdictRecord::decode_v1(rest)?),
            _ => None,
        };
        let denoise = match version {
            4.. => postcard::from_bytes(rest).map_err(super::malformed)?,
            _ => None,
        };
        Ok(DocView {
            title,
            text,
            nofollow,
            legacy_verdict,
            denoise,
        })
    }
}

/// `verdicts` value: a fetched page's scores and whether its links are
/// followed, as the filters last judged it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct VerdictRecord {
    pub topic_score: Option<f64>,
    pub relevance: Option<f64>,
    /// A one-byte tag since version 2 (schema 8); a name before.
    pub verdict: Verdict,
    pub verdict_detail: String,
}

impl VerdictRecord {
    /// The fields of a version 1 value (the verdict a name), without the
    /// version byte.
    pub(super) fn decode_v1(rest: &[u8]) -> Result<VerdictRecord, CodecError> {
        let ((topic_score, relevance, name, verdict_detail), _) =
            postcard::take_from_bytes::<(Option<f64>, Option<f64>, &str, String)>(rest)
                .map_err(super::malformed)?;
        let verdict = Verdict::from_stored(name)
            .ok_or_else(|| CodecError::Malformed(format!("unknown page verdict {name:?}")))?;
        Ok(VerdictRecord {
            topic_score,
            relevance,
            verdict,
            verdict_detail,
        })
    }
}

impl Versioned for VerdictRecord {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        match bytes.first() {
            Some(1) => VerdictRecord::decode_v1(&bytes[1..]),
            _ => super::decode_current(bytes),
        }
    }
}

impl Versioned for DocRecord {
    const VERSION: u8 = 5;

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        match bytes.first() {
            // Version 1: nine fields, verdict `keep`; version 2: the nine
            // fields, then the verdict (kept: a db written then has no
            // `verdicts` rows until it is refiltered).
            // The verdict version 2 carries after them is read by `DocView`
            // (`legacy_verdict`), for `Store::doc`.
            Some(1 | 2) => {
                let (v1, _) =
                    postcard::take_from_bytes::<DocV1>(&bytes[1..]).map_err(super::malformed)?;
                Ok(v1.into_doc())
            }
            // Version 3 lacks `denoise` (one 0 byte: None), version 4
            // `simhash` and `near`.
            _ => super::decode_appended(bytes, 3, &[1, 2]),
        }
    }
}

/// The nine fields of a version 1 or 2 `docs` value.
#[derive(Deserialize)]
struct DocV1 {
    title: String,
    text: String,
    charset: String,
    charset_source: String,
    canonical: Option<String>,
    noindex: bool,
    nofollow: bool,
    outlinks: u32,
    duplicate_of: Option<u128>,
}

impl DocV1 {
    fn into_doc(self) -> DocRecord {
        DocRecord {
            title: self.title,
            text: self.text,
            charset: self.charset,
            charset_source: self.charset_source,
            canonical: self.canonical,
            noindex: self.noindex,
            nofollow: self.nofollow,
            outlinks: self.outlinks,
            duplicate_of: self.duplicate_of,
            ..DocRecord::default()
        }
    }
}
