//! In-memory front of the URL-seen set: a Bloom filter over url ids. A
//! "no" is certain and saves the RocksDB lookup (most links are new); a
//! "maybe" is settled by the exact `seen` CF.

use crate::model::UrlId;

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
        let nbits = (capacity * BITS_PER_URL).next_power_of_two() as u64;
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
        (0..HASHES).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) & (nbits - 1))
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

#[cfg(test)]
mod tests {
    use super::*;

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
