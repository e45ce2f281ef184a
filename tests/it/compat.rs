//! Old formats stay readable: a database written by the trawl of each
//! earlier schema version (committed under `tests/compat/vN/db`, made by
//! `scripts/compat-fixture`) opens, is migrated step by step to the
//! current version, reads every value in its old versions, answers
//! queries, agrees with itself, is refiltered, and takes new writes.

use crate::common;

use std::sync::Arc;

use trawl::schema::{self, Versioned};
use trawl::store::Store;

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A copy of the fixture of schema `version` in a temp dir.
fn fixture(version: u32) -> (tempfile::TempDir, std::path::PathBuf) {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/compat/v{version}/db"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    copy_dir(&from, &db);
    (dir, db)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_6_database_opens_and_reads_as_schema_7() {
    let (_dir, db) = fixture(6);
    let store = Arc::new(Store::open(&db).unwrap());
    let version = store
        .get_raw(schema::CF_META, schema::meta_keys::SCHEMA_VERSION)
        .unwrap()
        .unwrap();
    assert_eq!(version, schema::SCHEMA_VERSION.to_be_bytes(), "upgraded");

    // Counters v1, with the run progress of v2 at its default.
    let c = store.counters().unwrap();
    assert_eq!((c.fetched, c.duplicates, c.run.started_ms), (36, 4, 0));
    // Seeds v1: the four demo hosts, nothing derived.
    let seeds = store.seeds().unwrap();
    assert_eq!((seeds.urls.len(), seeds.derived.len()), (4, 0));
    // Hosts v1: `urls` read as what they fetched and queued.
    let mut hosts = 0;
    for row in store.scan(schema::CF_HOSTS, &[]) {
        let (_, v) = row.unwrap();
        let h = schema::HostRecord::decode(&v).unwrap();
        assert_eq!(h.urls, h.fetched + h.queued);
        hosts += 1;
    }
    assert!(hosts >= 4);
    // Link limits v1: the trap limits read as none.
    let limits: schema::LinkLimits = store
        .get(schema::CF_META, schema::meta_keys::LINK_LIMITS)
        .unwrap()
        .unwrap();
    assert_eq!(
        (limits.scope.as_str(), limits.max_path_depth),
        ("host", None)
    );
    let problems = trawl::crawl::audit(&store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");

    // The saved settings apply, queries answer, and the db takes writes.
    let seed = seeds.urls[0].clone();
    let text = common::shell(
        store.clone(),
        vec![
            "get crawl.depth".into(),
            "count pages where status = 200".into(),
            format!("why {seed}"),
            "set crawl.max_host_urls 5".into(),
            "refilter".into(),
        ],
    )
    .await;
    assert!(text.contains("crawl.depth = 3"), "{text}");
    assert!(
        text.contains("fetched") && text.contains("a seed"),
        "{text}"
    );
    assert!(text.contains("refilter: 32 pages"), "{text}");
    drop(store);
    // Reopened, it is a schema 7 db like any other.
    let store = Store::open(&db).unwrap();
    assert_eq!(store.counters().unwrap().fetched, 36);
}

/// Rows of a column family.
fn rows(store: &Store, cf: &'static str) -> Vec<trawl::store::Row> {
    store.scan(cf, &[]).map(|r| r.unwrap()).collect()
}

/// What every fixture must show once opened by this trawl.
async fn opens_migrates_answers_and_refilters(version: u32) {
    let (_dir, db) = fixture(version);
    let store = Arc::new(Store::open(&db).unwrap());
    let stamped = store
        .get_raw(schema::CF_META, schema::meta_keys::SCHEMA_VERSION)
        .unwrap()
        .unwrap();
    assert_eq!(stamped, schema::SCHEMA_VERSION.to_be_bytes(), "v{version}");
    // Each step from the fixture's version on ran, and is recorded.
    for to in version + 1..=schema::SCHEMA_VERSION {
        let step: Option<schema::MigrationRecord> = store
            .get(schema::CF_META, &schema::meta_keys::migration(to))
            .unwrap();
        assert_eq!(step.map(|s| s.to), Some(to), "v{version}: step to {to}");
    }
    // What the steps convert is converted: a verdict row (v2) per doc, no
    // robots.txt inside a host row, a complete page index.
    let docs = rows(&store, schema::CF_DOCS).len();
    let verdicts = rows(&store, schema::CF_VERDICTS);
    assert_eq!(verdicts.len(), docs, "v{version}: a verdict per doc");
    assert!(
        verdicts
            .iter()
            .all(|(_, v)| v[0] == schema::VerdictRecord::VERSION)
    );
    for (_, v) in rows(&store, schema::CF_HOSTS) {
        assert!(schema::HostRecord::decode(&v).unwrap().robots.is_none());
    }
    assert!(
        store
            .get_raw(schema::CF_META, schema::meta_keys::PAGE_INDEX_COMPLETE)
            .unwrap()
            .is_some()
    );
    // The counters agree with the rows; each page has its facts (the
    // audit below checks they are its record's).
    let pages = rows(&store, schema::CF_PAGES).len() as u64;
    let facts = rows(&store, schema::CF_PAGE_FACTS).len() as u64;
    assert_eq!(facts, pages, "v{version}: page facts");
    assert!(pages > 10, "v{version}: {pages} pages");
    assert_eq!(store.counters().unwrap().fetched, pages, "v{version}");
    let relevance = verdicts
        .iter()
        .filter(|(_, v)| {
            schema::VerdictRecord::decode(v).unwrap().verdict == trawl::model::Verdict::Relevance
        })
        .count();
    // The v6 fixture predates scripts/compat-fixture (a demo crawl and two
    // `set`s, no refilter); the others were refiltered in relevance mode.
    let scripted = version != 6;
    assert!(
        relevance > 0 || !scripted,
        "v{version}: the fixture's refilter judged some pages irrelevant"
    );

    let seed = store.seeds().unwrap().urls[0].clone();
    let text = common::shell(
        store.clone(),
        vec![
            "get crawl.depth".into(),
            "get filter.mode".into(),
            "count pages where verdict = 'relevance'".into(),
            format!("why {seed}"),
            format!("page {seed}"),
            format!("links from {seed}"),
        ],
    )
    .await;
    assert!(text.contains("crawl.depth = 3"), "v{version}: {text}");
    assert!(
        text.contains("filter.mode = relevance") || !scripted,
        "v{version}: {text}"
    );
    assert!(
        text.contains(&format!("\n{relevance}\n")),
        "v{version}: {text}"
    );
    assert!(text.contains("a seed"), "v{version}: {text}");
    if version >= 17 {
        // The seed library's record (v1 from schema 17) reads as current.
        let text = common::shell(
            store.clone(),
            vec!["seeds where subject = 'compat, v17' --json".into()],
        )
        .await;
        let sites: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            sites[0]["site"], "http://compat.example",
            "v{version}: {text}"
        );
        assert_eq!(
            (sites[0]["depth"].as_u64(), sites[0]["delay"].as_str()),
            (Some(2), Some("2s")),
            "v{version}"
        );
    }
    assert!(text.contains("verdict       "), "v{version}: {text}");
    // Refiltered with no filter, every page passes and old link rows are
    // rewritten in the current layout.
    let text = common::shell(
        store.clone(),
        vec![
            "set filter.mode none".into(),
            "refilter".into(),
            "count pages where verdict = 'relevance'".into(),
        ],
    )
    .await;
    assert!(
        text.contains(&format!("refilter: {docs} pages")),
        "v{version}: {text}"
    );
    assert!(text.trim_end().ends_with("\n0"), "v{version}: {text}");
    // Every page's links as readers see them (a page row written by the
    // refilter supersedes a schema-4 page's per-link rows).
    let mut judged = 0;
    store
        .each_page_links(|_, links| {
            for (_, l) in links.unwrap() {
                assert_ne!(
                    l.verdict,
                    trawl::model::LinkVerdict::PageRelevance,
                    "v{version}"
                );
                judged += 1;
            }
        })
        .unwrap();
    assert!(judged > 0, "v{version}: links");
    // Revisits turned on time every page fetched before (from its `seen`
    // row), whatever version wrote it.
    let text = common::shell(
        store.clone(),
        vec!["recrawl uniform 1d".into(), "status".into()],
    )
    .await;
    let scheduled = format!("0 due (queued), {} scheduled", pages);
    assert!(text.contains(&scheduled), "v{version}: {text}");
    let problems = trawl::crawl::audit(&store).unwrap();
    assert!(problems.is_empty(), "v{version}: {problems:#?}");
    drop(store);
    // Reopened, it is a current db: nothing more to migrate.
    let store = Store::open(&db).unwrap();
    assert!(store.migrations().is_empty());
    assert_eq!(store.counters().unwrap().fetched, pages);
}

#[test]
fn a_read_only_attach_to_an_older_db_says_to_migrate_it() {
    let (dir, db) = fixture(24);
    let err = Store::open_secondary(&db, &dir.path().join("scratch"))
        .err()
        .expect("a v24 db lacks page_facts")
        .to_string();
    assert!(
        err.contains("an older trawl wrote it") && err.contains("(page_facts, search_log)"),
        "{err}"
    );
    assert!(
        err.contains("open it read-write once to migrate it"),
        "{err}"
    );
    // Migrated, it attaches.
    drop(Store::open(&db).unwrap());
    let store = Store::open_secondary(&db, &dir.path().join("scratch")).unwrap();
    assert!(store.counters().unwrap().fetched > 10);
}

/// A search index built by schema 25's trawl (before the log) is not
/// read: `search` says to rebuild it, and the rebuilt one is current.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_25_search_index_is_rebuilt() {
    let (_dir, db) = fixture(25);
    assert!(db.join("search/meta.json").exists());
    let store = Arc::new(Store::open(&db).unwrap());
    let err = common::shell_error(store.clone(), "search price".into()).await;
    assert!(
        err.contains("older trawl") && err.contains("reindex search"),
        "{err}"
    );
    let out = common::shell(
        store.clone(),
        vec![
            "reindex search".into(),
            "search price --limit 1000 --format jsonl".into(),
        ],
    )
    .await;
    let fetched = store.counters().unwrap().fetched;
    assert!(out.contains(&format!("indexed {fetched} pages")), "{out}");
    let index = trawl::search::SearchIndex::open(&db).unwrap().unwrap();
    assert!(index.mark().unwrap().followable());
    assert!(out.contains("price"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_earlier_schema_version_migrates_and_answers() {
    for version in 1..schema::SCHEMA_VERSION {
        opens_migrates_answers_and_refilters(version).await;
    }
}
