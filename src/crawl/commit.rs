//! Turning one outcome into one atomic batch: the page, its doc, its links,
//! the seen marks and frontier entries of what it discovered, the host's
//! state and the counters, all written together.

use std::borrow::Cow;
use std::collections::HashSet;

use super::engine::Engine;
use super::worker::{PageData, PageJob};
use crate::fetch::{FetchError, is_backoff, retry_after_ms};
use crate::filter::links::{self, LinkType};
use crate::filter::{Filters, PageVerdict};
use crate::model::{self, CanonicalUrl, HostId, UrlId, now_ms};
use crate::schema::{
    CF_CONTENT, CF_DOCS, CF_FRONTIER, CF_HOSTS, CF_INLINKS, CF_LINKS, CF_META, CF_PAGE_INDEX,
    CF_PAGES, CF_ROBOTS, CF_SEEN, CF_URLS, CF_VERDICTS, DocRecord, FilterReason, FrontierEntry,
    FrontierKey, LinkKey, LinkLimits, LinkView, PageLinksBuilder, PageRecord, SeedList, SeenRecord,
    SeenState, Versioned, meta_keys, page_index,
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
                | FilterReason::Refiltered,
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
    /// Adds seeds: new ones are queued at depth 0, ones filtered before are
    /// queued again, fetched ones are left alone.
    /// Loads the stored seeds into the scope and the filters (reads only).
    pub(super) fn load_seeds(&mut self) -> Result<(), StoreError> {
        for s in &self.store.seeds()?.urls {
            if let Ok(u) = model::normalize(s) {
                self.scope.add(&u);
            }
        }
        self.rebuild_filters()
    }

    pub(super) fn add_seeds(&mut self, seeds: &[CanonicalUrl]) -> Result<(), StoreError> {
        let mut list: SeedList = self.store.seeds()?;
        let store = self.store.clone();
        let mut b = store.batch();
        let mut pending = HashSet::new();
        let mut touched = Vec::new();
        for seed in seeds {
            self.scope.add(seed);
            if !list.urls.iter().any(|u| u == seed.as_str()) {
                list.urls.push(seed.as_str().to_string());
            }
            let d = Discovery {
                depth: 0,
                parent: None,
                redirects: 0,
                seed: true,
                rejudge: false,
                filtered: None,
            };
            self.discover(&mut b, &mut pending, &mut touched, seed, d)?;
        }
        b.put(CF_META, meta_keys::SEEDS, &list);
        self.finish(b, &touched)?;
        self.rebuild_filters()
    }

    /// When the depth limit or scope differs from the last run's, URLs
    /// filtered for depth or scope are judged again under the new limits
    /// (one scan of `seen`, only on such a change).
    pub(super) fn rejudge_if_limits_changed(&mut self) -> Result<(), StoreError> {
        let now = LinkLimits {
            max_depth: self.settings.max_depth,
            scope: self.settings.scope.name().to_string(),
        };
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
                if matches!(
                    rec.state,
                    SeenState::Filtered(FilterReason::Depth | FilterReason::Scope)
                ) && let Some(id) = UrlId::from_slice(&k)
                {
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
            let retry = match prior.state {
                state if d.rejudge && rejudge_reconsiders(state) => true,
                SeenState::Filtered(FilterReason::Depth) => {
                    d.seed || (d.depth < prior.depth && within_depth)
                }
                SeenState::Filtered(FilterReason::Scope) => d.seed,
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
        let state = if !d.seed && !self.scope.allows(self.settings.scope, url) {
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

    fn mark(&self, b: &mut Batch<'_>, id: UrlId, entry: &FrontierEntry, state: SeenState) {
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
        b.put(CF_META, meta_keys::COUNTERS, &self.counters);
        b.write()
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
        self.commit_filtered(key, entry, FilterReason::UrlTooLong)
    }

    /// robots.txt stayed unreachable: every queued URL of the host is dropped.
    pub(super) fn drop_host_queue(&mut self, id: HostId) -> Result<(), StoreError> {
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
                self.mark(
                    &mut b,
                    key.url,
                    &entry,
                    SeenState::Filtered(FilterReason::RobotsUnavailable),
                );
                bump(
                    &mut self.counters.filtered,
                    FilterReason::RobotsUnavailable.name(),
                    1,
                );
            }
            self.finish(b, &[id])?;
            if last {
                return Ok(());
            }
        }
    }

    /// Records a page fetch; returns when the host may be asked again (ms).
    pub(super) fn commit_page(
        &mut self,
        job: PageJob,
        result: Result<PageData, FetchError>,
    ) -> Result<u64, StoreError> {
        let store = self.store.clone();
        let mut b = store.batch();
        let host = job.key.host;
        let id = job.url.id();
        let now = now_ms();
        self.host(host, &job.url.host_key())?;
        let delay = self.host_delay_ms(&self.hosts[&host]);
        let mut next_at = now + delay;
        let mut touched = vec![host];
        let data = match result {
            Err(e) => {
                self.dequeue(&mut b, job.key)?;
                self.mark(&mut b, id, &job.entry, SeenState::Failed(e.reason));
                bump(&mut self.counters.failed, e.reason.name(), 1);
                let h = self.host(host, "")?;
                h.record.errors += 1;
                h.record.error_streak += 1;
                h.record.next_fetch_ms = next_at;
                self.finish(b, &touched)?;
                return Ok(next_at);
            }
            Ok(d) => d,
        };
        let f = &data.fetched;
        let status = http::StatusCode::from_u16(f.status).unwrap_or(http::StatusCode::OK);
        if is_backoff(status) {
            let wait = f
                .retry_after
                .as_deref()
                .and_then(retry_after_ms)
                .unwrap_or(self.settings.backoff.as_millis() as u64);
            next_at = now
                + wait
                    .min(self.settings.max_backoff.as_millis() as u64)
                    .max(delay);
            if job.entry.attempts + 1 < self.settings.max_attempts {
                let entry = FrontierEntry {
                    attempts: job.entry.attempts + 1,
                    ..job.entry
                };
                b.put(CF_FRONTIER, &job.key.to_key(), &entry);
                let h = self.host(host, "")?;
                h.queue.requeue(job.key, entry);
                h.record.next_fetch_ms = next_at;
                self.finish(b, &touched)?;
                return Ok(next_at);
            }
        }
        self.dequeue(&mut b, job.key)?;
        self.mark(
            &mut b,
            id,
            &job.entry,
            SeenState::Fetched { status: f.status },
        );
        self.counters.fetched += 1;
        self.run_fetched += 1;
        self.counters.bytes += f.wire_len;
        *self.counters.by_status.entry(f.status).or_insert(0) += 1;
        let h = self.host(host, "")?;
        h.record.fetched += 1;
        h.record.error_streak = 0;
        h.record.next_fetch_ms = next_at;

        let mut pending = HashSet::from([id]);
        let mut redirect_to = None;
        if (300..400).contains(&f.status)
            && let Some(loc) = &f.location
        {
            match model::resolve(job.url.url(), loc) {
                Ok(target) => {
                    redirect_to = Some(target.as_str().to_string());
                    let d = Discovery {
                        depth: job.entry.depth,
                        parent: Some(id),
                        redirects: job.entry.redirects + 1,
                        seed: false,
                        rejudge: false,
                        filtered: None,
                    };
                    self.discover(&mut b, &mut pending, &mut touched, &target, d)?;
                }
                Err(model::UrlError::TooLong(_)) => bump(
                    &mut self.counters.filtered,
                    FilterReason::UrlTooLong.name(),
                    1,
                ),
                Err(_) => self.counters.invalid_links += 1,
            }
        }
        for key in page_index::keys(f.status, job.url.host(), id) {
            b.put_raw(CF_PAGE_INDEX, &key, &[]);
        }
        b.put(
            CF_PAGES,
            &id.to_bytes(),
            &PageRecord {
                url: job.url.as_str().to_string(),
                status: f.status,
                http_version: f.http_version.to_string(),
                content_type: f.content_type.clone(),
                headers: f.headers.clone(),
                fetched_ms: now,
                elapsed_ms: f.elapsed.as_millis().min(u32::MAX as u128) as u32,
                depth: job.entry.depth,
                md5: data.md5,
                wire_len: f.wire_len,
                body_len: data.body_len,
                truncated: f.truncated,
                body_zstd: data.body_zstd,
                redirect_to,
            },
        );
        if let Some(html) = data.parsed {
            let page = html.page;
            let duplicate_of = match store
                .get_raw(CF_CONTENT, &data.md5)?
                .and_then(|v| UrlId::from_slice(&v))
            {
                Some(first) if first != id => Some(first),
                Some(_) => None,
                None => {
                    b.put_raw(CF_CONTENT, &data.md5, &id.to_bytes());
                    None
                }
            };
            let verdict = self.filters.page(job.url.host(), &page.title, &page.text);
            if duplicate_of.is_some() {
                self.counters.duplicates += 1;
            } else {
                let mut row = PageLinksBuilder::default();
                for link in &page.links {
                    let kind = links::classify(job.url.url(), link.url.url());
                    let judge = LinkJudge {
                        filters: &self.filters,
                        follow_nofollow: self.settings.follow_nofollow,
                    };
                    let text = LinkText {
                        nofollow: link.nofollow,
                        before: &link.before,
                        anchor: &link.anchor,
                        after: &link.after,
                    };
                    let decision = judge_link(
                        judge,
                        kind,
                        (id, link.url.id()),
                        Some(link.url.host()),
                        page.nofollow,
                        &verdict,
                        text,
                    );
                    let forced = decision.forced;
                    let follow = decision.follows() || forced.is_some();
                    // Encoded from borrowed fields: no copy of the link's text.
                    let rec = LinkView {
                        anchor: &link.anchor,
                        before: &link.before,
                        after: &link.after,
                        nofollow: link.nofollow,
                        link_type: kind.name(),
                        verdict: decision.why,
                        verdict_detail: &decision.detail,
                        dst_host: link.url.host(),
                        // A later refilter queues an unfollowed target from
                        // here; a followed one gets a `urls` row from
                        // `discover` when new.
                        dst_url: link.url.as_str(),
                    };
                    row.push(link.url.id(), &rec);
                    b.put_raw(
                        CF_INLINKS,
                        &LinkKey {
                            first: link.url.id(),
                            second: id,
                        }
                        .to_key(),
                        &[],
                    );
                    if follow {
                        let d = Discovery {
                            depth: job.entry.depth.saturating_add(1),
                            parent: Some(id),
                            redirects: 0,
                            seed: false,
                            rejudge: false,
                            filtered: forced,
                        };
                        self.discover(&mut b, &mut pending, &mut touched, &link.url, d)?;
                    }
                }
                if !row.is_empty() {
                    b.put_raw(CF_LINKS, &id.to_bytes(), &row.encode());
                }
                self.counters.links += page.links.len() as u64;
                self.run_links += page.links.len() as u64;
                self.counters.invalid_links += u64::from(page.skipped_links);
                if page.capped_links > 0 {
                    self.notice(format!(
                        "{}: {} more links than crawl.max_outlinks ({}) dropped",
                        job.url.as_str(),
                        page.capped_links,
                        self.settings.max_outlinks
                    ));
                }
                if page.too_long_links > 0 {
                    bump(
                        &mut self.counters.filtered,
                        FilterReason::UrlTooLong.name(),
                        i64::from(page.too_long_links),
                    );
                }
            }
            if verdict.verdict != "keep" {
                bump(
                    &mut self.counters.filtered,
                    &format!("page-{}", verdict.verdict),
                    1,
                );
            }
            let doc = DocRecord {
                title: page.title,
                text: if page.noindex {
                    String::new()
                } else {
                    page.text
                },
                charset: html.charset.to_string(),
                charset_source: html.charset_source.to_string(),
                canonical: page.canonical,
                noindex: page.noindex,
                nofollow: page.nofollow,
                outlinks: page.links.len() as u32,
                duplicate_of: duplicate_of.map(|d| d.0),
                topic_score: verdict.topic_score,
                relevance: verdict.relevance,
                verdict: verdict.verdict.to_string(),
                verdict_detail: verdict.detail,
            };
            b.put(CF_DOCS, &id.to_bytes(), &doc);
            b.put(CF_VERDICTS, &id.to_bytes(), &doc.verdict_record());
        }
        self.finish(b, &touched)?;
        Ok(next_at)
    }
}

/// What a link's judgement depends on besides the link itself.
#[derive(Clone, Copy)]
pub(super) struct LinkJudge<'a> {
    pub filters: &'a Filters,
    pub follow_nofollow: bool,
}

/// The parts of a link its judgement reads.
#[derive(Clone, Copy)]
pub(super) struct LinkText<'a> {
    pub nofollow: bool,
    pub before: &'a str,
    pub anchor: &'a str,
    pub after: &'a str,
}

/// Whether a link is followed, why, and the numbers that decided it.
pub(super) struct LinkDecision<'v> {
    /// `follow`, or the reason it is not (`nofollow`, `page:<verdict>`,
    /// `domain`, `link-type`).
    pub why: &'static str,
    pub detail: Cow<'v, str>,
    /// The filter to record on the target when a link filter dropped it.
    pub forced: Option<FilterReason>,
}

impl LinkDecision<'_> {
    pub fn follows(&self) -> bool {
        self.why == "follow"
    }

    /// Whether a stored link of this `kind` says something else.
    pub fn differs(&self, kind: LinkType, stored: &LinkView<'_>) -> bool {
        stored.link_type != kind.name()
            || stored.verdict != self.why
            || stored.verdict_detail != self.detail
    }
}

/// Judges a link of type `kind` on a page judged `verdict`.
pub(super) fn judge_link<'v>(
    judge: LinkJudge<'_>,
    kind: LinkType,
    ids: (UrlId, UrlId),
    dst_host: Option<&str>,
    page_nofollow: bool,
    verdict: &'v PageVerdict,
    link: LinkText<'_>,
) -> LinkDecision<'v> {
    let decided = |why, detail, forced| LinkDecision {
        why,
        detail,
        forced,
    };
    // The most basic reason first; the link policy runs only when the page
    // itself lets its links be followed.
    if page_nofollow {
        decided("page:nofollow", Cow::Borrowed(""), None)
    } else if link.nofollow && !judge.follow_nofollow {
        decided("nofollow", Cow::Borrowed(""), None)
    } else if !verdict.follow {
        let why = match verdict.verdict {
            "topic" => "page:topic",
            "relevance" => "page:relevance",
            _ => "page:filtered",
        };
        decided(why, Cow::Borrowed(verdict.detail.as_str()), None)
    } else {
        let judged = judge.filters.link(
            kind,
            (ids.0.0, ids.1.0),
            dst_host,
            [link.before, link.anchor, link.after],
            verdict,
        );
        match judged.dropped_by {
            Some(by) => {
                let reason = if by == "domain" {
                    FilterReason::Domain
                } else {
                    FilterReason::LinkType
                };
                decided(by, Cow::Owned(judged.detail), Some(reason))
            }
            None => decided("follow", Cow::Borrowed(""), None),
        }
    }
}
