//! In-links found for URLs already queued, under the importance order.
//! A link's weight waits here, with no read on the link's path, until the
//! target's host is next scheduled: then each URL's row is found through
//! its `seen` record (which holds the row's priority) and moved up.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::IdHasher;
use crate::model::{HostId, UrlId};

/// Host and URL ids are uniform hashes already (SipHash over them cost
/// the importance order ~1.5 % of its CPU: an in-link to a queued URL is
/// the commonest link).
type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Waiting URLs past which every host's boosts are applied at once, so
/// that the map stays within a few tens of MB (~40 bytes a URL).
const CAP: usize = 1 << 18;
/// A host's boosts wait this long before they are applied, so that the
/// in-links a URL gains meanwhile move its row once: each move is a
/// `seen` read, a `frontier` read and three writes, and applying them at
/// every scheduling cost the importance order 35-40 % of the crawl rate.
pub const INTERVAL_MS: u64 = 5_000;
/// A host with no more waiting than this has them applied at once (a
/// small crawl sees every rise on its next page).
const FEW: usize = 8;

#[derive(Default)]
pub struct Boosts {
    by_host: IdMap<HostId, Waiting>,
    len: usize,
}

#[derive(Default)]
struct Waiting {
    urls: IdMap<UrlId, f32>,
    /// When the oldest of them was noted.
    since_ms: u64,
}

impl Boosts {
    /// Adds an in-link of weight `w` to `url` of `host` (a URL that may be
    /// queued: whether it is is checked when the boost is applied).
    pub fn add(&mut self, host: HostId, url: UrlId, w: f32, now_ms: u64) {
        let waiting = self.by_host.entry(host).or_insert_with(|| Waiting {
            urls: IdMap::default(),
            since_ms: now_ms,
        });
        let sum = waiting.urls.entry(url).or_insert_with(|| {
            self.len += 1;
            0.0
        });
        *sum += w;
    }

    /// Host `host`'s waiting boosts if they are due at `now_ms` (few, or
    /// waiting [`INTERVAL_MS`]; any with `all`), sorted by URL so that
    /// applying them does not depend on a hash map's order.
    pub fn take(&mut self, host: HostId, now_ms: u64, all: bool) -> Vec<(UrlId, f32)> {
        let due = self
            .by_host
            .get(&host)
            .is_some_and(|w| all || w.urls.len() <= FEW || now_ms >= w.since_ms + INTERVAL_MS);
        let Some(Waiting { urls, .. }) = due.then(|| self.by_host.remove(&host)).flatten() else {
            return Vec::new();
        };
        self.len -= urls.len();
        let mut v: Vec<_> = urls.into_iter().collect();
        v.sort_unstable_by_key(|(u, _)| *u);
        v
    }

    /// Hosts with boosts waiting, sorted.
    pub fn hosts(&self) -> Vec<HostId> {
        let mut v: Vec<_> = self.by_host.keys().copied().collect();
        v.sort_unstable();
        v
    }

    pub fn is_full(&self) -> bool {
        self.len >= CAP
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_per_url_and_takes_one_host() {
        let mut b = Boosts::default();
        b.add(HostId(1), UrlId(9), 0.5, 0);
        b.add(HostId(1), UrlId(3), 1.0, 0);
        b.add(HostId(1), UrlId(9), 0.25, 0);
        b.add(HostId(2), UrlId(4), 1.0, 0);
        assert_eq!(b.len(), 3);
        assert_eq!(b.hosts(), [HostId(1), HostId(2)]);
        assert_eq!(
            b.take(HostId(1), 0, false),
            [(UrlId(3), 1.0), (UrlId(9), 0.75)]
        );
        assert_eq!(b.len(), 1);
        assert!(b.take(HostId(1), 0, false).is_empty());
        // Many wait until the interval is up (or all are asked for).
        for i in 0..20 {
            b.add(HostId(5), UrlId(100 + i), 1.0, 10);
        }
        assert!(b.take(HostId(5), 10 + INTERVAL_MS - 1, false).is_empty());
        assert_eq!(b.take(HostId(5), 10 + INTERVAL_MS, false).len(), 20);
        b.add(HostId(3), UrlId(1), 1.0, 0);
        assert_eq!(b.take(HostId(3), 0, true).len(), 1);
    }
}
