//! `export graph PATH [--format graphml|gexf|edges-csv|dot] [--hosts]
//! [--where EXPR]`: the link graph for networkx and Gephi. The page graph
//! has a node per stored page (those `--where` picks) with its title,
//! status, verdict, scores and PageRank, and an edge per pair of them one
//! links to the other, weighted by the links; the host graph a node per
//! host (those linked to as well) with its counts and host rank, and an
//! edge per pair of hosts, weighted by the page links between them.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde_json::{Value, json};

use super::export_table::{self, Options};
use super::pages::{self, Emit, Output};
use super::rank_hosts::origin_of;
use crate::export::graph::{GraphFile, GraphFormat, GraphWritten};
use crate::export::{Col, ColType};
use crate::model::UrlId;
use crate::schema::tables::{HostRanks, Hosts};
use crate::shell::error::{Result, bail};
use crate::shell::expr;
use crate::shell::reply::{Column, Reply};
use crate::shell::{Ctx, table};

/// A page node's attributes, named as `pages where` names them.
const PAGE_ATTRS: [&str; 8] = [
    "url",
    "title",
    "status",
    "depth",
    "verdict",
    "relevance",
    "topic_score",
    "pagerank",
];

pub(super) fn run(
    sh: &mut Ctx,
    path: std::path::PathBuf,
    rest: &str,
    base: usize,
) -> Result<Reply> {
    let o = export_table::options(rest, base)?;
    if o.search.is_some() {
        bail!("--search applies to export text (the pages' text); this export takes --where");
    }
    if o.fields.is_some() || o.text {
        bail!("export graph takes --format, --hosts and --where");
    }
    let format = GraphFormat::of(&path, o.format.as_deref())?;
    // Before the scan: the host graph opens its file after reading links.
    if path.exists() {
        bail!("{} exists; give export a new file name", path.display());
    }
    let started = Instant::now();
    let w = sh.reporting(|sh| match o.hosts {
        true => host_graph(sh, &path, format, &o),
        false => page_graph(sh, &path, format, &o),
    })?;
    let secs = started.elapsed().as_secs_f64();
    let counts = [("nodes", w.nodes), ("edges", w.edges)];
    Ok(export_table::wrote(&w.path, &counts, w.bytes, secs, ""))
}

fn page_graph(
    sh: &mut Ctx,
    path: &std::path::Path,
    format: GraphFormat,
    o: &Options,
) -> Result<GraphWritten> {
    let columns: Vec<Column> = PAGE_ATTRS.iter().map(|f| Column::field(f)).collect();
    let mut g = GraphFile::create(path, format, export_table::file_columns(&columns))?;
    let (src, base) = o.filter.clone().unwrap_or_default();
    let q = expr::parse_query(&src, base)?;
    if q.order.is_some() || q.limit.is_some() {
        bail!("export graph: order by and limit do not apply; every matching page is a node");
    }
    // Pass 1: the nodes, as the pages are scanned; their ids kept for the
    // edges (16 bytes a page).
    let mut nodes: HashSet<UrlId> = HashSet::new();
    let mut node = |sh: &mut Ctx, _: &crate::shell::fields::Row, row: &[Value]| -> Result<()> {
        let url = row[0].as_str().unwrap_or_default();
        let title = row[1].as_str().filter(|t| !t.is_empty()).unwrap_or(url);
        g.node(url, title, row)?;
        nodes.insert(UrlId::of(url));
        sh.progress(&format!(
            "export graph: {} nodes",
            table::thousands(nodes.len() as u64)
        ));
        Ok(())
    };
    let mut emit = Emit {
        columns,
        all: true,
        record: false,
        row: &mut node,
    };
    pages::run_query(sh, &q, Output::Stream, Some(&mut emit))?;
    // Pass 2: each node's links to nodes, parallel links as a weight.
    let store = sh.store.clone();
    let (mut failed, mut stopped, mut edges) = (None, false, 0u64);
    store.each_page_links_while(|src, links| {
        if sh.interrupted() {
            return (stopped = true, false).1;
        }
        if !nodes.contains(&src) {
            return true;
        }
        let Ok(links) = links else { return true };
        let from = match store.url(src) {
            Ok(Some(u)) => u,
            Ok(None) => return true,
            Err(e) => return (failed = Some(e.to_string()), false).1,
        };
        // Links to the same page as one weighted edge (sorted: a page may
        // hold 100,000 links).
        let mut targets: Vec<(UrlId, &str)> = links
            .iter()
            .filter(|(dst, _)| nodes.contains(dst))
            .map(|(dst, l)| (*dst, l.dst_url))
            .collect();
        targets.sort_unstable_by_key(|t| t.0);
        let mut weights: Vec<(&str, u64)> = Vec::new();
        for (i, (dst, url)) in targets.iter().enumerate() {
            match i > 0 && targets[i - 1].0 == *dst {
                true => weights.last_mut().expect("one before").1 += 1,
                false => weights.push((url, 1)),
            }
        }
        for (to, weight) in weights {
            if let Err(e) = g.edge(&from, to, weight) {
                return (failed = Some(e), false).1;
            }
            edges += 1;
        }
        sh.progress(&format!("export graph: {} edges", table::thousands(edges)));
        true
    })?;
    done(g, failed, stopped)
}

fn host_graph(
    sh: &mut Ctx,
    path: &std::path::Path,
    format: GraphFormat,
    o: &Options,
) -> Result<GraphWritten> {
    let only = export_table::picked(sh, o)?;
    let store = sh.store.clone();
    // Hosts by origin, interned; edges (source, target) → page links.
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut intern = |o: &str| -> u32 {
        if let Some(i) = index.get(o) {
            return *i;
        }
        let i = names.len() as u32;
        names.push(o.to_string());
        index.insert(o.to_string(), i);
        i
    };
    let mut edges: HashMap<(u32, u32), u64> = HashMap::new();
    let (mut failed, mut stopped, mut pages) = (None, false, 0u64);
    store.each_page_links_while(|src, links| {
        if sh.interrupted() {
            return (stopped = true, false).1;
        }
        if only.as_ref().is_some_and(|s| !s.contains(&src)) {
            return true;
        }
        let Ok(links) = links else { return true };
        let url = match store.url(src) {
            Ok(u) => u,
            Err(e) => return (failed = Some(e.to_string()), false).1,
        };
        let Some(from) = url.as_deref().and_then(origin_of) else {
            return true;
        };
        let a = intern(&from);
        for (_, l) in &links {
            if let Some(to) = origin_of(l.dst_url).filter(|t| *t != from) {
                *edges.entry((a, intern(&to))).or_default() += 1;
            }
        }
        pages += 1;
        sh.progress(&format!(
            "export graph: links of {} pages read",
            table::thousands(pages)
        ));
        true
    })?;
    if let Some(e) = failed {
        bail!("{e}");
    }
    if stopped {
        bail!("interrupted: nothing was written");
    }
    write_hosts(sh, path, format, &names, edges)
}

/// The host graph's file: every host of the db with its counts, the
/// hosts only linked to, then the edges in order.
fn write_hosts(
    sh: &Ctx,
    path: &std::path::Path,
    format: GraphFormat,
    names: &[String],
    edges: HashMap<(u32, u32), u64>,
) -> Result<GraphWritten> {
    let store = &sh.store;
    let attrs = vec![
        col("pages", ColType::Int),
        col("errors", ColType::Int),
        col("queued", ColType::Int),
        col("host_rank", ColType::Float),
    ];
    let mut g = GraphFile::create(path, format, attrs)?;
    let mut known = HashSet::new();
    let mut rows = store.rows::<Hosts>(&[]);
    for row in rows.by_ref() {
        let (id, h) = row?;
        let rank = store.row::<HostRanks>(&id)?.map(|r| r.rank);
        let attrs = [
            json!(h.fetched),
            json!(h.errors),
            json!(h.queued),
            json!(rank),
        ];
        g.node(&h.origin, &h.origin, &attrs)?;
        known.insert(h.origin);
    }
    crate::shell::lookup::unreadable(rows.unreadable());
    // Hosts only linked to: nodes without counts.
    for n in names.iter().filter(|n| !known.contains(*n)) {
        g.node(n, n, &[Value::Null, Value::Null, Value::Null, Value::Null])?;
    }
    let mut sorted: Vec<((u32, u32), u64)> = edges.into_iter().collect();
    sorted.sort_unstable();
    for ((a, b), weight) in sorted {
        g.edge(&names[a as usize], &names[b as usize], weight)?;
    }
    Ok(g.finish()?)
}

fn col(name: &str, ty: ColType) -> Col {
    Col {
        name: name.into(),
        ty,
    }
}

/// The finished file, or the error that stopped it (its partial file
/// removed).
fn done(g: GraphFile, failed: Option<String>, stopped: bool) -> Result<GraphWritten> {
    if let Some(e) = failed {
        bail!("{e}");
    }
    if stopped {
        bail!("interrupted: nothing was written (the partial file is removed)");
    }
    Ok(g.finish()?)
}
