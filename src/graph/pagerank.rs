//! PageRank by power iteration (Page, Brin et al. 1998): the backlink
//! importance of SEEDS.md 002 and the site ranking of 003's seed library. A node without
//! out-links (an unfetched target, a page with no links) spreads its score
//! evenly over all nodes, so scores stay a probability distribution.

use super::LinkGraph;

#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Probability of following a link rather than jumping anywhere.
    pub damping: f64,
    /// Stop when the scores move less than this in total (L1).
    pub tolerance: f64,
    pub max_iterations: u32,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            damping: 0.85,
            tolerance: 1e-6,
            max_iterations: 100,
        }
    }
}

pub struct Ranks {
    /// One score a node; they sum to 1.
    pub scores: Vec<f64>,
    pub iterations: u32,
    /// L1 change of the last iteration.
    pub residual: f64,
}

/// Iterates until the change falls under the tolerance or the iteration
/// cap is reached. `keep_going(iteration, residual)` is asked after each
/// iteration; `false` abandons the run (None).
pub fn pagerank(
    g: &LinkGraph,
    p: &Params,
    mut keep_going: impl FnMut(u32, f64) -> bool,
) -> Option<Ranks> {
    let n = g.nodes();
    let nf = n as f64;
    let d = p.damping;
    let mut rank = vec![1.0 / nf; n];
    // rank / out-degree, read by the targets' sums.
    let mut share = vec![0.0f64; n];
    let mut residual = 0.0;
    let mut iterations = 0;
    while iterations < p.max_iterations && n > 0 {
        iterations += 1;
        let mut dangling = 0.0;
        for (v, (s, r)) in share.iter_mut().zip(&rank).enumerate() {
            match g.out_degree[v] {
                0 => {
                    dangling += r;
                    *s = 0.0;
                }
                k => *s = r / f64::from(k),
            }
        }
        let base = (1.0 - d) / nf + d * dangling / nf;
        // In place: `share` holds everything the sums need from the old scores.
        residual = 0.0;
        for (t, sources) in g.in_edges() {
            let sum: f64 = sources.iter().map(|&u| share[u as usize]).sum();
            let new = base + d * sum;
            residual += (new - rank[t as usize]).abs();
            rank[t as usize] = new;
        }
        for (r, _) in rank.iter_mut().zip(&g.in_degree).filter(|(_, k)| **k == 0) {
            residual += (base - *r).abs();
            *r = base;
        }
        if residual < p.tolerance {
            break;
        }
        if !keep_going(iterations, residual) {
            return None;
        }
    }
    Some(Ranks {
        scores: rank,
        iterations,
        residual,
    })
}

/// The `k` highest-scoring nodes, best first (ties: lower node first).
pub fn top(scores: &[f64], k: usize) -> Vec<u32> {
    use std::cmp::{Ordering, Reverse};
    use std::collections::BinaryHeap;

    #[derive(PartialEq)]
    struct Entry(f64, Reverse<u32>);
    impl Eq for Entry {}
    impl PartialOrd for Entry {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Entry {
        fn cmp(&self, o: &Self) -> Ordering {
            self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
        }
    }

    // A min-heap of the best k so far.
    let mut heap: BinaryHeap<Reverse<Entry>> = BinaryHeap::with_capacity(k + 1);
    for (i, s) in scores.iter().enumerate() {
        heap.push(Reverse(Entry(*s, Reverse(i as u32))));
        if heap.len() > k {
            heap.pop();
        }
    }
    let mut best: Vec<Entry> = heap.into_iter().map(|Reverse(e)| e).collect();
    best.sort_by(|a, b| b.cmp(a));
    best.into_iter().map(|Entry(_, Reverse(i))| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::GraphBuilder;
    use crate::model::UrlId;

    /// A graph from (src, dst) pairs over pages 1..=n.
    fn graph(n: u128, edges: &[(u128, u128)]) -> LinkGraph {
        let mut sorted: Vec<(u128, u128)> = edges.iter().map(|&(s, d)| (d, s)).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut b = GraphBuilder::new((1..=n).map(UrlId).collect(), 0);
        for (d, s) in sorted {
            b.add_edge(UrlId(d), UrlId(s));
        }
        b.finish()
    }

    fn run(g: &LinkGraph, p: Params) -> Vec<f64> {
        pagerank(g, &p, |_, _| true).unwrap().scores
    }

    #[test]
    fn a_cycle_ranks_every_page_alike() {
        let g = graph(3, &[(1, 2), (2, 3), (3, 1)]);
        for s in run(&g, Params::default()) {
            assert!((s - 1.0 / 3.0).abs() < 1e-9, "{s}");
        }
    }

    #[test]
    fn two_pages_match_the_closed_form() {
        // a -> b, b dangling: r_a = 0.075 + 0.425 r_b and r_a + r_b = 1.
        let g = graph(2, &[(1, 2)]);
        let p = Params {
            tolerance: 1e-12,
            ..Params::default()
        };
        let s = run(&g, p);
        let ra = 0.5 / 1.425;
        assert!(
            (s[0] - ra).abs() < 1e-9 && (s[1] - (1.0 - ra)).abs() < 1e-9,
            "{s:?}"
        );
    }

    #[test]
    fn agrees_with_a_dense_power_iteration() {
        // A pseudo-random graph of 60 pages, some without out-links.
        let n = 60usize;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut edges = Vec::new();
        for s in 1..=n as u128 {
            for _ in 0..(s % 7) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let d = 1 + (x % n as u64) as u128;
                if d != s {
                    edges.push((s, d));
                }
            }
        }
        edges.sort_unstable();
        edges.dedup();
        let p = Params {
            tolerance: 1e-13,
            max_iterations: 1000,
            ..Params::default()
        };
        let got = run(&graph(n as u128, &edges), p);

        let mut out = vec![Vec::new(); n];
        for &(s, d) in &edges {
            out[s as usize - 1].push(d as usize - 1);
        }
        let mut r = vec![1.0 / n as f64; n];
        for _ in 0..1000 {
            let mut next = vec![0.15 / n as f64; n];
            for (u, targets) in out.iter().enumerate() {
                if targets.is_empty() {
                    next.iter_mut().for_each(|v| *v += 0.85 * r[u] / n as f64);
                } else {
                    for &t in targets {
                        next[t] += 0.85 * r[u] / targets.len() as f64;
                    }
                }
            }
            r = next;
        }
        for (a, b) in got.iter().zip(&r) {
            assert!((a - b).abs() < 1e-10, "{a} vs {b}");
        }
        assert!((got.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn stops_when_asked_and_at_the_cap() {
        let g = graph(3, &[(1, 2), (2, 3)]);
        assert!(pagerank(&g, &Params::default(), |i, _| i < 2).is_none());
        let p = Params {
            max_iterations: 3,
            tolerance: 0.0,
            ..Params::default()
        };
        assert_eq!(pagerank(&g, &p, |_, _| true).unwrap().iterations, 3);
        assert!(
            pagerank(&graph(0, &[]), &p, |_, _| true)
                .unwrap()
                .scores
                .is_empty()
        );
    }

    #[test]
    fn top_is_best_first_with_ties_by_node() {
        assert_eq!(top(&[0.1, 0.4, 0.2, 0.4, 0.0], 3), vec![1, 3, 2]);
        assert_eq!(top(&[0.5], 10), vec![0]);
        assert!(top(&[0.5], 0).is_empty());
    }
}
