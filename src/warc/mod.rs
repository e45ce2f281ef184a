//! WARC 1.1 (ISO 28500:2017), the format archivists exchange crawls in:
//! records as trawl writes them, each its own gzip member so a reader can
//! seek to any record's offset. This is the format layer; the crawl, the
//! exports and the import build on it.

mod record;

pub use record::{Record, RecordType, http_block, sha1_base32};
