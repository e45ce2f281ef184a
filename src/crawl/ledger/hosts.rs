//! The hosts the crawl has met, in memory: each one's record, robots.txt
//! rules, queue and back-off hold, loaded from its `hosts` row on first
//! use; the politeness gap between two of its requests; and what a host
//! the scheduler took from the ready heap does next (`next_for`).

use std::collections::HashMap;

use super::Ledger;
use crate::crawl::politeness::{self, Politeness};
use crate::crawl::worker::PageJob;
use crate::fetch::{NetGuard, RobotsRules};
use crate::frontier::HostQueue;
use crate::model::{self, HostId};
use crate::schema::HostRecord;
use crate::store::StoreError;

pub(super) struct HostState {
    pub record: HostRecord,
    /// `record.robots` is not in the `robots` column family yet: fetched
    /// since the host was last written, or read from inside the host's row
    /// of a db older than schema 6.
    pub robots_unsaved: bool,
    pub rules: Option<RobotsRules>,
    pub queue: HostQueue,
    /// No fetch before this: a 429/503 back-off (or the next fetch time a
    /// resumed host was left with). Checked at dispatch, as the host may
    /// already sit in the ready heap at an earlier time.
    pub hold_until_ms: u64,
}

/// The hosts this run has loaded, by id.
#[derive(Default)]
pub(super) struct HostBook {
    map: HashMap<HostId, HostState>,
}

impl HostBook {
    pub fn get(&self, id: HostId) -> Option<&HostState> {
        self.map.get(&id)
    }

    pub fn get_mut(&mut self, id: HostId) -> Option<&mut HostState> {
        self.map.get_mut(&id)
    }

    /// A host loaded before (`Ledger::loaded` was called for it).
    pub fn loaded(&self, id: HostId) -> &HostState {
        self.map.get(&id).expect("host loaded")
    }

    pub fn contains(&self, id: HostId) -> bool {
        self.map.contains_key(&id)
    }

    /// Host `id`'s state as first loaded (one loaded before stays).
    fn insert(&mut self, id: HostId, state: HostState) -> &mut HostState {
        self.map.entry(id).or_insert(state)
    }

    /// Host `id` as the scheduler sees it, if loaded.
    pub fn view(&self, id: HostId) -> Option<HostView> {
        self.map.get(&id).map(|h| HostView {
            next_fetch_ms: h.record.next_fetch_ms,
            idle: h.queue.is_idle(),
            drained: h.queue.is_drained(),
        })
    }

    /// How many hosts have work queued or in flight.
    pub fn active(&self) -> usize {
        self.map.values().filter(|h| !h.queue.is_idle()).count()
    }

    /// The robots.txt rules of every host, read again for `agent`.
    pub fn reread_rules(&mut self, agent: &str) {
        for h in self.map.values_mut() {
            let robots = h.record.robots.as_ref();
            h.rules = robots.map(|r| RobotsRules::from_record(r, agent));
        }
    }
}

/// What the scheduler reads of a loaded host.
#[derive(Clone, Copy, Debug)]
pub(in crate::crawl) struct HostView {
    /// When it may be asked again.
    pub next_fetch_ms: u64,
    /// Nothing queued and nothing in flight.
    pub idle: bool,
    /// Nothing queued (pages may be in flight).
    pub drained: bool,
}

/// What a host taken from the ready heap does next.
pub(in crate::crawl) enum Next {
    /// Fetch this page; the host is ready again at `again` (another page
    /// may go while this one is in flight).
    Page {
        job: Box<PageJob>,
        again: Option<u64>,
    },
    /// Fetch its robots.txt first (`seed`: the guard's exception a seed
    /// host's robots.txt redirects may take along).
    Robots {
        origin: String,
        seed: Option<NetGuard>,
    },
    /// Nothing before `at` (ms): back in the ready heap then.
    Hold(u64),
    /// Nothing now: it is put back when work it waits for ends.
    Idle,
}

/// What the scheduler knows of a host that the ledger does not.
#[derive(Clone, Copy, Debug)]
pub(in crate::crawl) struct Ask {
    pub now: u64,
    /// `crawl.per_host`, at least 1.
    pub per_host: usize,
    /// Another host's turn is due now.
    pub others_wait: bool,
    /// Its robots.txt is being fetched.
    pub robots_in_flight: bool,
}

impl Ledger {
    /// The state of a host the crawl has met: in memory, else loaded from
    /// its `hosts` row (one with neither would start with an empty origin:
    /// where a new host may be met, callers name it with `load`).
    pub(super) fn loaded(&mut self, id: HostId) -> Result<&mut HostState, StoreError> {
        self.load(id, "")
    }

    /// Host `id`'s in-memory state, loaded from `hosts` on first use; a
    /// host never stored starts with `origin`.
    pub(super) fn load(&mut self, id: HostId, origin: &str) -> Result<&mut HostState, StoreError> {
        if self.hosts.contains(id) {
            return Ok(self.hosts.get_mut(id).expect("loaded"));
        }
        let (mut record, robots_unsaved) =
            self.store.host_and_robots_place(id)?.unwrap_or_else(|| {
                let fresh = HostRecord {
                    origin: origin.to_string(),
                    order_gen: self.order.generation(),
                    ..Default::default()
                };
                (fresh, false)
            });
        record.next_fetch_ms = self.politeness().clamp_on_load(
            record.next_fetch_ms,
            self.clock.now_ms(),
            self.site_delay_ms(id),
            record.crawl_delay_ms,
        );
        let rules = record
            .robots
            .as_ref()
            .map(|r| RobotsRules::from_record(r, &self.agent));
        let state = HostState {
            robots_unsaved,
            hold_until_ms: record.next_fetch_ms,
            record,
            rules,
            queue: HostQueue::new(id),
        };
        Ok(self.hosts.insert(id, state))
    }

    /// Loads host `id` (from its row) if this run has not yet.
    pub fn load_host(&mut self, id: HostId) -> Result<(), StoreError> {
        self.loaded(id).map(|_| ())
    }

    /// Host `id` as the scheduler sees it, if loaded.
    pub fn host_view(&self, id: HostId) -> Option<HostView> {
        self.hosts.view(id)
    }

    /// How many loaded hosts have work queued or in flight.
    pub fn active_hosts(&self) -> usize {
        self.hosts.active()
    }

    /// The politeness rule's numbers under the settings in force.
    pub fn politeness(&self) -> Politeness {
        Politeness::of(&self.settings)
    }

    /// The gap between two requests to a host: ours or its Crawl-delay.
    pub fn delay_ms(&self, id: HostId) -> u64 {
        let crawl_delay = self.hosts.get(id).and_then(|h| h.record.crawl_delay_ms);
        self.politeness()
            .gap_ms(self.site_delay_ms(id), crawl_delay)
    }

    /// What host `id`, taken from the ready heap, does next: its next
    /// page (leaving the frontier, marked in flight by the caller), its
    /// robots.txt, a wait, or nothing until work in flight ends. A queued
    /// URL it may not fetch (robots.txt, an old normalizer) is recorded
    /// and the host is asked again now.
    pub fn next_for(&mut self, id: HostId, ask: Ask) -> Result<Next, StoreError> {
        self.loaded(id)?;
        // A queue keyed under an older order is re-keyed before its pop.
        self.ensure_keyed(id)?;
        if self.site_budget_spent(id) || self.group_waits(id) {
            // Held while its seed site's max_pages are fetched (a `seed
            // set` that raises them touches the host, which schedules it),
            // or its site waits for a later group (the group's start
            // touches it).
            return Ok(Next::Idle);
        }
        let h = self.hosts.get_mut(id).expect("host loaded");
        if ask.robots_in_flight || h.queue.in_flight() >= ask.per_host {
            return Ok(Next::Idle); // rescheduled when that work completes
        }
        if h.hold_until_ms > ask.now {
            return Ok(Next::Hold(h.hold_until_ms));
        }
        let expires = h.record.robots.as_ref().map_or(0, |r| r.expires_ms);
        if h.rules.is_none() || expires <= ask.now {
            let origin = h.record.origin.clone();
            let seed = self.seeds.is_seed_host(id).then(|| self.guard.clone());
            return Ok(Next::Robots { origin, seed });
        }
        if h.rules.as_ref().is_some_and(RobotsRules::is_unreachable) {
            return Ok(Next::Hold(expires));
        }
        if !politeness::sends_another(h.queue.in_flight(), ask.others_wait) {
            return Ok(Next::Idle);
        }
        let Some((key, entry)) = h.queue.pop(&self.store)? else {
            return Ok(Next::Idle);
        };
        let Ok(url) = model::normalize(&entry.url) else {
            // Stored by an older normalizer: drop it from the queue.
            self.commit_unfetchable(key, entry)?;
            return Ok(Next::Hold(ask.now));
        };
        let allowed = h
            .rules
            .as_ref()
            .is_some_and(|r| r.allows(url.path_and_query()));
        if !allowed {
            self.commit_robots_denied(key, entry)?;
            return Ok(Next::Hold(ask.now));
        }
        let (in_flight, drained) = (h.queue.in_flight(), h.queue.is_drained());
        let more = politeness::ready_for_more(in_flight, ask.per_host, drained, ask.others_wait);
        let again = more.then(|| ask.now + self.delay_ms(id));
        Ok(Next::Page {
            job: Box::new(PageJob { key, entry, url }),
            again,
        })
    }
}
