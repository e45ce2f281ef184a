//! The on-disk format without RocksDB: column family names, fixed-width
//! big-endian keys, and versioned value codecs. `schema/v26.md` documents the
//! same; a test keeps the two in step.
//!
//! Every value is one version byte followed by the struct in postcard's
//! compact encoding. A reader that meets a version it does not know fails
//! with [`CodecError::Version`] instead of misreading the bytes.

mod archive;
mod counters;
mod derived;
pub mod dictionary;
mod keys;
mod library;
mod links;
pub mod tables;
mod values;

pub use archive::*;
pub use counters::*;
pub use derived::*;
pub use keys::{
    ClusterSiteKey, DueKey, FrontierKey, InLinkKey, InLinkRow, OutLinkKey, SimhashKey,
    inlink_pages, page_index,
};
pub use library::*;
pub use links::*;
pub use values::*;

/// Version of the whole format, stored under `meta/schema_version`.
pub const SCHEMA_VERSION: u32 = 26;

pub const CF_META: &str = "meta";
pub const CF_URLS: &str = "urls";
pub const CF_SEEN: &str = "seen";
pub const CF_FRONTIER: &str = "frontier";
pub const CF_HOSTS: &str = "hosts";
pub const CF_ROBOTS: &str = "robots";
pub const CF_PAGES: &str = "pages";
pub const CF_PAGE_FACTS: &str = "page_facts";
pub const CF_DOCS: &str = "docs";
pub const CF_VERDICTS: &str = "verdicts";
pub const CF_LINKS: &str = "links";
pub const CF_INLINKS: &str = "inlinks";
pub const CF_CONTENT: &str = "content";
pub const CF_PAGE_INDEX: &str = "page_index";
pub const CF_INFLIGHT: &str = "inflight";
pub const CF_DETAILS: &str = "details";
pub const CF_PATHS: &str = "paths";
pub const CF_RANKS: &str = "ranks";
pub const CF_HOST_RANKS: &str = "host_ranks";
pub const CF_TARGETS: &str = "targets";
pub const CF_SIMHASH: &str = "simhash";
pub const CF_CLUSTERS: &str = "clusters";
pub const CF_CLUSTER_SITES: &str = "cluster_sites";
pub const CF_SITES: &str = "sites";
pub const CF_SITEMAPS: &str = "sitemaps";
pub const CF_LASTMODS: &str = "lastmods";
pub const CF_VISITS: &str = "visits";
pub const CF_DUE: &str = "due";
pub const CF_CAPPED: &str = "capped";
pub const CF_INLINK_PAGES: &str = "inlink_pages";
pub const CF_WARC: &str = "warc";
pub const CF_SEARCH_LOG: &str = "search_log";

/// Every column family trawl opens, in documentation order.
pub const COLUMN_FAMILIES: [&str; 32] = [
    CF_META,
    CF_URLS,
    CF_SEEN,
    CF_FRONTIER,
    CF_HOSTS,
    CF_ROBOTS,
    CF_PAGES,
    CF_PAGE_FACTS,
    CF_DOCS,
    CF_VERDICTS,
    CF_LINKS,
    CF_INLINKS,
    CF_INLINK_PAGES,
    CF_CONTENT,
    CF_PAGE_INDEX,
    CF_INFLIGHT,
    CF_DETAILS,
    CF_PATHS,
    CF_RANKS,
    CF_HOST_RANKS,
    CF_TARGETS,
    CF_SIMHASH,
    CF_CLUSTERS,
    CF_CLUSTER_SITES,
    CF_SITES,
    CF_SITEMAPS,
    CF_LASTMODS,
    CF_VISITS,
    CF_DUE,
    CF_CAPPED,
    CF_WARC,
    CF_SEARCH_LOG,
];

/// Names of the `meta` column family's keys.
pub mod meta_keys {
    pub const SCHEMA_VERSION: &[u8] = b"schema_version";
    pub const COUNTERS: &[u8] = b"counters";
    pub const SETTINGS: &[u8] = b"settings";
    pub const SEEDS: &[u8] = b"seeds";
    pub const LINK_LIMITS: &[u8] = b"link_limits";
    pub const CONFIG: &[u8] = b"config";
    /// The frontier's order and its generation (schema 12).
    pub const ORDER: &[u8] = b"order";
    /// The last `rank pagerank` and `rank hosts` stored (schema 13).
    pub const RANK: &[u8] = b"rank";
    pub const HOST_RANK: &[u8] = b"host_rank";
    /// The learned order's link model (schema 14).
    pub const MODEL: &[u8] = b"model";
    /// The revisit policy the `due` rows were timed under (schema 20).
    pub const RECRAWL: &[u8] = b"recrawl";
    /// Present when `page_index` covers every stored page: set when a db is
    /// created, and by `reindex` on a db from before schema 3.
    pub const PAGE_INDEX_COMPLETE: &[u8] = b"page_index_complete";
    /// The crawl's in-link window being filled (`u64` BE, schema 23): its
    /// pages' `inlink_pages` rows are under `p` ‖ it.
    pub const INLINK_WINDOW: &[u8] = b"inlink_window";
    /// Prefix of run records: `run:` ‖ started_ms (u64 BE).
    pub const RUN_PREFIX: &[u8] = b"run:";
    /// Present in a db `trawl demo` created (the only kind it replaces).
    pub const DEMO: &[u8] = b"demo";
    /// Prefix of refilter's pending drops: `refilter-drop:` ‖ url id (16),
    /// a queued URL whose last followed link a refilter took away, kept
    /// until the drop step has judged it (so an interrupted refilter
    /// finishes the job when run again).
    pub const REFILTER_DROP_PREFIX: &[u8] = b"refilter-drop:";

    pub fn refilter_drop(id: crate::model::UrlId) -> Vec<u8> {
        [REFILTER_DROP_PREFIX, &id.to_bytes()[..]].concat()
    }

    /// Prefix of migration records: `migration:` ‖ the schema version a
    /// step brought the db to (u32 BE).
    pub const MIGRATION_PREFIX: &[u8] = b"migration:";

    /// Prefix of zstd dictionaries: `dict:` ‖ the dictionary's id (u32
    /// BE); the value is the dictionary as zstd writes it.
    pub const DICT_PREFIX: &[u8] = b"dict:";

    pub fn dict(id: u32) -> Vec<u8> {
        [DICT_PREFIX, &id.to_be_bytes()[..]].concat()
    }

    pub fn migration(to: u32) -> Vec<u8> {
        [MIGRATION_PREFIX, &to.to_be_bytes()[..]].concat()
    }

    pub fn run(started_ms: u64) -> Vec<u8> {
        let mut k = RUN_PREFIX.to_vec();
        k.extend_from_slice(&started_ms.to_be_bytes());
        k
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("empty value")]
    Empty,
    #[error("value version {found} is newer than this trawl understands ({known})")]
    Version { found: u8, known: u8 },
    #[error("malformed value: {0}")]
    Malformed(String),
}

/// A value struct stored with a version byte in front.
pub trait Versioned: serde::Serialize + serde::de::DeserializeOwned {
    const VERSION: u8;

    fn encode(&self) -> Vec<u8> {
        let mut out = vec![Self::VERSION];
        // postcard into a Vec cannot fail for these plain structs.
        out.extend(postcard::to_stdvec(self).unwrap_or_default());
        out
    }

    /// Decodes the current version; types with older versions override
    /// this to read those too.
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        decode_current(bytes)
    }
}

/// Decodes a value of `T` written at any version from `oldest` on, where
/// each later version only appended fields: `appended[i]` is how many
/// bytes the fields version `oldest + i + 1` added take at their defaults
/// (0, false, None, empty are one 0 byte in postcard; an f32 is four), so
/// an older value reads as the current one with those fields at their
/// defaults. A field appended inside an optional last field counts too:
/// when the option is None the extra zeros are left over, and postcard
/// ignores trailing bytes.
pub fn decode_appended<T: Versioned>(
    bytes: &[u8],
    oldest: u8,
    appended: &[usize],
) -> Result<T, CodecError> {
    let (version, rest) = split_version(bytes, oldest, T::VERSION)?;
    let missing: usize = appended[usize::from(version - oldest)..].iter().sum();
    if missing == 0 {
        return postcard::from_bytes(rest).map_err(malformed);
    }
    let mut padded = Vec::with_capacity(rest.len() + missing);
    padded.extend_from_slice(rest);
    padded.resize(rest.len() + missing, 0);
    postcard::from_bytes(&padded).map_err(malformed)
}

/// Decodes a value written at `T::VERSION`.
pub fn decode_current<T: Versioned>(bytes: &[u8]) -> Result<T, CodecError> {
    let (_, rest) = split_version(bytes, T::VERSION, T::VERSION)?;
    postcard::from_bytes(rest).map_err(malformed)
}

/// A value's version byte, checked to be one a reader understands
/// (`oldest..=known`), and the bytes after it.
pub(crate) fn split_version(
    bytes: &[u8],
    oldest: u8,
    known: u8,
) -> Result<(u8, &[u8]), CodecError> {
    let (&version, rest) = bytes.split_first().ok_or(CodecError::Empty)?;
    if !(oldest..=known).contains(&version) {
        return Err(CodecError::Version {
            found: version,
            known,
        });
    }
    Ok((version, rest))
}

pub(crate) fn malformed(e: postcard::Error) -> CodecError {
    CodecError::Malformed(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SeenState;

    /// `schema/v26.md` has one `## \`name\`` section per column family the
    /// code opens, in the same order, and names the same version.
    #[test]
    fn schema_doc_matches_the_code() {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/schema/v26.md"));
        let documented: Vec<&str> = doc
            .lines()
            .filter_map(|l| l.strip_prefix("## `")?.strip_suffix('`'))
            .collect();
        assert_eq!(
            documented,
            COLUMN_FAMILIES.to_vec(),
            "schema/v26.md sections vs COLUMN_FAMILIES"
        );
        assert!(doc.starts_with(&format!(
            "# trawl on-disk format, schema version {SCHEMA_VERSION}"
        )));
    }

    #[test]
    fn a_page_links_row_keeps_order_and_the_last_link_to_a_target() {
        let link = |anchor| LinkView {
            anchor,
            verdict: crate::model::LinkVerdict::Follow,
            dst_url: "http://h.org/x",
            ..LinkView::default()
        };
        let (a, b) = (crate::model::UrlId(1), crate::model::UrlId(u128::MAX));
        let mut row = PageLinksBuilder::default();
        assert!(row.is_empty());
        row.push(b, &link("first"));
        row.push(a, &link("other"));
        row.push(b, &link("again"));
        let bytes = row.encode();
        let links = PageLinks::decode(&bytes).unwrap();
        assert_eq!(links, vec![(b, link("again")), (a, link("other"))]);
        assert!(PageLinks::decode(&[4, 0]).is_err());
        assert!(PageLinks::decode(&bytes[..bytes.len() - 3]).is_err());
    }

    /// A `DocRecord` as schema 1 wrote it.
    #[derive(serde::Serialize)]
    struct DocV1<'a>(
        &'a str,
        &'a str,
        &'a str,
        &'a str,
        Option<String>,
        bool,
        bool,
        u32,
        Option<u128>,
    );

    #[test]
    fn version_one_docs_and_links_stay_readable() {
        // Bytes as written by schema v1 (DocRecord and LinkRecord version 1).
        let mut b = vec![1u8];
        b.extend(
            postcard::to_stdvec(&DocV1(
                "t",
                "x",
                "UTF-8",
                "http",
                None,
                false,
                true,
                3,
                Some(5),
            ))
            .unwrap(),
        );
        let d = DocRecord::decode(&b).unwrap();
        assert_eq!(
            (d.title.as_str(), d.outlinks, d.duplicate_of),
            ("t", 3, Some(5))
        );
        let legacy = DocView::decode(&b).unwrap().legacy_verdict;
        assert_eq!(legacy.unwrap().verdict, crate::model::Verdict::Keep);
    }

    #[test]
    fn link_records_of_versions_one_to_four_stay_readable() {
        let mut b = vec![1u8];
        b.extend(postcard::to_stdvec(&("a", "b", "c", true)).unwrap());
        let l = LinkRecord::decode(&b).unwrap();
        assert_eq!(
            (l.anchor.as_str(), l.nofollow, l.link_type),
            ("a", true, None)
        );
        // Link version 3 ends at the target's host; version 4 adds its URL.
        let mut b = vec![3u8];
        b.extend(
            postcard::to_stdvec(&("a", "b", "c", false, "outward", "follow", "", "h.org")).unwrap(),
        );
        let l = LinkRecord::decode(&b).unwrap();
        assert_eq!((l.dst_host.as_str(), l.dst_url.as_str()), ("h.org", ""));
        let v4 = LinkRecord {
            dst_url: "http://h.org/x".into(),
            ..l
        };
        assert_eq!(LinkRecord::decode(&v4.encode()).unwrap(), v4);
        assert_eq!(
            LinkView::decode(&v4.encode()).unwrap().dst_url,
            "http://h.org/x"
        );
    }

    #[test]
    fn docs_of_version_two_and_three_and_their_view() {
        // Version 2: the nine fields, then the verdict (now in `verdicts`).
        let mut b = vec![2u8];
        b.extend(
            postcard::to_stdvec(&(
                DocV1("t", "x", "UTF-8", "http", None, false, true, 3, Some(5)),
                Some(1.5f64),
                None::<f64>,
                "topic",
                "score 1.5",
            ))
            .unwrap(),
        );
        let d = DocRecord::decode(&b).unwrap();
        assert_eq!((d.title.as_str(), d.duplicate_of), ("t", Some(5)));
        // Version 3 leaves the verdict out: it is a `verdicts` row.
        let cur = DocRecord {
            title: "t".into(),
            ..DocRecord::default()
        };
        assert_eq!(DocRecord::decode(&cur.encode()).unwrap(), cur);
        // The in-place view reads all three versions alike.
        let view = DocView::decode(&b).unwrap();
        assert_eq!(
            (view.title, view.text, view.nofollow),
            (&b"t"[..], &b"x"[..], true)
        );
        let legacy = view.legacy_verdict.unwrap();
        assert_eq!(
            (
                legacy.topic_score,
                legacy.verdict,
                legacy.verdict_detail.as_str()
            ),
            (Some(1.5), crate::model::Verdict::Topic, "score 1.5")
        );
        let v4 = cur.encode();
        let view = DocView::decode(&v4).unwrap();
        assert_eq!((view.title, view.legacy_verdict), (&b"t"[..], None));
        // Version 3: the nine fields without `denoise`, read as None.
        let mut v3 = vec![3];
        v3.extend(
            postcard::to_stdvec(&(
                "t",
                "",
                "",
                "",
                None::<&str>,
                false,
                false,
                0u32,
                None::<u128>,
            ))
            .unwrap(),
        );
        assert_eq!(DocRecord::decode(&v3).unwrap(), cur);
        assert_eq!(DocView::decode(&v3).unwrap().denoise, None);
        // Version 4 keeps what denoising found, in both readers.
        let denoised = DocRecord {
            denoise: Some(DenoiseRecord {
                title: "headline".into(),
                author: Some("Ann Lee".into()),
                date: Some("2009-03-05".into()),
                noise: vec![(0, 3), (7, 6)],
            }),
            ..cur.clone()
        };
        assert_eq!(DocRecord::decode(&denoised.encode()).unwrap(), denoised);
        assert_eq!(
            DocView::decode(&denoised.encode()).unwrap().denoise,
            denoised.denoise
        );
        assert!(DocView::decode(&[9, 0]).is_err());
        let v = VerdictRecord {
            topic_score: Some(1.5),
            verdict: crate::model::Verdict::Topic,
            ..VerdictRecord::default()
        };
        assert_eq!(VerdictRecord::decode(&v.encode()).unwrap(), v);
    }

    #[test]
    fn values_round_trip_and_reject_unknown_versions() {
        let rec = SeenRecord {
            state: SeenState::Fetched { status: 200 },
            depth: 3,
            parent: Some(7),
            redirects: 1,
            updated_ms: 9,
            priority: None,
            scores: Some(FrontierScores {
                seq: 4,
                ..FrontierScores::default()
            }),
        };
        let bytes = rec.encode();
        assert_eq!(bytes[0], SeenRecord::VERSION);
        assert_eq!(SeenRecord::decode(&bytes).unwrap(), rec);
        let mut newer = bytes.clone();
        newer[0] = 99;
        assert!(matches!(
            SeenRecord::decode(&newer),
            Err(CodecError::Version { found: 99, .. })
        ));
        assert!(matches!(SeenRecord::decode(&[]), Err(CodecError::Empty)));
    }

    /// Schema 13's queued rows: scores without `model`, no `link`.
    #[derive(serde::Serialize)]
    struct ScoresV13 {
        seq: u64,
        inherited: f32,
        anchor: f32,
        url_shape: f32,
        backlinks: f32,
        tunnel: bool,
    }

    #[test]
    fn schema_13_frontier_and_seen_rows_read_with_no_model_score() {
        let old = ScoresV13 {
            seq: 5,
            inherited: 0.5,
            anchor: 0.25,
            url_shape: 0.75,
            backlinks: 2.0,
            tunnel: true,
        };
        // The same scores, read with `model` 0.
        let scores = FrontierScores {
            seq: old.seq,
            inherited: old.inherited,
            anchor: old.anchor,
            url_shape: old.url_shape,
            backlinks: old.backlinks,
            tunnel: old.tunnel,
            model: 0.0,
        };
        let versioned = |v: u8, body: Vec<u8>| [vec![v], body].concat();
        for with_scores in [false, true] {
            let fields = ("u".to_string(), 2u16, Some(9u128), 0u8, 1u8, 77u64);
            let old_scores = with_scores.then_some(&old);
            let bytes = versioned(2, postcard::to_allocvec(&(&fields, old_scores)).unwrap());
            let e = FrontierEntry::decode(&bytes).unwrap();
            assert_eq!(e.scores, with_scores.then(|| scores.clone()));
            assert_eq!((e.url.as_str(), e.depth, e.enqueued_ms), ("u", 2, 77));
            assert_eq!(e.link, None);
            let seen = (
                1u8,
                0u16,
                3u16,
                None::<u128>,
                0u8,
                4u64,
                Some(12u64),
                old_scores,
            );
            let bytes = versioned(2, postcard::to_allocvec(&seen).unwrap());
            let r = SeenRecord::decode(&bytes).unwrap();
            assert_eq!(r.scores, with_scores.then(|| scores.clone()));
            assert_eq!((r.depth, r.priority), (3, Some(12)));
        }
    }
}
