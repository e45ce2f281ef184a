//! Revisits that tell the truth (issue 36), on tokio's paused clock with a
//! fixture server that reads the same clock: a new version found by a
//! revisit is not counted, judged or learned from as a newly found page;
//! a body whose text is the same is unchanged; a page never seen to change
//! waits twice as long each time; sitemap dates after the sitemap's fetch
//! are ignored and a lastmod makes no page due sooner than `recrawl.min`
//! after its last visit. Every crawl ends with the db's audit.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::revisits::{HOUR, Site, crawl_with, hourly, html, links, visits, w3c};
use crate::common::{self, Db, fast};
use trawl::frontier::Order;
use trawl::schema::Compared;
use trawl::schema::tables::{Frontier, ModelRow, Runs, Visits};
use trawl::settings::StopRule;
use trawl::settings::{CrawlSettings, RecrawlMode, RecrawlSettings};
use trawl::site::Response;

fn audit_clean(db: &Db) {
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
}

/// Three static pages of their own words, and `/changing`, whose text
/// changes every hour by a number alone (no new term).
fn four_pages(path: &str, at_ms: u64) -> Response {
    match path {
        "/robots.txt" => Response::status(404),
        "/" => html(
            "home of the garden society",
            &links(&["/a", "/b", "/changing"]),
        ),
        "/a" => html(
            "orchids",
            "orchids need bright indirect light and humid air",
        ),
        "/b" => html("cacti", "cacti store water in thick stems through droughts"),
        "/changing" => html(
            "notices",
            &format!("meeting notice number {} posted today", at_ms / HOUR),
        ),
        _ => Response::status(404),
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_new_version_is_not_judged_learned_from_or_counted_as_a_new_page() {
    let site = Site::start(|p, at, _| four_pages(p, at)).await;
    let db = Db::new();
    let mut s = CrawlSettings {
        recrawl: hourly(),
        ..fast()
    };
    // Each new version of /changing brings no new term: were revisits
    // judged, this rule would end the crawl after three of them.
    s.stop_when = StopRule::parse_list("saturation<0.3/3").unwrap();
    s.order.order = Order::Learned;
    crawl_with(&db, s, &site.url("/"), Duration::from_secs(5 * 3600 + 1800)).await;
    // Fetched at 0 h and revisited at 1…5 h: the crawl waited for them.
    assert_eq!(site.asked("/changing").len(), 6);
    let run = db.store.rows::<Runs>(&[]).last().unwrap().unwrap().1;
    assert_eq!(run.stopped_by, "", "{run:?}");
    let c = db.store.counters().unwrap();
    assert_eq!((c.revisits, c.revisits_changed), (20, 5), "{c:?}");
    // The four pages found this run, judged once each.
    assert_eq!(
        (run.fetched, run.judged, run.relevant),
        (4, 4, 4),
        "{run:?}"
    );
    assert_eq!((c.run.fetched, c.run.judged), (4, 4), "{c:?}");
    let model = db.store.meta::<ModelRow>().unwrap().unwrap();
    assert_eq!(model.updates, 4, "trained on the pages found, not revisits");
    let out = common::shell(db.store.clone(), vec!["status".into()]).await;
    assert!(out.contains("(4 relevant of 4 judged this run)"), "{out}");
    assert!(out.contains("20 done, 5 found changed"), "{out}");
    audit_clean(&db);
}

/// Home changes hourly and links /p0…/p9, which link nothing.
fn hub(path: &str, at_ms: u64) -> Response {
    match path {
        "/robots.txt" => Response::status(404),
        "/" => {
            let all: Vec<String> = (0..10).map(|i| format!("/p{i}")).collect();
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            html(&format!("hub {}", at_ms / HOUR), &links(&all))
        }
        p => html(p, "a page of its own"),
    }
}

/// The importance in-links of the pages still queued, as their rows hold
/// them, after a crawl of `hours` with a page every 40 minutes; and how
/// often home was fetched.
async fn backlinks_queued(hours: f64) -> (Vec<(String, f32)>, usize) {
    let site = Site::start(|p, at, _| hub(p, at)).await;
    let db = Db::new();
    let mut s = CrawlSettings {
        recrawl: hourly(),
        ..fast()
    };
    s.order.order = Order::Importance;
    s.delay = Duration::from_secs(40 * 60);
    let horizon = Duration::from_secs_f64(hours * 3600.0);
    crawl_with(&db, s, &site.url("/"), horizon).await;
    audit_clean(&db);
    let queued = db.store.rows::<Frontier>(&[]).map(|r| r.unwrap().1);
    let base = site.url("");
    let backlinks = queued
        .map(|e| (e.url.replace(&base, ""), e.scores.unwrap().backlinks))
        .collect();
    (backlinks, site.asked("/").len())
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_new_version_raises_no_in_link_its_old_version_counted() {
    let (before, homes) = backlinks_queued(1.0).await;
    assert_eq!(homes, 1);
    let (after, homes) = backlinks_queued(3.5).await;
    assert!(homes >= 2, "home revisited: {homes}");
    let mut compared = 0;
    for (url, b) in &after {
        if let Some((_, a)) = before.iter().find(|(u, _)| u == url) {
            assert!(*a > 0.0);
            assert_eq!(b, a, "{url}: the same link from the same page");
            compared += 1;
        }
    }
    assert!(compared >= 3, "{before:?} {after:?}");
}

/// `/token`'s body carries a new token each time, its text never changes;
/// `/edited`'s text changes hourly; `/drift` is 800 words of which one
/// changes hourly.
fn tokens(path: &str, at_ms: u64) -> Response {
    let hour = at_ms / HOUR;
    match path {
        "/robots.txt" => Response::status(404),
        "/" => html("home", &links(&["/token", "/edited", "/drift"])),
        "/token" => Response::html(format!(
            "<html><head><title>a form</title><meta name=\"generated\" content=\"{at_ms}\"></head>\
             <body><form><input type=\"hidden\" name=\"csrf\" value=\"t{at_ms}\">\
             <p>sign up for the newsletter</p></form></body></html>"
        )),
        "/edited" => html("edited", &format!("the text of edition {hour} of the page")),
        "/drift" => html("drift", &prose(800, &format!("edition{hour}"))),
        _ => Response::status(404),
    }
}

/// `words` words of varied text with `changed` in the middle.
fn prose(words: usize, changed: &str) -> String {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut out: Vec<String> = (0..words)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("w{:x}", x % 50_000)
        })
        .collect();
    out[words / 2] = changed.to_string();
    out.join(" ")
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_body_whose_text_is_the_same_is_unchanged_and_why_says_what_decided() {
    let site = Site::start(|p, at, _| tokens(p, at)).await;
    let db = Db::new();
    let mut s = CrawlSettings {
        recrawl: hourly(),
        ..fast()
    };
    s.dedup.near = true;
    crawl_with(&db, s, &site.url("/"), Duration::from_secs(3 * 3600 + 1800)).await;
    let first = db.page(&site.url("/")).unwrap().fetched_ms;
    let expect = [
        ("/token", 0, Compared::Text),
        ("/edited", 3, Compared::Text),
        ("/drift", 0, Compared::Simhash),
    ];
    for (path, changes, compared) in expect {
        let v = visits(&db, &site.url(path));
        assert_eq!(
            (v.visits, v.changes, v.compared),
            (4, changes, compared),
            "{path}"
        );
        assert!(v.text_hash.is_some(), "{path}");
    }
    // The first version of /token stays stored: no new version a visit.
    let token = db.page(&site.url("/token")).unwrap();
    assert!(token.fetched_ms < first + HOUR);
    let c = db.store.counters().unwrap();
    assert_eq!(c.revisits_changed, 3, "{c:?}");
    let why = common::why(&db.store, &site.url("/token")).await;
    assert!(
        why.contains("(unchanged: the same title and text (text hash), the body differing)"),
        "{why}"
    );
    let why = common::why(&db.store, &site.url("/edited")).await;
    assert!(
        why.contains("(changed: another title or text (text hash))"),
        "{why}"
    );
    let why = common::why(&db.store, &site.url("/drift")).await;
    assert!(
        why.contains("(unchanged: a text within dedup.distance"),
        "{why}"
    );
    audit_clean(&db);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_page_stored_without_a_text_hash_compares_md5s_once_then_gets_one() {
    let site = Site::start(|p, at, _| tokens(p, at)).await;
    let db = Db::new();
    let s = CrawlSettings {
        recrawl: hourly(),
        ..fast()
    };
    crawl_with(&db, s.clone(), &site.url("/"), Duration::from_secs(1800)).await;
    // As a visits row from before schema 21 reads.
    let id = common::id(&site.url("/token"));
    let mut v = visits(&db, &site.url("/token"));
    (v.text_hash, v.rate) = (None, None);
    let mut b = db.store.batch();
    b.put_row::<Visits>(&id, &v);
    b.write().unwrap();
    crawl_with(&db, s, &site.url("/"), Duration::from_secs(2 * 3600 + 1800)).await;
    let v = visits(&db, &site.url("/token"));
    // 1 h: another body, no hash to compare: a new version; 2 h: the
    // same text as it.
    assert_eq!(
        (v.visits, v.changes, v.compared),
        (3, 1, Compared::Text),
        "{v:?}"
    );
    assert!(v.text_hash.is_some());
    audit_clean(&db);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_page_never_seen_to_change_waits_twice_as_long_each_time() {
    let site = Site::start(|p, _, _| match p {
        "/robots.txt" => Response::status(404),
        _ => html("still", "the same words every time"),
    })
    .await;
    let db = Db::new();
    let s = CrawlSettings {
        recrawl: RecrawlSettings {
            mode: RecrawlMode::ChangeRate,
            min: Duration::from_secs(3600),
            max: Duration::from_secs(30 * 24 * 3600),
            ..RecrawlSettings::default()
        },
        ..fast()
    };
    crawl_with(&db, s, &site.url("/"), Duration::from_secs(16 * 3600)).await;
    let at: Vec<u64> = site.asked("/").iter().map(|a| a.at_ms).collect();
    let waits: Vec<u64> = at
        .windows(2)
        .map(|w| (w[1] - w[0] + HOUR / 2) / HOUR)
        .collect();
    assert_eq!(waits, [1, 2, 4, 8], "{at:?}");
    let v = visits(&db, &site.url("/"));
    assert_eq!(v.due_ms, v.last_ms + 16 * HOUR, "{v:?}");
    audit_clean(&db);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn sitemap_dates_after_its_fetch_are_ignored_and_a_lastmod_waits_for_recrawl_min() {
    let base: Arc<OnceLock<String>> = Arc::default();
    let b = base.clone();
    let wall0 = trawl::model::now_ms();
    // The seeds are fetched before the sitemap robots.txt names: at its
    // read each has a visit, which its lastmods are after.
    let site = Site::start(move |path, at_ms, _| {
        let base = b.get().cloned().unwrap_or_default();
        let entry = |p: &str, lastmod: &str| {
            format!("<url><loc>{base}{p}</loc><lastmod>{lastmod}</lastmod></url>")
        };
        match path {
            "/robots.txt" => Response::text(format!("User-agent: *\nSitemap: {base}/map.xml\n")),
            "/map.xml" => Response::new(
                200,
                format!(
                    "<urlset>{}{}{}</urlset>",
                    // Generated on request: every entry says "now".
                    entry("/now", &w3c(wall0 + at_ms)),
                    entry("/future", "9999-12-31"),
                    entry("/tomorrow", &w3c(wall0 + at_ms + 24 * HOUR)),
                ),
            )
            .header("content-type", "application/xml"),
            p => html(p, "a page"),
        }
    })
    .await;
    base.set(site.url("")).unwrap();
    let db = Db::new();
    let mut s = CrawlSettings {
        recrawl: RecrawlSettings {
            mode: RecrawlMode::Uniform,
            every: Duration::from_secs(10 * 3600),
            min: Duration::from_secs(3 * 3600),
            ..RecrawlSettings::default()
        },
        ..fast()
    };
    s.sitemaps.enabled = true;
    // A page every 10 minutes: the sitemap is read after the seeds.
    s.delay = Duration::from_secs(600);
    let seeds = ["/now", "/future", "/tomorrow"].map(|p| site.url(p));
    let (h, join) = trawl::crawl::start(db.store.clone(), s, &seeds).unwrap();
    tokio::time::sleep(Duration::from_secs(4 * 3600)).await;
    h.stop();
    join.await.unwrap().unwrap();
    let log = format!("{:?}", site.log.lock().unwrap());
    let map = site.asked("/map.xml");
    assert_eq!(map.len(), 1, "{log}");
    for p in ["/future", "/tomorrow"] {
        assert_eq!(site.asked(p).len(), 1, "{p} not due before 10 h: {log}");
    }
    let now = site.asked("/now");
    assert!(now[0].at_ms < map[0].at_ms, "{log}");
    // Due by its lastmod, but 3 h (recrawl.min) after its visit.
    assert_eq!(now.len(), 2, "{log}");
    assert!(now[1].at_ms >= now[0].at_ms + 3 * HOUR, "{log}");
    assert!(now[1].at_ms <= now[0].at_ms + 3 * HOUR + 600_000, "{log}");
    audit_clean(&db);
}
