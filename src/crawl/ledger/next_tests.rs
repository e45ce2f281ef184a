//! `next_for` and `robots_answered` on an offline ledger over a real
//! RocksDB in a temp dir: what a host taken from the ready heap does next,
//! step by step, with the numbers the politeness rule gives.

use std::sync::Arc;

use super::{Ask, Ledger, Next};
use crate::fetch::RobotsFetch;
use crate::model::{self, FilterReason, HostId, RobotsOutcome, SeenState};
use crate::settings::CrawlSettings;
use crate::store::Store;

struct Host {
    _dir: tempfile::TempDir,
    store: Arc<Store>,
    ledger: Ledger,
    id: HostId,
}

fn host(seeds: &[&str], delay_ms: u64) -> Host {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path()).unwrap());
    let settings = CrawlSettings {
        delay: std::time::Duration::from_millis(delay_ms),
        ..CrawlSettings::default()
    };
    let mut ledger = Ledger::offline(store.clone(), settings).unwrap();
    let seeds: Vec<_> = seeds.iter().map(|s| model::normalize(s).unwrap()).collect();
    ledger.add_seeds(&seeds).unwrap();
    let id = seeds[0].host_id();
    Host {
        _dir: dir,
        store,
        ledger,
        id,
    }
}

fn ask(now: u64) -> Ask {
    Ask {
        now,
        per_host: 1,
        others_wait: false,
        robots_in_flight: false,
    }
}

fn robots(outcome: RobotsOutcome, body: &str) -> RobotsFetch {
    RobotsFetch {
        outcome,
        body: body.as_bytes().to_vec(),
        redirects: Vec::new(),
        blocked: None,
        hops: Vec::new(),
    }
}

const DENY_PRIVATE: &str = "User-agent: *\nDisallow: /private\n";

#[test]
fn a_new_host_fetches_its_robots_txt_first_then_its_pages_a_delay_apart() {
    let mut h = host(&["http://a.test/"], 250);
    let now = h.ledger.clock().now_ms();
    match h.ledger.next_for(h.id, ask(now)).unwrap() {
        Next::Robots { origin, seed } => {
            assert_eq!(origin, "http://a.test");
            assert!(
                seed.is_some(),
                "a seed host's robots.txt takes the guard along"
            );
        }
        _ => panic!("robots.txt first"),
    }
    // While it is in flight, the host waits.
    let busy = Ask {
        robots_in_flight: true,
        ..ask(now)
    };
    assert!(matches!(h.ledger.next_for(h.id, busy).unwrap(), Next::Idle));
    let fetched = robots(RobotsOutcome::Fetched { status: 200 }, DENY_PRIVATE);
    let after = h.ledger.robots_answered(h.id, fetched).unwrap().unwrap();
    assert!(after.answered);
    let fetched_ms = after.at_ms - 251;
    assert!(
        fetched_ms >= now,
        "next fetch is the delay + 1 ms after the answer"
    );
    match h.ledger.next_for(h.id, ask(after.at_ms)).unwrap() {
        Next::Page { job, again } => {
            assert_eq!(job.url.as_str(), "http://a.test/");
            // per_host 1: no second page while this one is in flight.
            assert_eq!(again, None);
        }
        _ => panic!("the seed page next"),
    }
    assert!(matches!(
        h.ledger.next_for(h.id, ask(after.at_ms)).unwrap(),
        Next::Idle
    ));
}

#[test]
fn a_url_robots_txt_forbids_is_recorded_and_the_host_asked_again_now() {
    let mut h = host(&["http://a.test/private/x"], 0);
    let answered = robots(RobotsOutcome::Fetched { status: 200 }, DENY_PRIVATE);
    let after = h.ledger.robots_answered(h.id, answered).unwrap().unwrap();
    let next = h.ledger.next_for(h.id, ask(after.at_ms)).unwrap();
    assert!(matches!(next, Next::Hold(at) if at == after.at_ms));
    let id = model::normalize("http://a.test/private/x").unwrap().id();
    let seen = h.store.seen(id).unwrap().unwrap();
    assert_eq!(seen.state, SeenState::Filtered(FilterReason::Robots));
    // Nothing queued any more: the host is not scheduled again.
    assert!(h.ledger.host_view(h.id).unwrap().idle);
}

#[test]
fn an_unreachable_robots_txt_holds_the_host_until_it_expires() {
    let mut h = host(&["http://a.test/"], 0);
    let now = h.ledger.clock().now_ms();
    let detail = "connection refused".to_string();
    let failed = robots(RobotsOutcome::Unreachable { detail }, "");
    let after = h.ledger.robots_answered(h.id, failed).unwrap().unwrap();
    assert!(!after.answered, "an unreachable host gets no warm lane");
    // The first retry waits `crawl.robots_retry`, 30 s (`Politeness::robots_wait_ms`).
    assert!(after.at_ms >= now + 30_000 && after.at_ms < now + 31_000);
    // Asked before the retry is due, the host is held until it is.
    match h.ledger.next_for(h.id, ask(now)).unwrap() {
        Next::Hold(at) => assert_eq!(at, after.at_ms),
        _ => panic!("held until the retry"),
    }
}

#[test]
fn a_host_at_its_per_host_limit_waits_and_below_it_comes_back_a_delay_later() {
    let mut h = host(
        &["http://a.test/", "http://a.test/b", "http://a.test/c"],
        100,
    );
    let allow = robots(RobotsOutcome::Unavailable { status: 404 }, "");
    let after = h.ledger.robots_answered(h.id, allow).unwrap().unwrap();
    let two = Ask {
        per_host: 2,
        ..ask(after.at_ms)
    };
    match h.ledger.next_for(h.id, two).unwrap() {
        // One in flight of two, more queued: ready again a delay later.
        Next::Page { again, .. } => assert_eq!(again, Some(after.at_ms + 101)),
        _ => panic!("a page"),
    }
    assert!(matches!(
        h.ledger.next_for(h.id, two).unwrap(),
        Next::Page { .. }
    ));
    assert!(matches!(h.ledger.next_for(h.id, two).unwrap(), Next::Idle));
}
