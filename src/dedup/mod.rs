//! Near-duplicate pages: a 64-bit simhash (Charikar 2002) of a page's text
//! over three-word shingles, and the bands of the classic 4-table scheme
//! (Manku, Jain, Das Sarma 2007) that find stored hashes within a few bits
//! by exact lookups instead of a scan.
//!
//! Two hashes within [`MAX_DISTANCE`] bits of each other agree on at least
//! one of their four 16-bit blocks (four blocks, at most three differ), so
//! a page's neighbours are among the pages that share one of its blocks.
//!
//! Shingles of three words, not single words or pairs: the hash of a page
//! is pulled towards the average of the shingles its language (or its
//! site's template) uses most, so the fewer distinct shingles a kind of
//! text has, the nearer unrelated pages of that kind come — pairs put 30 %
//! of the benchmark web's pages (text drawn from ~150 words) in clusters,
//! and crowded the index's blocks. One changed word alters three shingles.
//! Pages of fewer than
//! [`MIN_SHINGLES`] shingles get no hash: short or empty texts (a page of
//! links whose lines denoising removed) would all look alike.

mod bands;
mod majority;
mod words;

pub use bands::{BandIndex, IndexRow, NearMatch, Placement};
use majority::Majority;
use words::for_each_word;

/// Bands (blocks of the hash) in the index.
pub const BANDS: u8 = 4;
/// Bits per band.
const BAND_BITS: u32 = 64 / BANDS as u32;
/// The largest distance the bands guarantee to find.
pub const MAX_DISTANCE: u32 = BANDS as u32 - 1;
/// Fewer shingles than this: no hash.
pub const MIN_SHINGLES: u32 = 16;
/// `dedup.max_indexed`'s default: about 130 MB of index.
pub const DEFAULT_MAX_INDEXED: usize = 1_000_000;

/// Near-duplicate detection as the crawl applies it.
#[derive(Clone, Debug, PartialEq)]
pub struct DedupSettings {
    /// Hash each HTML page and look for stored pages within `distance`.
    pub near: bool,
    /// Bits two hashes may differ in and still be near-duplicates (at most
    /// [`MAX_DISTANCE`]).
    pub distance: u32,
    /// Pages of one site (registrable domain) in one cluster whose links
    /// are followed; past it such a page is stored but its links are not
    /// (0: no limit).
    pub cluster_budget: u32,
    /// Pages the band index holds at most, the latest placed: a bound on
    /// its memory and rows (see [`BandIndex`]).
    pub max_indexed: usize,
}

impl Default for DedupSettings {
    fn default() -> Self {
        DedupSettings {
            near: false,
            distance: MAX_DISTANCE,
            cluster_budget: 20,
            max_indexed: DEFAULT_MAX_INDEXED,
        }
    }
}

/// The simhash of `text`'s three-word shingles (words as denoising counts
/// them, ASCII letters folded to lower case); None below [`MIN_SHINGLES`].
pub fn simhash(text: &str) -> Option<u64> {
    let mut majority = Majority::default();
    let (mut a, mut b, mut seen) = (0u64, 0u64, 0u32);
    for_each_word(text, |word| {
        if seen >= 2 {
            majority.push(mix(a.rotate_left(42) ^ b.rotate_left(21) ^ word));
        }
        (a, b, seen) = (b, word, seen.saturating_add(1));
    });
    (majority.len() >= MIN_SHINGLES).then(|| majority.finish())
}

/// Bits in which two hashes differ.
pub fn distance(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// The hash's block in `band` (0..[`BANDS`]).
pub fn block(hash: u64, band: u8) -> u16 {
    (hash >> (BAND_BITS * u32::from(band))) as u16
}

/// splitmix64's finalizer: every input bit reaches every output bit.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ~800 words of varied text from a fixed generator.
    fn prose(seed: u64, words: usize) -> Vec<String> {
        let vocabulary: Vec<String> = (0..600)
            .map(|i| format!("w{:x}", mix(i) % 100_000))
            .collect();
        let mut x = seed;
        (0..words)
            .map(|_| {
                x = mix(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
                vocabulary[(x % 600) as usize].clone()
            })
            .collect()
    }

    #[test]
    fn one_changed_word_stays_within_the_distance_and_other_texts_do_not() {
        let a = prose(1, 800);
        let mut b = a.clone();
        b[400] = "different".into();
        let (ha, hb) = (
            simhash(&a.join(" ")).unwrap(),
            simhash(&b.join(" ")).unwrap(),
        );
        assert!(distance(ha, hb) <= MAX_DISTANCE, "{}", distance(ha, hb));
        for seed in 2..40 {
            let other = simhash(&prose(seed, 800).join(" ")).unwrap();
            assert!(
                distance(ha, other) > 10,
                "seed {seed}: {}",
                distance(ha, other)
            );
        }
    }

    #[test]
    fn reordered_paragraphs_and_case_stay_near() {
        let p: Vec<String> = (0..6).map(|s| prose(100 + s, 150).join(" ")).collect();
        let a = p.join("\n");
        let mut q = p.clone();
        q.swap(1, 4);
        q.swap(0, 5);
        let b = q.join("\n").to_uppercase();
        let d = distance(simhash(&a).unwrap(), simhash(&b).unwrap());
        assert!(d <= MAX_DISTANCE, "{d}");
    }

    #[test]
    fn short_texts_have_no_hash_and_bands_cover_the_hash() {
        assert_eq!(simhash("a few words only"), None);
        assert_eq!(simhash(""), None);
        let h = 0x0123_4567_89ab_cdef;
        let blocks: Vec<u16> = (0..BANDS).map(|b| block(h, b)).collect();
        assert_eq!(blocks, [0xcdef, 0x89ab, 0x4567, 0x0123]);
        // Within MAX_DISTANCE bits, one block is always the same.
        let near = h ^ (1 << 3) ^ (1 << 20) ^ (1 << 40);
        assert!((0..BANDS).any(|b| block(h, b) == block(near, b)));
    }

    #[test]
    fn the_hash_of_a_text_stays_what_stored_pages_were_hashed_with() {
        // Stored hashes are compared with new ones: a change to words,
        // shingles or mixing needs a schema migration that rehashes.
        let page = prose(7, 1200).join(" ") + " 市政府扩建公园 café naïve";
        assert_eq!(simhash(&page), Some(0x5956_0100_bcb7_ea37));
    }
}
