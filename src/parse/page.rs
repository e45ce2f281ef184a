//! What the parse makes of a page: its title, text, links and head.

use super::meta::PageHead;
use crate::model::CanonicalUrl;

#[derive(Debug, Default)]
pub struct ParsedPage {
    pub title: String,
    pub text: String,
    pub links: Vec<ParsedLink>,
    /// Links that were not http(s) or did not parse.
    pub skipped_links: u32,
    /// Links longer than [`crate::model::MAX_URL_BYTES`] once resolved.
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

#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLink {
    pub url: CanonicalUrl,
    pub anchor: String,
    pub before: String,
    pub after: String,
    pub nofollow: bool,
}

impl ParsedLink {
    /// What the link holds, its record included.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<ParsedLink>()
            + self.url.as_str().len()
            + self.anchor.len()
            + self.before.len()
            + self.after.len()
    }
}
