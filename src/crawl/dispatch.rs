//! Handing work to fetch tasks and taking their results back: which host
//! is ready, robots.txt first, one page at a time within the politeness
//! rules; every page in flight marked in `inflight` before its task
//! starts; a task that panics still recorded against its URL.

use tokio::task::JoinError;

use super::ledger::{Ask, Next};
use super::scheduler::{CrawlError, Running, Scheduler};
use super::worker::{self, Done, PageJob};
use crate::fetch::{FetchError, RobotsFetch};
use crate::model::{self, HostId};
use crate::model::{FailReason, RobotsOutcome};
use crate::store::StoreError;

impl Scheduler {
    /// Starts fetches for every host whose time has come, up to the limits.
    pub(super) fn dispatch(&mut self) -> Result<(), CrawlError> {
        let mut jobs = Vec::new();
        while self.tasks.len() + jobs.len() < self.ledger.settings().concurrency
            && !self.limit_reached()
        {
            let now = self.ledger.clock().now_ms();
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
                // The page is marked in flight while it is processed (see
                // `inflight`), with the deaths it is suspected of already.
                marks: self.mark_requests.clone(),
                deaths: self.ledger.deaths_of(job.url.id()),
                how: worker::How {
                    text: self.ledger.text_policy(),
                    dictionary: self.dictionary.clone(),
                    sitemap: self.ledger.is_sitemap(job.url.id()),
                    warc_level: self.ledger.settings().warc.gzip_level,
                },
            };
            let task = self.tasks.spawn(worker::fetch_page(work, job));
            self.running.insert(task.id(), info);
        }
        Ok(())
    }

    /// The next page of host `id` to fetch, if its time has come; spawns
    /// its robots.txt fetch instead when the rules are missing or old.
    fn next_job(&mut self, id: HostId, now: u64) -> Result<Option<PageJob>, CrawlError> {
        self.unschedule(id);
        let ask = Ask {
            now,
            per_host: self.ledger.settings().per_host.max(1),
            others_wait: self.ready.next_time().is_some_and(|t| t <= now),
            robots_in_flight: self.robots_in_flight(id),
        };
        match self.ledger.next_for(id, ask)? {
            Next::Idle => Ok(None),
            Next::Hold(at) => {
                self.schedule(id, at)?;
                Ok(None)
            }
            Next::Robots { origin, seed } => {
                self.set_robots_in_flight(id, true);
                let level = self.ledger.settings().warc.gzip_level;
                let fetch = worker::fetch_robots(self.client.clone(), id, origin, seed, level);
                let task = self.tasks.spawn(fetch);
                self.running.insert(task.id(), Running::Robots(id));
                Ok(None)
            }
            Next::Page { job, again } => {
                self.pages_in_flight += 1;
                if let Some(at) = again {
                    self.schedule(id, at)?;
                }
                Ok(Some(*job))
            }
        }
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
                            hops: Vec::new(),
                        }),
                        exchanges: Vec::new(),
                    },
                };
                self.handle(done)
            }
        }
    }

    fn handle(&mut self, done: Done) -> Result<(), CrawlError> {
        match done {
            Done::Robots {
                host,
                fetched,
                exchanges,
            } => {
                // In the files before the batch that records the answer.
                self.ledger.archive_robots(&exchanges)?;
                self.robots_done(host, *fetched)?
            }
            Done::Page { job, result } => {
                self.pages_in_flight -= 1;
                let host = job.key.host;
                // The host goes back in the warm lane, or in the ready heap
                // with the hosts the page's links queued (`schedule_touched`).
                self.ledger.commit_page(*job, *result)?;
                if let Some(h) = self.ledger.host_view(host) {
                    self.rejoin(host, h.next_fetch_ms);
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
