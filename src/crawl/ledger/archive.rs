//! The crawl's WARC output (`warc.dir`): a fetched page's records are
//! appended and handed to the system before the batch that records the
//! page, and the batch stores where they went (`warc` row). So after a
//! kill at any moment every page the db holds as fetched has its records
//! in a file; records of a page whose batch never landed are extra, not
//! missing. A payload already archived (a duplicate's, an unchanged
//! revisit's) is a revisit record referring to the first one.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::{Ledger, PageWrite};
use crate::crawl::worker::{PageData, PageJob, ParsedHtml};
use crate::model::UrlId;
use crate::schema::tables::Warc;
use crate::schema::{NearRecord, VerdictRecord, WarcRow};
use crate::settings::CrawlSettings;
use crate::store::StoreError;
use crate::warc::cdxj::mime_of;
use crate::warc::{Exchange, Placed, Profile, WarcWriter, recover_dir};

/// The open WARC output of a run.
pub(super) struct Archive {
    writer: WarcWriter,
    dir: PathBuf,
}

/// What the ledger knows of a response, for its records.
pub(super) struct Response<'a> {
    pub status: u16,
    pub content_type: &'a str,
    /// `metadata` record fields (`application/warc-fields` lines).
    pub metadata: String,
}

fn warc_error(path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Warc {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

impl Ledger {
    /// Starts WARC output when `warc.dir` is set: files a killed run left
    /// open there are closed first (cut back to their last whole record).
    pub(in crate::crawl) fn open_archive(&mut self) -> Result<(), StoreError> {
        let s = &self.settings.warc;
        let Some(dir) = s.dir.clone() else {
            return Ok(());
        };
        std::fs::create_dir_all(&dir).map_err(|e| warc_error(&dir, e))?;
        // Rows name files by absolute path: `page --warc` from anywhere.
        let dir = std::fs::canonicalize(&dir).map_err(|e| warc_error(&dir, e))?;
        for r in recover_dir(&dir, &s.prefix).map_err(|e| warc_error(&dir, e))? {
            self.notices.push(format!(
                "closed {} a killed crawl left open: {} records kept{}",
                r.file.display(),
                r.records,
                match r.cut {
                    0 => String::new(),
                    n => format!(", a torn last record of {n} bytes cut"),
                }
            ));
        }
        let writer = WarcWriter::new(&dir, &s.prefix, s.max_file_size, warcinfo(&self.settings))
            .map_err(|e| warc_error(&dir, e))?;
        self.archive = Some(Archive { writer, dir });
        Ok(())
    }

    /// Whether this run writes WARC.
    pub(in crate::crawl) fn archiving(&self) -> bool {
        self.archive.is_some()
    }

    /// Closes the open WARC file (synced, indexed, renamed).
    pub(in crate::crawl) fn close_archive(&mut self) -> Result<(), StoreError> {
        match &mut self.archive {
            Some(a) => a.writer.close().map_err(|e| warc_error(&a.dir, e)),
            None => Ok(()),
        }
    }

    /// A page's new fetch: a revisit record when `duplicate_of` is archived
    /// with the same payload, else its response; then its request and
    /// metadata.
    pub(super) fn archive_fetch(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        ex: &Exchange,
        resp: Response<'_>,
        duplicate_of: Option<UrlId>,
    ) -> Result<(), StoreError> {
        let first = match duplicate_of {
            Some(d) => self.store.row::<Warc>(&d)?,
            None => None,
        };
        let refers = first
            .filter(|f| f.digest == ex.payload_digest)
            .map(|f| (Profile::IdenticalPayload, original(f)));
        self.archive_as(w, job, ex, resp, refers)
    }

    /// A revisit that found the page unchanged: a revisit record of the
    /// archived version (server-not-modified for a 304), or a response
    /// when that version is not archived with the same payload.
    pub(super) fn archive_unchanged(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        data: &mut PageData,
    ) -> Result<(), StoreError> {
        let Some(ex) = data.exchange.take().filter(|_| self.archive.is_some()) else {
            return Ok(());
        };
        let resp = Response {
            status: data.fetched.status,
            content_type: &data.fetched.content_type,
            metadata: fetch_fields(job, data.parsed.as_ref()),
        };
        let ex = &*ex;
        let last = self.store.row::<Warc>(&job.url.id())?;
        let refers = match last {
            Some(l) if resp.status == 304 => Some((Profile::ServerNotModified, original(l))),
            Some(l) if l.digest == ex.payload_digest => {
                Some((Profile::IdenticalPayload, original(l)))
            }
            _ => None,
        };
        if resp.status == 304 && refers.is_none() {
            // Nothing archived to refer to: the 304 is kept as it came,
            // and the page has no row (no record here holds its body).
            return self.archive_records(ex, resp, None).map(|_| ());
        }
        self.archive_as(w, job, ex, resp, refers)
    }

    /// A robots.txt fetch's responses (each redirect hop's too): response
    /// and request records, no `warc` row (robots.txt is no page).
    pub(in crate::crawl) fn archive_robots(
        &mut self,
        exchanges: &[Exchange],
    ) -> Result<(), StoreError> {
        let Some(a) = self.archive.as_mut() else {
            return Ok(());
        };
        for ex in exchanges {
            let head = crate::warc::reader::http_head(&ex.response_head);
            let content_type = head.as_ref().and_then(|h| h.get("content-type"));
            let entry = ex.entry(
                mime_of(content_type.unwrap_or("")),
                head.as_ref().and_then(|h| h.status()),
                &ex.payload_digest,
            );
            let members = [
                (&ex.response_gz[..], Some(entry)),
                (&ex.request_gz[..], None),
            ];
            a.writer
                .append(members)
                .map_err(|e| warc_error(&a.dir, e))?;
        }
        if !exchanges.is_empty() {
            a.writer.flush().map_err(|e| warc_error(&a.dir, e))?;
        }
        Ok(())
    }

    /// Appends the records and puts the page's `warc` row in the batch.
    fn archive_as(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        ex: &Exchange,
        resp: Response<'_>,
        refers: Option<(Profile, Original)>,
    ) -> Result<(), StoreError> {
        let original = refers.as_ref().map(|(_, o)| o.clone());
        let Some((placed, digest)) = self.archive_records(ex, resp, refers)? else {
            return Ok(());
        };
        let row = WarcRow {
            url: ex.target.clone(),
            file: placed.path,
            offset: placed.offset,
            length: placed.length,
            date_ms: ex.date_ms,
            digest,
            refers_to: original.as_ref().map(|o| (o.url.clone(), o.date_ms)),
            refers_file: original.map(|o| o.file),
        };
        w.b.put_row::<Warc>(&job.url.id(), &row);
        Ok(())
    }

    /// Appends a fetch's response (or a revisit in its place), request
    /// and metadata records and hands them to the system; returns the
    /// where the response or revisit went, and its payload digest.
    fn archive_records(
        &mut self,
        ex: &Exchange,
        resp: Response<'_>,
        refers: Option<(Profile, Original)>,
    ) -> Result<Option<(Placed, String)>, StoreError> {
        let level = self.settings.warc.gzip_level;
        let Some(a) = self.archive.as_mut() else {
            return Ok(None);
        };
        // The response as the fetch task compressed it, not copied.
        let (main, digest, mime): (Cow<[u8]>, _, _) = match &refers {
            Some((profile, o)) => (
                ex.revisit(*profile, (&o.url, o.date_ms), &o.digest)
                    .gz_at(level)
                    .into(),
                &o.digest,
                "warc/revisit".to_string(),
            ),
            None => (
                ex.response_gz[..].into(),
                &ex.payload_digest,
                mime_of(resp.content_type),
            ),
        };
        let entry = ex.entry(mime, Some(resp.status), digest);
        let digest = digest.clone();
        let metadata = ex.metadata(resp.metadata).gz_at(level);
        let members = [
            (&main[..], Some(entry)),
            (&ex.request_gz[..], None),
            (&metadata[..], None),
        ];
        let placed = a
            .writer
            .append(members)
            .map_err(|e| warc_error(&a.dir, e))?;
        // In the file before the batch that records the page is written.
        a.writer.flush().map_err(|e| warc_error(&a.dir, e))?;
        Ok(Some((placed, digest)))
    }
}

/// The response record a revisit refers to.
#[derive(Clone)]
pub(super) struct Original {
    url: String,
    date_ms: u64,
    digest: String,
    /// The file that holds it.
    file: String,
}

/// The response a revisit of `row`'s record refers to: its own record,
/// or the one it refers to in turn.
fn original(row: WarcRow) -> Original {
    match (row.refers_to, row.refers_file) {
        (Some((url, date_ms)), Some(file)) => Original {
            url,
            date_ms,
            digest: row.digest,
            file,
        },
        _ => Original {
            url: row.url,
            date_ms: row.date_ms,
            digest: row.digest,
            file: row.file,
        },
    }
}

/// A fetch's `metadata` fields: its depth, crawl-order scores and
/// outlinks (an HTML page's).
pub(super) fn fetch_fields(job: &PageJob, parsed: Option<&ParsedHtml>) -> String {
    let s = crate::frontier::order::scores_of(&job.key, &job.entry);
    let mut f = format!(
        "depth: {}\r\nscore-inherited: {}\r\nscore-anchor: {}\r\nscore-url-shape: {}\r\nscore-backlinks: {}\r\nscore-model: {}\r\n",
        job.entry.depth, s.inherited, s.anchor, s.url_shape, s.backlinks, s.model
    );
    // Appended in place: a page may have thousands.
    for link in parsed.map_or(&[][..], |p| &p.page.links[..]) {
        f.push_str("outlink: ");
        f.push_str(link.url.as_str());
        f.push_str("\r\n");
    }
    f
}

/// What the filters and the near-duplicate search made of an HTML page.
pub(super) fn judged_fields(v: &VerdictRecord, near: Option<&NearRecord>) -> String {
    let mut f = format!("verdict: {}\r\n", v.verdict.name());
    if !v.verdict_detail.is_empty() {
        f += &format!(
            "verdict-detail: {}\r\n",
            v.verdict_detail.replace(['\r', '\n'], " ")
        );
    }
    if let Some(t) = v.topic_score {
        f += &format!("topic-score: {t}\r\n");
    }
    if let Some(r) = v.relevance {
        f += &format!("relevance: {r}\r\n");
    }
    if let Some(n) = near {
        f += &format!(
            "near-duplicate-cluster: {:032x}\r\nnear-duplicate-of: {:032x}\r\nnear-duplicate-distance: {}\r\n",
            n.cluster, n.of, n.distance
        );
    }
    f
}

/// The warcinfo fields of a run's files (after `software` and `format`).
fn warcinfo(s: &CrawlSettings) -> String {
    let mut f = format!(
        "operator: {}\r\nhttp-header-user-agent: {}\r\nrobots: obey\r\n",
        s.fetch.user_agent, s.fetch.user_agent
    );
    for (name, value) in s.summary() {
        f += &format!("trawl-{name}: {value}\r\n");
    }
    f
}
