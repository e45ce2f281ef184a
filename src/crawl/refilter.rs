//! `refilter`: every stored page's verdict and every stored link's
//! judgement recomputed with the current settings from stored text alone —
//! nothing is fetched. Out-links of pages that now pass are queued through
//! the normal seen/scope checks; queued URLs that no passing page links to
//! any more leave the frontier.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::judge::{LinkJudge, LinkText, judge_link};
use super::ledger::{Discovery, Ledger, PageWrite, bump, rejudge_reconsiders};
use super::scheduler::CrawlError;
use super::settings::CrawlSettings;
use crate::filter::Mode;
use crate::filter::links::{self, LinkType};
use crate::model::{self, UrlId};
use crate::schema::{
    CF_DOCS, CF_LINKS, CF_META, CF_VERDICTS, DocView, FilterReason, LinkView, OutLinkKey,
    PageLinks, PageLinksBuilder, VerdictRecord, Versioned, meta_keys,
};
use crate::store::{Cursor, Store, StoreError};

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
    let mut ledger = Ledger::offline(store, settings)?;
    Ok(ledger.refilter(dry_run, progress)?)
}

/// What a scanner thread worked out for one page: its new verdict, the
/// records to rewrite, and the links whose following changed.
struct PageWork {
    id: UrlId,
    key: Box<[u8]>,
    /// The page's URL, when judging it needed it.
    src: Option<model::CanonicalUrl>,
    old: String,
    verdict: &'static str,
    /// The page's `verdicts` value, encoded, when its scores or verdict
    /// changed (never in a dry run).
    verdict_value: Option<Vec<u8>>,
    /// Link records to write back, encoded (none in a dry run).
    links: Vec<(Box<[u8]>, Vec<u8>)>,
    links_changed: u64,
    /// Targets whose seen verdict may change: their URL, and the filter to
    /// record if a link filter dropped the link.
    queue: Vec<(String, Option<FilterReason>)>,
    unfollowed: Vec<UrlId>,
}

/// Pages per chunk sent from a scanner to the applier.
const CHUNK_PAGES: usize = 64;

/// Scanner threads: each takes a share of the `docs` key space.
const SCANNERS: u8 = 2;

impl Ledger {
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
        let judging = Judging {
            follow_nofollow: self.settings.follow_nofollow,
            domain_mode: self.settings.filter.mode == Mode::Domain,
            dry_run,
        };
        // Work crosses threads in chunks: one wake-up per chunk, not per page.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<PageWork>, StoreError>>(64);
        std::thread::scope(|scope| -> Result<(), StoreError> {
            for part in 0..SCANNERS {
                let (tx, store, filters, stop) = (tx.clone(), &store, &filters, &stop);
                scope.spawn(move || {
                    let from = [part * (256 / SCANNERS as u16) as u8];
                    let to =
                        (part + 1 < SCANNERS).then(|| [(part + 1) * (256 / SCANNERS as u16) as u8]);
                    let to = to.as_ref().map(|t| &t[..]);
                    let mut chunk = Vec::with_capacity(CHUNK_PAGES);
                    // Links are keyed by their source first, like docs: one
                    // cursor walks them alongside the docs (a merge join).
                    let mut cursors = Cursors {
                        links: store.cursor_range(CF_LINKS, &from, to),
                        verdicts: store.cursor_range(CF_VERDICTS, &from, to),
                    };
                    for row in store.scan_range(CF_DOCS, &from, to) {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            return;
                        }
                        let work = row.and_then(|(k, v)| {
                            judge_page(store, filters, judging, &mut cursors, k, &v)
                        });
                        match work {
                            Ok(Some(w)) => chunk.push(w),
                            Ok(None) => {}
                            Err(e) => {
                                let _ = tx.send(Err(e));
                                return;
                            }
                        }
                        if chunk.len() == CHUNK_PAGES
                            && tx
                                .send(Ok(std::mem::replace(
                                    &mut chunk,
                                    Vec::with_capacity(CHUNK_PAGES),
                                )))
                                .is_err()
                        {
                            return;
                        }
                    }
                    let _ = tx.send(Ok(chunk));
                });
            }
            drop(tx);
            let mut write = PageWrite::new(&store);
            let mut in_batch = 0usize;
            for chunk in rx.iter() {
                if report.interrupted {
                    continue; // drain so the scanners can finish
                }
                for work in chunk? {
                    self.apply_page(&mut write, &mut report, &mut unfollowed, work)?;
                    in_batch += 1;
                    if in_batch >= BATCH_PAGES {
                        let full = std::mem::replace(&mut write, PageWrite::new(&store));
                        self.flush_batch(full, dry_run)?;
                        in_batch = 0;
                        if !progress(report.pages, total) {
                            report.interrupted = true;
                            stop.store(true, std::sync::atomic::Ordering::Relaxed);
                            break;
                        }
                    }
                }
            }
            self.flush_batch(write, dry_run)
        })?;
        if !report.interrupted {
            // Targets an earlier, interrupted refilter left to judge too.
            let left = self.pending_drops()?;
            unfollowed.extend(left.iter().copied());
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
        write: &mut PageWrite<'_>,
        report: &mut RefilterReport,
        unfollowed: &mut HashSet<UrlId>,
        w: PageWork,
    ) -> Result<(), StoreError> {
        let b = &mut write.b;
        report.pages += 1;
        let new = w.verdict;
        tally(&mut report.before, &w.old);
        tally(&mut report.after, new);
        if w.old != new {
            report.changed += 1;
            if report.sample.len() < 10 {
                let url = match &w.src {
                    Some(u) => u.as_str().to_string(),
                    None => self.store.url(w.id)?.unwrap_or_default(),
                };
                report.sample.push((url, w.old.clone(), new.to_string()));
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
        // Encoded by the scanners; a dry run's are never encoded.
        if let Some(v) = &w.verdict_value {
            b.put_raw(CF_VERDICTS, &w.key, v);
        }
        for (lk, rec) in &w.links {
            b.put_raw(CF_LINKS, lk, rec);
        }
        // The page's depth is read once, for its first queued link.
        let mut depth: Option<Option<u16>> = None;
        for (text, forced) in w.queue {
            if let Ok(d) = model::normalize(&text) {
                let parent_depth = match depth {
                    Some(d) => d,
                    None => *depth.insert(self.store.seen(w.id)?.map(|s| s.depth)),
                };
                let disc = Discovery::rejudged(w.id, parent_depth, forced);
                self.discover(write, &d, disc)?;
            }
        }
        // Kept in the page's batch too: if this run stops before its drop
        // step, the next one still judges these targets.
        if !report.dry_run {
            for dst in &w.unfollowed {
                write
                    .b
                    .put_raw(CF_META, &meta_keys::refilter_drop(*dst), &[]);
            }
        }
        unfollowed.extend(w.unfollowed);
        Ok(())
    }

    fn flush_batch(&mut self, w: PageWrite<'_>, dry_run: bool) -> Result<(), StoreError> {
        if dry_run {
            Ok(())
        } else {
            self.finish(w.b, &w.touched)
        }
    }
}

/// Counts one more `key` without allocating once the key is there.
fn tally(counts: &mut BTreeMap<String, u64>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_string(), 1);
        }
    }
}

/// A scanner's cursors over the column families keyed like `docs` (by
/// the page's url id first), walked alongside it.
struct Cursors<'a> {
    links: Cursor<'a>,
    verdicts: Cursor<'a>,
}

/// The settings a scanner thread judges pages with.
#[derive(Clone, Copy)]
struct Judging {
    follow_nofollow: bool,
    domain_mode: bool,
    dry_run: bool,
}

/// The pure part of refiltering one page, run on a scanner thread.
fn judge_page(
    store: &Store,
    filters: &crate::filter::Filters,
    judging: Judging,
    cursors: &mut Cursors<'_>,
    key: Box<[u8]>,
    value: &[u8],
) -> Result<Option<PageWork>, StoreError> {
    let Judging {
        follow_nofollow,
        domain_mode,
        dry_run,
    } = judging;
    let (Some(id), Ok(doc)) = (UrlId::from_slice(&key), DocView::decode(value)) else {
        return Ok(None);
    };
    // The stored verdict: the `verdicts` row with this key, if any (a
    // schema 1 doc without one carries its own).
    let verdicts = &mut cursors.verdicts;
    verdicts.skip_before(&key)?;
    let stored = match verdicts.current()? {
        Some((k, v)) if k == &key[..] => VerdictRecord::decode(v).ok(),
        _ => None,
    }
    .or(doc.legacy_verdict)
    .unwrap_or_default();
    let links_cursor = &mut cursors.links;
    // The page's URL is a point read: done only when the mode judges by
    // host or a link's type must be worked out from the URLs.
    let mut src: Option<model::CanonicalUrl> = None;
    if filters.settings.mode == Mode::DomainTopic {
        src = source_url(store, id)?;
        if src.is_none() {
            return Ok(None);
        }
    }
    let old = if stored.verdict.is_empty() {
        "keep".to_string()
    } else {
        stored.verdict.clone()
    };
    // Title and text are validated only when the mode reads them.
    let (title, text) = if filters.reads_text() {
        (
            String::from_utf8_lossy(doc.title),
            String::from_utf8_lossy(doc.text),
        )
    } else {
        Default::default()
    };
    let verdict = filters.page(src.as_ref().map_or("", |u| u.host()), &title, &text);
    let scores = (
        verdict.topic_score,
        verdict.relevance,
        verdict.verdict,
        verdict.detail.as_str(),
    );
    let doc_changed = scores
        != (
            stored.topic_score,
            stored.relevance,
            stored.verdict.as_str(),
            stored.verdict_detail.as_str(),
        );
    let mut w = PageWork {
        id,
        key: key.clone(),
        src: None,
        old,
        verdict: verdict.verdict,
        verdict_value: None,
        links: Vec::new(),
        links_changed: 0,
        queue: Vec::new(),
        unfollowed: Vec::new(),
    };
    // Targets whose verdict may change, checked after the loop.
    let mut maybe_queue: Vec<(UrlId, Option<String>, Option<FilterReason>)> = Vec::new();
    // Rows of pages before this one (no doc) are skipped; the loop reads
    // this page's rows and stops on the next page's first: its `links` row
    // (schema 5; it sorts first and supersedes per-link rows an earlier
    // fetch under schema 4 left) or, in an older db, one row per link.
    // Copied out, as the cursor lends one row at a time.
    links_cursor.skip_before(&key)?;
    let mut page_row: Option<Vec<u8>> = None;
    let mut legacy: Vec<(Box<[u8]>, Vec<u8>)> = Vec::new();
    while let Some((lk, lv)) = links_cursor.next_row()? {
        if !lk.starts_with(&key) {
            break;
        }
        if lk.len() == key.len() {
            page_row = Some(lv.to_vec());
        } else if page_row.is_none() {
            legacy.push((lk.into(), lv.to_vec()));
        }
    }
    // (target, link, the key of its per-link row if it has one)
    let mut entries: Vec<(UrlId, LinkView<'_>, Option<&[u8]>)> = Vec::new();
    match &page_row {
        Some(row) => {
            if let Ok(links) = PageLinks::decode(row) {
                entries.extend(links.into_iter().map(|(dst, l)| (dst, l, None)));
            }
        }
        None => {
            for (k, v) in &legacy {
                if let (Some(lkey), Ok(rec)) = (OutLinkKey::from_key(k), LinkView::decode(v)) {
                    entries.push((lkey.dst, rec, Some(&k[..])));
                }
            }
        }
    }
    // Page-row links whose judgement changed: (index, type, verdict, detail).
    let mut row_changes: Vec<(usize, &'static str, &'static str, String)> = Vec::new();
    for (i, &(dst, rec, legacy_key)) in entries.iter().enumerate() {
        // The target's URL: in the row since link version 4; for older rows
        // it is read only when it matters (an unknown link type, the domain
        // filter without a stored host, a target to queue).
        let stored_url = Some(rec.dst_url).filter(|u| !u.is_empty());
        let target_url = || -> Result<Option<String>, StoreError> {
            match stored_url {
                Some(u) => Ok(Some(u.to_string())),
                None => store.url(dst),
            }
        };
        let mut text: Option<String> = None;
        let kind = match LinkType::parse(rec.link_type) {
            Some(k) => k,
            None => {
                text = target_url()?;
                let Some(d) = text.as_deref().and_then(|t| model::normalize(t).ok()) else {
                    continue;
                };
                if src.is_none() {
                    src = source_url(store, id)?;
                }
                let Some(p) = &src else {
                    continue;
                };
                links::classify(p.url(), d.url())
            }
        };
        // Records before v3 lack the host: read it from the stored URL.
        if domain_mode && rec.dst_host.is_empty() && text.is_none() {
            text = target_url()?;
        }
        let host: Option<&str> = if !rec.dst_host.is_empty() {
            Some(rec.dst_host)
        } else {
            text.as_deref().map(model::host_of)
        };
        let link = LinkText {
            nofollow: rec.nofollow,
            before: rec.before,
            anchor: rec.anchor,
            after: rec.after,
        };
        let decision = judge_link(
            LinkJudge {
                filters,
                follow_nofollow,
            },
            kind,
            (id, dst),
            host,
            doc.nofollow,
            &verdict,
            link,
        );
        let changed = decision.differs(kind, &rec);
        let forced = decision.forced;
        let was_followed = rec.verdict == "follow";
        let follows = decision.follows();
        if (follows && !was_followed) || (forced.is_some() && changed) {
            let text = text.take().or_else(|| stored_url.map(str::to_string));
            maybe_queue.push((dst, text, forced));
        }
        if was_followed && !follows {
            w.unfollowed.push(dst);
        }
        if changed {
            w.links_changed += 1;
            if !dry_run {
                match legacy_key {
                    Some(k) => {
                        let new = LinkView {
                            link_type: kind.name(),
                            verdict: decision.why,
                            verdict_detail: &decision.detail,
                            ..rec
                        };
                        w.links.push((k.into(), new.encode()));
                    }
                    None => row_changes.push((
                        i,
                        kind.name(),
                        decision.why,
                        decision.detail.into_owned(),
                    )),
                }
            }
        }
    }
    // A page row is rewritten whole when any of its links changed.
    if !row_changes.is_empty() {
        let mut row = PageLinksBuilder::default();
        let mut changes = row_changes.iter().peekable();
        for (i, &(dst, rec, _)) in entries.iter().enumerate() {
            match changes.peek() {
                Some((j, link_type, verdict, detail)) if *j == i => {
                    let new = LinkView {
                        link_type,
                        verdict,
                        verdict_detail: detail,
                        ..rec
                    };
                    row.push(dst, &new);
                    changes.next();
                }
                _ => row.push(dst, &rec),
            }
        }
        w.links.push((key.clone(), row.encode()));
    }
    // Targets already fetched, queued or failed stay as they are. Their seen
    // records are read here, in parallel and in one MultiGet per page, so
    // the applier does not.
    if !maybe_queue.is_empty() {
        let ids: Vec<UrlId> = maybe_queue.iter().map(|(id, _, _)| *id).collect();
        let seen = store.seen_many(&ids)?;
        for ((dst, text, forced), prior) in maybe_queue.into_iter().zip(seen) {
            if prior.is_some_and(|p| !rejudge_reconsiders(p.state)) {
                continue;
            }
            let text = match text {
                Some(t) => Some(t),
                None => store.url(dst)?,
            };
            if let Some(t) = text {
                w.queue.push((t, forced));
            }
        }
    }
    w.src = src;
    if doc_changed && !dry_run {
        let v = VerdictRecord {
            topic_score: verdict.topic_score,
            relevance: verdict.relevance,
            verdict: verdict.verdict.to_string(),
            verdict_detail: verdict.detail,
        };
        w.verdict_value = Some(v.encode());
    }
    Ok(Some(w))
}

fn source_url(store: &Store, id: UrlId) -> Result<Option<model::CanonicalUrl>, StoreError> {
    Ok(store.url(id)?.and_then(|u| model::normalize(&u).ok()))
}
