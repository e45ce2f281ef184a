//! `fetch.*`, `net.*` and `store.*`: what one request may take, where it
//! may connect, and how pages are stored.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[
    key!(
        "fetch.user_agent",
        UserAgent,
        "User-Agent header; its first token is matched against robots.txt groups",
        |s| s.fetch.user_agent.clone(),
        |s, ua| s.fetch.user_agent = ua
    ),
    key!(
        "fetch.timeout",
        Span {
            min: TIMEOUT_MIN,
            max: HOUR
        },
        "total time one fetch may take",
        |s| s.fetch.total_timeout,
        |s, d| s.fetch.total_timeout = d
    ),
    key!(
        "fetch.connect_timeout",
        Span {
            min: TIMEOUT_MIN,
            max: HOUR
        },
        "time to open a connection",
        |s| s.fetch.connect_timeout,
        |s, d| s.fetch.connect_timeout = d
    ),
    key!(
        "fetch.first_byte_timeout",
        Span {
            min: TIMEOUT_MIN,
            max: HOUR
        },
        "time until the response headers arrive",
        |s| s.fetch.first_byte_timeout,
        |s, d| s.fetch.first_byte_timeout = d
    ),
    key!(
        "fetch.max_body",
        Int {
            min: 1024,
            max: 1 << 30
        },
        "cap in bytes on a body, on the wire and decoded",
        |s| s.fetch.max_body_bytes as u64,
        |s, n| s.fetch.max_body_bytes = n as usize
    ),
    key!(
        "fetch.memory_budget",
        Int {
            min: 1 << 20,
            max: 1 << 40
        },
        "bytes of bodies in flight at most (read, decoded, waiting to be stored), beyond each body's first 64 KiB",
        |s| s.fetch.memory_budget as u64,
        |s, n| s.fetch.memory_budget = n as usize
    ),
    key!(
        "fetch.min_speed",
        Int {
            min: 0,
            max: 1 << 30
        },
        "bytes a second a body must bring over each fetch.min_speed_window, or it is cut as too-slow (0: no minimum)",
        |s| s.fetch.min_speed,
        |s, n| s.fetch.min_speed = n
    ),
    key!(
        "fetch.min_speed_window",
        Span {
            min: Duration::from_secs(1),
            max: HOUR
        },
        "the time over which a body's speed is measured against fetch.min_speed",
        |s| s.fetch.min_speed_window,
        |s, d| s.fetch.min_speed_window = d
    ),
    key!(
        "net.allow_private",
        Bool,
        "connect to loopback and private addresses other than the seeds' own (link-local and cloud-metadata addresses never)",
        |s| s.fetch.allow_private,
        |s, b| s.fetch.allow_private = b
    ),
    key!(
        "fetch.ca_file",
        OptPath,
        "extra PEM root certificate(s) to trust (none: only the built-in roots)",
        |s| s.fetch.ca_file.clone(),
        |s, path| s.fetch.ca_file = path
    ),
    key!(
        "store.dictionary_pages",
        Int {
            min: 0,
            max: 10_000
        },
        "HTML pages (at most 4 MiB of them) a crawl trains the db's zstd dictionary on when the db has none; 0: pages are stored without a dictionary",
        |s| s.dictionary_pages as u64,
        |s, n| s.dictionary_pages = n as usize,
        at_start
    ),
];
