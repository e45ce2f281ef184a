//! The order URLs leave the frontier in (document 002). Within a host it is
//! the key order of the `frontier` CF: a URL's priority (lowest first) is
//! computed from its stored scores when it is queued, and again when the
//! order changes (the host's queue is re-keyed when it is next scheduled).
//! Across hosts, the score orders pick the ready host whose best URL
//! scores highest; breadth-first keeps the politeness-time order.
//!
//! Priority layout: the top bit marks a URL found on an irrelevant page
//! under soft focus (after every other); breadth- and depth-first put the
//! depth in the next 15 bits and the discovery sequence in the low 48; the
//! score orders put `1 - score` in the next 23 bits and the sequence in the
//! low 40 (ties go first-in first-out).

use crate::model::named_enum;
use crate::schema::{FrontierEntry, FrontierKey, FrontierScores};

/// How queued URLs are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Breadth-first: shallower first, then in discovery order.
    #[default]
    Bfs,
    /// Depth-first: deeper first, then the latest discovered first.
    Dfs,
    /// Shark-search: inherited and anchor-context scores.
    Shark,
    /// I(P) = α·IB(P) + β·IL(P): backlinks and URL shape.
    Importance,
    /// A link model trained online on the verdicts of fetched pages.
    Learned,
}

named_enum!(Order {
    Bfs => "bfs",
    Dfs => "dfs",
    Shark => "shark",
    Importance => "importance",
    Learned => "learned",
});

impl Order {
    /// Whether the order ranks URLs by a score (and hosts by their best).
    pub fn by_score(self) -> bool {
        matches!(self, Order::Shark | Order::Importance | Order::Learned)
    }

    /// What the crawl computes for this order as it runs, but PageRank,
    /// whose need depends on a parameter: callers ask
    /// [`OrderSettings::needs_as`].
    fn needs(self) -> Needs {
        Needs {
            similarity: self == Order::Shark,
            inlinks: self == Order::Importance,
            pagerank: false,
            model: self == Order::Learned,
        }
    }
}

/// What an order needs computed while the crawl runs; the rest is skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// A fetched page's similarity to the query, passed on to its links
    /// (Shark-search).
    pub similarity: bool,
    /// In-links that raise a queued URL's IB (importance).
    pub inlinks: bool,
    /// The stored PageRank, as a page's weight (importance with
    /// `backlinks pagerank`).
    pub pagerank: bool,
    /// The link model: its score of each queued URL, trained on verdicts
    /// from the links' stored contexts (learned).
    pub model: bool,
}

/// Whether links of irrelevant pages are followed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Focus {
    /// Not followed (documents 001 and 002).
    #[default]
    Hard,
    /// Queued behind every other URL, so the crawl can tunnel through.
    Soft,
}

named_enum!(Focus { Hard => "hard", Soft => "soft" });

/// What importance's IB is computed from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backlinks {
    /// The URL's in-links, each weighing its page's importance score.
    #[default]
    Inlinks,
    /// The URL's PageRank as `rank pagerank` last stored it, relative to
    /// the mean; a URL it did not rank counts its in-links, each weighing
    /// its page's PageRank (or, unranked, its importance).
    Pagerank,
}

named_enum!(Backlinks {
    Inlinks => "inlinks",
    Pagerank => "pagerank",
});

/// An order with its parameters: everything a priority is computed from.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderSettings {
    pub order: Order,
    pub focus: Focus,
    /// Shark-search's decay of an inherited score (δ < 1).
    pub delta: f64,
    /// Shark-search's weight of the inherited score against the anchor's (γ).
    pub gamma: f64,
    /// Importance's weight of backlinks (α).
    pub alpha: f64,
    /// Importance's weight of the URL's shape (β).
    pub beta: f64,
    /// Words that make a URL important (IL).
    pub patterns: Vec<String>,
    /// What IB is computed from.
    pub backlinks: Backlinks,
}

impl Default for OrderSettings {
    fn default() -> Self {
        OrderSettings {
            order: Order::Bfs,
            focus: Focus::Hard,
            delta: 0.5,
            gamma: 0.5,
            alpha: 0.5,
            beta: 0.5,
            patterns: ["index", "home", "default"].map(String::from).to_vec(),
            backlinks: Backlinks::Inlinks,
        }
    }
}

const SEQ48: u64 = (1 << 48) - 1;
const SEQ40: u64 = (1 << 40) - 1;
const SCORE_STEPS: f64 = ((1u64 << 23) - 1) as f64;
const LOW: u64 = 1 << 63;
/// The learned order ranks by the model's score to 1/128: a retrained
/// model moves a queued URL only when its score crosses a step, so that
/// re-scoring a queue rewrites few rows (in a 100,000-page benchmark
/// crawl, 12,584 rows moved instead of 334,199 at full precision).
const MODEL_STEPS: f64 = 128.0;

impl OrderSettings {
    /// What the crawl's order needs computed, with these parameters.
    pub fn needs(&self) -> Needs {
        self.needs_as(self.order)
    }

    /// What `order` (the crawl's, or a seed site's own) needs computed.
    pub fn needs_as(&self, order: Order) -> Needs {
        Needs {
            pagerank: order == Order::Importance && self.backlinks == Backlinks::Pagerank,
            ..order.needs()
        }
    }

    /// What the frontier's keys depend on: when it changes, queues are
    /// re-keyed. Parameters of other orders are left out.
    pub fn fingerprint(&self) -> String {
        let focus = self.focus.name();
        match self.order {
            Order::Bfs | Order::Dfs => format!("{} {focus}", self.order.name()),
            Order::Shark => format!("shark {focus} δ={} γ={}", self.delta, self.gamma),
            Order::Importance => format!(
                "importance {focus} α={} β={} patterns={}{}",
                self.alpha,
                self.beta,
                self.patterns.join(","),
                match self.backlinks {
                    Backlinks::Inlinks => "",
                    Backlinks::Pagerank => " backlinks=pagerank",
                }
            ),
            // The model's epoch is added by the ledger, which owns the model.
            Order::Learned => format!("learned {focus}"),
        }
    }

    /// The URL's score under the score orders (0 to 1; breadth- and
    /// depth-first have none and give 0).
    pub fn score(&self, s: &FrontierScores) -> f64 {
        self.score_as(self.order, s)
    }

    /// The URL's score under `order`, with these parameters.
    pub fn score_as(&self, order: Order, s: &FrontierScores) -> f64 {
        match order {
            Order::Bfs | Order::Dfs => 0.0,
            Order::Shark => shark_potential(self.gamma, s),
            Order::Importance => importance(self.alpha, self.beta, s),
            Order::Learned => (f64::from(s.model) * MODEL_STEPS).round() / MODEL_STEPS,
        }
    }

    /// The frontier priority (lowest first) of a URL at `depth` with scores `s`.
    pub fn priority(&self, depth: u16, s: &FrontierScores) -> u64 {
        self.priority_as(self.order, depth, s)
    }

    /// The priority under `order` (a seed site's own), with these parameters.
    pub fn priority_as(&self, order: Order, depth: u16, s: &FrontierScores) -> u64 {
        let low = if s.tunnel { LOW } else { 0 };
        let depth = u64::from(depth.min(0x7FFF));
        low | match order {
            Order::Bfs => (depth << 48) | (s.seq & SEQ48),
            Order::Dfs => ((0x7FFF - depth) << 48) | (SEQ48 - (s.seq & SEQ48)),
            Order::Shark | Order::Importance | Order::Learned => {
                let score = self.score_as(order, s).clamp(0.0, 1.0);
                let rank = ((1.0 - score) * SCORE_STEPS).round() as u64;
                (rank << 40) | (s.seq & SEQ40)
            }
        }
    }
}

/// A queued row's scores; a version 1 row (written breadth-first, with
/// no scores) takes its sequence number from its key.
pub fn scores_of(k: &FrontierKey, e: &FrontierEntry) -> FrontierScores {
    e.scores.clone().unwrap_or(FrontierScores {
        seq: k.priority & SEQ48,
        ..FrontierScores::default()
    })
}

/// What a fetched page passes on to the URLs its links queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct PageScore {
    /// Similarity to the query (the relevance cosine; 0 without keywords).
    pub sim: f64,
    /// The similarity passes the relevance threshold.
    pub relevant: bool,
    /// The page filters kept the page.
    pub kept: bool,
    /// The page's own inherited score (Shark-search).
    pub inherited: f32,
    /// The weight of its links as in-links (its importance score).
    pub weight: f32,
    /// Its links are queued behind the rest (an irrelevant page under soft
    /// focus).
    pub tunnel: bool,
}

impl PageScore {
    /// A page of similarity `sim` (`relevant` past the threshold) queued
    /// with scores `own`: its weight is its relative `pagerank` when IB
    /// follows PageRank, else its importance.
    pub fn new(
        o: &OrderSettings,
        (sim, relevant): (f64, bool),
        kept: bool,
        own: &FrontierScores,
        pagerank: Option<f64>,
        tunnel: bool,
    ) -> PageScore {
        let weight = pagerank.unwrap_or_else(|| importance(o.alpha, o.beta, own));
        PageScore {
            sim,
            relevant,
            kept,
            inherited: own.inherited,
            weight: weight as f32,
            tunnel,
        }
    }
}

/// What one link adds to its page's score: its place in discovery order,
/// its anchor context's score, its URL's shape and the model's score.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkInputs {
    pub seq: u64,
    pub anchor: f32,
    pub url_shape: f32,
    /// 0 unless the order needs the model.
    pub model: f32,
}

/// The scores a link on `page` is queued with, the crawl's and the
/// replay's alike: it inherits from the page (Shark-search) and takes the
/// page's weight as an in-link (importance).
pub fn link_scores(o: &OrderSettings, page: &PageScore, link: LinkInputs) -> FrontierScores {
    let inherited = shark_inherited(o.delta, page.sim, page.relevant, f64::from(page.inherited));
    FrontierScores {
        seq: link.seq,
        inherited: inherited as f32,
        anchor: link.anchor,
        url_shape: link.url_shape,
        backlinks: page.weight,
        tunnel: page.tunnel,
        model: link.model,
    }
}

/// A seed's scores: the top of every score but its URL's shape and the
/// model's (a seed's 1 under the learned order).
pub fn seed_scores(seq: u64, url_shape: f32, model: f32) -> FrontierScores {
    FrontierScores {
        seq,
        inherited: 1.0,
        anchor: 1.0,
        url_shape,
        backlinks: 1.0,
        tunnel: false,
        model,
    }
}

/// Shark-search's potential score: γ·inherited + (1 − γ)·anchor-context.
pub fn shark_potential(gamma: f64, s: &FrontierScores) -> f64 {
    gamma * f64::from(s.inherited) + (1.0 - gamma) * f64::from(s.anchor)
}

/// Shark-search's inherited score of a link on a page whose similarity to
/// the query is `sim` (`relevant` when it passes the threshold) and whose
/// own inherited score was `parent_inherited`.
pub fn shark_inherited(delta: f64, sim: f64, relevant: bool, parent_inherited: f64) -> f64 {
    if relevant {
        delta * sim
    } else {
        delta * parent_inherited
    }
}

/// I(P) = α·IB(P) + β·IL(P), divided by α + β so that it stays in 0..1
/// (the order is the same).
pub fn importance(alpha: f64, beta: f64, s: &FrontierScores) -> f64 {
    let ib = backlink_importance(s.backlinks);
    let sum = alpha + beta;
    if sum <= 0.0 {
        return 0.0;
    }
    (alpha * ib + beta * f64::from(s.url_shape)) / sum
}

/// IB from the summed weights of a URL's in-links: Σw / (1 + Σw), so one
/// in-link from a page of weight 1 gives 0.5 and more approach 1.
pub fn backlink_importance(sum: f32) -> f64 {
    let sum = f64::from(sum.max(0.0));
    sum / (1.0 + sum)
}

/// IL: the mean of three signs of an important URL (document 002): few
/// path segments (1 / (1 + segments)), no query string, and one of
/// `patterns` (`index`, `home`, …) in the host or path.
pub fn url_shape(url: &url::Url, patterns: &[String]) -> f32 {
    let segments = url
        .path_segments()
        .map_or(0, |s| s.filter(|p| !p.is_empty()).count());
    let shallow = 1.0 / (1.0 + segments as f32);
    let no_query = if url.query().is_some() { 0.0 } else { 1.0 };
    let host = url.host_str().unwrap_or("");
    let path = url.path().to_ascii_lowercase();
    let hit = patterns
        .iter()
        .any(|p| !p.is_empty() && (path.contains(p.as_str()) || host.contains(p.as_str())));
    (shallow + no_query + if hit { 1.0 } else { 0.0 }) / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(seq: u64) -> FrontierScores {
        FrontierScores {
            seq,
            ..FrontierScores::default()
        }
    }

    #[test]
    fn bfs_takes_depth_before_discovery_order() {
        let o = OrderSettings::default();
        assert!(o.priority(1, &scores(1_000_000)) < o.priority(2, &scores(0)));
        assert!(o.priority(2, &scores(5)) < o.priority(2, &scores(6)));
    }

    #[test]
    fn dfs_takes_the_deepest_then_the_latest() {
        let o = OrderSettings {
            order: Order::Dfs,
            ..OrderSettings::default()
        };
        assert!(o.priority(3, &scores(1)) < o.priority(2, &scores(9)));
        assert!(o.priority(2, &scores(9)) < o.priority(2, &scores(8)));
    }

    #[test]
    fn shark_ranks_by_potential_then_fifo() {
        let o = OrderSettings {
            order: Order::Shark,
            gamma: 0.5,
            ..OrderSettings::default()
        };
        let a = FrontierScores {
            seq: 7,
            inherited: 0.4,
            anchor: 1.0,
            ..FrontierScores::default()
        };
        let b = FrontierScores {
            seq: 3,
            inherited: 0.4,
            anchor: 0.2,
            ..FrontierScores::default()
        };
        assert!((o.score(&a) - 0.7).abs() < 1e-6);
        assert!(o.priority(9, &a) < o.priority(0, &b));
        assert!(o.priority(0, &scores(1)) < o.priority(0, &scores(2)));
        // Under soft focus, a tunnelled URL waits behind everything else.
        let tunnel = FrontierScores {
            tunnel: true,
            ..a.clone()
        };
        assert!(o.priority(0, &scores(99)) < o.priority(0, &tunnel));
    }

    #[test]
    fn shark_inherits_from_relevant_parents_and_decays_otherwise() {
        assert!((shark_inherited(0.5, 0.8, true, 0.1) - 0.4).abs() < 1e-12);
        assert!((shark_inherited(0.5, 0.05, false, 0.4) - 0.2).abs() < 1e-12);
    }

    #[test]
    fn importance_weighs_backlinks_and_url_shape() {
        let s = FrontierScores {
            backlinks: 1.0,
            url_shape: 0.25,
            ..FrontierScores::default()
        };
        // (0.5·0.5 + 0.5·0.25) / 1 = 0.375
        assert!((importance(0.5, 0.5, &s) - 0.375).abs() < 1e-6);
        assert!((importance(1.0, 0.0, &s) - 0.5).abs() < 1e-6);
        let p = ["index".to_string()];
        let u = |s: &str| url::Url::parse(s).unwrap();
        // No segment, no query, no pattern: (1 + 1 + 0) / 3.
        assert!((url_shape(&u("http://a.org/"), &p) - 2.0 / 3.0).abs() < 1e-6);
        // One segment holding the pattern: (0.5 + 1 + 1) / 3.
        assert!((url_shape(&u("http://a.org/index.html"), &p) - 2.5 / 3.0).abs() < 1e-6);
        // Two segments and a query: (1/3 + 0 + 0) / 3.
        assert!((url_shape(&u("http://a.org/x/y?q=1"), &p) - 1.0 / 9.0).abs() < 1e-6);
    }

    #[test]
    fn a_link_inherits_from_its_page_and_carries_its_weight() {
        let o = OrderSettings::default(); // δ 0.5, α 0.5, β 0.5
        let own = FrontierScores {
            inherited: 0.4,
            backlinks: 1.0,
            url_shape: 0.25,
            ..FrontierScores::default()
        };
        let link = LinkInputs {
            seq: 7,
            anchor: 0.3,
            url_shape: 0.6,
            model: 0.0,
        };
        // A relevant page of similarity 0.8: inherited δ·sim = 0.4; its
        // weight is its importance, 0.375.
        let page = PageScore::new(&o, (0.8, true), true, &own, None, false);
        let s = link_scores(&o, &page, link);
        assert!((s.inherited - 0.4).abs() < 1e-6);
        assert!((s.backlinks - 0.375).abs() < 1e-6);
        assert_eq!(
            (s.seq, s.anchor, s.url_shape, s.tunnel),
            (7, 0.3, 0.6, false)
        );
        // An irrelevant one under soft focus: δ·its own inherited, tunnelled;
        // a stored PageRank of 2 (twice the mean) is its weight.
        let page = PageScore::new(&o, (0.1, false), false, &own, Some(2.0), true);
        let s = link_scores(&o, &page, link);
        assert!((s.inherited - 0.2).abs() < 1e-6);
        assert!((s.backlinks - 2.0).abs() < 1e-6);
        assert!(s.tunnel);
        let seed = seed_scores(0, 0.5, 1.0);
        let top = (seed.inherited, seed.anchor, seed.backlinks, seed.model);
        assert_eq!(top, (1.0, 1.0, 1.0, 1.0));
    }

    #[test]
    fn each_order_needs_only_its_own_inputs() {
        let none = Needs::default();
        assert_eq!(Order::Bfs.needs(), none);
        assert_eq!(Order::Dfs.needs(), none);
        let shark = Needs {
            similarity: true,
            ..none
        };
        assert_eq!(Order::Shark.needs(), shark);
        assert_eq!(
            Order::Learned.needs(),
            Needs {
                model: true,
                ..none
            }
        );
        let mut o = OrderSettings::default();
        assert_eq!(
            o.needs_as(Order::Importance),
            Needs {
                inlinks: true,
                ..none
            }
        );
        o.backlinks = Backlinks::Pagerank;
        let ranked = Needs {
            inlinks: true,
            pagerank: true,
            ..none
        };
        assert_eq!(o.needs_as(Order::Importance), ranked);
        // PageRank is a parameter of importance only.
        assert_eq!(o.needs(), none);
        assert_eq!(o.needs_as(Order::Shark), shark);
    }

    #[test]
    fn fingerprints_name_only_what_keys_depend_on() {
        let bfs = OrderSettings::default();
        let other_gamma = OrderSettings {
            gamma: 0.9,
            ..OrderSettings::default()
        };
        assert_eq!(bfs.fingerprint(), other_gamma.fingerprint());
        let shark = OrderSettings {
            order: Order::Shark,
            ..OrderSettings::default()
        };
        let shark_gamma = OrderSettings {
            order: Order::Shark,
            gamma: 0.9,
            ..OrderSettings::default()
        };
        assert_ne!(shark.fingerprint(), shark_gamma.fingerprint());
    }
}
