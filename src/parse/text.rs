//! Text as the parse keeps it: whitespace collapsed (over a page's whole
//! visible text, 8 bytes at a time), entities decoded, and titles and
//! headings cut to a bound on a char boundary.

use std::borrow::Cow;

/// Bytes of the first `<title>` and `<h1>` text kept (a title left open
/// holds the whole page).
pub const HEADING_BYTES: usize = 2048;

/// A title or heading: whitespace collapsed, at most [`HEADING_BYTES`].
pub(super) fn heading(text: &str) -> String {
    let mut h = collapse(&text[..floor_char(text, HEADING_BYTES * 4)]);
    h.truncate(floor_char(&h, HEADING_BYTES));
    h
}

pub(super) fn decode_entities(s: &str) -> Cow<'_, str> {
    if s.contains('&') {
        html_escape::decode_html_entities(s)
    } else {
        Cow::Borrowed(s)
    }
}

/// Whitespace collapsed to single spaces.
pub fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// The length of the whitespace char (as `char::is_whitespace` has it)
/// starting at byte `i` of valid UTF-8 `b`, or 0: not whitespace, a
/// continuation byte, or the end.
pub(super) fn space_len(b: &[u8], i: usize) -> usize {
    let Some(&c) = b.get(i) else { return 0 };
    match c {
        b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' => 1,
        0..0x80 => 0,
        // U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
        // U+205F, U+3000, matched as bytes; no other char is whitespace.
        0xC2 => match b.get(i + 1) {
            Some(0x85 | 0xA0) => 2,
            _ => 0,
        },
        0xE1..=0xE3 => match (c, b.get(i + 1), b.get(i + 2)) {
            (0xE1, Some(0x9A), Some(0x80))
            | (0xE2, Some(0x80), Some(0x80..=0x8A | 0xA8 | 0xA9 | 0xAF))
            | (0xE2, Some(0x81), Some(0x9F))
            | (0xE3, Some(0x80), Some(0x80)) => 3,
            _ => 0,
        },
        _ => 0,
    }
}

/// Whether any of the 8 bytes in `x` may start a space: one under 0x21,
/// C2, or E0-E3 (E0 and the control bytes are checked and passed over).
fn may_start_space(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The bit tricks of "Bit Twiddling Hacks": a byte under n (n <= 128),
    // a zero byte.
    let under_0x21 = x.wrapping_sub(ONES * 0x21) & !x & HIGH;
    let zero = |y: u64| y.wrapping_sub(ONES) & !y & HIGH;
    let c2 = zero(x ^ (ONES * 0xC2));
    let e0_e3 = zero((x & (ONES * 0xFC)) ^ (ONES * 0xE0));
    under_0x21 | c2 | e0_e3 != 0
}

/// Where the word starting at byte `i` of valid UTF-8 `b` ends: the next
/// whitespace char, or the end. Eight bytes at a time while none can
/// start a space (a byte at a time, the bench site's CJK text was 6 % of
/// its crawl), then [`space_len`] on each byte of the eight.
fn word_end(b: &[u8], mut i: usize) -> usize {
    loop {
        while let Some(chunk) = b.get(i..i + 8) {
            let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            if may_start_space(x) {
                break;
            }
            i += 8;
        }
        // A continuation byte, or the lead of a char that is no space, is
        // 0 here and passed over like any other.
        for j in i..(i + 8).min(b.len()) {
            if space_len(b, j) != 0 {
                return j;
            }
        }
        i = (i + 8).min(b.len());
        if i == b.len() {
            return i;
        }
    }
}

/// Visible text with whitespace collapsed and a newline per block.
#[derive(Default)]
pub(super) struct TextBuf {
    pub s: String,
    space: bool,
}

impl TextBuf {
    pub fn push(&mut self, raw: &str) {
        // A word at a time, found by bytes: one copy a word, and no char
        // decoded (trim_start/find(char::is_whitespace) decoded every
        // char: 5-8 % of a crawl's CPU).
        let b = raw.as_bytes();
        let mut i = 0;
        loop {
            let start = i;
            while let n @ 1.. = space_len(b, i) {
                i += n;
            }
            if i != start {
                self.space = true;
            }
            if i == b.len() {
                return;
            }
            let word = i;
            i = word_end(b, i);
            if self.space && !self.s.is_empty() && !self.s.ends_with('\n') {
                self.s.push(' ');
            }
            self.space = false;
            // Both ends sit on char boundaries: a word ends where a space
            // starts (a lead byte) or at the end.
            self.s.push_str(&raw[word..i]);
        }
    }
    pub fn newline(&mut self) {
        if !self.s.is_empty() && !self.s.ends_with('\n') {
            self.s.push('\n');
        }
        self.space = false;
    }
}

/// `at`, or the char boundary of `s` before it.
pub(super) fn floor_char(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}
