//! `warc` rows: where a page's latest fetch is archived when the crawl
//! writes WARC (`warc.dir`), and what a later revisit record of it refers
//! to.

use serde::{Deserialize, Serialize};

use super::Versioned;

/// A page's latest response or revisit record in the crawl's WARC files.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct WarcRow {
    /// The record's `WARC-Target-URI` (the page's URL).
    pub url: String,
    /// The WARC file's path as the crawl wrote it (its `warc.dir` joined
    /// with the file's final name).
    pub file: String,
    /// The record's gzip member: its offset and length in the file.
    pub offset: u64,
    pub length: u64,
    /// The record's `WARC-Date` (ms since the epoch).
    pub date_ms: u64,
    /// Its `WARC-Payload-Digest` (`sha1:…`).
    pub digest: String,
    /// A revisit record: the URI and date of the response it refers to.
    /// None for a response record.
    pub refers_to: Option<(String, u64)>,
    /// A revisit record: the file (path as `file`) holding that response.
    pub refers_file: Option<String>,
}

impl Versioned for WarcRow {
    const VERSION: u8 = 1;
}
