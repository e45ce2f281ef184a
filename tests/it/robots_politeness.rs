//! robots.txt semantics and politeness, measured from the server's side.

use crate::common;

use std::time::Duration;

use common::{Db, Fixture, fast, page};
use trawl::model::{FilterReason, SeenState};
use trawl::site::Response;

fn site(robots: Response) -> impl Fn(&str) -> Response + Send + Sync + 'static {
    move |path: &str| match path {
        "/robots.txt" => robots.clone(),
        "/" => page("home", &["/a", "/private/x", "/private/open/y", "/b.pdf"]),
        p => page(p, &[]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_rules_for_our_group_are_obeyed() {
    let robots = "User-agent: *\nDisallow: /\n\nUser-agent: trawl\nDisallow: /private\nAllow: /private/open\nDisallow: /*.pdf$\n";
    let f = Fixture::start(site(Response::text(robots))).await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert_eq!(f.count("/robots.txt"), 1, "robots.txt fetched once");
    assert_eq!(
        f.hits()[0].path,
        "/robots.txt",
        "robots.txt before any page"
    );
    assert_eq!(f.count("/a"), 1);
    assert_eq!(f.count("/private/open/y"), 1);
    assert_eq!(f.count("/private/x"), 0);
    assert_eq!(f.count("/b.pdf"), 0);
    assert_eq!(
        db.seen(&f.url("/private/x")).unwrap().state,
        SeenState::Filtered(FilterReason::Robots)
    );
    assert_eq!(db.store.counters().unwrap().filtered.named("robots"), 2);
    assert!(f.hits().iter().all(|h| h.user_agent.starts_with("trawl/")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_4xx_allows_everything() {
    let f = Fixture::start(site(Response::status(404))).await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert_eq!(f.count("/private/x"), 1);
    assert_eq!(f.count("/b.pdf"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_5xx_disallows_until_given_up() {
    let f = Fixture::start(site(Response::status(503))).await;
    let db = Db::new();
    let mut s = fast();
    s.robots_max_failures = 3;
    db.crawl(s, &[f.url("/")]).await;
    assert_eq!(f.count("/robots.txt"), 3, "retried, then given up");
    assert_eq!(
        f.page_times().len(),
        0,
        "no page fetched while robots.txt is unreachable"
    );
    assert_eq!(
        db.seen(&f.url("/")).unwrap().state,
        SeenState::Filtered(FilterReason::RobotsUnavailable)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_5xx_then_success_resumes_the_host() {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let f = Fixture::start(move |path: &str| match path {
        "/robots.txt" if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 => {
            Response::status(500)
        }
        "/robots.txt" => Response::text("User-agent: *\nDisallow: /private\n"),
        "/" => page("home", &["/a", "/private/x"]),
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert_eq!(f.count("/robots.txt"), 2);
    assert_eq!(f.count("/a"), 1);
    assert_eq!(f.count("/private/x"), 0);
    let first_page = f.hits().iter().position(|h| h.path == "/").unwrap();
    assert_eq!(
        first_page, 2,
        "pages only after a robots.txt fetch succeeded"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_redirect_is_followed() {
    let f = Fixture::start(|path: &str| match path {
        "/robots.txt" => Response::redirect(301, "/real-robots.txt"),
        "/real-robots.txt" => Response::text("User-agent: *\nDisallow: /private\n"),
        "/" => page("home", &["/a", "/private/x"]),
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert_eq!(f.count("/private/x"), 0);
    assert_eq!(f.count("/a"), 1);
}

fn gaps(times: &[std::time::Instant]) -> Vec<Duration> {
    times.windows(2).map(|w| w[1] - w[0]).collect()
}

// On tokio's paused clock: the waits pass without sleeping.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn politeness_delay_spaces_requests_to_a_host() {
    let f = Fixture::start(|path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => page("home", &["/1", "/2", "/3", "/4"]),
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    let mut s = fast();
    s.delay = Duration::from_millis(250);
    s.concurrency = 16;
    db.crawl(s, &[f.url("/")]).await;
    let times = f.page_times();
    assert_eq!(times.len(), 5);
    for g in gaps(&times) {
        assert!(
            g >= Duration::from_millis(245),
            "gap {g:?} shorter than the delay"
        );
    }
}

// On tokio's paused clock: the waits pass without sleeping.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn crawl_delay_is_honoured_and_capped() {
    let f = Fixture::start(|path: &str| match path {
        "/robots.txt" => Response::text("User-agent: *\nCrawl-delay: 0.3\n"),
        "/" => page("home", &["/1", "/2", "/3"]),
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    for g in gaps(&f.page_times()) {
        assert!(
            g >= Duration::from_millis(295),
            "gap {g:?} shorter than Crawl-delay"
        );
    }

    let f = Fixture::start(|path: &str| match path {
        "/robots.txt" => Response::text("User-agent: *\nCrawl-delay: 3600\n"),
        "/" => page("home", &["/1", "/2"]),
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    let mut s = fast();
    s.max_crawl_delay = Duration::from_millis(200);
    let (h, join) = trawl::crawl::start(db.store.clone(), s, &[f.url("/")]).unwrap();
    tokio::time::timeout(common::PROCESS_LIMIT, join)
        .await
        .expect("crawl ends")
        .unwrap()
        .unwrap();
    let times = f.page_times();
    assert_eq!(times.len(), 3, "the crawl went on at the capped delay");
    for g in gaps(&times) {
        assert!(
            g >= Duration::from_millis(195) && g < Duration::from_secs(5),
            "gap {g:?}"
        );
    }
    let notices = h.take_notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("Crawl-delay 3600") && n.contains("capped")),
        "{notices:?}"
    );
    let host = db
        .store
        .host(trawl::model::normalize(&f.url("/")).unwrap().host_id())
        .unwrap()
        .unwrap();
    assert!(host.crawl_delay_capped);
    assert_eq!(host.crawl_delay_ms, Some(200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_in_flight_per_host_by_default() {
    let active = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let max_seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (a, m) = (active.clone(), max_seen.clone());
    let server = trawl::site::Server::bind(trawl::site::handler(move |req| {
        let (a, m) = (a.clone(), m.clone());
        async move {
            use std::sync::atomic::Ordering::SeqCst;
            let now = a.fetch_add(1, SeqCst) + 1;
            m.fetch_max(now, SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            a.fetch_sub(1, SeqCst);
            if req.path == "/robots.txt" {
                Response::status(404)
            } else {
                let links: Vec<String> = (0..10).map(|i| format!("/{i}")).collect();
                let refs: Vec<&str> = links.iter().map(String::as_str).collect();
                page("p", &refs)
            }
        }
    }))
    .await
    .unwrap();
    let db = Db::new();
    let mut s = fast();
    s.concurrency = 32;
    db.crawl(s, &[server.url("/")]).await;
    assert_eq!(db.store.counters().unwrap().fetched, 11);
    assert_eq!(max_seen.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// `path` answered 429 with `Retry-After: 1` once, and was asked again
/// no sooner.
fn assert_asked_again_after_retry_after(f: &Fixture, path: &str) {
    let asked: Vec<_> = f
        .hits()
        .into_iter()
        .filter(|h| h.path == path)
        .map(|h| h.at)
        .collect();
    assert_eq!(asked.len(), 2, "{path}");
    assert!(
        asked[1] - asked[0] >= Duration::from_millis(990),
        "{path}: Retry-After: 1 honoured after {:?}",
        asked[1] - asked[0]
    );
}

// On tokio's paused clock: the waits pass without sleeping.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn too_many_requests_backs_off_with_retry_after() {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let f = Fixture::start(move |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => page("home", &["/busy"]),
        "/busy" if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 => {
            Response::status(429).header("retry-after", "1")
        }
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert_asked_again_after_retry_after(&f, "/busy");
    assert_eq!(db.page(&f.url("/busy")).unwrap().status, 200);

    // A server that always answers 503 gets max_attempts tries, then the answer is stored.
    let f = Fixture::start(|path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => page("home", &["/down"]),
        _ => Response::status(503),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert_eq!(f.count("/down"), 3);
    assert_eq!(db.page(&f.url("/down")).unwrap().status, 503);
}

/// Pages fetched alongside the one answered 429 commit after it, and the
/// host may already be waiting for its next dispatch: neither may cut the
/// back-off short.
// On tokio's paused clock: the waits pass without sleeping.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_back_off_holds_while_other_pages_of_the_host_finish() {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let slow: Vec<String> = (0..8).map(|i| format!("/slow-{i}")).collect();
    let links: Vec<&str> = std::iter::once("/busy")
        .chain(slow.iter().map(String::as_str))
        .collect();
    let home = page("home", &links);
    let f = Fixture::start(move |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => home.clone(),
        "/busy" if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 => {
            Response::status(429).header("retry-after", "1")
        }
        p if p.starts_with("/slow-") => page(p, &[]).delayed(Duration::from_millis(300)),
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    // The host waits in the ready heap for a free slot (concurrency 2)
    // when the 429 comes back.
    let mut s = fast();
    s.per_host = 16;
    s.concurrency = 2;
    db.crawl(s, &[f.url("/")]).await;
    assert_asked_again_after_retry_after(&f, "/busy");
    assert_eq!(f.count("/slow-7"), 1);
}

/// A large robots.txt (hosts may send up to 500 KiB) is stored once, in
/// the `robots` column family, not with every page's rewrite of the host's
/// row; a second run reads it back instead of fetching it again; and a
/// host row of schema 5, with the record inside, is moved on its first
/// write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_robots_txt_is_stored_once_apart_from_the_host_row() {
    use trawl::model::{RobotsOutcome, RobotsRecord};
    use trawl::schema::{CF_HOSTS, CF_ROBOTS, HostRecord};

    let mut robots = String::from("User-agent: *\nDisallow: /private\n");
    while robots.len() < 300_000 {
        robots.push_str("# a comment line that makes this robots.txt large\n");
    }
    let links: Vec<String> = (0..20).map(|i| format!("/p{i}")).collect();
    let body = robots.clone();
    let f = Fixture::start(move |path: &str| match path {
        "/robots.txt" => Response::text(body.clone()),
        "/" => {
            let mut l: Vec<&str> = links.iter().map(|s| s.as_str()).collect();
            l.push("/private/x");
            page("home", &l)
        }
        "/again" => page("again", &["/private/y"]),
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert_eq!(f.count("/robots.txt"), 1);
    assert_eq!(f.count("/p19"), 1);
    assert_eq!(f.count("/private/x"), 0);

    let host = trawl::model::normalize(&f.url("/")).unwrap().host_id();
    let row = db
        .store
        .get_raw(CF_HOSTS, &host.to_bytes())
        .unwrap()
        .unwrap();
    assert!(row.len() < 200, "host row of {} bytes", row.len());
    let stored: RobotsRecord = db.store.get(CF_ROBOTS, &host.to_bytes()).unwrap().unwrap();
    assert_eq!(stored.body, robots.as_bytes());
    let joined = db.store.host(host).unwrap().unwrap();
    assert_eq!(
        joined.robots.as_ref().map(|r| r.body.len()),
        Some(robots.len())
    );
    assert_eq!(joined.fetched, 21, "/ and its 20 pages");

    // A second run on the same db obeys the stored file without a refetch.
    db.crawl(fast(), &[f.url("/again")]).await;
    assert_eq!(f.count("/again"), 1);
    assert_eq!(f.count("/private/y"), 0);
    assert_eq!(f.count("/robots.txt"), 1, "read back, not fetched again");

    // A schema-5 host row: the record inside it, nothing in `robots`.
    let old_db = Db::new();
    let g = Fixture::start(|path: &str| match path {
        "/robots.txt" => Response::text("User-agent: *\nAllow: /\n"),
        "/" => page("home", &["/private/z", "/ok"]),
        p => page(p, &[]),
    })
    .await;
    let host = trawl::model::normalize(&g.url("/")).unwrap().host_id();
    let now = trawl::model::now_ms();
    let old = HostRecord {
        origin: g.url("/").trim_end_matches('/').to_string(),
        robots: Some(RobotsRecord {
            outcome: RobotsOutcome::Fetched { status: 200 },
            body: b"User-agent: *\nDisallow: /private\n".to_vec(),
            fetched_ms: now,
            expires_ms: now + 3_600_000,
            failures: 0,
        }),
        ..HostRecord::default()
    };
    let mut b = old_db.store.batch();
    b.put(CF_HOSTS, &host.to_bytes(), &old);
    b.write().unwrap();
    old_db.crawl(fast(), &[g.url("/")]).await;
    assert_eq!(g.count("/robots.txt"), 0, "the stored record still applies");
    assert_eq!(g.count("/private/z"), 0);
    assert_eq!(g.count("/ok"), 1);
    let row: HostRecord = old_db
        .store
        .get(CF_HOSTS, &host.to_bytes())
        .unwrap()
        .unwrap();
    assert!(row.robots.is_none(), "moved out of the host row");
    let moved: RobotsRecord = old_db
        .store
        .get(CF_ROBOTS, &host.to_bytes())
        .unwrap()
        .unwrap();
    assert_eq!(moved.body, b"User-agent: *\nDisallow: /private\n");
}

/// A host's stored next fetch time far in the future (a clock that went
/// back, a db from another machine) holds it no longer than the longest
/// wait trawl itself would set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_next_fetch_past_any_wait_does_not_hold_a_resumed_host() {
    use trawl::schema::{CF_HOSTS, HostRecord, Versioned};
    let f = Fixture::start(site(Response::status(404))).await;
    let db = Db::new();
    let mut s = fast();
    s.max_pages = Some(1);
    db.crawl(s, &[f.url("/")]).await;
    let rows: Vec<_> = db.store.scan(CF_HOSTS, &[]).map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 1);
    let mut b = db.store.batch();
    for (k, v) in rows {
        let mut rec = HostRecord::decode(&v).unwrap();
        rec.next_fetch_ms = trawl::model::now_ms() + 86_400_000;
        b.put(CF_HOSTS, &k, &rec);
    }
    b.write().unwrap();
    let mut s = fast();
    s.max_backoff = Duration::from_secs(1);
    // Db::crawl fails the test if the crawl is not over within 60 s.
    db.crawl(s, &[f.url("/")]).await;
    assert_eq!(f.count("/a"), 1);
}
