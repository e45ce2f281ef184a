//! `rank hosts`: PageRank over the host graph — one node per host (every
//! row of `hosts`, and every host a stored link points to), an edge from
//! host A to host B when some page of A links to some page of B (counted
//! once, links within a host left out) — stored in `host_ranks`. The
//! graph is read from the `links` rows, which carry each target's URL.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde_json::json;

use super::rank::{STORE_BATCH, rank_run};
use crate::graph::{GraphBuilder, LinkGraph, pagerank};
use crate::model::{HostId, UrlId};
use crate::schema::HostRankRecord;
use crate::schema::tables::{HostRankRow, HostRanks, Hosts};
use crate::shell::error::Result;
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

/// Hosts by their key, `scheme://host[:port]`, numbered as met.
#[derive(Default)]
struct HostNames {
    index: HashMap<String, u32>,
    names: Vec<String>,
}

impl HostNames {
    fn intern(&mut self, origin: &str) -> u32 {
        if let Some(&i) = self.index.get(origin) {
            return i;
        }
        let i = self.names.len() as u32;
        self.index.insert(origin.to_string(), i);
        self.names.push(origin.to_string());
        i
    }
}

/// A normalized URL's host key: the part before its path, without
/// userinfo (`http://u@h/` is a page of `http://h`).
pub(super) fn origin_of(url: &str) -> Option<Cow<'_, str>> {
    let after = url.find("://")? + 3;
    let end = url[after..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |e| after + e);
    Some(match url[after..end].rfind('@') {
        Some(at) => format!("{}{}", &url[..after], &url[after + at + 1..end]).into(),
        None => url[..end].into(),
    })
}

/// Pages whose source URL is looked up at once.
const RESOLVE: usize = 4096;

/// The host graph's edges as they are read: pages (by id) with the hosts
/// they link to, resolved to their own host a batch at a time.
struct HostEdges {
    hosts: HostNames,
    edges: HashSet<(u32, u32)>,
    pending: Vec<(UrlId, Vec<u32>)>,
    unreadable: u64,
}

impl HostEdges {
    fn resolve(&mut self, sh: &Ctx) -> Result<()> {
        let ids: Vec<UrlId> = self.pending.iter().map(|(id, _)| *id).collect();
        let urls = sh.store.urls_many(&ids)?;
        for ((_, targets), url) in self.pending.drain(..).zip(urls) {
            let Some(src) = url.as_deref().and_then(origin_of) else {
                self.unreadable += 1;
                continue;
            };
            let s = self.hosts.intern(&src);
            self.edges
                .extend(targets.into_iter().filter(|&d| d != s).map(|d| (s, d)));
        }
        Ok(())
    }
}

impl Ctx {
    pub(super) fn rank_hosts(&mut self, top: usize, params: &pagerank::Params) -> Result<Reply> {
        let started = Instant::now();
        let (g, names, unreadable) = self.read_host_graph()?;
        if g.nodes() == 0 {
            return Ok(Reply::record(
                "no hosts in the db yet: nothing to rank",
                json!({"hosts": 0, "links": 0, "top": []}),
            ));
        }
        let read = started.elapsed();
        let ranks = pagerank::pagerank(&g, params, |i, residual| {
            self.progress(&format!("rank hosts: iteration {i}, change {residual:.2e}"));
            !self.interrupted()
        });
        self.progress_done();
        let ranks = ranks.ok_or("rank hosts: interrupted; nothing was ranked")?;
        // Node i is host i: the graph's ids are the host numbers.
        let name = |node: u32| &names[g.id(node).0 as usize];
        let stored = self.store_host_ranks(&g, &ranks, params, &name)?;
        let nodes = g.nodes() as f64;
        let mut rows = Vec::new();
        let mut listed = Vec::new();
        for (i, node) in pagerank::top(&ranks.scores, top).into_iter().enumerate() {
            let score = ranks.scores[node as usize];
            rows.push(vec![
                (i + 1).to_string(),
                format!("{score:.4e}"),
                format!("{:.1}", score * nodes),
                table::thousands(u64::from(g.in_degree(node))),
                table::thousands(u64::from(g.out_degree(node))),
                name(node).clone(),
            ]);
            listed.push(json!({"rank": i + 1, "host": name(node), "score": score,
                "linked_from": g.in_degree(node), "links_to": g.out_degree(node)}));
        }
        let skipped = if unreadable > 0 {
            format!("; {unreadable} pages' links could not be read and were left out")
        } else {
            String::new()
        };
        let head = format!(
            "host rank of {} hosts over {} host-to-host links, damping {}: {} iterations, change {:.1e}; {:.2} s; {stored}{skipped}\n",
            table::thousands(g.nodes() as u64),
            table::thousands(g.edges() as u64),
            params.damping,
            ranks.iterations,
            ranks.residual,
            started.elapsed().as_secs_f64(),
        );
        let json = json!({"hosts": g.nodes(), "links": g.edges(), "damping": params.damping,
            "iterations": ranks.iterations, "change": ranks.residual,
            "read_secs": read.as_secs_f64(), "stored": stored, "top": listed});
        let header = ["rank", "score", "x mean", "from", "to", "host"];
        Ok(Reply::record(
            head + &table::render(&header, &rows, self.sink.width),
            json,
        ))
    }

    /// The host graph, the hosts' keys by node, and the pages whose links
    /// could not be read.
    fn read_host_graph(&mut self) -> Result<(LinkGraph, Vec<String>, u64)> {
        let store = self.store.clone();
        let mut e = HostEdges {
            hosts: HostNames::default(),
            edges: HashSet::new(),
            pending: Vec::new(),
            unreadable: 0,
        };
        let mut rows = store.rows::<Hosts>(&[]);
        for row in rows.by_ref() {
            e.hosts.intern(&row?.1.origin);
        }
        e.unreadable += rows.unreadable();
        let mut pages = 0u64;
        let mut failed: Option<crate::shell::error::ShellError> = None;
        store.each_page_links(|src, links| {
            if failed.is_some() {
                return;
            }
            pages += 1;
            let Ok(links) = links else {
                e.unreadable += 1;
                return;
            };
            let mut targets: Vec<u32> = links
                .iter()
                .filter_map(|(_, l)| origin_of(l.dst_url))
                .map(|o| e.hosts.intern(&o))
                .collect();
            targets.sort_unstable();
            targets.dedup();
            e.pending.push((src, targets));
            if e.pending.len() >= RESOLVE {
                let step = e.resolve(self).and_then(|_| {
                    self.check(&format!(
                        "rank hosts: reading links of {} pages",
                        table::thousands(pages)
                    ))
                });
                failed = step.err();
            }
        })?;
        if let Some(err) = failed {
            return Err(err);
        }
        e.resolve(self)?;
        self.progress_done();
        let n = e.hosts.names.len();
        let mut edges: Vec<(u32, u32)> = e.edges.into_iter().map(|(s, d)| (d, s)).collect();
        edges.sort_unstable();
        let nodes = (0..n as u128).map(UrlId).collect();
        let mut b = GraphBuilder::new(nodes, edges.len());
        for (d, s) in edges {
            b.add_edge(UrlId(u128::from(d)), UrlId(u128::from(s)));
        }
        Ok((b.finish(), e.hosts.names, e.unreadable))
    }

    fn store_host_ranks<'n>(
        &mut self,
        g: &LinkGraph,
        ranks: &pagerank::Ranks,
        params: &pagerank::Params,
        name: &impl Fn(u32) -> &'n String,
    ) -> Result<String> {
        if self.store.is_read_only() {
            return Ok("attached read-only: ranks not stored".into());
        }
        let store = self.store.clone();
        let mut b = store.batch();
        for node in 0..g.nodes() as u32 {
            let origin = name(node);
            let rec = HostRankRecord {
                origin: origin.clone(),
                rank: ranks.scores[node as usize],
            };
            b.put_row::<HostRanks>(&HostId::of(origin), &rec);
            if (node + 1).is_multiple_of(STORE_BATCH) {
                std::mem::replace(&mut b, store.batch()).write()?;
            }
        }
        b.put_meta::<HostRankRow>(&rank_run(g, ranks, params));
        b.write()?;
        Ok(format!(
            "stored for {} hosts",
            table::thousands(g.nodes() as u64)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::origin_of;

    #[test]
    fn origins_are_the_part_before_the_path() {
        assert_eq!(
            origin_of("http://a.org:8080/x/y?q").as_deref(),
            Some("http://a.org:8080")
        );
        assert_eq!(origin_of("https://b.org").as_deref(), Some("https://b.org"));
        assert_eq!(
            origin_of("https://b.org?x").as_deref(),
            Some("https://b.org")
        );
        assert_eq!(origin_of("no-scheme").as_deref(), None);
        assert_eq!(
            origin_of("http://u:p@b.org:81/x").as_deref(),
            Some("http://b.org:81")
        );
    }
}
