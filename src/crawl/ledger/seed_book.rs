//! The seeds the ledger knows: the URLs given as seeds and those a seed's
//! response redirected to (whose own redirects are followed as a seed's),
//! and the hosts of either (whose robots.txt redirects widen the scope,
//! whose sitemaps are read, and whose robots.txt fetch gets the guard's
//! seed exception).

use std::collections::HashSet;

use crate::model::{CanonicalUrl, HostId, UrlId};

#[derive(Default)]
pub(super) struct SeedBook {
    ids: HashSet<UrlId>,
    hosts: HashSet<HostId>,
}

impl SeedBook {
    /// A seed's host; with `follows_redirects`, the URL too, so that its
    /// redirects are seeds.
    pub fn note(&mut self, u: &CanonicalUrl, follows_redirects: bool) {
        self.hosts.insert(u.host_id());
        if follows_redirects {
            self.ids.insert(u.id());
        }
    }

    pub fn is_seed(&self, id: UrlId) -> bool {
        self.ids.contains(&id)
    }

    pub fn is_seed_host(&self, host: HostId) -> bool {
        self.hosts.contains(&host)
    }

    /// Seeds and the URLs seeds redirected to.
    pub fn ids(&self) -> &HashSet<UrlId> {
        &self.ids
    }
}
