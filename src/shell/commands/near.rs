//! `near-duplicates [top N]`: the largest near-duplicate clusters — each
//! one's first page, its size, the pages past `dedup.cluster_budget` (of
//! their site's in it) whose links were not followed, and a few of its
//! other pages (of those the index holds).

use std::collections::HashSet;

use serde_json::json;

use super::{Call, Command, Run, Sub, nothing};
use crate::model::UrlId;
use crate::schema::ClusterRecord;
use crate::schema::tables::Clusters;
use crate::shell::error::{Result, ShellError};
use crate::shell::lookup::parse_n;
use crate::shell::reply::{Column, Kind, Reply, columns};
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "near-duplicates",
    usage: "near-duplicates [top N]",
    summary: "the largest clusters of near-duplicate pages (dedup.near): first page, size, pages whose links were not followed",
    examples: &[
        "set dedup.near true",
        "near-duplicates",
        "near-duplicates top 50",
    ],
    arity: (0, Some(2)),
    subs: &[Sub {
        words: "top",
        writes: false,
    }],
    writes: false,
    complete: nothing,
    detail,
    run: Run::Data(run),
};

fn detail() -> String {
    "With `set dedup.near true` each HTML page's 64-bit simhash (over three-word shingles of its \
     denoised text, or its visible text) is compared with the stored pages' through a 4-band \
     index; a page within `dedup.distance` bits (0 to 3) of a stored page joins that page's \
     cluster. Past `dedup.cluster_budget` pages of one site (registrable domain) in a cluster, \
     that site's next page is stored but its links are not followed (calendars, faceted search); \
     another site's copies spend their own budget. The index holds the last `dedup.max_indexed` \
     pages placed. `pages where near_duplicate` lists them one by one."
        .into()
}

/// Clusters listed unless N is given, and other pages shown for each.
const DEFAULT_TOP: usize = 10;
const SAMPLES: usize = 3;

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let n = match call.args[..] {
        [] => DEFAULT_TOP,
        ["top", n] => parse_n(n)?,
        _ => return Err(ShellError::Usage),
    };
    let mut rows = sh.store.rows::<Clusters>(&[]);
    let mut clusters: Vec<(UrlId, ClusterRecord)> =
        rows.by_ref().collect::<std::result::Result<_, _>>()?;
    let unreadable = rows.unreadable();
    clusters.sort_by(|a, b| b.1.pages.cmp(&a.1.pages).then(a.0.cmp(&b.0)));
    let total = clusters.len();
    clusters.truncate(n);
    if clusters.is_empty() {
        return Ok(Reply::table(near_columns(), vec![]).note(
            "no near-duplicate clusters (set dedup.near true before crawling: pages are compared as they are stored)",
        ));
    }
    let wanted: HashSet<UrlId> = clusters.iter().map(|(id, _)| *id).collect();
    let members = sh.store.cluster_members(&wanted, SAMPLES)?;
    let url = |id: UrlId| -> Result<String> { Ok(sh.store.url(id)?.unwrap_or_default()) };
    let mut cells = Vec::new();
    for (id, c) in &clusters {
        let first = url(*id)?;
        let others: Vec<String> = members
            .get(id)
            .into_iter()
            .flatten()
            .map(|m| url(*m))
            .collect::<Result<_>>()?;
        cells.push(vec![
            json!(c.pages),
            json!(c.unexpanded),
            json!(first),
            json!(others),
        ]);
    }
    let mut reply = Reply::table(near_columns(), cells).note(format!(
        "({} of {} clusters)",
        clusters.len(),
        table::thousands(total as u64)
    ));
    if unreadable > 0 {
        reply = reply.note(format!("{unreadable} cluster rows could not be read"));
    }
    Ok(reply)
}

fn near_columns() -> Vec<Column> {
    columns(&[
        ("pages", Kind::Int),
        ("unexpanded", Kind::Int),
        ("first", Kind::Text),
        ("others", Kind::Text),
    ])
}
