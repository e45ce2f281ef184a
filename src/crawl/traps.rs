//! Spider-trap limits: URLs whose shape or number says the site generates
//! them without end (calendars, session ids in paths, relative links that
//! nest forever). Each limit is a setting; `why` names the one that bit.

use std::collections::HashMap;

use crate::model::FilterReason;
use crate::model::{CanonicalUrl, HostId};
use crate::settings::TrapLimits;
use crate::store::{Batch, Store, StoreError};

/// The path's non-empty segments.
fn segments(url: &CanonicalUrl) -> impl Iterator<Item = &str> {
    url.url().path().split('/').filter(|s| !s.is_empty())
}

pub fn path_depth(url: &CanonicalUrl) -> usize {
    segments(url).count()
}

/// The segment that appears most often in the path, and how often.
pub fn most_repeated_segment(url: &CanonicalUrl) -> Option<(&str, usize)> {
    // Sorted, equal segments are neighbours: one small Vec a new URL, no
    // hashing (this runs for every URL queued).
    let mut segs: Vec<&str> = segments(url).collect();
    segs.sort_unstable();
    let mut best: Option<(&str, usize)> = None;
    for run in segs.chunk_by(|a, b| a == b) {
        // The first of the longest runs: ties go to the smallest segment.
        if best.is_none_or(|(_, n)| run.len() > n) {
            best = Some((run[0], run.len()));
        }
    }
    best
}

/// The shape limits (pure: the URL alone decides).
pub fn shape_verdict(url: &CanonicalUrl, limits: &TrapLimits) -> Option<FilterReason> {
    if limits
        .max_path_depth
        .is_some_and(|m| path_depth(url) > usize::from(m))
    {
        return Some(FilterReason::PathDepth);
    }
    if let Some(m) = limits.max_segment_repeats
        && most_repeated_segment(url).is_some_and(|(_, n)| n > usize::from(m))
    {
        return Some(FilterReason::SegmentRepeats);
    }
    None
}

/// The `paths` key of a URL's path: host id ‖ xxh3-64 of the path.
pub fn path_key(host: HostId, url: &CanonicalUrl) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&host.to_bytes());
    k[8..].copy_from_slice(&xxhash_rust::xxh3::xxh3_64(url.url().path().as_bytes()).to_be_bytes());
    k
}

/// Query strings queued per path, as stored in `paths`, with the paths of
/// the crawl's recent URLs cached (dropped whole when it grows large: a
/// miss costs one read).
#[derive(Default)]
pub struct QueryVariants {
    cache: HashMap<[u8; 16], u32>,
}

const MAX_CACHED_PATHS: usize = 1 << 18;

impl QueryVariants {
    pub fn count(&mut self, store: &Store, key: &[u8; 16]) -> Result<u32, StoreError> {
        if let Some(n) = self.cache.get(key) {
            return Ok(*n);
        }
        let n = store.path_variants(key)?;
        if self.cache.len() >= MAX_CACHED_PATHS {
            self.cache.clear();
        }
        self.cache.insert(*key, n);
        Ok(n)
    }

    /// Records one more query string of the path (in `b`).
    pub fn add(&mut self, b: &mut Batch<'_>, key: &[u8; 16], now: u32) {
        let n = now.saturating_add(1);
        self.cache.insert(*key, n);
        b.put_path_variants(key, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::normalize;

    #[test]
    fn shapes() {
        let l = TrapLimits {
            max_path_depth: Some(3),
            max_segment_repeats: Some(2),
            ..TrapLimits::default()
        };
        let v = |u: &str| shape_verdict(&normalize(u).unwrap(), &l);
        assert_eq!(v("http://h/a/b/c"), None);
        assert_eq!(v("http://h/a/b/c/d"), Some(FilterReason::PathDepth));
        assert_eq!(
            v("http://h/a/b/a?x=/a/a"),
            None,
            "the query is not the path"
        );
        assert_eq!(v("http://h/a/a/a"), Some(FilterReason::SegmentRepeats));
        assert_eq!(v("http://h//a//b//"), None, "empty segments do not count");
        let u = normalize("http://h/x/y/x/y/x").unwrap();
        assert_eq!(most_repeated_segment(&u), Some(("x", 3)));
        let off = TrapLimits {
            max_path_depth: None,
            max_segment_repeats: None,
            ..l
        };
        assert_eq!(shape_verdict(&u, &off), None);
    }
}
