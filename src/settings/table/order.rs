//! `crawl.order`, `crawl.focus`, `crawl.stop_when`, `shark.*` and
//! `importance.*`: what the crawl fetches next (002) and when it stops.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[
    key!(
        "crawl.order",
        named::<Order>(),
        "what to fetch next (002): bfs, dfs (deepest first), shark (Shark-search), importance (α·IB + β·IL), learned (a link model trained on the page verdicts; learned show); a change re-keys each host's queue when it is next scheduled",
        |s| s.order.order,
        |s, order| s.order.order = order,
        run_as("crawl.order", |s| s.order.fingerprint())
    ),
    key!(
        "crawl.stop_when",
        StopRules,
        "stop the crawl when it stops finding relevant pages: harvest<X/N (harvest rate over the last N pages below X), no-relevant/N, saturation<X/N (share of new terms per page below X over N pages); the rule that fired is kept in the run",
        |s| s.stop_when.clone(),
        |s, rules| s.stop_when = rules,
        run
    ),
    key!(
        "crawl.focus",
        named::<Focus>(),
        "hard: links of pages the page filters drop are not followed (001, 002); soft: they are queued behind every other URL, so the crawl can tunnel through off-topic pages",
        |s| s.order.focus,
        |s, focus| s.order.focus = focus
    ),
    key!(
        "shark.delta",
        Float {
            min: 0.0,
            max: 0.99
        },
        "δ: decay of the score a link inherits from its page (Shark-search)",
        |s| s.order.delta,
        |s, f| s.order.delta = f
    ),
    key!(
        "shark.gamma",
        Float { min: 0.0, max: 1.0 },
        "γ: weight of the inherited score against the anchor-context score (Shark-search)",
        |s| s.order.gamma,
        |s, f| s.order.gamma = f
    ),
    key!(
        "importance.alpha",
        Float { min: 0.0, max: 1.0 },
        "α: weight of IB, the in-links weighted by their pages' scores (importance)",
        |s| s.order.alpha,
        |s, f| s.order.alpha = f
    ),
    key!(
        "importance.beta",
        Float { min: 0.0, max: 1.0 },
        "β: weight of IL, the URL's shape: few path segments, no query, a pattern word (importance)",
        |s| s.order.beta,
        |s, f| s.order.beta = f
    ),
    key!(
        "importance.patterns",
        Words,
        "words that make a URL important when in its host or path (IL)",
        |s| s.order.patterns.clone(),
        |s, l| s.order.patterns = l
    ),
    key!(
        "importance.backlinks",
        named::<Backlinks>(),
        "what an in-link weighs in IB: inlinks (the linking page's importance) or pagerank (its PageRank from the last rank pagerank, relative to the mean)",
        |s| s.order.backlinks,
        |s, b| s.order.backlinks = b
    ),
];
