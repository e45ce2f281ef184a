//! `refilter`: every stored page's verdict and every stored link's
//! judgement recomputed with the current settings from stored text alone —
//! nothing is fetched. Out-links of pages that now pass are queued through
//! the normal seen/scope checks; queued URLs that no passing page links to
//! any more leave the frontier.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod redenoise;
mod scan;

use redenoise::{Outcome, Redenoise};
use scan::{Cursors, Judging, PageWork, Scan, judge_page};

use super::ledger::{Discovery, Ledger, PageWrite};
use super::scheduler::CrawlError;
use crate::frontier::Focus;
use crate::model::{self, UrlId};
use crate::schema::Filtered;
use crate::settings::CrawlSettings;
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
    /// Links rows that could not be read (left as they were).
    pub unreadable_links: u64,
    /// What the run noticed on the way (rows it could not read).
    pub notices: Vec<String>,
    /// What `--denoise` did, when asked.
    pub denoise: Option<DenoiseCounts>,
}

/// Pages by what denoising them again came to.
#[derive(Debug, Default)]
pub struct DenoiseCounts {
    /// A new denoising was stored.
    pub changed: u64,
    /// The stored one stands.
    pub same: u64,
    /// The body parses to other text than was stored (an older trawl's
    /// parser): left as they were.
    pub text_differs: u64,
    /// No body to parse.
    pub no_body: u64,
}

/// How a refilter runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RefilterRun {
    /// Work everything out, write nothing.
    pub dry_run: bool,
    /// Denoise every stored HTML page again from its body first.
    pub denoise: bool,
}

/// Refilters `store` with `settings`. `progress(done, total)` is called
/// now and then; returning false stops the run (what was done stays done).
pub fn refilter(
    store: Arc<Store>,
    settings: CrawlSettings,
    run: RefilterRun,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<RefilterReport, CrawlError> {
    if run.denoise && !settings.denoise.enabled {
        return Err(CrawlError::DenoiseOff);
    }
    let mut ledger = Ledger::offline(store, settings)?;
    Ok(run_refilter(&mut ledger, run, progress)?)
}

/// Pages per chunk sent from a scanner to the applier.
const CHUNK_PAGES: usize = 64;

/// What a scanner sends the applier.
type Chunk = Result<Vec<PageWork>, StoreError>;

/// The applier's state while scanners run.
struct Applying<'a> {
    report: &'a mut RefilterReport,
    unfollowed: &'a mut HashSet<UrlId>,
    /// Set when progress says stop: the scanners end early.
    stop: &'a AtomicBool,
    total: u64,
}

/// A scanner thread: judges the pages of its share (`part` of
/// [`SCANNERS`]) of the `docs` key space and sends them in chunks.
fn scan_part(
    scan: &Scan<'_>,
    part: u8,
    stop: &AtomicBool,
    tx: &std::sync::mpsc::SyncSender<Chunk>,
) {
    let store = scan.store;
    let from = [part * (256 / SCANNERS as u16) as u8];
    let to = (part + 1 < SCANNERS).then(|| [(part + 1) * (256 / SCANNERS as u16) as u8]);
    let to = to.as_ref().map(|t| &t[..]);
    let mut chunk = Vec::with_capacity(CHUNK_PAGES);
    // Links and verdicts are keyed by their page first, like docs: a
    // cursor walks each alongside the docs (a merge join).
    let mut cursors = Cursors {
        links: store.links_cursor(&from, to),
        verdicts: store.verdicts_cursor(&from, to),
        pages: store.pages_cursor(&from, to),
    };
    for row in store.docs_range(&from, to) {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let work = row.and_then(|(k, v)| judge_page(scan, &mut cursors, k, &v));
        match work {
            Ok(Some(w)) => chunk.push(w),
            Ok(None) => {}
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
        if chunk.len() == CHUNK_PAGES {
            let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_PAGES));
            if tx.send(Ok(full)).is_err() {
                return;
            }
        }
    }
    let _ = tx.send(Ok(chunk));
}

/// Scanner threads: each takes a share of the `docs` key space.
const SCANNERS: u8 = 2;

fn run_refilter(
    l: &mut Ledger,
    run: RefilterRun,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<RefilterReport, StoreError> {
    let dry_run = run.dry_run;
    let start = Instant::now();
    let store = l.store().clone();
    let total = l.counters().fetched;
    let queued_before = l.counters().queued;
    let mut report = RefilterReport {
        dry_run,
        denoise: run.denoise.then(DenoiseCounts::default),
        ..RefilterReport::default()
    };
    let mut unfollowed: HashSet<UrlId> = HashSet::new();
    let stop = AtomicBool::new(false);
    let filters = l.all_page_filters();
    let judging = Judging {
        follow_nofollow: l.settings().follow_nofollow,
        soft_focus: l.settings().order.focus == Focus::Soft,
        denoised_text: l.text_policy().filters_read_clean,
        dry_run,
    };
    // Owned here: the scanners run while the applier borrows the ledger.
    let text = l.text_policy();
    let seeds = if l.settings().follow_seed_links {
        l.seed_ids().clone()
    } else {
        HashSet::new()
    };
    let scan = Scan {
        store: &store,
        filters: &filters,
        judging,
        seeds: &seeds,
        redenoise: (text.denoise.as_ref())
            .filter(|_| run.denoise)
            .map(|denoiser| Redenoise {
                denoiser,
                agent: &text.agent,
                max_links: text.max_links,
            }),
    };
    // Work crosses threads in chunks: one wake-up per chunk, not per page.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Chunk>(64);
    std::thread::scope(|scope| -> Result<(), StoreError> {
        for part in 0..SCANNERS {
            let (tx, scan, stop) = (tx.clone(), &scan, &stop);
            scope.spawn(move || scan_part(scan, part, stop, &tx));
        }
        drop(tx);
        let mut applying = Applying {
            report: &mut report,
            unfollowed: &mut unfollowed,
            stop: &stop,
            total,
        };
        apply_all(l, &store, rx, &mut applying, progress)
    })?;
    if !report.interrupted {
        // Targets an earlier, interrupted refilter left to judge too.
        let left = l.pending_drops()?;
        unfollowed.extend(left.iter().copied());
        report.dropped = l.drop_unlinked(&unfollowed, dry_run)?;
    }
    progress(report.pages, total);
    report.enqueued = (l.counters().queued + report.dropped).saturating_sub(queued_before);
    report.elapsed = start.elapsed();
    report.notices = l.take_notices();
    Ok(report)
}

/// Applies the scanners' work as it comes, in batches of
/// [`BATCH_PAGES`], reporting progress (which may stop the run).
fn apply_all(
    l: &mut Ledger,
    store: &Store,
    rx: std::sync::mpsc::Receiver<Chunk>,
    a: &mut Applying<'_>,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<(), StoreError> {
    let dry_run = a.report.dry_run;
    let mut write = PageWrite::new(store);
    let mut in_batch = 0usize;
    for chunk in rx.iter() {
        if a.report.interrupted {
            continue; // drain so the scanners can finish
        }
        for work in chunk? {
            apply_page(l, &mut write, a.report, a.unfollowed, work)?;
            in_batch += 1;
            if in_batch >= BATCH_PAGES {
                let full = std::mem::replace(&mut write, PageWrite::new(store));
                flush_batch(l, full, dry_run)?;
                in_batch = 0;
                if !progress(a.report.pages, a.total) {
                    a.report.interrupted = true;
                    a.stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
    }
    flush_batch(l, write, dry_run)
}

/// Applies one page's work: counters, rewrites, and queueing.
fn apply_page(
    l: &mut Ledger,
    write: &mut PageWrite<'_>,
    report: &mut RefilterReport,
    unfollowed: &mut HashSet<UrlId>,
    w: PageWork,
) -> Result<(), StoreError> {
    let b = &mut write.b;
    report.pages += 1;
    let new = w.verdict;
    tally(&mut report.before, w.old.name());
    tally(&mut report.after, new.name());
    if w.old != new {
        report.changed += 1;
        if report.sample.len() < 10 {
            let url = match &w.src {
                Some(u) => u.as_str().to_string(),
                None => l.store().url(w.id)?.unwrap_or_default(),
            };
            let names = (w.old.name().to_string(), new.name().to_string());
            report.sample.push((url, names.0, names.1));
        }
        if let Some(counter) = Filtered::page(w.old) {
            l.count_filtered(counter, -1);
        }
        if let Some(counter) = Filtered::page(new) {
            l.count_filtered(counter, 1);
        }
    }
    report.links_changed += w.links_changed;
    if let (Some(counts), Some(outcome)) = (&mut report.denoise, w.denoised) {
        counts.add(outcome);
    }
    if let Some(v) = &w.doc_value {
        b.put_doc_encoded(&w.key, v);
    }
    report.unreadable_links += w.unreadable_links;
    // A dry run never writes its batches: skip encoding into them.
    // Encoded by the scanners; a dry run's are never encoded.
    if let Some(v) = &w.verdict_value {
        b.put_verdict_encoded(&w.key, v);
    }
    for (lk, rec) in &w.links {
        b.put_links_encoded(lk, rec);
    }
    if w.doc_value.is_some() || w.verdict_value.is_some() {
        // The search index holds the page's text and verdict.
        l.log_search(b, w.id);
    }
    // The page's depth is read once, for its first queued link.
    let mut depth: Option<Option<u16>> = None;
    for (text, forced) in w.queue {
        if let Ok(d) = model::normalize(&text) {
            let parent_depth = match depth {
                Some(d) => d,
                None => *depth.insert(l.store().seen(w.id)?.map(|s| s.depth)),
            };
            let mut disc = Discovery::rejudged(w.id, parent_depth, forced);
            if let Some(src) = &w.src {
                disc = disc.found_on(src.host_id());
            }
            l.discover(write, &d, disc)?;
        }
    }
    // Kept in the page's batch too: if this run stops before its drop
    // step, the next one still judges these targets.
    if !report.dry_run {
        for dst in &w.unfollowed {
            write.b.put_refilter_drop(*dst);
        }
    }
    unfollowed.extend(w.unfollowed);
    Ok(())
}

fn flush_batch(l: &mut Ledger, w: PageWrite<'_>, dry_run: bool) -> Result<(), StoreError> {
    if dry_run {
        Ok(())
    } else {
        l.finish(w.b, &w.touched)
    }
}

impl DenoiseCounts {
    fn add(&mut self, outcome: Outcome) {
        *match outcome {
            Outcome::Changed => &mut self.changed,
            Outcome::Same => &mut self.same,
            Outcome::TextDiffers => &mut self.text_differs,
            Outcome::NoBody => &mut self.no_body,
        } += 1;
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
