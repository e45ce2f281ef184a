//! Composite keys. Every part is fixed width and big-endian so that a prefix
//! scan over the first part (a host, a source URL) returns exactly its rows,
//! in order.

use crate::model::{HostId, UrlId};

/// `frontier` key: host id (8) ‖ priority (8) ‖ url id (16). Lower priority
/// values are fetched first within a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FrontierKey {
    pub host: HostId,
    pub priority: u64,
    pub url: UrlId,
}

impl FrontierKey {
    pub const LEN: usize = 32;

    pub fn to_key(&self) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[..8].copy_from_slice(&self.host.to_bytes());
        k[8..16].copy_from_slice(&self.priority.to_be_bytes());
        k[16..].copy_from_slice(&self.url.to_bytes());
        k
    }

    pub fn from_key(k: &[u8]) -> Option<Self> {
        if k.len() != Self::LEN {
            return None;
        }
        Some(FrontierKey {
            host: HostId::from_slice(&k[..8])?,
            priority: u64::from_be_bytes(k[8..16].try_into().ok()?),
            url: UrlId::from_slice(&k[16..])?,
        })
    }
}

/// `links` key src ‖ dst, and `inlinks` key dst ‖ src.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkKey {
    pub first: UrlId,
    pub second: UrlId,
}

impl LinkKey {
    pub const LEN: usize = 32;

    pub fn to_key(&self) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[..16].copy_from_slice(&self.first.to_bytes());
        k[16..].copy_from_slice(&self.second.to_bytes());
        k
    }

    pub fn from_key(k: &[u8]) -> Option<Self> {
        if k.len() != Self::LEN {
            return None;
        }
        Some(LinkKey {
            first: UrlId::from_slice(&k[..16])?,
            second: UrlId::from_slice(&k[16..])?,
        })
    }
}

/// `page_index` keys: field tag (1) ‖ value ‖ url id (16), no value.
/// `status` values are a `u16` big-endian, so a range of statuses is a key
/// range; `host` values are the host name and a 0 byte, so one host is one
/// prefix. Rows are hints: `pages where` re-checks every candidate against
/// the page's records, so a row left behind by a refetch that changed the
/// status costs one lookup, never a wrong answer.
pub mod page_index {
    use crate::model::UrlId;

    pub const STATUS: u8 = 1;
    pub const HOST: u8 = 2;

    /// Bounds `from <= key < to` of the rows with `lo <= status < hi`.
    pub fn status_range(lo: u32, hi: u32) -> (Vec<u8>, Vec<u8>) {
        let bound = |s: u32| match u16::try_from(s) {
            Ok(s) => [&[STATUS][..], &s.to_be_bytes()].concat(),
            Err(_) => vec![STATUS + 1],
        };
        (bound(lo.min(hi)), bound(hi))
    }

    /// The prefix of one host's rows.
    pub fn host_prefix(host: &str) -> Vec<u8> {
        [&[HOST][..], host.as_bytes(), &[0]].concat()
    }

    /// A page's rows.
    pub fn keys(status: u16, host: &str, id: UrlId) -> [Vec<u8>; 2] {
        let id = id.to_bytes();
        [
            [&[STATUS][..], &status.to_be_bytes(), &id].concat(),
            [host_prefix(host).as_slice(), &id].concat(),
        ]
    }

    /// The page a row indexes.
    pub fn url_id(key: &[u8]) -> Option<UrlId> {
        key.len()
            .checked_sub(16)
            .and_then(|at| UrlId::from_slice(&key[at..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_keys_round_trip_and_sort_by_host_then_priority() {
        let a = FrontierKey {
            host: HostId(1),
            priority: (1 << 48) | 5,
            url: UrlId(9),
        };
        let b = FrontierKey {
            host: HostId(1),
            priority: 2 << 48,
            url: UrlId(1),
        };
        let c = FrontierKey {
            host: HostId(2),
            priority: 0,
            url: UrlId(0),
        };
        assert_eq!(FrontierKey::from_key(&a.to_key()), Some(a));
        assert!(a.to_key() < b.to_key() && b.to_key() < c.to_key());
        let l = LinkKey {
            first: UrlId(3),
            second: UrlId(u128::MAX),
        };
        assert_eq!(LinkKey::from_key(&l.to_key()), Some(l));
    }
}
