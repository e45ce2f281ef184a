//! Where near-duplicates are placed over a crawl's life: a site's copies of
//! another's page spend their own cluster budget; the band index holds the
//! `dedup.max_indexed` pages placed last (rows and memory counted); a
//! revisit that finds a new version moves the page's index entry to its
//! new hash (an old text is found no more), places the new version of an
//! exact duplicate, and counts no link a page past its budget never
//! added. Each test ends with the audit.

use crate::common;

use std::time::Duration;

use crate::dedup::{page, prose};
use common::by_host::ByHost;
use common::{Db, Fixture, fast};
use trawl::model::UrlId;
use trawl::settings::{CrawlSettings, RecrawlMode, RecrawlSettings, Scope};
use trawl::site::{Request, Response, Server, handler};

fn audit(db: &Db) {
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}

fn near_settings(budget: u32) -> CrawlSettings {
    let mut s = fast();
    s.concurrency = 1;
    s.max_depth = Some(30);
    s.dedup.near = true;
    s.dedup.cluster_budget = budget;
    s
}

/// copies.com publishes twenty copies of www.victim.org's article (the
/// same text, another body); the article, at the end of a chain of 24
/// pages (so that it comes after the copies however hosts take turns),
/// links on to /more.
fn copied(host: &str, path: &str, port: u16) -> Response {
    let story = prose(11, 800);
    let source = |href: &str| format!("<a href=\"{href}\">source</a>");
    match (host, path) {
        (_, "/robots.txt") => Response::status(404),
        ("copies.com", "/") => {
            let mut links: String = (1..=20).map(|n| format!("<a href=/c{n}>c</a> ")).collect();
            links += &format!("<a href=http://www.victim.org:{port}/>v</a>");
            Response::html(links)
        }
        ("copies.com", p) => page(&story, &format!("<!-- {p} -->{}", source("/"))),
        ("www.victim.org", "/article") => page(&story, &source("/more")),
        ("www.victim.org", "/more") => page(&prose(12, 800), ""),
        ("www.victim.org", p) => match p.trim_start_matches("/p").parse::<u32>() {
            Ok(n) if n < 24 => Response::html(format!("<a href=/p{}>on</a>", n + 1)),
            Ok(_) => Response::html("<a href=/article>on</a>"),
            Err(_) => Response::html("<a href=/p1>on</a>"),
        },
        _ => Response::status(404),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_copying_another_spends_its_own_cluster_budget_not_the_copied_sites() {
    let site = ByHost::start(copied).await;
    let db = Db::new();
    let mut s = near_settings(5);
    s.scope = Scope::Any;
    s.max_depth = None;
    // The loopback stands in for the two public sites.
    s.fetch.allow_private = true;
    s.fetch.resolve = ["copies.com", "www.victim.org"]
        .map(|h| (h.to_string(), "127.0.0.1".parse().unwrap()))
        .to_vec();
    db.crawl(s, &[site.url("copies.com", "/")]).await;
    let pages: Vec<String> = site.pages().into_iter().map(|(p, _)| p).collect();
    let at = |p: &str| pages.iter().position(|x| x == p);
    let article = at("www.victim.org/article").expect("the article is fetched");
    assert!(
        (1..=20).all(|n| at(&format!("copies.com/c{n}")).is_some_and(|i| i < article)),
        "the copies come first: {pages:?}"
    );
    // The article joins the copies' cluster as its site's first page.
    let doc = db.doc(&site.url("www.victim.org", "/article")).unwrap();
    let near = doc.near.expect("a near-duplicate of the copies");
    assert!(near.expanded, "{near:?}");
    assert!(
        at("www.victim.org/more").is_some(),
        "its link is followed: {pages:?}"
    );
    // The copies past their own site's five have their links unfollowed.
    let c = db.store.counters().unwrap();
    assert_eq!((c.near_duplicates, c.unexpanded), (20, 15), "{c:?}");
    let why = common::why(&db.store, &site.url("copies.com", "/c20")).await;
    assert!(
        why.contains("in a cluster where its site's pages are past dedup.cluster_budget"),
        "{why}"
    );
    let out = common::shell(db.store.clone(), vec!["near-duplicates".into()]).await;
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("21 ") && l.contains("15")),
        "{out}"
    );
    audit(&db);
}

/// `/` links /p0 … /p9 (ten unrelated texts), then /again0 and /again9
/// (the texts of /p0 and /p9 in another body).
fn many(path: &str) -> Response {
    match path {
        "/robots.txt" => Response::status(404),
        "/" => {
            let links: String = (0..10).map(|n| format!("<a href=/p{n}>p</a> ")).collect();
            Response::html(links)
        }
        "/later" => Response::html("<a href=/again0>a</a> <a href=/again9>a</a>"),
        p if p.starts_with("/again") => {
            let n: u64 = p[6..].parse().unwrap_or(0);
            page(&prose(100 + n, 800), "<!-- again -->")
        }
        p => {
            let n: u64 = p[2..].parse().unwrap_or(0);
            page(&prose(100 + n, 800), "")
        }
    }
}

/// The pages of `urls` the stored index holds (loaded without a bound).
fn held(db: &Db, urls: &[String]) -> Vec<String> {
    let (index, dropped) = db.store.load_band_index(usize::MAX).unwrap();
    assert!(dropped.is_empty());
    urls.iter()
        .filter(|u| {
            let hash = db.doc(u).and_then(|d| d.simhash).expect("hashed");
            let m = index.nearest(hash, 0, UrlId(0));
            m.is_some_and(|m| m.page == common::id(u))
        })
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_band_index_holds_the_pages_placed_last_within_max_indexed() {
    let f = Fixture::start(many).await;
    let db = Db::new();
    let mut s = near_settings(20);
    s.dedup.max_indexed = 3;
    db.crawl(s.clone(), &[f.url("/")]).await;
    let ps: Vec<String> = (0..10).map(|n| f.url(&format!("/p{n}"))).collect();
    let order: Vec<String> = f.fetched().iter().map(|p| f.url(p)).collect();
    let last3: Vec<String> = order[order.len() - 3..].to_vec();
    // Counted: three rows of ten hashed pages, the last three placed.
    let (index, _) = db.store.load_band_index(usize::MAX).unwrap();
    assert_eq!(index.len(), 3);
    let mut kept = held(&db, &ps);
    kept.sort();
    let mut want = last3.clone();
    want.sort();
    assert_eq!(kept, want);

    // A new run with a smaller bound: the rows over it go at the first
    // page placed; a copy of a forgotten page is no near-duplicate, one
    // of a page held is.
    let first = order[1].clone();
    let last = order[order.len() - 1].clone();
    assert!(first.ends_with("/p0") && last.ends_with("/p9"), "{order:?}");
    s.dedup.max_indexed = 2;
    db.crawl(s, &[f.url("/later")]).await;
    let (index, _) = db.store.load_band_index(usize::MAX).unwrap();
    assert_eq!(index.len(), 2);
    assert!(db.doc(&f.url("/again0")).unwrap().near.is_none());
    let near = db.doc(&f.url("/again9")).unwrap().near.expect("near /p9");
    assert_eq!(near.of, common::id(&last).0);
    audit(&db);
}

const HOUR: u64 = 3_600_000;

/// On the paused clock: /a's text is replaced at 30 min; /dup repeats /a's
/// first body exactly, then has a text of its own; the calendar's days are
/// revised; from 90 min `/` also links three late pages, copies of /a's
/// old and new texts and of /dup's new one.
fn changing(path: &str, at_ms: u64) -> Response {
    let revised = at_ms >= HOUR / 2;
    let a = |new: bool| prose(if new { 22 } else { 21 }, 800);
    match path {
        "/robots.txt" => Response::status(404),
        "/" => {
            let mut links = "<a href=/a>a</a> <a href=/dup>d</a> <a href=/cal/1>c</a>".to_string();
            if at_ms >= HOUR * 3 / 2 {
                links += " <a href=/late-old>o</a> <a href=/late-new>n</a> <a href=/late-dup>d</a>";
            }
            Response::html(links)
        }
        "/a" => page(&a(revised), ""),
        "/dup" if !revised => page(&a(false), ""),
        "/dup" => page(&prose(23, 800), ""),
        "/late-old" => page(&a(false), "<!-- late -->"),
        "/late-new" => page(&a(true), "<!-- late -->"),
        "/late-dup" => page(&prose(23, 800), "<!-- late -->"),
        p if p.starts_with("/cal/") => {
            let day: u32 = p[5..].parse().unwrap_or(0);
            // Revised, a day's text is new (a note alone would leave its
            // simhash within dedup.distance: no change to a revisit).
            let mut s = prose(if revised { 4 } else { 3 }, 600);
            let note = if revised { " (revised)" } else { "" };
            s.insert(0, format!("Events on day {day}{note}"));
            page(&s, &format!("<a href=/cal/{}>next day</a>", day + 1))
        }
        _ => Response::status(404),
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_revisit_moves_a_page_to_its_new_hash_and_counts_no_link_it_never_added() {
    let t0 = tokio::time::Instant::now();
    let server = Server::bind(handler(move |req: Request| {
        let r = changing(&req.path, t0.elapsed().as_millis() as u64);
        async move { r }
    }))
    .await
    .unwrap();
    let db = Db::new();
    let mut s = near_settings(1);
    s.recrawl = RecrawlSettings {
        mode: RecrawlMode::Uniform,
        every: Duration::from_secs(3600),
        ..RecrawlSettings::default()
    };
    let (h, join) = trawl::crawl::start(db.store.clone(), s, &[server.url("/")]).unwrap();
    tokio::time::sleep(Duration::from_millis(5 * HOUR / 2)).await;
    h.stop();
    join.await.unwrap().unwrap();

    let doc = |p: &str| db.doc(&server.url(p)).expect(p);
    let c = db.store.counters().unwrap();
    assert!(c.revisits_changed >= 4, "{c:?}");
    // Day 2 is past the budget of 1: its links were never counted, and
    // its new version took nothing away.
    assert!(!doc("/cal/2").near.unwrap().expanded);
    assert!(doc("/cal/2").simhash.is_some());
    // /a is found under its new text only.
    assert!(
        doc("/late-old").near.is_none(),
        "{:?}",
        doc("/late-old").near
    );
    let a = common::id(&server.url("/a")).0;
    assert_eq!(doc("/late-new").near.map(|n| n.of), Some(a));
    // /dup, an exact duplicate at first, is placed as its new version.
    assert_eq!(doc("/dup").duplicate_of, None);
    let dup = common::id(&server.url("/dup")).0;
    assert_eq!(doc("/late-dup").near.map(|n| n.of), Some(dup));
    audit(&db);
}
