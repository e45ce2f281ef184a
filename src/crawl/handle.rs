//! A cheap-to-clone handle on a running crawl: stop it, read its progress.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::schema::Counters;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CrawlState {
    #[default]
    Starting,
    Running,
    Paused,
    Stopping,
    Done,
}

/// Progress as of the scheduler's last publication (at most ~250 ms old).
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub state: CrawlState,
    pub counters: Counters,
    pub in_flight: usize,
    /// Hosts with queued or in-flight URLs.
    pub active_hosts: usize,
    /// Pages fetched by this run (not the db's lifetime total).
    pub run_fetched: u64,
    pub run_links: u64,
    /// Links this run's pages had past `crawl.max_outlinks` or the link
    /// bytes a page may hold: not followed.
    pub run_capped_links: u64,
    pub elapsed: Duration,
    /// Pages per second over the last 10 s.
    pub recent_rate: f64,
    /// Of the last 1,000 pages the page filters judged: judged, kept.
    pub recent_focus: (u64, u64),
    /// The target list's size, and how many of it are fetched.
    pub targets: (u64, u64),
    /// The site groups (`crawl.site_batch`), when on.
    pub groups: Option<crate::crawl::groups::GroupCounts>,
    /// Nothing queued or in flight while the crawl runs: it only waits for
    /// its next revisit, due then. A crawl with revisits on never ends by
    /// itself, so `crawl wait` stops waiting here.
    pub revisit_due: Option<std::time::Instant>,
}

/// A wait as `2h 05m 09s` (the next revisit's, in notes).
pub fn wait_text(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}h {:02}m {:02}s", s / 3600, s % 3600 / 60, s % 60)
}

/// What the shell changed in the seed library of a running crawl.
pub(super) enum SeedChange {
    /// New seeds, to queue.
    Add(Vec<crate::model::CanonicalUrl>),
    /// Sites' own settings (`seed set`, `seed import`): read them again.
    Sites,
}

pub(super) struct Shared {
    pub stop: watch::Sender<bool>,
    pub paused: watch::Sender<bool>,
    pub settings: watch::Sender<crate::settings::CrawlSettings>,
    pub seeds: tokio::sync::mpsc::UnboundedSender<SeedChange>,
    pub snapshot: Mutex<Snapshot>,
    /// Things worth telling the user (a capped Crawl-delay, a host given up).
    pub notices: Mutex<Vec<String>>,
}

impl Shared {
    /// Tells the user `msg` (taken by the CLI or shell with the notices).
    pub fn notice(&self, msg: String) {
        if let Ok(mut n) = self.notices.lock() {
            n.push(msg);
        }
    }
}

#[derive(Clone)]
pub struct CrawlHandle {
    pub(super) shared: Arc<Shared>,
}

impl CrawlHandle {
    /// Asks the crawl to stop: no new fetches; in-flight ones finish (within
    /// the grace period) and are recorded.
    pub fn stop(&self) {
        self.shared.stop.send_replace(true);
    }

    /// Stops dispatching new fetches (those in flight finish) until resumed.
    pub fn pause(&self) {
        self.shared.paused.send_replace(true);
    }

    pub fn resume(&self) {
        self.hand_over(|| {
            self.shared.paused.send_replace(false);
        });
    }

    /// Adds seeds to the running crawl (invalid URLs are skipped; validate
    /// them first).
    pub fn add_seeds(&self, urls: Vec<String>) {
        let seeds = urls
            .iter()
            .filter_map(|u| crate::model::normalize(u).ok())
            .collect();
        self.hand_over(|| {
            let _ = self.shared.seeds.send(SeedChange::Add(seeds));
        });
    }

    /// Tells the crawl that seed sites' own settings changed in the db.
    pub fn sites_changed(&self) {
        self.hand_over(|| {
            let _ = self.shared.seeds.send(SeedChange::Sites);
        });
    }

    /// The settings the crawl runs with now.
    pub fn settings(&self) -> crate::settings::CrawlSettings {
        self.shared.settings.borrow().clone()
    }

    /// Replaces the running crawl's settings; they apply from its next decision.
    pub fn set_settings(&self, s: crate::settings::CrawlSettings) {
        self.hand_over(|| {
            self.shared.settings.send_replace(s);
        });
    }

    /// Hands the crawl a change that may be work (`send`) under the
    /// snapshot's lock, with the wait it showed cleared: the crawl, which
    /// publishes a wait under the same lock only while no change is
    /// pending, shows one again only after taking this one.
    fn hand_over(&self, send: impl FnOnce()) {
        match self.shared.snapshot.lock() {
            Ok(mut s) => {
                s.revisit_due = None;
                send();
            }
            Err(_) => send(),
        }
    }

    pub fn snapshot(&self) -> Snapshot {
        self.shared
            .snapshot
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Notices since the last call.
    pub fn take_notices(&self) -> Vec<String> {
        self.shared
            .notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }
}
