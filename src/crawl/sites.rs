//! The seed library's per-site settings as the crawl obeys them. A seed
//! site's own depth, filter mode, delay, max pages and order replace the
//! crawl's on its host and on the hosts its seeds redirected to (the
//! `www.` a seed sends the crawl to is the same site): a page's verdict,
//! delay, page budget and queue order follow its host's site, and a link
//! is judged (filter, depth) by the site of the page it was found on.
//! Hosts no seed site governs follow the crawl's settings.

use std::collections::HashMap;

use crate::filter::{Filters, Mode};
use crate::frontier::Order;
use crate::model::{self, HostId};
use crate::schema::tables::Sites;
use crate::schema::{SeedList, SiteRecord, SiteSettings};
use crate::store::{Store, StoreError};

/// A seed site's settings that differ from the crawl's, typed.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SiteRule {
    /// The seed site's origin.
    pub site: String,
    pub depth: Option<u16>,
    pub mode: Option<Mode>,
    pub delay_ms: Option<u64>,
    pub max_pages: Option<u64>,
    pub order: Option<Order>,
}

impl SiteRule {
    /// The rule a site's stored settings make; None when it sets nothing.
    /// A stored name this trawl does not know is an error naming it.
    pub fn of(origin: &str, s: &SiteSettings) -> Result<Option<SiteRule>, String> {
        let mode = match &s.filter {
            Some(m) => Some(Mode::from_name(m).ok_or_else(|| {
                format!("{origin}: unknown filter mode {m:?} (seed set HOST filter MODE)")
            })?),
            None => None,
        };
        let order = match &s.order {
            Some(o) => Some(Order::from_name(o).ok_or_else(|| {
                format!("{origin}: unknown crawl order {o:?} (seed set HOST order ORDER)")
            })?),
            None => None,
        };
        let rule = SiteRule {
            site: origin.to_string(),
            depth: s.depth,
            mode,
            delay_ms: s.delay_ms,
            max_pages: s.max_pages,
            order,
        };
        let empty = SiteRule {
            site: rule.site.clone(),
            ..SiteRule::default()
        };
        Ok((rule != empty).then_some(rule))
    }

    /// `depth 1, filter domain`: what the site sets, for `why` and `seeds`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = self.depth {
            parts.push(format!("depth {d}"));
        }
        if let Some(m) = self.mode {
            parts.push(format!("filter {}", m.name()));
        }
        if let Some(d) = self.delay_ms {
            parts.push(format!("delay {d}ms"));
        }
        if let Some(n) = self.max_pages {
            parts.push(format!("max_pages {n}"));
        }
        if let Some(o) = self.order {
            parts.push(format!("order {}", o.name()));
        }
        parts.join(", ")
    }
}

/// A seed site and the hosts it governs: its own (the host id of its
/// origin, first), then those its seeds redirected to.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub id: HostId,
    pub hosts: Vec<HostId>,
}

/// The seed sites, in the order their first seeds were given, and which
/// site's rule governs each host.
#[derive(Clone, Debug, Default)]
pub struct SiteRules {
    sites: Vec<Site>,
    /// Each governed host's site, an index into `sites`.
    site_of: HashMap<HostId, usize>,
    /// The rule of each site that sets something, by site id.
    rules: HashMap<HostId, SiteRule>,
    /// Some rule sets an order.
    ordered: bool,
}

impl SiteRules {
    /// The rules of the library in `store`, with a line for each site
    /// whose stored settings cannot be obeyed (it then follows the crawl's).
    pub fn load(store: &Store) -> Result<(SiteRules, Vec<String>), StoreError> {
        let seeds = store.seeds()?;
        let mut sites = Vec::new();
        let mut rows = store.rows::<Sites>(&[]);
        for row in rows.by_ref() {
            sites.push(row?);
        }
        let (rules, mut problems) = SiteRules::build(sites, &seeds);
        if rows.unreadable() > 0 {
            problems.push(format!(
                "{} seed sites could not be read; they follow the crawl's settings",
                rows.unreadable()
            ));
        }
        Ok((rules, problems))
    }

    /// The rules of `sites`; a host a seed redirected to (`seeds.derived`)
    /// follows the rule of the host it was redirected from.
    pub fn build(sites: Vec<(HostId, SiteRecord)>, seeds: &SeedList) -> (SiteRules, Vec<String>) {
        let mut r = SiteRules::default();
        let mut problems = Vec::new();
        for (host, rec) in sites {
            match SiteRule::of(&rec.origin, &rec.settings) {
                Ok(Some(rule)) => {
                    r.ordered |= rule.order.is_some();
                    r.rules.insert(host, rule);
                }
                Ok(None) => {}
                Err(e) => problems.push(e),
            }
        }
        // Every seed host is its own site, settings or not.
        for url in &seeds.urls {
            if let Ok(u) = model::normalize(url) {
                r.add_seed(u.host_id());
            }
        }
        // A site whose seeds were removed still governs its host.
        let mut orphans: Vec<HostId> = r.rules.keys().copied().collect();
        orphans.sort_unstable();
        for host in orphans {
            r.add_seed(host);
        }
        // In the order they were found, a redirect's source is a seed or
        // an earlier redirect's target.
        for d in &seeds.derived {
            if let (Ok(from), Ok(to)) = (model::normalize(&d.from), model::normalize(&d.url)) {
                r.add_redirect(from.host_id(), to.host_id());
            }
        }
        (r, problems)
    }

    /// A seed on `host`: its own site, unless it is one's already.
    pub fn add_seed(&mut self, host: HostId) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.site_of.entry(host) {
            e.insert(self.sites.len());
            self.sites.push(Site {
                id: host,
                hosts: vec![host],
            });
        }
    }

    /// A seed on host `from` redirected to host `to`: `to` joins `from`'s
    /// site (unless it has one).
    pub fn add_redirect(&mut self, from: HostId, to: HostId) {
        let Some(&site) = self.site_of.get(&from) else {
            return;
        };
        if let std::collections::hash_map::Entry::Vacant(e) = self.site_of.entry(to) {
            e.insert(site);
            self.sites[site].hosts.push(to);
        }
    }

    /// The rule governing `host`, if a seed site's does.
    pub fn get(&self, host: HostId) -> Option<&SiteRule> {
        self.rules.get(&self.site(host)?.id)
    }

    /// The seed site `host` belongs to.
    pub fn site(&self, host: HostId) -> Option<&Site> {
        Some(&self.sites[*self.site_of.get(&host)?])
    }

    /// `host`'s site as an index into [`SiteRules::sites`].
    pub fn site_index(&self, host: HostId) -> Option<usize> {
        self.site_of.get(&host).copied()
    }

    /// Every seed site, in the order their first seeds were given.
    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Each governed host's own depth limit, by host id (for the link
    /// limits a change of which re-judges links filtered for depth).
    pub fn depths(&self) -> Vec<(u64, u16)> {
        let mut v: Vec<(u64, u16)> = self
            .site_of
            .keys()
            .filter_map(|h| Some((h.0, self.get(*h)?.depth?)))
            .collect();
        v.sort_unstable();
        v
    }

    /// Whether some site sets its own order.
    pub fn set_orders(&self) -> bool {
        self.ordered
    }

    /// `origin=order …` for the sites that set an order, sorted ("" when
    /// none does).
    pub fn orders(&self) -> String {
        let mut v: Vec<String> = self
            .rules
            .values()
            .filter_map(|r| Some(format!("{}={}", r.site, r.order?.name())))
            .collect();
        v.sort_unstable();
        v.join(",")
    }

    /// The filter modes sites set, other than `global`, each once.
    pub fn modes(&self, global: Mode) -> Vec<Mode> {
        let mut v: Vec<Mode> = self.rules.values().filter_map(|r| r.mode).collect();
        v.retain(|m| *m != global);
        v.sort_by_key(|m| *m as u8);
        v.dedup();
        v
    }

    /// The hosts whose rule differs between `self` and `other`.
    pub fn changed_hosts(&self, other: &SiteRules) -> Vec<HostId> {
        let mut hosts: Vec<HostId> = self
            .site_of
            .keys()
            .chain(
                other
                    .site_of
                    .keys()
                    .filter(|h| !self.site_of.contains_key(h)),
            )
            .copied()
            .collect();
        hosts.retain(|h| self.get(*h) != other.get(*h));
        hosts
    }
}

/// The filters a page of `host` is judged by (and the links found on it):
/// those of its seed site's mode, from `by_mode`, else `global`.
pub fn filters_for<'a>(
    global: &'a Filters,
    by_mode: &'a [(Mode, Filters)],
    rules: &SiteRules,
    host: HostId,
) -> &'a Filters {
    let Some(mode) = rules.get(host).and_then(|r| r.mode) else {
        return global;
    };
    by_mode
        .iter()
        .find(|(m, _)| *m == mode)
        .map_or(global, |(_, f)| f)
}

/// The crawl's page filters with the seed sites' own, owned (for the
/// refilter's scanner threads).
#[derive(Clone, Debug)]
pub struct PageFilters {
    pub global: Filters,
    pub by_mode: Vec<(Mode, Filters)>,
    pub rules: SiteRules,
}

impl PageFilters {
    pub fn for_host(&self, host: HostId) -> &Filters {
        filters_for(&self.global, &self.by_mode, &self.rules, host)
    }

    /// Whether any seed site sets something of its own (a page's URL is
    /// then needed to judge it and its links).
    pub fn per_site(&self) -> bool {
        !self.rules.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::DerivedSeed;

    fn site(origin: &str, settings: SiteSettings) -> (HostId, SiteRecord) {
        let rec = SiteRecord {
            origin: origin.into(),
            settings,
            ..SiteRecord::default()
        };
        (HostId::of(origin), rec)
    }

    #[test]
    fn a_redirect_target_follows_its_seeds_site_and_bad_names_are_reported() {
        let redirect = |from: &str, to: &str| DerivedSeed {
            url: to.into(),
            from: from.into(),
            via: "redirect".into(),
        };
        let seeds = SeedList {
            urls: vec!["http://a.org/".into(), "http://c.org/".into()],
            derived: vec![
                redirect("http://a.org/", "https://www.a.org/"),
                // A seed of its own, though it sets nothing: not a's.
                redirect("https://www.a.org/", "http://c.org/"),
            ],
        };
        let depth = SiteSettings {
            depth: Some(1),
            filter: Some("domain".into()),
            ..SiteSettings::default()
        };
        let bad = SiteSettings {
            order: Some("sideways".into()),
            ..SiteSettings::default()
        };
        let sites = vec![
            site("http://a.org", depth),
            site("http://b.org", bad),
            site("http://c.org", SiteSettings::default()),
        ];
        let (rules, problems) = SiteRules::build(sites, &seeds);
        let www = rules.get(HostId::of("https://www.a.org")).unwrap();
        assert_eq!(www.depth, Some(1));
        assert_eq!(www.describe(), "depth 1, filter domain");
        let a = rules.site(HostId::of("https://www.a.org")).unwrap();
        assert_eq!(a.hosts.len(), 2);
        assert_eq!(a.id, HostId::of("http://a.org"));
        // Seeds first, in their order; then sites whose seeds are gone.
        let ids: Vec<HostId> = rules.sites().iter().map(|s| s.id).collect();
        assert_eq!(
            ids[..2],
            [HostId::of("http://a.org"), HostId::of("http://c.org")]
        );
        assert_eq!(rules.site_index(HostId::of("http://c.org")), Some(1));
        assert!(rules.get(HostId::of("http://c.org")).is_none());
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("sideways"), "{problems:?}");
        assert_eq!(rules.depths().len(), 2);
        assert_eq!(rules.modes(Mode::Domain), Vec::<Mode>::new());
        assert_eq!(rules.modes(Mode::None), vec![Mode::Domain]);
    }
}
