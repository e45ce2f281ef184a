//! `recrawl.*`: revisits of fetched pages (document 002); `recrawl
//! uniform EVERY` and `recrawl change-rate` set them in one go.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[
    key!(
        "recrawl.mode",
        named::<RecrawlMode>(),
        "revisit fetched pages: off, uniform (every page after recrawl.every) or change-rate (after 1/λ of the page's estimated change rate, within recrawl.min..recrawl.max); a crawl with revisits on waits for the next one instead of ending",
        |s| s.recrawl.mode,
        |s, mode| s.recrawl.mode = mode,
        run_as("recrawl", |s| s.recrawl.fingerprint())
    ),
    key!(
        "recrawl.every",
        Span {
            min: MINUTE,
            max: YEAR
        },
        "the uniform revisit interval",
        |s| s.recrawl.every,
        |s, d| s.recrawl.every = d
    ),
    key!(
        "recrawl.min",
        Span {
            min: MINUTE,
            max: YEAR
        },
        "change-rate revisits: the shortest interval, and a page's first",
        |s| s.recrawl.min,
        |s, d| s.recrawl.min = d
    ),
    key!(
        "recrawl.max",
        Span {
            min: MINUTE,
            max: YEAR
        },
        "change-rate revisits: the longest interval (a page never seen to change reaches it by doubling)",
        |s| s.recrawl.max,
        |s, d| s.recrawl.max = d
    ),
];
