//! The frontier's order in the ledger: its generation, raised when the
//! order or its parameters change (a host's queue keyed under an older one
//! is re-keyed when the host is next scheduled: no whole-frontier pass),
//! and the scores a URL is queued with.

use super::discover::{PageScore, ScoreFrom};
use super::{Discovery, Ledger};
use crate::frontier::order::{importance, scores_of, shark_inherited, url_shape};
use crate::frontier::{Focus, Order};
use crate::model::{CanonicalUrl, HostId};
use crate::schema::tables::OrderRow;
use crate::schema::{FrontierEntry, FrontierKey, FrontierScores, OrderState};
use crate::store::StoreError;

impl Ledger {
    /// Loads the stored order; a db from before schema 12 keyed its
    /// frontier breadth-first, generation 0.
    pub(super) fn load_order(&mut self) -> Result<(), StoreError> {
        self.order = match self.store.meta::<OrderRow>()? {
            Some(o) => o,
            None => OrderState {
                fingerprint: crate::frontier::OrderSettings::default().fingerprint(),
                generation: 0,
            },
        };
        self.note_order()
    }

    /// Raises the order's generation when the settings' order (or its
    /// parameters) differs from the one keys were last computed in.
    pub(super) fn note_order(&mut self) -> Result<(), StoreError> {
        let fingerprint = self.settings.order.fingerprint();
        if fingerprint == self.order.fingerprint {
            return Ok(());
        }
        self.order = OrderState {
            fingerprint,
            generation: self.order.generation + 1,
        };
        // Stored before any host row in the new generation, so that a
        // generation number never names two orders. A read-only ledger
        // (a dry-run refilter on an attached db) re-keys nothing.
        if self.store.is_read_only() {
            return Ok(());
        }
        let mut b = self.store.batch();
        b.put_meta::<OrderRow>(&self.order);
        b.write()
    }

    /// Re-keys host `id`'s queue when it was keyed under an older order
    /// generation; returns the rows that moved.
    pub fn ensure_keyed(&mut self, id: HostId) -> Result<u64, StoreError> {
        let generation = self.order.generation;
        let order = self.settings.order.clone();
        let store = self.store.clone();
        let h = self.host(id, "")?;
        if h.record.order_gen == generation {
            return Ok(0);
        }
        let moved = h.queue.rekey(&store, |k, e| {
            let s = scores_of(k, e);
            let entry = FrontierEntry {
                scores: Some(s.clone()),
                ..e.clone()
            };
            (order.priority(e.depth, &s), entry)
        })?;
        h.record.order_gen = generation;
        self.write_host(id)?;
        Ok(moved)
    }

    /// The priority of host `id`'s best queued URL (its queue re-keyed
    /// first if it is in an older order); a host that cannot be read
    /// ranks last (its error comes up when it is dispatched).
    pub fn head_priority(&mut self, id: HostId) -> u64 {
        let store = self.store.clone();
        let head = self
            .ensure_keyed(id)
            .and_then(|_| self.host(id, "")?.queue.head(&store));
        head.ok().flatten().unwrap_or(u64::MAX)
    }

    /// The scores a URL discovered as `d` is queued with, `seq`-th.
    pub(super) fn scores_for(
        &self,
        url: &CanonicalUrl,
        d: &Discovery<'_>,
        seq: u64,
    ) -> FrontierScores {
        let url_shape = url_shape(url.url(), &self.settings.order.patterns);
        match d.from() {
            ScoreFrom::Nothing => FrontierScores {
                seq,
                inherited: 1.0,
                anchor: 1.0,
                url_shape,
                backlinks: 1.0,
                tunnel: false,
            },
            ScoreFrom::Redirect(s) => FrontierScores {
                seq,
                url_shape,
                ..s.clone()
            },
            ScoreFrom::Link {
                page,
                before,
                anchor,
                after,
            } => {
                let o = &self.settings.order;
                let inherited =
                    shark_inherited(o.delta, page.sim, page.relevant, f64::from(page.inherited));
                FrontierScores {
                    seq,
                    inherited: inherited as f32,
                    anchor: self.filters.anchor_score(before, anchor, after) as f32,
                    url_shape,
                    backlinks: page.weight,
                    tunnel: page.tunnel,
                }
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
        tunnel: bool,
    ) -> PageScore {
        let o = &self.settings.order;
        let (sim, relevant) = match relevance {
            Some(cos) => (cos, self.filters.is_relevant(cos)),
            None if o.order == Order::Shark => self.filters.similarity(text.0, text.1),
            None => (0.0, false),
        };
        let own = scores_of(key, entry);
        PageScore {
            sim,
            relevant,
            inherited: own.inherited,
            weight: importance(o.alpha, o.beta, &own) as f32,
            tunnel: tunnel && o.focus == Focus::Soft,
        }
    }
}
