//! `refilter`: every stored page's verdict and every stored link's
//! judgement recomputed with the current settings from stored text alone —
//! nothing is fetched. Out-links of pages that now pass are queued through
//! the normal seen/scope checks; queued URLs that no passing page links to
//! any more leave the frontier.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::commit::{Discovery, bump};
use super::engine::{CrawlError, Engine};
use super::settings::CrawlSettings;
use crate::filter::Mode;
use crate::filter::links::{self, LinkType};
use crate::model::{self, UrlId};
use crate::schema::{
    CF_DOCS, CF_FRONTIER, CF_INLINKS, CF_LINKS, DocRecord, FilterReason, FrontierEntry,
    FrontierKey, LinkKey, LinkRecord, SeenRecord, SeenState, Versioned,
};
use crate::store::{Store, StoreError};

/// Pages per write batch.
const BATCH_PAGES: usize = 512;

#[derive(Debug, Default)]
pub struct RefilterReport {
    pub pages: u64,
    /// Pages per verdict before and after.
    pub before: BTreeMap<String, u64>,
    pub after: BTreeMap<String, u64>,
    /// Pages whose verdict changed, and a sample of them (url, old, new).
    pub changed: u64,
    pub sample: Vec<(String, String, String)>,
    pub links_changed: u64,
    pub enqueued: u64,
    pub dropped: u64,
    pub elapsed: Duration,
    pub interrupted: bool,
    pub dry_run: bool,
}

/// Refilters `store` with `settings`. `progress(done, total)` is called
/// now and then; returning false stops the run (what was done stays done).
pub fn refilter(
    store: Arc<Store>,
    settings: CrawlSettings,
    dry_run: bool,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<RefilterReport, CrawlError> {
    let mut engine = Engine::offline(store, settings)?;
    Ok(engine.refilter(dry_run, progress)?)
}

impl Engine {
    fn refilter(
        &mut self,
        dry_run: bool,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<RefilterReport, StoreError> {
        let start = Instant::now();
        let store = self.store.clone();
        let total = self.counters.fetched;
        let queued_before = self.counters.queued;
        let mut report = RefilterReport {
            dry_run,
            ..RefilterReport::default()
        };
        let mut unfollowed: HashSet<UrlId> = HashSet::new();
        let mut b = store.batch();
        let (mut pending, mut touched, mut in_batch) = (HashSet::new(), Vec::new(), 0usize);
        for row in store.scan(CF_DOCS, &[]) {
            let (k, v) = row?;
            let (Some(id), Ok(mut doc)) = (UrlId::from_slice(&k), DocRecord::decode(&v)) else {
                continue;
            };
            let Some(src) = store.url(id)?.and_then(|u| model::normalize(&u).ok()) else {
                continue;
            };
            report.pages += 1;
            let old = if doc.verdict.is_empty() {
                "keep".to_string()
            } else {
                doc.verdict.clone()
            };
            let verdict = self.filters.page(src.host(), &doc.title, &doc.text);
            *report.before.entry(old.clone()).or_default() += 1;
            *report.after.entry(verdict.verdict.to_string()).or_default() += 1;
            if old != verdict.verdict {
                report.changed += 1;
                if report.sample.len() < 10 {
                    report.sample.push((
                        src.as_str().to_string(),
                        old.clone(),
                        verdict.verdict.to_string(),
                    ));
                }
                if old != "keep" {
                    bump(&mut self.counters.filtered, &format!("page-{old}"), -1);
                }
                if verdict.verdict != "keep" {
                    bump(
                        &mut self.counters.filtered,
                        &format!("page-{}", verdict.verdict),
                        1,
                    );
                }
            }
            let scores = (
                verdict.topic_score,
                verdict.relevance,
                verdict.verdict,
                verdict.detail.as_str(),
            );
            if scores
                != (
                    doc.topic_score,
                    doc.relevance,
                    doc.verdict.as_str(),
                    doc.verdict_detail.as_str(),
                )
            {
                doc.topic_score = verdict.topic_score;
                doc.relevance = verdict.relevance;
                doc.verdict = verdict.verdict.to_string();
                doc.verdict_detail = verdict.detail.clone();
                b.put(CF_DOCS, &k, &doc);
            }
            for lrow in store.scan(CF_LINKS, &k) {
                let (lk, lv) = lrow?;
                let (Some(key), Ok(mut rec)) = (LinkKey::from_key(&lk), LinkRecord::decode(&lv))
                else {
                    continue;
                };
                // The target's URL is read only when it matters: an unknown
                // link type, the domain filter, or a link to queue.
                let mut dst: Option<model::CanonicalUrl> = None;
                let target = |store: &Store| -> Result<Option<model::CanonicalUrl>, StoreError> {
                    Ok(store
                        .url(key.second)?
                        .and_then(|u| model::normalize(&u).ok()))
                };
                let kind = match LinkType::parse(&rec.link_type) {
                    Some(k) => k,
                    None => {
                        dst = target(&store)?;
                        let Some(d) = &dst else { continue };
                        links::classify(src.url(), d.url())
                    }
                };
                // The domain filter needs only the host, read from the stored URL.
                let url_text = if self.settings.filter.mode == Mode::Domain && dst.is_none() {
                    store.url(key.second)?
                } else {
                    None
                };
                let host = match (&dst, &url_text) {
                    (Some(d), _) => Some(d.host()),
                    (None, Some(t)) => Some(model::host_of(t)),
                    _ => None,
                };
                let was_followed = rec.verdict == "follow";
                let (changed, forced) = self.judge_link(
                    kind,
                    (id, key.second),
                    host,
                    doc.nofollow,
                    &verdict,
                    &mut rec,
                );
                if changed {
                    report.links_changed += 1;
                    b.put(CF_LINKS, &lk, &rec);
                }
                let follows = rec.verdict == "follow";
                if (follows && !was_followed) || (forced.is_some() && changed) {
                    // Queue it, or record the link filter on its target.
                    if dst.is_none() {
                        dst = target(&store)?;
                    }
                    if let Some(d) = &dst {
                        let disc = Discovery::rejudged(&self.store, id, forced)?;
                        self.discover(&mut b, &mut pending, &mut touched, d, disc)?;
                    }
                }
                if was_followed && !follows {
                    unfollowed.insert(key.second);
                }
            }
            in_batch += 1;
            if in_batch >= BATCH_PAGES {
                self.flush_batch(
                    std::mem::replace(&mut b, store.batch()),
                    &mut touched,
                    dry_run,
                )?;
                pending.clear();
                in_batch = 0;
                if !progress(report.pages, total) {
                    report.interrupted = true;
                    break;
                }
            }
        }
        self.flush_batch(b, &mut touched, dry_run)?;
        if !report.interrupted {
            report.dropped = self.drop_unlinked(&unfollowed, dry_run)?;
        }
        progress(report.pages, total);
        report.enqueued = (self.counters.queued + report.dropped).saturating_sub(queued_before);
        report.elapsed = start.elapsed();
        Ok(report)
    }

    fn flush_batch(
        &mut self,
        b: crate::store::Batch<'_>,
        touched: &mut Vec<model::HostId>,
        dry_run: bool,
    ) -> Result<(), StoreError> {
        let hosts = std::mem::take(touched);
        if dry_run {
            Ok(())
        } else {
            self.finish(b, &hosts)
        }
    }

    /// Queued URLs that no page links to with a `follow` verdict any more
    /// leave the frontier.
    fn drop_unlinked(
        &mut self,
        candidates: &HashSet<UrlId>,
        dry_run: bool,
    ) -> Result<u64, StoreError> {
        let store = self.store.clone();
        let mut drop: HashSet<UrlId> = HashSet::new();
        for &dst in candidates {
            if !matches!(store.seen(dst)?.map(|s| s.state), Some(SeenState::Queued)) {
                continue;
            }
            let mut still_linked = false;
            for row in store.scan(CF_INLINKS, &dst.to_bytes()) {
                let (k, _) = row?;
                let Some(k) = LinkKey::from_key(&k) else {
                    continue;
                };
                let fwd = LinkKey {
                    first: k.second,
                    second: k.first,
                }
                .to_key();
                if let Some(v) = store.get_raw(CF_LINKS, &fwd)?
                    && LinkRecord::decode(&v).is_ok_and(|l| l.verdict == "follow")
                {
                    still_linked = true;
                    break;
                }
            }
            if !still_linked {
                drop.insert(dst);
            }
        }
        if drop.is_empty() {
            return Ok(0);
        }
        // One pass over the frontier finds the keys of the URLs to drop.
        let mut rows: Vec<(FrontierKey, FrontierEntry)> = Vec::new();
        for row in store.scan(CF_FRONTIER, &[]) {
            let (k, v) = row?;
            if let Some(key) = FrontierKey::from_key(&k)
                && drop.contains(&key.url)
                && let Ok(e) = FrontierEntry::decode(&v)
            {
                rows.push((key, e));
            }
        }
        let n = rows.len() as u64;
        let mut b = store.batch();
        let mut hosts = Vec::new();
        for (key, entry) in rows {
            self.dequeue(&mut b, key)?;
            let rec = SeenRecord {
                state: SeenState::Filtered(FilterReason::Refiltered),
                depth: entry.depth,
                parent: entry.parent,
                redirects: entry.redirects,
                updated_ms: model::now_ms(),
            };
            b.put(crate::schema::CF_SEEN, &key.url.to_bytes(), &rec);
            bump(
                &mut self.counters.filtered,
                FilterReason::Refiltered.name(),
                1,
            );
            if !hosts.contains(&key.host) {
                hosts.push(key.host);
            }
        }
        if !dry_run {
            self.finish(b, &hosts)?;
        }
        Ok(n)
    }
}
