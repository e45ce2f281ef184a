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

/// `inlinks` key of a pair row (schemas 1–22, still read): target ‖
/// source, no value. With group rows (see [`InLinkRow`]) a target's
/// in-links are one prefix.
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

/// An `inlinks` row read (schema 23): a pair row (key target ‖ source, no
/// value) or a group row (key target ‖ window `u64` BE, value the sources
/// of that window's links to the target, 16 bytes each, ascending).
pub struct InLinkRow<'a> {
    pub dst: UrlId,
    sources: Sources<'a>,
}

enum Sources<'a> {
    One(UrlId),
    Group(&'a [u8]),
}

impl<'a> InLinkRow<'a> {
    /// The row of `key` and `value`; None for a key of neither shape or a
    /// group value that is not whole ids.
    pub fn read(key: &[u8], value: &'a [u8]) -> Option<InLinkRow<'a>> {
        if let Some(k) = InLinkKey::from_key(key) {
            return Some(InLinkRow {
                dst: k.dst,
                sources: Sources::One(k.src),
            });
        }
        if key.len() != 24 || value.is_empty() || !value.len().is_multiple_of(16) {
            return None;
        }
        Some(InLinkRow {
            dst: UrlId::from_slice(&key[..16])?,
            sources: Sources::Group(value),
        })
    }

    /// The pages linking to `dst` this row holds.
    pub fn sources(&self) -> impl Iterator<Item = UrlId> + use<'a> {
        let (one, group) = match self.sources {
            Sources::One(src) => (Some(src), &[][..]),
            Sources::Group(v) => (None, v),
        };
        one.into_iter()
            .chain(group.chunks_exact(16).filter_map(UrlId::from_slice))
    }

    /// The key of `dst`'s group row of `window`.
    pub fn group_key(dst: UrlId, window: u64) -> [u8; 24] {
        let mut k = [0u8; 24];
        k[..16].copy_from_slice(&dst.to_bytes());
        k[16..].copy_from_slice(&window.to_be_bytes());
        k
    }

    /// A group row's value: `sources`, which must be ascending.
    pub fn group_value(sources: &[UrlId]) -> Vec<u8> {
        debug_assert!(sources.is_sorted());
        sources.iter().flat_map(|s| s.to_bytes()).collect()
    }
}

/// `inlink_pages` keys (schema 23): `p` ‖ window (`u64` BE) ‖ source, no
/// value, for a page whose in-links wait in the crawl's window; `g` ‖
/// source, value the window (`u64` BE) whose group rows hold them.
pub mod inlink_pages {
    use crate::model::UrlId;

    pub const PENDING: u8 = b'p';
    pub const PLACED: u8 = b'g';

    pub fn pending_prefix(window: u64) -> [u8; 9] {
        let mut k = [PENDING; 9];
        k[1..].copy_from_slice(&window.to_be_bytes());
        k
    }

    pub fn pending(window: u64, src: UrlId) -> [u8; 25] {
        let mut k = [0u8; 25];
        k[..9].copy_from_slice(&pending_prefix(window));
        k[9..].copy_from_slice(&src.to_bytes());
        k
    }

    /// The source of a `pending` key.
    pub fn pending_source(k: &[u8]) -> Option<UrlId> {
        (k.len() == 25 && k[0] == PENDING)
            .then(|| UrlId::from_slice(&k[9..]))
            .flatten()
    }

    pub fn placed(src: UrlId) -> [u8; 17] {
        let mut k = [PLACED; 17];
        k[1..].copy_from_slice(&src.to_bytes());
        k
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
        let pair = InLinkRow::read(&inl.to_key(), &[]).unwrap();
        assert_eq!((pair.dst, pair.sources().collect::<Vec<_>>()), (x, vec![y]));
        let srcs = [UrlId(3), UrlId(u128::MAX)];
        let value = InLinkRow::group_value(&srcs);
        let group = InLinkRow::read(&InLinkRow::group_key(x, 7), &value).unwrap();
        assert_eq!(
            (group.dst, group.sources().collect::<Vec<_>>()),
            (x, srcs.to_vec())
        );
        assert!(InLinkRow::read(&InLinkRow::group_key(x, 7), &value[1..]).is_none());
        assert!(InLinkRow::read(&InLinkRow::group_key(x, 7), &[]).is_none());
        let p = inlink_pages::pending(9, y);
        assert!(p.starts_with(&inlink_pages::pending_prefix(9)));
        assert_eq!(inlink_pages::pending_source(&p), Some(y));
        assert_eq!(inlink_pages::pending_source(&inlink_pages::placed(y)), None);
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
