//! Fixed-width ids: a URL is known by the xxh3-128 of its normalized form, a
//! host by the xxh3-64 of its origin (`scheme://host[:port]`).

use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

/// Id of a normalized URL (xxh3-128). Big-endian bytes are its key form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UrlId(pub u128);

impl UrlId {
    pub fn of(normalized_url: &str) -> Self {
        UrlId(xxh3_128(normalized_url.as_bytes()))
    }
    pub fn to_bytes(self) -> [u8; 16] {
        self.0.to_be_bytes()
    }
    pub fn from_slice(b: &[u8]) -> Option<Self> {
        Some(UrlId(u128::from_be_bytes(b.get(..16)?.try_into().ok()?)))
    }
}

/// Id of a host key, the origin `scheme://host[:port]` (xxh3-64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub u64);

impl HostId {
    pub fn of(host_key: &str) -> Self {
        HostId(xxh3_64(host_key.as_bytes()))
    }
    pub fn to_bytes(self) -> [u8; 8] {
        self.0.to_be_bytes()
    }
    pub fn from_slice(b: &[u8]) -> Option<Self> {
        Some(HostId(u64::from_be_bytes(b.get(..8)?.try_into().ok()?)))
    }
}

impl std::fmt::Display for UrlId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl std::fmt::Display for HostId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}
