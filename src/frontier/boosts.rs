//! In-links found for URLs already queued, under the importance order.
//! A link's weight waits here, with no read on the link's path, until the
//! target's host is next scheduled: then each URL's row is found through
//! its `seen` record (which holds the row's priority) and moved up.

use std::collections::HashMap;

use crate::model::{HostId, UrlId};

/// Waiting URLs past which every host's boosts are applied at once, so
/// that the map stays within a few tens of MB (~40 bytes a URL).
const CAP: usize = 1 << 18;

#[derive(Default)]
pub struct Boosts {
    by_host: HashMap<HostId, HashMap<UrlId, f32>>,
    len: usize,
}

impl Boosts {
    /// Adds an in-link of weight `w` to `url` of `host` (a URL that may be
    /// queued: whether it is is checked when the boost is applied).
    pub fn add(&mut self, host: HostId, url: UrlId, w: f32) {
        let urls = self.by_host.entry(host).or_default();
        let sum = urls.entry(url).or_insert_with(|| {
            self.len += 1;
            0.0
        });
        *sum += w;
    }

    /// Host `host`'s waiting boosts, sorted by URL so that applying them
    /// does not depend on a hash map's order.
    pub fn take(&mut self, host: HostId) -> Vec<(UrlId, f32)> {
        let Some(urls) = self.by_host.remove(&host) else {
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
        b.add(HostId(1), UrlId(9), 0.5);
        b.add(HostId(1), UrlId(3), 1.0);
        b.add(HostId(1), UrlId(9), 0.25);
        b.add(HostId(2), UrlId(4), 1.0);
        assert_eq!(b.len(), 3);
        assert_eq!(b.hosts(), [HostId(1), HostId(2)]);
        assert_eq!(b.take(HostId(1)), [(UrlId(3), 1.0), (UrlId(9), 0.75)]);
        assert_eq!(b.len(), 1);
        assert!(b.take(HostId(1)).is_empty());
    }
}
