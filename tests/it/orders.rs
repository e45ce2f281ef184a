//! The crawl orders of document 002 end to end: one loopback host, one
//! request at a time, so the server's log is the order the frontier handed
//! URLs out in. Expected orders are worked out by hand in each test.

use crate::common;

use std::time::Duration;

use common::{Db, Fixture, anchored as html, fast};
use trawl::filter::Mode;
use trawl::frontier::{Focus, Order};
use trawl::schema::FrontierEntry;
use trawl::schema::tables::Frontier;
use trawl::settings::CrawlSettings;
use trawl::site::Response;

/// A tree: `/` → a, b, c; a → a1, a2; b → b1; a1 → a11.
fn tree(path: &str) -> Response {
    let links: &[(&str, &str)] = match path {
        "/robots.txt" => return Response::status(404),
        "/" => &[("/a", "x"), ("/b", "x"), ("/c", "x")],
        "/a" => &[("/a1", "x"), ("/a2", "x")],
        "/b" => &[("/b1", "x")],
        "/a1" => &[("/a11", "x")],
        _ => &[],
    };
    html("page", "text", links)
}

/// One request at a time, breadth-first unless changed.
fn one_at_a_time(order: Order) -> CrawlSettings {
    let mut s = fast();
    s.concurrency = 1;
    s.per_host = 1;
    s.order.order = order;
    s
}

fn queued(db: &Db) -> Vec<FrontierEntry> {
    db.store
        .rows::<Frontier>(&[])
        .map(|r| r.unwrap().1)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bfs_takes_levels_in_order_and_dfs_the_deepest_latest_first() {
    let f = Fixture::start(tree).await;
    Db::new()
        .crawl(one_at_a_time(Order::Bfs), &[f.url("/")])
        .await;
    let bfs = ["/", "/a", "/b", "/c", "/a1", "/a2", "/b1", "/a11"];
    assert_eq!(f.fetched(), bfs);

    // Depth-first: of the queued, the deepest, and of those the latest
    // found. After `/`: c (latest of depth 1) has no links, b queues b1
    // (depth 2), then a queues a1, a2; a2 is the latest, a1 queues a11.
    let f = Fixture::start(tree).await;
    Db::new()
        .crawl(one_at_a_time(Order::Dfs), &[f.url("/")])
        .await;
    let dfs = ["/", "/c", "/b", "/b1", "/a", "/a2", "/a1", "/a11"];
    assert_eq!(f.fetched(), dfs);

    // With crawl.depth 1 it stops at the seed's links.
    let f = Fixture::start(tree).await;
    let mut s = one_at_a_time(Order::Dfs);
    s.max_depth = Some(1);
    Db::new().crawl(s, &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/", "/c", "/b", "/a"]);
}

/// Shark-search's web: the query is `basketball`.
fn shark_web(path: &str) -> Response {
    match path {
        "/robots.txt" => Response::status(404),
        // sim = 1 (the only keyword is there): relevant.
        "/" => html(
            "home",
            "basketball",
            &[("/x", "misc"), ("/y", "basketball scores"), ("/z", "other")],
        ),
        // Relevant: its link inherits δ·1.
        "/x" => html("x", "basketball again", &[("/x1", "go")]),
        // Not relevant: its link inherits δ·inherited(/y).
        "/y" => html("y", "nothing here", &[("/y1", "more")]),
        _ => html("leaf", "leaf", &[]),
    }
}

fn shark_settings() -> CrawlSettings {
    let mut s = one_at_a_time(Order::Shark);
    s.order.delta = 0.5;
    s.order.gamma = 0.5;
    s.filter.relevance_keywords = vec![("basketball".into(), 1.0)];
    s.filter.relevance_threshold = 0.1;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shark_search_fetches_by_potential_score_as_worked_by_hand() {
    // Potential = γ·inherited + (1 − γ)·anchor, δ = γ = 0.5.
    // Links of `/` (sim 1, relevant) inherit 0.5·1 = 0.5; the anchor of
    // /y holds the keyword (1), the others' anchors and contexts none (0):
    // /y 0.75, /x 0.25, /z 0.25. /x (relevant) gives /x1 inherited 0.5,
    // potential 0.25; /y (sim 0) gives /y1 0.5·0.5 = 0.25, potential
    // 0.125. Ties go in discovery order: /z (found before /x1).
    let f = Fixture::start(shark_web).await;
    Db::new().crawl(shark_settings(), &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/", "/y", "/x", "/z", "/x1", "/y1"]);

    // Breadth-first on the same web, for contrast.
    let f = Fixture::start(shark_web).await;
    let mut s = shark_settings();
    s.order.order = Order::Bfs;
    Db::new().crawl(s, &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/", "/x", "/y", "/z", "/x1", "/y1"]);

    // The scores are stored with the queued URLs: stop after three pages.
    let f = Fixture::start(shark_web).await;
    let db = Db::new();
    let mut s = shark_settings();
    s.max_pages = Some(3);
    db.crawl(s, &[f.url("/")]).await;
    let mut left: Vec<(String, f32, f32)> = queued(&db)
        .into_iter()
        .map(|e| {
            let sc = e.scores.expect("scores stored");
            (e.url, sc.inherited, sc.anchor)
        })
        .collect();
    left.sort_by(|a, b| a.0.cmp(&b.0));
    let expect = [("/x1", 0.5, 0.0), ("/y1", 0.25, 0.0), ("/z", 0.5, 0.0)];
    assert_eq!(left.len(), expect.len(), "{left:?}");
    for ((url, inherited, anchor), (path, i, a)) in left.iter().zip(expect) {
        assert_eq!(url, &f.url(path));
        assert!((inherited - i).abs() < 1e-6, "{url}: inherited {inherited}");
        assert!((anchor - a).abs() < 1e-6, "{url}: anchor {anchor}");
    }

    // The shell shows them in the order they will go, and where each
    // waits: /z and /x1 tie at 0.25 (/z found first), /y1 0.125 last.
    let cmds = vec![
        "set crawl.order shark".to_string(),
        "frontier top 2".into(),
        format!("why {}", f.url("/y1")),
        "pages where inherited = 0.5 order by url".into(),
    ];
    let out = common::shell(db.store.clone(), cmds).await;
    let top: Vec<&str> = out.lines().filter(|l| l.starts_with("0.2500")).collect();
    assert_eq!(top.len(), 2, "{out}");
    assert!(
        top[0].ends_with(&f.url("/z")) && top[1].ends_with(&f.url("/x1")),
        "{out}"
    );
    let cols: Vec<&str> = top[0].split_whitespace().collect();
    assert_eq!(
        cols[..3],
        ["0.2500", "0.5000", "0.0000"],
        "score, inherited, anchor"
    );
    assert!(
        out.contains("2 URLs of its host ahead of it; score 0.1250 under shark (inherited 0.2500, anchor 0.0000"),
        "{out}"
    );
    // Fetched pages keep theirs: /x and /y were queued inheriting 0.5.
    assert!(out.contains("(2 pages)"), "{out}");
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn importance_ranks_by_url_shape_and_backlinks() {
    // α = β = 0.5, patterns `index`. Every child has one in-link, from the
    // seed, so the same IB; IL decides: /index.html (0.5 + 1 + 1) / 3,
    // /a/b (1/3 + 1 + 0) / 3, /deep/er/page?q=1 (1/4 + 0 + 0) / 3.
    let web = |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => html(
            "home",
            "text",
            &[
                ("/deep/er/page?q=1", "x"),
                ("/a/b", "x"),
                ("/index.html", "x"),
            ],
        ),
        _ => html("leaf", "leaf", &[]),
    };
    let f = Fixture::start(web).await;
    let mut s = one_at_a_time(Order::Importance);
    s.order.patterns = vec!["index".into()];
    Db::new().crawl(s, &[f.url("/")]).await;
    assert_eq!(
        f.fetched(),
        ["/", "/index.html", "/a/b", "/deep/er/page?q=1"]
    );
}

/// The seed links /p1, /p2 and /p3; /p1 links /p3 again.
fn in_link_web(path: &str) -> Response {
    match path {
        "/robots.txt" => Response::status(404),
        "/" => html("home", "text", &[("/p1", "x"), ("/p2", "x"), ("/p3", "x")]),
        "/p1" => html("p1", "text", &[("/p3", "x")]),
        _ => html("leaf", "leaf", &[]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_url_moves_up_when_a_new_in_link_raises_its_ib() {
    // α = 1, β = 0: IB alone. The seed (backlinks 1, IB 0.5) gives each of
    // /p1, /p2, /p3 weight 0.5: IB 1/3 each, taken first-in first-out.
    // /p1 (weight 1/3) links to /p3 again: backlinks 0.5 + 1/3, IB 0.4545,
    // so /p3 overtakes /p2, which was found before it.
    let f = Fixture::start(in_link_web).await;
    let mut s = one_at_a_time(Order::Importance);
    (s.order.alpha, s.order.beta) = (1.0, 0.0);
    let db = Db::new();
    db.crawl(s.clone(), &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/", "/p1", "/p3", "/p2"]);
    // The fetched page keeps the scores it was queued with, the rise
    // included.
    let p3 = db
        .store
        .seen(trawl::model::UrlId::of(&f.url("/p3")))
        .unwrap()
        .unwrap();
    let b = p3.scores.expect("scores kept").backlinks;
    assert!((b - (0.5 + 1.0 / 3.0)).abs() < 1e-6, "{b}");

    // Stopped after /p1: /p3's row moved up, and its `seen` row names the
    // new key (the db audits clean).
    let f = Fixture::start(in_link_web).await;
    let db = Db::new();
    let mut stop = s.clone();
    stop.max_pages = Some(2);
    db.crawl(stop, &[f.url("/")]).await;
    db.crawl(s, &[]).await;
    assert_eq!(f.fetched(), ["/", "/p1", "/p3", "/p2"]);
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");

    // Breadth-first keeps discovery order: nothing is boosted.
    let f = Fixture::start(in_link_web).await;
    Db::new()
        .crawl(one_at_a_time(Order::Bfs), &[f.url("/")])
        .await;
    assert_eq!(f.fetched(), ["/", "/p1", "/p2", "/p3"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_order_re_keys_the_queue_left_by_an_earlier_run() {
    let f = Fixture::start(tree).await;
    let db = Db::new();
    let mut s = one_at_a_time(Order::Bfs);
    s.max_pages = Some(2);
    db.crawl(s, &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/", "/a"]);
    // b, c (depth 1) and a1, a2 (depth 2) are queued breadth-first; the
    // next run goes depth-first from there: a2, a1, a11, then c, b, b1.
    // Stopped after a2: the re-keyed rows' `seen` rows name their new
    // keys (the db audits clean).
    let mut dfs = one_at_a_time(Order::Dfs);
    dfs.max_pages = Some(3);
    db.crawl(dfs, &[]).await;
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
    db.crawl(one_at_a_time(Order::Dfs), &[]).await;
    let dfs_after = ["/", "/a", "/a2", "/a1", "/a11", "/c", "/b", "/b1"];
    assert_eq!(f.fetched(), dfs_after);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_of_order_while_the_crawl_runs_takes_effect_on_the_next_page() {
    // Every answer takes 300 ms: the change lands while /a is in flight.
    let f = Fixture::start(|p: &str| tree(p).delayed(Duration::from_millis(300))).await;
    let db = Db::new();
    let (handle, join) =
        trawl::crawl::start(db.store.clone(), one_at_a_time(Order::Bfs), &[f.url("/")])
            .expect("start crawl");
    common::wait_until_async("/a asked for", Duration::from_secs(10), || {
        f.fetched().contains(&"/a".to_string())
    })
    .await;
    let mut s = handle.settings();
    s.order.order = Order::Dfs;
    handle.set_settings(s);
    tokio::time::timeout(Duration::from_secs(60), join)
        .await
        .expect("crawl finishes")
        .unwrap()
        .unwrap();
    let dfs_after = ["/", "/a", "/a2", "/a1", "/a11", "/c", "/b", "/b1"];
    assert_eq!(f.fetched(), dfs_after);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_gaps_hold_under_a_score_order() {
    let f = Fixture::start(shark_web).await;
    let mut s = shark_settings();
    s.delay = Duration::from_millis(150);
    Db::new().crawl(s, &[f.url("/")]).await;
    let times = f.page_times();
    assert_eq!(times.len(), 6);
    for w in times.windows(2) {
        let gap = w[1] - w[0];
        assert!(gap >= Duration::from_millis(150), "gap {gap:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soft_focus_tunnels_through_irrelevant_pages_after_the_rest() {
    // Relevance filter on `basketball`: /off is not relevant. Hard focus
    // (the documents' rule) never follows its link; soft focus queues it
    // behind every other URL, so /on2 (found later) goes first.
    let web = |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => html("home", "basketball", &[("/off", "x"), ("/on", "x")]),
        "/off" => html("off", "cooking", &[("/behind", "x")]),
        "/on" => html("on", "basketball", &[("/on2", "x")]),
        _ => html("leaf", "basketball", &[]),
    };
    let settings = |focus: Focus| {
        let mut s = one_at_a_time(Order::Bfs);
        s.filter.mode = Mode::Relevance;
        s.filter.relevance_keywords = vec![("basketball".into(), 1.0)];
        s.order.focus = focus;
        s
    };
    let f = Fixture::start(web).await;
    Db::new().crawl(settings(Focus::Hard), &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/", "/off", "/on", "/on2"]);

    let f = Fixture::start(web).await;
    let db = Db::new();
    db.crawl(settings(Focus::Soft), &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/", "/off", "/on", "/on2", "/behind"]);
    let link = db
        .store
        .links_from(common::id(&f.url("/off")), 10)
        .unwrap()
        .into_iter()
        .next()
        .expect("the link of /off")
        .1;
    assert_eq!(link.verdict, trawl::model::LinkVerdict::Follow);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_sites_own_importance_or_shark_order_applies_in_full_under_a_bfs_crawl() {
    // Importance on the web of `a_queued_url_moves_up_…`: /p1's link
    // raises /p3 past /p2 in the site's queue, though the crawl's order
    // is breadth-first (whose boosts it never looked at).
    let f = Fixture::start(in_link_web).await;
    let db = Db::new();
    let add = format!("seed add {} --order importance", f.url("/"));
    common::shell(db.store.clone(), vec![add]).await;
    let mut s = one_at_a_time(Order::Bfs);
    (s.order.alpha, s.order.beta) = (1.0, 0.0);
    db.crawl(s, &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/", "/p1", "/p3", "/p2"]);
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");

    // Shark: the pages' similarity passes to their links as under a
    // crawl-wide shark order (relevant /x gives /x1 0.5, /y gives /y1
    // 0.25), not as 0 (then /y1, found first, would go before /x1).
    let f = Fixture::start(shark_web).await;
    let db = Db::new();
    let add = format!("seed add {} --order shark", f.url("/"));
    common::shell(db.store.clone(), vec![add]).await;
    let mut s = shark_settings();
    s.order.order = Order::Bfs;
    db.crawl(s, &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/", "/y", "/x", "/z", "/x1", "/y1"]);
}
