//! Spider traps: an endless calendar (one query string after another) and
//! relative links that nest without end end by themselves under their
//! limits, `why` names the limit that bit, raising it with `set` lets
//! more through, and a second host is crawled whole meanwhile.

use crate::common;

use common::{Db, Fixture, fast, shell, why};
use trawl::model::{FilterReason, SeenState};
use trawl::settings::CrawlSettings;
use trawl::site::Response;

fn trap(path: &str) -> Response {
    let (p, q) = path.split_once('?').unwrap_or((path, ""));
    match p {
        "/robots.txt" => Response::status(404),
        "/" => common::page("traps", &["/cal?month=0", "/rel/", "/deep/"]),
        // Each month links the next and the one before: no end.
        "/cal" => {
            let m: i64 = q.trim_start_matches("month=").parse().unwrap_or(0);
            common::page(
                &format!("month {m}"),
                &[
                    &format!("/cal?month={}", m + 1),
                    &format!("/cal?month={}", m - 1),
                ],
            )
        }
        // A relative link to a directory of the same name, below itself.
        p if p.starts_with("/rel/") => common::page(&format!("rel {p}"), &["a/"]),
        // Ever deeper, every segment new.
        p if p.starts_with("/deep/") => {
            let n = p.matches('/').count();
            common::page("deep", &[&format!("d{n}/")])
        }
        _ => common::page("other", &[]),
    }
}

fn tree(p: &str) -> Response {
    if p == "/robots.txt" {
        return Response::status(404);
    }
    let i: usize = p.trim_start_matches("/t/").parse().unwrap_or(0);
    let links: Vec<String> = [2 * i + 1, 2 * i + 2]
        .iter()
        .filter(|&&j| j < 300)
        .map(|j| format!("/t/{j}"))
        .collect();
    common::page(
        "tree",
        &links.iter().map(String::as_str).collect::<Vec<_>>(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traps_end_under_their_limits_and_the_other_host_is_unaffected() {
    let t = Fixture::start(trap).await;
    let other = Fixture::start(tree).await;
    let mut s = CrawlSettings {
        per_host: 4,
        ..fast()
    };
    s.traps.max_query_variants = Some(20);
    s.traps.max_path_depth = Some(12);
    let db = Db::new();
    db.crawl(s, &[t.url("/"), other.url("/t/0")]).await;

    assert_eq!(
        other.page_times().len(),
        300,
        "the other host crawled whole"
    );
    let months = t
        .hits()
        .iter()
        .filter(|h| h.path.starts_with("/cal"))
        .count();
    assert_eq!(months, 20, "twenty query strings of /cal");
    let rel = t
        .hits()
        .iter()
        .filter(|h| h.path.starts_with("/rel/"))
        .count();
    assert_eq!(rel, 4, "/rel/ and /rel/a/ … /rel/a/a/a/ (a three times)");
    let deep = t
        .hits()
        .iter()
        .filter(|h| h.path.starts_with("/deep/"))
        .count();
    assert_eq!(deep, 12, "paths of 1 to 12 segments");

    let seen = |u: &str| db.seen(&t.url(u)).map(|s| s.state);
    let f = |r| Some(SeenState::Filtered(r));
    assert_eq!(seen("/rel/a/a/a/a/"), f(FilterReason::SegmentRepeats));
    let deepest = format!(
        "/deep/{}",
        (2..=13).map(|n| format!("d{n}/")).collect::<String>()
    );
    assert_eq!(seen(&deepest), f(FilterReason::PathDepth), "{deepest}");
    let over = t
        .hits()
        .iter()
        .any(|h| h.path == "/cal?month=10" || h.path == "/cal?month=-10");
    assert!(over, "the calendar went some way");
    let blocked: Vec<String> = (-30..30)
        .map(|m| format!("/cal?month={m}"))
        .filter(|u| seen(u) == f(FilterReason::QueryVariants))
        .collect();
    assert!(!blocked.is_empty());

    let text = why(&db.store, &t.url(&blocked[0])).await;
    assert!(
        text.contains("crawl.max_query_variants = 20") && text.contains("/cal"),
        "{text}"
    );
    let text = why(&db.store, &t.url("/rel/a/a/a/a/")).await;
    assert!(
        text.contains("segment \"a\" 4 times") && text.contains("crawl.max_segment_repeats = 3"),
        "{text}"
    );
    let text = why(&db.store, &t.url(&deepest)).await;
    assert!(
        text.contains("13 segments") && text.contains("crawl.max_path_depth = 12"),
        "{text}"
    );
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");

    // Raised with `set`, the limit lets the filtered months through.
    let text = shell(
        db.store.clone(),
        vec![
            "set crawl.delay 0".into(),
            "set crawl.max_query_variants 30".into(),
            "set crawl.max_path_depth 12".into(),
            "crawl start".into(),
            "crawl wait".into(),
        ],
    )
    .await;
    let months = t
        .hits()
        .iter()
        .filter(|h| h.path.starts_with("/cal"))
        .count();
    assert_eq!(months, 30, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_budget_caps_the_urls_of_one_host() {
    let t = Fixture::start(trap).await;
    let mut s = fast();
    s.traps.max_host_urls = Some(10);
    let db = Db::new();
    db.crawl(s, &[t.url("/")]).await;
    let pages = t.hits().iter().filter(|h| h.path != "/robots.txt").count();
    assert_eq!(pages, 10);
    let c = db.store.counters().unwrap();
    assert!(c.filtered.named("host-budget") > 0, "{c:?}");
    let budget = db
        .store
        .scan(trawl::schema::CF_SEEN, &[])
        .filter_map(|r| {
            use trawl::schema::Versioned;
            let (k, v) = r.unwrap();
            let rec = trawl::schema::SeenRecord::decode(&v).unwrap();
            (rec.state == SeenState::Filtered(FilterReason::HostBudget)).then(|| {
                db.store
                    .url(trawl::model::UrlId::from_slice(&k).unwrap())
                    .unwrap()
                    .unwrap()
            })
        })
        .next()
        .unwrap();
    let text = why(&db.store, &budget).await;
    assert!(text.contains("crawl.max_host_urls = 10"), "{text}");
}
