//! Pages another crawler fetched, read from its archive (`import warc`),
//! stored as if this crawl had fetched them: the URL taken from the
//! frontier where a page imported before linked it (or queued now), then
//! committed as a fetch made at the archive's time; the archive's hosts
//! join the scope, so their links are judged as the crawl would.

use super::{Discovery, Ledger, PageWrite};
use crate::crawl::clock::Clock;
use crate::crawl::worker::{PageData, PageJob};
use crate::fetch::FetchError;
use crate::filter::scope::Scope;
use crate::model::{CanonicalUrl, SeenState, UrlId};
use crate::schema::{DerivedSeed, FrontierKey, VIA_IMPORT};
use crate::store::StoreError;

impl Ledger {
    /// The job that stores a capture of `url` fetched at `at_ms` (the
    /// ledger's clock reads it from now on): its queued entry taken from
    /// its host's queue, or the URL queued now (at depth 0, or where a
    /// verdict filtered it before, robots.txt's included: the archive
    /// holds the page) and taken. None when the URL has an outcome
    /// already (fetched or failed).
    pub fn import_job(
        &mut self,
        url: &CanonicalUrl,
        at_ms: u64,
    ) -> Result<Option<PageJob>, StoreError> {
        self.clock = Clock::at(at_ms);
        let id = url.id();
        let prior = match self.front.may_contain(id) {
            true => self.store.seen(id)?,
            false => None,
        };
        match prior.as_ref().map(|p| p.state) {
            Some(SeenState::Queued) => {}
            Some(SeenState::Filtered(_)) | None => {
                let (depth, parent) = prior.map_or((0, None), |p| (p.depth, p.parent.map(UrlId)));
                let store = self.store.clone();
                let mut w = PageWrite::new(&store);
                self.discover(&mut w, url, Discovery::imported(depth, parent))?;
                self.finish(w.b, &w.touched)?;
            }
            Some(_) => return Ok(None),
        }
        self.take_queued_job(url)
    }

    /// The queued URL `url` out of its host's queue, as a job.
    fn take_queued_job(&mut self, url: &CanonicalUrl) -> Result<Option<PageJob>, StoreError> {
        let Some(priority) = self.store.seen(url.id())?.and_then(|r| r.priority) else {
            return Ok(None);
        };
        let key = FrontierKey {
            host: url.host_id(),
            priority,
            url: url.id(),
        };
        let store = self.store.clone();
        let h = self.load(key.host, &url.host_key())?;
        let entry = h.queue.take_queued(&store, &[key])?.pop().flatten();
        Ok(entry.map(|entry| PageJob {
            key,
            entry,
            url: url.clone(),
        }))
    }

    /// Commits an imported capture as the outcome of a fetch (made when
    /// `import_job` said), never retried (a 503 in an archive is the
    /// answer it got).
    pub fn commit_imported(
        &mut self,
        mut job: PageJob,
        result: Result<PageData, FetchError>,
    ) -> Result<(), StoreError> {
        job.entry.attempts = u8::MAX;
        self.commit_page(job, result)
    }

    /// Puts the hosts of `roots` (a URL of each, read from archive `from`)
    /// in scope, as derived seeds; returns how many were not in it.
    pub fn import_hosts(&mut self, roots: &[CanonicalUrl], from: &str) -> Result<u64, StoreError> {
        let mut list = self.store.seeds()?;
        let mut added = 0;
        for root in roots {
            // Under the host rule, the narrowest: in scope whatever
            // `crawl.scope` becomes.
            if self.scope.allows(Scope::Host, root) {
                continue;
            }
            self.scope.add(root);
            list.derived.push(DerivedSeed {
                url: root.as_str().to_string(),
                from: from.to_string(),
                via: VIA_IMPORT.to_string(),
            });
            added += 1;
        }
        if added > 0 {
            let mut b = self.store.batch();
            b.put_meta::<crate::schema::tables::SeedsRow>(&list);
            b.write()?;
            self.filters_for(&list);
        }
        Ok(added)
    }
}
