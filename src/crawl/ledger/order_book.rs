//! The crawl order's own state: the order new keys are computed in and
//! its generation, the ranking PageRank keys follow, the in-links waiting
//! to raise queued URLs' IB (importance), and the learned order's link
//! model with its epoch and when it was last saved.

use std::sync::Arc;

use crate::frontier::learned::LinkModel;
use crate::frontier::{Boosts, SettledSet};
use crate::model::{CanonicalUrl, HostId, UrlId};
use crate::schema::{LinkContext, ModelRecord, OrderState, RankRun};

/// Time between saves of the model (it is also saved at each epoch and
/// when the run ends): a crash loses at most this much training. A save
/// writes every feature (up to a few MB), so it is not done per page.
const SAVE_EVERY_MS: u64 = 60_000;

#[derive(Default)]
pub(super) struct OrderBook {
    /// The order new keys are computed in, and its generation.
    state: OrderState,
    /// The last `rank pagerank` stored (read with the order).
    ranking: Option<RankRun>,
    /// In-links of queued URLs waiting to raise their IB.
    boosts: Boosts,
    /// URLs that left the queue lately: an in-link to one raises nothing.
    left_queue: SettledSet,
    /// The link model; the model as it was when its epoch last rose
    /// (queues are re-scored with that one).
    model: Arc<LinkModel>,
    epoch_model: Arc<LinkModel>,
    /// The first sequence number queued after the epoch rose: a URL queued
    /// since was scored with a model at least as new, and keeps its score.
    epoch_seq: u64,
    /// The model's updates and the time when it was last saved.
    saved_updates: u64,
    saved_ms: u64,
}

impl OrderBook {
    pub fn state(&self) -> &OrderState {
        &self.state
    }

    pub fn generation(&self) -> u64 {
        self.state.generation
    }

    /// The next generation, if keys computed under `fingerprint` would
    /// differ from the current ones.
    pub fn after(&self, fingerprint: String) -> Option<OrderState> {
        (fingerprint != self.state.fingerprint).then(|| OrderState {
            fingerprint,
            generation: self.state.generation + 1,
        })
    }

    /// Keys are computed in `state` from now on.
    pub fn enter(&mut self, state: OrderState) {
        self.state = state;
    }

    pub fn ranking(&self) -> Option<&RankRun> {
        self.ranking.as_ref()
    }

    pub fn set_ranking(&mut self, ranking: Option<RankRun>) {
        self.ranking = ranking;
    }

    /// An in-link of `weight` to `url`, raising it when its host is next
    /// scheduled.
    pub fn note_inlink(&mut self, url: &CanonicalUrl, weight: f32, now_ms: u64) {
        self.boosts.add(url.host_id(), url.id(), weight, now_ms);
    }

    pub fn has_left(&self, url: UrlId) -> bool {
        self.left_queue.contains(url)
    }

    /// `url` left the queue (fetched or dropped).
    pub fn left(&mut self, url: UrlId) {
        self.left_queue.insert(url);
    }

    /// The in-link weights host `id`'s URLs gained and that are due (all
    /// of them when `all`).
    pub fn take_boosts(&mut self, id: HostId, now_ms: u64, all: bool) -> Vec<(UrlId, f32)> {
        self.boosts.take(id, now_ms, all)
    }

    /// The hosts with in-links waiting.
    pub fn boosted_hosts(&self) -> Vec<HostId> {
        self.boosts.hosts()
    }

    pub fn boosts_full(&self) -> bool {
        self.boosts.is_full()
    }

    pub fn model(&self) -> &LinkModel {
        &self.model
    }

    /// The model queues are re-scored with.
    pub fn epoch_model(&self) -> &Arc<LinkModel> {
        &self.epoch_model
    }

    /// The first sequence number a newer model than `epoch_model` scored.
    pub fn epoch_seq(&self) -> u64 {
        self.epoch_seq
    }

    /// Starts with `model` as loaded (saved as it is).
    pub fn load_model(&mut self, model: LinkModel, next_seq: u64) {
        self.model = Arc::new(model);
        self.start_epoch(next_seq);
        self.saved_updates = self.model.updates;
    }

    /// Queues are re-scored from now on with the model as it is, except
    /// URLs queued from `next_seq` on (a newer model scored them).
    pub fn start_epoch(&mut self, next_seq: u64) {
        self.epoch_model = self.model.clone();
        self.epoch_seq = next_seq;
    }

    /// Trains the model on a judged page; returns whether its epoch rose.
    pub fn train(&mut self, url: &url::Url, link: Option<&LinkContext>, kept: bool) -> bool {
        let epoch = self.model.epoch();
        let model = Arc::make_mut(&mut self.model);
        model.train(url, link, kept);
        model.epoch() != epoch
    }

    /// Whether the model is due a save at `now_ms`.
    pub fn save_due(&self, now_ms: u64) -> bool {
        now_ms >= self.saved_ms + SAVE_EVERY_MS
    }

    /// Whether the model learned since it was last saved.
    pub fn unsaved(&self) -> bool {
        self.model.updates != self.saved_updates
    }

    /// The model's record, noted saved at `now_ms`.
    pub fn save(&mut self, now_ms: u64) -> ModelRecord {
        self.saved_updates = self.model.updates;
        self.saved_ms = now_ms;
        self.model.to_record()
    }
}
