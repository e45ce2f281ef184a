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

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

pub use graph::{ReplayGraph, ReplayLink};

use crate::frontier::order::{importance, shark_inherited};
use crate::frontier::{Focus, OrderSettings};
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
/// `budget` pages. Deterministic: ties go by discovery order as in the
/// frontier.
pub fn replay(g: &ReplayGraph, order: &OrderSettings, focus: Focus, budget: usize) -> Replay {
    let mut nodes = vec![Node::default(); g.len()];
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
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
        let scores = FrontierScores {
            seq: next_seq,
            inherited: 1.0,
            anchor: 1.0,
            url_shape: g.url_shape(s),
            backlinks: 1.0,
            tunnel: false,
        };
        next_seq += 1;
        queue(&mut nodes, &mut heap, order, s, 0, scores);
    }
    let (mut relevant, mut judged, mut targets) = (0u32, 0u32, 0u32);
    while out.taken.len() < budget {
        let Some(Reverse((priority, n))) = heap.pop() else {
            break;
        };
        let node = &nodes[n as usize];
        if node.taken || node.priority != priority {
            continue;
        }
        nodes[n as usize].taken = true;
        let page = g.page(n);
        relevant += u32::from(page.relevant);
        judged += u32::from(page.judged);
        targets += u32::from(page.target);
        out.taken.push(n);
        out.relevant_so_far.push(relevant);
        out.judged_so_far.push(judged);
        out.targets_so_far.push(targets);
        let tunnel = !page.relevant;
        if tunnel && focus == Focus::Hard {
            continue;
        }
        let own = nodes[n as usize].scores.clone();
        let depth = nodes[n as usize].depth.saturating_add(1);
        let inherited = shark_inherited(
            order.delta,
            page.sim,
            page.relevant,
            f64::from(own.inherited),
        ) as f32;
        let weight = importance(order.alpha, order.beta, &own) as f32;
        for link in g.links(n) {
            let m = link.target as usize;
            if nodes[m].taken {
                continue;
            }
            if nodes[m].queued {
                // A new in-link: IB rises (the importance order's boost).
                let mut s = nodes[m].scores.clone();
                s.backlinks += weight;
                let d = nodes[m].depth;
                queue(&mut nodes, &mut heap, order, link.target, d, s);
                continue;
            }
            let scores = FrontierScores {
                seq: next_seq,
                inherited,
                anchor: link.anchor,
                url_shape: g.url_shape(link.target),
                backlinks: weight,
                tunnel,
            };
            next_seq += 1;
            queue(&mut nodes, &mut heap, order, link.target, depth, scores);
        }
    }
    out
}

/// Puts node `n` in the heap at the priority its scores give (again, if
/// they changed: the older entry goes stale).
fn queue(
    nodes: &mut [Node],
    heap: &mut BinaryHeap<Reverse<(u64, u32)>>,
    order: &OrderSettings,
    n: u32,
    depth: u16,
    scores: FrontierScores,
) {
    let priority = order.priority(depth, &scores);
    let node = &mut nodes[n as usize];
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
    heap.push(Reverse((priority, n)));
}
