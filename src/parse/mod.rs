//! Bytes → text → title, visible text and links. Pure functions: no I/O.
//!
//! `decode` picks the charset (BOM ▸ HTTP header ▸ `<meta>` ▸ sniffing);
//! `scan` tokenizes a page and `walk` reads its tokens once for everything
//! later stages need (`page`), with `text`'s collapse and bounds, which
//! `html` and `html_links` hand out.

mod decode;
mod html;
mod html_links;
mod markdown;
mod mask;
mod meta;
mod page;
mod scan;
pub mod sitemap;
mod sitemap_scan;
mod text;
mod walk;

pub use decode::{CharsetSource, Decoded, decode, decode_owned};
pub use html::{find_link, parse_html};
pub use html_links::{CONTEXT_BYTES, DEFAULT_MAX_LINKS, LINK_BYTES, LinkPlace, RICH_LINKS};
pub use markdown::markdown;
pub use meta::PageHead;
pub use meta::{RobotsDirectives, robots_directives};
pub use page::{ParsedLink, ParsedPage};
pub use text::collapse;

/// Whether a Content-Type names something we parse as HTML.
pub fn is_html(content_type: &str) -> bool {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    mime.is_empty() || mime == "text/html" || mime == "application/xhtml+xml"
}
