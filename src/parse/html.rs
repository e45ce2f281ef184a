//! A page's title, visible text and links, with each link's anchor text
//! and the text on either side (the walk in `walk.rs` reads them).

use std::borrow::Cow;

use super::html_links::{LinkPlace, ParsedLink, floor_char, place_of, take_links};
use super::meta::PageHead;
use super::walk::{Walk, walk_html};
use crate::model::{self, UrlId};

/// Bytes of the first `<title>` and `<h1>` text kept (a title left open
/// holds the whole page).
pub const HEADING_BYTES: usize = 2048;

#[derive(Debug, Default)]
pub struct ParsedPage {
    pub title: String,
    pub text: String,
    pub links: Vec<ParsedLink>,
    /// Links that were not http(s) or did not parse.
    pub skipped_links: u32,
    /// Links longer than [`model::MAX_URL_BYTES`] once resolved.
    pub too_long_links: u32,
    /// Links past the `max_links` the page was parsed with, not extracted.
    pub capped_links: u32,
    pub canonical: Option<String>,
    /// `<meta name=robots content=noindex>` (or `none`).
    pub noindex: bool,
    /// `<meta name=robots content=nofollow>` (or `none`).
    pub nofollow: bool,
    /// What denoising reads besides the text (document 003's step 1).
    pub head: PageHead,
    /// Byte offsets in `text` where each `<a href>` or `<area>` starts, in
    /// order, followed or not (a `mailto:` link is a link on its line):
    /// denoising counts a line's links with them.
    pub link_starts: Vec<u32>,
}

impl ParsedPage {
    /// Roughly the heap bytes the page holds (its text and links), for the
    /// fetch budget while it waits to be recorded.
    pub fn heap_bytes(&self) -> usize {
        let links: usize = self.links.iter().map(ParsedLink::heap_bytes).sum();
        self.title.len() + self.text.len() + links
    }
}

/// Parses decoded HTML fetched from `page_url`. `encoding` is the charset
/// the page was decoded from (link queries are encoded in it, as browsers
/// do); `agent` is the product token whose `<meta name=…>` robots
/// directives also apply. Links after the first `max_links` are counted,
/// not extracted: a 10 MB page of bare anchors holds ~500,000, and keeping
/// them all took a crawl to 1 GB of memory for that one page.
pub fn parse_html(
    html: &str,
    page_url: &url::Url,
    encoding: &'static encoding_rs::Encoding,
    agent: &str,
    max_links: usize,
) -> ParsedPage {
    let walk = walk_html(html, page_url, agent, max_links);
    let Walk {
        mut page,
        text,
        raw_links,
        base,
        canonical,
        ..
    } = walk;

    let base = base.as_ref().unwrap_or(page_url);
    page.text = text.s.trim().to_string();
    // Text starts with a word (TextBuf writes no leading space), so
    // offsets into it are offsets into the trimmed text.
    page.link_starts = raw_links
        .iter()
        .filter(|l| l.visible)
        .map(|l| u32::try_from(l.start).unwrap_or(u32::MAX))
        .collect();
    page.canonical = canonical
        .and_then(|h| model::resolve(base, &decode_entities(&h)).ok())
        .map(|u| u.as_str().to_string());
    take_links(&mut page, raw_links, &text.s, base, encoding);
    page
}

/// Where the page at `page_url` links `target` (its first link there), the
/// links past any cap included: how `why` finds a URL the caps dropped.
pub fn find_link(
    html: &str,
    page_url: &url::Url,
    encoding: &'static encoding_rs::Encoding,
    agent: &str,
    target: UrlId,
) -> Option<LinkPlace> {
    let walk = walk_html(html, page_url, agent, usize::MAX);
    let base = walk.base.as_ref().unwrap_or(page_url);
    place_of(&walk.raw_links, &walk.text.s, base, encoding, target)
}

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
fn space_len(b: &[u8], i: usize) -> usize {
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

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "hostile_tests.rs"]
mod hostile_tests;
