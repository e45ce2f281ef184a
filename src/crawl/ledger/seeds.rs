//! Seeds and what they bring into the crawl: their hosts' scope, their
//! exceptions to the network guard, and — as Heritrix does — the targets
//! they redirect to (`http://example.org/` → `https://www.example.org/`),
//! which become seeds too, recorded with where they came from.

use super::Ledger;
use super::{Discovery, PageWrite};
use crate::crawl::robots::robots_hops_in_domain;
use crate::model::{self, CanonicalUrl, HostId};
use crate::schema::tables::{SeedsRow, Sites};
use crate::schema::{Decision, DerivedSeed, SeedList};
use crate::store::{Batch, StoreError};

pub use crate::schema::{VIA_REDIRECT, VIA_ROBOTS};

impl Ledger {
    /// Loads the stored seeds into the scope, the guard and the filters
    /// (reads only).
    pub fn load_seeds(&mut self) -> Result<(), StoreError> {
        let list = self.store.seeds()?;
        for s in &list.urls {
            if let Ok(u) = model::normalize(s) {
                self.note_seed(&u, true);
            }
        }
        for d in &list.derived {
            if let Ok(u) = model::normalize(&d.url) {
                self.note_derived(&u, &d.via, &d.from);
            }
        }
        self.rebuild_filters()
    }

    /// A seed given by the user: in scope, and its own host and port may
    /// connect to its address when private — unless `seed accept` took it
    /// from co-link discovery without `--allow-private`: a host that pages
    /// link to does not get that by being accepted.
    fn note_seed(&mut self, u: &CanonicalUrl, queue_redirects: bool) {
        self.scope.add(u);
        let accepted = self.store.row::<Sites>(&u.host_id());
        if !accepted.is_ok_and(|r| r.is_some_and(|r| r.decision == Decision::Accepted)) {
            self.guard.add_seed(u);
        }
        self.seeds.note(u, queue_redirects);
        // Its own site, which a redirect of another seed cannot take over.
        self.sites.add_seed(u.host_id());
    }

    /// A URL a seed redirected to, from `from`: in scope, and excepted by
    /// the guard for the addresses of the seed it came from (on its own
    /// host and port). (A host a robots.txt redirect brought in is not a
    /// seed host: its own robots.txt redirects widen nothing.)
    fn note_derived(&mut self, u: &CanonicalUrl, via: &str, from: &str) {
        self.scope.add(u);
        if let Ok(from) = model::normalize(from) {
            self.guard.add_derived(u, &from);
        }
        if via == VIA_REDIRECT {
            self.seeds.note(u, true);
        }
    }

    /// Adds seeds: new ones are queued at depth 0, ones filtered before are
    /// queued again, fetched ones are left alone.
    pub fn add_seeds(&mut self, seeds: &[CanonicalUrl]) -> Result<(), StoreError> {
        let mut list: SeedList = self.store.seeds()?;
        let store = self.store.clone();
        let mut w = PageWrite::new(&store);
        for seed in seeds {
            self.note_seed(seed, true);
            if !list.urls.iter().any(|u| u == seed.as_str()) {
                list.urls.push(seed.as_str().to_string());
            }
            let d = Discovery::seed(0, None, 0);
            self.discover(&mut w, seed, d)?;
        }
        w.b.put_meta::<SeedsRow>(&list);
        self.finish(w.b, &w.touched)?;
        self.rebuild_filters()
    }

    /// Records `target`, reached by a redirect from `from`, as a seed in
    /// `list` (read fresh by the caller: the shell may have changed it) and
    /// in `b`: its host joins the scope. Returns false when it was one.
    pub fn add_derived_seed(
        &mut self,
        b: &mut Batch<'_>,
        list: &mut SeedList,
        target: &CanonicalUrl,
        from: &str,
        via: &str,
    ) -> Result<bool, StoreError> {
        let known = list.urls.iter().any(|u| u == target.as_str())
            || list
                .derived
                .iter()
                .any(|d| d.url == target.as_str() && d.via == via);
        self.note_derived(target, via, from);
        // The target is the same seed site as the URL that led there.
        if let Ok(from_url) = model::normalize(from) {
            self.sites
                .add_redirect(from_url.host_id(), target.host_id());
        }
        if known {
            return Ok(false);
        }
        list.derived.push(DerivedSeed {
            url: target.as_str().to_string(),
            from: from.to_string(),
            via: via.to_string(),
        });
        b.put_meta::<SeedsRow>(list);
        // The filters read the seeds' hosts; the batch is not written yet,
        // so they are rebuilt from the list as it will be.
        self.filters_for(list);
        let by = if via == VIA_ROBOTS {
            "its robots.txt redirects there"
        } else {
            "it redirects there"
        };
        self.notice(format!(
            "{target}: a seed ({from}: {by}); its host is in scope"
        ));
        Ok(true)
    }

    /// A seed host's robots.txt redirected (`http://h/robots.txt` →
    /// `https://www.h/robots.txt`): each host on the way is in scope, up
    /// to the first outside the seed's registrable domain (see
    /// `robots_hops_in_domain`).
    pub fn widen_scope_for_robots(
        &mut self,
        host: HostId,
        redirects: &[CanonicalUrl],
    ) -> Result<(), StoreError> {
        let origin = self
            .hosts
            .get(host)
            .map(|h| h.record.origin.clone())
            .unwrap_or_default();
        let store = self.store.clone();
        let mut b = store.batch();
        let mut list = store.seeds()?;
        let mut from = format!("{origin}/robots.txt");
        let in_domain = robots_hops_in_domain(&model::parsed_host(&origin), redirects);
        for target in &redirects[..in_domain] {
            let Ok(root) = model::normalize(&format!("{}/", target.host_key())) else {
                continue;
            };
            self.add_derived_seed(&mut b, &mut list, &root, &from, VIA_ROBOTS)?;
            from = target.as_str().to_string();
        }
        b.write()
    }
}
