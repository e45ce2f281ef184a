//! Politeness and back-off on tokio's paused clock: the crawl's clock is
//! tokio time, so delays of minutes pass at once, and the waits are read
//! from the times the crawl stored (on that same clock), not from sleeps.

use std::time::Duration;

use crate::common::{Db, Fixture, fast, page};
use trawl::settings::CrawlSettings;
use trawl::site::Response;

/// Crawls on the paused clock; returns the virtual time it took.
async fn crawl(db: &Db, s: CrawlSettings, seed: &str) -> Duration {
    let started = tokio::time::Instant::now();
    let (_h, join) = trawl::crawl::start(db.store.clone(), s, &[seed.to_string()]).unwrap();
    // Virtual time: a day of it passes in moments if the crawl hangs.
    tokio::time::timeout(Duration::from_secs(86_400), join)
        .await
        .expect("the crawl ends")
        .unwrap()
        .unwrap();
    started.elapsed()
}

/// When each of `paths` was fetched, on the crawl's clock (ms).
fn fetched_ms(db: &Db, f: &Fixture, paths: &[&str]) -> Vec<u64> {
    paths
        .iter()
        .map(|p| {
            db.page(&f.url(p))
                .unwrap_or_else(|| panic!("{p} not stored: {:?}", db.seen(&f.url(p))))
                .fetched_ms
        })
        .collect()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_twenty_second_delay_spaces_fetches_without_sleeping() {
    let f = Fixture::start(|path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => page("home", &["/a"]),
        "/a" => page("a", &["/b"]),
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    // (Under the 30 s the fixture server and the client keep an idle
    // connection: on the paused clock both would end it at one instant.)
    let s = CrawlSettings {
        delay: Duration::from_secs(20),
        ..fast()
    };
    let took = crawl(&db, s, &f.url("/")).await;
    let at = fetched_ms(&db, &f, &["/", "/a", "/b"]);
    for w in at.windows(2) {
        assert!(w[1] - w[0] >= 20_000, "fetched {} ms apart", w[1] - w[0]);
    }
    assert!(took >= Duration::from_secs(40), "{took:?}");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_retry_after_of_two_minutes_holds_the_host() {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let f = Fixture::start(move |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => page("home", &["/busy"]),
        "/busy" if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 => {
            Response::status(429).header("retry-after", "120")
        }
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    let s = CrawlSettings {
        max_backoff: Duration::from_secs(600),
        ..fast()
    };
    let took = crawl(&db, s, &f.url("/")).await;
    assert_eq!(f.count("/busy"), 2);
    assert_eq!(db.page(&f.url("/busy")).unwrap().status, 200);
    let at = fetched_ms(&db, &f, &["/", "/busy"]);
    assert!(
        at[1] - at[0] >= 120_000,
        "asked again after {} ms",
        at[1] - at[0]
    );
    assert!(took >= Duration::from_secs(120), "{took:?}");
}
