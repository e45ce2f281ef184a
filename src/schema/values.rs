//! Value structs of every column family. Field order is the encoding: add
//! fields only at the end of a struct together with a new version byte.

use serde::{Deserialize, Serialize};

use super::Versioned;

// What a URL became and how a robots.txt fetch ended are the crawl's and
// the fetcher's words (in `model`); their encoding is part of this schema.
use crate::model::{RobotsRecord, SeenState};

/// `seen` value: the URL-seen set with each URL's fate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct SeenRecord {
    pub state: SeenState,
    pub depth: u16,
    /// The page whose link first led here (none for seeds).
    pub parent: Option<u128>,
    /// Redirect hops from the URL first linked to reach this one.
    pub redirects: u8,
    pub updated_ms: u64,
    // Version 2:
    /// A queued URL's frontier priority (its row's key), so that a new
    /// in-link can find the row without a scan; None once it left the queue.
    pub priority: Option<u64>,
    /// The scores the URL was queued with, kept when it is fetched (or
    /// failed or dropped), so `pages where` and `why` can show them.
    pub scores: Option<FrontierScores>,
}
impl Versioned for SeenRecord {
    // Version 3 appends `model` to the scores (a version 2 row with scores
    // reads it as 0).
    const VERSION: u8 = 3;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        super::decode_appended(bytes, 1, &[2, 4])
    }
}

/// `frontier` value: what the scheduler needs to fetch the URL.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct FrontierEntry {
    /// The normalized URL (kept here so dispatch needs no `urls` lookup).
    pub url: String,
    pub depth: u16,
    pub parent: Option<u128>,
    pub redirects: u8,
    /// Attempts that ended in 429/503 so far.
    pub attempts: u8,
    pub enqueued_ms: u64,
    // Version 2:
    /// What the crawl orders rank the URL by (None in a version 1 row,
    /// written under breadth-first: its key holds its sequence number).
    pub scores: Option<FrontierScores>,
    // Version 3 (and `model` appended to the scores):
    /// The link that queued the URL, as the learned order scores it (kept
    /// only under that order).
    pub link: Option<LinkContext>,
    // Version 4:
    /// A fetched page queued again by `recrawl`, with what the revisit
    /// asks the server (None: a first fetch).
    pub revisit: Option<Revalidate>,
}
impl Versioned for FrontierEntry {
    const VERSION: u8 = 4;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        // Version 3: 4 bytes of `model` (when scores are present) and the
        // `link` option's tag; version 4 the `revisit` option's tag.
        super::decode_appended(bytes, 1, &[1, 5, 1])
    }
}

/// A revisit's validators, from the stored version's response.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Revalidate {
    /// Sent as `If-None-Match`.
    pub etag: Option<String>,
    /// Sent as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

/// What the learned order knows of the link that queued a URL: its
/// words, its kind, and the page it was found on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct LinkContext {
    pub anchor: String,
    /// The text before and after the anchor (up to 50 bytes each), joined
    /// by a space.
    pub context: String,
    pub link_type: Option<crate::model::LinkType>,
    /// The linking page's relevance cosine (0 when the mode computes none).
    pub parent_sim: f32,
    /// The page filters kept the linking page.
    pub parent_kept: bool,
}

/// `meta/order`: the frontier order the crawl keys new URLs in, and its
/// generation, raised each time the order or its parameters change.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct OrderState {
    /// `OrderSettings::fingerprint` of the order.
    pub fingerprint: String,
    pub generation: u64,
}
impl Versioned for OrderState {
    const VERSION: u8 = 1;
}

/// A queued URL's scores, kept so that a change of order can re-key it
/// and `frontier` and `why` can show them.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct FrontierScores {
    /// Discovery sequence number (first-in first-out among equals).
    pub seq: u64,
    /// Shark-search's inherited score.
    pub inherited: f32,
    /// Shark-search's anchor-context score.
    pub anchor: f32,
    /// Importance's IL: the URL's shape.
    pub url_shape: f32,
    /// Importance's summed in-link weights (IB = Σw / (1 + Σw)).
    pub backlinks: f32,
    /// Found on an irrelevant page under soft focus: queued behind the rest.
    pub tunnel: bool,
    // Schema 14 (no field can be appended here by padding any more:
    // `FrontierEntry::link` follows the scores):
    /// The learned order's score: the link model's estimate that the URL
    /// is relevant (1 for a seed; 0 when the URL was queued under another
    /// order).
    pub model: f32,
}

/// `hosts` value: per-host politeness state. Written with every page of
/// the host, so from schema 6 without its robots.txt (`robots` is None
/// there; the file is in the `robots` column family, written when fetched);
/// [`crate::store::Store::host`] returns the two joined.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct HostRecord {
    pub origin: String,
    pub robots: Option<RobotsRecord>,
    /// Crawl-delay from robots.txt as applied (after the cap).
    pub crawl_delay_ms: Option<u64>,
    /// robots.txt asked for a longer delay than the configured maximum.
    pub crawl_delay_capped: bool,
    pub error_streak: u32,
    pub fetched: u64,
    pub errors: u64,
    pub queued: u64,
    /// Earliest time of the next request (politeness delay or back-off).
    pub next_fetch_ms: u64,
    // Version 2:
    /// URLs ever queued for the host (for `crawl.max_host_urls`).
    pub urls: u64,
    // Version 3:
    /// The frontier order generation the host's queue is keyed in (see
    /// [`OrderState`]); an older one is re-keyed when next scheduled.
    pub order_gen: u64,
}
impl Versioned for HostRecord {
    const VERSION: u8 = 3;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        let mut h: HostRecord = super::decode_appended(bytes, 1, &[1, 1])?;
        if bytes.first() == Some(&1) {
            // Version 1 did not count: what it fetched and queued is a floor.
            h.urls = h.fetched + h.queued;
        }
        Ok(h)
    }
}
impl Versioned for RobotsRecord {
    const VERSION: u8 = 1;
}

/// `pages` value: one fetch and its response.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct PageRecord {
    pub url: String,
    pub status: u16,
    pub http_version: String,
    pub content_type: String,
    /// The response headers worth keeping (see `fetch::KEPT_HEADERS`).
    pub headers: Vec<(String, String)>,
    pub fetched_ms: u64,
    pub elapsed_ms: u32,
    pub depth: u16,
    /// MD5 of the decoded body.
    pub md5: [u8; 16],
    /// Bytes on the wire (before Content-Encoding is undone).
    pub wire_len: u64,
    /// Bytes of the decoded body.
    pub body_len: u64,
    /// The body hit the size cap (on the wire or after decoding).
    pub truncated: bool,
    /// One zstd frame: the decoded body, then (version 2) the page's
    /// visible text, `text_len` bytes, compressed against the body it was
    /// taken from, so it costs a fraction of a separate copy.
    pub body_zstd: Vec<u8>,
    /// `Location` of a 3xx, resolved and normalized.
    pub redirect_to: Option<String>,
    // Version 2:
    /// Bytes of visible text after the body in `body_zstd` (0: none there;
    /// a page stored before schema 9 keeps its text in `docs`).
    pub text_len: u64,
}
impl Versioned for PageRecord {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        super::decode_appended(bytes, 1, &[1])
    }
}

impl PageRecord {
    /// The decoded body, exactly as fetched (without the text after it).
    pub fn body(&self) -> std::io::Result<Vec<u8>> {
        let mut frame = self.frame()?;
        frame.truncate(self.body_len.min(frame.len() as u64) as usize);
        Ok(frame)
    }

    /// The visible text stored in the frame after the body, if any.
    pub fn frame_text(&self) -> std::io::Result<Option<String>> {
        if self.text_len == 0 {
            return Ok(None);
        }
        let mut frame = self.frame()?;
        let text = self.split_text(&mut frame)?;
        Ok(Some(text))
    }

    /// The body and the text after it, from one decompression.
    pub fn body_and_text(&self) -> std::io::Result<(Vec<u8>, Option<String>)> {
        let mut frame = self.frame()?;
        if self.text_len == 0 {
            frame.truncate(self.body_len.min(frame.len() as u64) as usize);
            return Ok((frame, None));
        }
        let text = self.split_text(&mut frame)?;
        Ok((frame, Some(text)))
    }

    /// Takes the text off the end of `frame`, leaving the body.
    fn split_text(&self, frame: &mut Vec<u8>) -> std::io::Result<String> {
        let (start, end) = (
            self.body_len as usize,
            (self.body_len + self.text_len) as usize,
        );
        if frame.len() < end {
            return Err(std::io::Error::other(
                "the stored frame is shorter than its lengths",
            ));
        }
        frame.truncate(end);
        let text = frame.split_off(start);
        // No copy when it is valid UTF-8 (it always is when trawl wrote it).
        Ok(match String::from_utf8(text) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// The whole decompressed frame (body, then text).
    fn frame(&self) -> std::io::Result<Vec<u8>> {
        let size = (self.body_len + self.text_len) as usize;
        // The lengths come from the same row; a frame that decodes to more
        // is corrupt, and the cap keeps a bad length from allocating much.
        super::dictionary::decompress(&self.body_zstd, size.max(64))
    }
}

/// `capped` value: a page whose links past a cap were counted and not
/// taken (schema 22). `why` finds a URL among them by parsing the stored
/// body again, so only the numbers are kept.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct CappedRecord {
    /// Links taken from the page.
    pub kept: u32,
    /// Links past the caps, counted and dropped.
    pub cut: u32,
    /// `crawl.max_outlinks` when the page was parsed.
    pub max_outlinks: u32,
    /// Bytes the page's links could hold (`LINK_BYTES`) then.
    pub link_bytes: u32,
    pub fetched_ms: u64,
}
impl Versioned for CappedRecord {
    const VERSION: u8 = 1;
}

/// `meta/seeds`: the seeds ever given, in order, and the hosts the crawl
/// took into scope because a seed redirected there.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct SeedList {
    pub urls: Vec<String>,
    // Version 2:
    pub derived: Vec<DerivedSeed>,
}
impl Versioned for SeedList {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        super::decode_appended(bytes, 1, &[1])
    }
}

impl SeedList {
    /// The URLs the crawl starts from: the user's seeds and the targets
    /// their responses redirected to (not a robots.txt's redirect, which
    /// brings a host into scope without queueing a URL).
    pub fn starts(&self) -> impl Iterator<Item = &str> {
        let redirected = self.derived.iter().filter(|d| d.via == VIA_REDIRECT);
        self.urls
            .iter()
            .map(String::as_str)
            .chain(redirected.map(|d| d.url.as_str()))
    }
}

/// How a derived seed came about: a seed's own response redirected, or its
/// host's robots.txt did.
pub const VIA_REDIRECT: &str = "redirect";
pub const VIA_ROBOTS: &str = "robots";
pub const VIA_IMPORT: &str = "import";

/// A URL that became a seed because a seed (or its host's robots.txt)
/// redirected to it, as Heritrix treats a seed's redirect.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct DerivedSeed {
    /// The redirect's target (normalized).
    pub url: String,
    /// The URL that redirected to it.
    pub from: String,
    /// `redirect` (a seed's response), `robots` (its host's robots.txt)
    /// or `import` (pages of its host were imported from an archive, named
    /// by `from`): only a redirect's target is queued.
    pub via: String,
}

/// `inflight` value: a URL handed to a fetch and not yet recorded.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct InFlightRecord {
    /// Its `frontier` key (so a crash-looping URL can be dequeued).
    pub frontier_key: Vec<u8>,
    /// Runs in a row that died with this URL in flight, before this one.
    pub deaths: u8,
    /// In flight now (false: a suspect left by a death, not yet retried).
    pub in_flight: bool,
}
impl Versioned for InFlightRecord {
    const VERSION: u8 = 1;
}

/// `details` value: what lies behind a URL's failure (the error text,
/// the address the network guard refused, the deaths of a crash loop).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct DetailRecord {
    /// The fail reason's name, as in the URL's `seen` state.
    pub reason: String,
    pub detail: String,
    pub at_ms: u64,
}
impl Versioned for DetailRecord {
    const VERSION: u8 = 1;
}

/// `meta/link_limits`: the limits the last crawl judged links by. When a
/// run starts with other limits, links filtered under the old ones are
/// judged again.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct LinkLimits {
    pub max_depth: Option<u16>,
    /// `host`, `domain` or `any`.
    pub scope: String,
    // Version 2: the spider-trap limits.
    pub max_path_depth: Option<u16>,
    pub max_segment_repeats: Option<u16>,
    pub max_query_variants: Option<u32>,
    pub max_host_urls: Option<u64>,
    // Version 3: the seed sites' own depth limits.
    /// (host id, depth) of every host a seed site's `depth` governs, by
    /// host id.
    pub site_depths: Vec<(u64, u16)>,
}
impl Versioned for LinkLimits {
    const VERSION: u8 = 3;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        super::decode_appended(bytes, 1, &[4, 1])
    }
}

/// `meta/config`: settings changed from their defaults with the shell's
/// `set`, as (key, value) text pairs in the order they were first set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ConfigEntries {
    pub entries: Vec<(String, String)>,
}
impl Versioned for ConfigEntries {
    const VERSION: u8 = 1;
}

/// `meta/run:<started_ms>`: one crawl run — written when it starts and
/// again when it ends, so a killed run still shows (with `ended_ms` 0).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct RunRecord {
    pub started_ms: u64,
    pub ended_ms: u64,
    /// The settings that shape a run, as (key, value) text.
    pub settings: Vec<(String, String)>,
    pub seeds: u32,
    /// Pages fetched by this run: the paper's "links fetched".
    pub fetched: u64,
    pub links: u64,
    pub elapsed_ms: u64,
    /// elapsed seconds × links fetched.
    pub tlp: f64,
    pub interrupted: bool,
    // Version 2: how well it focused.
    /// Pages the page filters judged, and those they kept.
    pub judged: u64,
    pub relevant: u64,
    /// Of the last 1,000 pages judged when it ended: judged, kept.
    pub recent_judged: u64,
    pub recent_relevant: u64,
    /// The target list's size, and how many of it were fetched (ever),
    /// when it ended.
    pub targets: u64,
    pub targets_fetched: u64,
    /// The `crawl.stop_when` rule that ended it, with its figures.
    pub stopped_by: String,
}
impl Versioned for RunRecord {
    const VERSION: u8 = 2;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        super::decode_appended(bytes, 1, &[7])
    }
}

/// `targets` value: a URL the user knows to be relevant (`targets import`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct TargetRecord {
    pub url: String,
}
impl Versioned for TargetRecord {
    const VERSION: u8 = 1;
}

/// `ranks` value: a fetched page's PageRank as `rank pagerank` last
/// computed it (see `meta/rank` for when and over what graph).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct RankRecord {
    /// The page's share of the graph's rank (the scores sum to 1).
    pub pagerank: f64,
}
impl Versioned for RankRecord {
    const VERSION: u8 = 1;
}

/// `host_ranks` value: a host's rank in the host graph (`rank hosts`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct HostRankRecord {
    /// The host key, `scheme://host[:port]`.
    pub origin: String,
    pub rank: f64,
}
impl Versioned for HostRankRecord {
    const VERSION: u8 = 1;
}

/// `clusters` value: a near-duplicate cluster, keyed by its first page;
/// and `cluster_sites` value: one site's pages in a cluster.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ClusterRecord {
    /// Pages in it, the first included.
    pub pages: u32,
    /// Pages stored past `dedup.cluster_budget` (of their site's in the
    /// cluster), their links not followed.
    pub unexpanded: u32,
}
impl Versioned for ClusterRecord {
    const VERSION: u8 = 1;
}

/// `meta/rank` and `meta/host_rank`: the last ranking stored.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct RankRun {
    pub computed_ms: u64,
    /// Nodes of the graph ranked (a page's rank × nodes is its rank
    /// relative to the mean).
    pub nodes: u64,
    pub links: u64,
    pub damping: f64,
    pub iterations: u32,
    /// L1 change of the last iteration.
    pub residual: f64,
}
impl Versioned for RankRun {
    const VERSION: u8 = 1;
}

/// `meta/model`: the learned order's link model (logistic regression over
/// hashed link features), so a resumed crawl continues learning.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ModelRecord {
    /// Pages trained on (one update each).
    pub updates: u64,
    /// Of those, the relevant ones.
    pub positives: u64,
    /// Every feature with a weight, in hash order.
    pub features: Vec<ModelFeature>,
}
impl Versioned for ModelRecord {
    const VERSION: u8 = 1;
}

/// One feature of the link model.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ModelFeature {
    /// The feature's bucket (xxh3 of its name, masked).
    pub hash: u32,
    pub weight: f32,
    /// The first name trained into the bucket, e.g. `anchor:archive`.
    pub name: String,
}

/// `meta/migration:` value: a schema migration step that ran at open.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MigrationRecord {
    /// The schema version the step brought the db to.
    pub to: u32,
    /// What it converted.
    pub what: String,
    /// Rows it wrote.
    pub rows: u64,
    pub at_ms: u64,
    pub elapsed_ms: u64,
}
impl Versioned for MigrationRecord {
    const VERSION: u8 = 1;
}
