//! Each column family (and each kind of `meta` row) as a type naming its
//! key and value, so code outside `store` reads and writes rows through
//! typed calls — `Store::row`, `Store::rows`, `Store::meta`,
//! `Batch::put_row`, `Batch::put_meta` — instead of
//! bytes, and a scan counts the rows it cannot decode instead of skipping
//! them without a word.

use super::{
    CF_CAPPED, CF_CLUSTER_SITES, CF_CLUSTERS, CF_DETAILS, CF_DOCS, CF_DUE, CF_FRONTIER,
    CF_HOST_RANKS, CF_HOSTS, CF_INFLIGHT, CF_LASTMODS, CF_META, CF_PAGE_FACTS, CF_PAGES, CF_RANKS,
    CF_ROBOTS, CF_SEARCH_LOG, CF_SEEN, CF_SITEMAPS, CF_SITES, CF_TARGETS, CF_VERDICTS, CF_VISITS,
    CF_WARC, CappedRecord, ClusterRecord, ClusterSiteKey, ConfigEntries, Counters, DetailRecord,
    DocRecord, DueKey, DueReason, FrontierEntry, FrontierKey, HostRankRecord, HostRecord,
    InFlightRecord, LastmodRecord, LinkLimits, ModelRecord, OrderState, PageFactsRecord,
    PageRecord, RankRecord, RankRun, RecrawlState, RunRecord, SearchLogRecord, SeedList,
    SeenRecord, SiteRecord, SitemapRecord, TargetRecord, VerdictRecord, Versioned, VisitRecord,
    WarcRow, meta_keys,
};
use crate::model::{HostId, RobotsRecord, UrlId};

/// A row key: its bytes (on the stack for the fixed-width keys, as every
/// page writes several rows), and back.
pub trait Key: Sized {
    type Bytes: AsRef<[u8]>;
    fn bytes(&self) -> Self::Bytes;
    fn parse(bytes: &[u8]) -> Option<Self>;
}

impl Key for UrlId {
    type Bytes = [u8; 16];
    fn bytes(&self) -> [u8; 16] {
        self.to_bytes()
    }
    fn parse(bytes: &[u8]) -> Option<Self> {
        UrlId::from_slice(bytes)
    }
}

impl Key for HostId {
    type Bytes = [u8; 8];
    fn bytes(&self) -> [u8; 8] {
        self.to_bytes()
    }
    fn parse(bytes: &[u8]) -> Option<Self> {
        HostId::from_slice(bytes)
    }
}

impl Key for DueKey {
    type Bytes = [u8; 24];
    fn bytes(&self) -> [u8; 24] {
        self.to_key()
    }
    fn parse(bytes: &[u8]) -> Option<Self> {
        DueKey::from_key(bytes)
    }
}

impl Key for ClusterSiteKey {
    type Bytes = [u8; 24];
    fn bytes(&self) -> [u8; 24] {
        self.to_key()
    }
    fn parse(bytes: &[u8]) -> Option<Self> {
        ClusterSiteKey::from_key(bytes)
    }
}

impl Key for FrontierKey {
    type Bytes = [u8; 32];
    fn bytes(&self) -> [u8; 32] {
        self.to_key()
    }
    fn parse(bytes: &[u8]) -> Option<Self> {
        FrontierKey::from_key(bytes)
    }
}

/// A `search_log` row's key: its sequence number, big-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LogSeq(pub u64);

impl Key for LogSeq {
    type Bytes = [u8; 8];
    fn bytes(&self) -> [u8; 8] {
        self.0.to_be_bytes()
    }
    fn parse(bytes: &[u8]) -> Option<Self> {
        Some(LogSeq(u64::from_be_bytes(bytes.try_into().ok()?)))
    }
}

/// A run record's key: `run:` ‖ its start (ms, big-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunKey(pub u64);

impl Key for RunKey {
    type Bytes = Vec<u8>;
    fn bytes(&self) -> Vec<u8> {
        meta_keys::run(self.0)
    }
    fn parse(bytes: &[u8]) -> Option<Self> {
        let rest = bytes.strip_prefix(meta_keys::RUN_PREFIX)?;
        Some(RunKey(u64::from_be_bytes(rest.try_into().ok()?)))
    }
}

/// A column family (or a family of `meta` rows) with typed keys and values.
pub trait Table {
    const CF: &'static str;
    /// The prefix every key of the table starts with (`meta` rows share
    /// their column family with others).
    const PREFIX: &'static [u8] = &[];
    type Key: Key;
    type Value: Versioned;
}

macro_rules! table {
    ($(#[$doc:meta])* $name:ident: $cf:expr, $key:ty => $value:ty $(, prefix $prefix:expr)?) => {
        $(#[$doc])*
        pub struct $name;
        impl Table for $name {
            const CF: &'static str = $cf;
            $(const PREFIX: &'static [u8] = $prefix;)?
            type Key = $key;
            type Value = $value;
        }
    };
}

table!(
    /// The URL-seen set with each URL's fate.
    Seen: CF_SEEN, UrlId => SeenRecord
);
table!(
    /// Queued URLs, by host then priority.
    Frontier: CF_FRONTIER, FrontierKey => FrontierEntry
);
table!(
    /// Per-host politeness state.
    Hosts: CF_HOSTS, HostId => HostRecord
);
table!(
    /// Each host's robots.txt as last fetched.
    Robots: CF_ROBOTS, HostId => RobotsRecord
);
table!(
    /// Fetched responses.
    Pages: CF_PAGES, UrlId => PageRecord
);
table!(
    /// Each page's record without its body (written beside it).
    PageFacts: CF_PAGE_FACTS, UrlId => PageFactsRecord
);
table!(
    /// What parsing derived from a page.
    Docs: CF_DOCS, UrlId => DocRecord
);
table!(
    /// Each page's verdict and scores.
    Verdicts: CF_VERDICTS, UrlId => VerdictRecord
);
table!(
    /// Near-duplicate clusters, by their first page.
    Clusters: CF_CLUSTERS, UrlId => ClusterRecord
);
table!(
    /// Each site's pages in a near-duplicate cluster (its budget is a
    /// site's).
    ClusterSites: CF_CLUSTER_SITES, ClusterSiteKey => ClusterRecord
);
table!(
    /// Pages whose links past a cap were not taken, and how many.
    Capped: CF_CAPPED, UrlId => CappedRecord
);
table!(
    /// Where each page's latest fetch is archived (`warc.dir`).
    Warc: CF_WARC, UrlId => WarcRow
);
table!(
    /// Pages whose search document changed, in order, until the search
    /// index has taken them (schema 26).
    SearchLog: CF_SEARCH_LOG, LogSeq => SearchLogRecord
);
table!(
    /// The text behind a URL's failure.
    Details: CF_DETAILS, UrlId => DetailRecord
);
table!(
    /// Pages handed to a fetch and not yet recorded.
    InFlight: CF_INFLIGHT, UrlId => InFlightRecord
);
table!(
    /// Each fetched page's PageRank (`rank pagerank`).
    Ranks: CF_RANKS, UrlId => RankRecord
);
table!(
    /// Each host's rank in the host graph (`rank hosts`).
    HostRanks: CF_HOST_RANKS, HostId => HostRankRecord
);
table!(
    /// The seed library: each seed site's metadata and own settings.
    Sites: CF_SITES, HostId => SiteRecord
);
table!(
    /// Every sitemap file the crawl found, and what reading it gave.
    Sitemaps: CF_SITEMAPS, UrlId => SitemapRecord
);
table!(
    /// Each URL a sitemap listed: the sitemap and its `<lastmod>`.
    Lastmods: CF_LASTMODS, UrlId => LastmodRecord
);
table!(
    /// Each page's visits under `recrawl`, and its past versions.
    Visits: CF_VISITS, UrlId => VisitRecord
);
table!(
    /// The pages due for a revisit, soonest first.
    Due: CF_DUE, DueKey => DueReason
);
table!(
    /// URLs known to be relevant, for target recall.
    Targets: CF_TARGETS, UrlId => TargetRecord
);
table!(
    /// One record per crawl run.
    Runs: CF_META, RunKey => RunRecord, prefix meta_keys::RUN_PREFIX
);

/// A single row of `meta` with its own value type.
pub trait MetaRow {
    const KEY: &'static [u8];
    type Value: Versioned;
}

macro_rules! meta_row {
    ($(#[$doc:meta])* $name:ident: $key:expr => $value:ty) => {
        $(#[$doc])*
        pub struct $name;
        impl MetaRow for $name {
            const KEY: &'static [u8] = $key;
            type Value = $value;
        }
    };
}

meta_row!(
    /// The revisit policy the `due` rows were timed under.
    RecrawlRow: meta_keys::RECRAWL => RecrawlState
);
meta_row!(
    /// The crawl's counters, written with every batch.
    CountersRow: meta_keys::COUNTERS => Counters
);
meta_row!(
    /// The seed list.
    SeedsRow: meta_keys::SEEDS => SeedList
);
meta_row!(
    /// The limits links were last judged by.
    LinkLimitsRow: meta_keys::LINK_LIMITS => LinkLimits
);
meta_row!(
    /// The order the frontier's keys follow.
    OrderRow: meta_keys::ORDER => OrderState
);
meta_row!(
    /// The last PageRank stored.
    RankRow: meta_keys::RANK => RankRun
);
meta_row!(
    /// The last host ranking stored.
    HostRankRow: meta_keys::HOST_RANK => RankRun
);
meta_row!(
    /// The learned order's link model.
    ModelRow: meta_keys::MODEL => ModelRecord
);
meta_row!(
    /// Settings saved with `set`.
    ConfigRow: meta_keys::CONFIG => ConfigEntries
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        assert_eq!(UrlId::parse(&UrlId(7).bytes()), Some(UrlId(7)));
        assert_eq!(HostId::parse(&HostId(9).bytes()), Some(HostId(9)));
        assert_eq!(RunKey::parse(&RunKey(5).bytes()), Some(RunKey(5)));
        assert!(RunKey(5).bytes().starts_with(Runs::PREFIX));
        assert_eq!(UrlId(7).bytes().len(), 16);
        assert_eq!(UrlId::parse(b"short"), None);
    }
}
