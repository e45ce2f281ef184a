//! Sitemaps in the ledger (`sitemaps.enabled`): the sitemap files of the
//! seed hosts (their robots.txt's `Sitemap:` lines, or `/sitemap.xml` when
//! it names none; an index's entries on the index's own host, as the
//! protocol asks; where one redirects on its host), each queued like a
//! page — scope, robots.txt and the network guard apply — and recorded in
//! `sitemaps`, at most `sitemaps.max_per_host` a host; and what reading
//! one gives: its URLs discovered as its links, one hop deeper, with their
//! `<lastmod>` in `lastmods` when in scope. Only seed hosts' own sitemaps
//! are read, under any scope: a sitemap starts at depth 0, and another
//! host's would carry its URLs past `crawl.depth`.

use super::{Discovery, Ledger, PageWrite};
use crate::crawl::worker::PageJob;
use crate::model::{self, CanonicalUrl, HostId, UrlId};
use crate::parse::sitemap::{Sitemap, SitemapKind};
use crate::schema::tables::{Lastmods, Sitemaps};
use crate::schema::{LastmodRecord, SitemapRecord};
use crate::store::StoreError;

impl Ledger {
    /// Whether URL `id` is a sitemap file to read as one when fetched
    /// (with sitemaps off, a queued one is fetched as a page).
    pub fn is_sitemap(&self, id: UrlId) -> bool {
        self.settings.sitemaps.enabled && self.sitemaps.contains(id)
    }

    /// Host `id`'s robots.txt was read and names `listed` sitemaps.
    pub fn robots_sitemaps(&mut self, id: HostId, listed: &[String]) -> Result<(), StoreError> {
        if !self.settings.sitemaps.enabled || !self.seeds.is_seed_host(id) {
            return Ok(());
        }
        let origin = self.loaded(id)?.record.origin.clone();
        let guess = [format!("{origin}/sitemap.xml")];
        let (urls, via) = match listed {
            [] => (&guess[..], "guess"),
            _ => (listed, "robots"),
        };
        let store = self.store.clone();
        let mut w = PageWrite::new(&store);
        for u in urls {
            // Read at depth 0 like the seed: only the robots.txt host's
            // own (another host's would carry its URLs past crawl.depth).
            if let Ok(u) = model::normalize(u)
                && u.host_id() == id
            {
                self.add_sitemap(&mut w, &u, via, None, 0)?;
            }
        }
        self.finish(w.b, &w.touched)
    }

    /// Records and queues sitemap `url` unless it is known or its host
    /// has its share; returns whether it was added.
    fn add_sitemap(
        &mut self,
        w: &mut PageWrite<'_>,
        url: &CanonicalUrl,
        via: &str,
        parent: Option<UrlId>,
        depth: u16,
    ) -> Result<bool, StoreError> {
        let id = url.id();
        let host = url.host_id();
        // Nothing is recorded for a URL out of scope or past its host's
        // share (a hostile index's thousands of entries: judged without a
        // read), or already seen as a page.
        if self
            .sitemaps
            .host_is_full(host, self.settings.sitemaps.max_per_host)
            || !self.scope.allows(self.settings.scope, url)
            || self.sitemaps.contains(id)
            || self.front.may_contain(id) && self.store.seen(id)?.is_some()
        {
            return Ok(false);
        }
        self.sitemaps.add(host, id);
        let rec = SitemapRecord {
            url: url.as_str().to_string(),
            via: via.to_string(),
            parent: parent.map(|p| p.0),
            found_ms: self.clock.now_ms(),
            ..SitemapRecord::default()
        };
        w.b.put_row::<Sitemaps>(&id, &rec);
        self.discover(w, url, Discovery::listed(depth, parent))?;
        Ok(true)
    }

    /// A sitemap was fetched (its response recorded as a page's): what
    /// it lists is discovered. `read`: None when the status was not 2xx.
    pub(super) fn record_sitemap(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        (status, location): (u16, Option<&str>),
        read: Option<Result<Sitemap, String>>,
    ) -> Result<(), StoreError> {
        let id = job.url.id();
        let mut rec = self
            .store
            .row::<Sitemaps>(&id)?
            .unwrap_or_else(|| SitemapRecord {
                url: job.url.as_str().to_string(),
                ..SitemapRecord::default()
            });
        rec.fetched_ms = self.clock.now_ms();
        let map = match read {
            Some(Ok(map)) => map,
            Some(Err(why)) => {
                rec.problem = why;
                w.b.put_row::<Sitemaps>(&id, &rec);
                return Ok(());
            }
            None => {
                rec.problem = format!("status {status}");
                // A sitemap that moved is still one, on its own host.
                let to = location.filter(|_| (300..400).contains(&status));
                let to = to.and_then(|l| model::resolve(job.url.url(), l).ok());
                if let Some(to) = to.filter(|t| t.host_id() == job.key.host) {
                    let (via, parent) = (rec.via.clone(), rec.parent.map(UrlId));
                    self.add_sitemap(w, &to, &via, parent, job.entry.depth)?;
                }
                w.b.put_row::<Sitemaps>(&id, &rec);
                return Ok(());
            }
        };
        rec.kind = map.kind.name().to_string();
        rec.entries = map.entries.len() as u32;
        (rec.skipped, rec.dropped) = (map.skipped, map.dropped);
        rec.problem = map.problem.unwrap_or_default();
        w.b.put_row::<Sitemaps>(&id, &rec);
        if !self.settings.sitemaps.enabled {
            return Ok(());
        }
        let depth = job.entry.depth;
        let nested = map.kind == SitemapKind::Index && rec.via == "index";
        if nested {
            rec.problem = "an index listed in an index: its entries are not read (the protocol does not nest them)".into();
            w.b.put_row::<Sitemaps>(&id, &rec);
            return Ok(());
        }
        for e in map.entries {
            if map.kind == SitemapKind::Index {
                // The protocol keeps an index's sitemaps on its own host.
                if e.url.host_id() == job.key.host {
                    self.add_sitemap(w, &e.url, "index", Some(id), depth)?;
                }
                continue;
            }
            // A URL the scope leaves out gets no row: only its `seen` mark.
            if self.scope.allows(self.settings.scope, &e.url) {
                let last = LastmodRecord {
                    sitemap: id.0,
                    lastmod_ms: e.lastmod_ms,
                };
                w.b.put_row::<Lastmods>(&e.url.id(), &last);
            }
            // (A URL listed twice is looked at once: `discover` marks it.)
            if let Some(at) = e.lastmod_ms.filter(|_| !w.pending.contains(&e.url.id())) {
                self.due_by_lastmod(&mut w.b, e.url.id(), at)?;
            }
            let d = Discovery::listed(depth.saturating_add(1), Some(id)).found_on(job.key.host);
            self.discover(w, &e.url, d)?;
        }
        Ok(())
    }
}
