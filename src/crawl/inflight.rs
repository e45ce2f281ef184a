//! Crash loops: a page that kills the process (an abort or a stack
//! overflow in a library, an OOM kill) would kill every resumed run too.
//! Every fetched page is marked in `inflight` before its body is processed
//! — the work a page's content can crash — and unmarked in the batch that
//! records it. A fetch task asks the engine for the mark ([`Marks`]); the
//! engine writes it in its next batch (usually another page's, so a mark
//! costs no write of its own) and the task processes the body once the
//! mark is durable.
//! A run that finds marks left by a dead run counts one death for each of
//! those URLs; a URL that was in flight when the process died twice in a
//! row is recorded as failed (`crash-loop`) instead of fetched a third
//! time. Marking only the processing, not the wait for the network, keeps
//! a random kill from marking the many pages merely waiting on servers.

use super::engine::Engine;
use crate::model::{UrlId, now_ms};
use crate::schema::{
    CF_DETAILS, CF_FRONTIER, CF_INFLIGHT, DetailRecord, FailReason, FrontierEntry, FrontierKey,
    InFlightRecord, SeenState, Versioned,
};
use crate::store::Store;
use crate::store::{Batch, StoreError};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs in a row that may die with a URL in flight before it is skipped.
pub const CRASH_LOOP_DEATHS: u8 = 2;

/// A fetch task's request to have its page marked in flight.
pub(super) struct MarkRequest {
    id: UrlId,
    key: FrontierKey,
    deaths: u8,
    seq: u64,
}

/// The fetch tasks' side: ask for a mark and wait until it is written.
#[derive(Clone)]
pub(super) struct Marks {
    requests: tokio::sync::mpsc::UnboundedSender<MarkRequest>,
    written: tokio::sync::watch::Receiver<u64>,
    next: Arc<AtomicU64>,
}

/// The engine's side: marks asked for and not written yet, and how far
/// the written ones go.
pub(super) struct MarkBook {
    pub requests: tokio::sync::mpsc::UnboundedReceiver<MarkRequest>,
    written: tokio::sync::watch::Sender<u64>,
    pending: Vec<MarkRequest>,
    /// When the oldest pending mark was asked for.
    since: Option<tokio::time::Instant>,
}

/// How long a mark may wait for a page's batch to carry it before it is
/// written on its own.
const MARK_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

/// A channel for marks between fetch tasks and the engine.
pub(super) fn marks() -> (Marks, MarkBook) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let (written_tx, written_rx) = tokio::sync::watch::channel(0);
    let marks = Marks {
        requests: tx,
        written: written_rx,
        next: Arc::new(AtomicU64::new(0)),
    };
    let book = MarkBook {
        requests: rx,
        written: written_tx,
        pending: Vec::new(),
        since: None,
    };
    (marks, book)
}

impl Marks {
    /// Marks `id` in flight; returns once the mark is in the db (false when
    /// the engine is gone).
    pub async fn mark(&self, id: UrlId, key: FrontierKey, deaths: u8) -> bool {
        let seq = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let req = MarkRequest {
            id,
            key,
            deaths,
            seq,
        };
        if self.requests.send(req).is_err() {
            return false;
        }
        let mut written = self.written.clone();
        written.wait_for(|w| *w >= seq).await.is_ok()
    }
}

impl MarkBook {
    pub fn take(&mut self, first: MarkRequest) {
        self.since.get_or_insert_with(tokio::time::Instant::now);
        self.pending.push(first);
        while let Ok(m) = self.requests.try_recv() {
            self.pending.push(m);
        }
    }

    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// When the pending marks must be written even if no page's batch has
    /// carried them (None: nothing pending).
    pub fn due(&self) -> Option<tokio::time::Instant> {
        self.since.map(|t| t + MARK_WAIT)
    }

    /// Puts the pending marks into `b`; returns the sequence number to
    /// announce once `b` is written.
    pub fn write_into(&mut self, b: &mut Batch<'_>) -> Option<u64> {
        self.since = None;
        let mut last = None;
        for m in self.pending.drain(..) {
            let rec = InFlightRecord {
                frontier_key: m.key.to_key().to_vec(),
                deaths: m.deaths,
                in_flight: true,
            };
            b.put(CF_INFLIGHT, &m.id.to_bytes(), &rec);
            last = last.max(Some(m.seq));
        }
        last
    }

    /// The batch with marks up to `seq` is written.
    pub fn written(&self, seq: Option<u64>) {
        if let Some(seq) = seq {
            self.written.send_if_modified(|w| {
                let newer = seq > *w;
                *w = (*w).max(seq);
                newer
            });
        }
    }
}

impl Engine {
    /// Writes the marks fetch tasks asked for in a batch of their own (when
    /// no page's batch is about to carry them).
    pub(super) fn write_marks(&mut self) -> Result<(), StoreError> {
        let mut b = self.store.batch();
        let seq = self.marks.write_into(&mut b);
        b.write()?;
        self.marks.written(seq);
        Ok(())
    }

    /// A page's fetch was recorded (in `b`): it is no longer in flight, and
    /// no longer a suspect.
    pub(super) fn unmark(&mut self, b: &mut Batch<'_>, id: UrlId) {
        b.delete(CF_INFLIGHT, &id.to_bytes());
        self.suspects.remove(&id);
    }

    /// Clears the marks of fetches a clean stop abandoned.
    pub(super) fn unmark_in_flight(&mut self, ids: &[UrlId]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut b = self.store.batch();
        for id in ids {
            b.delete(CF_INFLIGHT, &id.to_bytes());
        }
        b.write()
    }

    /// Judges the marks a dead run left: each mark still in flight is one
    /// more death for its URL. Called once, before anything is dispatched.
    pub(super) fn recover_in_flight(&mut self) -> Result<(), StoreError> {
        let store = self.store.clone();
        let mut rows = Vec::new();
        for row in store.scan(CF_INFLIGHT, &[]) {
            let (k, v) = row?;
            let (Some(id), Ok(rec)) = (UrlId::from_slice(&k), InFlightRecord::decode(&v)) else {
                continue;
            };
            rows.push((id, rec));
        }
        if rows.is_empty() {
            return Ok(());
        }
        let mut b = store.batch();
        let mut touched = Vec::new();
        let mut looped = Vec::new();
        for (id, rec) in rows {
            if !rec.in_flight {
                self.suspects.insert(id, rec.deaths);
                continue;
            }
            let deaths = rec.deaths.saturating_add(1);
            let key = FrontierKey::from_key(&rec.frontier_key);
            let entry = match key {
                Some(k) => store.get::<FrontierEntry>(CF_FRONTIER, &k.to_key())?,
                None => None,
            };
            match (key, entry) {
                (Some(key), Some(entry)) if deaths >= CRASH_LOOP_DEATHS => {
                    self.host(key.host, "")?;
                    self.dequeue(&mut b, key)?;
                    let state = SeenState::Failed(FailReason::CrashLoop);
                    self.mark(&mut b, id, &entry, state);
                    super::commit::bump(&mut self.counters.failed, FailReason::CrashLoop.name(), 1);
                    let detail = DetailRecord {
                        reason: FailReason::CrashLoop.name().into(),
                        detail: format!(
                            "the process died {deaths} times in a row while this URL was \
                             in flight (an abort, a stack overflow or an out-of-memory kill); \
                             skipped so the crawl can go on"
                        ),
                        at_ms: now_ms(),
                    };
                    b.put(CF_DETAILS, &id.to_bytes(), &detail);
                    b.delete(CF_INFLIGHT, &id.to_bytes());
                    if !touched.contains(&key.host) {
                        touched.push(key.host);
                    }
                    looped.push(entry.url);
                }
                (Some(_), Some(_)) => {
                    let suspect = InFlightRecord {
                        deaths,
                        in_flight: false,
                        ..rec
                    };
                    b.put(CF_INFLIGHT, &id.to_bytes(), &suspect);
                    self.suspects.insert(id, deaths);
                }
                // No longer queued (recorded by other means): nothing to judge.
                _ => b.delete(CF_INFLIGHT, &id.to_bytes()),
            }
        }
        self.finish(b, &touched)?;
        for url in looped {
            self.notice(format!(
                "{url}: skipped as a crash loop (the process died twice in a row with it in flight); why explains"
            ));
        }
        Ok(())
    }
}

/// Clears the in-flight marks of a run that is quitting on purpose (a
/// second Ctrl-C) without recording its fetches: quitting is not a crash.
pub fn forget_in_flight(store: &Store) -> Result<(), StoreError> {
    let mut b = store.batch();
    for row in store.scan(CF_INFLIGHT, &[]) {
        let (k, v) = row?;
        if InFlightRecord::decode(&v).is_ok_and(|r| r.in_flight) {
            b.delete(CF_INFLIGHT, &k);
        }
    }
    b.write()
}
