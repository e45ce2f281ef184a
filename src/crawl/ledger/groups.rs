//! Site groups in the ledger (see `crawl::groups`): which sites are
//! finished, judged again as their hosts' rows change, and which hosts
//! wait for a later group.

use super::Ledger;
use crate::crawl::groups::{GroupCounts, HostLoad, SiteGroups};
use crate::model::HostId;

impl Ledger {
    /// What host `h` holds now (a host this run has not loaded: its row).
    fn host_load(&self, h: HostId) -> HostLoad {
        if let Some(s) = self.hosts.get(&h) {
            return HostLoad {
                queued: s.record.queued,
                fetched: s.record.fetched,
                // A robots.txt in flight (the scheduler's to know) is not
                // counted: its host has URLs queued, unless they were
                // dropped or its site's budget ran out meanwhile, and then
                // the site is done whatever the file says.
                busy: s.queue.in_flight() > 0,
            };
        }
        HostLoad::stored(&self.store, h)
    }

    /// Judges every site again (`crawl.site_batch` or the library
    /// changed); every site's hosts are touched (a host held for a group
    /// may go on). Returns whether the running group changed.
    pub fn regroup(&mut self) -> bool {
        let before = self.groups.current();
        self.groups = SiteGroups::new(self.settings.site_batch, &self.sites, |h| self.host_load(h));
        let hosts = self.sites.sites().iter().flat_map(|s| s.hosts.iter());
        self.touched.extend(hosts);
        self.groups.current() != before
    }

    /// Judges again the sites of `hosts`, whose rows changed; when the
    /// running group changes, its hosts are touched too.
    pub(super) fn refresh_groups(&mut self, hosts: &[HostId]) {
        if !self.groups.is_on() {
            return;
        }
        let mut groups = std::mem::take(&mut self.groups);
        let changed = groups.refresh(&self.sites, hosts, |h| self.host_load(h));
        self.groups = groups;
        if changed {
            self.touch_running_group();
        }
    }

    fn touch_running_group(&mut self) {
        if let Some(g) = self.groups.current() {
            let hosts = self
                .groups
                .group(&self.sites, g)
                .iter()
                .flat_map(|s| s.hosts.iter());
            self.touched.extend(hosts);
        }
    }

    /// Whether host `id` waits for a later group.
    pub fn group_waits(&self, id: HostId) -> bool {
        self.groups.waits(&self.sites, id)
    }

    pub fn group_counts(&self) -> Option<GroupCounts> {
        self.groups.counts(&self.sites)
    }
}
