//! `crawl.*` limits and politeness, and `robots.*`: how far, how fast
//! and how politely the crawl goes.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[
    key!(
        "crawl.depth",
        OptInt { min: 0, max: 65535 },
        "links followed at most this many hops from a seed (none: no limit)",
        |s| s.max_depth.map(u64::from),
        |s, n| s.max_depth = n.map(|n| n as u16),
        run
    ),
    key!(
        "crawl.max_pages",
        OptInt {
            min: 1,
            max: u64::MAX
        },
        "stop when the db holds this many fetched pages (none: no limit)",
        |s| s.max_pages,
        |s, n| s.max_pages = n,
        run
    ),
    key!(
        "crawl.delay",
        Span {
            min: Duration::ZERO,
            max: HOUR
        },
        "pause between two requests to one host",
        |s| s.delay,
        |s, d| s.delay = d,
        run_as("crawl.delay", |s| format!("{}ms", s.delay.as_millis()))
    ),
    key!(
        "crawl.concurrency",
        Int {
            min: 1,
            max: 10_000
        },
        "requests in flight in total",
        |s| s.concurrency as u64,
        |s, n| s.concurrency = n as usize,
        run
    ),
    key!(
        "crawl.per_host",
        Int { min: 1, max: 256 },
        "requests in flight per host",
        |s| s.per_host as u64,
        |s, n| s.per_host = n as usize,
        run
    ),
    key!(
        "crawl.max_outlinks",
        Int {
            min: 1,
            max: 1_000_000
        },
        "links taken from one page at most; the rest are counted and dropped",
        |s| s.max_outlinks as u64,
        |s, n| s.max_outlinks = n as usize,
        run
    ),
    key!(
        "crawl.site_batch",
        Int {
            min: 0,
            max: 1_000_000
        },
        "seed sites crawled at a time, in the order given: a group is finished before the next starts (0: all at once)",
        |s| s.site_batch as u64,
        |s, n| s.site_batch = n as usize,
        run
    ),
    key!(
        "crawl.scope",
        named::<Scope>(),
        "hosts the crawl may enter: the seeds' hosts, their registrable domains, or any",
        |s| s.scope,
        |s, scope| s.scope = scope,
        run
    ),
    key!(
        "crawl.max_path_depth",
        OptInt { min: 1, max: 1000 },
        "spider traps: URLs with more path segments are not queued (none: no limit)",
        |s| s.traps.max_path_depth.map(u64::from),
        |s, n| s.traps.max_path_depth = n.map(|n| n as u16)
    ),
    key!(
        "crawl.max_segment_repeats",
        OptInt { min: 1, max: 1000 },
        "spider traps: URLs whose path repeats one segment more often are not queued (/a/b/a/b/a…)",
        |s| s.traps.max_segment_repeats.map(u64::from),
        |s, n| s.traps.max_segment_repeats = n.map(|n| n as u16)
    ),
    key!(
        "crawl.max_query_variants",
        OptInt {
            min: 1,
            max: u32::MAX as u64
        },
        "spider traps: query strings queued at most for one path of a host (calendars, session ids)",
        |s| s.traps.max_query_variants.map(u64::from),
        |s, n| s.traps.max_query_variants = n.map(|n| n as u32)
    ),
    key!(
        "crawl.max_host_urls",
        OptInt {
            min: 1,
            max: u64::MAX
        },
        "URLs queued at most for one host (none: no limit)",
        |s| s.traps.max_host_urls,
        |s, n| s.traps.max_host_urls = n
    ),
    key!(
        "crawl.follow_nofollow",
        Bool,
        "follow rel=nofollow links",
        |s| s.follow_nofollow,
        |s, b| s.follow_nofollow = b
    ),
    key!(
        "crawl.follow_seed_links",
        Bool,
        "follow a seed's links whatever the page filters say of the seed itself",
        |s| s.follow_seed_links,
        |s, b| s.follow_seed_links = b
    ),
    key!(
        "crawl.max_redirects",
        Int { min: 0, max: 20 },
        "redirect hops followed from the URL first linked",
        |s| s.max_redirects as u64,
        |s, n| s.max_redirects = n as u8
    ),
    key!(
        "crawl.max_attempts",
        Int { min: 1, max: 20 },
        "tries per URL answered with 429/503 before the answer is kept",
        |s| s.max_attempts as u64,
        |s, n| s.max_attempts = n as u8
    ),
    key!(
        "crawl.backoff",
        Span {
            min: Duration::ZERO,
            max: HOUR
        },
        "host back-off after 429/503 without Retry-After",
        |s| s.backoff,
        |s, d| s.backoff = d
    ),
    key!(
        "crawl.max_backoff",
        Span {
            min: Duration::ZERO,
            max: Duration::from_secs(86_400)
        },
        "upper bound on any back-off, Retry-After included",
        |s| s.max_backoff,
        |s, d| s.max_backoff = d
    ),
    key!(
        "robots.max_crawl_delay",
        Span {
            min: Duration::ZERO,
            max: HOUR
        },
        "robots.txt Crawl-delay above this is capped",
        |s| s.max_crawl_delay,
        |s, d| s.max_crawl_delay = d
    ),
    key!(
        "robots.ttl",
        Span {
            min: Duration::ZERO,
            max: Duration::from_secs(30 * 86_400)
        },
        "how long a fetched robots.txt is trusted",
        |s| s.robots_ttl,
        |s, d| s.robots_ttl = d
    ),
    key!(
        "robots.retry",
        Span {
            min: Duration::ZERO,
            max: HOUR
        },
        "first wait before retrying an unreachable robots.txt (doubles each time)",
        |s| s.robots_retry,
        |s, d| s.robots_retry = d
    ),
    key!(
        "robots.max_failures",
        Int { min: 1, max: 100 },
        "unreachable robots.txt fetches in a row before the host's URLs are dropped",
        |s| s.robots_max_failures as u64,
        |s, n| s.robots_max_failures = n as u32
    ),
];
