//! From the hrefs a page's walk collected to its links: resolved,
//! deduplicated and held within the caps (a count of links and the bytes
//! they may take), the rest counted. And the way back: where on a page a
//! URL was linked, for `why` when the caps dropped it.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use xxhash_rust::xxh3::Xxh3DefaultBuilder;

use super::page::{ParsedLink, ParsedPage};
use super::text::{collapse, decode_entities, floor_char};
use crate::model::{self, CanonicalUrl, IdHasher, UrlId};

/// URLs a page linked already, by id.
type Linked = HashSet<UrlId, BuildHasherDefault<IdHasher>>;

/// What a page's first link with an href came to: a repeat of the href
/// (navigation repeats: 4 in 10 of rust-doc's hrefs) is not resolved again.
#[derive(Clone, Copy)]
enum Resolved {
    Linked,
    TooLong,
    Invalid,
}

/// Bytes of visible text kept on each side of a link.
pub const CONTEXT_BYTES: usize = 50;

/// Bytes of a link's anchor text kept: an anchor longer than this is cut
/// (on a char boundary). Unclosed or nested anchors span the rest of a page;
/// 6,000 of them over 180 KB of text were ~1 GB of anchor strings.
pub const ANCHOR_BYTES: usize = 1024;

/// A link as the walk found it: its href as written and where its anchor
/// text lies in the page's text.
pub(super) struct RawLink {
    pub href: String,
    pub nofollow: bool,
    pub start: usize,
    pub end: usize,
    /// An `<a>` or `<area>` (not a frame or a meta refresh).
    pub visible: bool,
}

impl RawLink {
    /// The link to `url` with its anchor text in `text` and, when `rich`,
    /// the text on either side (else a short anchor and no context).
    fn link(&self, url: CanonicalUrl, text: &str, rich: bool) -> ParsedLink {
        let end = self.end.clamp(self.start, text.len());
        let (anchor, before, after) = match rich {
            true => (
                ANCHOR_BYTES,
                tail(&text[..self.start], CONTEXT_BYTES),
                head(&text[end..], CONTEXT_BYTES),
            ),
            false => (SLIM_ANCHOR_BYTES, String::new(), String::new()),
        };
        ParsedLink {
            url,
            anchor: collapse(&text[self.start..floor_char(text, end.min(self.start + anchor))]),
            before,
            after,
            nofollow: self.nofollow,
        }
    }
}

/// Links a page yields at most by default: real index pages (API indexes,
/// category pages, HTML sitemaps) reach tens of thousands, and Heritrix's
/// 6,000 left a sixth of a documentation site unreached.
pub const DEFAULT_MAX_LINKS: usize = 100_000;

/// Links past this many on a page keep no context and an anchor of at most
/// [`SLIM_ANCHOR_BYTES`]: an index of 20,000 links holds a few MB.
pub const RICH_LINKS: usize = 6_000;
const SLIM_ANCHOR_BYTES: usize = 80;

/// What a page's extracted links may hold in all (URLs, anchors, contexts
/// and the records): the links after it are counted as capped. Resolved
/// against a long base, `<a href=x>` grows 200-fold.
pub const LINK_BYTES: usize = 16 << 20;

/// A page's query encoder: links on a legacy-charset page encode their
/// query in it, as browsers do (None on UTF-8 pages).
fn with_query<R>(
    encoding: &'static encoding_rs::Encoding,
    f: impl FnOnce(Option<model::QueryEncoder<'_>>) -> R,
) -> R {
    let out_enc = encoding.output_encoding();
    let encode_query = query_encoder(out_enc);
    f((out_enc != encoding_rs::UTF_8).then_some(&encode_query as model::QueryEncoder<'_>))
}

/// The href of `raw`, entities decoded, untrimmed (`trim` it to resolve;
/// no second copy per link), or None when it is no link to follow
/// (empty, a fragment, javascript:, mailto:, data:, tel:).
fn href_of(raw: &RawLink) -> Option<Cow<'_, str>> {
    let href = decode_entities(&raw.href);
    let trimmed = href.trim();
    let skipped = trimmed.is_empty() || trimmed.starts_with('#') || has_skipped_scheme(trimmed);
    (!skipped).then_some(href)
}

/// Resolves the walk's links into `page.links` (text is the page's text
/// the anchors point into), within [`LINK_BYTES`]; a URL linked again is
/// the same link, its first anchor kept.
pub(super) fn take_links(
    page: &mut ParsedPage,
    raw_links: Vec<RawLink>,
    text: &str,
    base: &url::Url,
    encoding: &'static encoding_rs::Encoding,
) {
    with_query(encoding, |query| {
        let mut link_bytes = 0;
        // Navigation repeats, and a page of one link 250,000 times held
        // 16 MiB of copies.
        let mut linked = Linked::with_capacity_and_hasher(raw_links.len(), Default::default());
        let mut resolved: HashMap<&str, Resolved, Xxh3DefaultBuilder> =
            HashMap::with_capacity_and_hasher(raw_links.len(), Default::default());
        for raw in &raw_links {
            let Some(href) = href_of(raw) else {
                page.skipped_links += 1;
                continue;
            };
            if link_bytes > LINK_BYTES {
                page.capped_links = page.capped_links.saturating_add(1);
                continue;
            }
            if let Some(&before) = resolved.get(raw.href.as_str()) {
                match before {
                    Resolved::Linked => {}
                    Resolved::TooLong => page.too_long_links += 1,
                    Resolved::Invalid => page.skipped_links += 1,
                }
                continue;
            }
            let outcome = match model::resolve_encoded(base, href.trim(), query) {
                Ok(url) => {
                    if linked.insert(url.id()) {
                        let link = raw.link(url, text, page.links.len() < RICH_LINKS);
                        link_bytes += link.heap_bytes();
                        page.links.push(link);
                    }
                    Resolved::Linked
                }
                Err(model::UrlError::TooLong(_)) => {
                    page.too_long_links += 1;
                    Resolved::TooLong
                }
                Err(_) => {
                    page.skipped_links += 1;
                    Resolved::Invalid
                }
            };
            resolved.insert(raw.href.as_str(), outcome);
        }
    });
}

/// Where a page linked a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkPlace {
    /// The link's place among the page's links as written (1-based: every
    /// `<a href>`, `<area>`, frame and refresh, mailto: and repeats too),
    /// the count `crawl.max_outlinks` caps, and how many the page has.
    pub nth: usize,
    pub of: usize,
    /// Bytes the links taken before it held: past [`LINK_BYTES`] the link
    /// was counted, not taken.
    pub bytes_before: usize,
}

/// The first link of `raw_links` to `target`, with the bytes the links
/// [`take_links`] would take before it (no cap here: it only counts them).
pub(super) fn place_of(
    raw_links: &[RawLink],
    text: &str,
    base: &url::Url,
    encoding: &'static encoding_rs::Encoding,
    target: UrlId,
) -> Option<LinkPlace> {
    with_query(encoding, |query| {
        let (mut bytes_before, mut taken) = (0, 0);
        let mut linked = Linked::default();
        for (i, raw) in raw_links.iter().enumerate() {
            let Some(href) = href_of(raw) else { continue };
            let Ok(url) = model::resolve_encoded(base, href.trim(), query) else {
                continue;
            };
            if url.id() == target {
                return Some(LinkPlace {
                    nth: i + 1,
                    of: raw_links.len(),
                    bytes_before,
                });
            }
            if linked.insert(url.id()) {
                bytes_before += raw.link(url, text, taken < RICH_LINKS).heap_bytes();
                taken += 1;
            }
        }
        None
    })
}

/// Encodes text in `enc` (for link queries on legacy-charset pages).
fn query_encoder(enc: &'static encoding_rs::Encoding) -> impl Fn(&str) -> Cow<'_, [u8]> {
    move |q| enc.encode(q).0
}

/// Whether `href` starts with a scheme trawl does not follow, in any case
/// and with ASCII whitespace anywhere in its first 11 chars ignored, as
/// browsers ignore tabs and newlines in a URL (no copy a link).
fn has_skipped_scheme(href: &str) -> bool {
    let head = || {
        href.chars()
            .take(11)
            .filter(|c| !c.is_ascii_whitespace())
            .map(|c| c.to_ascii_lowercase())
    };
    ["javascript:", "mailto:", "data:", "tel:"]
        .iter()
        .any(|s| head().take(s.len()).eq(s.chars()))
}

/// The last `n` bytes of `s` (on a char boundary), trimmed.
fn tail(s: &str, n: usize) -> String {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    collapse(&s[start..])
}

/// The first `n` bytes of `s` (on a char boundary), trimmed.
fn head(s: &str, n: usize) -> String {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    collapse(&s[..end])
}
