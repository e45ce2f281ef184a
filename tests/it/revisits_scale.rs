//! What revisits cost the scheduler's task as the collection grows
//! (issue 36), shown as bounds rather than times: the deletions a due
//! scan passes over (RocksDB's own count, on the test's thread, which runs
//! the crawl), the `visits` rows `status` reads, and the pages a change
//! of policy retimes in one loop turn. On tokio's paused clock.

use std::time::Duration;

use rocksdb::perf::{PerfContext, PerfMetric, PerfStatsLevel, set_perf_stats};

use super::revisits::{HOUR, Site, crawl_with, html, links};
use crate::common::{self, Db, fast};
use trawl::crawl::revisit::{FRESH_SAMPLE, RETIME_CHUNK};
use trawl::schema::tables::{Due, RecrawlRow};
use trawl::settings::{CrawlSettings, RecrawlMode, RecrawlSettings};
use trawl::site::Response;

fn audit_clean(db: &Db) {
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
}

fn uniform(every: Duration) -> RecrawlSettings {
    RecrawlSettings {
        mode: RecrawlMode::Uniform,
        every,
        ..RecrawlSettings::default()
    }
}

/// `/` links `/p0`…; each page links nothing and never changes.
fn flat(n: usize) -> impl Fn(&str, u64, &trawl::site::Request) -> Response {
    move |path, _, _| match path {
        "/robots.txt" => Response::status(404),
        "/" => {
            let all: Vec<String> = (0..n).map(|i| format!("/p{i}")).collect();
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            html("home", &links(&all))
        }
        p => html(p, "a page that stays the same"),
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_due_scan_does_not_pass_over_the_revisits_queued_before() {
    // 200 pages fetched 10 s apart, so each falls due on its own: 800
    // revisits over four hours, each a loop turn that queues due rows.
    let site = Site::start(flat(200)).await;
    let db = Db::new();
    let mut s = CrawlSettings {
        recrawl: uniform(Duration::from_secs(3600)),
        ..fast()
    };
    s.delay = Duration::from_secs(10);
    set_perf_stats(PerfStatsLevel::EnableCount);
    let mut perf = PerfContext::default();
    perf.reset();
    crawl_with(&db, s, &site.url("/"), Duration::from_secs(4 * 3600 + 2400)).await;
    let skipped = perf.metric(PerfMetric::InternalDeleteSkippedCount);
    set_perf_stats(PerfStatsLevel::Disable);
    let c = db.store.counters().unwrap();
    assert!(c.revisits >= 800, "{c:?}");
    // Scanning from the first key, each turn passed over every due row
    // deleted before it (twice): some 640,000 here, growing as the
    // square of the revisits. Each deletion is passed over at most once.
    eprintln!("{} revisits, {skipped} deletions passed over", c.revisits);
    assert!(skipped <= 2 * c.revisits, "{skipped} for {}", c.revisits);
    audit_clean(&db);
}

/// `/` links 25 sections of 100 pages each.
fn sections(path: &str, _: u64, _: &trawl::site::Request) -> Response {
    if path == "/robots.txt" {
        return Response::status(404);
    }
    if path == "/" {
        let all: Vec<String> = (0..25).map(|k| format!("/s{k}/")).collect();
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        return html("home", &links(&all));
    }
    if path.ends_with('/') {
        let all: Vec<String> = (0..100).map(|i| format!("{path}{i}")).collect();
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        return html("section", &links(&all));
    }
    html(path, "a page that stays the same")
}

/// The rows the iterators of `cmd` stepped over (RocksDB's
/// `iter_next_count`), run in a shell on `db`.
async fn iterated(db: &Db, cmd: &'static str) -> (u64, String) {
    let store = db.store.clone();
    let (report, out) = common::with_shell(store, move |sh| {
        set_perf_stats(PerfStatsLevel::EnableCount);
        let mut perf = PerfContext::default();
        perf.reset();
        sh.execute(cmd).unwrap();
        let report = perf.report(true);
        set_perf_stats(PerfStatsLevel::Disable);
        report
    })
    .await;
    let nexts = report
        .split(", ")
        .find_map(|m| m.trim().strip_prefix("iter_next_count = "))
        .map_or(0, |n| n.parse().unwrap());
    (nexts, out)
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn status_samples_the_visits_and_a_new_policy_is_timed_a_chunk_a_turn() {
    let site = Site::start(sections).await;
    let db = Db::new();
    let s = CrawlSettings {
        recrawl: uniform(Duration::from_secs(24 * 3600)),
        ..fast()
    };
    crawl_with(&db, s.clone(), &site.url("/"), Duration::from_secs(600)).await;
    let pages = db.store.counters().unwrap().fetched;
    assert_eq!(pages, 1 + 25 + 2500);

    // status reads a sample of the visits rows; recrawl all of them.
    let (status_rows, out) = iterated(&db, "status").await;
    assert_eq!(FRESH_SAMPLE, 1024);
    assert!(
        out.contains("estimated from a sample of 1,024 pages"),
        "{out}"
    );
    assert!(status_rows <= FRESH_SAMPLE as u64 + 8, "{status_rows} rows");
    let (recrawl_rows, out) = iterated(&db, "recrawl").await;
    assert!(out.contains("of 2,526 pages (estimated)"), "{out}");
    assert!(recrawl_rows >= pages, "{recrawl_rows} rows");

    // Another policy while the crawl runs: the pages are timed a chunk a
    // loop turn, the crawl going on between.
    let (h, join) = trawl::crawl::start(db.store.clone(), s.clone(), &[site.url("/")]).unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    h.set_settings(CrawlSettings {
        recrawl: uniform(Duration::from_secs(3600)),
        ..s
    });
    let mut seen = Vec::new();
    for _ in 0..10_000 {
        tokio::task::yield_now().await;
        let state = db.store.meta::<RecrawlRow>().unwrap().unwrap();
        if seen.last() != Some(&state.timed) {
            seen.push(state.timed);
        }
        if state.fingerprint.starts_with("uniform 3600000") && state.next.is_none() {
            break;
        }
    }
    h.stop();
    join.await.unwrap().unwrap();
    assert_eq!(seen.last(), Some(&pages), "{seen:?}");
    assert!(seen.len() >= 3, "timed in steps: {seen:?}");
    assert!(
        seen.windows(2).all(|w| w[1] - w[0] <= RETIME_CHUNK as u64),
        "{seen:?}"
    );
    // Every page is due within the new policy's hour.
    let now = trawl::model::now_ms();
    for row in db.store.rows::<Due>(&[]) {
        let (key, _) = row.unwrap();
        assert!(key.at_ms < now + 2 * HOUR, "{key:?}");
    }
    audit_clean(&db);
}
