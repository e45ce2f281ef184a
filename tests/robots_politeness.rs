//! robots.txt semantics and politeness, measured from the server's side.

mod common;

use std::time::Duration;

use common::{Db, Fixture, fast, page};
use trawl::schema::{FilterReason, SeenState};
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
    assert_eq!(
        db.store.counters().unwrap().filtered.get("robots"),
        Some(&2)
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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
    join.await.unwrap().unwrap();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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
    let busy: Vec<_> = f
        .hits()
        .into_iter()
        .filter(|h| h.path == "/busy")
        .map(|h| h.at)
        .collect();
    assert_eq!(busy.len(), 2);
    assert!(
        busy[1] - busy[0] >= Duration::from_millis(990),
        "Retry-After honoured: {:?}",
        busy[1] - busy[0]
    );
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
