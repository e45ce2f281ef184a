//! What became of a URL and of a host's robots.txt: the outcomes the
//! fetcher, the filters and the crawl speak in. They are stored as they
//! are (see `schema`), so a variant is only ever added at the end.

use serde::{Deserialize, Serialize};

use super::named_enum;

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

named_enum!(FilterReason {
    Scope => "scope",
    Depth => "depth",
    Robots => "robots",
    RobotsUnavailable => "robots-unavailable",
    UrlTooLong => "url-too-long",
    Nofollow => "nofollow",
    RedirectChain => "redirect-chain",
    Domain => "domain",
    LinkType => "link-type",
    Refiltered => "refiltered",
    PathDepth => "path-depth",
    SegmentRepeats => "segment-repeats",
    QueryVariants => "query-variants",
    HostBudget => "host-budget",
    InvalidUrl => "invalid-url",
});

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
    // Schema 21:
    /// The body came more slowly than `fetch.min_speed` (a tarpit).
    TooSlow,
}

named_enum!(FailReason {
    Dns => "dns",
    Connect => "connect",
    Tls => "tls",
    Timeout => "timeout",
    Protocol => "protocol",
    RetriesExhausted => "retries-exhausted",
    Internal => "internal-error",
    CrashLoop => "crash-loop",
    NetworkGuard => "network-guard",
    BadResponse => "bad-response",
    HeadersTooLarge => "headers-too-large",
    Incomplete => "incomplete",
    BadEncoding => "bad-encoding",
    TooSlow => "too-slow",
});

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
