//! The engine task: picks ready hosts, dispatches fetches within the
//! politeness rules, and hands every result to `commit`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinSet;

use super::dispatch::Running;
use super::handle::{CrawlHandle, CrawlState, Shared, Snapshot};
use super::marks::{self, MarkBook, Marks};
use super::scope::ScopeRule;
use super::settings::CrawlSettings;
use super::traps::QueryVariants;
use super::worker::Done;
use crate::fetch::{ClientError, HttpClient, NetGuard, RobotsRules};
use crate::filter::{FilterSettings, Filters};
use crate::frontier::{HostQueue, ReadyHeap, SeenFront, SettledSet};
use crate::model::{self, HostId, UrlError, UrlId, now_ms};
use crate::schema::{CF_META, CF_SEEN, Counters, HostRecord, RunProgress, RunRecord, meta_keys};
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("bad seed: {0}")]
    Seed(#[from] UrlError),
}

/// What one run did.
#[derive(Clone, Debug)]
pub struct Summary {
    pub run_fetched: u64,
    pub run_links: u64,
    pub elapsed: Duration,
    pub counters: Counters,
    /// True when the run ended because it was asked to stop.
    pub interrupted: bool,
}

impl Summary {
    /// The source documents' efficiency measure: seconds × links fetched.
    pub fn tlp(&self) -> f64 {
        self.elapsed.as_secs_f64() * self.run_fetched as f64
    }
}

/// What the handle can change while the engine runs.
struct Control {
    stop: watch::Receiver<bool>,
    paused: watch::Receiver<bool>,
    settings: watch::Receiver<CrawlSettings>,
    seeds: tokio::sync::mpsc::UnboundedReceiver<Vec<crate::model::CanonicalUrl>>,
}

pub(super) struct HostState {
    pub record: HostRecord,
    /// `record.robots` is not in the `robots` column family yet: fetched
    /// since the host was last written, or read from inside the host's row
    /// of a db older than schema 6.
    pub robots_unsaved: bool,
    pub rules: Option<RobotsRules>,
    pub robots_in_flight: bool,
    pub queue: HostQueue,
    /// In the ready heap.
    pub scheduled: bool,
    /// No fetch before this: a 429/503 back-off (or the next fetch time a
    /// resumed host was left with). Checked at dispatch, as the host may
    /// already sit in the ready heap at an earlier time.
    pub hold_until_ms: u64,
}

pub(super) struct Engine {
    pub store: Arc<Store>,
    pub client: HttpClient,
    /// Vets every address the client connects to; knows the seeds'.
    pub guard: NetGuard,
    pub settings: CrawlSettings,
    pub agent: String,
    pub counters: Counters,
    pub scope: ScopeRule,
    /// The focused-crawl filters, built from the settings and the seeds.
    pub filters: Filters,
    pub hosts: HashMap<HostId, HostState>,
    pub ready: ReadyHeap,
    pub front: SeenFront,
    /// Recently seen URLs no ordinary link can change: skips their lookup.
    pub settled: SettledSet,
    /// Query strings queued per path (`crawl.max_query_variants`).
    pub variants: QueryVariants,
    /// Seeds and the URLs seeds redirected to: their redirects are seeds.
    pub seed_ids: HashSet<UrlId>,
    /// Hosts of those: their robots.txt redirects widen the scope.
    pub seed_hosts: HashSet<HostId>,
    /// URLs a dead run left in flight once, with how many runs in a row
    /// died with them (see `inflight`).
    pub suspects: HashMap<UrlId, u8>,
    /// In-flight marks fetch tasks asked for, written with the next batch.
    pub(super) marks: MarkBook,
    /// The fetch tasks' end of that channel.
    pub(super) mark_requests: Marks,
    shared: Arc<Shared>,
    pub(super) tasks: JoinSet<Done>,
    /// What each running task is working on, so a task that panics is
    /// still recorded against its URL or host.
    pub(super) running: HashMap<tokio::task::Id, Running>,
    pub(super) pages_in_flight: u64,
    pub run_fetched: u64,
    pub run_links: u64,
    /// This run's `started_ms` (0 for an offline engine): batches carry
    /// its progress in the counters.
    pub run_started_ms: u64,
    started: Instant,
    /// (time, run_fetched) over the last 10 s, for the recent rate.
    rate_samples: std::collections::VecDeque<(Instant, u64)>,
}

/// Starts a crawl of `store` from `seeds` (added to any seeds the db
/// already has) on the current tokio runtime.
pub fn start(
    store: Arc<Store>,
    settings: CrawlSettings,
    seeds: &[String],
) -> Result<
    (
        CrawlHandle,
        tokio::task::JoinHandle<Result<Summary, CrawlError>>,
    ),
    CrawlError,
> {
    let seeds = seeds
        .iter()
        .map(|s| model::normalize(s))
        .collect::<Result<Vec<_>, _>>()?;
    let (mut engine, rx) = Engine::new(store, settings)?;
    engine.recover_in_flight()?;
    engine.add_seeds(&seeds)?;
    engine.rejudge_if_limits_changed()?;
    engine.resume_hosts()?;
    let shared = engine.shared.clone();
    let store = engine.store.clone();
    let join = tokio::spawn(async move {
        let ended = engine.run(rx).await;
        // An engine error (a failed write) is not a page's crash: its
        // fetches must not count as deaths on the next run.
        if ended.is_err() {
            let _ = super::forget_in_flight(&store);
        }
        ended
    });
    Ok((CrawlHandle { shared }, join))
}

impl Engine {
    /// An engine over `store` with its state loaded (counters, seen front,
    /// seeds, filters) but no loop running, and the receiving ends of its
    /// handle's channels.
    fn new(store: Arc<Store>, settings: CrawlSettings) -> Result<(Engine, Control), CrawlError> {
        let guard = NetGuard::default();
        let (mark_requests, marks) = marks::marks();
        let client = HttpClient::new(settings.fetch.clone(), guard.clone())?;
        let (stop, stop_rx) = watch::channel(false);
        let (paused, paused_rx) = watch::channel(false);
        let (live, live_rx) = watch::channel(settings.clone());
        let (seeds_tx, seeds_rx) = tokio::sync::mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            seeds: seeds_tx,
            stop,
            paused,
            settings: live,
            snapshot: Mutex::new(Snapshot::default()),
            notices: Mutex::new(Vec::new()),
        });
        let mut engine = Engine {
            agent: settings.agent_token().to_string(),
            counters: store.counters()?,
            store,
            client,
            guard,
            settings,
            scope: ScopeRule::default(),
            filters: Filters::new(&FilterSettings::default(), []),
            hosts: HashMap::new(),
            ready: ReadyHeap::default(),
            front: SeenFront::with_capacity(0),
            settled: SettledSet::default(),
            variants: QueryVariants::default(),
            seed_ids: HashSet::new(),
            seed_hosts: HashSet::new(),
            suspects: HashMap::new(),
            marks,
            mark_requests,
            shared,
            tasks: JoinSet::new(),
            running: HashMap::new(),
            pages_in_flight: 0,
            run_fetched: 0,
            run_links: 0,
            run_started_ms: 0,
            started: Instant::now(),
            rate_samples: Default::default(),
        };
        engine.load_seen_front()?;
        engine.load_seeds()?;
        let control = Control {
            stop: stop_rx,
            paused: paused_rx,
            settings: live_rx,
            seeds: seeds_rx,
        };
        Ok((engine, control))
    }

    /// An engine for offline work on the db (refilter): nothing is fetched.
    pub(super) fn offline(
        store: Arc<Store>,
        settings: CrawlSettings,
    ) -> Result<Engine, CrawlError> {
        Engine::new(store, settings).map(|(e, _)| e)
    }

    fn load_seen_front(&mut self) -> Result<(), StoreError> {
        let n = self.counters.seen as usize;
        // The old filter goes first: holding both would double its memory.
        self.front = SeenFront::with_capacity(0);
        self.front = SeenFront::with_capacity((n * 2).max(1 << 20));
        for row in self.store.scan(CF_SEEN, &[]) {
            let (k, _) = row?;
            if let Some(id) = model::UrlId::from_slice(&k) {
                self.front.insert(id);
            }
        }
        Ok(())
    }

    /// Rebuilds the seen front twice as large once it holds more than it was sized for.
    pub(super) fn grow_front_if_needed(&mut self) -> Result<(), StoreError> {
        if self.front.is_overfull() {
            self.counters.seen = self.counters.seen.max(self.front.len() as u64);
            self.load_seen_front()?;
        }
        Ok(())
    }

    /// Every host with queued URLs left by an earlier run is ready now.
    fn resume_hosts(&mut self) -> Result<(), StoreError> {
        for host in self.store.frontier_hosts()? {
            self.schedule(host, 0)?;
        }
        Ok(())
    }

    /// The host's in-memory state, loaded from `hosts` on first use.
    pub(super) fn host(&mut self, id: HostId, origin: &str) -> Result<&mut HostState, StoreError> {
        if !self.hosts.contains_key(&id) {
            let (mut record, robots_unsaved) =
                self.store.host_and_robots_place(id)?.unwrap_or_else(|| {
                    let fresh = HostRecord {
                        origin: origin.to_string(),
                        ..Default::default()
                    };
                    (fresh, false)
                });
            // A stored next fetch past any wait we set (a clock that went
            // back, a db from another machine) must not hold the host.
            let longest = self
                .settings
                .max_backoff
                .max(self.settings.delay)
                .as_millis() as u64;
            let longest = longest.max(record.crawl_delay_ms.unwrap_or(0));
            record.next_fetch_ms = record.next_fetch_ms.min(model::now_ms() + longest);
            let rules = record
                .robots
                .as_ref()
                .map(|r| RobotsRules::from_record(r, &self.agent));
            self.hosts.insert(
                id,
                HostState {
                    robots_unsaved,
                    hold_until_ms: record.next_fetch_ms,
                    record,
                    rules,
                    robots_in_flight: false,
                    queue: HostQueue::new(id),
                    scheduled: false,
                },
            );
        }
        Ok(self.hosts.get_mut(&id).expect("inserted above"))
    }

    /// Puts a host in the ready heap at `at_ms` unless it is there already.
    pub(super) fn schedule(&mut self, id: HostId, at_ms: u64) -> Result<(), StoreError> {
        let h = self.host(id, "")?;
        if !h.scheduled {
            h.scheduled = true;
            self.ready.push(at_ms, id);
        }
        Ok(())
    }

    /// Delay between two requests to a host: ours or its Crawl-delay.
    pub(super) fn host_delay_ms(&self, h: &HostState) -> u64 {
        (self.settings.delay.as_millis() as u64).max(h.record.crawl_delay_ms.unwrap_or(0))
    }

    pub(super) fn limit_reached(&self) -> bool {
        self.settings
            .max_pages
            .is_some_and(|m| self.counters.fetched + self.pages_in_flight >= m)
    }

    async fn run(mut self, mut control: Control) -> Result<Summary, CrawlError> {
        let mut stopping = *control.stop.borrow();
        let mut paused = *control.paused.borrow();
        let mut grace_deadline: Option<tokio::time::Instant> = None;
        let mut last_publish = Instant::now();
        let started_ms = model::now_ms();
        self.record_run(started_ms, false, false)?;
        self.run_started_ms = started_ms;
        self.publish(CrawlState::Running);
        loop {
            if !stopping && !paused {
                self.dispatch()?;
            }
            // Fetch tasks wait for their marks, written with the next
            // page's batch; when every task waits for one, at once.
            let waiting = self.marks.grantable();
            if waiting > 0 && waiting >= self.tasks.len() {
                self.write_marks()?;
            }
            let marks_due = self.marks.due();
            let out_of_work = self.ready.is_empty() || stopping || self.limit_reached();
            if self.tasks.is_empty() && out_of_work {
                break;
            }
            let wake = (!stopping
                && !paused
                && self.tasks.len() < self.settings.concurrency
                && !self.limit_reached())
            .then(|| self.ready.next_time())
            .flatten()
            .map(|at| {
                tokio::time::Instant::now() + Duration::from_millis(at.saturating_sub(now_ms()))
            });
            tokio::select! {
                changed = control.stop.changed(), if !stopping => {
                    if changed.is_err() || *control.stop.borrow() {
                        stopping = true;
                        grace_deadline = Some(tokio::time::Instant::now() + self.settings.shutdown_grace);
                        self.publish(CrawlState::Stopping);
                    }
                }
                Ok(()) = control.paused.changed() => {
                    paused = *control.paused.borrow();
                }
                Some(seeds) = control.seeds.recv() => {
                    self.add_seeds(&seeds)?;
                }
                Ok(()) = control.settings.changed() => {
                    let new = control.settings.borrow_and_update().clone();
                    self.apply_settings(new);
                }
                Some(joined) = self.tasks.join_next_with_id() => self.joined(joined)?,
                Some(m) = self.marks.requests.recv() => self.marks.take(m),
                _ = tokio::time::sleep_until(marks_due.unwrap_or_else(tokio::time::Instant::now)), if marks_due.is_some() => {
                    self.write_marks()?;
                }
                _ = tokio::time::sleep_until(wake.unwrap_or_else(tokio::time::Instant::now)), if wake.is_some() => {}
                _ = tokio::time::sleep_until(grace_deadline.unwrap_or_else(tokio::time::Instant::now)), if grace_deadline.is_some() => {
                    // Abandoned fetches stay in the frontier for the next run.
                    self.tasks.abort_all();
                    self.abandon_running()?;
                    break;
                }
            }
            if last_publish.elapsed() >= Duration::from_millis(250) {
                self.publish(if stopping {
                    CrawlState::Stopping
                } else if paused {
                    CrawlState::Paused
                } else {
                    CrawlState::Running
                });
                last_publish = Instant::now();
            }
        }
        self.record_run(started_ms, true, stopping)?;
        self.store.flush()?;
        self.publish(CrawlState::Done);
        Ok(Summary {
            run_fetched: self.run_fetched,
            run_links: self.run_links,
            elapsed: self.started.elapsed(),
            counters: self.counters.clone(),
            interrupted: stopping,
        })
    }

    /// Writes this run's record (at the start, and with its totals at the end).
    fn record_run(
        &mut self,
        started_ms: u64,
        ended: bool,
        interrupted: bool,
    ) -> Result<(), StoreError> {
        let elapsed = self.started.elapsed();
        let rec = RunRecord {
            started_ms,
            ended_ms: if ended { model::now_ms() } else { 0 },
            settings: self.settings.summary(),
            seeds: self.store.seeds()?.urls.len() as u32,
            fetched: self.run_fetched,
            links: self.run_links,
            elapsed_ms: elapsed.as_millis() as u64,
            tlp: elapsed.as_secs_f64() * self.run_fetched as f64,
            interrupted,
        };
        let mut b = self.store.batch();
        if !ended {
            self.complete_killed_run(&mut b)?;
            self.counters.run = RunProgress {
                started_ms,
                ..RunProgress::default()
            };
            b.put(CF_META, meta_keys::COUNTERS, &self.counters);
        }
        b.put(CF_META, &meta_keys::run(started_ms), &rec);
        b.write()
    }

    /// A run killed before it could write its totals left them in the
    /// counters' run progress (written with every batch): its record gets
    /// them now, marked interrupted.
    fn complete_killed_run(&self, b: &mut crate::store::Batch<'_>) -> Result<(), StoreError> {
        let p = &self.counters.run;
        if p.started_ms == 0 {
            return Ok(());
        }
        let key = meta_keys::run(p.started_ms);
        let Some(mut rec) = self.store.get::<RunRecord>(CF_META, &key)? else {
            return Ok(());
        };
        if rec.ended_ms != 0 {
            return Ok(());
        }
        let elapsed_ms = p.last_ms.saturating_sub(p.started_ms);
        rec.fetched = p.fetched;
        rec.links = p.links;
        rec.elapsed_ms = elapsed_ms;
        rec.tlp = elapsed_ms as f64 / 1e3 * p.fetched as f64;
        rec.ended_ms = p.last_ms.max(p.started_ms);
        rec.interrupted = true;
        b.put(CF_META, &key, &rec);
        Ok(())
    }

    /// Takes new settings from the handle; they apply from the next decision.
    fn apply_settings(&mut self, new: CrawlSettings) {
        if new.fetch != self.settings.fetch {
            match self.client.retuned(new.fetch.clone(), self.guard.clone()) {
                Ok(c) => self.client = c,
                Err(e) => {
                    self.notice(format!("fetch settings not applied: {e}"));
                    return;
                }
            }
        }
        let agent = new.agent_token().to_string();
        if agent != self.agent {
            for h in self.hosts.values_mut() {
                h.rules = h
                    .record
                    .robots
                    .as_ref()
                    .map(|r| RobotsRules::from_record(r, &agent));
            }
            self.agent = agent;
        }
        let refilter = new.filter != self.settings.filter;
        let limits = new.link_limits() != self.settings.link_limits();
        self.settings = new;
        if refilter && let Err(e) = self.rebuild_filters() {
            self.notice(format!("filters not rebuilt: {e}"));
        }
        // URLs filtered under the old limits are judged again now.
        if limits && let Err(e) = self.rejudge_if_limits_changed() {
            self.notice(format!("new limits not applied to filtered URLs: {e}"));
        }
    }

    /// Builds the filters from the settings and every seed's host (the
    /// hosts seeds redirected to included).
    pub(super) fn rebuild_filters(&mut self) -> Result<(), StoreError> {
        let seeds = self.store.seeds()?;
        self.filters_for(&seeds);
        Ok(())
    }

    /// The filters for the seeds in `list`.
    pub(super) fn filters_for(&mut self, list: &crate::schema::SeedList) {
        let hosts: Vec<String> = list
            .urls
            .iter()
            .chain(list.derived.iter().map(|d| &d.url))
            .filter_map(|u| model::normalize(u).ok())
            .map(|u| u.host().to_string())
            .collect();
        self.filters = Filters::new(&self.settings.filter, hosts.iter().map(String::as_str));
    }

    fn publish(&mut self, state: CrawlState) {
        let active = self
            .hosts
            .values()
            .filter(|h| !h.queue.is_idle() || h.robots_in_flight)
            .count();
        let now = Instant::now();
        self.rate_samples.push_back((now, self.run_fetched));
        while self
            .rate_samples
            .front()
            .is_some_and(|(t, _)| now - *t > Duration::from_secs(10))
        {
            self.rate_samples.pop_front();
        }
        let recent_rate = match self.rate_samples.front() {
            Some((t, n)) if now > *t => (self.run_fetched - n) as f64 / (now - *t).as_secs_f64(),
            _ => 0.0,
        };
        if let Ok(mut s) = self.shared.snapshot.lock() {
            *s = Snapshot {
                recent_rate,
                state,
                counters: self.counters.clone(),
                in_flight: self.tasks.len(),
                active_hosts: active,
                run_fetched: self.run_fetched,
                run_links: self.run_links,
                elapsed: self.started.elapsed(),
            };
        }
    }

    pub(super) fn notice(&self, msg: String) {
        if let Ok(mut n) = self.shared.notices.lock() {
            n.push(msg);
        }
    }
}
