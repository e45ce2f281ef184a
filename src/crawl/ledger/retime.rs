//! Timing the fetched pages under a new revisit policy (`recrawl`): a
//! chunk of `seen` rows a crawl loop turn, the progress kept in
//! `meta/recrawl`, so that a policy change on a collection of millions
//! does not hold the scheduler's task, and a stopped crawl goes on with it.

use super::Ledger;
use crate::crawl::revisit::{RETIME_CHUNK, observe};
use crate::model::SeenState;
use crate::model::UrlId;
use crate::schema::tables::{RecrawlRow, Seen, Visits};
use crate::schema::{DueReason, RecrawlState, SeenRecord, VisitRecord};
use crate::store::StoreError;

impl Ledger {
    /// Starts timing every fetched page under the revisit policy when it
    /// differs from the one the `due` rows were timed under (pages fetched
    /// before revisits were on get their first `visits` row), or resumes
    /// a retiming a stopped crawl left under way. The work is done a chunk
    /// at a time by [`Ledger::retime_step`].
    pub fn retime_revisits(&mut self) -> Result<(), StoreError> {
        if self.store.is_read_only() {
            return Ok(());
        }
        let policy = self.settings.recrawl;
        let fingerprint = policy.fingerprint();
        let stored = self.store.meta::<RecrawlRow>()?.unwrap_or_default();
        if stored.fingerprint == fingerprint {
            self.due.set_retime_next(stored.next);
            return Ok(());
        }
        // Off: pages fetched from now on get no visits row, and turned on
        // again, every page is timed anew.
        self.due.set_retime_next(policy.is_on().then_some(0));
        let mut b = self.store.batch();
        b.put_meta::<RecrawlRow>(&RecrawlState {
            fingerprint,
            next: self.due.retime_next(),
            timed: 0,
        });
        b.write()
    }

    /// Whether a retiming is under way.
    pub fn retiming(&self) -> bool {
        self.due.retime_next().is_some()
    }

    /// Times the next [`RETIME_CHUNK`] `seen` rows' fetched pages under
    /// the policy, in one batch with the retiming's progress; returns
    /// whether more wait.
    pub fn retime_step(&mut self) -> Result<bool, StoreError> {
        let Some(from) = self.due.retime_next() else {
            return Ok(false);
        };
        let store = self.store.clone();
        let mut state = store.meta::<RecrawlRow>()?.unwrap_or_default();
        let (mut looked, mut next) = (0, None);
        let mut b = store.batch();
        for row in store.rows_range::<Seen>(&UrlId(from), None) {
            let (id, seen) = row?;
            if looked == RETIME_CHUNK {
                next = Some(id.0);
                break;
            }
            looked += 1;
            if let Some(v) = self.visit_to_time(id, &seen)? {
                let last = v.last_ms;
                self.schedule_visit(&mut b, id, v, last, DueReason::Interval);
                state.timed += 1;
            }
        }
        state.next = next;
        b.put_meta::<RecrawlRow>(&state);
        self.finish(b, &[])?;
        self.due.set_retime_next(next);
        if next.is_none() && state.timed > 0 {
            let mode = self.settings.recrawl.mode.name();
            self.notice(format!("recrawl {mode}: {} pages timed", state.timed));
        }
        Ok(next.is_some())
    }

    /// The visits of page `id` to time under the policy: its row, or a
    /// first one for a page fetched before revisits were on (None: not a
    /// fetched page, or queued for a revisit now).
    fn visit_to_time(
        &self,
        id: UrlId,
        seen: &SeenRecord,
    ) -> Result<Option<VisitRecord>, StoreError> {
        if !matches!(seen.state, SeenState::Fetched { .. }) {
            return Ok(None);
        }
        Ok(match self.store.row::<Visits>(&id)? {
            Some(v) if v.queued => None,
            Some(v) => Some(v),
            None => self.store.url(id)?.map(|url| {
                let mut v = VisitRecord {
                    url,
                    version_ms: seen.updated_ms,
                    ..VisitRecord::default()
                };
                observe(&mut v, seen.updated_ms, false);
                v
            }),
        })
    }
}
