//! The frontier's order in the ledger: its generation, raised when the
//! order or its parameters change (a host's queue keyed under an older one
//! is re-keyed when the host is next scheduled: no whole-frontier pass),
//! and the scores a URL is queued with.

use super::discover::ScoreFrom;
use super::{Discovery, Ledger};
use crate::frontier::learned::features;
use crate::frontier::order::{LinkInputs, link_scores, scores_of, seed_scores, url_shape};
use crate::frontier::{Focus, Order, PageScore};
use crate::model::SeenState;
use crate::model::{CanonicalUrl, HostId, UrlId};
use crate::schema::tables::{OrderRow, RankRow, Ranks, Seen};
use crate::schema::{
    FrontierEntry, FrontierKey, FrontierScores, LinkContext, OrderState, RankRun, SeenRecord,
};
use crate::store::{Batch, StoreError};

impl Ledger {
    /// Loads the stored order; a db from before schema 12 keyed its
    /// frontier breadth-first, generation 0.
    pub(super) fn load_order(&mut self) -> Result<(), StoreError> {
        let stored = self.store.meta::<OrderRow>()?;
        self.order.enter(stored.unwrap_or_else(|| OrderState {
            fingerprint: crate::frontier::OrderSettings::default().fingerprint(),
            generation: 0,
        }));
        self.note_order()
    }

    /// Raises the order's generation when the settings' order (or its
    /// parameters) differs from the one keys were last computed in.
    pub(super) fn note_order(&mut self) -> Result<(), StoreError> {
        // The last ranking stored: read here, as a shell's `rank pagerank`
        // tells a running crawl with a settings change.
        let ranking = self.store.meta::<RankRow>().ok().flatten();
        self.order.set_ranking(ranking);
        let Some(order) = self.next_order() else {
            return Ok(());
        };
        self.order.enter(order);
        // Under the learned order, every URL queued so far is scored again
        // with the model as it is now.
        self.start_epoch();
        // Stored before any host row in the new generation, so that a
        // generation number never names two orders. A read-only ledger
        // (a dry-run refilter on an attached db) re-keys nothing.
        if self.store.is_read_only() {
            return Ok(());
        }
        let mut b = self.store.batch();
        b.put_meta::<OrderRow>(self.order.state());
        b.write()
    }

    /// The order state after the one keys were last computed in, if what
    /// they depend on changed: the settings' order and parameters, the
    /// ranking PageRank keys follow, the learned model's epoch.
    pub(super) fn next_order(&self) -> Option<OrderState> {
        let mut fingerprint = self.settings.order.fingerprint();
        if let Some(run) = self.ranking_in_keys() {
            fingerprint += &format!(" ranks={}", run.computed_ms);
        }
        if self.settings.order.needs().model {
            fingerprint += &format!(" epoch={}", self.order.model().epoch());
        }
        // A seed site's own order keys its hosts' queues.
        let orders = self.sites.rules().orders();
        if !orders.is_empty() {
            fingerprint += &format!(" sites={orders}");
        }
        self.order.after(fingerprint)
    }

    /// Re-keys host `id`'s queue when it was keyed under an older order
    /// generation, then applies the in-links its queued URLs gained since
    /// it was last scheduled; returns the rows that moved.
    pub fn ensure_keyed(&mut self, id: HostId) -> Result<u64, StoreError> {
        let rekeyed = self.rekey(id)?;
        Ok(rekeyed + self.apply_boosts(id, false)?)
    }

    fn rekey(&mut self, id: HostId) -> Result<u64, StoreError> {
        let generation = self.order.generation();
        let order = self.settings.order.clone();
        let own = self.order_of(id);
        let store = self.store.clone();
        let ranked = self.ranking_in_keys().map(|r| r.nodes as f64);
        let model = order
            .needs()
            .model
            .then(|| self.order.epoch_model().clone());
        let epoch_seq = self.order.epoch_seq();
        let h = self.loaded(id)?;
        if h.record.order_gen == generation {
            return Ok(0);
        }
        let rekey = |k: &FrontierKey, e: &FrontierEntry| {
            let mut s = scores_of(k, e);
            // Under `importance.backlinks pagerank`, a ranked URL's IB is
            // its PageRank (relative to the mean).
            if let Some(nodes) = ranked
                && let Ok(Some(r)) = store.row::<Ranks>(&k.url)
            {
                s.backlinks = (r.pagerank * nodes) as f32;
            }
            // The learned order scores the URL with the model of the epoch
            // (one queued since was scored with a newer one).
            if let Some(m) = &model
                && s.seq < epoch_seq
                && let Ok(url) = url::Url::parse(&e.url)
            {
                s.model = m.score_queued(e.depth, &features(&url, e.link.as_ref()));
            }
            (order.priority_as(own, e.depth, &s), s)
        };
        // The URL's `seen` row names its new key (see `apply_boosts`).
        // (A revisit's page stays fetched: its row is not a queued one.)
        let moved_to = |b: &mut Batch<'_>, to: &FrontierKey, e: &FrontierEntry| {
            if e.revisit.is_none() {
                b.put_row::<Seen>(&to.url, &queued_record(e, to.priority));
            }
        };
        let moved = h.queue.rekey(&store, rekey, moved_to)?;
        h.record.order_gen = generation;
        self.write_host(id)?;
        Ok(moved)
    }

    /// Notes an in-link to `url` (a URL seen before, maybe queued) from a
    /// page whose links weigh `d`'s page weight: under the importance
    /// order its IB rises when its host is next scheduled. No read here.
    pub(super) fn boost(&mut self, url: &CanonicalUrl, d: &Discovery<'_>) {
        // Most links lead to URLs fetched already: their rises would cost a
        // `seen` read each to be skipped (two in three in a 100,000-page
        // crawl). Only a queue keyed by importance rises: the URL's host's
        // (a seed site may set its own order).
        if self.order.has_left(url.id())
            || !self.settings.order.needs_as(self.keyed_order(url)).inlinks
        {
            return;
        }
        // A link a link filter dropped is no in-link the crawl follows.
        if let ScoreFrom::Link { page, .. } = d.from()
            && page.weight > 0.0
            && !d.is_filtered()
        {
            let now = self.clock.now_ms();
            self.order.note_inlink(url, page.weight, now);
        }
    }

    /// The order `url`'s host's queue is keyed in (the crawl's, or its
    /// seed site's own). The host id is worked out only when some site
    /// sets an order: it costs an origin string a URL.
    fn keyed_order(&self, url: &CanonicalUrl) -> Order {
        if !self.sites.rules().set_orders() {
            return self.settings.order.order;
        }
        self.order_of(url.host_id())
    }

    /// Adds the in-link weights host `id`'s queued URLs gained to their
    /// backlinks and moves each row to its new priority: one `seen` read
    /// a URL (its row's key), one `frontier` read for rows not in memory.
    /// Only when they are due (see `Boosts::take`), unless `all` or the
    /// host's whole queue is in memory (a small crawl sees every rise on
    /// its next page).
    fn apply_boosts(&mut self, id: HostId, all: bool) -> Result<u64, StoreError> {
        let in_memory = self.hosts.get(id).is_some_and(|h| h.queue.is_in_memory());
        let boosts = self
            .order
            .take_boosts(id, self.clock.now_ms(), all || in_memory);
        // A link to a URL of a host the crawl never queued for (out of
        // scope): nothing of it is queued, and no state is made for it.
        if boosts.is_empty() || !self.known_host(id)? {
            return Ok(0);
        }
        let store = self.store.clone();
        let order = self.settings.order.clone();
        let own = self.order_of(id);
        // URLs fetched since their in-link was noted have nothing to raise.
        let boosts: Vec<_> = boosts
            .into_iter()
            .filter(|(u, _)| !self.order.has_left(*u))
            .collect();
        let ids: Vec<UrlId> = boosts.iter().map(|(u, _)| *u).collect();
        let seen = store.seen_many(&ids)?;
        let queued: Vec<(FrontierKey, f32)> = boosts
            .into_iter()
            .zip(seen)
            .filter_map(|((url, w), rec)| {
                let rec = rec.filter(|r| r.state == SeenState::Queued)?;
                let key = FrontierKey {
                    host: id,
                    priority: rec.priority?,
                    url,
                };
                Some((key, w))
            })
            .collect();
        let keys: Vec<FrontierKey> = queued.iter().map(|(k, _)| *k).collect();
        let h = self.loaded(id)?;
        let entries = h.queue.take_queued(&store, &keys)?;
        let mut b = store.batch();
        let mut moved = 0;
        for ((key, w), entry) in queued.into_iter().zip(entries) {
            let Some(mut e) = entry else {
                continue;
            };
            let mut s = scores_of(&key, &e);
            s.backlinks += w;
            let priority = order.priority_as(own, e.depth, &s);
            e.scores = Some(s);
            let to = FrontierKey { priority, ..key };
            moved += u64::from(to != key);
            b.put_row::<Seen>(&key.url, &queued_record(&e, priority));
            h.queue.moved(&mut b, key, to, e);
        }
        if let Err(e) = b.write() {
            // The window moved rows the batch did not: read it again.
            h.queue.forget_window();
            return Err(e);
        }
        Ok(moved)
    }

    /// Whether the crawl has state for host `id` (loaded, or a row).
    fn known_host(&self, id: HostId) -> Result<bool, StoreError> {
        Ok(self.hosts.contains(id) || self.store.host_and_robots_place(id)?.is_some())
    }

    /// Applies every host's waiting boosts (when too many wait, and when
    /// the run ends).
    pub fn apply_all_boosts(&mut self) -> Result<(), StoreError> {
        for host in self.order.boosted_hosts() {
            if self.known_host(host)? {
                self.rekey(host)?;
            }
            self.apply_boosts(host, true)?;
        }
        Ok(())
    }

    /// The priority of host `id`'s best queued URL (its queue re-keyed
    /// first if it is in an older order); a host that cannot be read
    /// ranks last (its error comes up when it is dispatched).
    pub fn head_priority(&mut self, id: HostId) -> u64 {
        let store = self.store.clone();
        let head = self
            .ensure_keyed(id)
            .and_then(|_| self.loaded(id)?.queue.head(&store));
        head.ok().flatten().unwrap_or(u64::MAX)
    }

    /// The scores a URL discovered as `d` is queued with, `seq`-th, at
    /// `depth`, by `link` (under the learned order).
    pub(super) fn scores_for(
        &self,
        url: &CanonicalUrl,
        d: &Discovery<'_>,
        seq: u64,
        link: Option<&LinkContext>,
    ) -> FrontierScores {
        let url_shape = url_shape(url.url(), &self.settings.order.patterns);
        let model = if self.settings.order.needs().model {
            self.order
                .model()
                .score_queued(d.depth(), &features(url.url(), link))
        } else {
            0.0
        };
        match d.from() {
            // A link judged again offline scores as a seed does.
            ScoreFrom::Nothing => seed_scores(seq, url_shape, model),
            ScoreFrom::Listed => FrontierScores {
                seq,
                inherited: 0.0,
                anchor: 0.0,
                url_shape,
                backlinks: 0.0,
                tunnel: false,
                model,
            },
            ScoreFrom::Redirect { scores, .. } => FrontierScores {
                seq,
                url_shape,
                model,
                ..scores.clone()
            },
            ScoreFrom::Link {
                page,
                before,
                anchor,
                after,
                ..
            } => {
                let anchor = self.filters.anchor_score(before, anchor, after) as f32;
                let link = LinkInputs {
                    seq,
                    anchor,
                    url_shape,
                    model,
                };
                link_scores(&self.settings.order, &page, link)
            }
        }
    }

    /// What a fetched page passes on to its links: its similarity (the
    /// page verdict's relevance when the mode computed it, else computed
    /// here under Shark-search only), its inherited score and its weight.
    pub(super) fn page_score(
        &self,
        entry: &FrontierEntry,
        key: &FrontierKey,
        relevance: Option<f64>,
        text: (&str, &str),
        kept: bool,
        tunnel: bool,
    ) -> PageScore {
        let o = &self.settings.order;
        // Its links inherit from it under Shark-search: mostly into its own
        // host's queue, and into the crawl's.
        let similarity = o.needs().similarity || o.needs_as(self.order_of(key.host)).similarity;
        let sim = match relevance {
            Some(cos) => (cos, self.filters.is_relevant(cos)),
            None if similarity => self.filters.similarity(text.0, text.1),
            None => (0.0, false),
        };
        let own = scores_of(key, entry);
        let pagerank = if o.needs().pagerank {
            self.relative_pagerank(key.url)
        } else {
            None
        };
        let tunnel = tunnel && o.focus == Focus::Soft;
        PageScore::new(o, sim, kept, &own, pagerank, tunnel)
    }

    /// The stored ranking, when the order's keys follow it
    /// (`importance.backlinks pagerank`).
    fn ranking_in_keys(&self) -> Option<RankRun> {
        let o = &self.settings.order;
        if !o.needs().pagerank {
            return None;
        }
        self.order.ranking().cloned()
    }

    /// Page `id`'s stored PageRank times the nodes ranked (1 = the mean),
    /// if it was ranked (a read error counts as not ranked).
    fn relative_pagerank(&self, id: UrlId) -> Option<f64> {
        let nodes = self.order.ranking()?.nodes as f64;
        let rank = self.store.row::<Ranks>(&id).ok().flatten()?;
        Some(rank.pagerank * nodes)
    }
}

/// The `seen` row of a URL queued as `e` at `priority`.
pub(super) fn queued_record(e: &FrontierEntry, priority: u64) -> SeenRecord {
    SeenRecord {
        state: SeenState::Queued,
        depth: e.depth,
        parent: e.parent,
        redirects: e.redirects,
        updated_ms: e.enqueued_ms,
        priority: Some(priority),
        scores: None,
    }
}
