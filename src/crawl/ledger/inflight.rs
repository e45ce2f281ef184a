//! Crash loops: a page that kills the process (an abort or a stack
//! overflow in a library, an OOM kill) would kill every resumed run too.
//! Every fetched page is marked in `inflight` before its body is processed
//! — the work a page's content can crash — and unmarked in the batch that
//! records it. A fetch task asks the scheduler for the mark (`marks`); the
//! ledger writes it in its next batch (usually another page's, so a mark
//! costs no write of its own) and the task processes the body once the
//! mark is durable.
//! A run that finds marks left by a dead run counts one death for each of
//! those URLs; a URL that was in flight when the process died twice in a
//! row is recorded as failed (`crash-loop`) instead of fetched a third
//! time. Marking only the processing, not the wait for the network, keeps
//! a random kill from marking the many pages merely waiting on servers.

use super::Ledger;
use crate::model::UrlId;
use crate::model::{FailReason, SeenState};
use crate::schema::tables::{Details, Frontier, InFlight};
use crate::schema::{DetailRecord, FrontierKey, InFlightRecord};
use crate::store::{Batch, Store, StoreError};

/// Runs in a row that may die with a URL in flight before it is skipped.
pub const CRASH_LOOP_DEATHS: u8 = 2;

impl Ledger {
    /// Writes the marks fetch tasks asked for in a batch of their own (when
    /// no page's batch is about to carry them).
    pub fn write_marks(&mut self) -> Result<(), StoreError> {
        let mut b = self.store.batch();
        let granted = self.marks.write_into(&mut b);
        b.write()?;
        self.marks.written(granted);
        Ok(())
    }

    /// A page's fetch was recorded (in `b`): it is no longer in flight, and
    /// no longer a suspect.
    pub fn unmark(&mut self, b: &mut Batch<'_>, id: UrlId) {
        b.delete_row::<InFlight>(&id);
        self.suspects.remove(&id);
        self.marks.unmarked(id);
    }

    /// Clears the marks of fetches a clean stop abandoned (a suspect
    /// keeps its deaths).
    pub fn unmark_in_flight(&mut self, ids: &[UrlId]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut b = self.store.batch();
        for id in ids {
            if let Some(rec) = self.store.row::<InFlight>(id)? {
                abandon(&mut b, *id, rec);
            }
        }
        b.write()
    }

    /// Judges the marks a dead run left: each mark still in flight is one
    /// more death for its URL. Called once, before anything is dispatched.
    pub fn recover_in_flight(&mut self) -> Result<(), StoreError> {
        let store = self.store.clone();
        let rows = store
            .rows::<InFlight>(&[])
            .collect::<Result<Vec<_>, StoreError>>()?;
        if rows.is_empty() {
            return Ok(());
        }
        let mut b = store.batch();
        let mut touched = Vec::new();
        let mut looped = Vec::new();
        for (id, rec) in rows {
            let key = FrontierKey::from_key(&rec.frontier_key);
            let entry = match key {
                Some(k) => store.row::<Frontier>(&k)?,
                None => None,
            };
            let deaths = rec.deaths.saturating_add(1);
            match (key, entry) {
                // A suspect from an earlier death, still queued.
                (Some(_), Some(_)) if !rec.in_flight => {
                    self.suspects.insert(id, rec.deaths);
                }
                (Some(key), Some(entry)) if deaths >= CRASH_LOOP_DEATHS => {
                    self.loaded(key.host)?;
                    let state = SeenState::Failed(FailReason::CrashLoop);
                    // (A revisit's page stays as stored.)
                    self.leave_queue(&mut b, key, &entry, state)?;
                    let detail = DetailRecord {
                        reason: FailReason::CrashLoop.name().into(),
                        detail: format!(
                            "the process died {deaths} times in a row while this URL was \
                             in flight (an abort, a stack overflow or an out-of-memory kill); \
                             skipped so the crawl can go on"
                        ),
                        at_ms: self.clock.now_ms(),
                    };
                    if entry.revisit.is_none() {
                        b.put_row::<Details>(&id, &detail);
                    }
                    b.delete_row::<InFlight>(&id);
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
                    b.put_row::<InFlight>(&id, &suspect);
                    self.suspects.insert(id, deaths);
                }
                // No longer queued (recorded by other means, or dropped by a
                // refilter): nothing to judge.
                _ => b.delete_row::<InFlight>(&id),
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
    for row in store.rows::<InFlight>(&[]) {
        let (id, rec) = row?;
        abandon(&mut b, id, rec);
    }
    b.write()
}

/// A fetch given up on purpose is no death: its mark goes, but a suspect
/// of earlier deaths stays one (unmarked, with its count).
fn abandon(b: &mut Batch<'_>, id: UrlId, rec: InFlightRecord) {
    if !rec.in_flight {
        return;
    }
    if rec.deaths == 0 {
        b.delete_row::<InFlight>(&id);
    } else {
        let suspect = InFlightRecord {
            in_flight: false,
            ..rec
        };
        b.put_row::<InFlight>(&id, &suspect);
    }
}
