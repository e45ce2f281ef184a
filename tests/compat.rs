//! Old formats stay readable: a database written by the trawl of schema
//! version 6 (a demo crawl and two `set`s, committed under
//! `tests/compat/v6/db`) opens, is marked version 7, reads every value in
//! its old versions (counters, seeds, hosts, link limits), answers
//! queries, agrees with itself, and takes new writes.

mod common;

use std::sync::Arc;

use trawl::schema::{self, Versioned};
use trawl::store::Store;

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_6_database_opens_and_reads_as_schema_7() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/v6/db");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    copy_dir(&fixture, &db);
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
