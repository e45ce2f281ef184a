//! `import warc`: another crawler's archive (Heritrix, wget, Browsertrix,
//! trawl's own) loaded into a db as if this crawl had fetched its pages.
//! A first pass reads every file's records for the hosts they hold (which
//! join the scope, so links between them are followed as a crawl of them
//! would follow them) and the work ahead; the second stores each response
//! through the same steps as a fetch — decoding, parsing, the ledger's
//! commit — at the time the archive gives. A revisit takes its payload
//! from the response it repeats, read again from its file.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::ledger::Ledger;
use super::worker::{PageJob, process};
use crate::fetch::{FetchError, Fetched, decode_body};
use crate::model::{self, CanonicalUrl, FailReason, HostId};
use crate::schema::dictionary::Dictionary;
use crate::settings::CrawlSettings;
use crate::store::{Store, StoreError};
use crate::warc::capture::{self, Capture};
use crate::warc::records::{Item, RawRecord, WarcRecords};

/// Malformed records told one by one in the report; the rest counted.
const MALFORMED_SHOWN: usize = 20;

/// Pages between the ledger's housekeeping and progress calls.
const STEP: u64 = 256;

/// Where an import is, for a progress line: bytes of the files read in
/// this pass, of how many, and pages stored.
pub struct ImportProgress {
    pub pass: u8,
    pub bytes: u64,
    pub total: u64,
    pub stored: u64,
}

/// What an import did.
#[derive(Default, Debug)]
pub struct ImportReport {
    pub files: usize,
    pub records: u64,
    pub stored: u64,
    /// Captures stored as failed fetches.
    pub failed: u64,
    /// Records not stored, by why.
    pub skipped: BTreeMap<String, u64>,
    pub malformed: u64,
    /// The first malformed records: `FILE at OFFSET: why`.
    pub malformed_shown: Vec<String>,
    /// Hosts the import brought into the scope.
    pub hosts_added: u64,
    pub interrupted: bool,
    pub elapsed: Duration,
    pub notices: Vec<String>,
}

impl ImportReport {
    fn skip(&mut self, why: impl Into<String>) {
        *self.skipped.entry(why.into()).or_insert(0) += 1;
    }

    fn malformed(&mut self, file: &Path, offset: u64, why: &str) {
        self.malformed += 1;
        if self.malformed_shown.len() < MALFORMED_SHOWN {
            let f = file.display();
            self.malformed_shown.push(format!("{f} at {offset}: {why}"));
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {0}: {1}")]
    File(PathBuf, std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What became of one record.
enum Outcome {
    Stored,
    /// Stored as a failed fetch (a body that does not decode as its
    /// Content-Encoding says).
    Failed,
    Skipped(String),
    Malformed(String),
}

/// A response record's place: which file, at what offset.
type Place = (u32, u64);

/// Imports `files` into `store`; `progress` is called now and then and
/// stops the import when it returns false (what is stored stays).
pub fn import_warc(
    store: Arc<Store>,
    settings: CrawlSettings,
    files: &[PathBuf],
    progress: &mut dyn FnMut(&ImportProgress) -> bool,
) -> Result<ImportReport, ImportError> {
    let started = Instant::now();
    let mut total = 0;
    for f in files {
        let meta = std::fs::metadata(f).map_err(|e| ImportError::File(f.clone(), e))?;
        total += meta.len();
    }
    let cap = settings.fetch.max_body_bytes;
    let mut ledger = Ledger::offline(store.clone(), settings)?;
    let mut report = ImportReport {
        files: files.len(),
        ..Default::default()
    };
    let Some(Survey { hosts, originals }) = survey(files, cap, total, progress)? else {
        report.interrupted = true;
        report.elapsed = started.elapsed();
        return Ok(report);
    };
    for (i, roots) in hosts.iter().enumerate() {
        let from = files[i].display().to_string();
        report.hosts_added += ledger.import_hosts(roots, &from)?;
    }
    let mut run = Run {
        ledger,
        dictionary: store.dictionaries()?.into_iter().next(),
        cap,
        files,
        originals,
        report,
        done_bytes: 0,
        total,
    };
    for f in files {
        if !run.file(f, progress)? {
            run.report.interrupted = true;
            break;
        }
    }
    run.ledger.write_inlinks()?;
    let mut report = run.report;
    report.notices = run.ledger.take_notices();
    report.elapsed = started.elapsed();
    Ok(report)
}

/// What the first pass finds.
struct Survey {
    /// A URL of each host whose fetches each file holds (the file a host
    /// is first met in names it).
    hosts: Vec<Vec<CanonicalUrl>>,
    /// Where each response record is, by payload digest and by record id
    /// (a revisit may come before the response it repeats).
    originals: HashMap<u64, Place>,
}

/// The first pass over the files (None: `progress` stopped it).
fn survey(
    files: &[PathBuf],
    cap: usize,
    total: u64,
    progress: &mut dyn FnMut(&ImportProgress) -> bool,
) -> Result<Option<Survey>, ImportError> {
    let mut seen: std::collections::HashSet<HostId> = Default::default();
    let mut out = Survey {
        hosts: Vec::new(),
        originals: HashMap::new(),
    };
    let mut done = 0;
    for (i, f) in files.iter().enumerate() {
        let mut roots = Vec::new();
        let mut records = WarcRecords::open(f, cap).map_err(|e| ImportError::File(f.clone(), e))?;
        let mut n = 0u64;
        while let Some(item) = records.next() {
            n += 1;
            let Item::Record(r) = item else { continue };
            let Some(url) = fetched_url(&r) else { continue };
            if seen.insert(url.host_id())
                && let Ok(root) = model::normalize(&format!("{}/", url.host_key()))
            {
                roots.push(root);
            }
            if r.get("WARC-Type")
                .is_some_and(|t| t.eq_ignore_ascii_case("response"))
            {
                for k in [r.get("WARC-Payload-Digest"), r.get("WARC-Record-ID")]
                    .into_iter()
                    .flatten()
                {
                    out.originals.insert(key_of(k), (i as u32, r.offset));
                }
            }
            let at = ImportProgress {
                pass: 1,
                bytes: done + records.position(),
                total,
                stored: 0,
            };
            if n.is_multiple_of(STEP) && !progress(&at) {
                return Ok(None);
            }
        }
        done += records.position();
        out.hosts.push(roots);
    }
    Ok(Some(out))
}

/// The normalized URL of a response or revisit record of an HTTP fetch.
fn fetched_url(r: &RawRecord) -> Option<CanonicalUrl> {
    let kind = r.get("WARC-Type")?;
    if !kind.eq_ignore_ascii_case("response") && !kind.eq_ignore_ascii_case("revisit") {
        return None;
    }
    let url = r.get("WARC-Target-URI")?;
    let url = url.trim_start_matches('<').trim_end_matches('>');
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https:/") {
        return None;
    }
    model::normalize(url).ok()
}

/// The second pass's state.
struct Run<'a> {
    ledger: Ledger,
    dictionary: Option<Dictionary>,
    cap: usize,
    files: &'a [PathBuf],
    /// Response records by payload digest and by record id, for the
    /// revisits that repeat them (keys hashed: 8 bytes, not the string;
    /// ~60 bytes a response record).
    originals: HashMap<u64, Place>,
    report: ImportReport,
    done_bytes: u64,
    total: u64,
}

fn key_of(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

impl Run<'_> {
    /// Stores a file's captures; false when `progress` stopped it.
    fn file(
        &mut self,
        path: &Path,
        progress: &mut dyn FnMut(&ImportProgress) -> bool,
    ) -> Result<bool, ImportError> {
        let mut records =
            WarcRecords::open(path, self.cap).map_err(|e| ImportError::File(path.into(), e))?;
        let mut n = 0u64;
        while let Some(item) = records.next() {
            self.report.records += 1;
            let (offset, outcome) = match item {
                Item::Malformed { offset, why } => (offset, Outcome::Malformed(why)),
                Item::Record(r) => (r.offset, self.record(r)?),
            };
            match outcome {
                Outcome::Stored => self.report.stored += 1,
                Outcome::Failed => self.report.failed += 1,
                Outcome::Skipped(why) => self.report.skip(why),
                Outcome::Malformed(why) => self.report.malformed(path, offset, &why),
            }
            n += 1;
            if n.is_multiple_of(STEP) {
                self.ledger.grow_front_if_needed()?;
                let at = ImportProgress {
                    pass: 2,
                    bytes: self.done_bytes + records.position(),
                    total: self.total,
                    stored: self.report.stored,
                };
                if !progress(&at) {
                    return Ok(false);
                }
            }
        }
        self.done_bytes += records.position();
        Ok(true)
    }

    fn record(&mut self, r: RawRecord) -> Result<Outcome, ImportError> {
        let skip = |why: &str| Ok(Outcome::Skipped(why.to_string()));
        let c = match capture::read(r) {
            capture::Read::Capture(c) => c,
            capture::Read::Skip(why) => return Ok(Outcome::Skipped(why)),
            capture::Read::Malformed(why) => return Ok(Outcome::Malformed(why)),
        };
        let Ok(url) = model::normalize(&c.url) else {
            return skip("URLs that do not parse");
        };
        if url.url().path() == "/robots.txt" && url.url().query().is_none() {
            // A crawl keeps a host's robots.txt with the host, not as a page.
            return skip("robots.txt responses");
        }
        let c = match c.revisit.is_some() {
            true => match self.original_of(*c) {
                Some(c) => c,
                None => return skip("revisits whose response is not in the import"),
            },
            false => *c,
        };
        // A date ahead of now would hold the host's next fetch until then.
        let at = c.date_ms.min(model::now_ms());
        let Some(job) = self.ledger.import_job(&url, at)? else {
            return skip("captures of a URL the db has an outcome for (fetched or failed)");
        };
        self.store(job, c)
    }

    /// Decodes, parses and commits one capture, as a fetch task and the
    /// ledger do a fetched page.
    fn store(&mut self, job: PageJob, c: Capture) -> Result<Outcome, ImportError> {
        let coding = c.header("content-encoding").unwrap_or("").to_string();
        let wire_len = c.payload.len() as u64;
        let decoded = decode_body(&c.payload, &coding, self.cap);
        drop(c.payload);
        let result = decoded.and_then(|(body, cut)| {
            let truncated = cut || c.truncated;
            let f = Fetched::stored(
                c.status,
                c.http_version,
                &c.headers,
                body,
                truncated,
                wire_len,
            );
            let policy = self.ledger.text_policy();
            let dict = self.dictionary.as_ref();
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                process(f, job.url.url(), &policy, dict)
            }))
            .map_err(|_| FetchError::new(FailReason::Internal, "processing the page panicked"))
        });
        let outcome = match result {
            Ok(_) => Outcome::Stored,
            Err(_) => Outcome::Failed,
        };
        self.ledger.commit_imported(job, result)?;
        Ok(outcome)
    }

    /// A revisit made whole: the payload of the response it repeats (its
    /// payload digest checked), with the headers that describe that
    /// payload; the status and all headers too when the revisit has no
    /// HTTP head or is a 304.
    fn original_of(&self, mut c: Capture) -> Option<Capture> {
        // By the record it names, else by payload digest: the field the
        // key came from must match on the record found.
        let refers = c.revisit.as_ref().and_then(|r| r.record_id.clone());
        let keys = [
            refers.map(|id| ("WARC-Record-ID", id)),
            c.payload_digest.clone().map(|d| ("WARC-Payload-Digest", d)),
        ];
        let orig = keys
            .into_iter()
            .flatten()
            .find_map(|(field, value)| self.response_by(field, &value))?;
        if c.status == 0 || c.status == 304 {
            c.status = orig.status;
            c.headers = orig.headers;
        } else {
            let coding = |h: &(String, String)| h.0.eq_ignore_ascii_case("content-encoding");
            c.headers.retain(|h| !coding(h));
            c.headers
                .extend(orig.headers.iter().filter(|h| coding(h)).cloned());
        }
        c.payload = orig.payload;
        c.truncated = orig.truncated;
        Some(c)
    }

    /// The response record whose `field` is `value`, read again from its
    /// file (the records of its gzip member, or its one plain record).
    fn response_by(&self, field: &str, value: &str) -> Option<Box<Capture>> {
        let &(file, offset) = self.originals.get(&key_of(value))?;
        let records = WarcRecords::open_at(&self.files[file as usize], self.cap, offset).ok()?;
        records
            .map_while(|item| match item {
                Item::Record(r) if r.offset == offset => Some(r),
                _ => None,
            })
            .filter(|r| r.get(field) == Some(value))
            .find_map(|r| match capture::read(r) {
                capture::Read::Capture(o) if o.revisit.is_none() => Some(o),
                _ => None,
            })
    }
}
