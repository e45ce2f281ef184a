//! Near-duplicates end to end: with `dedup.near` a crawl stores each
//! page's simhash, finds a page with one word changed and one with its
//! paragraphs reordered as near-duplicates of the first, leaves an
//! unrelated page alone, and stops expanding a calendar trap once its
//! cluster passes `dedup.cluster_budget`; the shell lists the clusters and
//! `why` says why a page's links were not followed.

use crate::common;

use common::{Db, Fixture, fast};
use trawl::settings::CrawlSettings;
use trawl::site::Response;

/// `n` words of varied prose from a fixed generator (`seed` picks the
/// text), in paragraphs of 100 words.
pub(crate) fn prose(seed: u64, n: usize) -> Vec<String> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let words: Vec<String> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("w{}", x % 700)
        })
        .collect();
    words.chunks(100).map(|c| c.join(" ")).collect()
}

/// A page of `paragraphs`; `extra` is HTML after them (links, or a
/// comment that makes the body another MD5 with the same text).
pub(crate) fn page(paragraphs: &[String], extra: &str) -> Response {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    Response::html(format!("<title>t</title>{body}{extra}"))
}

/// A site with a story (/a), the story with one word changed (/b), the
/// story with its paragraphs reordered (/c), an unrelated story (/other)
/// and a calendar whose every day is the same page with another date.
fn site(path: &str) -> Response {
    let story = prose(1, 800);
    match path {
        "/robots.txt" => Response::status(404),
        "/" => Response::html(
            "<a href=/a>a</a> <a href=/b>b</a> <a href=/c>c</a> <a href=/other>o</a> \
             <a href=/cal/1>calendar</a>",
        ),
        "/a" => page(&story, ""),
        "/b" => {
            let mut s = story.clone();
            let mut words: Vec<&str> = s[3].split(' ').collect();
            words[40] = "different";
            s[3] = words.join(" ");
            page(&s, "")
        }
        "/c" => {
            let mut s = story.clone();
            s.swap(0, 7);
            s.swap(2, 5);
            page(&s, "")
        }
        "/other" => page(&prose(2, 800), ""),
        p if p.starts_with("/cal/") => {
            let day: u32 = p[5..].parse().unwrap_or(0);
            let mut s = prose(3, 600);
            s.insert(0, format!("Events on day {day}"));
            page(&s, &format!("<a href=/cal/{}>next day</a>", day + 1))
        }
        _ => Response::status(404),
    }
}

fn settings(near: bool, budget: u32) -> CrawlSettings {
    let mut s = fast();
    s.max_depth = Some(30);
    s.dedup.near = near;
    s.dedup.cluster_budget = budget;
    s
}

/// The db agrees with itself: every counter recounted from its rows.
fn audit(db: &Db) {
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}

fn calendar_days(f: &Fixture) -> usize {
    f.fetched()
        .iter()
        .filter(|p| p.starts_with("/cal/"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn near_duplicates_are_found_and_a_cluster_budget_stops_a_calendar() {
    let f = Fixture::start(site).await;
    let db = Db::new();
    db.crawl(settings(true, 5), &[f.url("/")]).await;
    // The story's three pages are fetched at once: the first stored starts
    // the cluster, the other two join it.
    let story = ["/a", "/b", "/c"].map(|p| f.url(p));
    let near = story.clone().map(|u| db.doc(&u).unwrap().near);
    let firsts: Vec<&String> = story
        .iter()
        .zip(&near)
        .filter(|(_, n)| n.is_none())
        .map(|(u, _)| u)
        .collect();
    assert_eq!(firsts.len(), 1, "{near:?}");
    let a = firsts[0].clone();
    let id = |u: &str| trawl::model::UrlId::of(u).0;
    let (member, member_near) = story
        .iter()
        .zip(&near)
        .find_map(|(u, n)| Some((u.clone(), (*n)?)))
        .unwrap();
    for n in near.iter().flatten() {
        assert_eq!(n.cluster, id(&a));
        assert!(n.distance <= 3, "{n:?}");
    }
    let member_of = story
        .iter()
        .find(|u| id(u) == member_near.of)
        .unwrap()
        .clone();
    assert!(db.doc(&f.url("/other")).unwrap().near.is_none());
    // Days 1-5 are within the budget of 5 and link on; day 6 is stored,
    // its link not followed.
    assert_eq!(calendar_days(&f), 6, "{:?}", f.fetched());
    let c = db.store.counters().unwrap();
    assert_eq!((c.near_duplicates, c.unexpanded), (2 + 5, 1));

    let day6 = f.url("/cal/6");
    let out = common::shell(
        db.store.clone(),
        vec![
            "near-duplicates".into(),
            "count pages where near_duplicate".into(),
            format!("pages where near_duplicate_of = \"{member_of}\""),
            format!("page {member}"),
            format!("why {day6}"),
            "status".into(),
        ],
    )
    .await;
    let cal1 = f.url("/cal/1");
    assert!(
        out.lines()
            .any(|l| l.contains(&cal1) && l.trim_start().starts_with("6 ")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains(&a) && l.trim_start().starts_with("3 ")),
        "{out}"
    );
    assert!(out.contains("\n7\n") || out.contains("7 pages"), "{out}");
    assert!(out.contains(&format!("near dup of   {member_of}")), "{out}");
    assert!(
        out.contains("its links are not followed: a near-duplicate of")
            && out.contains("in a cluster where its site's pages are past dedup.cluster_budget"),
        "{out}"
    );
    assert!(
        out.contains("near dups   7 (1 past their cluster's budget"),
        "{out}"
    );
    // Day 6's link is counted nowhere: the counters and the rows agree.
    audit(&db);

    // Without detection, or without a budget, the calendar runs to the
    // depth limit.
    for (near, budget) in [(false, 5), (true, 0)] {
        let f = Fixture::start(site).await;
        let db = Db::new();
        db.crawl(settings(near, budget), &[f.url("/")]).await;
        assert_eq!(calendar_days(&f), 30, "near {near} budget {budget}");
        audit(&db);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dedup_settings_are_checked() {
    let db = Db::new();
    let err = common::shell_error(db.store.clone(), "set dedup.distance 4".into()).await;
    assert!(err.contains("dedup.distance"), "{err}");
    let out = common::shell(
        db.store.clone(),
        vec!["set dedup.near true".into(), "near-duplicates".into()],
    )
    .await;
    assert!(out.contains("no near-duplicate clusters"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_run_finds_near_duplicates_of_what_an_earlier_run_stored() {
    // The crawl holds the band index in memory: a new run loads it from the
    // db, so a page fetched now joins the cluster of one stored before.
    let f = Fixture::start(site).await;
    let db = Db::new();
    db.crawl(settings(true, 5), &[f.url("/a")]).await;
    assert!(db.doc(&f.url("/a")).unwrap().near.is_none());
    db.crawl(settings(true, 5), &[f.url("/b"), f.url("/other")])
        .await;
    let near = db.doc(&f.url("/b")).unwrap().near.expect("/b near /a");
    let a = trawl::model::UrlId::of(&f.url("/a")).0;
    assert_eq!((near.of, near.cluster), (a, a));
    assert!(db.doc(&f.url("/other")).unwrap().near.is_none());
    assert_eq!(db.store.counters().unwrap().near_duplicates, 1);
    audit(&db);
}
