//! `rank pagerank`: PageRank over the stored link graph, computed in memory
//! on demand from the `seen` (which URLs are fetched pages) and `inlinks`
//! (every link, target first) rows. Nothing is written.

use std::time::Instant;

use serde_json::json;

use super::{Call, Command, Sub, no_detail, nothing};
use crate::graph::{GraphBuilder, LinkGraph, pagerank};
use crate::model::UrlId;
use crate::schema::{CF_INLINKS, InLinkKey, SeenRecord, SeenState, Versioned};
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Shell, table};

pub const COMMAND: Command = Command {
    name: "rank",
    usage: "rank pagerank [top N] [--damping D] [--iterations N]",
    summary: "PageRank over the stored link graph (fetched pages and every URL they link to), computed in memory; the N best (20)",
    examples: &["rank pagerank", "rank pagerank top 50 --damping 0.9"],
    arity: (1, Some(7)),
    subs: &[Sub {
        words: "pagerank",
        writes: false,
    }],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run,
};

/// Rows read between checks for Ctrl-C and progress redraws.
const CHECK_EVERY: u64 = 1 << 16;

fn run(sh: &mut Shell, call: &Call) -> Result<Reply> {
    let Some((&"pagerank", options)) = call.args.split_first() else {
        return Err(ShellError::Usage);
    };
    let (top, params) = options_of(options)?;
    sh.rank_pagerank(top, &params)
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

impl Shell {
    fn rank_pagerank(&mut self, top: usize, params: &pagerank::Params) -> Result<Reply> {
        let started = Instant::now();
        let g = self.read_graph()?;
        let read = started.elapsed();
        if g.nodes() == 0 {
            return Ok(Reply::with(
                "no pages stored yet: nothing to rank".into(),
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
        head.push('\n');
        let json = json!({
            "urls": g.nodes(), "pages": g.pages(), "links": g.edges(),
            "damping": params.damping, "iterations": ranks.iterations,
            "change": ranks.residual, "converged": converged,
            "read_secs": read.as_secs_f64(), "rank_secs": ranked.as_secs_f64(),
            "graph_bytes": g.heap_bytes(), "top": listed,
        });
        let header = ["rank", "score", "x mean", "in", "out", "url"];
        Ok(Reply::with(
            head + &table::render(&header, &rows, self.width),
            json,
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
        let expected = store.estimated_rows(CF_INLINKS) as usize;
        let mut b = GraphBuilder::new(pages, expected);
        let mut cur = store.inlinks_cursor();
        let mut n = 0u64;
        while let Some((k, _)) = cur.next_row()? {
            n += 1;
            if n.is_multiple_of(CHECK_EVERY) {
                self.check(&format!(
                    "rank: reading links: {} of about {}",
                    table::thousands(n),
                    table::thousands(expected as u64)
                ))?;
            }
            if let Some(key) = InLinkKey::from_key(k) {
                b.add_edge(key.dst, key.src);
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
    fn check(&mut self, line: &str) -> Result<()> {
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
        for (id, url) in ids.iter().zip(urls) {
            let url = match url {
                Some(u) => u,
                None => self
                    .store
                    .first_link_to(*id)?
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
    }
}
