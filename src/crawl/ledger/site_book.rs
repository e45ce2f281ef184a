//! The seed sites' own settings as the crawl holds them: the rules loaded
//! from the library (a site's depth, filter mode, delay, page budget and
//! order), the page filters of each mode a site sets, and which sites are
//! finished when they are crawled in groups (`crawl.site_batch`).

use crate::crawl::groups::{GroupCounts, HostLoad, SiteGroups};
use crate::crawl::sites::{self, PageFilters, SiteRule, SiteRules};
use crate::filter::{Filters, Mode};
use crate::model::HostId;

#[derive(Default)]
pub(super) struct SiteBook {
    rules: SiteRules,
    /// The page filters of the modes sites set.
    by_mode: Vec<(Mode, Filters)>,
    groups: SiteGroups,
}

impl SiteBook {
    pub fn rules(&self) -> &SiteRules {
        &self.rules
    }

    /// Takes `rules` (the library's); returns the hosts whose rule changed.
    pub fn replace_rules(&mut self, rules: SiteRules) -> Vec<HostId> {
        let changed = rules.changed_hosts(&self.rules);
        self.rules = rules;
        changed
    }

    /// A seed's host is a site of its own.
    pub fn add_seed(&mut self, host: HostId) {
        self.rules.add_seed(host);
    }

    /// A seed of `from`'s site redirected to `to`: the same site.
    pub fn add_redirect(&mut self, from: HostId, to: HostId) {
        self.rules.add_redirect(from, to);
    }

    /// The rule of `host`'s site, if it sets one.
    pub fn rule(&self, host: HostId) -> Option<&SiteRule> {
        self.rules.get(host)
    }

    /// The other hosts of `host`'s site.
    pub fn siblings(&self, host: HostId) -> Vec<HostId> {
        let hosts = self.site_hosts(host).iter().copied();
        hosts.filter(|h| *h != host).collect()
    }

    /// Every host of `host`'s site (none: not a seed site's).
    pub fn site_hosts(&self, host: HostId) -> &[HostId] {
        self.rules.site(host).map_or(&[], |s| &s.hosts)
    }

    /// Some site filters by a mode of its own.
    pub fn has_mode_filters(&self) -> bool {
        !self.by_mode.is_empty()
    }

    pub fn set_mode_filters(&mut self, by_mode: Vec<(Mode, Filters)>) {
        self.by_mode = by_mode;
    }

    /// The page filters a page of `host` is judged by: its site's mode's,
    /// else `global`.
    pub fn filters<'a>(&'a self, global: &'a Filters, host: HostId) -> &'a Filters {
        sites::filters_for(global, &self.by_mode, &self.rules, host)
    }

    /// `global` and the sites' own filters, owned.
    pub fn all_filters(&self, global: &Filters) -> PageFilters {
        PageFilters {
            global: global.clone(),
            by_mode: self.by_mode.clone(),
            rules: self.rules.clone(),
        }
    }

    /// Judges every site again in groups of `size` (0: off) by what
    /// `load` says its hosts hold; returns whether the running group
    /// changed.
    pub fn regroup(&mut self, size: usize, load: impl Fn(HostId) -> HostLoad) -> bool {
        let before = self.groups.current();
        self.groups = SiteGroups::new(size, &self.rules, load);
        self.groups.current() != before
    }

    /// Judges again the sites of `hosts`; returns whether the running
    /// group changed.
    pub fn refresh(&mut self, hosts: &[HostId], load: impl Fn(HostId) -> HostLoad) -> bool {
        self.groups.refresh(&self.rules, hosts, load)
    }

    pub fn groups_on(&self) -> bool {
        self.groups.is_on()
    }

    /// Every site's hosts.
    pub fn all_hosts(&self) -> Vec<HostId> {
        let sites = self.rules.sites().iter();
        sites.flat_map(|s| s.hosts.iter().copied()).collect()
    }

    /// The running group's hosts.
    pub fn running_group_hosts(&self) -> Vec<HostId> {
        let Some(g) = self.groups.current() else {
            return Vec::new();
        };
        let sites = self.groups.group(&self.rules, g).iter();
        sites.flat_map(|s| s.hosts.iter().copied()).collect()
    }

    /// Whether `host` waits for a later group.
    pub fn group_waits(&self, host: HostId) -> bool {
        self.groups.waits(&self.rules, host)
    }

    pub fn group_counts(&self) -> Option<GroupCounts> {
        self.groups.counts(&self.rules)
    }
}
