//! The `sitemaps.*` settings: sitemaps as URL sources.

use super::{Key, Kind, Value};

pub(super) static SITEMAP_KEYS: &[Key] = &[
    key!(
        "sitemaps.enabled",
        Kind::Bool,
        "read sitemaps: the Sitemap: lines of each robots.txt fetched, and a seed host's /sitemap.xml when its robots.txt names none",
        |s| s.sitemaps.enabled.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.sitemaps.enabled = b
        }
    ),
    key!(
        "sitemaps.max_per_host",
        Kind::Int {
            min: 1,
            max: 100_000
        },
        "sitemap files read at most for one host (indexes and the sitemaps they list)",
        |s| s.sitemaps.max_per_host.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.sitemaps.max_per_host = n as u32
        }
    ),
];
