//! The scheduler: the crawl's one task. It owns the HTTP client, the fetch
//! tasks, the ready heap of hosts and the rate samples; it picks ready
//! hosts, dispatches fetches within the politeness rules (`dispatch`,
//! `robots`) and hands every outcome to the [`Ledger`], which records it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinSet;

use super::dictionary::PageDictionary;
use super::handle::{CrawlHandle, CrawlState, SeedChange, Shared, Snapshot};
use super::ledger::Ledger;
use super::marks::{self, Marks};
use super::politeness;
use super::worker::{Done, PageJob};
use crate::fetch::{ClientError, FetchSettings, HttpClient, NetGuard};
use crate::frontier::ReadyHeap;
use crate::model::{self, HostId, UrlError};
use crate::schema::Counters;
use crate::search::Indexer;
use crate::settings::CrawlSettings;
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("bad seed: {0}")]
    Seed(#[from] UrlError),
    #[error("refilter --denoise needs denoising on: set denoise.enabled true first")]
    DenoiseOff,
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

/// What the handle can change while the crawl runs.
struct Control {
    stop: watch::Receiver<bool>,
    paused: watch::Receiver<bool>,
    settings: watch::Receiver<CrawlSettings>,
    seeds: tokio::sync::mpsc::UnboundedReceiver<SeedChange>,
}

impl Control {
    /// The shell handed over a change the loop has not taken yet.
    fn pending(&self) -> bool {
        !self.seeds.is_empty()
            || self.settings.has_changed().unwrap_or(false)
            || self.paused.has_changed().unwrap_or(false)
    }
}

/// What a running task works on.
pub(super) enum Running {
    Page(Box<PageJob>),
    Robots(HostId),
}

/// A host's place in the ready heap: the scheduler's own, per host.
#[derive(Clone, Copy, Debug, Default)]
struct Turn {
    /// In the ready heap or the warm lane (at most once).
    scheduled: bool,
    /// Pages dispatched from the warm lane in a row.
    warm_pages: u32,
    /// Its robots.txt is being fetched (the host waits for it).
    robots_in_flight: bool,
}

pub(super) struct Scheduler {
    /// What the crawl knows and records; the scheduler's only writer.
    pub ledger: Ledger,
    pub client: HttpClient,
    /// The fetch tasks' end of the in-flight marks channel.
    pub(super) mark_requests: Marks,
    /// The db's zstd dictionary for page frames, or its training.
    pub(super) dictionary: Arc<PageDictionary>,
    shared: Arc<Shared>,
    pub(super) tasks: JoinSet<Done>,
    /// What each running task is working on, so a task that panics is
    /// still recorded against its URL or host.
    pub(super) running: HashMap<tokio::task::Id, Running>,
    pub ready: ReadyHeap,
    /// Each host's place in `ready`.
    turns: HashMap<HostId, Turn>,
    pub(super) pages_in_flight: u64,
    started: Instant,
    /// (time, run_fetched) over the last 10 s, for the recent rate.
    rate_samples: std::collections::VecDeque<(Instant, u64)>,
    /// Nothing queued or in flight: the next revisit's due time (ms) the
    /// loop waits for; None while it has work.
    revisit_wait: Option<u64>,
    /// The revisit wait the snapshot shows.
    wait_published: Option<u64>,
    /// The due time the last "waiting for the next revisit" notice named.
    wait_noticed: Option<u64>,
}

/// What the handle shows while the loop runs.
fn state_of(stopping: bool, paused: bool) -> CrawlState {
    if stopping {
        CrawlState::Stopping
    } else if paused {
        CrawlState::Paused
    } else {
        CrawlState::Running
    }
}

/// The fetch settings of `settings`: the search index's writer takes its
/// memory out of the bodies' budget, so the crawl's bound holds with it.
fn fetch_of(settings: &CrawlSettings) -> FetchSettings {
    let mut fetch = settings.fetch.clone();
    if settings.search_live {
        fetch.memory_budget = fetch
            .memory_budget
            .saturating_sub(crate::search::LIVE_MEMORY)
            .max(fetch.memory_budget / 2);
    }
    fetch
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
    let (mut scheduler, rx) = Scheduler::new(store, settings)?;
    scheduler.ledger.recover_in_flight()?;
    scheduler.ledger.add_seeds(&seeds)?;
    scheduler.ledger.rejudge_if_limits_changed()?;
    scheduler.schedule_touched()?;
    scheduler.resume_hosts()?;
    let shared = scheduler.shared.clone();
    let store = scheduler.ledger.store().clone();
    let dictionary = scheduler.dictionary.clone();
    let indexer = scheduler.ledger.settings().search_live.then(|| {
        let tell = shared.clone();
        let budget = scheduler.client.budget().clone();
        // A body past its free allowance is in flight: the indexer waits
        // (pages of a few KB never count against the budget).
        let busy = move || budget.used() > 0;
        Indexer::start(
            store.clone(),
            Box::new(move |msg| tell.notice(msg)),
            Box::new(busy),
        )
    });
    let join = tokio::spawn(async move {
        let ended = scheduler.run(rx).await;
        let _ = tokio::task::spawn_blocking(move || {
            dictionary.finish();
            // Takes the run's last pages before the crawl is over.
            if let Some(indexer) = indexer {
                indexer.finish();
            }
        })
        .await;
        // A scheduler error (a failed write) is not a page's crash: its
        // fetches must not count as deaths on the next run.
        if ended.is_err() {
            let _ = super::forget_in_flight(&store);
        }
        ended
    });
    Ok((CrawlHandle { shared }, join))
}

impl Scheduler {
    /// A scheduler over `store` with its ledger loaded but no loop
    /// running, and the receiving ends of its handle's channels.
    fn new(store: Arc<Store>, settings: CrawlSettings) -> Result<(Scheduler, Control), CrawlError> {
        let guard = NetGuard::new(&settings.fetch.resolve);
        let (mark_requests, marks) = marks::marks();
        // WARC records need what went over the wire.
        let fetch = FetchSettings {
            keep_wire: settings.warc.dir.is_some(),
            ..fetch_of(&settings)
        };
        let client = HttpClient::new(fetch, guard.clone())?;
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
        let dictionary =
            PageDictionary::open(store.clone(), settings.dictionary_pages, shared.clone())?;
        let by_score = settings.order.order.by_score();
        let mut scheduler = Scheduler {
            ledger: Ledger::open(store, settings, guard, marks)?,
            client,
            mark_requests,
            dictionary,
            shared,
            tasks: JoinSet::new(),
            running: HashMap::new(),
            ready: ReadyHeap::default(),
            turns: HashMap::new(),
            pages_in_flight: 0,
            started: Instant::now(),
            rate_samples: Default::default(),
            revisit_wait: None,
            wait_published: None,
            wait_noticed: None,
        };
        scheduler.ledger.open_archive()?;
        // Pages fetched before revisits were on, or under another policy,
        // are timed a chunk a loop turn.
        scheduler.ledger.retime_revisits()?;
        scheduler.ready.set_by_score(by_score);
        let control = Control {
            stop: stop_rx,
            paused: paused_rx,
            settings: live_rx,
            seeds: seeds_rx,
        };
        Ok((scheduler, control))
    }

    /// Every host with queued URLs left by an earlier run is ready now.
    fn resume_hosts(&mut self) -> Result<(), StoreError> {
        for host in self.ledger.store().frontier_hosts()? {
            self.schedule(host, 0)?;
        }
        Ok(())
    }

    /// Puts a host in the ready heap at `at_ms` unless it is there already.
    pub(super) fn schedule(&mut self, id: HostId, at_ms: u64) -> Result<(), StoreError> {
        self.ledger.load_host(id)?;
        let turn = self.turns.entry(id).or_default();
        if !turn.scheduled {
            turn.scheduled = true;
            turn.warm_pages = 0; // waits its turn: a new run of warm pages
            self.ready.push(at_ms, id);
        }
        Ok(())
    }

    /// Whether host `id`'s robots.txt is being fetched.
    pub(super) fn robots_in_flight(&self, id: HostId) -> bool {
        self.turns.get(&id).is_some_and(|t| t.robots_in_flight)
    }

    pub(super) fn set_robots_in_flight(&mut self, id: HostId, on: bool) {
        self.turns.entry(id).or_default().robots_in_flight = on;
    }

    /// Host `id` left the ready heap (popped for dispatch).
    pub(super) fn unschedule(&mut self, id: HostId) {
        // A host in the heap has its turn: `schedule` and `rejoin` made it.
        if let Some(turn) = self.turns.get_mut(&id) {
            turn.scheduled = false;
        }
    }

    /// A host whose fetch just ended, with its next fetch time `at_ms`,
    /// goes ahead of the hosts waiting when `politeness` gives it the warm
    /// lane; else it goes to the heap, with the hosts the ledger touched.
    pub(super) fn rejoin(&mut self, id: HostId, at_ms: u64) {
        let now = self.ledger.clock().now_ms();
        let Some(h) = self.ledger.host_view(id) else {
            return;
        };
        let drained = h.drained;
        let turn = self.turns.entry(id).or_default();
        if turn.scheduled || !politeness::takes_warm_lane(at_ms, now, drained, turn.warm_pages) {
            return;
        }
        turn.warm_pages += 1;
        turn.scheduled = true;
        self.ready.push_warm(id);
    }

    /// Hosts the ledger wrote since the last call that have URLs queued
    /// go in the ready heap, at the host's next fetch time.
    pub(super) fn schedule_touched(&mut self) -> Result<(), StoreError> {
        for id in self.ledger.take_touched() {
            let Some(h) = self.ledger.host_view(id) else {
                continue;
            };
            if !h.idle {
                self.schedule(id, h.next_fetch_ms)?;
            }
        }
        for n in self.ledger.take_notices() {
            self.notice(n);
        }
        Ok(())
    }

    pub(super) fn limit_reached(&self) -> bool {
        let l = &self.ledger;
        l.settings()
            .max_pages
            .is_some_and(|m| l.counters().fetched + self.pages_in_flight >= m)
    }

    async fn run(mut self, mut control: Control) -> Result<Summary, CrawlError> {
        let mut stopping = *control.stop.borrow();
        let mut paused = *control.paused.borrow();
        let mut grace_deadline: Option<tokio::time::Instant> = None;
        let mut last_publish = Instant::now();
        let started_ms = self.ledger.clock().now_ms();
        self.ledger
            .record_run(started_ms, self.started.elapsed(), None)?;
        self.publish(CrawlState::Running);
        loop {
            if !stopping && self.ledger.retime_step()? {
                // The rest waits for the next turn: fetches go on between.
                tokio::task::yield_now().await;
            }
            if !stopping {
                self.ledger.queue_due()?;
            }
            self.schedule_touched()?;
            if !stopping && let Some(rule) = self.ledger.stop_fired().map(str::to_string) {
                // As a stop: in-flight fetches finish within the grace.
                stopping = true;
                grace_deadline =
                    Some(tokio::time::Instant::now() + self.ledger.settings().shutdown_grace);
                self.notice(format!("crawl.stop_when: stopping: {rule}"));
                self.publish(CrawlState::Stopping);
            }
            if !stopping && !paused {
                self.dispatch()?;
            }
            // Fetch tasks wait for their marks, written with the next
            // page's batch; when every task waits for one, at once.
            let waiting = self.ledger.marks().grantable();
            if waiting > 0 && waiting >= self.tasks.len() {
                self.ledger.write_marks()?;
            }
            let marks_due = self.ledger.marks().due();
            let out_of_work = self.ready.is_empty() || stopping || self.limit_reached();
            if self.tasks.is_empty() && out_of_work {
                if !stopping && self.next_group() {
                    continue;
                }
                if self.idle_ends(stopping) {
                    break;
                }
            } else {
                self.revisit_wait = None;
            }
            if self.revisit_wait != self.wait_published {
                // At once (an idle loop turns only on events): the wait may
                // last days, and `crawl wait` ends on it.
                self.publish_with(state_of(stopping, paused), Some(&control));
                last_publish = Instant::now();
            }
            let wake = self.wake_at(stopping, paused);
            tokio::select! {
                changed = control.stop.changed(), if !stopping => {
                    if changed.is_err() || *control.stop.borrow() {
                        stopping = true;
                        grace_deadline = Some(tokio::time::Instant::now() + self.ledger.settings().shutdown_grace);
                        self.publish(CrawlState::Stopping);
                    }
                }
                Ok(()) = control.paused.changed() => {
                    paused = *control.paused.borrow();
                }
                Some(change) = control.seeds.recv() => match change {
                    SeedChange::Add(seeds) => self.ledger.add_seeds(&seeds)?,
                    SeedChange::Sites => self.ledger.reload_sites()?,
                },
                Ok(()) = control.settings.changed() => {
                    let new = control.settings.borrow_and_update().clone();
                    self.apply_settings(new);
                }
                Some(joined) = self.tasks.join_next_with_id() => self.joined(joined)?,
                Some(m) = self.ledger.marks().requests.recv() => self.ledger.marks().take(m),
                _ = tokio::time::sleep_until(marks_due.unwrap_or_else(tokio::time::Instant::now)), if marks_due.is_some() => {
                    self.ledger.write_marks()?;
                }
                _ = tokio::time::sleep_until(wake.unwrap_or_else(tokio::time::Instant::now)), if wake.is_some() => {}
                _ = tokio::time::sleep_until(grace_deadline.unwrap_or_else(tokio::time::Instant::now)), if grace_deadline.is_some() => {
                    // Abandoned fetches stay in the frontier for the next run.
                    self.tasks.abort_all();
                    self.abandon_running()?;
                    break;
                }
            }
            // What the select took may be work: whether the loop waits for
            // revisits only is known again at its top.
            self.revisit_wait = None;
            if last_publish.elapsed() >= Duration::from_millis(250) {
                self.publish(state_of(stopping, paused));
                last_publish = Instant::now();
            }
        }
        self.end_run(started_ms, stopping)
    }

    /// The loop is over: what waits in memory is written, the run's record
    /// completed, and its summary made.
    fn end_run(&mut self, started_ms: u64, stopping: bool) -> Result<Summary, CrawlError> {
        self.schedule_touched()?;
        let l = &mut self.ledger;
        // In-links waiting to raise queued URLs' IB are kept, not lost.
        l.apply_all_boosts()?;
        l.write_inlinks()?;
        l.save_model()?;
        l.close_archive()?;
        l.record_run(started_ms, self.started.elapsed(), Some(stopping))?;
        l.store().flush()?;
        let run = l.run_figures();
        let summary = Summary {
            run_fetched: run.fetched,
            run_links: run.links,
            elapsed: self.started.elapsed(),
            counters: l.counters().clone(),
            interrupted: stopping,
        };
        self.publish(CrawlState::Done);
        Ok(summary)
    }

    /// Out of work: whether a site group starts. The sites are judged
    /// again in full (a change no row write showed); a running group that
    /// cannot finish now is reported, and waits for the next run.
    fn next_group(&mut self) -> bool {
        if self.limit_reached() {
            return false;
        }
        if self.ledger.regroup() {
            return true;
        }
        if let Some(c) = self.ledger.group_counts()
            && let Some(g) = c.current
        {
            self.notice(format!(
                "crawl.site_batch: group {g} of {} has URLs queued that cannot be fetched now; it and {} waiting groups go on at the next run",
                c.groups, c.waiting
            ));
        }
        false
    }

    /// When the loop should wake: at the next host's time (not when
    /// stopping or paused, or at the limits), or the next revisit's.
    fn wake_at(&self, stopping: bool, paused: bool) -> Option<tokio::time::Instant> {
        let room = self.tasks.len() < self.ledger.settings().concurrency && !self.limit_reached();
        let page = match stopping || paused || !room {
            true => None,
            false => self.ready.next_time(),
        };
        // A revisit falling due moves its page into the frontier; a
        // retiming under way goes on at once.
        let due = match self.ledger.retiming() {
            true if !stopping => Some(self.ledger.clock().now_ms()),
            _ => self.ledger.next_due_ms().filter(|_| !stopping),
        };
        let at = match (page, due) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(self.ledger.clock().instant_of(at))
    }

    /// Nothing queued and nothing in flight: whether the crawl ends. With
    /// revisits on it waits for the next one instead (said once a wait).
    fn idle_ends(&mut self, stopping: bool) -> bool {
        if self.ledger.retiming() && !stopping {
            return false;
        }
        let next_due = self.ledger.next_due_ms();
        let Some(at) = next_due.filter(|_| !stopping && !self.limit_reached()) else {
            return true;
        };
        if self.wait_noticed != Some(at) {
            self.wait_noticed = Some(at);
            let wait = Duration::from_millis(at.saturating_sub(self.ledger.clock().now_ms()));
            self.notice(format!(
                "nothing queued: waiting for the next revisit, due in {}",
                super::wait_text(wait)
            ));
        }
        self.revisit_wait = Some(at);
        false
    }

    /// Takes new settings from the handle; they apply from the next decision.
    fn apply_settings(&mut self, new: CrawlSettings) {
        if new.fetch != self.ledger.settings().fetch {
            let fetch = FetchSettings {
                keep_wire: self.ledger.archiving(),
                ..fetch_of(&new)
            };
            match self.client.retuned(fetch, self.ledger.guard().clone()) {
                Ok(c) => self.client = c,
                Err(e) => {
                    self.notice(format!("fetch settings not applied: {e}"));
                    return;
                }
            }
        }
        self.ready.set_by_score(new.order.order.by_score());
        self.ledger.apply_settings(new);
    }

    fn publish(&mut self, state: CrawlState) {
        self.publish_with(state, None);
    }

    /// Publishes; a revisit wait only while `control` (when given) holds no
    /// change the shell handed over, judged under the snapshot's lock that
    /// the handle sends under, so a wait the change ends is never shown.
    fn publish_with(&mut self, state: CrawlState, control: Option<&Control>) {
        let l = &self.ledger;
        let running = matches!(state, CrawlState::Running | CrawlState::Paused);
        // Hosts with work, and idle ones whose robots.txt is in flight.
        let waiting_robots = self
            .turns
            .iter()
            .filter(|(id, t)| t.robots_in_flight && l.host_view(**id).is_some_and(|h| h.idle));
        let active = l.active_hosts() + waiting_robots.count();
        let now = Instant::now();
        let run = l.run_figures();
        self.rate_samples.push_back((now, run.fetched));
        while self
            .rate_samples
            .front()
            .is_some_and(|(t, _)| now - *t > Duration::from_secs(10))
        {
            self.rate_samples.pop_front();
        }
        let recent_rate = match self.rate_samples.front() {
            Some((t, n)) if now > *t => (run.fetched - n) as f64 / (now - *t).as_secs_f64(),
            _ => 0.0,
        };
        let wait = self.revisit_wait.filter(|_| running);
        if let Ok(mut s) = self.shared.snapshot.lock() {
            let wait = wait.filter(|_| !control.is_some_and(Control::pending));
            self.wait_published = wait;
            *s = Snapshot {
                recent_rate,
                state,
                counters: l.counters().clone(),
                in_flight: self.tasks.len(),
                active_hosts: active,
                run_fetched: run.fetched,
                run_links: run.links,
                run_capped_links: run.capped_links,
                elapsed: self.started.elapsed(),
                recent_focus: run.recent,
                targets: run.targets,
                groups: l.group_counts(),
                revisit_due: wait
                    .map(|at| now + Duration::from_millis(at.saturating_sub(l.clock().now_ms()))),
            };
        }
    }

    pub(super) fn notice(&self, msg: String) {
        self.shared.notice(msg);
    }
}
