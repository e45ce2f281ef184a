//! `sitemaps.*`: sitemaps as URL sources.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[
    key!(
        "sitemaps.enabled",
        Bool,
        "read sitemaps: the Sitemap: lines of each robots.txt fetched, and a seed host's /sitemap.xml when its robots.txt names none",
        |s| s.sitemaps.enabled,
        |s, b| s.sitemaps.enabled = b,
        run
    ),
    key!(
        "sitemaps.max_per_host",
        Int {
            min: 1,
            max: 100_000
        },
        "sitemap files read at most for one host (indexes and the sitemaps they list)",
        |s| s.sitemaps.max_per_host as u64,
        |s, n| s.sitemaps.max_per_host = n as u32
    ),
];
