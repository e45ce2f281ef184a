//! One unit of network work, run as its own task: fetch a page and do the
//! CPU work on it (decode, parse, hash, compress) before it goes back to
//! the scheduler, or fetch a host's robots.txt.

use std::sync::Arc;

use md5::{Digest, Md5};

use super::dictionary::PageDictionary;
use super::frame::FrameWriter;
use super::page_text::{TextPlace, TextPolicy};

use crate::fetch::{self, FetchError, Fetched, HttpClient, NetGuard, RobotsFetch};
use crate::filter::denoise::Denoised;
use crate::model::{CanonicalUrl, HostId};
use crate::parse::sitemap::{Sitemap, read_sitemap};
use crate::parse::{self, ParsedPage};
use crate::schema::dictionary::Dictionary;
use crate::schema::{FrontierEntry, FrontierKey};
use crate::warc::Exchange;

/// Bodies above this are parsed on the blocking pool, not a reactor thread,
/// one at a time.
const INLINE_PARSE_BYTES: usize = 512 * 1024;

/// One large body parsed at a time: its text and links take a few times
/// its size, and 64 fetches of large pages could otherwise parse at once.
static LARGE_PARSE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// How long a sitemap being read waits for memory for its entries before
/// it stops there (keeping the entries read).
const SITEMAP_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// The large-parse turn, taken from a blocking-pool thread.
fn large_parse_turn() -> Option<tokio::sync::SemaphorePermit<'static>> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    handle.block_on(LARGE_PARSE.acquire()).ok()
}

pub struct PageJob {
    pub key: FrontierKey,
    pub entry: FrontierEntry,
    pub url: CanonicalUrl,
}

/// What a fetched body turned into.
pub struct PageData {
    /// The response, its body released (see `body_len`, `body_zstd`).
    pub fetched: Fetched,
    pub md5: [u8; 16],
    /// Bytes of the decoded body.
    pub body_len: u64,
    /// The body, then its text when the text is kept there, as one zstd
    /// frame.
    pub body_zstd: Vec<u8>,
    /// Where the page's text is kept.
    pub text: TextPlace,
    /// Set for HTML responses.
    pub parsed: Option<ParsedHtml>,
    /// A sitemap's 2xx response, read (or why it is not a sitemap).
    pub sitemap: Option<Result<Sitemap, String>>,
    /// The fetch's WARC records, when the crawl writes WARC.
    pub exchange: Option<Box<Exchange>>,
}

pub struct ParsedHtml {
    pub page: ParsedPage,
    /// What denoising removed, when it is on.
    pub denoised: Option<Denoised>,
    /// The denoised text, when denoising is on and the page filters or the
    /// simhash read it (a page in flight across a settings change may lack
    /// it: the filters then read the visible text).
    pub clean: Option<String>,
    /// The simhash of the (denoised) text, when near-duplicates are looked
    /// for and the text is long enough.
    pub simhash: Option<u64>,
    /// What a revisit compares: the title and the (denoised) text's hash.
    pub text_hash: u64,
    pub charset: &'static str,
    pub charset_source: &'static str,
}

pub enum Done {
    Page {
        job: Box<PageJob>,
        result: Box<Result<PageData, FetchError>>,
    },
    Robots {
        host: HostId,
        fetched: Box<RobotsFetch>,
        /// Its responses as WARC records, when the crawl writes WARC.
        exchanges: Vec<Exchange>,
    },
}

/// What a page fetch needs besides the page.
pub(super) struct PageWork {
    pub client: HttpClient,
    /// Where the page is marked in flight while processed.
    pub marks: super::marks::Marks,
    /// Runs that died with this page in flight before.
    pub deaths: u8,
    pub how: How,
}

/// How a fetch task processes its body.
pub(super) struct How {
    /// The crawl's text policy when the page was dispatched.
    pub text: Arc<TextPolicy>,
    /// The zstd dictionary frames are compressed with.
    pub dictionary: Arc<PageDictionary>,
    /// The URL is a sitemap file: read as one, not parsed as a page.
    pub sitemap: bool,
    /// The deflate level of its WARC records (`warc.gzip_level`).
    pub warc_level: u32,
}

pub(super) async fn fetch_page(work: PageWork, job: PageJob) -> Done {
    let PageWork {
        client,
        marks,
        deaths,
        how,
    } = work;
    let fetched = match &job.entry.revisit {
        Some(stored) => {
            let (etag, modified) = (stored.etag.as_deref(), stored.last_modified.as_deref());
            client.revalidate(job.url.as_str(), etag, modified).await
        }
        None => client.get(job.url.as_str()).await,
    };
    let result = match fetched {
        Ok(fetched) => {
            if is_page(&fetched) {
                how.dictionary.offer(&fetched.body);
            }
            if marks.mark(job.url.id(), job.key, deaths).await {
                process_off_reactor(fetched, &job, how).await
            } else {
                Err(FetchError::new(
                    crate::model::FailReason::Internal,
                    "the crawl ended before the page could be processed",
                ))
            }
        }
        Err(e) => Err(e),
    };
    Done::Page {
        job: Box::new(job),
        result: Box::new(result),
    }
}

/// An HTML page with a 2xx status: parsed, and a dictionary sample.
fn is_page(fetched: &Fetched) -> bool {
    parse::is_html(&fetched.content_type) && is_2xx(fetched)
}

/// Processes a body inline, or on the blocking pool when it is large.
async fn process_off_reactor(
    fetched: Fetched,
    job: &PageJob,
    how: How,
) -> Result<PageData, FetchError> {
    // A sitemap may be gzip that inflates to 50 MB: never on a reactor.
    if fetched.body.len() <= INLINE_PARSE_BYTES && !how.sitemap {
        return process_guarded(fetched, job.url.url(), &how);
    }
    let url = job.url.url().clone();
    // A sitemap is read as a stream in little memory (what it keeps waits
    // for the budget), so it does not take the large-parse turn, which it
    // could hold while waiting for memory that a body waiting for the turn
    // holds; an HTML page found in its place takes the turn then.
    let permit = match how.sitemap {
        true => None,
        // The semaphore is never closed, so acquiring cannot fail.
        false => LARGE_PARSE.acquire().await.ok(),
    };
    let parsed = tokio::task::spawn_blocking(move || {
        let done = process_guarded(fetched, &url, &how);
        release_thread_memory();
        done
    })
    .await;
    drop(permit);
    parsed.unwrap_or_else(|e| Err(internal(&e.to_string())))
}

/// Returns what this thread's allocator heap holds freed to the system: a
/// blocking-pool thread that parsed a large page may sit idle for long,
/// and mimalloc purges a heap's free pages only when its thread allocates
/// again (32 pages of 10 MB left ~70 MB so held).
fn release_thread_memory() {
    // SAFETY: mi_collect only frees memory the thread's heap no longer uses.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// [`process`], with a panic (a bug some page trips in us or a library)
/// turned into this URL's failure, so the host and the crawl go on; and
/// the fetch's WARC records when its client kept the wire.
fn process_guarded(
    mut fetched: Fetched,
    url: &url::Url,
    how: &How,
) -> Result<PageData, FetchError> {
    let dict = how.dictionary.current();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // Made from the body as received, before anything takes it; the
        // raw copy of a compressed body goes with the wire.
        let exchange = (fetched.wire.take()).map(|w| {
            Box::new(Exchange::of(
                url.as_str(),
                *w,
                &fetched.body,
                fetched.truncated,
                how.warc_level,
            ))
        });
        let mut data = process_page(fetched, url, how, dict);
        if let Some(ex) = exchange {
            data.fetched.hold_also(ex.heap_bytes());
            data.exchange = Some(ex);
        }
        data
    }))
    .map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        internal(&what)
    })
}

/// A page's body processed as a page, or as the sitemap it should be.
fn process_page(
    fetched: Fetched,
    url: &url::Url,
    how: &How,
    dict: Option<&Dictionary>,
) -> PageData {
    let page = |fetched| process(fetched, url, &how.text, dict);
    if !how.sitemap {
        return page(fetched);
    }
    // An HTML page where a sitemap was expected (a human-readable site
    // map, a missing sitemap redirected home) is kept as the page it is.
    let mut fetched = fetched;
    let read = is_2xx(&fetched).then(|| {
        fetched.read_holding(SITEMAP_PATIENCE, |body, hold| read_sitemap(body, url, hold))
    });
    if matches!(read, Some(Err(_))) && is_page(&fetched) {
        let large = fetched.body.len() > INLINE_PARSE_BYTES;
        let _turn = if large { large_parse_turn() } else { None };
        let mut data = page(fetched);
        data.sitemap = read;
        return data;
    }
    sitemap_data(fetched, read, dict)
}

/// A host's robots.txt; `seed_guard` for a seed host, whose redirect hops
/// within its registrable domain get its exception from the guard.
pub async fn fetch_robots(
    client: HttpClient,
    host: HostId,
    origin: String,
    seed_guard: Option<NetGuard>,
    warc_level: u32,
) -> Done {
    let vouch = |hops: &[CanonicalUrl]| {
        if let Some(g) = &seed_guard {
            super::robots::vouch_for_robots_hop(g, &origin, hops);
        }
    };
    let mut fetched = Box::new(fetch::fetch_robots(&client, &origin, vouch).await);
    // Its responses' WARC records, made here as a page's are.
    let exchanges = std::mem::take(&mut fetched.hops)
        .into_iter()
        .map(|h| Exchange::of(&h.url, *h.wire, &h.body, h.truncated, warc_level))
        .collect();
    Done::Robots {
        host,
        fetched,
        exchanges,
    }
}

fn internal(what: &str) -> FetchError {
    FetchError::new(
        crate::model::FailReason::Internal,
        format!("processing the page panicked: {what}"),
    )
}

/// MD5, zstd (with `dict`, the db's dictionary, if any), charset decoding,
/// parsing, and what `policy` asks of the text (links taken, denoising,
/// the simhash) of one fetched body: the CPU work a fetch task does before
/// the ledger commits the page.
pub fn process(
    fetched: Fetched,
    url: &url::Url,
    policy: &TextPolicy,
    dict: Option<&Dictionary>,
) -> PageData {
    let agent = policy.agent.as_str();
    framed(fetched, dict, |fetched| {
        is_page(fetched).then(|| {
            // The body becomes the text (no copy when it is UTF-8).
            let body = std::mem::take(&mut fetched.body);
            let ct = Some(fetched.content_type.as_str()).filter(|c| !c.is_empty());
            let decoded = parse::decode_owned(body, ct);
            let mut page =
                parse::parse_html(&decoded.text, url, decoded.charset, agent, policy.max_links);
            if let Some(tag) = fetched.header("x-robots-tag") {
                let d = crate::filter::robots_tag::x_robots_tag(tag, agent);
                page.noindex |= d.noindex;
                page.nofollow |= d.nofollow;
            }
            let host = url.host_str().unwrap_or("");
            let denoised =
                (policy.denoise.as_ref()).map(|d| crate::filter::denoise::denoise(&page, host, d));
            // The denoised copy of the text only for what reads it.
            let clean = denoised
                .as_ref()
                .filter(|_| policy.keeps_clean())
                .map(|d| crate::filter::denoise::clean_text(&page.text, d.noise.iter().copied()));
            let text = clean.as_deref().unwrap_or(&page.text);
            let simhash = policy
                .simhash
                .then(|| crate::dedup::simhash(text))
                .flatten();
            let text_hash = super::revisit::text_hash(&page.title, text);
            ParsedHtml {
                denoised,
                clean,
                simhash,
                text_hash,
                page,
                charset: decoded.charset.name(),
                charset_source: decoded.source.name(),
            }
        })
    })
}

/// A body's MD5 and zstd frame, with what `parse` made of it (its text
/// goes in the frame after the body).
fn framed(
    mut fetched: Fetched,
    dict: Option<&Dictionary>,
    parse: impl FnOnce(&mut Fetched) -> Option<ParsedHtml>,
) -> PageData {
    crash_hook::check(&fetched.body);
    let md5: [u8; 16] = Md5::digest(&fetched.body).into();
    let frame = FrameWriter::begin(&fetched.body, dict);
    let body_len = fetched.body.len() as u64;
    let parsed = parse(&mut fetched);
    // The one decision of where the text is kept: after the body, in its
    // frame; in its doc when the body was too large to stream; a noindex
    // page's nowhere.
    let text = match &parsed {
        Some(p) if p.page.noindex => TextPlace::None,
        Some(p) if frame.takes_text() => TextPlace::Frame {
            len: p.page.text.len() as u64,
        },
        Some(_) => TextPlace::Doc,
        None => TextPlace::None,
    };
    let in_frame = match (&parsed, text) {
        (Some(p), TextPlace::Frame { .. }) => p.page.text.as_bytes(),
        _ => &b""[..],
    };
    let body_zstd = frame.finish(in_frame);
    // The ledger keeps the compressed copy and the parse; the body's memory
    // goes now, not after the commit, and only what is kept stays counted.
    let kept = body_zstd.len() + parsed.as_ref().map_or(0, |p| p.page.heap_bytes());
    fetched.release_body(kept);
    PageData {
        fetched,
        md5,
        body_len,
        body_zstd,
        text,
        parsed,
        sitemap: None,
        exchange: None,
    }
}

fn is_2xx(fetched: &Fetched) -> bool {
    (200..300).contains(&fetched.status)
}

/// A sitemap's body, kept (compressed, no text), with what reading it
/// gave (None: not a 2xx).
fn sitemap_data(
    fetched: Fetched,
    sitemap: Option<Result<Sitemap, String>>,
    dict: Option<&Dictionary>,
) -> PageData {
    // The entries wait for the commit with the frame: they stay counted.
    let entries = match &sitemap {
        Some(Ok(map)) => map.heap_bytes(),
        _ => 0,
    };
    let mut data = framed(fetched, dict, |_| None);
    data.fetched.hold_also(entries);
    data.sitemap = sitemap;
    data
}

/// A test-only way for a page to die the way a library bug would: when the
/// environment has `TRAWL_TEST_CRASH_HOOK=1`, a body containing
/// `trawl-test-crash:panic`, `:abort`, `:overflow` or `:kill` panics,
/// aborts the process, overflows the stack, or has the process killed (as
/// the kernel's out-of-memory killer does, with SIGKILL). Without the variable it costs one
/// branch a page.
mod crash_hook {
    use std::sync::OnceLock;

    const MARK: &[u8] = b"trawl-test-crash:";

    fn enabled() -> bool {
        static ON: OnceLock<bool> = OnceLock::new();
        *ON.get_or_init(|| std::env::var_os("TRAWL_TEST_CRASH_HOOK").is_some_and(|v| v == "1"))
    }

    pub fn check(body: &[u8]) {
        if !enabled() {
            return;
        }
        let Some(at) = memchr::memmem::find(body, MARK) else {
            return;
        };
        let what = &body[at + MARK.len()..];
        if what.starts_with(b"panic") {
            panic!("crash hook: panic on a marked page");
        } else if what.starts_with(b"abort") {
            std::process::abort();
        } else if what.starts_with(b"overflow") {
            overflow(1);
        } else if what.starts_with(b"kill") {
            // SAFETY: kill(2) on our own pid; SIGKILL cannot be caught.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
    }

    #[inline(never)]
    fn overflow(depth: u64) -> u64 {
        if depth == u64::MAX {
            return 0;
        }
        let pad = std::hint::black_box([depth; 64]);
        overflow(depth + 1) + pad[(depth % 64) as usize]
    }
}
