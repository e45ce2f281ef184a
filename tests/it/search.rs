//! The search index the crawl keeps beside the db (issue 41): killed with
//! SIGKILL mid-crawl, the index lists no page the db lacks, catches up
//! from the db's log and agrees with the scan; a revisited page's old
//! words are no longer found.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{self, Db, Fixture, fast};
use crate::revisits::{Site, crawl_with, hourly, html, links};
use trawl::schema::tables::PageFacts;
use trawl::search::SearchIndex;
use trawl::settings::CrawlSettings;
use trawl::site::Response;
use trawl::store::Store;

const PAGES: usize = 500;

/// Words that pick pages out: an English word by `i % 5`, a Chinese one by
/// `i % 3`.
const ENGLISH: [&str; 5] = ["harbour", "lantern", "meadow", "quarry", "orchard"];
const CHINESE: [&str; 3] = ["论文", "运动员", "今天"];

fn page(path: &str) -> Response {
    if path == "/robots.txt" {
        return Response::status(404);
    }
    let i: usize = path.trim_start_matches("/p/").parse().unwrap_or(0);
    let links: String = [
        2 * i + 1,
        2 * i + 2,
        (i * 7 + 3) % PAGES,
        (i * 13 + 5) % PAGES,
    ]
    .iter()
    .filter(|&&j| j < PAGES)
    .map(|j| format!("<a href=\"/p/{j}\">p{j}</a> "))
    .collect();
    Response::html(format!(
        "<title>page {i}</title><p>page {i} tells of the {} and {}</p>{links}",
        ENGLISH[i % 5],
        CHINESE[i % 3]
    ))
    .delayed(Duration::from_millis(20))
}

/// Where the index's last commit stands in the log (None: no commit yet).
fn committed(db: &Path) -> Option<u64> {
    let meta = std::fs::read_to_string(db.join("search/meta.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&meta).ok()?;
    let payload: serde_json::Value = serde_json::from_str(v["payload"].as_str()?).ok()?;
    payload["next_seq"].as_u64()
}

fn urls(jsonl: &str) -> BTreeSet<String> {
    jsonl
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["url"].as_str().unwrap().to_string()
        })
        .collect()
}

/// For each word, the pages `search` finds are the pages the scan finds.
async fn agrees_with_the_scan(store: &Arc<Store>) {
    let mut found = 0;
    for w in ENGLISH.iter().chain(&CHINESE) {
        let hits = common::shell(
            store.clone(),
            vec![format!("search {w} --limit 100000 --format jsonl")],
        )
        .await;
        // `not not` keeps the search index out: this is the scan.
        let scan = common::shell(
            store.clone(),
            vec![format!(
                "pages where not not (title ~ '{w}' or text ~ '{w}') --format jsonl"
            )],
        )
        .await;
        assert_eq!(urls(&hits), urls(&scan), "{w}");
        found += urls(&scan).len();
    }
    assert!(found > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_kill_the_index_catches_up_and_agrees_with_the_scan() {
    let f = Fixture::start(page).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let seed = f.url("/p/0");
    let mut child = common::crawl_cmd(&db, &seed, 4).spawn().unwrap();
    // Killed between two of the indexer's commits (every 2 s): pages the
    // index has, and pages only the log has.
    let start = Instant::now();
    while committed(&db).is_none_or(|n| n == 0) {
        assert!(start.elapsed() < Duration::from_secs(60), "no index commit");
        assert!(child.try_wait().unwrap().is_none(), "crawl ended first");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    common::kill_tree(&mut child);
    assert!(f.page_times().len() < PAGES, "killed mid-crawl");

    let store = Arc::new(Store::open(&db).unwrap());
    let logged = store.counters().unwrap().search_seq;
    let index = SearchIndex::open(&db).unwrap().unwrap();
    let mark = index.mark().unwrap().next_seq.unwrap();
    assert!(
        0 < mark && mark < logged,
        "index at {mark}, log at {logged}"
    );
    // Every page the index lists is in the db.
    let every = index.parse("status:[0 TO 999]").unwrap();
    let (hits, n) = index.search(&*every, 100_000).unwrap();
    assert!(n > 0 && n == hits.len() as u64);
    for h in &hits {
        assert!(
            store.row::<PageFacts>(&h.id).unwrap().is_some(),
            "{}",
            h.url
        );
    }
    drop(index);

    // A search takes what the index lacks first, then finds what the scan
    // finds.
    agrees_with_the_scan(&store).await;
    let index = SearchIndex::open(&db).unwrap().unwrap();
    assert_eq!(index.mark().unwrap().next_seq, Some(logged));
    assert_eq!(index.pages(), store.counters().unwrap().fetched);
    drop((index, store));

    // The crawl resumed keeps it current to the end.
    common::run_ok(common::crawl_cmd(&db, &seed, 4)).await;
    let store = Arc::new(Store::open(&db).unwrap());
    let c = store.counters().unwrap();
    assert_eq!(c.fetched, PAGES as u64);
    let index = SearchIndex::open(&db).unwrap().unwrap();
    assert_eq!(index.mark().unwrap().next_seq, Some(c.search_seq));
    assert_eq!(index.pages(), PAGES as u64);
    drop(index);
    agrees_with_the_scan(&store).await;
}

/// `/news` tells of a harbour for its first hour and of an airport after.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_revisited_page_is_found_by_its_new_words_only() {
    let site = Site::start(|path, at_ms, _| match path {
        "/robots.txt" => Response::status(404),
        "/" => html("home", &links(&["/news"])),
        "/news" if at_ms < crate::revisits::HOUR => html("news", "the harbour story"),
        "/news" => html("news", "the airport story"),
        _ => Response::status(404),
    })
    .await;
    let db = Db::new();
    let s = CrawlSettings {
        recrawl: hourly(),
        ..fast()
    };
    crawl_with(&db, s, &site.url("/"), Duration::from_secs(3600 + 1800)).await;
    assert_eq!(site.asked("/news").len(), 2);
    let mut parts = Vec::new();
    for w in ["harbour", "airport", "story"] {
        let out = common::shell(db.store.clone(), vec![format!("search {w} --format jsonl")]).await;
        parts.push(urls(&out));
    }
    let out = format!("{parts:?}");
    let news: BTreeSet<_> = [site.url("/news")].into();
    assert_eq!(parts[0], BTreeSet::new(), "{out}");
    assert_eq!(parts[1], news, "{out}");
    // One document a page, however many versions it had.
    assert_eq!(parts[2], news, "{out}");
    let index = SearchIndex::open(&db.dir.path().join("db"))
        .unwrap()
        .unwrap();
    assert_eq!(index.pages(), 2);
}
