//! `refilter`: every stored page's verdict and every stored link's
//! judgement recomputed with the current settings from stored text alone —
//! nothing is fetched. Out-links of pages that now pass are queued through
//! the normal seen/scope checks; queued URLs that no passing page links to
//! any more leave the frontier.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::commit::{Discovery, LinkJudge, bump, judge_link};
use super::engine::{CrawlError, Engine};
use super::settings::CrawlSettings;
use crate::filter::links::{self, LinkType};
use crate::filter::{Mode, PageVerdict};
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

/// What a scanner thread worked out for one page: its new verdict, the
/// records to rewrite, and the links whose following changed.
struct PageWork {
    id: UrlId,
    key: Box<[u8]>,
    src: model::CanonicalUrl,
    old: String,
    verdict: PageVerdict,
    /// The doc to write back, when its scores or verdict changed.
    doc: Option<DocRecord>,
    /// Link records to write back.
    links: Vec<(Box<[u8]>, LinkRecord)>,
    links_changed: u64,
    /// Targets to queue (URL text, filter to record if a link filter dropped it).
    queue: Vec<(UrlId, Option<String>, Option<FilterReason>)>,
    unfollowed: Vec<UrlId>,
}

/// Scanner threads: each takes a share of the `docs` key space.
const SCANNERS: u8 = 2;

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
        let stop = std::sync::atomic::AtomicBool::new(false);
        let filters = self.filters.clone();
        let follow_nofollow = self.settings.follow_nofollow;
        let domain_mode = self.settings.filter.mode == Mode::Domain;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<PageWork, StoreError>>(4096);
        std::thread::scope(|scope| -> Result<(), StoreError> {
            for part in 0..SCANNERS {
                let (tx, store, filters, stop) = (tx.clone(), &store, &filters, &stop);
                scope.spawn(move || {
                    let from = [part * (256 / SCANNERS as u16) as u8];
                    let to =
                        (part + 1 < SCANNERS).then(|| [(part + 1) * (256 / SCANNERS as u16) as u8]);
                    for row in store.scan_range(CF_DOCS, &from, to.as_ref().map(|t| &t[..])) {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        let work = row.and_then(|(k, v)| {
                            judge_page(store, filters, follow_nofollow, domain_mode, k, &v)
                        });
                        match work {
                            Ok(Some(w)) => {
                                if tx.send(Ok(w)).is_err() {
                                    break;
                                }
                            }
                            Ok(None) => {}
                            Err(e) => {
                                let _ = tx.send(Err(e));
                                break;
                            }
                        }
                    }
                });
            }
            drop(tx);
            let mut b = store.batch();
            let (mut pending, mut touched, mut in_batch) = (HashSet::new(), Vec::new(), 0usize);
            for work in rx.iter() {
                if report.interrupted {
                    continue; // drain so the scanners can finish
                }
                let w = work?;
                self.apply_page(
                    &mut b,
                    &mut pending,
                    &mut touched,
                    &mut report,
                    &mut unfollowed,
                    w,
                )?;
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
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
            self.flush_batch(b, &mut touched, dry_run)
        })?;
        if !report.interrupted {
            report.dropped = self.drop_unlinked(&unfollowed, dry_run)?;
        }
        progress(report.pages, total);
        report.enqueued = (self.counters.queued + report.dropped).saturating_sub(queued_before);
        report.elapsed = start.elapsed();
        Ok(report)
    }

    /// Applies one page's work: counters, rewrites, and queueing.
    fn apply_page(
        &mut self,
        b: &mut crate::store::Batch<'_>,
        pending: &mut HashSet<UrlId>,
        touched: &mut Vec<model::HostId>,
        report: &mut RefilterReport,
        unfollowed: &mut HashSet<UrlId>,
        w: PageWork,
    ) -> Result<(), StoreError> {
        report.pages += 1;
        let new = w.verdict.verdict;
        *report.before.entry(w.old.clone()).or_default() += 1;
        *report.after.entry(new.to_string()).or_default() += 1;
        if w.old != new {
            report.changed += 1;
            if report.sample.len() < 10 {
                report
                    .sample
                    .push((w.src.as_str().to_string(), w.old.clone(), new.to_string()));
            }
            if w.old != "keep" {
                bump(&mut self.counters.filtered, &format!("page-{}", w.old), -1);
            }
            if new != "keep" {
                bump(&mut self.counters.filtered, &format!("page-{new}"), 1);
            }
        }
        report.links_changed += w.links_changed;
        // A dry run never writes its batches: skip encoding into them.
        if !report.dry_run {
            if let Some(doc) = &w.doc {
                b.put(CF_DOCS, &w.key, doc);
            }
            for (lk, rec) in &w.links {
                b.put(CF_LINKS, lk, rec);
            }
        }
        for (dst, text, forced) in w.queue {
            let text = match text {
                Some(t) => Some(t),
                None => self.store.url(dst)?,
            };
            if let Some(d) = text.and_then(|t| model::normalize(&t).ok()) {
                let disc = Discovery::rejudged(&self.store, w.id, forced)?;
                self.discover(b, pending, touched, &d, disc)?;
            }
        }
        unfollowed.extend(w.unfollowed);
        Ok(())
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

/// The pure part of refiltering one page, run on a scanner thread.
fn judge_page(
    store: &Store,
    filters: &crate::filter::Filters,
    follow_nofollow: bool,
    domain_mode: bool,
    key: Box<[u8]>,
    value: &[u8],
) -> Result<Option<PageWork>, StoreError> {
    let (Some(id), Ok(mut doc)) = (UrlId::from_slice(&key), DocRecord::decode(value)) else {
        return Ok(None);
    };
    let Some(src) = store.url(id)?.and_then(|u| model::normalize(&u).ok()) else {
        return Ok(None);
    };
    let old = if doc.verdict.is_empty() {
        "keep".to_string()
    } else {
        doc.verdict.clone()
    };
    let verdict = filters.page(src.host(), &doc.title, &doc.text);
    let scores = (
        verdict.topic_score,
        verdict.relevance,
        verdict.verdict,
        verdict.detail.as_str(),
    );
    let doc_changed = scores
        != (
            doc.topic_score,
            doc.relevance,
            doc.verdict.as_str(),
            doc.verdict_detail.as_str(),
        );
    let mut w = PageWork {
        id,
        key: key.clone(),
        src,
        old,
        verdict: verdict.clone(),
        doc: None,
        links: Vec::new(),
        links_changed: 0,
        queue: Vec::new(),
        unfollowed: Vec::new(),
    };
    for lrow in store.scan(CF_LINKS, &key) {
        let (lk, lv) = lrow?;
        let (Some(lkey), Ok(mut rec)) = (LinkKey::from_key(&lk), LinkRecord::decode(&lv)) else {
            continue;
        };
        // The target's URL is read only when it matters: an unknown link
        // type, or the domain filter (which needs just its host).
        let mut text: Option<String> = None;
        let kind = match LinkType::parse(&rec.link_type) {
            Some(k) => k,
            None => {
                text = store.url(lkey.second)?;
                let Some(d) = text.as_deref().and_then(|t| model::normalize(t).ok()) else {
                    continue;
                };
                links::classify(w.src.url(), d.url())
            }
        };
        // Records before v3 lack the host: read it from the stored URL.
        if domain_mode && rec.dst_host.is_empty() && text.is_none() {
            text = store.url(lkey.second)?;
        }
        let was_followed = rec.verdict == "follow";
        // Taken out of the record for the call and put back: no copy.
        let stored_host = std::mem::take(&mut rec.dst_host);
        let host: Option<&str> = if !stored_host.is_empty() {
            Some(&stored_host)
        } else {
            text.as_deref().map(model::host_of)
        };
        let (changed, forced) = judge_link(
            LinkJudge {
                filters,
                follow_nofollow,
            },
            kind,
            (id, lkey.second),
            host,
            doc.nofollow,
            &verdict,
            &mut rec,
        );
        rec.dst_host = stored_host;
        let follows = rec.verdict == "follow";
        if (follows && !was_followed) || (forced.is_some() && changed) {
            w.queue.push((lkey.second, text, forced));
        }
        if was_followed && !follows {
            w.unfollowed.push(lkey.second);
        }
        if changed {
            w.links_changed += 1;
            w.links.push((lk, rec));
        }
    }
    if doc_changed {
        doc.topic_score = verdict.topic_score;
        doc.relevance = verdict.relevance;
        doc.verdict = verdict.verdict.to_string();
        doc.verdict_detail = verdict.detail;
        w.doc = Some(doc);
    }
    Ok(Some(w))
}
