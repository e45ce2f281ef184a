//! Plain types shared by every layer: ids, canonical URLs, links, outcomes.
//!
//! Nothing here knows about RocksDB, HTTP or HTML; the layers above build on
//! these types and convert them to and from their own representations.

mod ids;
mod named;
mod outcome;
mod url;
mod utc;
mod verdict;

pub use ids::{HostId, IdHasher, UrlId};
pub use named::NamedEnum;
pub(crate) use named::named_enum;
pub use outcome::{FailReason, FilterReason, RobotsOutcome, RobotsRecord, SeenState};
pub use url::{
    CanonicalUrl, MAX_URL_BYTES, QueryEncoder, UrlError, host_of, normalize, parsed_host, resolve,
    resolve_encoded,
};
pub use utc::Utc;
pub use verdict::{LinkType, LinkVerdict, Verdict};

/// Milliseconds since the Unix epoch: the one clock stored on disk.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
