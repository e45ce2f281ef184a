//! The learned order in a replay: the same link model as the live crawl
//! (`frontier::learned`), trained on each judged page the replay takes,
//! with the link features read from the stored links rows as pages are
//! taken (holding every link's features would take gigabytes on a large
//! crawl; the features of queued pages are held).

use super::ReplayGraph;
use crate::frontier::learned::{Features, LinkModel, features};
use crate::schema::LinkContext;
use crate::store::Store;

/// Where a replay reads link features from.
pub trait LinkFeatures {
    /// The features of each of node `n`'s replay links (aligned with
    /// `g.links(n)`; empty when its row cannot be read).
    fn of_links(&mut self, g: &ReplayGraph, n: u32) -> Vec<Features>;
    /// The features of node `n`'s URL alone (a seed).
    fn of_url(&mut self, g: &ReplayGraph, n: u32) -> Features;
}

/// Link features from the db's `links` and `urls` rows.
pub struct StoredFeatures<'a> {
    pub store: &'a Store,
    /// Rows that could not be read (their links score with no features).
    pub unreadable: u64,
}

impl LinkFeatures for StoredFeatures<'_> {
    fn of_links(&mut self, g: &ReplayGraph, n: u32) -> Vec<Features> {
        let Ok(links) = self.store.links_from(g.id(n), usize::MAX) else {
            self.unreadable += 1;
            return Vec::new();
        };
        let page = g.page(n);
        let verdicts = links.iter().map(|(dst, l)| (*dst, l.verdict));
        g.followed(verdicts)
            .into_iter()
            .map(|(i, _)| {
                let l = &links[i].1;
                let Ok(url) = url::Url::parse(&l.dst_url) else {
                    return Features::new();
                };
                let link = LinkContext {
                    anchor: l.anchor.clone(),
                    context: format!("{} {}", l.before, l.after),
                    link_type: l.link_type,
                    parent_sim: page.sim as f32,
                    parent_kept: page.relevant,
                };
                features(&url, Some(&link))
            })
            .collect()
    }

    fn of_url(&mut self, g: &ReplayGraph, n: u32) -> Features {
        let url = self.store.url(g.id(n)).ok().flatten();
        match url.and_then(|u| url::Url::parse(&u).ok()) {
            Some(u) => features(&u, None),
            None => {
                self.unreadable += 1;
                Features::new()
            }
        }
    }
}

/// The replay's model and the features of the nodes it has queued.
pub(super) struct Learner<'a> {
    model: LinkModel,
    queued: Vec<Option<Features>>,
    source: &'a mut dyn LinkFeatures,
}

impl<'a> Learner<'a> {
    pub fn new(g: &ReplayGraph, source: &'a mut dyn LinkFeatures) -> Learner<'a> {
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

    /// The features of node `n`'s links, aligned with `g.links(n)`.
    pub fn links_of(&mut self, g: &ReplayGraph, n: u32) -> Vec<Features> {
        let mut f = self.source.of_links(g, n);
        f.resize(g.links(n).len(), Features::new());
        f
    }
}
