//! The learned order in the ledger: the link model trained on each judged
//! page (whether the page filters kept the page its link led to), saved
//! in `meta/model`, and the link context a URL is queued with.

use std::sync::Arc;

use super::discover::ScoreFrom;
use super::{Discovery, Ledger};
use crate::crawl::worker::PageJob;
use crate::frontier::Order;
use crate::frontier::learned::LinkModel;
use crate::schema::LinkContext;
use crate::schema::tables::{ModelRow, OrderRow};
use crate::store::{Batch, StoreError};

/// Time between saves of the model (it is also saved at each epoch and
/// when the run ends): a crash loses at most this much training. A save
/// copies every feature, so it is not done per page.
const SAVE_EVERY_MS: u64 = 10_000;

impl Ledger {
    /// Loads the stored link model (none: an untrained one).
    pub(super) fn load_model(&mut self) -> Result<(), StoreError> {
        let stored = self.store.meta::<ModelRow>()?;
        self.model = Arc::new(stored.map(LinkModel::from_record).unwrap_or_default());
        self.model_saved = self.model.updates;
        Ok(())
    }

    /// Under the learned order, trains the model on a judged page: the
    /// link that queued it was good if the page was kept. A new epoch
    /// raises the order's generation, so queued URLs are scored again.
    pub(super) fn learn(&mut self, b: &mut Batch<'_>, job: &PageJob, kept: bool) {
        if self.settings.order.order != Order::Learned {
            return;
        }
        let epoch = self.model.epoch();
        let model = Arc::make_mut(&mut self.model);
        model.train(job.url.url(), job.entry.link.as_ref(), kept);
        let new_epoch = model.epoch() != epoch;
        let now = self.clock.now_ms();
        if new_epoch || now >= self.model_saved_ms + SAVE_EVERY_MS {
            b.put_meta::<ModelRow>(&model.to_record());
            self.model_saved = model.updates;
            self.model_saved_ms = now;
        }
        if new_epoch && let Some(order) = self.next_order() {
            b.put_meta::<OrderRow>(&order);
            self.order = order;
        }
    }

    /// Writes the model if it learned since it was last saved (at the
    /// end of a run).
    pub fn save_model(&mut self) -> Result<(), StoreError> {
        if self.model.updates == self.model_saved || self.store.is_read_only() {
            return Ok(());
        }
        let mut b = self.store.batch();
        b.put_meta::<ModelRow>(&self.model.to_record());
        b.write()?;
        self.model_saved = self.model.updates;
        Ok(())
    }

    /// The link a URL discovered as `d` is queued with, kept under the
    /// learned order only (a redirect's target keeps its source's).
    pub(super) fn link_context(&self, d: &Discovery<'_>) -> Option<LinkContext> {
        if self.settings.order.order != Order::Learned {
            return None;
        }
        match d.from() {
            ScoreFrom::Nothing => None,
            ScoreFrom::Redirect { link, .. } => link.cloned(),
            ScoreFrom::Link {
                page,
                kind,
                before,
                anchor,
                after,
            } => Some(LinkContext {
                anchor: anchor.to_string(),
                context: format!("{before} {after}"),
                link_type: Some(kind),
                parent_sim: page.sim as f32,
                parent_kept: page.kept,
            }),
        }
    }
}
