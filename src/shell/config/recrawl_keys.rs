//! The `recrawl.*` settings: revisits of fetched pages (document 002);
//! `recrawl uniform EVERY` and `recrawl change-rate` set them in one go.

use std::time::Duration;

use super::{Key, Kind, Value, fmt_duration};
use crate::crawl::RecrawlMode;

const MINUTE: Duration = Duration::from_secs(60);
const YEAR: Duration = Duration::from_secs(366 * 86_400);

pub(super) static RECRAWL_KEYS: &[Key] = &[
    key!(
        "recrawl.mode",
        Kind::Enum(RecrawlMode::NAMES),
        "revisit fetched pages: off, uniform (every page after recrawl.every) or change-rate (after 1/λ of the page's estimated change rate, within recrawl.min..recrawl.max); a crawl with revisits on waits for the next one instead of ending",
        |s| s.recrawl.mode.name().to_string(),
        |s, v| if let Value::Text(t) = v {
            s.recrawl.mode = RecrawlMode::parse(&t).unwrap_or_default()
        }
    ),
    key!(
        "recrawl.every",
        Kind::Duration {
            min: MINUTE,
            max: YEAR
        },
        "the uniform revisit interval",
        |s| fmt_duration(s.recrawl.every),
        |s, v| if let Value::Duration(d) = v {
            s.recrawl.every = d
        }
    ),
    key!(
        "recrawl.min",
        Kind::Duration {
            min: MINUTE,
            max: YEAR
        },
        "change-rate revisits: the shortest interval, and a page's first",
        |s| fmt_duration(s.recrawl.min),
        |s, v| if let Value::Duration(d) = v {
            s.recrawl.min = d
        }
    ),
    key!(
        "recrawl.max",
        Kind::Duration {
            min: MINUTE,
            max: YEAR
        },
        "change-rate revisits: the longest interval (a page never seen to change reaches it by doubling)",
        |s| fmt_duration(s.recrawl.max),
        |s, v| if let Value::Duration(d) = v {
            s.recrawl.max = d
        }
    ),
];
