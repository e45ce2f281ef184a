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

/// Bands (blocks of the hash) in the index.
pub const BANDS: u8 = 4;
/// Bits per band.
const BAND_BITS: u32 = 64 / BANDS as u32;
/// The largest distance the bands guarantee to find.
pub const MAX_DISTANCE: u32 = BANDS as u32 - 1;
/// Fewer shingles than this: no hash.
pub const MIN_SHINGLES: u32 = 16;

/// Near-duplicate detection as the crawl applies it.
#[derive(Clone, Debug, PartialEq)]
pub struct DedupSettings {
    /// Hash each HTML page and look for stored pages within `distance`.
    pub near: bool,
    /// Bits two hashes may differ in and still be near-duplicates (at most
    /// [`MAX_DISTANCE`]).
    pub distance: u32,
    /// Pages of one cluster whose links are followed; past it a page is
    /// stored but its links are not (0: no limit).
    pub cluster_budget: u32,
}

impl Default for DedupSettings {
    fn default() -> Self {
        DedupSettings {
            near: false,
            distance: MAX_DISTANCE,
            cluster_budget: 20,
        }
    }
}

/// The simhash of `text`'s three-word shingles (words as denoising counts
/// them, ASCII letters folded to lower case); None below [`MIN_SHINGLES`].
pub fn simhash(text: &str) -> Option<u64> {
    let mut acc = Accumulator::default();
    let (mut a, mut b): (Option<u64>, Option<u64>) = (None, None);
    for word in words(text) {
        if let (Some(a), Some(b)) = (a, b) {
            acc.add(mix(a.rotate_left(42) ^ b.rotate_left(21) ^ word));
        }
        (a, b) = (b, Some(word));
    }
    (acc.shingles >= MIN_SHINGLES).then(|| acc.hash())
}

/// Bits in which two hashes differ.
pub fn distance(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// The hash's block in `band` (0..[`BANDS`]).
pub fn block(hash: u64, band: u8) -> u16 {
    (hash >> (BAND_BITS * u32::from(band))) as u16
}

/// Each word's hash: runs of letters and digits, each CJK ideograph or
/// kana a word of its own (as `filter::denoise::words` counts them). Reads
/// bytes: ASCII by table, other characters decoded from their UTF-8 bytes
/// in place (a `char` iterator cost twice as much over the text).
fn words(text: &str) -> impl Iterator<Item = u64> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let mut h = FNV_OFFSET;
        let mut in_word = false;
        while let Some(&b) = bytes.get(at) {
            if b < 0x80 {
                if !ASCII_WORD[b as usize] {
                    if in_word {
                        return Some(h);
                    }
                    at += 1;
                    continue;
                }
                // `| 0x20` lower-cases a letter and keeps a digit.
                h = (h ^ u64::from(b | 0x20)).wrapping_mul(FNV_PRIME);
                in_word = true;
                at += 1;
                continue;
            }
            let (c, len) = decode(bytes, at);
            if crate::filter::denoise::is_cjk(c) {
                if in_word {
                    return Some(h);
                }
                at += len;
                return Some(u64::from(u32::from(c)).wrapping_mul(FNV_PRIME));
            }
            if c.is_alphanumeric() {
                h = (h ^ u64::from(u32::from(c))).wrapping_mul(FNV_PRIME);
                in_word = true;
            } else if in_word {
                return Some(h);
            }
            at += len;
        }
        in_word.then_some(h)
    })
}

/// The character whose UTF-8 encoding starts at `bytes[at]` (valid UTF-8,
/// as a `str`'s bytes are), and its length.
fn decode(bytes: &[u8], at: usize) -> (char, usize) {
    let b = bytes[at];
    let (len, init) = match b {
        0xC0..=0xDF => (2, u32::from(b & 0x1F)),
        0xE0..=0xEF => (3, u32::from(b & 0x0F)),
        _ => (4, u32::from(b & 0x07)),
    };
    let tail = bytes.get(at + 1..at + len).unwrap_or(&[]);
    let cp = tail
        .iter()
        .fold(init, |cp, &t| (cp << 6) | u32::from(t & 0x3F));
    (char::from_u32(cp).unwrap_or('\u{FFFD}'), len)
}

/// ASCII letters and digits are word bytes; the rest of ASCII is not.
static ASCII_WORD: [bool; 128] = {
    let mut t = [false; 128];
    let mut b = 0;
    while b < 128 {
        t[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    t
};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// splitmix64's finalizer: every input bit reaches every output bit.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Each byte value with its eight bits spread to the low bit of eight
/// bytes, so one add counts a byte's bits in eight lanes at once.
static SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut bit = 0;
        while bit < 8 {
            if b & (1 << bit) != 0 {
                t[b] |= 1 << (8 * bit);
            }
            bit += 1;
        }
        b += 1;
    }
    t
};

/// Per-bit counts of the shingle hashes added, in byte lanes that are
/// emptied into `counts` before they can overflow.
struct Accumulator {
    lanes: [u64; 8],
    in_lanes: u32,
    counts: [u32; 64],
    shingles: u32,
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator {
            lanes: [0; 8],
            in_lanes: 0,
            counts: [0; 64],
            shingles: 0,
        }
    }
}

impl Accumulator {
    #[inline(always)]
    fn add(&mut self, h: u64) {
        let b = h.to_le_bytes();
        let l = &mut self.lanes;
        l[0] += SPREAD[b[0] as usize];
        l[1] += SPREAD[b[1] as usize];
        l[2] += SPREAD[b[2] as usize];
        l[3] += SPREAD[b[3] as usize];
        l[4] += SPREAD[b[4] as usize];
        l[5] += SPREAD[b[5] as usize];
        l[6] += SPREAD[b[6] as usize];
        l[7] += SPREAD[b[7] as usize];
        self.shingles += 1;
        self.in_lanes += 1;
        if self.in_lanes == 255 {
            self.empty_lanes();
        }
    }

    #[cold]
    fn empty_lanes(&mut self) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            for k in 0..8 {
                self.counts[8 * j + k] += ((*lane >> (8 * k)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.in_lanes = 0;
    }

    /// A bit is set when more than half the shingles had it set.
    fn hash(&mut self) -> u64 {
        self.empty_lanes();
        let n = self.shingles;
        (0..64).fold(0, |h, i| h | (u64::from(2 * self.counts[i] > n) << i))
    }
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
    fn words_split_like_denoising_counts_them() {
        let n = |t: &str| words(t).count();
        assert_eq!(n("Hello, world! 2009"), 3);
        assert_eq!(n("市政府扩建 park"), 6);
        assert_eq!(n("café naïve"), 2);
        assert_eq!(n(""), 0);
        let h: Vec<u64> = words("Word word WORD").collect();
        assert!(h[0] == h[1] && h[1] == h[2]);
        assert_eq!(n("a—b"), 2);
    }

    #[test]
    fn the_lanes_count_like_a_bit_loop() {
        let mut acc = Accumulator::default();
        let hashes: Vec<u64> = (0..1000).map(mix).collect();
        for h in &hashes {
            acc.add(*h);
        }
        let slow = (0..64).fold(0u64, |out, i| {
            let ones = hashes.iter().filter(|h| *h >> i & 1 == 1).count();
            out | (u64::from(2 * ones > hashes.len()) << i)
        });
        assert_eq!(acc.hash(), slow);
    }
}
