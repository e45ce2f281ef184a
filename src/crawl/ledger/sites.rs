//! The seed sites' own settings in the ledger (see `crawl::sites`): the
//! rules loaded from the library, the page filters of each filter mode a
//! site sets, and the per-host answers the crawl's decisions ask for.

use super::Ledger;
use crate::crawl::sites::{PageFilters, SiteRules};
use crate::filter::Filters;
use crate::frontier::Order;
use crate::frontier::SettledSet;
use crate::model::{CanonicalUrl, HostId, UrlId};
use crate::model::{FilterReason, SeenState};
use crate::schema::{LinkLimits, SeedList};
use crate::store::StoreError;

impl Ledger {
    /// Reads the library's rules; a host whose rule changed is touched (a
    /// host held at its site's page budget may go on).
    pub(super) fn load_sites(&mut self) -> Result<(), StoreError> {
        let (rules, problems) = SiteRules::load(&self.store)?;
        for p in problems {
            self.notice(format!("seed site settings not obeyed: {p}"));
        }
        let changed = self.sites.replace_rules(rules);
        self.touched.extend(changed);
        Ok(())
    }

    /// The library changed (`seed add`, `seed set`): its rules apply from
    /// the next decision — a new order re-keys queues, new filters judge
    /// pages, URLs filtered for depth are judged again under new depths.
    pub fn reload_sites(&mut self) -> Result<(), StoreError> {
        self.load_sites()?;
        self.regroup();
        self.note_order()?;
        self.rebuild_filters()?;
        if self.sites.has_mode_filters() {
            // URLs the domain filter dropped were settled under one mode.
            self.settled = SettledSet::default();
        }
        self.rejudge_if_limits_changed()
    }

    /// Builds the page filters of the modes sites set, for the seeds in
    /// `list` (the same key domains as the crawl's).
    pub(super) fn site_filters_for(&mut self, list: &SeedList) {
        let global = self.settings.filter.mode;
        let by_mode = self
            .sites
            .rules()
            .modes(global)
            .into_iter()
            .map(|mode| {
                let mut settings = self.settings.filter.clone();
                settings.mode = mode;
                let seeds = list.urls.iter().chain(list.derived.iter().map(|d| &d.url));
                (mode, Filters::for_seeds(&settings, seeds))
            })
            .collect();
        self.sites.set_mode_filters(by_mode);
    }

    /// The page filters a page of `host` is judged by (and its links).
    pub fn page_filters(&self, host: HostId) -> &Filters {
        self.sites.filters(&self.filters, host)
    }

    /// The crawl's page filters and the sites' own, owned.
    pub fn all_page_filters(&self) -> PageFilters {
        self.sites.all_filters(&self.filters)
    }

    /// The depth limit of `url`, found on a page of `found_on` (None: its
    /// own host's). The host id is worked out only when some site sets
    /// something: it costs an origin string a URL.
    pub(super) fn depth_limit(&self, found_on: Option<HostId>, url: &CanonicalUrl) -> Option<u16> {
        if self.sites.rules().is_empty() {
            return self.settings.max_depth;
        }
        let host = found_on.unwrap_or_else(|| url.host_id());
        self.sites
            .rule(host)
            .and_then(|r| r.depth)
            .or(self.settings.max_depth)
    }

    /// The order `host`'s queue is keyed in.
    pub fn order_of(&self, host: HostId) -> Order {
        self.sites
            .rule(host)
            .and_then(|r| r.order)
            .unwrap_or(self.settings.order.order)
    }

    /// The pause between two requests to host `id` its seed site sets, if
    /// any (before its Crawl-delay; else the crawl's).
    pub(super) fn site_delay_ms(&self, id: HostId) -> Option<u64> {
        self.sites.rule(id).and_then(|r| r.delay_ms)
    }

    /// The other hosts of `id`'s site when the site has a page budget: a
    /// page of one that ends (perhaps failed) may free budget for them.
    pub(super) fn budget_siblings(&self, id: HostId) -> Vec<HostId> {
        if self.sites.rule(id).and_then(|r| r.max_pages).is_none() {
            return Vec::new();
        }
        self.sites.siblings(id)
    }

    /// Whether host `id` may not be asked for another page: its site's
    /// `max_pages` are fetched (or in flight) over the site's hosts.
    pub fn site_budget_spent(&self, id: HostId) -> bool {
        let Some(max) = self.sites.rule(id).and_then(|r| r.max_pages) else {
            return false;
        };
        let hosts = self.sites.site_hosts(id);
        if hosts.is_empty() {
            return false;
        }
        let used: u64 = hosts
            .iter()
            .map(|h| match self.hosts.get(*h) {
                Some(s) => s.record.fetched + s.queue.in_flight() as u64,
                // A host of the site this run has not loaded yet.
                None => self.store.host(*h).ok().flatten().map_or(0, |r| r.fetched),
            })
            .sum();
        used >= max
    }

    /// Keeps `id` in the settled set if `state` is settled. A URL the
    /// domain filter dropped is not, while a seed site filters by its own
    /// mode: a link from a site without that filter may still queue it.
    pub(super) fn settle(&mut self, id: UrlId, state: SeenState) {
        let domain = state == SeenState::Filtered(FilterReason::Domain);
        if domain && self.sites.has_mode_filters() {
            self.settled.remove(id);
        } else {
            self.settled.record(id, state);
        }
    }

    /// The limits links are judged by: the settings' and the sites' depths.
    pub fn link_limits(&self) -> LinkLimits {
        LinkLimits {
            site_depths: self.sites.rules().depths(),
            ..self.settings.link_limits()
        }
    }
}
