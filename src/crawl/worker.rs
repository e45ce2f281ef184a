//! One unit of network work, run as its own task: fetch a page and do the
//! CPU work on it (decode, parse, hash, compress) before it goes back to
//! the engine, or fetch a host's robots.txt.

use md5::{Digest, Md5};

use crate::fetch::{self, FetchError, Fetched, HttpClient};
use crate::model::{CanonicalUrl, HostId};
use crate::parse::{self, ParsedPage};
use crate::schema::{FrontierEntry, FrontierKey, RobotsOutcome};

/// Bodies above this are parsed on the blocking pool, not a reactor thread,
/// one at a time.
const INLINE_PARSE_BYTES: usize = 512 * 1024;

/// One large body parsed at a time: tl's DOM takes ~40 bytes per byte of
/// tag-dense HTML, ~40 MB for each 1 MiB piece the parser cuts a page
/// into, and 64 fetches of large pages could otherwise parse at once.
static LARGE_PARSE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

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
    pub body_zstd: Vec<u8>,
    /// Set for HTML responses.
    pub parsed: Option<ParsedHtml>,
}

pub struct ParsedHtml {
    pub page: ParsedPage,
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
        outcome: RobotsOutcome,
        body: Vec<u8>,
    },
}

pub async fn fetch_page(client: HttpClient, agent: String, max_links: usize, job: PageJob) -> Done {
    let result = match client.get(job.url.as_str()).await {
        Ok(fetched) => Ok(if fetched.body.len() > INLINE_PARSE_BYTES {
            let url = job.url.url().clone();
            // The semaphore is never closed, so acquiring cannot fail.
            let permit = LARGE_PARSE.acquire().await.ok();
            let parsed =
                tokio::task::spawn_blocking(move || process(fetched, &url, &agent, max_links))
                    .await;
            drop(permit);
            match parsed {
                Ok(d) => d,
                Err(e) => {
                    return Done::Page {
                        job: Box::new(job),
                        result: Box::new(Err(internal(e))),
                    };
                }
            }
        } else {
            process(fetched, job.url.url(), &agent, max_links)
        }),
        Err(e) => Err(e),
    };
    Done::Page {
        job: Box::new(job),
        result: Box::new(result),
    }
}

pub async fn fetch_robots(client: HttpClient, host: HostId, origin: String) -> Done {
    let (outcome, body) = fetch::fetch_robots(&client, &origin).await;
    Done::Robots {
        host,
        outcome,
        body,
    }
}

fn internal(e: tokio::task::JoinError) -> FetchError {
    FetchError {
        reason: crate::schema::FailReason::Protocol,
        detail: format!("parse task failed: {e}"),
    }
}

/// zstd level 1 with one compression context per thread: creating a
/// context per page showed in the crawl's profile.
fn compress(body: &[u8]) -> Vec<u8> {
    thread_local! {
        static ZSTD: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            std::cell::RefCell::new(zstd::bulk::Compressor::new(1).ok());
    }
    ZSTD.with(|z| match z.borrow_mut().as_mut() {
        Some(c) => c.compress(body).ok(),
        None => zstd::bulk::compress(body, 1).ok(),
    })
    .unwrap_or_default()
}

/// MD5, zstd, charset decoding and parsing (at most `max_links` links) of
/// one fetched body: the CPU work a fetch task does before the engine
/// commits the page.
pub fn process(mut fetched: Fetched, url: &url::Url, agent: &str, max_links: usize) -> PageData {
    let md5: [u8; 16] = Md5::digest(&fetched.body).into();
    let body_zstd = compress(&fetched.body);
    let parsed = (parse::is_html(&fetched.content_type) && (200..300).contains(&fetched.status))
        .then(|| {
            let decoded = parse::decode(
                &fetched.body,
                Some(&fetched.content_type)
                    .filter(|c| !c.is_empty())
                    .map(|c| c.as_str()),
            );
            let mut page = parse::parse_html(&decoded.text, url, decoded.charset, agent, max_links);
            if let Some(tag) = fetched.header("x-robots-tag") {
                apply_x_robots_tag(tag, agent, &mut page);
            }
            ParsedHtml {
                page,
                charset: decoded.charset.name(),
                charset_source: decoded.source.name(),
            }
        });
    // The engine keeps the compressed copy; the body's memory (and its
    // share of the large-body budget) goes now, not after the commit.
    let body_len = fetched.body.len() as u64;
    fetched.release_body();
    PageData {
        fetched,
        md5,
        body_len,
        body_zstd,
        parsed,
    }
}

/// `X-Robots-Tag: noindex, nofollow` or `X-Robots-Tag: trawl: noindex`.
fn apply_x_robots_tag(value: &str, agent: &str, page: &mut ParsedPage) {
    let (scope, rules) = match value.split_once(':') {
        Some((a, r)) if !a.contains(',') && !a.trim().contains(' ') => (Some(a.trim()), r),
        _ => (None, value),
    };
    if scope.is_some_and(|a| !a.eq_ignore_ascii_case(agent)) {
        return;
    }
    for d in rules.split(',').map(|d| d.trim().to_ascii_lowercase()) {
        match d.as_str() {
            "noindex" => page.noindex = true,
            "nofollow" => page.nofollow = true,
            "none" => (page.noindex, page.nofollow) = (true, true),
            _ => {}
        }
    }
}
