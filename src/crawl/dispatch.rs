//! Handing work to fetch tasks and taking their results back: which host
//! is ready, robots.txt first, one page at a time within the politeness
//! rules; every page in flight marked in `inflight` before its task
//! starts; a task that panics still recorded against its URL.

use tokio::task::JoinError;

use super::politeness;
use super::scheduler::{CrawlError, Running, Scheduler};
use super::worker::{self, Done, PageJob};
use crate::fetch::{FetchError, RobotsFetch, RobotsRules};
use crate::model::{self, HostId};
use crate::model::{FailReason, RobotsOutcome};
use crate::store::StoreError;

impl Scheduler {
    /// Starts fetches for every host whose time has come, up to the limits.
    pub(super) fn dispatch(&mut self) -> Result<(), CrawlError> {
        let mut jobs = Vec::new();
        while self.tasks.len() + jobs.len() < self.ledger.settings.concurrency
            && !self.limit_reached()
        {
            let now = self.ledger.clock.now_ms();
            let ledger = &mut self.ledger;
            let Some(id) = self.ready.pop_ready(now, |h| ledger.head_priority(h)) else {
                break;
            };
            if let Some(job) = self.next_job(id, now)? {
                jobs.push(job);
            }
        }
        for job in jobs {
            let info = Running::Page(Box::new(PageJob {
                key: job.key,
                entry: job.entry.clone(),
                url: job.url.clone(),
            }));
            let work = worker::PageWork {
                client: self.client.clone(),
                agent: self.ledger.agent.clone(),
                max_links: self.ledger.settings.max_outlinks,
                denoise: self.ledger.denoise.clone(),
                filters_read_clean: self.ledger.settings.denoise.filters_read_denoised(),
                simhash: self.ledger.settings.dedup.near,
                dictionary: self.dictionary.clone(),
                // The page is marked in flight while it is processed (see
                // `inflight`), with the deaths it is suspected of already.
                marks: self.mark_requests.clone(),
                deaths: self
                    .ledger
                    .suspects
                    .get(&job.url.id())
                    .copied()
                    .unwrap_or(0),
                sitemap: self.ledger.is_sitemap(job.url.id()),
            };
            let task = self.tasks.spawn(worker::fetch_page(work, job));
            self.running.insert(task.id(), info);
        }
        Ok(())
    }

    /// The next page of host `id` to fetch, if its time has come; spawns
    /// its robots.txt fetch instead when the rules are missing or old.
    fn next_job(&mut self, id: HostId, now: u64) -> Result<Option<PageJob>, CrawlError> {
        let per_host = self.ledger.settings.per_host.max(1);
        self.ledger.loaded(id)?;
        // A queue keyed under an older order is re-keyed before its pop.
        self.ledger.ensure_keyed(id)?;
        self.unschedule(id);
        if self.ledger.site_budget_spent(id) || self.ledger.group_waits(id) {
            // Held while its seed site's max_pages are fetched (a `seed
            // set` that raises them touches the host, which schedules it),
            // or its site waits for a later group (the group's start
            // touches it).
            return Ok(None);
        }
        let h = self.ledger.hosts.get_mut(&id).expect("host loaded");
        if h.robots_in_flight || h.queue.in_flight() >= per_host {
            return Ok(None); // rescheduled when that work completes
        }
        if h.hold_until_ms > now {
            let at = h.hold_until_ms;
            self.schedule(id, at)?;
            return Ok(None);
        }
        let expires = h.record.robots.as_ref().map_or(0, |r| r.expires_ms);
        if h.rules.is_none() || expires <= now {
            h.robots_in_flight = true;
            let origin = h.record.origin.clone();
            // A seed host's robots.txt redirects may take its exception along.
            let seed = (self.ledger.seed_hosts.contains(&id)).then(|| self.ledger.guard.clone());
            let fetch = worker::fetch_robots(self.client.clone(), id, origin, seed);
            let task = self.tasks.spawn(fetch);
            self.running.insert(task.id(), Running::Robots(id));
            return Ok(None);
        }
        if h.rules.as_ref().is_some_and(RobotsRules::is_unreachable) {
            self.schedule(id, expires)?;
            return Ok(None);
        }
        let others_wait = self.ready.next_time().is_some_and(|t| t <= now);
        if !politeness::sends_another(h.queue.in_flight(), others_wait) {
            return Ok(None);
        }
        let Some((key, entry)) = h.queue.pop(&self.ledger.store)? else {
            return Ok(None);
        };
        let url = match model::normalize(&entry.url) {
            Ok(u) => u,
            Err(_) => {
                // Stored by an older normalizer: drop it from the queue.
                self.ledger.commit_unfetchable(key, entry)?;
                self.schedule(id, now)?;
                return Ok(None);
            }
        };
        let allowed = h
            .rules
            .as_ref()
            .is_some_and(|r| r.allows(url.path_and_query()));
        if !allowed {
            self.ledger.commit_robots_denied(key, entry)?;
            self.schedule(id, now)?;
            return Ok(None);
        }
        let (in_flight, drained) = (h.queue.in_flight(), h.queue.is_drained());
        let more = politeness::ready_for_more(in_flight, per_host, drained, others_wait);
        let delay = self.ledger.delay_ms(id);
        self.pages_in_flight += 1;
        if more {
            self.schedule(id, now + delay)?;
        }
        Ok(Some(PageJob { key, entry, url }))
    }

    /// Takes a finished task's result; a task that panicked (outside the
    /// page processing, which catches its own) fails its URL or host.
    pub(super) fn joined(
        &mut self,
        joined: Result<(tokio::task::Id, Done), JoinError>,
    ) -> Result<(), CrawlError> {
        match joined {
            Ok((id, done)) => {
                self.running.remove(&id);
                self.handle(done)
            }
            Err(e) => {
                let Some(running) = self.running.remove(&e.id()) else {
                    return Ok(());
                };
                let detail = format!("the fetch task failed: {e}");
                self.notice(detail.clone());
                let done = match running {
                    Running::Page(job) => Done::Page {
                        job,
                        result: Box::new(Err(FetchError::new(FailReason::Internal, detail))),
                    },
                    Running::Robots(host) => Done::Robots {
                        host,
                        fetched: Box::new(RobotsFetch {
                            outcome: RobotsOutcome::Unreachable { detail },
                            body: Vec::new(),
                            redirects: Vec::new(),
                            blocked: None,
                        }),
                    },
                };
                self.handle(done)
            }
        }
    }

    fn handle(&mut self, done: Done) -> Result<(), CrawlError> {
        match done {
            Done::Robots { host, fetched } => self.robots_done(host, *fetched)?,
            Done::Page { job, result } => {
                self.pages_in_flight -= 1;
                let host = job.key.host;
                // The host goes back in the warm lane, or in the ready heap
                // with the hosts the page's links queued (`schedule_touched`).
                self.ledger.commit_page(*job, *result)?;
                if let Some(h) = self.ledger.hosts.get(&host) {
                    self.rejoin(host, h.record.next_fetch_ms);
                }
                self.ledger.grow_front_if_needed()?;
            }
        }
        Ok(())
    }

    /// Tasks abandoned at the end of a stop's grace period were not killed
    /// by a crash: their in-flight marks go, and they stay queued.
    pub(super) fn abandon_running(&mut self) -> Result<(), StoreError> {
        let ids: Vec<model::UrlId> = self
            .running
            .drain()
            .filter_map(|(_, r)| match r {
                Running::Page(job) => Some(job.url.id()),
                Running::Robots(_) => None,
            })
            .collect();
        self.ledger.unmark_in_flight(&ids)
    }
}
