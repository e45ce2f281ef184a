//! The learned order in a replay: the same link model as the live crawl
//! (`frontier::learned`), trained on each judged page the replay takes,
//! with the link features read from the stored links rows as pages are
//! taken (holding every link's features would take gigabytes on a large
//! crawl; the features of queued pages are held).

use super::ReplayGraph;
use crate::frontier::learned::{Features, LinkModel, features, link_context};
use crate::model::UrlId;
use crate::store::Store;

/// Link features from the db's `links` and `urls` rows.
pub struct StoredFeatures<'a> {
    store: &'a Store,
    /// Rows or URLs that could not be read (their links score with no
    /// features).
    pub unreadable: u64,
}

impl<'a> StoredFeatures<'a> {
    pub fn new(store: &'a Store) -> StoredFeatures<'a> {
        StoredFeatures {
            store,
            unreadable: 0,
        }
    }

    /// The features of each of node `n`'s replay links whose target is
    /// `wanted` (aligned with `g.links(n)`, None for the others; empty
    /// when its row cannot be read). Most links lead to pages queued
    /// already: their features are not computed.
    pub fn of_links(
        &mut self,
        g: &ReplayGraph,
        n: u32,
        wanted: &dyn Fn(u32) -> bool,
    ) -> Vec<Option<Features>> {
        let page = g.page(n);
        let store = self.store;
        let mut unparsed = 0;
        let read = store.with_links(g.id(n), |links| {
            let verdicts = links.iter().map(|(dst, l)| (*dst, l.verdict));
            g.followed(verdicts)
                .into_iter()
                .map(|(i, m)| {
                    let (dst, l) = &links[i];
                    if !wanted(m) {
                        return None;
                    }
                    let Some(url) = stored_url(store, *dst, l.dst_url) else {
                        unparsed += 1;
                        return Some(Features::new());
                    };
                    let link = link_context(
                        (l.before, l.anchor, l.after),
                        l.link_type,
                        page.sim,
                        page.relevant,
                    );
                    Some(features(&url, Some(&link)))
                })
                .collect()
        });
        self.unreadable += unparsed;
        read.unwrap_or_else(|_| {
            self.unreadable += 1;
            Vec::new()
        })
    }

    /// The features of node `n`'s URL alone (a seed).
    pub fn of_url(&mut self, g: &ReplayGraph, n: u32) -> Features {
        match stored_url(self.store, g.id(n), "") {
            Some(u) => features(&u, None),
            None => {
                self.unreadable += 1;
                Features::new()
            }
        }
    }
}

/// URL `id`, parsed: `known` when the row holding the link named it, else
/// read from `urls` (a schema-4-or-older link record names its target by
/// id only). None when it cannot be read or parsed.
fn stored_url(store: &Store, id: UrlId, known: &str) -> Option<url::Url> {
    match known {
        "" => url::Url::parse(&store.url(id).ok()??).ok(),
        u => url::Url::parse(u).ok(),
    }
}

/// The replay's model and the features of the nodes it has queued.
pub(super) struct Learner<'a, 's> {
    model: LinkModel,
    queued: Vec<Option<Features>>,
    source: &'a mut StoredFeatures<'s>,
}

impl<'a, 's> Learner<'a, 's> {
    pub fn new(g: &ReplayGraph, source: &'a mut StoredFeatures<'s>) -> Learner<'a, 's> {
        Learner {
            model: LinkModel::default(),
            queued: vec![None; g.len()],
            source,
        }
    }

    /// The score of a seed queued now (its URL's features kept).
    pub fn queue_seed(&mut self, g: &ReplayGraph, n: u32) -> f32 {
        let f = self.source.of_url(g, n);
        self.queue(n, 0, f)
    }

    /// The score of node `n` queued at `depth` by a link with `f`.
    pub fn queue(&mut self, n: u32, depth: u16, f: Features) -> f32 {
        let score = self.model.score_queued(depth, &f);
        self.queued[n as usize] = Some(f);
        score
    }

    /// Node `n` is taken: the model learns from it if it was judged.
    /// Returns whether the model's epoch rose (queued nodes are scored
    /// again, as the live crawl re-keys its queues).
    pub fn take(&mut self, n: u32, judged: bool, relevant: bool) -> bool {
        let f = self.queued[n as usize].take().unwrap_or_default();
        if !judged {
            return false;
        }
        let epoch = self.model.epoch();
        self.model.train_features(&f, relevant);
        self.model.epoch() != epoch
    }

    /// Node `n`'s score now (it is queued at `depth`).
    pub fn rescore(&self, n: u32, depth: u16) -> f32 {
        let f = self.queued[n as usize].as_deref().unwrap_or_default();
        self.model.score_queued(depth, f)
    }

    /// The features of node `n`'s links to `wanted` nodes, aligned with
    /// `g.links(n)`.
    pub fn links_of(
        &mut self,
        g: &ReplayGraph,
        n: u32,
        wanted: &dyn Fn(u32) -> bool,
    ) -> Vec<Option<Features>> {
        let mut f = self.source.of_links(g, n, wanted);
        f.resize(g.links(n).len(), Some(Features::new()));
        f
    }
}
