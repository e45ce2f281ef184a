//! Values derived from a fetched page: its doc (title, text) and its
//! verdict (the out-links are in `links`). Rebuildable from `pages`;
//! `refilter` rewrites the verdicts. Field order is the encoding, as in
//! `values`.

use serde::{Deserialize, Serialize};

use super::{CodecError, Versioned};
use crate::model::Verdict;

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
    // Version 2 stored the page's verdict here; from version 3 it lives in
    // `verdicts` (a small value, so refilter rewrites no text) and these
    // fields are filled from there by `Store::doc`.
    /// Formula (1) of document 000, when the topic filter ran.
    #[serde(skip)]
    pub topic_score: Option<f64>,
    /// Cosine relevance of document 001, when it ran.
    #[serde(skip)]
    pub relevance: Option<f64>,
    /// Whether the page filters passed it.
    #[serde(skip)]
    pub verdict: Verdict,
    /// The numbers behind the verdict.
    #[serde(skip)]
    pub verdict_detail: String,
}

impl DocRecord {
    /// The verdict fields as a `verdicts` value.
    pub fn verdict_record(&self) -> VerdictRecord {
        VerdictRecord {
            topic_score: self.topic_score,
            relevance: self.relevance,
            verdict: self.verdict,
            verdict_detail: self.verdict_detail.clone(),
        }
    }

    /// Takes the page's verdict from its `verdicts` value.
    pub fn set_verdict(&mut self, v: VerdictRecord) {
        self.topic_score = v.topic_score;
        self.relevance = v.relevance;
        self.verdict = v.verdict;
        self.verdict_detail = v.verdict_detail;
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
        Ok(DocView {
            title,
            text,
            nofollow,
            legacy_verdict,
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
        let verdict = Verdict::from_name(name)
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
    const VERSION: u8 = 3;

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        match bytes.first() {
            // Version 2: the version 3 fields, then the verdict (kept: a db
            // written then has no `verdicts` rows until it is refiltered).
            Some(2) => {
                let (mut doc, rest) = postcard::take_from_bytes::<DocRecord>(&bytes[1..])
                    .map_err(super::malformed)?;
                doc.set_verdict(VerdictRecord::decode_v1(rest)?);
                Ok(doc)
            }
            Some(1) => {
                #[derive(Deserialize)]
                struct V1 {
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
                let v: V1 = postcard::from_bytes(&bytes[1..]).map_err(super::malformed)?;
                Ok(DocRecord {
                    title: v.title,
                    text: v.text,
                    charset: v.charset,
                    charset_source: v.charset_source,
                    canonical: v.canonical,
                    noindex: v.noindex,
                    nofollow: v.nofollow,
                    outlinks: v.outlinks,
                    duplicate_of: v.duplicate_of,
                    ..DocRecord::default()
                })
            }
            _ => super::decode_current(bytes),
        }
    }
}
