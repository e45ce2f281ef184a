//! `rank pagerank`: PageRank over the stored link graph, computed in memory
//! from the `seen` (which URLs are fetched pages) and `inlinks` (every
//! link, target first) rows, and stored with each fetched page (`ranks`)
//! for `pages where pagerank …`, `page URL` and the importance order.
//! `rank hosts` ranks the host graph (see `rank_hosts`).

use std::time::Instant;

use serde_json::json;

use super::{Call, Command, Run, Sub, no_detail, nothing};
use crate::graph::{GraphBuilder, LinkGraph, pagerank};
use crate::model::SeenState;
use crate::model::UrlId;
use crate::schema::tables::{RankRow, Ranks};
use crate::schema::{RankRecord, RankRun, SeenRecord, Versioned};
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "rank",
    usage: "rank pagerank|hosts [top N] [--damping D] [--iterations N] [--tolerance T]",
    summary: "PageRank over the stored link graph (fetched pages and every URL they link to) or the host graph, stored with each page or host; the N best (20)",
    examples: &[
        "rank pagerank",
        "rank pagerank top 50 --damping 0.9",
        "rank hosts top 10",
    ],
    arity: (1, Some(7)),
    // Both store their scores, except on a read-only attach, where they
    // are shown only.
    subs: &[
        Sub {
            words: "pagerank",
            writes: false,
        },
        Sub {
            words: "hosts",
            writes: false,
        },
    ],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

/// Rows read between checks for Ctrl-C and progress redraws.
pub(super) const CHECK_EVERY: u64 = 1 << 16;
/// Scores written per batch.
pub(super) const STORE_BATCH: u32 = 1 << 16;

/// What `meta/rank` says of a ranking.
pub(super) fn rank_run(g: &LinkGraph, r: &pagerank::Ranks, p: &pagerank::Params) -> RankRun {
    RankRun {
        computed_ms: crate::model::now_ms(),
        nodes: g.nodes() as u64,
        links: g.edges() as u64,
        damping: p.damping,
        iterations: r.iterations,
        residual: r.residual,
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let Some((what, options)) = call.args.split_first() else {
        return Err(ShellError::Usage);
    };
    let (top, params) = options_of(options)?;
    match *what {
        "pagerank" => sh.rank_pagerank(top, &params),
        "hosts" => sh.rank_hosts(top, &params),
        _ => Err(ShellError::Usage),
    }
}

/// `top N`, `--damping D` and `--iterations N`, each checked.
fn options_of(options: &[&str]) -> Result<(usize, pagerank::Params)> {
    let usage = COMMAND.usage;
    let mut top = 20usize;
    let mut params = pagerank::Params::default();
    let mut words = options.iter();
    while let Some(w) = words.next() {
        let Some(v) = words.next() else {
            bail!("{w} needs a value; usage: {usage}");
        };
        match *w {
            "top" => {
                top = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("top {v}: expected a whole number ≥ 1"))?
            }
            "--damping" => {
                params.damping = v
                    .parse()
                    .ok()
                    .filter(|d| (0.0..1.0).contains(d))
                    .ok_or_else(|| {
                        format!("--damping {v}: expected a number from 0 to below 1, e.g. 0.85")
                    })?
            }
            "--tolerance" => {
                params.tolerance = v
                    .parse()
                    .ok()
                    .filter(|t: &f64| *t > 0.0 && t.is_finite())
                    .ok_or_else(|| {
                        format!("--tolerance {v}: expected a number above 0, e.g. 1e-9 (the total change at which to stop)")
                    })?
            }
            "--iterations" => {
                params.max_iterations = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--iterations {v}: expected a whole number ≥ 1"))?
            }
            _ => bail!("{w}: unknown option; usage: {usage}"),
        }
    }
    Ok((top, params))
}

impl Ctx {
    fn rank_pagerank(&mut self, top: usize, params: &pagerank::Params) -> Result<Reply> {
        let started = Instant::now();
        let g = self.read_graph()?;
        let read = started.elapsed();
        if g.nodes() == 0 {
            return Ok(Reply::record(
                "no pages stored yet: nothing to rank",
                json!({"urls": 0, "pages": 0, "links": 0, "top": []}),
            ));
        }
        let ranking = Instant::now();
        let ranks = pagerank::pagerank(&g, params, |i, residual| {
            self.progress(&format!("rank: iteration {i}, change {residual:.2e}"));
            !self.interrupted()
        });
        self.progress_done();
        let ranks = ranks.ok_or("rank: interrupted; nothing was ranked")?;
        let ranked = ranking.elapsed();
        let stored = self.store_ranks(&g, &ranks, params)?;

        let best = pagerank::top(&ranks.scores, top);
        let urls = self.node_urls(&g, &best)?;
        let nodes = g.nodes() as f64;
        let converged = ranks.residual < params.tolerance;
        let mut rows = Vec::new();
        let mut listed = Vec::new();
        for (i, (node, url)) in best.iter().zip(urls).enumerate() {
            let score = ranks.scores[*node as usize];
            let out = g.is_page(*node).then(|| g.out_degree(*node));
            rows.push(vec![
                (i + 1).to_string(),
                format!("{score:.4e}"),
                format!("{:.1}", score * nodes),
                table::thousands(u64::from(g.in_degree(*node))),
                out.map_or("-".into(), |o| table::thousands(u64::from(o))),
                url.clone(),
            ]);
            listed.push(json!({"rank": i + 1, "url": url, "score": score,
                "inlinks": g.in_degree(*node), "outlinks": out, "fetched": g.is_page(*node)}));
        }
        let mb = g.heap_bytes() as f64 / 1e6;
        let mut head = format!(
            "PageRank of {} URLs ({} fetched pages) over {} links, damping {}: {} iterations, change {:.1e}{}; read {:.2} s, ranked {:.2} s, graph {mb:.0} MB in memory",
            table::thousands(g.nodes() as u64),
            table::thousands(g.pages() as u64),
            table::thousands(g.edges() as u64),
            params.damping,
            ranks.iterations,
            ranks.residual,
            if converged {
                ""
            } else {
                " (not converged: raise --iterations)"
            },
            read.as_secs_f64(),
            ranked.as_secs_f64(),
        );
        head.push_str(&format!("; {stored}\n"));
        let json = json!({
            "urls": g.nodes(), "pages": g.pages(), "links": g.edges(),
            "damping": params.damping, "iterations": ranks.iterations,
            "change": ranks.residual, "converged": converged,
            "read_secs": read.as_secs_f64(), "rank_secs": ranked.as_secs_f64(),
            "graph_bytes": g.heap_bytes(), "top": listed, "stored": stored,
        });
        let header = ["rank", "score", "x mean", "in", "out", "url"];
        Ok(Reply::record(
            head + &table::render(&header, &rows, self.sink.width),
            json,
        ))
    }

    /// Writes each fetched page's score to `ranks` and the run to
    /// `meta/rank`; says what became of them.
    fn store_ranks(
        &mut self,
        g: &LinkGraph,
        ranks: &pagerank::Ranks,
        params: &pagerank::Params,
    ) -> Result<String> {
        if self.store.is_read_only() {
            return Ok("attached read-only: scores not stored".into());
        }
        let store = self.store.clone();
        let mut b = store.batch();
        // Every URL of the graph: the queued ones too (for the importance
        // order's IB under `importance.backlinks pagerank`).
        for node in 0..g.nodes() as u32 {
            let rec = RankRecord {
                pagerank: ranks.scores[node as usize],
            };
            b.put_row::<Ranks>(&g.id(node), &rec);
            if (node + 1).is_multiple_of(STORE_BATCH) {
                std::mem::replace(&mut b, store.batch()).write()?;
                self.progress(&format!(
                    "rank: storing scores: {} of {}",
                    table::thousands(u64::from(node) + 1),
                    table::thousands(g.nodes() as u64)
                ));
            }
        }
        b.put_meta::<RankRow>(&rank_run(g, ranks, params));
        b.write()?;
        self.progress_done();
        // A crawl running here re-keys what follows PageRank.
        self.tell_crawl();
        Ok(format!(
            "stored for {} URLs",
            table::thousands(g.nodes() as u64)
        ))
    }

    /// The graph of fetched pages and link targets, from `seen` and `inlinks`.
    fn read_graph(&mut self) -> Result<LinkGraph> {
        let store = self.store.clone();
        let mut pages = Vec::new();
        let mut cur = store.seen_cursor();
        let mut n = 0u64;
        while let Some((k, v)) = cur.next_row()? {
            n += 1;
            if n.is_multiple_of(CHECK_EVERY) {
                self.check(&format!("rank: reading URLs: {}", table::thousands(n)))?;
            }
            let rec = SeenRecord::decode(v).map_err(|e| format!("seen row: {e}"))?;
            if let (SeenState::Fetched { .. }, Some(id)) = (rec.state, UrlId::from_slice(k)) {
                pages.push(id);
            }
        }
        // In-link rows hold a window's links to a target each: the graph
        // is sized by the links the counters count.
        let expected = store.counters()?.links as usize;
        let mut b = GraphBuilder::new(pages, expected);
        let mut all = store.all_inlinks()?;
        let (mut n, mut next_check) = (0u64, CHECK_EVERY);
        while let Some((dst, sources)) = all.next_target()? {
            n += sources.len() as u64;
            if n >= next_check {
                next_check = n + CHECK_EVERY;
                self.check(&format!(
                    "rank: reading links: {} of about {}",
                    table::thousands(n),
                    table::thousands(expected as u64)
                ))?;
            }
            for src in sources {
                b.add_edge(dst, src);
            }
        }
        let g = b.finish();
        if g.unknown_sources > 0 {
            self.say(&format!(
                "note: {} links from URLs with no fetched page left out",
                table::thousands(g.unknown_sources)
            ));
        }
        Ok(g)
    }

    /// Progress, and an error if Ctrl-C was pressed.
    pub(super) fn check(&mut self, line: &str) -> Result<()> {
        self.progress(line);
        if self.interrupted() {
            self.progress_done();
            return Err("rank: interrupted; nothing was ranked".into());
        }
        Ok(())
    }

    /// URLs of graph nodes. A target that was never queued has no `urls`
    /// row; its URL is in the link row of a page linking to it.
    fn node_urls(&self, g: &LinkGraph, nodes: &[u32]) -> Result<Vec<String>> {
        let ids: Vec<UrlId> = nodes.iter().map(|n| g.id(*n)).collect();
        let urls = self.store.urls_many(&ids)?;
        let mut out = Vec::with_capacity(ids.len());
        // One reader for every node without a URL row (each new one reads
        // the crawl window's waiting pages).
        let mut inlinks = None;
        for (id, url) in ids.iter().zip(urls) {
            let url = match url {
                Some(u) => u,
                None => match &mut inlinks {
                    Some(r) => r,
                    None => inlinks.insert(self.store.inlinks()?),
                }
                .first_link(&self.store, *id)?
                .map(|(_, l)| l.dst_url)
                .filter(|u| !u.is_empty())
                .unwrap_or_else(|| id.to_string()),
            };
            out.push(url);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn ranks_the_demo_web_and_checks_options() {
        let mut t = TestShell::crawled(2);
        let out = t.ok("rank pagerank top 3");
        assert!(out.starts_with("PageRank of "), "{out}");
        assert_eq!(out.lines().count(), 5, "{out}");
        assert!(
            t.err("rank pagerank --damping 2")
                .contains("--damping 2: expected")
        );
        assert!(t.err("rank hits").starts_with("usage: rank pagerank"));
        assert!(out.lines().next().unwrap().contains("stored for"), "{out}");
    }
}
