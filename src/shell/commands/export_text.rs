//! `export text PATH [--format markdown|jsonl] [--raw] [--search QUERY]
//! [--where EXPR]`:
//! the stored pages' text for corpora, from the stored bodies (nothing is
//! refetched): as Markdown, each page under its title with its URL, fetch
//! time, date and author, its headings, lists, code and links kept; or as
//! JSONL records with the text. Denoised pages leave out what denoising
//! removed, unless `--raw`.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::{Value, json};

use super::export_table::{self, Options};
use super::page_scan;
use super::pages::{self, Emit, Output};
use crate::export::{Col, ColType, FileFormat, TableFile, Target, Written};
use crate::filter::denoise::{noise_of, removed};
use crate::schema::{DocRecord, PageRecord};
use crate::shell::error::{Result, bail};
use crate::shell::expr;
use crate::shell::fields::{self, Row};
use crate::shell::plan::IndexScan;
use crate::shell::reply::{Column, Reply};
use crate::shell::{Ctx, table};

pub(super) fn run(
    sh: &mut Ctx,
    path: std::path::PathBuf,
    rest: &str,
    base: usize,
) -> Result<Reply> {
    let o = export_table::options(rest, base)?;
    if o.fields.is_some() || o.text || o.hosts {
        bail!("export text takes --format markdown|jsonl, --raw, --search and --where");
    }
    let named = match o.format.as_deref() {
        Some(f) => f,
        None => guess(&path)?,
    };
    let target = Target::of(&path, Some(named))?;
    if !matches!(target.format, FileFormat::Markdown | FileFormat::Jsonl) {
        bail!("export text writes markdown or jsonl");
    }
    let started = Instant::now();
    let w = sh.reporting(|sh| write(sh, &target, &o))?;
    let secs = started.elapsed().as_secs_f64();
    Ok(export_table::wrote(
        &w.path,
        &[("pages", w.rows)],
        w.bytes,
        secs,
        "",
    ))
}

/// Markdown unless the name says JSONL; a table format's name is refused.
fn guess(path: &std::path::Path) -> Result<&'static str> {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let name = name.trim_end_matches(".gz").trim_end_matches(".zst");
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "jsonl" | "json" | "ndjson" => Ok("jsonl"),
        "csv" | "parquet" | "tsv" => {
            bail!("export text writes markdown or jsonl; name the file .md or .jsonl")
        }
        _ => Ok("markdown"),
    }
}

/// A JSONL record's fields.
const FIELDS: [(&str, ColType); 8] = [
    ("url", ColType::Text),
    ("title", ColType::Text),
    ("date", ColType::Text),
    ("author", ColType::Text),
    ("fetched_at", ColType::Int),
    ("status", ColType::Int),
    ("denoised", ColType::Bool),
    ("text", ColType::Text),
];

fn write(sh: &mut Ctx, target: &Target, o: &Options) -> Result<Written> {
    let cols = FIELDS
        .iter()
        .map(|(n, t)| Col {
            name: n.to_string(),
            ty: *t,
        })
        .collect();
    let mut file = TableFile::create(target, cols)?;
    let (src, base) = o.filter.clone().unwrap_or_default();
    let q = expr::parse_query(&src, base)?;
    if q.order.is_some() || q.limit.is_some() {
        bail!("export text: order by and limit do not apply; every matching page is written");
    }
    let markdown = target.format == FileFormat::Markdown;
    let raw = o.raw;
    let mut page = |sh: &mut Ctx, row: &Row, _: &[Value]| -> Result<()> {
        let (Some(p), Some(d)) = (row.record, row.doc) else {
            return Ok(());
        };
        let record = match markdown {
            true => markdown_of(p, d, raw),
            false => jsonl_of(p, d, raw),
        };
        if let Some(r) = record {
            file.row(&r)?;
            sh.progress(&format!(
                "export text: {} pages",
                table::thousands(file.rows())
            ));
        }
        Ok(())
    };
    let mut emit = Emit {
        columns: vec![Column::field("url")],
        all: false,
        record: true,
        row: &mut page,
    };
    // The pages a search finds, in id order, each checked by the filter.
    let plan = match &o.search {
        Some(query) => Some(IndexScan::Pages(super::search::all_pages(sh, query)?)),
        None => page_scan::index_plan(sh, &q)?,
    };
    pages::run_query_over(sh, &q, plan, Output::Stream, Some(&mut emit))?;
    Ok(file.finish()?)
}

/// The lines denoising removed from the page's visible `text` (none with
/// `raw` or when it was not denoised), whitespace collapsed.
fn noise_lines(text: &str, d: &DocRecord, raw: bool) -> HashSet<String> {
    let Some(dn) = d.denoise.as_ref().filter(|_| !raw) else {
        return HashSet::new();
    };
    removed(text, noise_of(&dn.noise))
        .into_iter()
        .map(|(_, line)| crate::parse::collapse(&line))
        .collect()
}

/// A JSONL record: metadata and the (denoised) text; None without text.
fn jsonl_of(p: &PageRecord, d: &DocRecord, raw: bool) -> Option<Vec<Value>> {
    let text = match raw {
        true => fields::raw_text(Some(p), Some(d)),
        false => fields::stored_text(Some(p), Some(d)),
    };
    if text.trim().is_empty() {
        return None;
    }
    let dn = d.denoise.as_ref();
    Some(vec![
        json!(p.url),
        json!(dn.map_or(d.title.as_str(), |x| x.title.as_str())),
        json!(dn.and_then(|x| x.date.clone())),
        json!(dn.and_then(|x| x.author.clone())),
        json!(p.fetched_ms),
        json!(p.status),
        json!(dn.is_some() && !raw),
        json!(text),
    ])
}

/// A page as a Markdown section; None when it has no stored text (none
/// was kept: noindex, no text in it), as for JSONL.
fn markdown_of(p: &PageRecord, d: &DocRecord, raw: bool) -> Option<Vec<Value>> {
    if !crate::parse::is_html(&p.content_type) {
        return jsonl_of(p, d, raw).map(|r| {
            let text = r[7].as_str().unwrap_or_default().to_string();
            vec![json!(section(p, d, &text))]
        });
    }
    // The body and its stored text from one decompression (a text too
    // large for the frame is in the doc).
    let (body, text) = p.body_and_text().ok()?;
    let text = text.unwrap_or_else(|| d.text.clone());
    if text.trim().is_empty() {
        return None;
    }
    let html = crate::parse::decode(&body, Some(&p.content_type)).text;
    let url = url::Url::parse(&p.url).ok()?;
    let md = crate::parse::markdown(&html, &url, &noise_lines(&text, d, raw));
    if md.trim().is_empty() {
        return None;
    }
    Some(vec![json!(section(p, d, &md))])
}

/// A page's section: its title, a line of what it is, its Markdown.
fn section(p: &PageRecord, d: &DocRecord, body: &str) -> String {
    let dn = d.denoise.as_ref();
    let title = dn.map_or(d.title.as_str(), |x| x.title.as_str());
    let title = if title.trim().is_empty() {
        p.url.as_str()
    } else {
        title
    };
    let mut about = vec![
        format!("<{}>", p.url),
        format!("fetched {} UTC", table::time(p.fetched_ms)),
    ];
    if let Some(date) = dn.and_then(|x| x.date.as_deref()) {
        about.push(format!("dated {date}"));
    }
    if let Some(author) = dn.and_then(|x| x.author.as_deref()) {
        about.push(format!("by {author}"));
    }
    format!(
        "# {}\n\n{}\n\n{}\n\n---\n\n",
        title.replace('\n', " "),
        about.join(" · "),
        body.trim()
    )
}
