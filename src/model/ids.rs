//! Fixed-width ids: a URL is known by the xxh3-128 of its normalized form, a
//! host by the xxh3-64 of its origin (`scheme://host[:port]`).

use std::hash::Hasher;

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

/// The ids (and other xxh3 hashes kept in sets) are uniform hashes
/// already: hashing them again is wasted work.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64 ^ (n >> 64) as u64;
    }

    /// A small number (a feature bucket) is spread over the whole word:
    /// the hash table reads its top bits too.
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
