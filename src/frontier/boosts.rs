//! In-links found for URLs already queued, under the importance order.
//! A link's weight waits here, with no read on the link's path, until the
//! target's host is next scheduled: then each URL's row is found through
//! its `seen` record (which holds the row's priority) and moved up.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::model::IdHasher;
use crate::model::{HostId, UrlId};

/// In-links past which every host's boosts are applied at once, so that
/// the lists stay within ~12 MB (24 bytes an in-link).
const CAP: usize = 1 << 19;
/// A host's boosts wait this long before they are applied, so that the
/// in-links a URL gains meanwhile move its row once: each move is a
/// `seen` read, a `frontier` read and three writes. In a 100,000-page
/// benchmark crawl, 5 s moved 135,000 rows (1.1 s of the crawl's CPU) and
/// 10 s 49,000 (0.4 s). (A host whose whole queue is in memory has them
/// applied at once: the caller asks for all then.)
pub const INTERVAL_MS: u64 = 10_000;

#[derive(Default)]
pub struct Boosts {
    /// Host ids are uniform hashes already.
    by_host: HashMap<HostId, Waiting, BuildHasherDefault<IdHasher>>,
    len: usize,
}

/// A host's in-links in the order they came: appending is the commonest
/// step of the importance order (an in-link to a queued URL is the
/// commonest link), so it hashes nothing; they are summed per URL when
/// taken.
struct Waiting {
    links: Vec<InLink>,
    /// When the oldest of them was noted.
    since_ms: u64,
}

/// A URL id as two words: 24 bytes with the weight, not a `u128`'s 32.
#[derive(Clone, Copy)]
struct InLink {
    url: [u64; 2],
    w: f32,
}

impl Boosts {
    /// Adds an in-link of weight `w` to `url` of `host` (a URL that may be
    /// queued: whether it is is checked when the boost is applied).
    pub fn add(&mut self, host: HostId, url: UrlId, w: f32, now_ms: u64) {
        let waiting = self.by_host.entry(host).or_insert_with(|| Waiting {
            links: Vec::new(),
            since_ms: now_ms,
        });
        let url = [(url.0 >> 64) as u64, url.0 as u64];
        waiting.links.push(InLink { url, w });
        self.len += 1;
    }

    /// Host `host`'s waiting boosts if they are due at `now_ms` (waiting
    /// [`INTERVAL_MS`]; any with `all`): each URL's in-links summed in the
    /// order they came, sorted by URL so that applying them does not
    /// depend on arrival order.
    pub fn take(&mut self, host: HostId, now_ms: u64, all: bool) -> Vec<(UrlId, f32)> {
        let due = self
            .by_host
            .get(&host)
            .is_some_and(|w| all || now_ms >= w.since_ms + INTERVAL_MS);
        let Some(Waiting { mut links, .. }) = due.then(|| self.by_host.remove(&host)).flatten()
        else {
            return Vec::new();
        };
        self.len -= links.len();
        // Stable: a URL's weights are summed in arrival order, as they were
        // noted.
        links.sort_by_key(|l| l.url);
        let mut sums: Vec<(UrlId, f32)> = Vec::new();
        for l in links {
            let url = UrlId((u128::from(l.url[0]) << 64) | u128::from(l.url[1]));
            match sums.last_mut() {
                Some((last, sum)) if *last == url => *sum += l.w,
                _ => sums.push((url, l.w)),
            }
        }
        sums
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

    /// In-links waiting.
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
        assert_eq!(b.len(), 4);
        assert_eq!(b.hosts(), [HostId(1), HostId(2)]);
        // They wait until the interval is up (or all are asked for).
        assert!(b.take(HostId(1), INTERVAL_MS - 1, false).is_empty());
        assert_eq!(
            b.take(HostId(1), INTERVAL_MS, false),
            [(UrlId(3), 1.0), (UrlId(9), 0.75)]
        );
        assert_eq!(b.len(), 1);
        assert!(b.take(HostId(1), INTERVAL_MS, true).is_empty());
        // Ids over 64 bits survive the two words.
        let big = UrlId(u128::MAX - 5);
        b.add(HostId(7), big, 1.0, 0);
        b.add(HostId(7), UrlId(1 << 64), 2.0, 0);
        assert_eq!(
            b.take(HostId(7), 0, true),
            [(UrlId(1 << 64), 2.0), (big, 1.0)]
        );
        for i in 0..20 {
            b.add(HostId(5), UrlId(100 + i), 1.0, 10);
        }
        assert!(b.take(HostId(5), 10 + INTERVAL_MS - 1, false).is_empty());
        assert_eq!(b.take(HostId(5), 10 + INTERVAL_MS, false).len(), 20);
        b.add(HostId(3), UrlId(1), 1.0, 0);
        assert_eq!(b.take(HostId(3), 0, true).len(), 1);
    }
}
