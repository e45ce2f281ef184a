//! In-memory front of the URL-seen set: a Bloom filter over url ids. A
//! "no" is certain and saves the RocksDB lookup (most links are new); a
//! "maybe" is settled by the exact `seen` CF — unless the URL is in the
//! [`SettledSet`], which remembers recently seen URLs whose verdict no
//! ordinary link can change, so the crawl's many repeat links (19 of a
//! typical page's 20) need no RocksDB lookup either.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use crate::model::{FilterReason, SeenState};
use crate::model::{IdHasher, UrlId};

const BITS_PER_URL: usize = 10;
const HASHES: u64 = 7;

pub struct SeenFront {
    bits: Vec<u64>,
    nbits: u64,
    capacity: usize,
    len: usize,
}

impl SeenFront {
    /// A filter sized for `capacity` URLs at about 1 % false positives.
    pub fn with_capacity(capacity: usize) -> SeenFront {
        let capacity = capacity.max(1 << 16);
        // Exactly 10 bits a URL (rounding up to a power of two cost up to
        // twice that: 32 MB instead of 20 at a 10,000,000-URL frontier).
        let nbits = (capacity * BITS_PER_URL).div_ceil(64) as u64 * 64;
        SeenFront {
            bits: vec![0; (nbits / 64) as usize],
            nbits,
            capacity,
            len: 0,
        }
    }

    fn positions(nbits: u64, id: UrlId) -> impl Iterator<Item = u64> {
        // Double hashing over the two halves of the (already uniform) xxh3-128 id.
        let h1 = id.0 as u64;
        let h2 = ((id.0 >> 64) as u64) | 1;
        // Multiply-shift maps a uniform 64-bit hash onto 0..nbits.
        (0..HASHES).map(move |i| {
            let h = h1.wrapping_add(i.wrapping_mul(h2));
            ((u128::from(h) * u128::from(nbits)) >> 64) as u64
        })
    }

    pub fn insert(&mut self, id: UrlId) {
        for p in Self::positions(self.nbits, id) {
            self.bits[(p / 64) as usize] |= 1 << (p % 64);
        }
        self.len += 1;
    }

    /// False means certainly never inserted.
    pub fn may_contain(&self, id: UrlId) -> bool {
        Self::positions(self.nbits, id).all(|p| self.bits[(p / 64) as usize] & (1 << (p % 64)) != 0)
    }

    /// More URLs than it was sized for: the caller should rebuild it larger.
    pub fn is_overfull(&self) -> bool {
        self.len > self.capacity
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of RAM the filter holds.
    pub fn bytes(&self) -> usize {
        self.bits.len() * 8
    }
}

/// Entries per generation: 7/8 of 2^20 buckets, the most hashbrown holds
/// without doubling, so a generation stays at ~9.4 MB (8-byte key + 1
/// control byte per bucket) and both at ~19 MB.
const GENERATION: usize = (1 << 20) / 8 * 7;

/// A bounded cache of URLs that are seen and settled: their `seen` state is
/// one an ordinary link cannot change (anything but filtered for depth,
/// for its link type, or by refilter).
/// Two generations: when the young one is full the old one is dropped, so
/// the URLs linked recently (which a crawl's links mostly point to) stay.
/// Keys are the low 64 bits of the xxh3-128 url id — the fingerprint
/// Heritrix's seen set keeps; two URLs of one crawl sharing it is about
/// one chance in 10^13 per lookup at this size.
#[derive(Default)]
pub struct SettledSet {
    young: HashSet<u64, BuildHasherDefault<IdHasher>>,
    old: HashSet<u64, BuildHasherDefault<IdHasher>>,
}

impl SettledSet {
    pub fn contains(&self, id: UrlId) -> bool {
        let k = id.0 as u64;
        self.young.contains(&k) || self.old.contains(&k)
    }

    pub fn insert(&mut self, id: UrlId) {
        let k = id.0 as u64;
        if self.old.contains(&k) {
            return;
        }
        if self.young.len() >= GENERATION {
            self.old = std::mem::take(&mut self.young);
            self.young.reserve(GENERATION);
        }
        self.young.insert(k);
    }

    /// Keeps the URL if `state` is settled, forgets it if not.
    pub fn record(&mut self, id: UrlId, state: SeenState) {
        match state {
            // A shallower link may still queue it; a followed link may queue
            // what another page's link verdict dropped.
            SeenState::Filtered(
                FilterReason::Depth | FilterReason::LinkType | FilterReason::Refiltered,
            ) => self.remove(id),
            _ => self.insert(id),
        }
    }

    /// The URL's verdict may change again (it was filtered for depth).
    pub fn remove(&mut self, id: UrlId) {
        let k = id.0 as u64;
        self.young.remove(&k);
        self.old.remove(&k);
    }

    pub fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settled_set_keeps_two_generations_and_forgets_older_ones() {
        let mut s = SettledSet::default();
        let id = |i: usize| UrlId::of(&format!("http://h/{i}"));
        for i in 0..GENERATION {
            s.insert(id(i));
        }
        assert!(s.contains(id(0)) && s.contains(id(GENERATION - 1)));
        assert!(!s.contains(id(GENERATION)));
        // The young generation is full: the next insert ages it.
        for i in GENERATION..2 * GENERATION + 1 {
            s.insert(id(i));
        }
        assert!(!s.contains(id(0)), "the first generation is dropped");
        assert!(s.contains(id(GENERATION)) && s.contains(id(2 * GENERATION)));
        s.remove(id(GENERATION));
        assert!(!s.contains(id(GENERATION)));
        assert!(s.len() <= 2 * GENERATION);
    }

    #[test]
    fn no_false_negatives_and_few_false_positives() {
        let mut f = SeenFront::with_capacity(100_000);
        for i in 0..100_000u128 {
            f.insert(UrlId::of(&format!("http://h/{i}")));
        }
        assert!((0..100_000u128).all(|i| f.may_contain(UrlId::of(&format!("http://h/{i}")))));
        let fp = (0..100_000u128)
            .filter(|i| f.may_contain(UrlId::of(&format!("http://x/{i}"))))
            .count();
        assert!(fp < 2_000, "false positives {fp}");
    }
}
