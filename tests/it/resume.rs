//! Crash safety: `trawl crawl` killed with SIGKILL mid-crawl and run again
//! fetches every page exactly once, except those in flight at the kill, and
//! leaves counters that match the database's contents.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::Fixture;
use trawl::model::SeenState;
use trawl::schema::{self, SeenRecord, Versioned};
use trawl::site::Response;
use trawl::store::Store;

const PAGES: usize = 400;
const CONCURRENCY: usize = 6;

fn site(path: &str) -> Response {
    common::numbered_page(path, PAGES, (13, 5), Duration::from_millis(3))
}

fn crawl_cmd(db: &std::path::Path, seed: &str) -> Command {
    common::crawl_cmd(db, seed, CONCURRENCY)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_after_sigkill_fetches_nothing_twice() {
    let f = Fixture::start(site).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let seed = f.url("/p/0");

    let mut child = crawl_cmd(&db, &seed).spawn().unwrap();
    let start = Instant::now();
    while f.page_times().len() < PAGES / 3 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "crawl made no progress"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "crawl ended before the kill"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    common::kill_tree(&mut child); // SIGKILL
    let before_kill = f.page_times().len();
    assert!(before_kill < PAGES, "killed mid-crawl");

    common::run_ok(crawl_cmd(&db, &seed)).await;

    let hits = f.hits();
    let mut per_path = std::collections::HashMap::<String, usize>::new();
    for h in hits.iter().filter(|h| h.path != "/robots.txt") {
        *per_path.entry(h.path.clone()).or_default() += 1;
    }
    assert_eq!(per_path.len(), PAGES, "every page fetched");
    let twice: Vec<_> = per_path.iter().filter(|e| *e.1 > 1).collect();
    assert!(
        twice.iter().all(|e| *e.1 == 2),
        "no page fetched three times: {twice:?}"
    );
    assert!(
        twice.len() <= CONCURRENCY,
        "only pages in flight at the kill are refetched: {twice:?}"
    );
    assert!(f.count("/robots.txt") <= 2);

    // The counters agree with the rows.
    let store = Store::open(&dir.path().join("db")).unwrap();
    let c = store.counters().unwrap();
    let rows = |cf| store.scan(cf, &[]).count() as u64;
    assert_eq!(c.fetched, PAGES as u64);
    assert_eq!(rows(schema::CF_PAGES), c.fetched);
    assert_eq!(rows(schema::CF_FRONTIER), c.queued);
    assert_eq!(c.queued, 0);
    assert_eq!(rows(schema::CF_SEEN), c.seen);
    assert!(
        rows(schema::CF_URLS) >= c.seen,
        "every seen URL has its URL"
    );
    let mut fetched_states = 0;
    for row in store.scan(schema::CF_SEEN, &[]) {
        let (_, v) = row.unwrap();
        if matches!(
            SeenRecord::decode(&v).unwrap().state,
            SeenState::Fetched { .. }
        ) {
            fetched_states += 1;
        }
    }
    assert_eq!(fetched_states, c.fetched);
    // Each in-link has its link in the source page's links row.
    let mut links = 0;
    for row in store.scan(schema::CF_LINKS, &[]) {
        let (_, v) = row.unwrap();
        links += schema::PageLinks::decode(&v).unwrap().len() as u64;
    }
    assert!(links > 0);
    let (mut inlinks, mut all) = (0, store.all_inlinks().unwrap());
    while let Some((_, sources)) = all.next_target().unwrap() {
        inlinks += sources.len() as u64;
    }
    assert_eq!(links, inlinks);
    // Grouped by target: fewer rows than links.
    assert!(rows(schema::CF_INLINKS) < links);
    assert_eq!(rows(schema::CF_LINKS), c.fetched, "one links row a page");
    assert_eq!(c.by_status.get(&200), Some(&(PAGES as u64)));
}
