//! Handing work to fetch tasks and taking their results back: which host
//! is ready, robots.txt first, one page at a time within the politeness
//! rules; every page in flight marked in `inflight` before its task
//! starts; a task that panics still recorded against its URL.

use tokio::task::JoinError;

use super::engine::{CrawlError, Engine};
use super::worker::{self, Done, PageJob};
use crate::fetch::{FetchError, RobotsFetch, RobotsRules};
use crate::model::{self, HostId, now_ms};
use crate::schema::{FailReason, RobotsOutcome, RobotsRecord};
use crate::store::StoreError;

/// What a running task works on.
pub(super) enum Running {
    Page(Box<PageJob>),
    Robots(HostId),
}

impl Engine {
    /// Starts fetches for every host whose time has come, up to the limits.
    pub(super) fn dispatch(&mut self) -> Result<(), CrawlError> {
        let mut jobs = Vec::new();
        while self.tasks.len() + jobs.len() < self.settings.concurrency && !self.limit_reached() {
            let now = now_ms();
            let Some(id) = self.ready.pop_ready(now) else {
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
                agent: self.agent.clone(),
                max_links: self.settings.max_outlinks,
                // The page is marked in flight while it is processed (see
                // `inflight`), with the deaths it is suspected of already.
                marks: self.mark_requests.clone(),
                deaths: self.suspects.get(&job.url.id()).copied().unwrap_or(0),
            };
            let task = self.tasks.spawn(worker::fetch_page(work, job));
            self.running.insert(task.id(), info);
        }
        Ok(())
    }

    /// The next page of host `id` to fetch, if its time has come; spawns
    /// its robots.txt fetch instead when the rules are missing or old.
    fn next_job(&mut self, id: HostId, now: u64) -> Result<Option<PageJob>, CrawlError> {
        let per_host = self.settings.per_host.max(1);
        self.host(id, "")?;
        let h = self.hosts.get_mut(&id).expect("host loaded");
        h.scheduled = false;
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
            let task = self
                .tasks
                .spawn(worker::fetch_robots(self.client.clone(), id, origin));
            self.running.insert(task.id(), Running::Robots(id));
            return Ok(None);
        }
        if h.rules.as_ref().is_some_and(RobotsRules::is_unreachable) {
            self.schedule(id, expires)?;
            return Ok(None);
        }
        let Some((key, entry)) = h.queue.pop(&self.store)? else {
            return Ok(None);
        };
        let url = match model::normalize(&entry.url) {
            Ok(u) => u,
            Err(_) => {
                // Stored by an older normalizer: drop it from the queue.
                self.commit_unfetchable(key, entry)?;
                self.schedule(id, now)?;
                return Ok(None);
            }
        };
        let allowed = h
            .rules
            .as_ref()
            .is_some_and(|r| r.allows(url.path_and_query()));
        if !allowed {
            self.commit_robots_denied(key, entry)?;
            self.schedule(id, now)?;
            return Ok(None);
        }
        let more = h.queue.in_flight() < per_host && !h.queue.is_drained();
        let delay = self.host_delay_ms(self.hosts.get(&id).expect("host loaded"));
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
                        result: Box::new(Err(FetchError {
                            reason: FailReason::Internal,
                            detail,
                        })),
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
                let next_at = self.commit_page(*job, *result)?;
                let h = self.host(host, "")?;
                if !h.queue.is_idle() {
                    self.schedule(host, next_at)?;
                }
                self.grow_front_if_needed()?;
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
        self.unmark_in_flight(&ids)
    }

    fn robots_done(&mut self, id: HostId, fetched: RobotsFetch) -> Result<(), CrawlError> {
        let RobotsFetch {
            outcome,
            body,
            redirects,
            blocked,
        } = fetched;
        if self.seed_hosts.contains(&id) && !redirects.is_empty() {
            self.widen_scope_for_robots(id, &redirects)?;
        }
        if let Some(why) = blocked {
            // The guard refuses the host's own address: nothing of it can
            // be fetched, now or on a retry.
            self.host(id, "")?.robots_in_flight = false;
            let origin = self.hosts[&id].record.origin.clone();
            self.notice(format!(
                "{origin}: not fetched, the network guard refuses it ({why})"
            ));
            return Ok(self.fail_host_queue(id, FailReason::NetworkGuard, &why)?);
        }
        let now = now_ms();
        let s = self.settings.clone();
        let agent = self.agent.clone();
        let h = self.host(id, "")?;
        h.robots_in_flight = false;
        let unreachable = matches!(outcome, RobotsOutcome::Unreachable { .. });
        let failures = if unreachable {
            h.record.robots.as_ref().map_or(0, |r| r.failures) + 1
        } else {
            0
        };
        let wait = if unreachable {
            let backoff = s.robots_retry.saturating_mul(1 << (failures - 1).min(16));
            backoff.min(s.robots_ttl).as_millis() as u64
        } else {
            s.robots_ttl.as_millis() as u64
        };
        let record = RobotsRecord {
            outcome,
            body,
            fetched_ms: now,
            expires_ms: now + wait,
            failures,
        };
        let detail = match &record.outcome {
            RobotsOutcome::Unreachable { detail } => detail.clone(),
            _ => String::new(),
        };
        let rules = RobotsRules::from_record(&record, &agent);
        let mut notice = None;
        match rules.crawl_delay() {
            Some(d) if d > s.max_crawl_delay => {
                notice = Some(format!(
                    "{}: robots.txt asks Crawl-delay {}s; capped at {}s",
                    h.record.origin,
                    d.as_secs_f64(),
                    s.max_crawl_delay.as_secs_f64()
                ));
                h.record.crawl_delay_ms = Some(s.max_crawl_delay.as_millis() as u64);
                h.record.crawl_delay_capped = true;
            }
            Some(d) => {
                h.record.crawl_delay_ms = Some(d.as_millis() as u64);
                h.record.crawl_delay_capped = false;
            }
            None => (h.record.crawl_delay_ms, h.record.crawl_delay_capped) = (None, false),
        }
        h.record.robots = Some(record);
        h.robots_unsaved = true;
        h.rules = Some(rules);
        let give_up = unreachable && failures >= s.robots_max_failures;
        let origin = h.record.origin.clone();
        let next = if unreachable {
            now + wait
        } else {
            now + self.host_delay_ms(self.hosts.get(&id).expect("loaded"))
        };
        if let Some(n) = notice {
            self.notice(n);
        }
        if give_up {
            self.notice(format!("{origin}: robots.txt unreachable {failures} times ({detail}); its queued URLs are dropped"));
            self.drop_host_queue(id)?;
        } else {
            self.write_host(id)?;
        }
        let h = self.host(id, "")?;
        if !h.queue.is_idle() {
            self.schedule(id, next)?;
        }
        Ok(())
    }
}
