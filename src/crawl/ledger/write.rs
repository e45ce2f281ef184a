//! The ledger's writes: a URL leaving the frontier (fetched, filtered or
//! failed), its `seen` mark, and the batch that carries each change with
//! the host rows and counters it touches.

use std::collections::HashSet;

use super::Ledger;
use crate::model::{FailReason, FilterReason, SeenState};
use crate::model::{HostId, UrlId};
use crate::schema::Filtered;
use crate::schema::tables::{CountersRow, Details, Frontier, Hosts, Robots, Seen};
use crate::schema::{DetailRecord, FrontierEntry, FrontierKey, SeenRecord};
use crate::store::{Batch, Store, StoreError};

/// One atomic change in the making: the batch, the URLs it has judged
/// already (a page linking one URL twice judges it once) and the hosts
/// whose rows it must carry.
pub struct PageWrite<'a> {
    pub b: Batch<'a>,
    pub pending: HashSet<UrlId>,
    pub touched: Vec<HostId>,
    /// The link targets of the version a revisit replaced: their in-link
    /// from it was counted (importance) once already.
    pub unboosted: HashSet<UrlId>,
}

impl<'a> PageWrite<'a> {
    pub fn new(store: &'a Store) -> PageWrite<'a> {
        PageWrite {
            b: store.batch(),
            pending: HashSet::new(),
            touched: Vec::new(),
            unboosted: HashSet::new(),
        }
    }

    /// The host's row goes with this write.
    pub fn touch(&mut self, host: HostId) {
        if !self.touched.contains(&host) {
            self.touched.push(host);
        }
    }
}

impl Ledger {
    /// Removes a popped entry from the frontier (inside `b`).
    pub fn dequeue(
        &mut self,
        b: &mut Batch<'_>,
        key: FrontierKey,
        entry: &FrontierEntry,
    ) -> Result<(), StoreError> {
        b.delete_row::<Frontier>(&key);
        self.counters.queued = self.counters.queued.saturating_sub(1);
        if entry.revisit.is_some() {
            let c = &mut self.counters;
            c.revisits_queued = c.revisits_queued.saturating_sub(1);
        }
        let h = self.loaded(key.host)?;
        h.record.queued = h.record.queued.saturating_sub(1);
        h.queue.done(key.url);
        // (An in-link to it would raise nothing: see `boost`.)
        if self
            .settings
            .order
            .needs_as(self.order_of(key.host))
            .inlinks
        {
            self.order.left(key.url);
        }
        Ok(())
    }

    pub fn mark(&self, b: &mut Batch<'_>, id: UrlId, entry: &FrontierEntry, state: SeenState) {
        let rec = SeenRecord {
            state,
            depth: entry.depth,
            parent: entry.parent,
            redirects: entry.redirects,
            updated_ms: self.clock.now_ms(),
            priority: None,
            scores: entry.scores.clone(),
        };
        b.put_row::<Seen>(&id, &rec);
    }

    pub fn finish(&mut self, mut b: Batch<'_>, hosts: &[HostId]) -> Result<(), StoreError> {
        for h in hosts {
            self.touched.insert(*h);
            if let Some(state) = self.hosts.get_mut(*h) {
                // The host's row goes with every page of it; its robots.txt
                // (up to 500 KiB) only when it changed.
                let robots = state.record.robots.take();
                b.put_row::<Hosts>(h, &state.record);
                if let Some(r) = robots.as_ref().filter(|_| state.robots_unsaved) {
                    b.put_row::<Robots>(h, r);
                    state.robots_unsaved = false;
                }
                state.record.robots = robots;
            }
        }
        if self.run_started_ms != 0 {
            let (fetched, links) = self.harvest.counts();
            let run = &mut self.counters.run;
            (run.fetched, run.links, run.last_ms) = (fetched, links, self.clock.now_ms());
        }
        b.put_meta::<CountersRow>(&self.counters);
        // Marks asked for since the last batch ride along with this one.
        let marked = self.marks.write_into(&mut b);
        b.write()?;
        self.marks.written(marked);
        if self.inlinks.is_full() {
            self.write_inlinks()?;
        }
        Ok(())
    }

    /// Writes the in-links waiting in the window (when it is full, and
    /// when a run ends).
    pub fn write_inlinks(&mut self) -> Result<(), StoreError> {
        self.inlinks.write(&self.store)
    }

    pub fn write_host(&mut self, id: HostId) -> Result<(), StoreError> {
        let store = self.store.clone();
        self.finish(store.batch(), &[id])
    }

    pub fn commit_robots_denied(
        &mut self,
        key: FrontierKey,
        entry: FrontierEntry,
    ) -> Result<(), StoreError> {
        self.commit_filtered(key, entry, FilterReason::Robots)
    }

    fn commit_filtered(
        &mut self,
        key: FrontierKey,
        entry: FrontierEntry,
        r: FilterReason,
    ) -> Result<(), StoreError> {
        let store = self.store.clone();
        let mut b = store.batch();
        self.leave_queue(&mut b, key, &entry, SeenState::Filtered(r))?;
        self.finish(b, &[key.host])
    }

    /// A popped URL leaves the frontier unfetched as `state` (filtered or
    /// failed); a revisit's page stays as stored, its revisit missed.
    pub(super) fn leave_queue(
        &mut self,
        b: &mut Batch<'_>,
        key: FrontierKey,
        entry: &FrontierEntry,
        state: SeenState,
    ) -> Result<(), StoreError> {
        self.dequeue(b, key, entry)?;
        if entry.revisit.is_some() {
            let why = match state {
                SeenState::Filtered(r) => r.name(),
                SeenState::Failed(r) => r.name(),
                _ => "",
            };
            return self.revisit_missed(b, key.url, why);
        }
        self.mark(b, key.url, entry, state);
        match state {
            SeenState::Filtered(r) => self.counters.filtered.add(Filtered::Url(r), 1),
            SeenState::Failed(r) => self.counters.failed.add(r, 1),
            _ => {}
        }
        Ok(())
    }

    /// A queued URL that no longer parses (written by another version).
    pub fn commit_unfetchable(
        &mut self,
        key: FrontierKey,
        entry: FrontierEntry,
    ) -> Result<(), StoreError> {
        self.commit_filtered(key, entry, FilterReason::InvalidUrl)
    }

    /// robots.txt stayed unreachable: every queued URL of the host is dropped.
    pub fn drop_host_queue(&mut self, id: HostId) -> Result<(), StoreError> {
        let r = FilterReason::RobotsUnavailable;
        self.empty_host_queue(id, SeenState::Filtered(r), None)
    }

    /// Nothing of the host can be fetched: every queued URL of it fails
    /// with `reason`, its `detail` kept for `why`.
    pub fn fail_host_queue(
        &mut self,
        id: HostId,
        reason: FailReason,
        detail: &str,
    ) -> Result<(), StoreError> {
        let d = DetailRecord {
            reason: reason.name().into(),
            detail: detail.into(),
            at_ms: self.clock.now_ms(),
        };
        self.empty_host_queue(id, SeenState::Failed(reason), Some(&d))
    }

    /// Every queued URL of host `id` leaves the frontier as `state`.
    fn empty_host_queue(
        &mut self,
        id: HostId,
        state: SeenState,
        detail: Option<&DetailRecord>,
    ) -> Result<(), StoreError> {
        let store = self.store.clone();
        loop {
            let mut popped = Vec::new();
            let h = self.loaded(id)?;
            while popped.len() < 1000 {
                match h.queue.pop(&store)? {
                    Some(p) => popped.push(p),
                    None => break,
                }
            }
            let last = popped.len() < 1000;
            let mut b = store.batch();
            for (key, entry) in popped {
                self.leave_queue(&mut b, key, &entry, state)?;
                if let Some(d) = detail.filter(|_| entry.revisit.is_none()) {
                    b.put_row::<Details>(&key.url, d);
                }
            }
            self.finish(b, &[id])?;
            if last {
                return Ok(());
            }
        }
    }
}
