//! Site-wide titles: a `<title>` that several pages of one host carry over
//! different `<h1>`s names the site ("Example News"), not the page, so
//! denoising takes the `<h1>` instead (document 003 §4.3, step 1).
//!
//! Pages are seen one at a time as they are fetched (or, by `refilter
//! --denoise`, in key order), so the first `SITE_WIDE_PAGES - 1` pages of a
//! host that carry its title keep it: what is known then is all a crawl
//! can act on without holding pages back.

use std::collections::HashMap;
use std::sync::Mutex;

use xxhash_rust::xxh3::xxh3_64;

/// Pages of a host with one title, not all with the same `<h1>`, that
/// make the title the site's.
pub const SITE_WIDE_PAGES: u32 = 3;

/// Titles remembered at most; past it the memory starts again (a site's
/// title recurs on its pages, so it is soon seen again).
const MAX_TITLES: usize = 1 << 16;

/// A title as seen so far on a host.
#[derive(Clone, Copy)]
struct Seen {
    /// The first page's `<h1>` (hashed).
    h1: u64,
    pages: u32,
    /// Some page had another `<h1>`.
    differs: bool,
}

/// The titles seen per host, shared by the fetch tasks.
#[derive(Default)]
pub struct SiteTitles {
    seen: Mutex<HashMap<u64, Seen>>,
}

impl SiteTitles {
    /// Counts a page of `host` with `title` and `h1`; whether the title
    /// is now known to be the site's.
    pub fn site_wide(&self, host: &str, title: &str, h1: &str) -> bool {
        let (title, h1) = (title.trim(), h1.trim());
        if title.is_empty() || h1.is_empty() {
            return false;
        }
        let key = xxh3_64(host.as_bytes()) ^ xxh3_64(title.as_bytes()).rotate_left(1);
        let h1 = xxh3_64(h1.as_bytes());
        // A panic elsewhere while it was held leaves the map as it was.
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() >= MAX_TITLES && !seen.contains_key(&key) {
            seen.clear();
        }
        let s = seen.entry(key).or_insert(Seen {
            h1,
            pages: 0,
            differs: false,
        });
        s.pages += 1;
        s.differs |= s.h1 != h1;
        s.pages >= SITE_WIDE_PAGES && s.differs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_over_three_pages_with_different_h1s_is_the_sites() {
        let t = SiteTitles::default();
        assert!(!t.site_wide("a.example", "Example News", "Park expands"));
        assert!(!t.site_wide("a.example", "Example News", "Budget passes"));
        assert!(t.site_wide("a.example", "Example News", "Rail yard sold"));
        // Another host's pages are counted apart.
        assert!(!t.site_wide("b.example", "Example News", "Park expands"));
        // The same h1 each time: a page fetched under several URLs.
        for _ in 0..5 {
            assert!(!t.site_wide("c.example", "Story", "Story"));
        }
        assert!(!t.site_wide("a.example", "", "Anything"));
    }
}
