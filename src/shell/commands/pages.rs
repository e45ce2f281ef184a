//! `pages [where EXPR] [order by FIELD [desc]] [limit N]`: pages matching an
//! expression over the fields table. With a status or host term the page
//! index narrows the candidates (see `plan`); a count over the small `seen`
//! rows alone skips the page records.

use serde_json::json;

use super::{Call, Command, Known, Sub};
use crate::model::SeenState;
use crate::model::{UrlId, now_ms};
use crate::schema::tables::Pages;
use crate::schema::tables::{Ranks, Visits};
use crate::schema::{DocRecord, PageDoc, PageRecord};
use crate::shell::error::{Result, bail};
use crate::shell::expr::{self, Query};
use crate::shell::fields::{self, Extra, Reads, Row};
use crate::shell::plan::{self, IndexScan};
use crate::shell::reply::Reply;
use crate::shell::{Shell, rest_after_words, table};
use crate::store::Store;

pub const COMMAND: Command = Command {
    name: "pages",
    usage: "pages [where EXPR] [order by FIELD [desc]] [limit N]",
    summary: "pages matching an expression over url, host, status, depth, title, size, fetched_at, content_type, inlinks, outlinks, duplicate, … (help pages lists them)",
    examples: &[
        "pages where status >= 400 limit 20",
        "pages where title ~ '论文' and depth <= 2 order by size desc",
        "pages where fetched_at > 10m",
    ],
    arity: (0, None),
    subs: &[Sub {
        words: "where",
        writes: false,
    }],
    writes: false,
    complete,
    detail: fields::help,
    run,
};

/// After `where` (or `order by`), the field names.
pub fn complete(_: &Known, args: &[&str]) -> Vec<String> {
    match args.last() {
        Some(&"where" | &"and" | &"or" | &"not" | &"by") => {
            fields::FIELDS.iter().map(|f| f.name.to_string()).collect()
        }
        _ => Vec::new(),
    }
}

fn run(sh: &mut Shell, call: &Call) -> Result<Reply> {
    // The expression is the raw text after the command word, so quoting
    // survives and errors can point at a column.
    let (rest, base) = rest_after_words(call.line, 1);
    query(
        sh,
        &rest.replace("--json", ""),
        base,
        Output::of(false, call.json),
    )
}

/// What a query prints.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Output {
    /// The number of matches.
    Count,
    /// Rows as they are found (human output, no order).
    Stream,
    /// Rows collected, ordered and limited, then printed.
    Table,
    /// The matching pages' ids only, for a command that reads them again
    /// (`export`).
    Ids,
}

impl Output {
    pub(super) fn of(count: bool, json: bool) -> Output {
        match (count, json) {
            (true, _) => Output::Count,
            (false, false) => Output::Stream,
            (false, true) => Output::Table,
        }
    }
}

/// A matching page, with what its fields were read from.
struct Matched {
    page: PageRecord,
    doc: PageDoc,
    extra: Extra,
}

/// What a scan found.
struct Found {
    rows: Vec<Matched>,
    ids: Vec<UrlId>,
    count: u64,
    /// Candidates looked at.
    scanned: u64,
}

/// The page-index range that narrows `q`'s scan, when the index is whole
/// and the filter names a status or host.
fn index_plan(sh: &Shell, q: &Query) -> Result<Option<IndexScan>> {
    let indexed = sh.store.page_index_complete()?;
    Ok(indexed.then(|| plan::index_scan(&q.filter)).flatten())
}

/// The ids of the pages `src` (a `where` expression, with an optional
/// limit) matches, in scan order.
pub(super) fn matching_ids(sh: &mut Shell, src: &str, base: usize) -> Result<Vec<UrlId>> {
    let q = expr::parse_query(src, base)?;
    if q.order.is_some() {
        bail!("order by does not apply here: pages are taken in the order they are stored");
    }
    let plan = index_plan(sh, &q)?;
    Ok(scan(sh, &q, plan.as_ref(), Output::Ids)?.ids)
}

pub(super) fn query(sh: &mut Shell, src: &str, base: usize, out: Output) -> Result<Reply> {
    let q = expr::parse_query(src, base)?;
    let out = if out == Output::Stream && q.order.is_some() {
        Output::Table
    } else {
        out
    };
    let plan = index_plan(sh, &q)?;
    let found = scan(sh, &q, plan.as_ref(), out)?;
    // Like EXPLAIN: say when the page index narrowed the scan.
    let via = match plan {
        Some(_) => format!(
            "; {} candidate{} from the page index",
            table::thousands(found.scanned),
            plural(found.scanned)
        ),
        None => String::new(),
    };
    match out {
        Output::Count => Ok(Reply::with(
            found.count.to_string(),
            json!({ "count": found.count }),
        )),
        Output::Stream | Output::Ids => Ok(Reply::text(format!(
            "({} page{}{via})",
            found.count,
            plural(found.count)
        ))),
        Output::Table => table_reply(sh, &q, found.rows, &via),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Ordered, limited rows as a table and as JSON.
fn table_reply(sh: &Shell, q: &Query, mut rows: Vec<Matched>, via: &str) -> Result<Reply> {
    let now = now_ms() as f64;
    if let Some((f, desc)) = q.order {
        let key = |m: &Matched| fields::value(f, &Row::full(&m.page, &m.doc, &m.extra, now));
        rows.sort_by(|a, b| {
            let o = key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal);
            if desc { o.reverse() } else { o }
        });
    }
    if let Some(l) = q.limit {
        rows.truncate(l);
    }
    // The rows shown carry their scores, read if the query did not.
    for m in &mut rows {
        let id = UrlId::of(&m.page.url);
        if m.extra.scores.is_none() {
            m.extra.scores = sh.store.seen(id)?.and_then(|s| s.scores);
        }
        if m.extra.pagerank.is_none() {
            m.extra.pagerank = sh.store.row::<Ranks>(&id)?.map(|r| r.pagerank);
        }
    }
    // Ordered by a field the table does not show: it is shown too.
    let shown = q.order.map(|(f, _)| f).filter(|f| !HEADERS.contains(f));
    let mut headers = HEADERS.to_vec();
    headers.extend(shown);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|m| {
            let mut c = page_cells(&m.page, &m.doc.doc).to_vec();
            if let Some(f) = shown {
                let row = Row::full(&m.page, &m.doc, &m.extra, now);
                c.insert(c.len() - 1, fields::value(f, &row).to_string());
            }
            c
        })
        .collect();
    if let Some(f) = shown {
        headers.pop();
        headers.insert(headers.len() - 1, f);
    }
    let j: Vec<_> = rows
        .iter()
        .map(|Matched { page: p, doc: PageDoc { doc: d, .. }, extra: x }| json!({"url": p.url, "status": p.status, "depth": p.depth, "size": p.body_len, "title": d.title,
            "content_type": p.content_type, "fetched_ms": p.fetched_ms, "outlinks": d.outlinks, "inlinks": x.inlinks,
            "duplicate": d.duplicate_of.is_some(), "pagerank": x.pagerank, "scores": x.scores}))
        .collect();
    let mut human = table::render(&headers, &cells, sh.width);
    human += &format!("({} page{}{via})", rows.len(), plural(rows.len() as u64));
    Ok(Reply::with(human, json!(j)))
}

const HEADERS: [&str; 5] = ["status", "depth", "size", "title", "url"];

/// Walks the candidates, evaluating the filter on each; streams, counts
/// or collects the matches.
fn scan(sh: &mut Shell, q: &Query, plan: Option<&IndexScan>, out: Output) -> Result<Found> {
    let named = |f: &str| q.filter.uses(f) || q.order.is_some_and(|o| o.0 == f);
    let needs_inlinks = named("inlinks");
    let needs_rank = named("pagerank");
    let needs_near = named("near_duplicate_of");
    let needs_scores = fields::names_reading(Reads::Scores).into_iter().any(named);
    let needs_visits = fields::names_reading(Reads::Visits).into_iter().any(named);
    let now = now_ms() as f64;
    let total = sh.store.counters()?.fetched;
    // A count over index candidates whose filter reads only what the
    // `seen` row (status, depth) and the `urls` row (url, host) hold is
    // checked there: small rows instead of the page's record and text
    // in blob files (`count pages where status = 200` over 1,000,004
    // pages took 255 s that way).
    let light = out == Output::Count
        && plan.is_some()
        && q.filter.uses_only(
            &[Reads::Seen, Reads::Scores]
                .map(fields::names_reading)
                .concat(),
        );
    // Without an order, the scan stops at the limit.
    let early_stop = q.order.is_none().then_some(q.limit).flatten();
    let store = sh.store.clone();
    // A refetch that changed a page's status leaves it two index rows.
    let mut yielded = std::collections::HashSet::new();
    let mut found = Found {
        rows: Vec::new(),
        ids: Vec::new(),
        count: 0,
        scanned: 0,
    };
    let unreadable = std::cell::Cell::new(0);
    let mut inlinks = match needs_inlinks {
        true => Some(store.inlinks()?),
        false => None,
    };
    for row in candidates(&store, plan, light, &unreadable) {
        if sh.interrupted() {
            sh.progress_done();
            bail!("interrupted");
        }
        found.scanned += 1;
        if found.scanned.is_multiple_of(1024) {
            progress(sh, plan.is_some(), found.scanned, total, found.count);
        }
        let (id, page) = row?;
        if plan.is_some() && !yielded.insert(id) {
            continue;
        }
        let page = match page {
            Some(page) => page,
            None => match light_match(sh, &q.filter, id, now)? {
                Some(keep) => {
                    found.count += u64::from(keep);
                    continue;
                }
                None => sh.store.page(id)?,
            },
        };
        let Some(page) = page else { continue };
        let doc = sh.store.doc(id)?.unwrap_or_default();
        let extra = Extra {
            inlinks: match inlinks.as_mut() {
                Some(r) => r.count(id)?,
                None => 0,
            },
            scores: match needs_scores {
                true => sh.store.seen(id)?.and_then(|s| s.scores),
                false => None,
            },
            pagerank: match needs_rank {
                true => sh.store.row::<Ranks>(&id)?.map(|r| r.pagerank),
                false => None,
            },
            near_of: match doc.doc.near.filter(|_| needs_near) {
                Some(n) => sh.store.url(UrlId(n.of))?,
                None => None,
            },
            visits: match needs_visits {
                true => sh.store.row::<Visits>(&id)?,
                false => None,
            },
        };
        let row = Row::full(&page, &doc, &extra, now);
        if !q.filter.eval(&|f| fields::value(f, &row), now) {
            continue;
        }
        found.count += 1;
        match out {
            Output::Count => {}
            Output::Stream => {
                // Unordered human output prints each row as it is found.
                sh.progress_done();
                if found.count == 1 {
                    sh.say(&stream_row(&HEADERS.map(String::from)));
                }
                sh.say(&stream_row(&page_cells(&page, &doc.doc)));
            }
            Output::Table => found.rows.push(Matched { page, doc, extra }),
            Output::Ids => found.ids.push(id),
        }
        if early_stop.is_some_and(|l| found.count >= l as u64) && out != Output::Count {
            break;
        }
    }
    sh.progress_done();
    crate::shell::lookup::unreadable(unreadable.get());
    Ok(found)
}

fn progress(sh: &mut Shell, indexed: bool, scanned: u64, total: u64, count: u64) {
    let what = if indexed {
        format!("checking index candidates: {}", table::thousands(scanned))
    } else {
        format!(
            "scanning pages: {} of {}",
            table::thousands(scanned),
            table::thousands(total)
        )
    };
    sh.progress(&format!("{what}, {count} match"));
}

/// A page to consider: its id, and its record when read (None inside:
/// no longer stored, or unreadable; None outside: left for a light count).
type Candidate = (UrlId, Option<Option<PageRecord>>);

/// Every page, or the pages of one index range.
fn candidates<'s>(
    store: &'s Store,
    plan: Option<&'s IndexScan>,
    light: bool,
    unreadable: &'s std::cell::Cell<u64>,
) -> Box<dyn Iterator<Item = Result<Candidate>> + 's> {
    let indexed = move |r: std::result::Result<UrlId, crate::store::StoreError>| {
        let id = r?;
        if light {
            return Ok((id, None));
        }
        Ok((id, Some(store.page(id)?)))
    };
    match plan {
        None => {
            let mut rows = store.rows::<Pages>(&[]);
            Box::new(std::iter::from_fn(move || {
                let row = rows.next();
                unreadable.set(rows.unreadable());
                Some(
                    row?.map(|(id, page)| (id, Some(Some(page))))
                        .map_err(Into::into),
                )
            }))
        }
        Some(IndexScan::Prefix(p)) => Box::new(store.page_index_pages(p, None).map(indexed)),
        Some(IndexScan::Range(from, to)) => {
            Box::new(store.page_index_pages(from, Some(to)).map(indexed))
        }
    }
}

/// Whether page `id` matches a filter over the `Seen` fields, from its
/// `seen` row (written in the same batch as the page, with the same status
/// and depth) and `urls` row; None when those rows do not say (the page's
/// record decides).
fn light_match(sh: &Shell, filter: &expr::Expr, id: UrlId, now: f64) -> Result<Option<bool>> {
    let Some(seen) = sh.store.seen(id)? else {
        return Ok(None);
    };
    let SeenState::Fetched { status } = seen.state else {
        return Ok(None);
    };
    let url = if filter.uses("url") || filter.uses("host") {
        match sh.store.url(id)? {
            Some(u) => u,
            None => return Ok(None),
        }
    } else {
        String::new()
    };
    let row = Row {
        url: &url,
        status,
        depth: seen.depth,
        page: None,
        doc: None,
        verdict: None,
        inlinks: 0,
        scores: seen.scores.as_ref(),
        pagerank: None,
        near_of: None,
        visits: None,
        now_ms: now,
    };
    Ok(Some(filter.eval(&|f| fields::value(f, &row), now)))
}

/// The human columns of a page row: status, depth, size, title, url.
fn page_cells(p: &PageRecord, d: &DocRecord) -> [String; 5] {
    [
        p.status.to_string(),
        p.depth.to_string(),
        table::bytes(p.body_len),
        d.title.clone(),
        p.url.clone(),
    ]
}

/// A page row in fixed-width columns, so rows can print as they are found.
fn stream_row(c: &[String; 5]) -> String {
    let title = table::pad(&table::cut(&c[3], 30), 30);
    format!("{:<6}  {:<5}  {:<9}  {title}  {}", c[0], c[1], c[2], c[4])
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn filters_orders_limits_and_explains_the_index() {
        let mut t = TestShell::crawled(3);
        let all: usize = t.ok("count pages").trim().parse().unwrap();
        assert!(all >= 12, "{all}");
        let out = t.ok("pages where status = 200 order by url desc limit 2");
        assert_eq!(out.lines().count(), 4, "{out}");
        assert!(out.contains("candidates from the page index"), "{out}");
        let streamed = t.ok("pages where depth = 0");
        assert!(streamed.contains("(4 pages)"), "{streamed}");
        assert!(
            t.err("pages where stauts = 1")
                .contains("did you mean status")
        );
        assert!(t.ok("help pages").contains("topic_score"));
    }

    /// The parser, the evaluator and the tree's drop recurse once a level:
    /// an expression nested 100,000 deep gets a one-line error, not a
    /// stack overflow, from every command that takes one.
    #[test]
    fn deep_nesting_is_a_one_line_error() {
        let mut t = TestShell::new();
        let n = 100_000;
        let parens = format!("({}depth = 1{}", "(".repeat(n - 1), ")".repeat(n));
        let nots = format!("{}duplicate", "not ".repeat(n));
        for line in [
            format!("pages where {parens}"),
            format!("pages where {nots} order by url"),
            format!("count pages where {nots}"),
            format!("seeds where {}depth = 1{}", "(".repeat(n), ")".repeat(n)),
            format!("seeds where {}depth = 1", "not ".repeat(n)),
        ] {
            let e = t.err(&line);
            assert!(
                e.contains("nested too deeply") && e.contains("at most 64") && !e.contains('\n'),
                "{}…: {e}",
                &line[..20]
            );
        }
        let ok = format!("{}depth = 1{}", "(".repeat(64), ")".repeat(64));
        assert!(t.ok(&format!("count pages where {ok}")).trim() == "0");
    }
}
