//! Sitemaps in the ledger (`sitemaps.enabled`): the sitemap files found
//! (a robots.txt's `Sitemap:` lines; a seed host's `/sitemap.xml` when its
//! robots.txt names none; an index's entries; where one redirects), each
//! queued like a page — scope, robots.txt and the network guard apply —
//! and recorded in `sitemaps`, at most `sitemaps.max_per_host` a host;
//! and what reading one gives: its URLs discovered as its links, one hop
//! deeper, with their `<lastmod>` in `lastmods`.

use super::{Discovery, Ledger, PageWrite};
use crate::crawl::worker::PageJob;
use crate::model::{self, CanonicalUrl, HostId, UrlId};
use crate::parse::sitemap::{Sitemap, SitemapKind};
use crate::schema::tables::{Lastmods, Sitemaps};
use crate::schema::{LastmodRecord, SitemapRecord};
use crate::store::StoreError;

impl Ledger {
    /// The sitemap files known, and how many each host has.
    pub(super) fn load_sitemaps(&mut self) -> Result<(), StoreError> {
        for row in self.store.rows::<Sitemaps>(&[]) {
            let (id, rec) = row?;
            self.sitemaps.insert(id);
            if let Ok(u) = model::normalize(&rec.url) {
                *self.sitemap_hosts.entry(u.host_id()).or_default() += 1;
            }
        }
        Ok(())
    }

    /// Whether URL `id` is a sitemap file (read as one when fetched).
    pub fn is_sitemap(&self, id: UrlId) -> bool {
        !self.sitemaps.is_empty() && self.sitemaps.contains(&id)
    }

    /// Host `id`'s robots.txt was read and names `listed` sitemaps.
    pub fn robots_sitemaps(&mut self, id: HostId, listed: &[String]) -> Result<(), StoreError> {
        if !self.settings.sitemaps.enabled {
            return Ok(());
        }
        let origin = self.host(id, "")?.record.origin.clone();
        let (urls, via) = match listed {
            [] if self.seed_hosts.contains(&id) => (vec![format!("{origin}/sitemap.xml")], "guess"),
            [] => return Ok(()),
            _ => (listed.to_vec(), "robots"),
        };
        let store = self.store.clone();
        let mut w = PageWrite::new(&store);
        for u in urls {
            if let Ok(u) = model::normalize(&u) {
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
        let count = self.sitemap_hosts.get(&host).copied().unwrap_or(0);
        if self.sitemaps.contains(&id) || count >= self.settings.sitemaps.max_per_host {
            return Ok(false);
        }
        self.sitemap_hosts.insert(host, count + 1);
        self.sitemaps.insert(id);
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
                // A sitemap that moved is still one.
                let to = location.filter(|_| (300..400).contains(&status));
                if let Some(to) = to.and_then(|l| model::resolve(job.url.url(), l).ok()) {
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
        let depth = job.entry.depth;
        for e in map.entries {
            if map.kind == SitemapKind::Index {
                self.add_sitemap(w, &e.url, "index", Some(id), depth)?;
                continue;
            }
            let last = LastmodRecord {
                sitemap: id.0,
                lastmod_ms: e.lastmod_ms,
            };
            w.b.put_row::<Lastmods>(&e.url.id(), &last);
            let d = Discovery::listed(depth.saturating_add(1), Some(id)).found_on(job.key.host);
            self.discover(w, &e.url, d)?;
        }
        Ok(())
    }
}
