//! The learned order in the ledger: the link model trained on each judged
//! page (whether the page filters kept the page its link led to), saved
//! in `meta/model`, and the link context a URL is queued with.

use super::discover::ScoreFrom;
use super::{Discovery, Ledger};
use crate::crawl::worker::PageJob;
use crate::frontier::learned::{LinkModel, link_context};
use crate::schema::LinkContext;
use crate::schema::tables::{ModelRow, OrderRow};
use crate::store::{Batch, StoreError};

impl Ledger {
    /// Loads the stored link model (none: an untrained one). One that
    /// cannot be read is set aside with a notice: it must not stop a crawl
    /// under another order, or refilter.
    pub(super) fn load_model(&mut self) {
        let model = match self.store.meta::<ModelRow>() {
            Ok(stored) => stored.map(LinkModel::from_record).unwrap_or_default(),
            Err(e) => {
                self.notice(format!(
                    "the learned order's model could not be read ({e}); it starts untrained"
                ));
                LinkModel::default()
            }
        };
        self.order.load_model(model, self.counters.next_seq);
    }

    /// Queues are re-scored from now on with the model as it is, except
    /// URLs queued after this (a newer model scored them).
    pub(super) fn start_epoch(&mut self) {
        self.order.start_epoch(self.counters.next_seq);
    }

    /// Puts the model in `b` and notes it saved.
    fn put_model(&mut self, b: &mut Batch<'_>) {
        b.put_meta::<ModelRow>(&self.order.save(self.clock.now_ms()));
    }

    /// Under the learned order, trains the model on a judged page: the
    /// link that queued it was good if the page was kept. A new epoch
    /// raises the order's generation, so queued URLs are scored again
    /// (with the model as it is now, whenever each host comes up).
    pub(super) fn learn(&mut self, b: &mut Batch<'_>, job: &PageJob, kept: bool) {
        if !self.settings.order.needs().model {
            return;
        }
        let new_epoch = self
            .order
            .train(job.url.url(), job.entry.link.as_ref(), kept);
        if new_epoch || self.order.save_due(self.clock.now_ms()) {
            self.put_model(b);
        }
        if new_epoch {
            // Re-keys use this model however late a host comes up, so the
            // order does not depend on scheduling (and a replay matches).
            self.start_epoch();
            if let Some(order) = self.next_order() {
                b.put_meta::<OrderRow>(&order);
                self.order.enter(order);
            }
        }
    }

    /// Writes the model if it learned since it was last saved (at the
    /// end of a run).
    pub fn save_model(&mut self) -> Result<(), StoreError> {
        if !self.order.unsaved() || self.store.is_read_only() {
            return Ok(());
        }
        let store = self.store.clone();
        let mut b = store.batch();
        self.put_model(&mut b);
        b.write()
    }

    /// The link a URL discovered as `d` is queued with, kept under the
    /// learned order only (a redirect's target keeps its source's).
    pub(super) fn link_context(&self, d: &Discovery<'_>) -> Option<LinkContext> {
        if !self.settings.order.needs().model {
            return None;
        }
        match d.from() {
            ScoreFrom::Nothing | ScoreFrom::Listed => None,
            ScoreFrom::Redirect { link, .. } => link.cloned(),
            ScoreFrom::Link {
                page,
                kind,
                before,
                anchor,
                after,
            } => Some(link_context(
                (before, anchor, after),
                Some(kind),
                page.sim,
                page.kept,
            )),
        }
    }
}
