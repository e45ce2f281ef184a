//! `pages [where EXPR] [order by FIELD [desc]] [limit N]`: pages matching an
//! expression over the fields table. With a status or host term the page
//! index narrows the candidates (see `plan`); a count over the small `seen`
//! rows alone skips the page records.

use super::{Call, Command, Known, Run, Sub};
use crate::model::SeenState;
use crate::model::{UrlId, now_ms};
use crate::schema::tables::Pages;
use crate::schema::tables::{Ranks, Visits};
use crate::schema::{PageDoc, PageRecord};
use crate::shell::error::{Result, bail};
use crate::shell::expr::{self, Query};
use crate::shell::fields::{self, Extra, Reads, Row};
use crate::shell::plan::{self, IndexScan};
use crate::shell::render::Format;
use crate::shell::reply::{Column, Reply};
use crate::shell::{Ctx, rest_after_words, table};
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
    run: Run::Data(run),
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

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    // The expression is the raw text after the command word, so quoting
    // survives and errors can point at a column.
    let (rest, base) = rest_after_words(call.line, 1);
    query(sh, &rest, base, Output::Stream)
}

/// What a query prints.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Output {
    /// The number of matches.
    Count,
    /// Rows as they are found (no order).
    Stream,
    /// Rows collected, ordered and limited, then printed.
    Table,
    /// The matching pages' ids only, for a command that reads them again
    /// (`export`).
    Ids,
}

/// A matching page, with what its fields were read from.
struct Matched {
    page: PageRecord,
    doc: PageDoc,
    extra: Extra,
}

/// What a scan found.
#[derive(Default)]
struct Found {
    rows: Vec<Matched>,
    ids: Vec<UrlId>,
    count: u64,
    /// Candidates looked at.
    scanned: u64,
}

/// The page-index range that narrows `q`'s scan, when the index is whole
/// and the filter names a status or host.
fn index_plan(sh: &Ctx, q: &Query) -> Result<Option<IndexScan>> {
    let indexed = sh.store.page_index_complete()?;
    Ok(indexed.then(|| plan::index_scan(&q.filter)).flatten())
}

/// The ids of the pages `src` (a `where` expression, with an optional
/// limit) matches, in scan order.
pub(super) fn matching_ids(sh: &mut Ctx, src: &str, base: usize) -> Result<Vec<UrlId>> {
    let q = expr::parse_query(src, base)?;
    if q.order.is_some() {
        bail!("order by does not apply here: pages are taken in the order they are stored");
    }
    let plan = index_plan(sh, &q)?;
    Ok(scan(sh, &q, plan.as_ref(), Output::Ids, None)?.ids)
}

pub(super) fn query(sh: &mut Ctx, src: &str, base: usize, out: Output) -> Result<Reply> {
    let q = expr::parse_query(src, base)?;
    let out = if out == Output::Stream && q.order.is_some() {
        Output::Table
    } else {
        out
    };
    let columns = page_columns(None);
    let mut started = false;
    let mut to_sink = |sh: &mut Ctx, _: &Row, row: &[serde_json::Value]| -> Result<()> {
        sh.progress_done();
        if !std::mem::replace(&mut started, true) {
            sh.sink.begin(page_columns(None));
        }
        sh.sink.row(row);
        Ok(())
    };
    let mut emit = Emit {
        columns,
        all: sh.sink.format != Format::Table,
        row: &mut to_sink,
    };
    run_query(sh, &q, out, Some(&mut emit))
}

/// Where streamed rows go as they are found.
pub(super) struct Emit<'e> {
    pub columns: Vec<Column>,
    /// Every column is read, not only those a human table shows.
    pub all: bool,
    /// Called with each match: its records and its values.
    pub row: &'e mut RowSink<'e>,
}

/// What takes each streamed match.
pub(super) type RowSink<'e> = dyn FnMut(&mut Ctx, &Row, &[serde_json::Value]) -> Result<()> + 'e;

/// Runs a parsed query: counts, streams to `emit`, or collects a table.
pub(super) fn run_query(
    sh: &mut Ctx,
    q: &Query,
    out: Output,
    emit: Option<&mut Emit>,
) -> Result<Reply> {
    let plan = index_plan(sh, q)?;
    let found = scan(sh, q, plan.as_ref(), out, emit)?;
    // Like EXPLAIN: say when the page index narrowed the scan.
    let via = match plan {
        Some(_) => format!(
            "; {} candidate{} from the page index",
            table::thousands(found.scanned),
            plural(found.scanned)
        ),
        None => String::new(),
    };
    let done = format!("({} page{}{via})", found.count, plural(found.count));
    match out {
        Output::Count => Ok(Reply::count(found.count)),
        Output::Stream => Ok(Reply::streamed(page_columns(None)).note(done)),
        Output::Ids => Ok(Reply::text(done)),
        Output::Table => table_reply(sh, q, found.rows, &via),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Ordered, limited rows as a table.
fn table_reply(sh: &Ctx, q: &Query, mut rows: Vec<Matched>, via: &str) -> Result<Reply> {
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
    let columns = page_columns(q.order.map(|o| o.0));
    let needs = Needs::of(&|f| columns.iter().any(|c| c.name == f));
    let mut cells = Vec::with_capacity(rows.len());
    for m in &mut rows {
        let id = UrlId::of(&m.page.url);
        needs.fill(sh, id, &m.doc, &mut m.extra)?;
        cells.push(page_values(
            &columns,
            &Row::full(&m.page, &m.doc, &m.extra, now),
        ));
    }
    let done = format!("({} page{}{via})", rows.len(), plural(rows.len() as u64));
    Ok(Reply::table(columns, cells).note(done))
}

/// The fields of a page row the human table shows.
const SHOWN: [&str; 5] = ["status", "depth", "size", "title", "url"];

/// The fields a page row adds for machine formats.
const MORE: [&str; 11] = [
    "content_type",
    "fetched_at",
    "outlinks",
    "inlinks",
    "duplicate",
    "pagerank",
    "inherited",
    "anchor_score",
    "ib",
    "il",
    "model",
];

/// A page row's columns; a field it is ordered by is shown too, before
/// the URL.
fn page_columns(order: Option<&str>) -> Vec<Column> {
    let mut c: Vec<Column> = SHOWN.iter().map(|f| Column::field(f)).collect();
    c.extend(
        MORE.iter()
            .filter(|f| Some(**f) != order)
            .map(|f| Column::field(f).hidden()),
    );
    if let Some(f) = order.filter(|f| !SHOWN.contains(f)) {
        c.insert(SHOWN.len() - 1, Column::field(f));
    }
    c
}

/// A row's values under `columns` (all `pages where` fields).
pub(super) fn page_values(columns: &[Column], row: &Row) -> Vec<serde_json::Value> {
    columns
        .iter()
        .map(|c| match c.read {
            Some(read) => c.value(read(row)),
            None if c.name == "text" => serde_json::Value::from(page_text(row)),
            None => c.value(fields::value(&c.name, row)),
        })
        .collect()
}

/// The page's stored visible text, denoised when it was.
pub(super) fn page_text(row: &Row) -> String {
    let text = row
        .page
        .and_then(|p| p.frame_text().ok().flatten())
        .unwrap_or_else(|| row.doc.map_or(String::new(), |d| d.text.clone()));
    match row.doc.and_then(|d| d.denoise.as_ref()) {
        Some(d) => {
            crate::filter::denoise::clean_text(&text, crate::filter::denoise::noise_of(&d.noise))
        }
        None => text,
    }
}

/// What a page row needs read besides its records.
#[derive(Clone, Copy)]
pub(super) struct Needs {
    inlinks: bool,
    rank: bool,
    near: bool,
    scores: bool,
    visits: bool,
}

impl Needs {
    /// What the fields `named` says are used need.
    pub(super) fn of(named: &dyn Fn(&str) -> bool) -> Needs {
        let any = |r: Reads| fields::names_reading(r).into_iter().any(named);
        Needs {
            inlinks: named("inlinks"),
            rank: named("pagerank"),
            near: named("near_duplicate_of"),
            scores: any(Reads::Scores),
            visits: any(Reads::Visits),
        }
    }

    /// Reads what is needed and not read yet into `x` (in-links by one
    /// prefix scan: a scan's shared reader counts them faster).
    pub(super) fn fill(&self, sh: &Ctx, id: UrlId, doc: &PageDoc, x: &mut Extra) -> Result<()> {
        if self.inlinks && x.inlinks == 0 {
            x.inlinks = sh.store.inlinks_to(id)?.len() as u64;
        }
        if self.scores && x.scores.is_none() {
            x.scores = sh.store.seen(id)?.and_then(|s| s.scores);
        }
        if self.rank && x.pagerank.is_none() {
            x.pagerank = sh.store.row::<Ranks>(&id)?.map(|r| r.pagerank);
        }
        if self.near
            && x.near_of.is_none()
            && let Some(n) = doc.doc.near
        {
            x.near_of = sh.store.url(UrlId(n.of))?;
        }
        if self.visits && x.visits.is_none() {
            x.visits = sh.store.row::<Visits>(&id)?;
        }
        Ok(())
    }
}

/// Walks the candidates, evaluating the filter on each; streams, counts
/// or collects the matches.
fn scan(
    sh: &mut Ctx,
    q: &Query,
    plan: Option<&IndexScan>,
    out: Output,
    mut emit: Option<&mut Emit>,
) -> Result<Found> {
    let ScanReads {
        row: needs,
        filter: filter_needs,
        inlinks: needs_inlinks,
        light,
    } = ScanReads::of(q, plan.is_some(), out, emit.as_deref());
    let now = now_ms() as f64;
    let total = sh.store.counters()?.fetched;
    // Without an order, the scan stops at the limit.
    let early_stop = q.order.is_none().then_some(q.limit).flatten();
    let store = sh.store.clone();
    // A refetch that changed a page's status leaves it two index rows.
    let mut yielded = std::collections::HashSet::new();
    let mut found = Found::default();
    let unreadable = std::cell::Cell::new(0);
    let mut inlinks = needs_inlinks.then(|| store.inlinks()).transpose()?;
    for row in candidates(&store, plan, light, &unreadable) {
        tick(sh, plan.is_some(), &mut found, total)?;
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
        let mut extra = Extra {
            inlinks: match inlinks.as_mut() {
                Some(r) => r.count(id)?,
                None => 0,
            },
            ..Extra::default()
        };
        filter_needs.fill(sh, id, &doc, &mut extra)?;
        let row = Row::full(&page, &doc, &extra, now);
        if !q.filter.eval(&|f| fields::value(f, &row), now) {
            continue;
        }
        found.count += 1;
        match out {
            Output::Count => {}
            Output::Stream => {
                // Unordered rows go out as they are found.
                if let Some(e) = emit.as_mut() {
                    needs.fill(sh, id, &doc, &mut extra)?;
                    let row = Row::full(&page, &doc, &extra, now);
                    let values = page_values(&e.columns, &row);
                    (e.row)(sh, &row, &values)?;
                }
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

/// What a scan reads besides each candidate's page and document records.
struct ScanReads {
    /// For a streamed row's columns.
    row: Needs,
    /// For the filter and the order.
    filter: Needs,
    /// In-links counted by one shared reader, in key order (not by `Needs`).
    inlinks: bool,
    /// A count checked on the small rows alone (see `light_match`).
    light: bool,
}

impl ScanReads {
    fn of(q: &Query, indexed: bool, out: Output, emit: Option<&Emit>) -> ScanReads {
        // A streamed row reads what its columns need.
        let shown = |f: &str| {
            out == Output::Stream
                && emit.is_some_and(|e| e.columns.iter().any(|c| c.name == f && (c.shown || e.all)))
        };
        let named = |f: &str| q.filter.uses(f) || q.order.is_some_and(|o| o.0 == f);
        // A count over index candidates whose filter reads only what the
        // `seen` row (status, depth) and the `urls` row (url, host) hold is
        // checked there: small rows instead of the page's record and text
        // in blob files (`count pages where status = 200` over 1,000,004
        // pages took 255 s that way).
        let light = out == Output::Count
            && indexed
            && q.filter.uses_only(
                &[Reads::Seen, Reads::Scores]
                    .map(fields::names_reading)
                    .concat(),
            );
        ScanReads {
            row: Needs {
                inlinks: false,
                ..Needs::of(&|f| named(f) || shown(f))
            },
            filter: Needs {
                inlinks: false,
                ..Needs::of(&named)
            },
            inlinks: named("inlinks") || shown("inlinks"),
            light,
        }
    }
}

/// Counts a candidate: stops on Ctrl-C, shows progress every 1,024.
fn tick(sh: &mut Ctx, indexed: bool, found: &mut Found, total: u64) -> Result<()> {
    if sh.interrupted() {
        sh.progress_done();
        bail!("interrupted");
    }
    found.scanned += 1;
    if found.scanned.is_multiple_of(1024) {
        progress(sh, indexed, found.scanned, total, found.count);
    }
    Ok(())
}

fn progress(sh: &mut Ctx, indexed: bool, scanned: u64, total: u64, count: u64) {
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
fn light_match(sh: &Ctx, filter: &expr::Expr, id: UrlId, now: f64) -> Result<Option<bool>> {
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
