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

/// `links` key of a per-link row (schemas 1–4; since 5 a page's links
/// are one row keyed by its id): source ‖ target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OutLinkKey {
    pub src: UrlId,
    pub dst: UrlId,
}

/// `inlinks` key: target ‖ source, so a page's in-links are one prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InLinkKey {
    pub dst: UrlId,
    pub src: UrlId,
}

/// Two url ids side by side.
fn pair_key(a: UrlId, b: UrlId) -> [u8; 32] {
    let mut k = [0u8; 32];
    k[..16].copy_from_slice(&a.to_bytes());
    k[16..].copy_from_slice(&b.to_bytes());
    k
}

fn pair_from(k: &[u8]) -> Option<(UrlId, UrlId)> {
    if k.len() != 32 {
        return None;
    }
    Some((UrlId::from_slice(&k[..16])?, UrlId::from_slice(&k[16..])?))
}

impl OutLinkKey {
    pub fn to_key(&self) -> [u8; 32] {
        pair_key(self.src, self.dst)
    }

    pub fn from_key(k: &[u8]) -> Option<Self> {
        pair_from(k).map(|(src, dst)| OutLinkKey { src, dst })
    }
}

impl InLinkKey {
    pub fn to_key(&self) -> [u8; 32] {
        pair_key(self.dst, self.src)
    }

    pub fn from_key(k: &[u8]) -> Option<Self> {
        pair_from(k).map(|(dst, src)| InLinkKey { dst, src })
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
        let (x, y) = (UrlId(3), UrlId(u128::MAX));
        let out = OutLinkKey { src: x, dst: y };
        assert_eq!(OutLinkKey::from_key(&out.to_key()), Some(out));
        let inl = InLinkKey { dst: x, src: y };
        assert_eq!(InLinkKey::from_key(&inl.to_key()), Some(inl));
        // The same pair is one key or the other, by which id leads.
        assert_eq!(inl.to_key(), OutLinkKey { src: x, dst: y }.to_key());
        assert_eq!(InLinkKey::from_key(&[0; 31]), None);
    }
}

/// `simhash` keys: band (1) ‖ the hash's block in that band (u16 BE) ‖ the
/// whole hash (u64 BE) ‖ url id (16); the value is the url id (16 bytes,
/// no version byte) of the first page of the page's near-duplicate cluster.
/// A page has one row per band: its near-duplicates share a block with it
/// in at least one band (see `dedup`): the rows of a 3-byte prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimhashKey {
    pub band: u8,
    pub hash: u64,
    pub page: UrlId,
}

impl SimhashKey {
    pub const LEN: usize = 27;

    pub fn to_key(&self) -> [u8; Self::LEN] {
        let mut k = [0u8; Self::LEN];
        k[..3].copy_from_slice(&Self::prefix(self.band, self.hash));
        k[3..11].copy_from_slice(&self.hash.to_be_bytes());
        k[11..].copy_from_slice(&self.page.to_bytes());
        k
    }

    /// The rows whose hash has `hash`'s block in `band`.
    pub fn prefix(band: u8, hash: u64) -> [u8; 3] {
        let b = crate::dedup::block(hash, band).to_be_bytes();
        [band, b[0], b[1]]
    }

    pub fn from_key(k: &[u8]) -> Option<Self> {
        if k.len() != Self::LEN {
            return None;
        }
        Some(SimhashKey {
            band: k[0],
            hash: u64::from_be_bytes(k[3..11].try_into().ok()?),
            page: UrlId::from_slice(&k[11..])?,
        })
    }
}

/// `cluster_sites` key: a near-duplicate cluster's first page (16) ‖ the
/// id of a site with pages in it (8, xxh3-64 of its registrable domain,
/// or of its origin for an IP address), so a cluster's sites are one
/// prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterSiteKey {
    pub cluster: UrlId,
    pub site: u64,
}

impl ClusterSiteKey {
    pub const LEN: usize = 24;

    pub fn to_key(&self) -> [u8; Self::LEN] {
        let mut k = [0u8; Self::LEN];
        k[..16].copy_from_slice(&self.cluster.to_bytes());
        k[16..].copy_from_slice(&self.site.to_be_bytes());
        k
    }

    pub fn from_key(k: &[u8]) -> Option<Self> {
        if k.len() != Self::LEN {
            return None;
        }
        Some(ClusterSiteKey {
            cluster: UrlId::from_slice(&k[..16])?,
            site: u64::from_be_bytes(k[16..].try_into().ok()?),
        })
    }
}

/// `due` key: when (ms since the epoch, big-endian) ‖ url id (16), so the
/// revisits due first are the column family's first rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DueKey {
    pub at_ms: u64,
    pub url: UrlId,
}

impl DueKey {
    pub const LEN: usize = 24;

    pub fn to_key(&self) -> [u8; Self::LEN] {
        let mut k = [0u8; Self::LEN];
        k[..8].copy_from_slice(&self.at_ms.to_be_bytes());
        k[8..].copy_from_slice(&self.url.to_bytes());
        k
    }

    pub fn from_key(k: &[u8]) -> Option<Self> {
        if k.len() != Self::LEN {
            return None;
        }
        Some(DueKey {
            at_ms: u64::from_be_bytes(k[..8].try_into().ok()?),
            url: UrlId::from_slice(&k[8..])?,
        })
    }
}
