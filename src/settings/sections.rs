//! The sections of [`super::CrawlSettings`] that belong to no lower
//! layer: spider-trap limits, sitemaps and revisits. The code that applies
//! them lives in `crawl` (`traps`, `ledger/sitemaps`, `revisit`).

use std::time::Duration;

use crate::model::named_enum;

/// Spider-trap limits: URLs whose shape or number says the site generates
/// them without end; `None` turns one off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrapLimits {
    /// Path segments at most (`/a/b/c` has 3).
    pub max_path_depth: Option<u16>,
    /// Times one segment may appear in a path (`/a/b/a/b/a` has `a` 3 times).
    pub max_segment_repeats: Option<u16>,
    /// Distinct query strings queued for one path of a host.
    pub max_query_variants: Option<u32>,
    /// URLs queued for one host in all.
    pub max_host_urls: Option<u64>,
}

impl Default for TrapLimits {
    fn default() -> Self {
        TrapLimits {
            max_path_depth: Some(32),
            max_segment_repeats: Some(3),
            max_query_variants: Some(10_000),
            max_host_urls: None,
        }
    }
}

/// WARC files written while crawling (`warc.dir`).
#[derive(Clone, Debug, PartialEq)]
pub struct WarcSettings {
    /// Where the files go; None: no WARC is written.
    pub dir: Option<std::path::PathBuf>,
    /// A file is closed and the next begun before it would pass this.
    pub max_file_size: u64,
    /// The files' names begin with it.
    pub prefix: String,
    /// Deflate level of each record's gzip member (0: stored; 1: igzip's
    /// fastest, 2: its level 1, 3 and up: its best).
    pub gzip_level: u32,
}

impl Default for WarcSettings {
    fn default() -> Self {
        WarcSettings {
            dir: None,
            max_file_size: 1 << 30,
            prefix: "trawl".into(),
            gzip_level: 1,
        }
    }
}

/// Sitemaps as URL sources.
#[derive(Clone, Debug, PartialEq)]
pub struct SitemapSettings {
    pub enabled: bool,
    /// Sitemap files read at most for one host.
    pub max_per_host: u32,
}

impl Default for SitemapSettings {
    fn default() -> Self {
        SitemapSettings {
            enabled: false,
            max_per_host: 50,
        }
    }
}

/// Whether fetched pages are revisited, and how often.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RecrawlMode {
    /// Pages are fetched once.
    #[default]
    Off,
    /// Every page is due `every` after its last visit.
    Uniform,
    /// Each page is due after 1/λ̂, within `min..=max`.
    ChangeRate,
}

named_enum!(RecrawlMode {
    Off => "off",
    Uniform => "uniform",
    ChangeRate => "change-rate",
});

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecrawlSettings {
    pub mode: RecrawlMode,
    /// The uniform interval.
    pub every: Duration,
    /// The change-rate intervals' bounds; a page's first revisit comes
    /// after `min`.
    pub min: Duration,
    pub max: Duration,
}

impl Default for RecrawlSettings {
    fn default() -> Self {
        RecrawlSettings {
            mode: RecrawlMode::Off,
            every: Duration::from_secs(24 * 3600),
            min: Duration::from_secs(3600),
            max: Duration::from_secs(30 * 24 * 3600),
        }
    }
}

impl RecrawlSettings {
    pub fn is_on(&self) -> bool {
        self.mode != RecrawlMode::Off
    }

    /// What decides the due times: a change re-times every page.
    pub fn fingerprint(&self) -> String {
        match self.mode {
            RecrawlMode::Off => "off".into(),
            RecrawlMode::Uniform => format!("uniform {}ms", self.every.as_millis()),
            RecrawlMode::ChangeRate => format!(
                "change-rate {}ms..{}ms",
                self.min.as_millis(),
                self.max.as_millis()
            ),
        }
    }
}
