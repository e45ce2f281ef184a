//! One pass over a page's tokens that yields the title, the visible text
//! (with line breaks at block elements, which the denoising rules work
//! on), and every link with where its anchor text lies. Elements nest as
//! tl nested them: a closing tag ends the element open last when it names
//! it and is ignored otherwise, and what is still open ends with the page
//! (or its piece).

use std::borrow::Cow;

use super::html_links::RawLink;
use super::mask::{RCDATA_LT, mask_raw_text, unmask_rcdata};
use super::meta::{Slots, meta_head, meta_refresh, meta_robots};
use super::page::ParsedPage;
use super::scan::{Sink, Tag, VOID_TAGS, scan};
use super::text::{HEADING_BYTES, TextBuf, decode_entities, heading};

/// The walk over `html`'s pieces, keeping the first `max_links` links.
pub(super) fn walk_html<'a>(
    html: &str,
    page_url: &'a url::Url,
    agent: &'a str,
    max_links: usize,
) -> Walk<'a> {
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
    for piece in dom_chunks(&masked) {
        let mut tree = Tree {
            walk: &mut walk,
            open: Vec::new(),
            skipping: 0,
            title: None,
        };
        scan(piece, &mut tree);
        while !tree.open.is_empty() {
            tree.pop();
        }
    }
    walk
}

/// Pages above this are walked in pieces of about this size, cut before a
/// `<`, each piece's elements ending with it. This kept tl's DOM (~40
/// bytes a byte of markup) to ~10 MB, and keeps the text and links as
/// they were: an element open across a cut loses what follows it in the
/// next piece (its anchor text, say), which only pages this large pay.
pub(super) const DOM_CHUNK_BYTES: usize = 256 << 10;

/// `html` in pieces of about [`DOM_CHUNK_BYTES`], each starting at a `<`
/// (so on a char boundary); one piece when it is smaller.
pub(super) fn dom_chunks(html: &str) -> impl Iterator<Item = &str> {
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

/// What the walk fills in, across the pieces of a page.
pub(super) struct Walk<'a> {
    pub page: ParsedPage,
    pub text: TextBuf,
    pub raw_links: Vec<RawLink>,
    pub base: Option<url::Url>,
    /// `<` was masked in a title or textarea (see [`RCDATA_LT`]).
    rcdata: bool,
    /// The first `<link rel=canonical>`'s href (not a link: it takes no
    /// share of `max_links`).
    pub canonical: Option<String>,
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

/// An open element and what its end does.
struct Element<'p> {
    /// Its name as written: the closing tag that ends it names it so.
    name: &'p str,
    /// Its content is not read (script, style, template, svg, title).
    skipped: bool,
    /// A `<title>` whose text becomes the page's.
    title: bool,
    block: bool,
    /// A heading read for the head: where its text starts, and its slots.
    heading: Option<(usize, Slots)>,
    /// The link whose anchor text it holds.
    anchor: Option<usize>,
}

/// One piece's open elements over the walk.
struct Tree<'w, 'a, 'p> {
    walk: &'w mut Walk<'a>,
    open: Vec<Element<'p>>,
    /// Open elements whose content is not read.
    skipping: usize,
    /// The text of the open `<title>` that names the page, so far.
    title: Option<String>,
}

impl<'p> Sink<'p> for Tree<'_, '_, 'p> {
    fn text(&mut self, raw: &str) {
        // A title reads the text of everything inside it, a little past
        // the heading's length (entities are decoded after).
        if let Some(t) = &mut self.title
            && t.len() <= HEADING_BYTES * 4
        {
            t.push_str(raw);
        }
        if self.skipping > 0 {
            return;
        }
        let t = decode_entities(raw);
        if self.walk.rcdata {
            self.walk.text.push(&unmask_rcdata(&t));
        } else {
            self.walk.text.push(&t);
        }
    }

    fn open(&mut self, tag: &Tag<'p, '_>, self_closing: bool) {
        let mut element = Element {
            name: tag.name,
            skipped: true,
            title: false,
            block: false,
            heading: None,
            anchor: None,
        };
        if self.skipping == 0 {
            element = self.walk.enter(tag, element);
            if element.title {
                self.title = Some(String::new());
            }
        }
        if self_closing || VOID_TAGS.contains(&tag.name) {
            self.leave(element);
        } else {
            self.skipping += usize::from(element.skipped);
            self.open.push(element);
        }
    }

    fn close(&mut self, name: &'p str) {
        if self.open.last().is_some_and(|e| e.name == name) {
            self.pop();
        }
    }
}

impl Tree<'_, '_, '_> {
    /// The element open last ends.
    fn pop(&mut self) {
        if let Some(element) = self.open.pop() {
            self.skipping -= usize::from(element.skipped);
            self.leave(element);
        }
    }

    /// What an element's end does to the page read so far.
    fn leave(&mut self, element: Element<'_>) {
        let walk = &mut *self.walk;
        if element.title {
            let t = self.title.take().unwrap_or_default();
            walk.page.title = heading(&unmask_rcdata(&decode_entities(&t)));
        }
        if element.block {
            walk.text.newline();
        }
        if let Some((start, slots)) = element.heading {
            walk.page.head.fill(heading(&walk.text.s[start..]), slots);
            walk.heading_open = false;
        }
        if let Some(i) = element.anchor {
            walk.close_anchor(i);
        }
    }
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

    /// Acts on an opening tag whose content is read: `element` as it
    /// opens, with what its end will do.
    fn enter<'p>(&mut self, tag: &Tag<'p, '_>, mut element: Element<'p>) -> Element<'p> {
        let mut lower = [0u8; 16];
        let name = tag_name(tag.name.as_bytes(), &mut lower);
        let Some(anchor) = self.open_tag(tag, name) else {
            // Raw text (masked): `<title><div>…` is its title.
            element.title = name == "title" && self.page.title.is_empty();
            return element;
        };
        element.skipped = false;
        element.anchor = anchor;
        let head = &mut self.page.head;
        head.h1_count += u32::from(name == "h1");
        if !self.heading_open
            && let Some(slots) = head.heading_slots(tag, name)
        {
            // Its text is read as the walk passes it.
            self.heading_open = true;
            element.heading = Some((self.text.s.len(), slots));
        }
        if is_block(name) {
            self.text.newline();
            element.block = true;
        }
        element
    }

    /// Acts on an opening tag named `name`. Returns None when its content
    /// is not read, else the link it opens (its text ends where the tag
    /// does).
    fn open_tag(&mut self, tag: &Tag<'_, '_>, name: &str) -> Option<Option<usize>> {
        match name {
            // A crawler runs no scripts, so <noscript> is markup whose
            // links count; these are not.
            "script" | "style" | "template" | "svg" | "title" => return None,
            "base" => {
                if self.base.is_none()
                    && let Some(h) = tag.attr("href")
                {
                    self.base = self.page_url.join(h.trim()).ok();
                }
            }
            "meta" => {
                if let Some(d) = meta_robots(tag, self.agent) {
                    self.page.noindex |= d.noindex;
                    self.page.nofollow |= d.nofollow;
                }
                meta_head(tag, &mut self.page.head);
                if let Some(target) = meta_refresh(tag) {
                    self.add_link(target, false, false);
                }
            }
            "link" => {
                let rel = tag.attr("rel").unwrap_or_default();
                if self.canonical.is_none()
                    && has_token(rel, "canonical")
                    && let Some(h) = tag.attr("href")
                {
                    self.canonical = Some(h.to_string());
                }
            }
            "a" | "area" | "frame" | "iframe" => {
                let href = if name.ends_with("frame") {
                    tag.attr("src")
                } else {
                    tag.attr("href")
                };
                if let Some(href) = href {
                    let nofollow = tag.attr("rel").is_some_and(|r| has_token(r, "nofollow"));
                    let visible = !name.ends_with("frame");
                    return Some(self.add_link(href.to_string(), nofollow, visible));
                }
            }
            "time" if self.page.head.date.is_none() => {
                self.page.head.date = tag.attr("datetime").map(|d| d.trim().to_string());
            }
            "br" | "hr" => self.text.newline(),
            _ => {}
        }
        Some(None)
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

/// Whether a space-separated attribute value holds `token` (any case).
fn has_token(value: &str, token: &str) -> bool {
    value
        .split_ascii_whitespace()
        .any(|t| t.eq_ignore_ascii_case(token))
}

/// Elements whose start and end break the text's line.
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
