//! The crawl's settings: [`CrawlSettings`], with the defaults a polite
//! crawler should have, and the table of every key a user can set
//! (`set`, `--set`, the `trawl crawl` flags, saved settings), each typed
//! by its kind ([`validate`]). The CLI and the shell both read the table;
//! a run's record of its settings is generated from it.

use std::time::Duration;

use crate::dedup::DedupSettings;
use crate::fetch::FetchSettings;
use crate::filter::FilterSettings;
use crate::filter::denoise::DenoiseSettings;
use crate::frontier::OrderSettings;
use crate::schema::LinkLimits;

mod key;
mod sections;
mod stop_rules;
mod table;
#[cfg(test)]
mod tests;
pub mod validate;

pub use crate::filter::scope::Scope;
pub use key::Setting;
pub use sections::{RecrawlMode, RecrawlSettings, SitemapSettings, TrapLimits, WarcSettings};
pub use stop_rules::{STOP_SYNTAX, StopRule};
pub use table::{find, find_or_suggest, keys, nearest, value_words};
pub use validate::{fmt_duration, parse_duration};

#[derive(Clone, Debug)]
pub struct CrawlSettings {
    /// Links deeper than this (seeds are depth 0) are not followed.
    pub max_depth: Option<u16>,
    /// Stop once the db holds this many fetched pages.
    pub max_pages: Option<u64>,
    /// Pause between the end of one request to a host and the next.
    pub delay: Duration,
    /// Requests in flight per host.
    pub per_host: usize,
    /// Requests in flight in total.
    pub concurrency: usize,
    /// Links taken from one page at most; the rest are counted and dropped.
    pub max_outlinks: usize,
    pub scope: Scope,
    /// robots.txt Crawl-delay above this is capped (and reported).
    pub max_crawl_delay: Duration,
    /// How long a fetched robots.txt is trusted.
    pub robots_ttl: Duration,
    /// First wait before retrying an unreachable robots.txt; doubles per failure.
    pub robots_retry: Duration,
    /// After this many unreachable robots.txt fetches in a row the host's
    /// queued URLs are dropped as `robots-unavailable`.
    pub robots_max_failures: u32,
    /// Attempts per URL answered with 429/503 before the answer is stored.
    pub max_attempts: u8,
    /// Back-off after 429/503 without a Retry-After.
    pub backoff: Duration,
    /// Upper bound on any back-off, Retry-After included.
    pub max_backoff: Duration,
    /// Redirect hops followed from the URL first linked.
    pub max_redirects: u8,
    /// Follow `rel=nofollow` links.
    pub follow_nofollow: bool,
    /// Follow a seed's links whatever its page verdict (a portal's home
    /// page that is not itself on topic still leads somewhere).
    pub follow_seed_links: bool,
    /// On stop, how long in-flight fetches may run before they are abandoned.
    pub shutdown_grace: Duration,
    /// HTML bodies a crawl trains the db's zstd dictionary on, once per db
    /// (0: pages are stored without one).
    pub dictionary_pages: usize,
    pub fetch: FetchSettings,
    /// The focused-crawl filters (mode none by default).
    pub filter: FilterSettings,
    /// Spider-trap limits on the URLs queued.
    pub traps: TrapLimits,
    /// The order URLs leave the frontier in, with its parameters.
    pub order: OrderSettings,
    /// Rules that stop the crawl once it no longer finds relevant pages.
    pub stop_when: Vec<StopRule>,
    /// Page denoising (document 003), off by default.
    pub denoise: DenoiseSettings,
    /// Near-duplicate detection, off by default.
    pub dedup: DedupSettings,
    /// Seed sites crawled at a time, a group finished before the next
    /// starts (0: all at once).
    pub site_batch: usize,
    /// Sitemaps as URL sources, off by default.
    pub sitemaps: SitemapSettings,
    /// Revisits of fetched pages, off by default.
    pub recrawl: RecrawlSettings,
    /// WARC written while crawling, off by default.
    pub warc: WarcSettings,
    /// The crawl keeps the search index beside the db current (on by
    /// default).
    pub search_live: bool,
}

impl Default for CrawlSettings {
    fn default() -> Self {
        CrawlSettings {
            max_depth: None,
            max_pages: None,
            delay: Duration::from_secs(1),
            per_host: 1,
            concurrency: 64,
            max_outlinks: crate::parse::DEFAULT_MAX_LINKS,
            scope: Scope::Host,
            max_crawl_delay: Duration::from_secs(60),
            robots_ttl: Duration::from_secs(24 * 3600),
            robots_retry: Duration::from_secs(30),
            robots_max_failures: 3,
            max_attempts: 3,
            backoff: Duration::from_secs(30),
            max_backoff: Duration::from_secs(600),
            max_redirects: 5,
            follow_nofollow: false,
            follow_seed_links: true,
            shutdown_grace: Duration::from_secs(10),
            dictionary_pages: 400,
            fetch: FetchSettings::default(),
            filter: FilterSettings::default(),
            traps: TrapLimits::default(),
            order: OrderSettings::default(),
            stop_when: Vec::new(),
            denoise: DenoiseSettings::default(),
            dedup: DedupSettings::default(),
            site_batch: 0,
            sitemaps: SitemapSettings::default(),
            recrawl: RecrawlSettings::default(),
            warc: WarcSettings::default(),
            search_live: true,
        }
    }
}

impl CrawlSettings {
    /// The limits a link is judged by before it is queued: when they
    /// change, URLs they filtered are judged again.
    pub fn link_limits(&self) -> LinkLimits {
        let t = &self.traps;
        LinkLimits {
            max_depth: self.max_depth,
            scope: self.scope.name().to_string(),
            max_path_depth: t.max_path_depth,
            max_segment_repeats: t.max_segment_repeats,
            max_query_variants: t.max_query_variants,
            max_host_urls: t.max_host_urls,
            // The ledger adds the seed sites' own.
            site_depths: Vec::new(),
        }
    }

    /// The robots.txt product token of our user agent.
    pub fn agent_token(&self) -> &str {
        crate::fetch::product_token(&self.fetch.user_agent)
    }
}

impl CrawlSettings {
    /// The settings that shape a run's result, for its run record: the
    /// table's keys marked `run`, in the table's order.
    pub fn summary(&self) -> Vec<(String, String)> {
        keys()
            .filter_map(|k| k.run_entry(self))
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }
}
