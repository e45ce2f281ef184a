//! `export wacz PATH [--where EXPR] [--text]`: the stored pages packaged
//! as WACZ. Its WARC files are the crawl's own (`warc.dir`) when every
//! page chosen was archived while crawling and its files are closed,
//! whole, else the stored pages written as WARC as `export warc` writes
//! them; its CDXJ index is made by reading those files back.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

use super::export::{io_error, write_warc};
use crate::export::partial_of;
use crate::model::{UrlId, Utc};
use crate::schema::tables::{Pages, Warc};
use crate::shell::error::{Result, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};
use crate::warc::reader::Members;
use crate::warc::{WaczWriter, entry_of};

/// Largest record read back when indexing a file.
const INDEX_CAP: usize = 1 << 30;

pub(super) fn run(
    sh: &mut Ctx,
    path: PathBuf,
    ids: Option<Vec<UrlId>>,
    text: bool,
) -> Result<Reply> {
    let partial = partial_of(&path);
    let made = package(sh, &partial, ids, text).inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })?;
    std::fs::rename(&partial, &path).map_err(|e| io_error(&path, e))?;
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    Ok(Reply::record(
        format!(
            "wrote {} ({} WARC file{} from {}, {} index lines, {} pages listed; {})",
            path.display(),
            made.warcs,
            if made.warcs == 1 { "" } else { "s" },
            made.source,
            table::thousands(made.lines),
            table::thousands(made.pages),
            table::bytes(bytes)
        ),
        json!({"path": path.display().to_string(), "warc_files": made.warcs, "source": made.source,
            "index_lines": made.lines, "pages": made.pages, "bytes": bytes}),
    ))
}

/// What went into a package.
struct Made {
    warcs: usize,
    /// `the crawl's WARC` or `the stored pages`.
    source: &'static str,
    lines: u64,
    pages: u64,
}

fn package(sh: &mut Ctx, out: &Path, ids: Option<Vec<UrlId>>, text: bool) -> Result<Made> {
    let ids = match ids {
        Some(ids) => ids,
        None => all_pages(sh)?,
    };
    let mut wacz = WaczWriter::create(out).map_err(|e| io_error(out, e))?;
    // The WARC files, each under archive/ by its own name.
    let (files, source, scratch) = match crawl_files(sh, &ids)? {
        Some(files) => (files, "the crawl's WARC", None),
        None => {
            let tmp = PathBuf::from(format!("{}.warc.gz", out.display()));
            let mut w = std::io::BufWriter::new(File::create(&tmp).map_err(|e| io_error(&tmp, e))?);
            let wrote = write_warc(sh, &mut w, &tmp, Some(ids.clone()));
            let flushed = w.flush().map_err(|e| io_error(&tmp, e));
            if let Err(e) = wrote.and(flushed) {
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
            (vec![tmp.clone()], "the stored pages", Some(tmp))
        }
    };
    let result = add_files(sh, &mut wacz, &files, scratch.is_some());
    if let Some(tmp) = &scratch {
        let _ = std::fs::remove_file(tmp);
    }
    let lines = result?;
    let (pages, main) = add_pages(sh, &mut wacz, &ids, text, out)?;
    let title = format!("trawl crawl of {}", sh.store.path().display());
    wacz.finish(&title, main.as_ref().map(|(u, ms)| (u.as_str(), *ms)))
        .map_err(|e| io_error(out, e))?;
    Ok(Made {
        warcs: files.len(),
        source,
        lines,
        pages,
    })
}

/// Every stored page's id.
fn all_pages(sh: &Ctx) -> Result<Vec<UrlId>> {
    let mut ids = Vec::new();
    let mut rows = sh.store.rows::<Pages>(&[]);
    for row in rows.by_ref() {
        ids.push(row?.0);
    }
    crate::shell::lookup::unreadable(rows.unreadable());
    Ok(ids)
}

/// The crawl's WARC files holding `ids`' latest records and the
/// responses their revisits refer to, when each is in a closed file (a
/// crawl still writing a file has it `.open`).
fn crawl_files(sh: &Ctx, ids: &[UrlId]) -> Result<Option<Vec<PathBuf>>> {
    let mut files = BTreeSet::new();
    for id in ids {
        let Some(row) = sh.store.row::<Warc>(id)? else {
            return Ok(None);
        };
        for f in std::iter::once(row.file).chain(row.refers_file) {
            if !Path::new(&f).is_file() {
                return Ok(None);
            }
            files.insert(PathBuf::from(f));
        }
    }
    Ok((!files.is_empty()).then(|| files.into_iter().collect()))
}

/// Adds `files` under `archive/` (a scratch file as `data.warc.gz`) and
/// their index as `indexes/index.cdx`; returns the index's lines.
fn add_files(sh: &mut Ctx, wacz: &mut WaczWriter, files: &[PathBuf], scratch: bool) -> Result<u64> {
    let mut lines = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let name = match scratch {
            true => "data.warc.gz".to_string(),
            false => f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        sh.progress(&format!("indexing {} of {} WARC files", i + 1, files.len()));
        let file = File::open(f).map_err(|e| io_error(f, e))?;
        for m in Members::new(BufReader::new(file), INDEX_CAP) {
            if sh.interrupted() {
                bail!("interrupted; nothing written");
            }
            let Ok(bytes) = m.outcome else {
                bail!(
                    "{}: a record at offset {} cannot be read",
                    f.display(),
                    m.offset
                );
            };
            if let Some(e) = entry_of(&bytes, m.offset, m.length) {
                lines.push(e.line(&name));
            }
        }
        let mut from = File::open(f).map_err(|e| io_error(f, e))?;
        wacz.add(&format!("archive/{name}"), &mut from)
            .map_err(|e| io_error(f, e))?;
    }
    sh.progress_done();
    lines.sort_unstable();
    let mut index = lines.join("\n");
    if !index.is_empty() {
        index.push('\n');
    }
    wacz.add("indexes/index.cdx", &mut index.as_bytes())
        .map_err(|e| format!("writing the index: {e}"))?;
    Ok(lines.len() as u64)
}

/// `pages/pages.jsonl`: each HTML page with a 2xx status, with its text
/// when asked; returns how many and the first (the package's main page).
fn add_pages(
    sh: &mut Ctx,
    wacz: &mut WaczWriter,
    ids: &[UrlId],
    text: bool,
    out: &Path,
) -> Result<(u64, Option<(String, u64)>)> {
    // Streamed to a file beside the package (a page list with text can
    // be larger than memory should hold), then added.
    let tmp = PathBuf::from(format!("{}.pages.jsonl", out.display()));
    let listed = write_pages(sh, &tmp, ids, text);
    let added = listed.and_then(|listed| {
        let mut from = File::open(&tmp).map_err(|e| io_error(&tmp, e))?;
        wacz.add("pages/pages.jsonl", &mut from)
            .map_err(|e| io_error(out, e))?;
        Ok(listed)
    });
    let _ = std::fs::remove_file(&tmp);
    added
}

/// Writes the page list to `tmp`.
fn write_pages(
    sh: &mut Ctx,
    tmp: &Path,
    ids: &[UrlId],
    text: bool,
) -> Result<(u64, Option<(String, u64)>)> {
    let mut w = std::io::BufWriter::new(File::create(tmp).map_err(|e| io_error(tmp, e))?);
    let header = json!({
        "format": "json-pages-1.0", "id": "pages", "title": "All Pages", "hasText": text,
    });
    writeln!(w, "{header}").map_err(|e| io_error(tmp, e))?;
    let (mut n, mut main) = (0u64, None);
    for id in ids {
        if sh.interrupted() {
            bail!("interrupted; nothing written");
        }
        let Some(page) = sh.store.page(*id)? else {
            continue;
        };
        if !(200..300).contains(&page.status) || !crate::parse::is_html(&page.content_type) {
            continue;
        }
        let doc = match text {
            true => sh.store.doc_with_text(*id)?,
            false => sh.store.doc(*id)?,
        };
        let mut line = json!({
            "id": format!("{:032x}", id.0),
            "url": page.url,
            "ts": Utc::of_ms(page.fetched_ms).iso_millis(),
            "title": doc.as_ref().map(|d| d.doc.title.clone()).unwrap_or_default(),
        });
        if let (true, Some(d)) = (text, &doc) {
            line["text"] = json!(d.doc.text);
        }
        writeln!(w, "{line}").map_err(|e| io_error(tmp, e))?;
        main.get_or_insert((page.url.clone(), page.fetched_ms));
        n += 1;
    }
    w.flush().map_err(|e| io_error(tmp, e))?;
    Ok((n, main))
}
