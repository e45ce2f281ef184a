//! `export pages|links|hosts|inlinks PATH [--fields a,b] [--format F]
//! [--text] [--where EXPR]`: a table of the db as a JSONL, CSV or Parquet
//! file (see `crate::export`), streamed as it is read: pages with every
//! field `pages where` knows, links with their anchors and verdicts,
//! hosts with their counts and rank, in-links as (page, linked from)
//! pairs.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::{Value, json};

use super::links::{link_columns, link_type_name};
use super::pages::{self, Emit, Output};
use crate::export::{Col, ColType, TableFile, Target, Written};
use crate::model::UrlId;
use crate::schema::tables::{HostRanks, Hosts};
use crate::shell::error::{Result, bail};
use crate::shell::expr;
use crate::shell::fields::FIELDS;
use crate::shell::reply::{Column, Kind, Reply, columns};
use crate::shell::{Ctx, table};

/// The tables `export` writes this way.
pub(super) const TABLES: [&str; 4] = ["pages", "links", "hosts", "inlinks"];

/// An export's options, from the text after PATH.
pub(super) struct Options {
    pub fields: Option<Vec<String>>,
    pub format: Option<String>,
    pub text: bool,
    /// `--hosts`: the host graph.
    pub hosts: bool,
    /// `--raw`: text as fetched, not denoised.
    pub raw: bool,
    /// `where EXPR` and the column it starts at, when given.
    pub filter: Option<(String, usize)>,
    /// `--search QUERY` (export text): the pages a search finds.
    pub search: Option<String>,
}

/// Reads `--fields`, `--format` and `--text` up to `--where`, whose
/// expression is the rest of the line.
pub(super) fn options(rest: &str, base: usize) -> Result<Options> {
    let mut o = Options {
        fields: None,
        format: None,
        text: false,
        hosts: false,
        raw: false,
        filter: None,
        search: None,
    };
    let mut at = 0;
    loop {
        let s = &rest[at..];
        let lead = s.len() - s.trim_start().len();
        let s = s.trim_start();
        if s.is_empty() {
            return Ok(o);
        }
        let word_end = s.find(char::is_whitespace).unwrap_or(s.len());
        let word = &s[..word_end];
        let after = s[word_end..].trim_start();
        let value = after.split_whitespace().next();
        let value_end = |v: &str| at + lead + (s.len() - after.len()) + v.len();
        match (word, value) {
            ("--where", _) => {
                let col = base + rest[..at + lead].chars().count() + 2;
                o.filter = Some((format!("where{}", &s[word_end..]), col));
                return Ok(o);
            }
            ("--text", _) => {
                o.text = true;
                at += lead + word_end;
            }
            ("--hosts", _) => {
                o.hosts = true;
                at += lead + word_end;
            }
            ("--raw", _) => {
                o.raw = true;
                at += lead + word_end;
            }
            ("--fields", Some(v)) => {
                o.fields = Some(v.split(',').map(|f| f.trim().to_string()).collect());
                at = value_end(v);
            }
            ("--format", Some(v)) => {
                o.format = Some(v.to_string());
                at = value_end(v);
            }
            ("--search", Some(_)) => {
                // One word, or a query in quotes.
                let (query, len) = match after.chars().next() {
                    Some(q @ ('\'' | '"')) => match after[1..].find(q) {
                        Some(end) => (after[1..end + 1].to_string(), end + 2),
                        None => bail!("--search: the query's quote is not closed"),
                    },
                    _ => {
                        let v = value.unwrap_or_default();
                        (v.to_string(), v.len())
                    }
                };
                o.search = Some(query);
                at += lead + (s.len() - after.len()) + len;
            }
            ("--fields" | "--format" | "--search", None) => bail!("{word} needs a value"),
            _ => bail!(
                "export: unknown option {word:?}; options are --fields a,b,c, --format F, --text, --hosts (graph), --raw and --search QUERY (text) and --where EXPR (last)"
            ),
        }
    }
}

pub(super) fn run(
    sh: &mut Ctx,
    what: &str,
    path: std::path::PathBuf,
    rest: &str,
    base: usize,
) -> Result<Reply> {
    let o = options(rest, base)?;
    if o.search.is_some() {
        bail!("--search applies to export text (the pages' text); this export takes --where");
    }
    if o.hosts || o.raw || (o.text && what != "pages") {
        bail!("--text is for export pages, --hosts for export graph and --raw for export text");
    }
    let target = Target::of(&path, o.format.as_deref())?;
    if target.format == crate::export::FileFormat::Markdown {
        bail!("export {what} writes jsonl, csv or parquet (markdown is for export text)");
    }
    let started = Instant::now();
    let written = sh.reporting(|sh| match what {
        "pages" => export_pages(sh, &target, &o),
        "links" => export_links(sh, &target, &o),
        "inlinks" => export_inlinks(sh, &target, &o),
        _ => export_hosts(sh, &target, &o),
    })?;
    let secs = started.elapsed().as_secs_f64();
    let rate = table::thousands((written.rows as f64 / secs.max(1e-9)) as u64);
    Ok(wrote(
        &written.path,
        &[("rows", written.rows)],
        written.bytes,
        secs,
        &format!(", {rate} rows/s"),
    ))
}

/// What an export wrote, for people and as a record: its path, counts
/// (`rows`, `nodes`…), bytes and seconds; `more` ends the human line.
pub(super) fn wrote(
    path: &std::path::Path,
    counts: &[(&str, u64)],
    bytes: u64,
    secs: f64,
    more: &str,
) -> Reply {
    let mut record = serde_json::Map::new();
    record.insert("path".into(), json!(path.display().to_string()));
    for (name, n) in counts {
        record.insert(name.to_string(), json!(n));
    }
    record.insert("bytes".into(), json!(bytes));
    record.insert("seconds".into(), json!(secs));
    let counted: Vec<String> = counts
        .iter()
        .map(|(name, n)| format!("{} {name}", table::thousands(*n)))
        .collect();
    Reply::record(
        format!(
            "wrote {} ({}, {}; {secs:.1} s{more})",
            path.display(),
            counted.join(", "),
            table::bytes(bytes)
        ),
        Value::Object(record),
    )
}

/// `all` narrowed to `--fields` (each named once, in the order given).
fn chosen(all: Vec<Column>, fields: &Option<Vec<String>>, what: &str) -> Result<Vec<Column>> {
    let Some(names) = fields else {
        return Ok(all);
    };
    let mut out = Vec::new();
    for n in names {
        let Some(c) = all.iter().find(|c| c.name == *n) else {
            let known: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
            let hint = crate::settings::nearest(n, known.iter().copied())
                .map_or(String::new(), |k| format!("did you mean {k}? "));
            bail!(
                "export {what}: no field {n:?}; {hint}fields: {}",
                known.join(", ")
            );
        };
        if !out.iter().any(|o: &Column| o.name == c.name) {
            out.push(c.clone());
        }
    }
    Ok(out)
}

/// The file's columns for the table's.
pub(super) fn file_columns(c: &[Column]) -> Vec<Col> {
    c.iter()
        .map(|c| Col {
            name: c.name.clone(),
            ty: match c.kind {
                Kind::Int | Kind::Bytes | Kind::Time => ColType::Int,
                Kind::Num | Kind::Ratio => ColType::Float,
                Kind::Bool => ColType::Bool,
                Kind::Text => ColType::Text,
            },
        })
        .collect()
}

fn export_pages(sh: &mut Ctx, target: &Target, o: &Options) -> Result<Written> {
    let all: Vec<Column> = FIELDS.iter().map(|f| Column::field(f.name)).collect();
    let mut columns = chosen(all, &o.fields, "pages")?;
    // The text (the last field) only when asked for: it is most of the bytes.
    match (&o.fields, o.text) {
        (None, false) => columns.retain(|c| c.name != "text"),
        (Some(_), true) if !columns.iter().any(|c| c.name == "text") => {
            columns.push(Column::field("text"));
        }
        _ => {}
    }
    let (src, base) = o.filter.clone().unwrap_or_default();
    let q = expr::parse_query(&src, base)?;
    if q.order.is_some() || q.limit.is_some() {
        bail!("export pages: order by and limit do not apply; every matching page is written");
    }
    let mut file = TableFile::create(target, file_columns(&columns))?;
    let mut write = |sh: &mut Ctx, _: &crate::shell::fields::Row, row: &[Value]| -> Result<()> {
        file.row(row)?;
        if file.rows().is_multiple_of(4096) {
            sh.progress(&format!(
                "export pages: {} rows written",
                table::thousands(file.rows())
            ));
        }
        Ok(())
    };
    let mut emit = Emit {
        columns,
        all: true,
        record: false,
        row: &mut write,
    };
    pages::run_query(sh, &q, Output::Stream, Some(&mut emit))?;
    Ok(file.finish()?)
}

/// The pages `--where` picks (None: all), for links and in-links.
pub(super) fn picked(sh: &mut Ctx, o: &Options) -> Result<Option<HashSet<UrlId>>> {
    match &o.filter {
        None => Ok(None),
        Some((src, base)) => Ok(Some(
            pages::matching_ids(sh, src, *base)?.into_iter().collect(),
        )),
    }
}

fn export_links(sh: &mut Ctx, target: &Target, o: &Options) -> Result<Written> {
    let mut all = vec![Column::new("from", Kind::Text)];
    all.extend(link_columns().into_iter().map(|mut c| {
        c.shown = true;
        c
    }));
    let columns = chosen(all.clone(), &o.fields, "links")?;
    let pick: Vec<usize> = columns
        .iter()
        .map(|c| all.iter().position(|a| a.name == c.name).unwrap_or(0))
        .collect();
    let only = picked(sh, o)?;
    let mut file = TableFile::create(target, file_columns(&columns))?;
    let store = sh.store.clone();
    let (mut failed, mut stopped, mut unreadable) = (None, false, 0u64);
    store.each_page_links_while(|src, links| {
        if sh.interrupted() {
            return (stopped = true, false).1;
        }
        if only.as_ref().is_some_and(|s| !s.contains(&src)) {
            return true;
        }
        let Ok(links) = links else {
            unreadable += 1;
            return true;
        };
        let from = match store.url(src) {
            Ok(u) => u.unwrap_or_else(|| src.to_string()),
            Err(e) => return (failed = Some(e.to_string()), false).1,
        };
        for (_, l) in &links {
            let row = [
                json!(from),
                json!(l.anchor),
                json!(link_type_name(l.link_type)),
                json!(l.verdict.name()),
                json!(l.dst_url),
                json!(l.before),
                json!(l.after),
                json!(l.nofollow),
                json!(l.verdict_detail),
            ];
            let cells: Vec<Value> = pick.iter().map(|i| row[*i].clone()).collect();
            if let Err(e) = file.row(&cells) {
                return (failed = Some(e), false).1;
            }
        }
        sh.progress(&format!(
            "export links: {} rows written",
            table::thousands(file.rows())
        ));
        true
    })?;
    finish(file, failed, stopped, unreadable)
}

fn export_inlinks(sh: &mut Ctx, target: &Target, o: &Options) -> Result<Written> {
    let all = columns(&[("url", Kind::Text), ("from", Kind::Text)]);
    let columns = chosen(all.clone(), &o.fields, "inlinks")?;
    let only = picked(sh, o)?;
    let mut file = TableFile::create(target, file_columns(&columns))?;
    let store = sh.store.clone();
    let mut reader = store.all_inlinks()?;
    let mut stopped = false;
    while let Some((dst, sources)) = reader.next_target()? {
        if sh.interrupted() {
            stopped = true;
            break;
        }
        if only.as_ref().is_some_and(|s| !s.contains(&dst)) {
            continue;
        }
        let url = store.url(dst)?.unwrap_or_else(|| dst.to_string());
        for (src, from) in sources.iter().zip(store.urls_many(&sources)?) {
            let from = from.unwrap_or_else(|| src.to_string());
            let cells: Vec<Value> = columns
                .iter()
                .map(|c| {
                    if c.name == "url" {
                        json!(url)
                    } else {
                        json!(from)
                    }
                })
                .collect();
            file.row(&cells)?;
        }
        sh.progress(&format!(
            "export inlinks: {} rows written",
            table::thousands(file.rows())
        ));
    }
    finish(file, None, stopped, 0)
}

fn export_hosts(sh: &mut Ctx, target: &Target, o: &Options) -> Result<Written> {
    if o.filter.is_some() || o.text {
        bail!("export hosts takes --fields and --format only (filter the file where you read it)");
    }
    let all = columns(&[
        ("host", Kind::Text),
        ("pages", Kind::Int),
        ("errors", Kind::Int),
        ("queued", Kind::Int),
        ("urls", Kind::Int),
        ("error_streak", Kind::Int),
        ("crawl_delay_ms", Kind::Int),
        ("next_fetch_at", Kind::Time),
        ("host_rank", Kind::Num),
    ]);
    let columns = chosen(all, &o.fields, "hosts")?;
    let mut file = TableFile::create(target, file_columns(&columns))?;
    let store = sh.store.clone();
    let mut rows = store.rows::<Hosts>(&[]);
    let mut stopped = false;
    for row in rows.by_ref() {
        let (id, h) = row?;
        let rank = store.row::<HostRanks>(&id)?.map(|r| r.rank);
        let cells: Vec<Value> = columns
            .iter()
            .map(|c| match c.name.as_str() {
                "host" => json!(h.origin),
                "pages" => json!(h.fetched),
                "errors" => json!(h.errors),
                "queued" => json!(h.queued),
                "urls" => json!(h.urls),
                "error_streak" => json!(h.error_streak),
                "crawl_delay_ms" => json!(h.crawl_delay_ms),
                "next_fetch_at" => json!(h.next_fetch_ms),
                _ => json!(rank),
            })
            .collect();
        file.row(&cells)?;
        if sh.interrupted() {
            stopped = true;
            break;
        }
    }
    let unreadable = rows.unreadable();
    finish(file, None, stopped, unreadable)
}

/// Renames a whole file into place, or drops it (removing the partial
/// file) after an error or Ctrl-C.
fn finish(
    file: TableFile,
    failed: Option<String>,
    stopped: bool,
    unreadable: u64,
) -> Result<Written> {
    if let Some(e) = failed {
        bail!("{e}");
    }
    if stopped {
        bail!("interrupted: nothing was written (the partial file is removed)");
    }
    crate::shell::lookup::unreadable(unreadable);
    Ok(file.finish()?)
}
