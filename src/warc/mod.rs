//! WARC 1.1 (ISO 28500:2017), the format archivists exchange crawls in:
//! records as trawl writes them, each its own gzip member so a reader can
//! seek to any record's offset; the files a crawl writes, their CDXJ
//! indexes, and reading WARC files back, trawl's and other crawlers'.

pub mod capture;
pub mod cdxj;
mod exchange;
mod gzip;
pub mod reader;
mod record;
pub mod records;
mod surt;
mod wacz;
mod writer;

pub use exchange::{Exchange, Profile};
pub use gzip::MAX_LEVEL as MAX_GZIP_LEVEL;
pub use record::{
    GZIP_LEVEL, Record, RecordType, gzip, http_block, new_record_id, sha1_base32, sha1_base32_of,
};
pub use surt::surt;
pub use wacz::WaczWriter;
pub use writer::{Placed, Recovered, WarcWriter, entry_of, recover_dir};
