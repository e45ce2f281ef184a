//! One walk over the tl DOM that yields the title, the visible text (with
//! line breaks at block elements, which the denoising rules work on), and
//! every link with its anchor text and the text on either side.

use std::borrow::Cow;

use super::html_links::{LinkPlace, ParsedLink, RawLink, floor_char, place_of, take_links};
use super::mask::{RCDATA_LT, mask_raw_text, unmask_rcdata};
use super::meta::{PageHead, Slots, attr, meta_head, meta_refresh, meta_robots};
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

enum Step {
    Enter(tl::NodeHandle),
    LeaveBlock,
    LeaveAnchor(usize),
    /// A heading read for the head ends: its text is the page's from this
    /// offset, for the slots named.
    LeaveHeading(usize, Slots),
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

/// The walk over `html`'s DOM pieces, keeping the first `max_links` links.
fn walk_html<'a>(html: &str, page_url: &'a url::Url, agent: &'a str, max_links: usize) -> Walk<'a> {
    let masked = mask_raw_text(html);
    // Whether a title or textarea had a `<` masked: only then does text
    // need unmasking (one scan a page instead of one a text node).
    let rcdata =
        matches!(masked, Cow::Owned(_)) && memchr::memchr(RCDATA_LT, masked.as_bytes()).is_some();
    let mut walk = Walk {
        rcdata,
        page: ParsedPage::default(),
        text: TextBuf::default(),
        raw_links: Vec::new(),
        base: None,
        canonical: None,
        page_url,
        agent,
        max_links,
        open_anchor: None,
        heading_open: false,
    };
    for src in dom_chunks(&masked) {
        if let Ok(dom) = tl::parse(src, tl::ParserOptions::default()) {
            walk.dom(&dom, src);
        }
    }
    walk
}

/// Pages above this are parsed as several DOMs of about this size, cut
/// before a `<`: tl's DOM takes ~40 bytes per byte of tag-dense HTML, so a
/// 10 MB page took ~400 MB in one piece, and a 1 MiB piece ~40 MB. An
/// element open across a cut loses what follows it in the next piece (its
/// anchor text, say), which only pages this large pay.
const DOM_CHUNK_BYTES: usize = 256 << 10;

/// `html` in pieces of about [`DOM_CHUNK_BYTES`], each starting at a `<`
/// (so on a char boundary); one piece when it is smaller.
fn dom_chunks(html: &str) -> impl Iterator<Item = &str> {
    let mut rest = html;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = if rest.len() <= DOM_CHUNK_BYTES {
            rest.len()
        } else {
            memchr::memchr(b'<', &rest.as_bytes()[DOM_CHUNK_BYTES..])
                .map_or(rest.len(), |p| DOM_CHUNK_BYTES + p)
        };
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

/// What the tree walk fills in, across the pieces of a page.
struct Walk<'a> {
    page: ParsedPage,
    text: TextBuf,
    raw_links: Vec<RawLink>,
    base: Option<url::Url>,
    /// `<` was masked in a title or textarea (see [`RCDATA_LT`]).
    rcdata: bool,
    /// The first `<link rel=canonical>`'s href (not a link: it takes no
    /// share of `max_links`).
    canonical: Option<String>,
    page_url: &'a url::Url,
    agent: &'a str,
    max_links: usize,
    /// The `<a>` whose text is being read: a new `<a>` closes it, as
    /// HTML's parser does (an `<a>` inside an `<a>` ends the first), so an
    /// unclosed anchor does not span the rest of the page.
    open_anchor: Option<usize>,
    /// A heading is being read for the head (a heading inside it is its
    /// text).
    heading_open: bool,
}

impl Walk<'_> {
    /// Records a link starting at the current text position, unless the
    /// page has given `max_links` already (then it is only counted).
    fn add_link(&mut self, href: String, nofollow: bool, visible: bool) -> Option<usize> {
        if self.raw_links.len() >= self.max_links {
            self.page.capped_links = self.page.capped_links.saturating_add(1);
            return None;
        }
        let start = self.text.s.len();
        if visible && let Some(open) = self.open_anchor.take() {
            self.raw_links[open].end = start;
        }
        self.raw_links.push(RawLink {
            href,
            nofollow,
            start,
            end: start,
            visible,
        });
        let i = self.raw_links.len() - 1;
        if visible {
            self.open_anchor = Some(i);
        }
        Some(i)
    }

    /// Ends link `i`'s text here, unless a later `<a>` ended it already.
    fn close_anchor(&mut self, i: usize) {
        if self.open_anchor == Some(i) {
            self.raw_links[i].end = self.text.s.len();
            self.open_anchor = None;
        }
    }

    /// Walks `dom`, parsed from `src`, in document order.
    fn dom(&mut self, dom: &tl::VDom<'_>, src: &str) {
        let parser = dom.parser();
        let mut stack: Vec<Step> = dom
            .children()
            .iter()
            .rev()
            .map(|h| Step::Enter(*h))
            .collect();
        while let Some(step) = stack.pop() {
            let handle = match step {
                Step::Enter(h) => h,
                Step::LeaveBlock => {
                    self.text.newline();
                    continue;
                }
                Step::LeaveAnchor(i) => {
                    self.close_anchor(i);
                    continue;
                }
                Step::LeaveHeading(start, slots) => {
                    self.page.head.fill(heading(&self.text.s[start..]), slots);
                    self.heading_open = false;
                    continue;
                }
            };
            let Some(node) = handle.get(parser) else {
                continue;
            };
            match node {
                tl::Node::Raw(raw) => {
                    let raw = utf8(src, raw);
                    let t = decode_entities(&raw);
                    if self.rcdata {
                        self.text.push(&unmask_rcdata(&t));
                    } else {
                        self.text.push(&t);
                    }
                }
                tl::Node::Comment(_) => {}
                tl::Node::Tag(tag) => {
                    let mut lower = [0u8; 16];
                    let name = tag_name(tag.name().as_bytes(), &mut lower);
                    let Some(anchor) = self.open_tag(tag, name, parser, src) else {
                        continue;
                    };
                    if let Some(i) = anchor {
                        stack.push(Step::LeaveAnchor(i));
                    }
                    let head = &mut self.page.head;
                    head.h1_count += u32::from(name == "h1");
                    let slots = (!self.heading_open).then(|| head.heading_slots(tag, name));
                    if let Some(slots) = slots.flatten() {
                        // Its text is read as the walk passes it (tl's
                        // inner_text recursed once per nesting level).
                        self.heading_open = true;
                        stack.push(Step::LeaveHeading(self.text.s.len(), slots));
                    }
                    if is_block(name) {
                        self.text.newline();
                        stack.push(Step::LeaveBlock);
                    }
                    for child in tag.children().top().as_slice().iter().rev() {
                        stack.push(Step::Enter(*child));
                    }
                }
            }
        }
    }

    /// Acts on an opening tag named `name`. Returns None when its content
    /// is not walked, else the link it opens (its text ends where the tag
    /// does).
    fn open_tag(
        &mut self,
        tag: &tl::HTMLTag<'_>,
        name: &str,
        parser: &tl::Parser<'_>,
        src: &str,
    ) -> Option<Option<usize>> {
        match name {
            // A crawler runs no scripts, so <noscript> is markup whose
            // links count; these are not.
            "script" | "style" | "template" | "svg" => return None,
            "title" => {
                // Raw text (masked): `<title><div>…` is its title.
                if self.page.title.is_empty() {
                    let t = flat_text(tag, parser, src);
                    self.page.title = heading(&unmask_rcdata(&decode_entities(&t)));
                }
                return None;
            }
            "base" => {
                if self.base.is_none()
                    && let Some(h) = attr(tag, "href")
                {
                    self.base = self.page_url.join(h.trim()).ok();
                }
            }
            "meta" => {
                meta_robots(tag, self.agent, &mut self.page);
                meta_head(tag, &mut self.page.head);
                if let Some(target) = meta_refresh(tag) {
                    self.add_link(target, false, false);
                }
            }
            "link" => {
                let rel = attr(tag, "rel").unwrap_or_default();
                if self.canonical.is_none()
                    && has_token(&rel, "canonical")
                    && let Some(h) = attr(tag, "href")
                {
                    self.canonical = Some(h.into_owned());
                }
            }
            "a" | "area" | "frame" | "iframe" => {
                let href = if name.ends_with("frame") {
                    attr(tag, "src")
                } else {
                    attr(tag, "href")
                };
                if let Some(href) = href {
                    let nofollow = attr(tag, "rel").is_some_and(|r| has_token(&r, "nofollow"));
                    let visible = !name.ends_with("frame");
                    return Some(self.add_link(href.into_owned(), nofollow, visible));
                }
            }
            "time" if self.page.head.date.is_none() => {
                self.page.head.date = attr(tag, "datetime").map(|d| d.trim().to_string());
            }
            "br" | "hr" => self.text.newline(),
            _ => {}
        }
        Some(None)
    }
}

/// The text under `tag` in document order, read with an explicit stack
/// (tl's `inner_text` recurses once per nesting level: a page of 50,000
/// nested tags overflowed a worker's stack), at most about
/// [`HEADING_BYTES`] × 4 of it (entities are decoded after).
fn flat_text(tag: &tl::HTMLTag<'_>, parser: &tl::Parser<'_>, src: &str) -> String {
    let mut out = String::new();
    let mut stack: Vec<tl::NodeHandle> = tag
        .children()
        .top()
        .as_slice()
        .iter()
        .rev()
        .copied()
        .collect();
    while let Some(h) = stack.pop() {
        if out.len() > HEADING_BYTES * 4 {
            break;
        }
        match h.get(parser) {
            Some(tl::Node::Raw(raw)) => out.push_str(&utf8(src, raw)),
            Some(tl::Node::Tag(t)) => {
                stack.extend(t.children().top().as_slice().iter().rev().copied())
            }
            _ => {}
        }
    }
    out
}

/// A title or heading: whitespace collapsed, at most [`HEADING_BYTES`].
pub(super) fn heading(text: &str) -> String {
    let mut h = collapse(&text[..floor_char(text, HEADING_BYTES * 4)]);
    h.truncate(floor_char(&h, HEADING_BYTES));
    h
}

/// Whether a space-separated attribute value holds `token` (any case).
fn has_token(value: &str, token: &str) -> bool {
    value
        .split_ascii_whitespace()
        .any(|t| t.eq_ignore_ascii_case(token))
}

fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "dd"
            | "details"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "li"
            | "main"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "section"
            | "table"
            | "td"
            | "th"
            | "tr"
            | "ul"
            | "option"
            | "caption"
    )
}

/// tl's bytes as text. tl parses `src` and hands out slices of it cut at
/// ASCII delimiters, so a slice is found in `src` by its address and taken
/// from there: `str::get` checks only its two ends are char boundaries,
/// where `from_utf8` re-validated every byte of the page's text (4 % of a
/// crawl's CPU). Bytes from anywhere else are validated as before.
fn utf8<'a>(src: &'a str, b: &'a tl::Bytes<'_>) -> Cow<'a, str> {
    let bytes = b.as_bytes();
    let start = (bytes.as_ptr() as usize).wrapping_sub(src.as_ptr() as usize);
    if let Some(s) = start
        .checked_add(bytes.len())
        .and_then(|end| src.get(start..end))
    {
        return Cow::Borrowed(s);
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A tag name in lower case, in `buf` (no allocation a tag); names longer
/// than any this parser acts on come back empty.
fn tag_name<'b>(raw: &[u8], buf: &'b mut [u8; 16]) -> &'b str {
    let Some(buf) = buf.get_mut(..raw.len()) else {
        return "";
    };
    for (d, s) in buf.iter_mut().zip(raw) {
        *d = s.to_ascii_lowercase();
    }
    std::str::from_utf8(buf).unwrap_or("")
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
        // U+0085, U+00A0, U+1680, U+2000-U+205F, U+3000: lead bytes C2, E1,
        // E2, E3; any other non-ASCII char is not whitespace.
        0xC2 | 0xE1 | 0xE2 | 0xE3 => {
            let n = if c == 0xC2 { 2 } else { 3 };
            let ch = b.get(i..i + n).and_then(|s| std::str::from_utf8(s).ok());
            match ch.and_then(|s| s.chars().next()) {
                Some(ch) if ch.is_whitespace() => n,
                _ => 0,
            }
        }
        _ => 0,
    }
}

/// Visible text with whitespace collapsed and a newline per block.
#[derive(Default)]
struct TextBuf {
    s: String,
    space: bool,
}

impl TextBuf {
    fn push(&mut self, raw: &str) {
        // A word at a time, found by bytes: one copy a word, and no char
        // decoding except at the four lead bytes a non-ASCII space can
        // start with (trim_start/find(char::is_whitespace) decoded every
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
            while i < b.len() && space_len(b, i) == 0 {
                i += 1;
            }
            if self.space && !self.s.is_empty() && !self.s.ends_with('\n') {
                self.s.push(' ');
            }
            self.space = false;
            // Both ends sit on char boundaries: a word ends where a space
            // starts (a lead byte) or at the end.
            self.s.push_str(&raw[word..i]);
        }
    }
    fn newline(&mut self) {
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
