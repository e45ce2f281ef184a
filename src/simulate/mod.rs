//! Replaying a crawl order over a stored crawl (`simulate`): the offline
//! evaluation of focused-crawling research, on the user's own crawl. The
//! stored link graph and page verdicts stand in for the web: the replay
//! "fetches" only pages the stored crawl fetched, follows the links it
//! stored (with their link verdicts), ranks what it finds by the same
//! priorities the frontier uses (`frontier::order`), and records which of
//! the pages it takes are relevant (the page filters kept them) and which
//! are targets. Politeness, time and the network are left out: the replay
//! is the order alone.

mod graph;
mod learned;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

pub use graph::{ReplayGraph, ReplayLink};
use learned::Learner;
pub use learned::StoredFeatures;

use crate::frontier::order::{LinkInputs, link_scores, seed_scores};
use crate::frontier::{Focus, OrderSettings, PageScore};
use crate::schema::FrontierScores;

/// What one replay took, in order.
pub struct Replay {
    /// Node of each page taken, in order.
    pub taken: Vec<u32>,
    /// Relevant pages among the first i + 1 taken.
    pub relevant_so_far: Vec<u32>,
    /// Pages the page filters judged among the first i + 1 taken (the
    /// harvest rate's denominator, as in a live crawl).
    pub judged_so_far: Vec<u32>,
    /// Targets among the first i + 1 taken.
    pub targets_so_far: Vec<u32>,
}

impl Replay {
    /// Pages taken before `share` of `all` relevant pages were reached.
    pub fn pages_to_reach(&self, share: f64, all: u64) -> Option<usize> {
        let need = (share * all as f64).ceil().max(1.0) as u32;
        self.relevant_so_far
            .iter()
            .position(|&r| r >= need)
            .map(|i| i + 1)
    }

    /// The harvest rate over the first `pages` taken (fewer if the replay
    /// ran out): relevant ÷ judged.
    pub fn harvest_at(&self, pages: usize) -> Option<f64> {
        let n = pages.min(self.taken.len()).checked_sub(1)?;
        let judged = self.judged_so_far[n];
        (judged > 0).then(|| f64::from(self.relevant_so_far[n]) / f64::from(judged))
    }
}

/// One queued node's state in the replay.
#[derive(Clone, Default)]
struct Node {
    queued: bool,
    taken: bool,
    depth: u16,
    /// Its current priority (a heap entry with another is stale).
    priority: u64,
    scores: FrontierScores,
}

/// Replays `order` under `focus` over `g` from its seeds, taking at most
/// `budget` pages; the learned order reads link features from `source`.
/// Deterministic: ties go by discovery order as in the frontier.
pub fn replay(
    g: &ReplayGraph,
    order: &OrderSettings,
    focus: Focus,
    budget: usize,
    source: &mut StoredFeatures<'_>,
) -> Replay {
    let mut r = Replayer {
        nodes: vec![Node::default(); g.len()],
        heap: BinaryHeap::new(),
        order,
        learner: order.needs().model.then(|| Learner::new(g, source)),
    };
    let mut next_seq = 0u64;
    let mut out = Replay {
        taken: Vec::new(),
        relevant_so_far: Vec::new(),
        judged_so_far: Vec::new(),
        targets_so_far: Vec::new(),
    };
    let mut seeds = HashSet::new();
    for &s in g.seeds() {
        if !seeds.insert(s) {
            continue;
        }
        let model = r.learner.as_mut().map_or(0.0, |l| l.queue_seed(g, s));
        let scores = seed_scores(next_seq, g.url_shape(s), model);
        next_seq += 1;
        r.queue(s, 0, scores);
    }
    let (mut relevant, mut judged, mut targets) = (0u32, 0u32, 0u32);
    while out.taken.len() < budget {
        let Some(Reverse((priority, n))) = r.heap.pop() else {
            break;
        };
        let node = &r.nodes[n as usize];
        if node.taken || node.priority != priority {
            continue;
        }
        r.nodes[n as usize].taken = true;
        let page = g.page(n);
        relevant += u32::from(page.relevant);
        judged += u32::from(page.judged);
        targets += u32::from(page.target);
        out.taken.push(n);
        out.relevant_so_far.push(relevant);
        out.judged_so_far.push(judged);
        out.targets_so_far.push(targets);
        if let Some(l) = &mut r.learner
            && l.take(n, page.judged, page.relevant)
        {
            r.rescore_all();
        }
        let tunnel = !page.relevant;
        if tunnel && focus == Focus::Hard {
            continue;
        }
        r.follow(g, n, tunnel, &mut next_seq);
    }
    out
}

/// A replay's queue: every node's state and the heap of priorities.
struct Replayer<'a, 's> {
    nodes: Vec<Node>,
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    order: &'a OrderSettings,
    learner: Option<Learner<'a, 's>>,
}

impl Replayer<'_, '_> {
    /// Queues the links of taken node `n` (its links `tunnel` under soft
    /// focus when it is irrelevant); a link to a queued node raises its IB.
    fn follow(&mut self, g: &ReplayGraph, n: u32, tunnel: bool, next_seq: &mut u64) {
        let page = g.page(n);
        let order = self.order;
        let own = self.nodes[n as usize].scores.clone();
        let depth = self.nodes[n as usize].depth.saturating_add(1);
        // Kept (by the page filters) and relevant are one verdict here.
        let sim = (page.sim, page.relevant);
        let parent = PageScore::new(order, sim, page.relevant, &own, None, tunnel);
        let weight = parent.weight;
        let nodes = &self.nodes;
        let new = |m: u32| !nodes[m as usize].queued && !nodes[m as usize].taken;
        let mut features = self.learner.as_mut().map(|l| l.links_of(g, n, &new));
        for (i, link) in g.links(n).iter().enumerate() {
            let m = link.target as usize;
            if self.nodes[m].taken {
                continue;
            }
            if self.nodes[m].queued {
                // A new in-link: IB rises (the importance order's boost).
                let mut s = self.nodes[m].scores.clone();
                s.backlinks += weight;
                let d = self.nodes[m].depth;
                self.queue(link.target, d, s);
                continue;
            }
            let model = match (&mut self.learner, &mut features) {
                (Some(l), Some(f)) => {
                    let f = f[i].take().unwrap_or_default();
                    l.queue(link.target, depth, f)
                }
                _ => 0.0,
            };
            let inputs = LinkInputs {
                seq: *next_seq,
                anchor: link.anchor,
                url_shape: g.url_shape(link.target),
                model,
            };
            let scores = link_scores(order, &parent, inputs);
            *next_seq += 1;
            self.queue(link.target, depth, scores);
        }
    }

    /// The learned model changed epoch: every queued node is scored again
    /// and the heap rebuilt.
    fn rescore_all(&mut self) {
        let Some(l) = &self.learner else { return };
        self.heap.clear();
        for (n, node) in self.nodes.iter_mut().enumerate() {
            if node.queued && !node.taken {
                node.scores.model = l.rescore(n as u32, node.depth);
                node.priority = self.order.priority(node.depth, &node.scores);
                self.heap.push(Reverse((node.priority, n as u32)));
            }
        }
    }

    /// Puts node `n` in the heap at the priority its scores give (again,
    /// if they changed: the older entry goes stale).
    fn queue(&mut self, n: u32, depth: u16, scores: FrontierScores) {
        let priority = self.order.priority(depth, &scores);
        let node = &mut self.nodes[n as usize];
        if node.queued && node.priority == priority {
            node.scores = scores;
            return;
        }
        *node = Node {
            queued: true,
            taken: false,
            depth,
            priority,
            scores,
        };
        self.heap.push(Reverse((priority, n)));
    }
}
