//! Values of the collection's column families (document 003 and 002):
//! the seed-site library (`sites`), the sitemaps read (`sitemaps`,
//! `lastmods`) and the revisits (`visits`, `due`).

use serde::{Deserialize, Serialize};

use super::Versioned;

/// `sites` value: a seed site of the library (document 003), keyed by the
/// host id of its origin: what the person knows of it, and the crawl
/// settings of its own that override the crawl's on its pages.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct SiteRecord {
    /// `scheme://host[:port]`.
    pub origin: String,
    /// The subject field it belongs to.
    pub subject: String,
    /// Where it was found (a directory, a colleague, co-link discovery).
    pub source: String,
    /// What it holds (papers, news, a forum…).
    pub content_type: String,
    pub notes: String,
    pub added_ms: u64,
    pub settings: SiteSettings,
    // Version 2 (co-link discovery): a host proposed as a seed site.
    /// What the person decided about it as a candidate.
    pub decision: Decision,
    pub decided_ms: u64,
    /// Its robots.txt and home page when `discover seeds --probe` last
    /// fetched them.
    pub probe: Option<ProbeRecord>,
}
impl Versioned for SiteRecord {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        // Version 2: the decision's tag, decided_ms and the probe's tag.
        super::decode_appended(bytes, 1, &[3])
    }
}

/// `sitemaps` value: a sitemap file the crawl found (`sitemaps.enabled`)
/// and what reading it gave.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct SitemapRecord {
    pub url: String,
    /// How it was found: `robots` (a `Sitemap:` line), `guess` (a seed
    /// host's `/sitemap.xml`) or `index` (listed in a sitemap index).
    pub via: String,
    /// The index that listed it.
    pub parent: Option<u128>,
    pub found_ms: u64,
    /// 0 until fetched.
    pub fetched_ms: u64,
    /// `urlset`, `sitemapindex` or `text`; empty until read.
    pub kind: String,
    /// Entries read (URLs, or sitemaps for an index).
    pub entries: u32,
    /// Entries whose `<loc>` was not an absolute http(s) URL (or, from
    /// schema 21, was longer than the URL limit).
    pub skipped: u32,
    /// Entries past the protocol's 50,000 a file.
    pub dropped: u32,
    /// What was wrong with it (status, not a sitemap, cut short…).
    pub problem: String,
}
impl Versioned for SitemapRecord {
    const VERSION: u8 = 1;
}

/// `lastmods` value: the sitemap that last listed a URL, and the
/// `<lastmod>` it gave.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct LastmodRecord {
    pub sitemap: u128,
    pub lastmod_ms: Option<u64>,
}
impl Versioned for LastmodRecord {
    const VERSION: u8 = 1;
}

/// A person's decision about a host `discover seeds` proposed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Decision {
    /// None yet (every seed site added by hand).
    #[default]
    Undecided,
    /// `seed accept`: it became a seed site; the network guard gives its
    /// seeds no private address (schema 21).
    Accepted,
    /// `seed reject`: never proposed again.
    Rejected,
    /// `seed accept --allow-private`: a seed site whose seeds, like one
    /// added by hand, may be fetched at the private address they resolve
    /// to (schema 21).
    AcceptedPrivate,
}

impl Decision {
    pub fn name(self) -> &'static str {
        match self {
            Decision::Undecided => "",
            Decision::Accepted => "accepted",
            Decision::Rejected => "rejected",
            Decision::AcceptedPrivate => "accepted (private allowed)",
        }
    }
}

/// What probing a candidate host found: its robots.txt and home page,
/// fetched politely through the network guard.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ProbeRecord {
    pub checked_ms: u64,
    /// Its robots.txt: a status, `unreachable`, or `blocked` (the network
    /// guard refused its address).
    pub robots: String,
    /// The home page's status; None when it was not fetched (robots.txt
    /// unreachable or disallowing `/`, the guard) or failed.
    pub home: Option<u16>,
    /// Why the home page was not fetched or failed; empty when fetched.
    pub detail: String,
    /// The home page's title.
    pub title: String,
    /// The home page's topic score under the crawl's topic keywords.
    pub topic: Option<f64>,
}

/// A seed site's own crawl settings; None: the crawl's.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct SiteSettings {
    pub depth: Option<u16>,
    /// A `filter.mode` name.
    pub filter: Option<String>,
    pub delay_ms: Option<u64>,
    /// Pages fetched from the site's hosts at most.
    pub max_pages: Option<u64>,
    /// A `crawl.order` name.
    pub order: Option<String>,
}

/// `visits` value: a fetched page's visits under `recrawl`, what they
/// found, and when it is due again (document 002's revisit policies).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct VisitRecord {
    pub url: String,
    /// Responses stored or confirmed, the first fetch included.
    pub visits: u32,
    /// Revisits that found a new version.
    pub changes: u32,
    /// The latest intervals between visits that got a response, oldest
    /// first (at most [`VisitRecord::RECENT`]): the change-rate estimate's
    /// inputs, so it follows what the page does lately.
    pub recent: Vec<VisitInterval>,
    /// The last visit that got a response.
    pub last_ms: u64,
    /// When the stored version was first fetched.
    pub version_ms: u64,
    /// Revisits that got no response (the page was kept as it was).
    pub failures: u32,
    pub last_error: String,
    /// Its `due` row's time (0: none).
    pub due_ms: u64,
    /// In the frontier as a revisit.
    pub queued: bool,
    /// The validators a revisit sends: `If-None-Match`, `If-Modified-Since`.
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// The versions before the stored one, oldest first (at most
    /// [`VisitRecord::HISTORY`]).
    pub history: Vec<PastVersion>,
    /// The hash of the stored version's title and text (see
    /// `crawl::revisit::text_hash`); None for a page that is not HTML, or
    /// one fetched before schema 21 (its next revisit compares MD5s).
    pub text_hash: Option<u64>,
    /// The change-rate estimate λ̂ (changes a millisecond) as of the last
    /// visit: 0 while no change was seen; None in a row from before
    /// schema 21 (computed from `recent` when read).
    pub rate: Option<f64>,
    /// What decided the last revisit with a response.
    pub compared: Compared,
}
impl Versioned for VisitRecord {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        // Version 2: `text_hash` and `rate` (None: one byte each) and the
        // `compared` tag.
        super::decode_appended(bytes, 1, &[3])
    }
}

/// What a revisit's response was compared with the stored version by.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compared {
    /// Not revisited with a response yet.
    #[default]
    Nothing,
    /// The server answered 304 Not Modified.
    NotModified,
    /// Another status, or a redirect elsewhere: changed.
    Status,
    /// The body's MD5 (a body without text, or a version stored before
    /// text hashes were kept).
    Md5,
    /// The hash of the title and text.
    Text,
    /// The text's simhash, within `dedup.distance` bits: unchanged.
    Simhash,
}

impl VisitRecord {
    /// Past versions kept per page.
    pub const HISTORY: usize = 16;
    /// Intervals kept per page.
    pub const RECENT: usize = 32;
}

/// The time between two visits of a page, and whether the second found
/// it changed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct VisitInterval {
    pub ms: u64,
    pub changed: bool,
}

/// A version of a page that a revisit found replaced.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct PastVersion {
    pub md5: [u8; 16],
    pub status: u16,
    /// When it was first fetched, and when a revisit found it gone.
    pub fetched_ms: u64,
    pub replaced_ms: u64,
}

/// `due` value: why the page is due.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DueReason {
    /// Its revisit interval (`recrawl.mode`) ran out.
    #[default]
    Interval,
    /// A sitemap gave it a `<lastmod>` after its last visit.
    Lastmod,
}
impl Versioned for DueReason {
    const VERSION: u8 = 1;
}

/// `meta/recrawl`: the revisit policy (`RecrawlSettings::fingerprint`)
/// the `due` rows were timed under; another one re-times them.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct RecrawlState {
    pub fingerprint: String,
    /// Retiming under `fingerprint` is under way: the next `seen` key to
    /// time (None: every page is timed under it).
    pub next: Option<u128>,
    /// Pages timed so far under `fingerprint`.
    pub timed: u64,
}
impl Versioned for RecrawlState {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        // Version 2: `next` (None: one byte) and `timed` (0: one byte).
        super::decode_appended(bytes, 1, &[2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of `T` as version `v` wrote it: the current encoding at the
    /// appended fields' defaults, less their `appended` bytes.
    fn as_version<T: Versioned>(value: &T, v: u8, appended: usize) -> Vec<u8> {
        let mut bytes = value.encode();
        bytes.truncate(bytes.len() - appended);
        bytes[0] = v;
        bytes
    }

    #[test]
    fn schema_20_visits_and_recrawl_rows_read_with_nothing_stored_of_21() {
        let v = VisitRecord {
            url: "http://a.test/".into(),
            visits: 3,
            changes: 1,
            recent: vec![VisitInterval {
                ms: 5,
                changed: true,
            }],
            last_ms: 9,
            etag: Some("\"e\"".into()),
            history: vec![PastVersion::default()],
            ..VisitRecord::default()
        };
        let read = VisitRecord::decode(&as_version(&v, 1, 3)).unwrap();
        assert_eq!(read, v);
        assert_eq!((read.text_hash, read.rate), (None, None));
        assert_eq!(read.compared, Compared::Nothing);
        let now = VisitRecord {
            text_hash: Some(7),
            rate: Some(0.5),
            compared: Compared::Simhash,
            ..v
        };
        assert_eq!(VisitRecord::decode(&now.encode()).unwrap(), now);

        let r = RecrawlState {
            fingerprint: "uniform 5ms".into(),
            ..RecrawlState::default()
        };
        assert_eq!(RecrawlState::decode(&as_version(&r, 1, 2)).unwrap(), r);
        let under_way = RecrawlState {
            next: Some(u128::MAX),
            timed: 4096,
            ..r
        };
        assert_eq!(
            RecrawlState::decode(&under_way.encode()).unwrap(),
            under_way
        );
    }
}
