//! `export warc PATH [--where EXPR]`: the stored pages as a WARC 1.1 file,
//! for crawls made without WARC output. The db keeps each body decoded,
//! so a response record carries the stored body with `Content-Encoding`
//! and `Transfer-Encoding` dropped and `Content-Length` set to its length,
//! as the warcinfo record says; a page whose body repeats an earlier
//! page's is a revisit record of it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

use super::pages::matching_ids;
use super::{Call, Command, Known, Run, no_detail};
use crate::export::partial_of;
use crate::model::{UrlId, now_ms};
use crate::schema::PageRecord;
use crate::schema::tables::{Docs, Pages};
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, rest_after_words, table};
use crate::warc::{Record, RecordType, http_block};

pub const COMMAND: Command = Command {
    name: "export",
    usage: "export pages|links|hosts|inlinks|graph|text|warc|wacz PATH [--fields a,b,c] [--format F] [--text] [--hosts] [--raw] [--search QUERY] [--where EXPR]",
    summary: "a table of the db (pages with every field pages where knows, links, hosts, in-links) as JSONL, CSV or Parquet (.gz/.zst compress), the link graph (pages, or --hosts) as GraphML, GEXF, an edge list or DOT, the pages' text as Markdown or JSONL for corpora, or the stored pages as a WARC 1.1 file or WACZ package (--text: with the pages' text)",
    examples: &[
        "export pages pages.jsonl",
        "export pages docs.csv.gz --fields url,status,title,pagerank --where host = 'docs.example.org'",
        "export links links.parquet",
        "export graph hosts.gexf --hosts",
        "export text corpus.md --where verdict = 'keep'",
        "export warc crawl.warc.gz",
        "export warc docs.warc.gz --where host = 'docs.example.org' and status = 200",
        "export wacz crawl.wacz --text",
    ],
    arity: (2, None),
    subs: &[],
    writes: false,
    complete,
    detail: no_detail,
    run: Run::Data(run),
};

const IDENTICAL_PAYLOAD: &str = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

fn complete(_: &Known, args: &[&str]) -> Vec<String> {
    match args {
        [] => super::words(&[
            "pages", "links", "hosts", "inlinks", "graph", "text", "warc", "wacz",
        ]),
        ["text", _] => super::words(&["--format", "--raw", "--where"]),
        ["graph", _] => super::words(&["--format", "--hosts", "--where"]),
        [w, _] if super::export_table::TABLES.contains(w) => {
            super::words(&["--fields", "--format", "--text", "--where"])
        }
        [_, _] => vec!["--where".into()],
        _ => Vec::new(),
    }
}

/// What an export wrote.
#[derive(Default)]
pub(super) struct Written {
    responses: u64,
    revisits: u64,
    bytes: u64,
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let format = call.args[0];
    let path = PathBuf::from(call.args[1]);
    if super::export_table::TABLES.contains(&format) {
        let (rest, base) = rest_after_words(call.line, 3);
        return super::export_table::run(sh, format, path, &rest, base);
    }
    if format == "text" {
        let (rest, base) = rest_after_words(call.line, 3);
        return super::export_text::run(sh, path, &rest, base);
    }
    if format == "graph" {
        let (rest, base) = rest_after_words(call.line, 3);
        return super::export_graph::run(sh, path, &rest, base);
    }
    if format != "warc" && format != "wacz" {
        bail!(
            "export: {format:?} is not something to export; export pages|links|hosts|inlinks|graph|text|warc|wacz PATH"
        );
    }
    if path.exists() {
        bail!("{} exists; give export a new file name", path.display());
    }
    let (rest, base) = rest_after_words(call.line, 3);
    // `--text` right after PATH or at the end, never inside the
    // expression (`--where title ~ "--text"` keeps its operand).
    let (text, rest, base) = match format {
        "wacz" => take_flag(rest, base, "--text"),
        _ => (false, rest, base),
    };
    // `--where EXPR`, as the other exports write it, is `where EXPR`.
    let (rest, base) = match rest.trim_start().strip_prefix("--where") {
        Some(expr) => (
            format!("where{expr}"),
            base + rest.len() - rest.trim_start().len() + 2,
        ),
        None => (rest, base),
    };
    let ids = match rest.trim() {
        "" => None,
        _ => Some(matching_ids(sh, &rest, base)?),
    };
    if format == "wacz" {
        return super::export_wacz::run(sh, path, ids, text);
    }
    // Written beside it and renamed when whole: PATH never holds half a file.
    let partial = partial_of(&path);
    let file =
        File::create(&partial).map_err(|e| format!("cannot create {}: {e}", partial.display()))?;
    let mut out = BufWriter::new(file);
    let written = write_warc(sh, &mut out, &partial, ids)
        .and_then(|w| {
            out.flush().map_err(|e| io_error(&partial, e))?;
            Ok(w)
        })
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&partial);
        })?;
    std::fs::rename(&partial, &path).map_err(|e| io_error(&path, e))?;
    let pages = written.responses + written.revisits;
    Ok(Reply::record(
        format!(
            "wrote {} ({} pages: {} responses, {} revisits; {})",
            path.display(),
            table::thousands(pages),
            table::thousands(written.responses),
            table::thousands(written.revisits),
            table::bytes(written.bytes)
        ),
        json!({"path": path.display().to_string(), "pages": pages, "responses": written.responses,
            "revisits": written.revisits, "bytes": written.bytes}),
    ))
}

/// `flag` as the first or last word of `rest` (which starts at column
/// `base` of the line): whether it was there, and `rest` without it.
fn take_flag(rest: String, base: usize, flag: &str) -> (bool, String, usize) {
    let lead = rest.len() - rest.trim_start().len();
    if let Some(after) = rest.trim_start().strip_prefix(flag)
        && (after.is_empty() || after.starts_with(char::is_whitespace))
    {
        return (true, after.to_string(), base + lead + flag.len());
    }
    match rest.trim_end().strip_suffix(flag) {
        Some(before) if before.is_empty() || before.ends_with(char::is_whitespace) => {
            (true, before.to_string(), base)
        }
        _ => (false, rest, base),
    }
}

pub(super) fn io_error(path: &Path, e: std::io::Error) -> ShellError {
    format!("writing {}: {e}", path.display()).into()
}

/// The warcinfo record, then a record for each page of `ids` (every page
/// when None).
pub(super) fn write_warc(
    sh: &mut Ctx,
    out: &mut impl Write,
    file: &Path,
    ids: Option<Vec<UrlId>>,
) -> Result<Written> {
    let info = warcinfo(sh);
    let mut w = Written::default();
    w.bytes += info.write_gz(out).map_err(|e| io_error(file, e))?;
    let total = match &ids {
        Some(ids) => ids.len() as u64,
        None => sh.store.counters()?.fetched,
    };
    let mut done = 0u64;
    let mut each = |sh: &mut Ctx, id: UrlId, page: PageRecord, w: &mut Written| -> Result<()> {
        if sh.interrupted() {
            bail!("interrupted; nothing written");
        }
        let record = page_record(sh, id, &page, info.id())?;
        if record.1 {
            w.revisits += 1;
        } else {
            w.responses += 1;
        }
        w.bytes += record.0.write_gz(out).map_err(|e| io_error(file, e))?;
        done += 1;
        if done.is_multiple_of(256) {
            sh.progress(&format!(
                "exporting: {} of {} pages",
                table::thousands(done),
                table::thousands(total)
            ));
        }
        Ok(())
    };
    match ids {
        Some(ids) => {
            for id in ids {
                if let Some(page) = sh.store.page(id)? {
                    each(sh, id, page, &mut w)?;
                }
            }
        }
        None => {
            let store = sh.store.clone();
            let mut rows = store.rows::<Pages>(&[]);
            for row in rows.by_ref() {
                let (id, page) = row?;
                each(sh, id, page, &mut w)?;
            }
            crate::shell::lookup::unreadable(rows.unreadable());
        }
    }
    sh.progress_done();
    Ok(w)
}

fn warcinfo(sh: &Ctx) -> Record {
    let fields = format!(
        "software: trawl/{}\r\nformat: WARC File Format 1.1\r\nconformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\nisPartOf: {}\r\ndescription: exported from a trawl db; the db keeps bodies decoded, so each response carries the stored body, Content-Encoding and Transfer-Encoding dropped and Content-Length set to its length\r\n",
        env!("CARGO_PKG_VERSION"),
        sh.store.path().display()
    );
    Record::new(
        RecordType::Warcinfo,
        now_ms(),
        "application/warc-fields",
        fields.into_bytes(),
    )
}

/// A page's record: a response, or a revisit of the first page with the
/// same body (true).
fn page_record(sh: &Ctx, id: UrlId, page: &PageRecord, info: &str) -> Result<(Record, bool)> {
    let body = page
        .body()
        .map_err(|e| format!("{}: stored body unreadable: {e}", page.url))?;
    let status = http::StatusCode::from_u16(page.status).ok();
    let reason = status.and_then(|s| s.canonical_reason()).unwrap_or("");
    let start = format!("HTTP/1.1 {} {reason}", page.status);
    let mut headers: Vec<(String, String)> = (page.headers.iter())
        .filter(|(n, _)| {
            !["content-encoding", "transfer-encoding", "content-length"]
                .iter()
                .any(|h| n.eq_ignore_ascii_case(h))
        })
        .cloned()
        .collect();
    headers.push(("Content-Length".into(), body.len().to_string()));
    // The doc alone: its verdict row is not needed here.
    let first = (sh.store.row::<Docs>(&id)?).and_then(|d| d.duplicate_of.map(UrlId));
    let original = match first {
        Some(id) => sh.store.page(id)?,
        None => None,
    };
    let (kind, msgtype_block, revisit) = match &original {
        Some(_) => (RecordType::Revisit, http_block(&start, &headers, b""), true),
        None => (
            RecordType::Response,
            http_block(&start, &headers, &body),
            false,
        ),
    };
    let mut r = Record::new(
        kind,
        page.fetched_ms,
        "application/http;msgtype=response",
        msgtype_block,
    )
    .field("WARC-Target-URI", &page.url)
    .field("WARC-Warcinfo-ID", info);
    if let Some(o) = &original {
        r = r
            .field("WARC-Profile", IDENTICAL_PAYLOAD)
            .field("WARC-Refers-To-Target-URI", &o.url)
            .field(
                "WARC-Refers-To-Date",
                &crate::model::Utc::of_ms(o.fetched_ms).iso_millis(),
            );
    }
    if page.truncated {
        r = r.field("WARC-Truncated", "length");
    }
    Ok((r.payload(&body), revisit))
}

#[cfg(test)]
mod tests {
    use super::take_flag;

    #[test]
    fn a_flag_is_taken_first_or_last_never_from_inside_the_expression() {
        let take = |rest: &str| take_flag(rest.to_string(), 10, "--text");
        assert_eq!(
            take(" --text --where a = 1"),
            (true, " --where a = 1".into(), 17)
        );
        assert_eq!(
            take(" --where a = 1 --text"),
            (true, " --where a = 1 ".into(), 10)
        );
        let quoted = " --where title ~ \"--text\"";
        assert_eq!(take(quoted), (false, quoted.into(), 10));
        assert_eq!(take(" --textual"), (false, " --textual".into(), 10));
        assert_eq!(take(" --text"), (true, "".into(), 17));
    }
}
