//! `pages [where EXPR] [order by FIELD [desc]] [limit N]`: pages matching an
//! expression over the fields table. With a status or host term the page
//! index narrows the candidates (see `plan`); a count over the small `seen`
//! rows alone skips the page records. The walk is `page_scan`'s.

use super::page_scan::{Matched, Needs, RowReader, index_plan, scan};
use super::{Call, Command, Known, Run, Sub};
use crate::model::{UrlId, now_ms};
use crate::shell::error::{Result, bail};
use crate::shell::expr::{self, Query};
use crate::shell::fields::{self, Row};
use crate::shell::plan::IndexScan;
use crate::shell::render::Format;
use crate::shell::reply::{Column, Reply};
use crate::shell::{Ctx, rest_after_words, table};

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
        record: false,
        row: &mut to_sink,
    };
    run_query(sh, &q, out, Some(&mut emit))
}

/// Where streamed rows go as they are found.
pub(super) struct Emit<'e> {
    pub columns: Vec<Column>,
    /// Every column is read, not only those a human table shows.
    pub all: bool,
    /// The page record (body and text) is read for each row (`Row::record`).
    pub record: bool,
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
    run_query_over(sh, q, plan, out, emit)
}

/// [`run_query`] over the candidates `plan` gives (every page when None).
pub(super) fn run_query_over(
    sh: &mut Ctx,
    q: &Query,
    plan: Option<IndexScan>,
    out: Output,
    emit: Option<&mut Emit>,
) -> Result<Reply> {
    let found = scan(sh, q, plan.as_ref(), out, emit)?;
    // Like EXPLAIN: say when an index narrowed the scan.
    let index = match plan {
        Some(IndexScan::Pages(_)) => "search index",
        _ => "page index",
    };
    let via = match plan {
        Some(_) => format!(
            "; {} candidate{} from the {index}",
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
    let mut reader = RowReader::new(&sh.store, false);
    let mut cells = Vec::with_capacity(rows.len());
    for m in &mut rows {
        let id = UrlId::of(&m.page.url);
        needs.fill(&mut reader, id, &m.doc, &mut m.extra)?;
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
            None => c.value(fields::value(&c.name, row)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    /// A page record that does not decode costs its row its text, not the
    /// export: the other pages go out, the scan's facts still list it.
    #[test]
    fn a_corrupt_page_record_leaves_its_text_out_of_an_export() {
        let mut t = TestShell::crawled(2);
        let all: usize = t.ok("count pages").trim().parse().unwrap();
        let store = t.sh.store().clone();
        let (id, _) = store
            .rows::<crate::schema::tables::PageFacts>(&[])
            .next()
            .unwrap()
            .unwrap();
        let mut b = store.batch();
        b.put_raw(crate::schema::CF_PAGES, &id.to_bytes(), &[2, 0xff, 0xff]);
        b.write().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.jsonl");
        let said = t.ok(&format!("export text {}", out.display()));
        let lines = std::fs::read_to_string(&out).unwrap().lines().count();
        assert_eq!(lines, all - 1, "{said}");
        let csv = dir.path().join("p.csv");
        t.ok(&format!("export pages {} --text", csv.display()));
        assert!(std::fs::read_to_string(&csv).unwrap().lines().count() > all);
        assert_eq!(t.ok("count pages").trim(), all.to_string());
    }

    /// `text ~` reads each page's stored text, denoised as `export text`
    /// writes it: the same pages contain a word either way.
    #[test]
    fn text_matches_the_pages_export_text_writes_it_in() {
        let mut t = TestShell::crawled(3);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.jsonl");
        t.ok(&format!("export text {}", out.display()));
        let texts: Vec<String> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["text"].as_str().unwrap().to_lowercase()
            })
            .collect();
        let mut some = 0;
        for word in ["the", "archive", "论文", "今天", "no-such-word-here"] {
            let want = texts.iter().filter(|x| x.contains(word)).count();
            let got = t.ok(&format!("count pages where text ~ '{word}'"));
            assert_eq!(got.trim(), want.to_string(), "{word}");
            some += want;
        }
        assert!(some > 0, "the words are on some pages");
    }

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
