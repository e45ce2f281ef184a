//! Site groups in the ledger (see `crawl::groups`): which sites are
//! finished, judged again as their hosts' rows change, and which hosts
//! wait for a later group.

use super::Ledger;
use super::hosts::HostBook;
use crate::crawl::groups::{GroupCounts, HostLoad};
use crate::model::HostId;
use crate::store::Store;

/// What host `h` holds now (a host this run has not loaded: its row).
fn host_load(hosts: &HostBook, store: &Store, h: HostId) -> HostLoad {
    if let Some(s) = hosts.get(h) {
        return HostLoad {
            queued: s.record.queued,
            fetched: s.record.fetched,
            // A robots.txt in flight (the scheduler's to know) is not
            // counted: its host has URLs queued, unless they were dropped
            // or its site's budget ran out meanwhile, and then the site is
            // done whatever the file says.
            busy: s.queue.in_flight() > 0,
        };
    }
    HostLoad::stored(store, h)
}

impl Ledger {
    /// Judges every site again (`crawl.site_batch` or the library
    /// changed); every site's hosts are touched (a host held for a group
    /// may go on). Returns whether the running group changed.
    pub fn regroup(&mut self) -> bool {
        let (hosts, store) = (&self.hosts, &self.store);
        let size = self.settings.site_batch;
        let changed = self.sites.regroup(size, |h| host_load(hosts, store, h));
        self.touched.extend(self.sites.all_hosts());
        changed
    }

    /// Judges again the sites of `hosts`, whose rows changed; when the
    /// running group changes, its hosts are touched too.
    pub(super) fn refresh_groups(&mut self, changed: &[HostId]) {
        if !self.sites.groups_on() {
            return;
        }
        let (hosts, store) = (&self.hosts, &self.store);
        if self.sites.refresh(changed, |h| host_load(hosts, store, h)) {
            self.touched.extend(self.sites.running_group_hosts());
        }
    }

    /// Whether host `id` waits for a later group.
    pub fn group_waits(&self, id: HostId) -> bool {
        self.sites.group_waits(id)
    }

    pub fn group_counts(&self) -> Option<GroupCounts> {
        self.sites.group_counts()
    }
}
