//! `seeds [where EXPR] [order by FIELD [desc]] [limit N]`: the seed-site
//! library as a table — each seed site with its metadata, reachability,
//! host-level PageRank, pages and own settings — and the library as the
//! other seed commands read it.

use std::collections::HashMap;

use serde_json::json;

use super::site_fields::{SITE_FIELDS, SiteRow};
use super::{Call, Command, Run};
use crate::crawl::sites::SiteRule;
use crate::model::{self, HostId};
use crate::model::{RobotsOutcome, SeenState};
use crate::schema::SiteRecord;
use crate::schema::tables::{HostRankRow, HostRanks, Sites};
use crate::shell::error::Result;
use crate::shell::expr::{Type, Val, parse_query_over};
use crate::shell::reply::{Column, Kind, Reply};
use crate::shell::{Ctx, rest_after_words};

pub const COMMAND: Command = Command {
    name: "seeds",
    usage: "seeds [where EXPR] [order by FIELD [desc]] [limit N]",
    summary: "the seed-site library: each seed site's metadata, reachability, host rank, pages and own settings",
    examples: &[
        "seeds",
        "seeds where subject = 'physics' order by rank desc",
        "seeds where home >= 400 or robots = 'unreachable'",
    ],
    arity: (0, None),
    subs: &[],
    writes: false,
    complete: |_, _| SITE_FIELDS.iter().map(|f| f.name.to_string()).collect(),
    detail,
    run: Run::Data(run),
};

fn detail() -> String {
    let mut s = String::from("Fields (also the columns of seed import and seed export):\n");
    for f in SITE_FIELDS {
        let set = if f.write.is_some() { " (seed set)" } else { "" };
        s.push_str(&format!("  {:<10} {}{set}\n", f.name, f.meaning));
    }
    s
}

/// A seed site: its host, its record (a default one for a seed added
/// before the library kept records) and its seed URLs.
pub(super) struct Site {
    pub host: HostId,
    pub rec: SiteRecord,
    pub urls: Vec<String>,
    /// Its host and the hosts its seeds redirected to.
    pub hosts: Vec<HostId>,
}

impl Ctx {
    /// The hosts the last `rank hosts` ranked: a host's rank times it is
    /// its rank relative to the mean.
    pub(super) fn rank_nodes(&self) -> Result<Option<f64>> {
        Ok(self.store.meta::<HostRankRow>()?.map(|r| r.nodes as f64))
    }

    /// Every seed site, in the order their first seeds were given.
    pub(super) fn library(&self) -> Result<Vec<Site>> {
        let list = self.store.seeds()?;
        let mut sites: Vec<Site> = Vec::new();
        let mut index: HashMap<HostId, usize> = HashMap::new();
        for url in &list.urls {
            let Ok(u) = model::normalize(url) else {
                continue;
            };
            let host = u.host_id();
            if let Some(&i) = index.get(&host) {
                sites[i].urls.push(url.clone());
                continue;
            }
            let rec = self
                .store
                .row::<Sites>(&host)?
                .unwrap_or_else(|| SiteRecord {
                    origin: u.host_key(),
                    ..SiteRecord::default()
                });
            index.insert(host, sites.len());
            sites.push(Site {
                host,
                rec,
                urls: vec![url.clone()],
                hosts: vec![host],
            });
        }
        for d in &list.derived {
            let (Ok(from), Ok(to)) = (model::normalize(&d.from), model::normalize(&d.url)) else {
                continue;
            };
            if let Some(&i) = index.get(&from.host_id())
                && !index.contains_key(&to.host_id())
            {
                index.insert(to.host_id(), i);
                sites[i].hosts.push(to.host_id());
            }
        }
        Ok(sites)
    }

    /// What the crawl knows of `site`, as a row of fields.
    /// `rank_nodes`: the hosts the last `rank hosts` ranked (see
    /// [`Ctx::rank_nodes`]).
    pub(super) fn site_facts(&self, site: &Site, rank_nodes: Option<f64>) -> Result<Facts> {
        let home = match site.urls.first().and_then(|u| model::normalize(u).ok()) {
            Some(u) => match self.store.seen(u.id())?.map(|s| s.state) {
                Some(SeenState::Fetched { status }) => Some(status),
                _ => None,
            },
            None => None,
        };
        let (mut robots, mut checked_ms, mut fetched, mut queued) = ("-".to_string(), 0, 0, 0);
        for (i, h) in site.hosts.iter().enumerate() {
            let Some(rec) = self.store.host(*h)? else {
                continue;
            };
            fetched += rec.fetched;
            queued += rec.queued;
            if i == 0
                && let Some(r) = &rec.robots
            {
                robots = match &r.outcome {
                    RobotsOutcome::Fetched { status } | RobotsOutcome::Unavailable { status } => {
                        status.to_string()
                    }
                    RobotsOutcome::Unreachable { .. } => "unreachable".into(),
                    RobotsOutcome::TooManyRedirects => "redirects".into(),
                };
                checked_ms = r.fetched_ms;
            }
        }
        let rank = match (self.store.row::<HostRanks>(&site.host)?, rank_nodes) {
            (Some(r), Some(n)) => Some(r.rank * n),
            _ => None,
        };
        // Before the crawl reaches it, what `discover seeds --probe` found.
        let (mut home, mut robots, mut checked_ms) = (home, robots, checked_ms);
        if let Some(p) = site.rec.probe.as_ref().filter(|_| checked_ms == 0) {
            (robots, checked_ms) = (p.robots.clone(), p.checked_ms);
            home = home.or(p.home);
        }
        Ok(Facts {
            home,
            robots,
            checked_ms,
            rank,
            fetched,
            queued,
        })
    }
}

/// What the crawl knows of a site (see [`SiteRow`]).
pub(super) struct Facts {
    home: Option<u16>,
    robots: String,
    checked_ms: u64,
    rank: Option<f64>,
    fetched: u64,
    queued: u64,
}

impl Facts {
    pub fn row<'a>(&self, site: &'a Site) -> SiteRow<'a> {
        SiteRow {
            rec: &site.rec,
            urls: &site.urls,
            home: self.home,
            robots: self.robots.clone(),
            checked_ms: self.checked_ms,
            rank: self.rank,
            fetched: self.fetched,
            queued: self.queued,
        }
    }
}

/// The fields the human table shows; the rest are in the machine
/// formats and `seed export`.
const HEADERS: [&str; 7] = [
    "site", "subject", "source", "home", "robots", "rank", "fetched",
];

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let fields: Vec<(&'static str, Type)> = SITE_FIELDS.iter().map(|f| (f.name, f.ty)).collect();
    // The raw text after the command word: quoting survives, and errors
    // point at a column.
    let (rest, base) = rest_after_words(call.line, 1);
    let q = parse_query_over(&rest, base, &fields)?;
    let mut rows: Vec<(Vec<Val>, String)> = Vec::new();
    let nodes = sh.rank_nodes()?;
    for site in sh.library()? {
        let facts = sh.site_facts(&site, nodes)?;
        let row = facts.row(&site);
        let vals: Vec<Val> = SITE_FIELDS.iter().map(|f| (f.read)(&row)).collect();
        let get = |name: &str| {
            SITE_FIELDS
                .iter()
                .position(|f| f.name == name)
                .map_or(Val::Str(String::new()), |i| vals[i].clone())
        };
        if !q.filter.eval(&get, 0.0) {
            continue;
        }
        let settings = SiteRule::of(&site.rec.origin, &site.rec.settings)
            .ok()
            .flatten()
            .map_or(String::new(), |r| r.describe());
        rows.push((vals, settings));
    }
    if let Some((f, desc)) = q.order {
        let i = SITE_FIELDS.iter().position(|x| x.name == f).unwrap_or(0);
        rows.sort_by(|a, b| {
            let o = a.0[i]
                .partial_cmp(&b.0[i])
                .unwrap_or(std::cmp::Ordering::Equal);
            if desc { o.reverse() } else { o }
        });
    }
    if let Some(l) = q.limit {
        rows.truncate(l);
    }
    let cells = rows
        .iter()
        .map(|(vals, settings)| {
            let mut row: Vec<serde_json::Value> = vals.iter().map(site_value).collect();
            row.push(json!(settings));
            row
        })
        .collect();
    let mut reply = Reply::table(site_columns(), cells);
    if rows.is_empty() {
        reply = reply.note(if q.filter == crate::shell::expr::Expr::True {
            "no seed sites (seed add URL adds one)"
        } else {
            "no seed site matches"
        });
    }
    Ok(reply)
}

/// Every site field, the table's in front, then the site's settings.
fn site_columns() -> Vec<Column> {
    let kind = |ty: Type| match ty {
        Type::Num => Kind::Num,
        Type::Bool => Kind::Bool,
        Type::Str => Kind::Text,
    };
    let mut c: Vec<Column> = SITE_FIELDS
        .iter()
        .map(|f| {
            let c = Column::new(f.name, kind(f.ty));
            if HEADERS.contains(&f.name) {
                c
            } else {
                c.hidden()
            }
        })
        .collect();
    c.push(Column::new("settings", Kind::Text));
    c
}

/// A site field's value: whole numbers as integers, NaN as null.
fn site_value(v: &Val) -> serde_json::Value {
    match v {
        Val::Num(n) if n.is_nan() => serde_json::Value::Null,
        Val::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => json!(*n as i64),
        Val::Num(n) => json!(n),
        Val::Bool(b) => json!(b),
        Val::Str(s) => json!(s),
    }
}
