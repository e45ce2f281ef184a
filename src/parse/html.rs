//! A page's title, visible text and links, with each link's anchor text
//! and the text on either side (the walk in `walk.rs` reads them).

use super::html_links::{LinkPlace, place_of, take_links};
use super::page::ParsedPage;
use super::text::decode_entities;
use super::walk::{Walk, walk_html};
use crate::model::{self, UrlId};

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

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "hostile_tests.rs"]
mod hostile_tests;
