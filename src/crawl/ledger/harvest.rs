//! What this run has gathered: the pages it fetched and the links it
//! found, the recent harvest window with the stop rule it fired, and the
//! target list's recall. The counters (`Counters::run`) carry the same
//! figures to disk; this part keeps what the scheduler and `status` read.

use std::collections::HashSet;

use crate::crawl::focus::FocusWindow;
use crate::model::UrlId;
use crate::settings::StopRule;
use crate::store::{Store, StoreError};

#[derive(Default)]
pub(super) struct Harvest {
    /// The last pages' verdicts, for the recent harvest rate and the stop
    /// rules.
    focus: FocusWindow,
    /// The target list (`targets import`) and how many of it are fetched.
    targets: HashSet<UrlId>,
    targets_fetched: u64,
    /// The `crawl.stop_when` rule that fired, with its figures.
    stop_fired: Option<String>,
    /// This run's new pages (revisits apart), links, and links past a
    /// page's caps (see `Snapshot::run_capped_links`).
    fetched: u64,
    links: u64,
    capped_links: u64,
}

/// This run's figures as the scheduler publishes them.
pub(in crate::crawl) struct RunFigures {
    pub fetched: u64,
    pub links: u64,
    pub capped_links: u64,
    /// (judged, relevant) over the recent window.
    pub recent: (u64, u64),
    /// (targets, targets fetched).
    pub targets: (u64, u64),
}

impl Harvest {
    /// Loads the target list and counts the targets fetched so far.
    pub fn load_targets(&mut self, store: &Store) -> Result<(), StoreError> {
        (self.targets, self.targets_fetched) = store.targets_and_fetched()?;
        Ok(())
    }

    /// A page was judged: the window and the stop rules take it in.
    pub fn judged(&mut self, relevant: bool, text: &str, rules: &[StopRule]) {
        self.focus.judged(relevant, text, rules);
        if self.stop_fired.is_none() {
            self.stop_fired = self.focus.fired(rules);
        }
    }

    /// A new page (not a revisit) was fetched; returns whether it is a
    /// target.
    pub fn fetched(&mut self, id: UrlId) -> bool {
        self.fetched += 1;
        let target = self.targets.contains(&id);
        self.targets_fetched += u64::from(target);
        target
    }

    /// A page's links, and those past its caps.
    pub fn links(&mut self, kept: u64, capped: u64) {
        self.links += kept;
        self.capped_links += capped;
    }

    /// The stop rule that fired, with its figures.
    pub fn stop_fired(&self) -> Option<&str> {
        self.stop_fired.as_deref()
    }

    /// This run's new pages and links (what each batch's counters carry).
    pub fn counts(&self) -> (u64, u64) {
        (self.fetched, self.links)
    }

    pub fn figures(&self) -> RunFigures {
        RunFigures {
            fetched: self.fetched,
            links: self.links,
            capped_links: self.capped_links,
            recent: self.focus.recent(),
            targets: (self.targets.len() as u64, self.targets_fetched),
        }
    }
}
