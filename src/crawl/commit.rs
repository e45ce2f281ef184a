//! The ledger's writes: what a discovered URL becomes (filtered with a
//! reason, or queued), a URL leaving the frontier, and the batch that
//! carries each change with the host rows and counters it touches.

use std::collections::HashSet;

use super::engine::Engine;
use super::traps;
use crate::model::{self, CanonicalUrl, HostId, UrlId, now_ms};
use crate::schema::{
    CF_DETAILS, CF_FRONTIER, CF_HOSTS, CF_META, CF_ROBOTS, CF_SEEN, CF_URLS, DetailRecord,
    FailReason, FilterReason, FrontierEntry, FrontierKey, LinkLimits, SeenRecord, SeenState,
    Versioned, meta_keys,
};
use crate::store::{Batch, StoreError};

/// Where a newly discovered URL comes from.
pub(super) struct Discovery {
    depth: u16,
    parent: Option<UrlId>,
    redirects: u8,
    /// Seeds skip the scope and depth checks.
    seed: bool,
    /// Judge a URL filtered for depth or scope again (the limits changed).
    rejudge: bool,
    /// A filter that dropped the link before the seen check (domain, link type).
    filtered: Option<FilterReason>,
}

impl Discovery {
    /// A seed (or a URL a seed redirected to): no scope or depth check.
    pub(super) fn seed(depth: u16, parent: Option<UrlId>, redirects: u8) -> Discovery {
        Discovery {
            depth,
            parent,
            redirects,
            seed: true,
            rejudge: false,
            filtered: None,
        }
    }

    /// A link or redirect found on a page; `filtered` when a link filter
    /// dropped it before the seen check.
    pub(super) fn found(
        depth: u16,
        parent: UrlId,
        redirects: u8,
        filtered: Option<FilterReason>,
    ) -> Discovery {
        Discovery {
            depth,
            parent: Some(parent),
            redirects,
            seed: false,
            rejudge: false,
            filtered,
        }
    }

    /// A link from page `parent` that refilter now follows (or drops with
    /// `filtered`): one hop deeper than the page, its old verdict void.
    /// `parent_depth` is the page's depth, if it has one.
    pub(super) fn rejudged(
        parent: UrlId,
        parent_depth: Option<u16>,
        filtered: Option<FilterReason>,
    ) -> Discovery {
        Discovery {
            depth: parent_depth.map_or(1, |d| d.saturating_add(1)),
            parent: Some(parent),
            redirects: 0,
            seed: false,
            rejudge: true,
            filtered,
        }
    }
}

/// Whether re-judging a link (after new settings) reconsiders a URL seen
/// in `state`: only verdicts that settings can change are reopened.
pub(super) fn rejudge_reconsiders(state: SeenState) -> bool {
    matches!(
        state,
        SeenState::Filtered(
            FilterReason::Depth
                | FilterReason::Scope
                | FilterReason::Domain
                | FilterReason::LinkType
                | FilterReason::Refiltered
                | FilterReason::PathDepth
                | FilterReason::SegmentRepeats
                | FilterReason::QueryVariants
                | FilterReason::HostBudget,
        )
    )
}

pub(super) fn bump(map: &mut std::collections::BTreeMap<String, u64>, key: &str, by: i64) {
    let v = map.entry(key.to_string()).or_insert(0);
    *v = v.saturating_add_signed(by);
    if *v == 0 {
        map.remove(key);
    }
}

impl Engine {
    /// When the depth limit or scope differs from the last run's, URLs
    /// filtered for depth or scope are judged again under the new limits
    /// (one scan of `seen`, only on such a change).
    pub(super) fn rejudge_if_limits_changed(&mut self) -> Result<(), StoreError> {
        let now = self.settings.link_limits();
        let before: Option<LinkLimits> = self.store.get(CF_META, meta_keys::LINK_LIMITS)?;
        if before.as_ref() == Some(&now) {
            return Ok(());
        }
        let store = self.store.clone();
        let mut retry = Vec::new();
        if before.is_some() {
            for row in store.scan(CF_SEEN, &[]) {
                let (k, v) = row?;
                let rec =
                    SeenRecord::decode(&v).map_err(|err| StoreError::Codec { cf: CF_SEEN, err })?;
                let limited = matches!(
                    rec.state,
                    SeenState::Filtered(
                        FilterReason::Depth
                            | FilterReason::Scope
                            | FilterReason::PathDepth
                            | FilterReason::SegmentRepeats
                            | FilterReason::QueryVariants
                            | FilterReason::HostBudget
                    )
                );
                if limited && let Some(id) = UrlId::from_slice(&k) {
                    retry.push((id, rec));
                }
            }
        }
        let mut b = store.batch();
        let (mut pending, mut touched) = (HashSet::new(), Vec::new());
        for (id, rec) in retry {
            let Some(url) = store.url(id)?.and_then(|u| model::normalize(&u).ok()) else {
                continue;
            };
            let within = self.settings.max_depth.is_none_or(|m| rec.depth <= m);
            if within && self.scope.allows(self.settings.scope, &url) {
                let d = Discovery {
                    depth: rec.depth,
                    parent: rec.parent.map(UrlId),
                    redirects: rec.redirects,
                    seed: false,
                    rejudge: true,
                    filtered: None,
                };
                self.discover(&mut b, &mut pending, &mut touched, &url, d)?;
            }
        }
        b.put(CF_META, meta_keys::LINK_LIMITS, &now);
        self.finish(b, &touched)
    }

    /// Records a discovered URL: filtered with a reason, or queued. Returns
    /// nothing; every effect goes into `b` and the in-memory mirrors.
    pub(super) fn discover(
        &mut self,
        b: &mut Batch<'_>,
        pending: &mut HashSet<UrlId>,
        touched: &mut Vec<HostId>,
        url: &CanonicalUrl,
        d: Discovery,
    ) -> Result<(), StoreError> {
        let id = url.id();
        if !pending.insert(id) {
            return Ok(());
        }
        // Seeds and re-judged links may reopen any verdict: they always read
        // the stored one.
        let ordinary = !d.seed && !d.rejudge;
        if ordinary && self.settled.contains(id) {
            return Ok(());
        }
        let prior = if self.front.may_contain(id) {
            self.store.seen(id)?
        } else {
            None
        };
        let within_depth = d.seed || self.settings.max_depth.is_none_or(|m| d.depth <= m);
        if let Some(prior) = &prior {
            // A URL is reconsidered only where the earlier verdict may change:
            // a seed given again, or a shallower path to one that was too deep.
            // A link the crawl follows reopens a target another page's link
            // verdict dropped: the outcome must not depend on which page
            // was seen first.
            let retry = match prior.state {
                state if d.rejudge && rejudge_reconsiders(state) => true,
                SeenState::Filtered(FilterReason::Depth) => {
                    d.seed || (d.depth < prior.depth && within_depth)
                }
                SeenState::Filtered(FilterReason::Scope) => d.seed,
                SeenState::Filtered(FilterReason::LinkType | FilterReason::Refiltered) => {
                    d.filtered.is_none()
                }
                _ => false,
            };
            if !retry {
                if ordinary {
                    self.settled.record(id, prior.state);
                }
                return Ok(());
            }
            if let SeenState::Filtered(r) = prior.state {
                bump(&mut self.counters.filtered, r.name(), -1);
            }
        } else {
            self.front.insert(id);
            self.counters.seen += 1;
            b.put_raw(CF_URLS, &id.to_bytes(), url.as_str().as_bytes());
        }
        let mut state = if !d.seed && !self.scope.allows(self.settings.scope, url) {
            SeenState::Filtered(FilterReason::Scope)
        } else if let Some(r) = d.filtered {
            SeenState::Filtered(r)
        } else if !within_depth {
            SeenState::Filtered(FilterReason::Depth)
        } else if d.redirects > self.settings.max_redirects {
            SeenState::Filtered(FilterReason::RedirectChain)
        } else {
            SeenState::Queued
        };
        if state == SeenState::Queued
            && !d.seed
            && let Some(r) = self.trap_verdict(b, url)?
        {
            state = SeenState::Filtered(r);
        }
        let now = now_ms();
        let rec = SeenRecord {
            state,
            depth: d.depth,
            parent: d.parent.map(|p| p.0),
            redirects: d.redirects,
            updated_ms: now,
        };
        b.put(CF_SEEN, &id.to_bytes(), &rec);
        self.settled.record(id, state);
        match state {
            SeenState::Filtered(r) => bump(&mut self.counters.filtered, r.name(), 1),
            _ => {
                // One serialization of the origin serves both id and record.
                let origin = url.host_key();
                let host = HostId::of(&origin);
                let key = FrontierKey {
                    host,
                    priority: FrontierKey::bfs_priority(d.depth, self.counters.next_seq),
                    url: id,
                };
                self.counters.next_seq += 1;
                let entry = FrontierEntry {
                    url: url.as_str().to_string(),
                    depth: d.depth,
                    parent: d.parent.map(|p| p.0),
                    redirects: d.redirects,
                    attempts: 0,
                    enqueued_ms: now,
                };
                b.put(CF_FRONTIER, &key.to_key(), &entry);
                self.counters.queued += 1;
                let h = self.host(host, &origin)?;
                h.record.queued += 1;
                h.record.urls += 1;
                h.queue.push(key, entry);
                if !touched.contains(&host) {
                    touched.push(host);
                }
                let at = h.record.next_fetch_ms;
                self.schedule(host, at)?;
            }
        }
        Ok(())
    }

    /// The spider-trap limit a URL about to be queued runs into, if any;
    /// when none does, its query string is counted against its path.
    fn trap_verdict(
        &mut self,
        b: &mut Batch<'_>,
        url: &CanonicalUrl,
    ) -> Result<Option<FilterReason>, StoreError> {
        let limits = self.settings.traps;
        if let Some(r) = traps::shape_verdict(url, &limits) {
            return Ok(Some(r));
        }
        let host = url.host_id();
        if let Some(max) = limits.max_host_urls {
            let h = self.host(host, &url.host_key())?;
            if h.record.urls >= max {
                return Ok(Some(FilterReason::HostBudget));
            }
        }
        if url.url().query().is_some() {
            let key = traps::path_key(host, url);
            let n = self.variants.count(&self.store, &key)?;
            if limits.max_query_variants.is_some_and(|m| n >= m) {
                return Ok(Some(FilterReason::QueryVariants));
            }
            self.variants.add(b, &key, n);
        }
        Ok(None)
    }

    /// Removes a popped entry from the frontier (inside `b`).
    pub(super) fn dequeue(
        &mut self,
        b: &mut Batch<'_>,
        key: FrontierKey,
    ) -> Result<(), StoreError> {
        b.delete(CF_FRONTIER, &key.to_key());
        self.counters.queued = self.counters.queued.saturating_sub(1);
        let h = self.host(key.host, "")?;
        h.record.queued = h.record.queued.saturating_sub(1);
        h.queue.done(key.url);
        Ok(())
    }

    pub(super) fn mark(
        &self,
        b: &mut Batch<'_>,
        id: UrlId,
        entry: &FrontierEntry,
        state: SeenState,
    ) {
        let rec = SeenRecord {
            state,
            depth: entry.depth,
            parent: entry.parent,
            redirects: entry.redirects,
            updated_ms: now_ms(),
        };
        b.put(CF_SEEN, &id.to_bytes(), &rec);
    }

    pub(super) fn finish(&mut self, mut b: Batch<'_>, hosts: &[HostId]) -> Result<(), StoreError> {
        for h in hosts {
            if let Some(state) = self.hosts.get_mut(h) {
                // The host's row goes with every page of it; its robots.txt
                // (up to 500 KiB) only when it changed.
                let robots = state.record.robots.take();
                b.put(CF_HOSTS, &h.to_bytes(), &state.record);
                if let Some(r) = robots.as_ref().filter(|_| state.robots_unsaved) {
                    b.put(CF_ROBOTS, &h.to_bytes(), r);
                    state.robots_unsaved = false;
                }
                state.record.robots = robots;
            }
        }
        if self.run_started_ms != 0 {
            let run = &mut self.counters.run;
            (run.fetched, run.links, run.last_ms) = (self.run_fetched, self.run_links, now_ms());
        }
        b.put(CF_META, meta_keys::COUNTERS, &self.counters);
        // Marks asked for since the last batch ride along with this one.
        let marked = self.marks.write_into(&mut b);
        b.write()?;
        self.marks.written(marked);
        Ok(())
    }

    pub(super) fn write_host(&mut self, id: HostId) -> Result<(), StoreError> {
        let store = self.store.clone();
        self.finish(store.batch(), &[id])
    }

    pub(super) fn commit_robots_denied(
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
        self.dequeue(&mut b, key)?;
        self.mark(&mut b, key.url, &entry, SeenState::Filtered(r));
        bump(&mut self.counters.filtered, r.name(), 1);
        self.finish(b, &[key.host])
    }

    /// A queued URL that no longer parses (written by another version).
    pub(super) fn commit_unfetchable(
        &mut self,
        key: FrontierKey,
        entry: FrontierEntry,
    ) -> Result<(), StoreError> {
        self.commit_filtered(key, entry, FilterReason::InvalidUrl)
    }

    /// robots.txt stayed unreachable: every queued URL of the host is dropped.
    pub(super) fn drop_host_queue(&mut self, id: HostId) -> Result<(), StoreError> {
        let r = FilterReason::RobotsUnavailable;
        self.empty_host_queue(id, SeenState::Filtered(r), None)
    }

    /// Nothing of the host can be fetched: every queued URL of it fails
    /// with `reason`, its `detail` kept for `why`.
    pub(super) fn fail_host_queue(
        &mut self,
        id: HostId,
        reason: FailReason,
        detail: &str,
    ) -> Result<(), StoreError> {
        let d = DetailRecord {
            reason: reason.name().into(),
            detail: detail.into(),
            at_ms: now_ms(),
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
            let h = self.host(id, "")?;
            while popped.len() < 1000 {
                match h.queue.pop(&store)? {
                    Some(p) => popped.push(p),
                    None => break,
                }
            }
            let last = popped.len() < 1000;
            let mut b = store.batch();
            for (key, entry) in popped {
                self.dequeue(&mut b, key)?;
                self.mark(&mut b, key.url, &entry, state);
                match state {
                    SeenState::Filtered(r) => bump(&mut self.counters.filtered, r.name(), 1),
                    SeenState::Failed(r) => bump(&mut self.counters.failed, r.name(), 1),
                    _ => {}
                }
                if let Some(d) = detail {
                    b.put(CF_DETAILS, &key.url.to_bytes(), d);
                }
            }
            self.finish(b, &[id])?;
            if last {
                return Ok(());
            }
        }
    }
}
