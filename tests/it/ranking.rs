//! `rank pagerank` and `rank hosts` stored: against values worked out by
//! hand on small webs and against networkx on a generated web of 1,000
//! pages (`tests/fixtures/pagerank-1000.txt`, made by
//! `scripts/pagerank-reference`), each crawled from a loopback server
//! into a real db first.

use crate::common;

use std::sync::{Arc, OnceLock};

use common::{Db, Fixture, fast, id, page};
use trawl::frontier::{Backlinks, Order};
use trawl::model::HostId;
use trawl::schema::tables::{HostRanks, Ranks};
use trawl::settings::Scope;
use trawl::site::Response;

fn pagerank_of(db: &Db, url: &str) -> f64 {
    db.store
        .row::<Ranks>(&id(url))
        .unwrap()
        .unwrap_or_else(|| panic!("no rank stored for {url}"))
        .pagerank
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pagerank_of_a_star_with_a_dangling_leaf_as_worked_by_hand() {
    // / links to /b, /c, /d, /e; /b, /c, /d link back; /e has no links, so
    // its rank spreads over all five. With d = 0.85 and x the rank of each
    // leaf (/e's equation is the others'), a = 1 - 4x and
    // x = (1-d)/5 + d·x/5 + d·a/4, so 1.68·x = 0.2425:
    // x = 97/672, a = 71/168.
    // (Titles differ: a page repeating another's body keeps no links.)
    let web = |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => page("hub", &["/b", "/c", "/d", "/e"]),
        "/e" => page("dangling", &[]),
        p => page(&format!("leaf {p}"), &["/"]),
    };
    let f = Fixture::start(web).await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    let out = common::shell(db.store.clone(), vec!["rank pagerank".into()]).await;
    assert!(out.contains("stored for 5 URLs"), "{out}");
    let (a, x) = (71.0 / 168.0, 97.0 / 672.0);
    assert!((pagerank_of(&db, &f.url("/")) - a).abs() < 1e-6);
    for leaf in ["/b", "/c", "/d", "/e"] {
        let got = pagerank_of(&db, &f.url(leaf));
        assert!((got - x).abs() < 1e-6, "{leaf}: {got} vs {x}");
    }
    // The stored score answers queries and shows on the page.
    let cmds = [
        "pages where pagerank > 0.4".to_string(),
        "pages where pagerank < 0.2 order by url limit 2 --json".into(),
        format!("page {}", f.url("/b")),
    ];
    let out = common::shell(db.store.clone(), cmds.to_vec()).await;
    assert!(out.contains("(1 page)"), "{out}");
    assert!(
        out.contains(&format!("\"url\": \"{}\"", f.url("/b"))),
        "{out}"
    );
    assert!(out.contains("\"pagerank\": 0.1443452"), "{out}");
    assert!(out.contains("\"inherited\": 0.5"), "scores shown: {out}");
    assert!(
        out.contains("pagerank      1.4435e-1 (0.72 × the mean"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pagerank_agrees_with_networkx_on_a_generated_web_of_1000_pages() {
    let fixture = include_str!("../fixtures/pagerank-1000.txt");
    let rows: Vec<(usize, f64, Vec<String>)> = fixture
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut cols = l.split('\t');
            let node = cols.next().unwrap().parse().unwrap();
            let rank = cols.next().unwrap().parse().unwrap();
            let links = cols
                .next()
                .unwrap_or("")
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|t| format!("/p/{t}"))
                .collect();
            (node, rank, links)
        })
        .collect();
    assert_eq!(rows.len(), 1000);
    let links: Arc<Vec<Vec<String>>> = Arc::new(rows.iter().map(|r| r.2.clone()).collect());
    let web = move |path: &str| {
        let n: Option<usize> = path.strip_prefix("/p/").and_then(|n| n.parse().ok());
        match n.and_then(|n| links.get(n).map(|l| (n, l))) {
            Some((n, l)) => page(
                &format!("p{n}"),
                &l.iter().map(String::as_str).collect::<Vec<_>>(),
            ),
            None => Response::status(404),
        }
    };
    let f = Fixture::start(web).await;
    let db = Db::new();
    let mut s = fast();
    s.concurrency = 8;
    s.per_host = 8;
    db.crawl(s, &[f.url("/p/0")]).await;
    let cmd = "rank pagerank --tolerance 1e-12 --iterations 1000";
    let out = common::shell(db.store.clone(), vec![cmd.into()]).await;
    assert!(out.contains("stored for 1,000 URLs"), "{out}");
    let mut worst: f64 = 0.0;
    for (node, want, _) in &rows {
        let got = pagerank_of(&db, &f.url(&format!("/p/{node}")));
        worst = worst.max((got - want).abs());
    }
    assert!(worst < 1e-6, "largest difference from networkx: {worst:e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_ranks_of_three_hosts_as_worked_by_hand() {
    // Hosts A → B, A → C, B → C, C → A (front pages), each also linking to
    // a page of its own (left out of the host graph). With d = 0.85:
    // a = 0.05 + d·c, b = 0.05 + d·a/2, c = 0.05 + d·(a/2 + b), so
    // a = 686/1769, b = 380/1769, c = 703/1769.
    let urls: Arc<OnceLock<[String; 3]>> = Arc::default();
    let host = |me: usize| {
        let urls = urls.clone();
        move |path: &str| {
            let u = urls.get().expect("hosts started");
            let out: Vec<String> = match me {
                0 => vec![u[1].clone(), u[2].clone()],
                1 => vec![u[2].clone()],
                _ => vec![u[0].clone()],
            };
            match path {
                "/robots.txt" => Response::status(404),
                "/" => {
                    let mut l: Vec<&str> = out.iter().map(String::as_str).collect();
                    l.push("/own");
                    page(&format!("front {me}"), &l)
                }
                _ => page(&format!("own {me}"), &["/"]),
            }
        }
    };
    let (a, b, c) = (
        Fixture::start(host(0)).await,
        Fixture::start(host(1)).await,
        Fixture::start(host(2)).await,
    );
    urls.set([a.url("/"), b.url("/"), c.url("/")]).unwrap();
    let db = Db::new();
    let mut s = fast();
    s.scope = Scope::Any;
    // b and c, on other loopback ports, stand in for public hosts.
    s.fetch.allow_private = true;
    db.crawl(s, &[a.url("/")]).await;
    let out = common::shell(db.store.clone(), vec!["rank hosts".into()]).await;
    assert!(
        out.contains("host rank of 3 hosts over 4 host-to-host links"),
        "{out}"
    );
    let rank = |f: &Fixture| {
        let origin = f.url("/").trim_end_matches('/').to_string();
        let r = db.store.row::<HostRanks>(&HostId::of(&origin)).unwrap();
        r.unwrap_or_else(|| panic!("no rank for {origin}")).rank
    };
    for (f, want) in [(&a, 686.0), (&b, 380.0), (&c, 703.0)] {
        let got = rank(f);
        assert!((got - want / 1769.0).abs() < 1e-6, "{got} vs {want}/1769");
    }
    let out = common::shell(db.store.clone(), vec![format!("host {}", c.url("/"))]).await;
    assert!(out.contains("host rank     3.9740e-1"), "{out}");
}

/// `/` links to /a, /b, /q1 and /q2; /a and /b link to /q2 as well.
fn three_links_to_q2(path: &str) -> Response {
    match path {
        "/robots.txt" => Response::status(404),
        "/" => page("home", &["/a", "/b", "/q1", "/q2"]),
        "/a" | "/b" => page(&format!("hub {path}"), &["/q2"]),
        p => page(&format!("leaf {p}"), &[]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn importance_can_take_ib_from_the_stored_pagerank() {
    // A first run (breadth-first, three pages) leaves /q1 and /q2 queued,
    // /q1 first. PageRank then ranks /q2 (three in-links) over /q1 (one).
    // Resumed under importance with α = 1, β = 0: from PageRank, /q2 goes
    // first; from in-links known when queued (one each), /q1 does.
    let mut firsts = Vec::new();
    for backlinks in [Backlinks::Pagerank, Backlinks::Inlinks] {
        let f = Fixture::start(three_links_to_q2).await;
        let db = Db::new();
        let mut s = fast();
        (s.concurrency, s.per_host, s.max_pages) = (1, 1, Some(3));
        db.crawl(s.clone(), &[f.url("/")]).await;
        let out = common::shell(db.store.clone(), vec!["rank pagerank".into()]).await;
        assert!(out.contains("stored for 5 URLs"), "{out}");
        assert!(pagerank_of(&db, &f.url("/q2")) > pagerank_of(&db, &f.url("/q1")));
        s.max_pages = None;
        s.order.order = Order::Importance;
        (s.order.alpha, s.order.beta, s.order.backlinks) = (1.0, 0.0, backlinks);
        db.crawl(s, &[]).await;
        let order: Vec<String> = f.hits().into_iter().map(|h| h.path).collect();
        firsts.push(order[order.len() - 2].clone());
        assert_eq!(order.len(), 6, "{order:?}");
    }
    assert_eq!(firsts, ["/q2", "/q1"]);
}
