//! Value structs of every column family. Field order is the encoding: add
//! fields only at the end of a struct together with a new version byte.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Versioned;
use crate::model::UrlId;

/// Why a URL was seen but not fetched.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FilterReason {
    /// Outside the crawl's scope (host/domain of the seeds).
    Scope,
    /// Deeper than `--depth`.
    Depth,
    /// Disallowed by the host's robots.txt.
    Robots,
    /// robots.txt stayed unreachable (5xx / network) after every retry.
    RobotsUnavailable,
    /// Longer than the URL length limit.
    UrlTooLong,
    /// Reached only through `rel=nofollow` or a page with meta nofollow.
    Nofollow,
    /// More than the allowed number of redirect hops from the first URL.
    RedirectChain,
    /// Host contains no key domain (document 000, stage 1).
    Domain,
    /// Dropped by the link-type policy (document 001).
    LinkType,
    /// Was queued, but after `refilter` no page that passes links to it.
    Refiltered,
    // Schema 7: spider-trap limits and URLs that no longer parse.
    /// More path segments than `crawl.max_path_depth`.
    PathDepth,
    /// One path segment repeated more than `crawl.max_segment_repeats`.
    SegmentRepeats,
    /// More query strings of one path than `crawl.max_query_variants`.
    QueryVariants,
    /// The host had `crawl.max_host_urls` URLs already.
    HostBudget,
    /// A stored URL that no longer parses (written by another version).
    InvalidUrl,
}

impl FilterReason {
    pub fn name(self) -> &'static str {
        match self {
            FilterReason::Scope => "scope",
            FilterReason::Depth => "depth",
            FilterReason::Robots => "robots",
            FilterReason::RobotsUnavailable => "robots-unavailable",
            FilterReason::UrlTooLong => "url-too-long",
            FilterReason::Nofollow => "nofollow",
            FilterReason::RedirectChain => "redirect-chain",
            FilterReason::Domain => "domain",
            FilterReason::LinkType => "link-type",
            FilterReason::Refiltered => "refiltered",
            FilterReason::PathDepth => "path-depth",
            FilterReason::SegmentRepeats => "segment-repeats",
            FilterReason::QueryVariants => "query-variants",
            FilterReason::HostBudget => "host-budget",
            FilterReason::InvalidUrl => "invalid-url",
        }
    }
}

/// Why a fetch produced no response to store.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailReason {
    Dns,
    Connect,
    Tls,
    Timeout,
    /// The server broke HTTP (bad response, reset mid-body).
    Protocol,
    /// 429/503 on every allowed attempt.
    RetriesExhausted,
    // Schema 7:
    /// Processing the page panicked (a bug met on this page).
    Internal,
    /// The process died twice in a row with this URL in flight.
    CrashLoop,
    /// The address connected to is one the network guard refuses.
    NetworkGuard,
    /// The response's status line or headers are not HTTP.
    BadResponse,
    /// The response headers are larger than the client accepts.
    HeadersTooLarge,
    /// The connection closed or reset before the response was complete.
    Incomplete,
    /// The body does not decode as its Content-Encoding says.
    BadEncoding,
}

impl FailReason {
    pub fn name(self) -> &'static str {
        match self {
            FailReason::Dns => "dns",
            FailReason::Connect => "connect",
            FailReason::Tls => "tls",
            FailReason::Timeout => "timeout",
            FailReason::Protocol => "protocol",
            FailReason::RetriesExhausted => "retries-exhausted",
            FailReason::Internal => "internal-error",
            FailReason::CrashLoop => "crash-loop",
            FailReason::NetworkGuard => "network-guard",
            FailReason::BadResponse => "bad-response",
            FailReason::HeadersTooLarge => "headers-too-large",
            FailReason::Incomplete => "incomplete",
            FailReason::BadEncoding => "bad-encoding",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeenState {
    /// In the frontier.
    Queued,
    /// Fetched; the response is in `pages`.
    Fetched {
        status: u16,
    },
    Filtered(FilterReason),
    Failed(FailReason),
}

/// `seen` value: the URL-seen set with each URL's fate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct SeenRecord {
    pub state: SeenState,
    pub depth: u16,
    /// The page whose link first led here (none for seeds).
    pub parent: Option<u128>,
    /// Redirect hops from the URL first linked to reach this one.
    pub redirects: u8,
    pub updated_ms: u64,
}
impl Versioned for SeenRecord {
    const VERSION: u8 = 1;
}

/// `frontier` value: what the scheduler needs to fetch the URL.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct FrontierEntry {
    /// The normalized URL (kept here so dispatch needs no `urls` lookup).
    pub url: String,
    pub depth: u16,
    pub parent: Option<u128>,
    pub redirects: u8,
    /// Attempts that ended in 429/503 so far.
    pub attempts: u8,
    pub enqueued_ms: u64,
}
impl Versioned for FrontierEntry {
    const VERSION: u8 = 1;
}

/// How the last robots.txt fetch of a host ended (RFC 9309 section 2.3.1).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum RobotsOutcome {
    /// 2xx: `body` holds the file.
    Fetched { status: u16 },
    /// 4xx: no rules, everything allowed.
    Unavailable { status: u16 },
    /// 5xx, 429 or a network error: everything disallowed until a retry succeeds.
    Unreachable { detail: String },
    /// More than 5 redirects: treated as unavailable.
    TooManyRedirects,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RobotsRecord {
    pub outcome: RobotsOutcome,
    pub body: Vec<u8>,
    pub fetched_ms: u64,
    /// After this the file is fetched again (24 h by default; sooner for retries).
    pub expires_ms: u64,
    /// Consecutive unreachable results.
    pub failures: u32,
}

/// `hosts` value: per-host politeness state. Written with every page of
/// the host, so from schema 6 without its robots.txt (`robots` is None
/// there; the file is in the `robots` column family, written when fetched);
/// [`crate::store::Store::host`] returns the two joined.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct HostRecord {
    pub origin: String,
    pub robots: Option<RobotsRecord>,
    /// Crawl-delay from robots.txt as applied (after the cap).
    pub crawl_delay_ms: Option<u64>,
    /// robots.txt asked for a longer delay than the configured maximum.
    pub crawl_delay_capped: bool,
    pub error_streak: u32,
    pub fetched: u64,
    pub errors: u64,
    pub queued: u64,
    /// Earliest time of the next request (politeness delay or back-off).
    pub next_fetch_ms: u64,
    // Version 2:
    /// URLs ever queued for the host (for `crawl.max_host_urls`).
    pub urls: u64,
}
impl Versioned for HostRecord {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        let mut h: HostRecord = super::decode_appended(bytes, 1, &[1])?;
        if bytes.first() == Some(&1) {
            // Version 1 did not count: what it fetched and queued is a floor.
            h.urls = h.fetched + h.queued;
        }
        Ok(h)
    }
}
impl Versioned for RobotsRecord {
    const VERSION: u8 = 1;
}

/// `pages` value: one fetch and its response.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct PageRecord {
    pub url: String,
    pub status: u16,
    pub http_version: String,
    pub content_type: String,
    /// The response headers worth keeping (see `fetch::KEPT_HEADERS`).
    pub headers: Vec<(String, String)>,
    pub fetched_ms: u64,
    pub elapsed_ms: u32,
    pub depth: u16,
    /// MD5 of the decoded body.
    pub md5: [u8; 16],
    /// Bytes on the wire (before Content-Encoding is undone).
    pub wire_len: u64,
    /// Bytes of the decoded body.
    pub body_len: u64,
    /// The body hit the size cap (on the wire or after decoding).
    pub truncated: bool,
    /// zstd-compressed decoded body.
    pub body_zstd: Vec<u8>,
    /// `Location` of a 3xx, resolved and normalized.
    pub redirect_to: Option<String>,
}
impl Versioned for PageRecord {
    const VERSION: u8 = 1;
}

/// `docs` value: what parsing derived from a page; rebuildable from `pages`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct DocRecord {
    pub title: String,
    pub text: String,
    pub charset: String,
    /// Where the charset came from: bom, http, meta, sniff, default.
    pub charset_source: String,
    pub canonical: Option<String>,
    pub noindex: bool,
    pub nofollow: bool,
    pub outlinks: u32,
    /// Url id of the first page with the same MD5, when this one repeats it.
    pub duplicate_of: Option<u128>,
    // Version 2 stored the page's verdict here; from version 3 it lives in
    // `verdicts` (a small value, so refilter rewrites no text) and these
    // fields are filled from there by `Store::doc`.
    /// Formula (1) of document 000, when the topic filter ran.
    #[serde(skip)]
    pub topic_score: Option<f64>,
    /// Cosine relevance of document 001, when it ran.
    #[serde(skip)]
    pub relevance: Option<f64>,
    /// `keep`, or the filter that stopped the page's links (`topic`, `relevance`).
    #[serde(skip)]
    pub verdict: String,
    /// The numbers behind the verdict.
    #[serde(skip)]
    pub verdict_detail: String,
}

impl DocRecord {
    /// The verdict fields as a `verdicts` value.
    pub fn verdict_record(&self) -> VerdictRecord {
        VerdictRecord {
            topic_score: self.topic_score,
            relevance: self.relevance,
            verdict: self.verdict.clone(),
            verdict_detail: self.verdict_detail.clone(),
        }
    }

    /// Takes the page's verdict from its `verdicts` value.
    pub fn set_verdict(&mut self, v: VerdictRecord) {
        self.topic_score = v.topic_score;
        self.relevance = v.relevance;
        self.verdict = v.verdict;
        self.verdict_detail = v.verdict_detail;
    }
}

/// A `docs` value read in place, for scans over every page: the title and
/// text stay unvalidated bytes until a filter reads them.
#[derive(Clone, Debug, PartialEq)]
pub struct DocView<'a> {
    pub title: &'a [u8],
    pub text: &'a [u8],
    pub nofollow: bool,
    /// The verdict a version 1 or 2 value carries (v1: `keep`).
    pub legacy_verdict: Option<VerdictRecord>,
}

impl<'a> DocView<'a> {
    pub fn decode(bytes: &'a [u8]) -> Result<DocView<'a>, super::CodecError> {
        let (version, rest) = super::split_version(bytes, 1, DocRecord::VERSION)?;
        // postcard writes a string as a length and its bytes, like a byte
        // slice: read as bytes, nothing is validated or copied.
        type Fields<'b> = (
            &'b [u8],
            &'b [u8],
            &'b [u8],
            &'b [u8],
            Option<&'b [u8]>,
            bool,
            bool,
            u32,
            Option<u128>,
        );
        let ((title, text, _, _, _, _, nofollow, _, _), rest) =
            postcard::take_from_bytes::<Fields<'a>>(rest).map_err(super::malformed)?;
        let legacy_verdict = match version {
            1 => Some(VerdictRecord {
                verdict: "keep".into(),
                ..VerdictRecord::default()
            }),
            2 => Some(
                postcard::take_from_bytes::<VerdictRecord>(rest)
                    .map_err(super::malformed)?
                    .0,
            ),
            _ => None,
        };
        Ok(DocView {
            title,
            text,
            nofollow,
            legacy_verdict,
        })
    }
}

/// `verdicts` value: a fetched page's scores and whether its links are
/// followed, as the filters last judged it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct VerdictRecord {
    pub topic_score: Option<f64>,
    pub relevance: Option<f64>,
    pub verdict: String,
    pub verdict_detail: String,
}

impl Versioned for VerdictRecord {
    const VERSION: u8 = 1;
}

impl Versioned for DocRecord {
    const VERSION: u8 = 3;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        match bytes.first() {
            // Version 2: the version 3 fields, then the verdict (kept: a db
            // written then has no `verdicts` rows until it is refiltered).
            Some(2) => {
                let (mut doc, rest) = postcard::take_from_bytes::<DocRecord>(&bytes[1..])
                    .map_err(super::malformed)?;
                let (verdict, _) =
                    postcard::take_from_bytes::<VerdictRecord>(rest).map_err(super::malformed)?;
                doc.set_verdict(verdict);
                Ok(doc)
            }
            Some(1) => {
                #[derive(Deserialize)]
                struct V1 {
                    title: String,
                    text: String,
                    charset: String,
                    charset_source: String,
                    canonical: Option<String>,
                    noindex: bool,
                    nofollow: bool,
                    outlinks: u32,
                    duplicate_of: Option<u128>,
                }
                let v: V1 = postcard::from_bytes(&bytes[1..]).map_err(super::malformed)?;
                Ok(DocRecord {
                    title: v.title,
                    text: v.text,
                    charset: v.charset,
                    charset_source: v.charset_source,
                    canonical: v.canonical,
                    noindex: v.noindex,
                    nofollow: v.nofollow,
                    outlinks: v.outlinks,
                    duplicate_of: v.duplicate_of,
                    verdict: "keep".into(),
                    ..DocRecord::default()
                })
            }
            _ => super::decode_current(bytes),
        }
    }
}

/// `links` value: one out-link with its anchor and surrounding text.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct LinkRecord {
    pub anchor: String,
    /// About 50 bytes of visible text before the `<a>`.
    pub before: String,
    /// About 50 bytes of visible text after the `</a>`.
    pub after: String,
    pub nofollow: bool,
    // Version 2:
    /// downward, upward, horizontal, crosswise or outward (document 001).
    pub link_type: String,
    /// `follow`, or why the crawl did not follow it (`nofollow`,
    /// `page:<verdict>`, `domain`, `link-type`, `scope`, …).
    pub verdict: String,
    pub verdict_detail: String,
    // Version 3:
    /// The target's host, so the domain filter needs no URL lookup.
    pub dst_host: String,
    // Version 4:
    /// The target's URL, so listing a page's out-links (the shell's `page`,
    /// `links from`) or queueing one (refilter) reads no `urls` row.
    pub dst_url: String,
}

impl Versioned for LinkRecord {
    const VERSION: u8 = 4;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        LinkView::decode(bytes).map(|v| v.to_record())
    }
}

/// A `links` value read in place: its strings borrow the stored bytes, so
/// scanning millions of links (refilter, the shell) allocates nothing.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct LinkView<'a> {
    pub anchor: &'a str,
    pub before: &'a str,
    pub after: &'a str,
    pub nofollow: bool,
    pub link_type: &'a str,
    pub verdict: &'a str,
    pub verdict_detail: &'a str,
    pub dst_host: &'a str,
    pub dst_url: &'a str,
}

impl<'a> LinkView<'a> {
    /// Reads any version: each appends fields, so an older value is a
    /// prefix of the current layout and its missing fields stay empty.
    pub fn decode(bytes: &'a [u8]) -> Result<LinkView<'a>, super::CodecError> {
        let (version, rest) = super::split_version(bytes, 1, LinkRecord::VERSION)?;
        let ((anchor, before, after, nofollow), rest) =
            postcard::take_from_bytes::<(&str, &str, &str, bool)>(rest)
                .map_err(super::malformed)?;
        let mut view = LinkView {
            anchor,
            before,
            after,
            nofollow,
            ..LinkView::default()
        };
        if version >= 2 {
            let ((link_type, verdict, verdict_detail), rest) =
                postcard::take_from_bytes::<(&str, &str, &str)>(rest).map_err(super::malformed)?;
            (view.link_type, view.verdict, view.verdict_detail) =
                (link_type, verdict, verdict_detail);
            if version >= 3 {
                let (dst_host, rest) =
                    postcard::take_from_bytes::<&str>(rest).map_err(super::malformed)?;
                view.dst_host = dst_host;
                if version >= 4 {
                    view.dst_url = postcard::take_from_bytes::<&str>(rest)
                        .map_err(super::malformed)?
                        .0;
                }
            }
        }
        Ok(view)
    }

    /// The same bytes as [`LinkRecord`]'s encoding of these fields.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![LinkRecord::VERSION];
        out.extend(postcard::to_stdvec(self).unwrap_or_default());
        out
    }

    pub fn to_record(&self) -> LinkRecord {
        LinkRecord {
            anchor: self.anchor.to_string(),
            before: self.before.to_string(),
            after: self.after.to_string(),
            nofollow: self.nofollow,
            link_type: self.link_type.to_string(),
            verdict: self.verdict.to_string(),
            verdict_detail: self.verdict_detail.to_string(),
            dst_host: self.dst_host.to_string(),
            dst_url: self.dst_url.to_string(),
        }
    }
}

/// `links` value since schema 5: all of a page's out-links in one row, as
/// (target id, link) pairs in page order, each link in [`LinkRecord`]'s
/// current layout. One row instead of one per link: a page costs ~20 fewer
/// memtable inserts, and the row (usually ≥ 1 KiB) goes to a blob file that
/// compaction does not rewrite.
pub struct PageLinks;

impl PageLinks {
    pub const VERSION: u8 = 1;

    /// The links of a page row, borrowing its bytes.
    pub fn decode(bytes: &[u8]) -> Result<Vec<(UrlId, LinkView<'_>)>, super::CodecError> {
        let (_, rest) = super::split_version(bytes, 1, Self::VERSION)?;
        let links: Vec<(u128, LinkView<'_>)> =
            postcard::from_bytes(rest).map_err(super::malformed)?;
        Ok(links.into_iter().map(|(id, l)| (UrlId(id), l)).collect())
    }
}

/// Builds a [`PageLinks`] row one link at a time (each is encoded when
/// added, so the link's fields need not outlive the call). A second link to
/// the same target replaces the first, as a second put of a per-link row did.
#[derive(Default)]
pub struct PageLinksBuilder {
    links: Vec<(UrlId, Vec<u8>)>,
    index: std::collections::HashMap<UrlId, usize>,
}

impl PageLinksBuilder {
    pub fn push(&mut self, dst: UrlId, link: &LinkView<'_>) {
        let bytes = postcard::to_stdvec(&(dst.0, link)).unwrap_or_default();
        match self.index.get(&dst) {
            Some(&i) => self.links[i].1 = bytes,
            None => {
                self.index.insert(dst, self.links.len());
                self.links.push((dst, bytes));
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The row's bytes: version, link count, then the links.
    pub fn encode(&self) -> Vec<u8> {
        let len: usize = self.links.iter().map(|(_, b)| b.len()).sum();
        let mut out = Vec::with_capacity(len + 11);
        out.push(PageLinks::VERSION);
        // postcard writes a sequence's length as a varint, like a usize.
        out.extend(postcard::to_stdvec(&self.links.len()).unwrap_or_default());
        for (_, b) in &self.links {
            out.extend_from_slice(b);
        }
        out
    }
}

/// `meta/counters`: totals over the life of the db.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Counters {
    /// Responses stored (any status).
    pub fetched: u64,
    /// Fetches that produced no response, by [`FailReason::name`].
    pub failed: BTreeMap<String, u64>,
    /// URLs seen but not fetched, by [`FilterReason::name`].
    pub filtered: BTreeMap<String, u64>,
    /// URLs in the frontier now.
    pub queued: u64,
    /// Out-links extracted from fetched pages.
    pub links: u64,
    /// Body bytes received on the wire.
    pub bytes: u64,
    /// Pages whose body repeated an earlier page's MD5.
    pub duplicates: u64,
    /// Links dropped before the seen check (bad syntax, other schemes).
    pub invalid_links: u64,
    /// Next frontier sequence number (keeps FIFO order across restarts).
    pub next_seq: u64,
    /// Responses by status code.
    pub by_status: BTreeMap<u16, u64>,
    /// Distinct URLs in `seen`.
    pub seen: u64,
    // Version 2: the current run, kept with the counters (written in every
    // batch) so that a killed run's record can be completed on resume.
    pub run: RunProgress,
}
impl Versioned for Counters {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        super::decode_appended(bytes, 1, &[4])
    }
}

/// What the running (or last) crawl run has done so far.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct RunProgress {
    /// The run's `started_ms` (its `meta/run:` key); 0 before any run.
    pub started_ms: u64,
    pub fetched: u64,
    pub links: u64,
    /// When its last page was recorded.
    pub last_ms: u64,
}

/// `meta/seeds`: the seeds ever given, in order, and the hosts the crawl
/// took into scope because a seed redirected there.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct SeedList {
    pub urls: Vec<String>,
    // Version 2:
    pub derived: Vec<DerivedSeed>,
}
impl Versioned for SeedList {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        super::decode_appended(bytes, 1, &[1])
    }
}

/// A URL that became a seed because a seed (or its host's robots.txt)
/// redirected to it, as Heritrix treats a seed's redirect.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct DerivedSeed {
    /// The redirect's target (normalized).
    pub url: String,
    /// The URL that redirected to it.
    pub from: String,
    /// `redirect` (a seed's response) or `robots` (its host's robots.txt):
    /// a robots redirect puts the host in scope without queueing the URL.
    pub via: String,
}

/// `inflight` value: a URL handed to a fetch and not yet recorded.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct InFlightRecord {
    /// Its `frontier` key (so a crash-looping URL can be dequeued).
    pub frontier_key: Vec<u8>,
    /// Runs in a row that died with this URL in flight, before this one.
    pub deaths: u8,
    /// In flight now (false: a suspect left by a death, not yet retried).
    pub in_flight: bool,
}
impl Versioned for InFlightRecord {
    const VERSION: u8 = 1;
}

/// `details` value: what lies behind a URL's failure (the error text,
/// the address the network guard refused, the deaths of a crash loop).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct DetailRecord {
    /// The fail reason's name, as in the URL's `seen` state.
    pub reason: String,
    pub detail: String,
    pub at_ms: u64,
}
impl Versioned for DetailRecord {
    const VERSION: u8 = 1;
}

/// `meta/link_limits`: the limits the last crawl judged links by. When a
/// run starts with other limits, links filtered under the old ones are
/// judged again.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct LinkLimits {
    pub max_depth: Option<u16>,
    /// `host`, `domain` or `any`.
    pub scope: String,
    // Version 2: the spider-trap limits.
    pub max_path_depth: Option<u16>,
    pub max_segment_repeats: Option<u16>,
    pub max_query_variants: Option<u32>,
    pub max_host_urls: Option<u64>,
}
impl Versioned for LinkLimits {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        super::decode_appended(bytes, 1, &[4])
    }
}

/// `meta/config`: settings changed from their defaults with the shell's
/// `set`, as (key, value) text pairs in the order they were first set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ConfigEntries {
    pub entries: Vec<(String, String)>,
}
impl Versioned for ConfigEntries {
    const VERSION: u8 = 1;
}

/// `meta/run:<started_ms>`: one crawl run — written when it starts and
/// again when it ends, so a killed run still shows (with `ended_ms` 0).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct RunRecord {
    pub started_ms: u64,
    pub ended_ms: u64,
    /// The settings that shape a run, as (key, value) text.
    pub settings: Vec<(String, String)>,
    pub seeds: u32,
    /// Pages fetched by this run: the paper's "links fetched".
    pub fetched: u64,
    pub links: u64,
    pub elapsed_ms: u64,
    /// elapsed seconds × links fetched.
    pub tlp: f64,
    pub interrupted: bool,
}
impl Versioned for RunRecord {
    const VERSION: u8 = 1;
}
