//! Words of a text as simhash reads them: runs of letters and digits, each
//! CJK ideograph or kana a word of its own (as `filter::denoise::words`
//! counts them), ASCII letters folded to lower case; each word's FNV-1a
//! hash. Reads bytes: ASCII by table, other characters decoded from their
//! UTF-8 bytes in place (a `char` iterator cost twice as much). The hashes
//! are stored: a change here needs a migration that rehashes.
//!
//! Tried and dropped (benchmark web's 11 KB English and Chinese text, 10.3 µs
//! a page here): reading ASCII eight bytes at a time (a SWAR test for the
//! end of a word, one multiply a word) took 12.3 µs, as each load's address
//! waits on the last word's end; a rotate-and-xor instead of FNV's multiply
//! 9.4 µs. The branch a byte, mispredicted at word ends, is the cost: a
//! branchless pass that only classifies the bytes takes 3.2 µs.

/// Calls `each` with the hash of each word of `text`.
pub(super) fn for_each_word(text: &str, mut each: impl FnMut(u64)) {
    let bytes = text.as_bytes();
    let (mut at, mut h, mut in_word) = (0, FNV_OFFSET, false);
    while let Some(&b) = bytes.get(at) {
        if b < 0x80 {
            if ASCII_WORD[b as usize] {
                // `| 0x20` lower-cases a letter and keeps a digit.
                h = (h ^ u64::from(b | 0x20)).wrapping_mul(FNV_PRIME);
                in_word = true;
            } else if in_word {
                each(h);
                (h, in_word) = (FNV_OFFSET, false);
            }
            at += 1;
            continue;
        }
        let (c, len) = decode(bytes, at);
        at += len;
        let cjk = crate::filter::denoise::is_cjk(c);
        if !cjk && c.is_alphanumeric() {
            h = (h ^ u64::from(u32::from(c))).wrapping_mul(FNV_PRIME);
            in_word = true;
            continue;
        }
        if in_word {
            each(h);
            (h, in_word) = (FNV_OFFSET, false);
        }
        if cjk {
            each(u64::from(u32::from(c)).wrapping_mul(FNV_PRIME));
        }
    }
    if in_word {
        each(h);
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &str) -> Vec<u64> {
        let mut out = Vec::new();
        for_each_word(t, |w| out.push(w));
        out
    }

    #[test]
    fn words_split_like_denoising_counts_them() {
        let n = |t: &str| words(t).len();
        assert_eq!(n("Hello, world! 2009"), 3);
        assert_eq!(n("市政府扩建 park"), 6);
        assert_eq!(n("café naïve"), 2);
        assert_eq!(n(""), 0);
        assert_eq!(n("a—b"), 2);
        assert_eq!(n("@[`{/:"), 0);
        let h = words("Word word WORD");
        assert!(h[0] == h[1] && h[1] == h[2]);
    }

    #[test]
    fn a_word_hashes_the_same_wherever_it_falls_and_unlike_others() {
        // Long words cross eight-byte loads; the same word at other offsets
        // and ends of the text hashes alike.
        let w = "internationalization";
        let hs = words(&format!("{w} x {w}. yy,{w}"));
        assert_eq!((hs[0], hs[2], hs[4]), (hs[0], hs[0], hs[0]));
        assert_ne!(hs[0], words("internationalisation")[0]);
        assert_ne!(words("ab")[0], words("ba")[0]);
        assert_ne!(words("a")[0], words("a0")[0]);
        // A non-ASCII letter continues its word; ASCII case folds around it.
        assert_eq!(words("Caféteria"), words("caféteria"));
        assert_eq!(words("caféteria").len(), 1);
    }
}
