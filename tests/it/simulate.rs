//! `simulate`: replaying orders over a stored crawl. Breadth-first replay
//! of a breadth-first crawl (one request at a time, no delay) hands out
//! the pages in the order the server saw them; `simulate compare` ranks
//! orders as live crawls on the same web do.

use crate::common;

use common::{Db, Fixture, anchored, csv_column, fast};
use trawl::filter::Mode;
use trawl::frontier::Order;
use trawl::schema::tables::Runs;
use trawl::settings::CrawlSettings;
use trawl::site::Response;

/// [`anchored`] with links built at run time.
fn html(title: &str, body: &str, links: &[(String, &str)]) -> Response {
    let links: Vec<(&str, &str)> = links.iter().map(|(h, t)| (h.as_str(), *t)).collect();
    anchored(title, body, &links)
}

/// Page i links to 3i+1..3i+3 and back to i/2; 60 pages, every 7th a 404.
fn tree(path: &str) -> Response {
    let Some(i) = path
        .strip_prefix("/p/")
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return match path {
            "/robots.txt" => Response::status(404),
            _ => html("home", "home", &[("/p/0".into(), "start")]),
        };
    };
    if i % 7 == 6 {
        return Response::status(404);
    }
    let links: Vec<(String, &str)> = [3 * i + 1, 3 * i + 2, 3 * i + 3, i / 2]
        .into_iter()
        .filter(|j| *j < 60)
        .map(|j| (format!("/p/{j}"), "next"))
        .collect();
    html(&format!("page {i}"), &format!("text of page {i}"), &links)
}

fn one_at_a_time() -> CrawlSettings {
    let mut s = fast();
    (s.concurrency, s.per_host) = (1, 1);
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaying_bfs_over_a_bfs_crawl_reproduces_its_fetch_order() {
    let f = Fixture::start(tree).await;
    let db = Db::new();
    db.crawl(one_at_a_time(), &[f.url("/")]).await;
    let real: Vec<String> = f
        .hits()
        .into_iter()
        .filter(|h| h.path != "/robots.txt")
        .map(|h| f.url(&h.path))
        .collect();
    assert!(real.len() > 40, "{real:?}");
    let csv = db.dir.path().join("bfs.csv");
    let cmd = format!("simulate bfs --csv {}", csv.display());
    let out = common::shell(db.store.clone(), vec![cmd]).await;
    assert!(
        out.contains(&format!("replayed {} pages under bfs", real.len())),
        "{out}"
    );
    assert_eq!(csv_column(&csv, "bfs_url"), real);
}

/// `/` links to six on-topic sections (keyword anchors) and twelve
/// off-topic ones; each section page links to three pages like itself.
fn topical(path: &str) -> Response {
    let on = |p: &str| p.starts_with("/ball");
    match path {
        "/robots.txt" => Response::status(404),
        "/" => {
            let mut links: Vec<(String, &str)> = Vec::new();
            for i in 0..12 {
                links.push((format!("/garden{i}"), "flowers"));
                if i % 2 == 0 {
                    links.push((format!("/ball{i}"), "basketball"));
                }
            }
            html("home", "basketball and gardening", &links)
        }
        p if p.matches('/').count() >= 3 => {
            html(p, if on(p) { "basketball" } else { "roses" }, &[])
        }
        p => {
            let kids: Vec<(String, &str)> = (0..3)
                .map(|k| {
                    (
                        format!("{p}/{k}"),
                        if on(p) { "basketball" } else { "flowers" },
                    )
                })
                .collect();
            html(
                p,
                if on(p) {
                    "basketball game"
                } else {
                    "roses and tulips"
                },
                &kids,
            )
        }
    }
}

fn relevance(order: Order, budget: Option<u64>) -> CrawlSettings {
    let mut s = one_at_a_time();
    s.filter.mode = Mode::Relevance;
    s.filter.relevance_keywords = vec![("basketball".into(), 1.0)];
    s.filter.relevance_threshold = 0.1;
    s.order.order = order;
    s.max_pages = budget;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_compare_ranks_orders_as_live_crawls_do() {
    const BUDGET: u64 = 12;
    // Live: each order with a budget of 12 pages.
    let mut live = Vec::new();
    for order in [Order::Bfs, Order::Shark] {
        let f = Fixture::start(topical).await;
        let db = Db::new();
        db.crawl(relevance(order, Some(BUDGET)), &[f.url("/")])
            .await;
        let run = db.store.rows::<Runs>(&[]).last().unwrap().unwrap().1;
        live.push(run.relevant as f64 / run.judged as f64);
    }
    assert!(
        live[1] > live[0] + 0.3,
        "shark {} vs bfs {}",
        live[1],
        live[0]
    );

    // Replayed over one whole breadth-first crawl of the same web.
    let f = Fixture::start(topical).await;
    let db = Db::new();
    db.crawl(relevance(Order::Bfs, None), &[f.url("/")]).await;
    let cmds = vec![
        "set relevance.keywords basketball".to_string(),
        format!("simulate compare bfs shark --pages {BUDGET} --json"),
    ];
    let out = common::shell(db.store.clone(), cmds).await;
    let j: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    let harvest = |i: usize| j["orders"][i]["harvest_at"][2].as_f64().unwrap();
    // The same ranking, and breadth-first's figure exactly the live one.
    assert!(harvest(1) > harvest(0) + 0.3, "{out}");
    assert!(
        (harvest(0) - live[0]).abs() < 1e-9,
        "bfs {} vs live {}",
        harvest(0),
        live[0]
    );
    assert!(
        (harvest(1) - live[1]).abs() < 1e-9,
        "shark {} vs live {}",
        harvest(1),
        live[1]
    );
}
