//! No page can kill the crawl: a panic while processing one page is that
//! URL's failure and its host goes on; a page that kills the process (an
//! abort, a stack overflow, a SIGKILL as the out-of-memory killer sends)
//! makes the supervisor start the crawl again, and twice in a row it is
//! skipped as a crash loop, so one `trawl crawl` ends by itself. Pages die
//! through the binary's test-only crash hook (`TRAWL_TEST_CRASH_HOOK=1`),
//! the way a bug in a library would.

use crate::common;

use std::sync::Arc;

use common::{Fixture, id, trawl_cmd, why};
use trawl::model::{FailReason, SeenState};
use trawl::site::Response;
use trawl::store::Store;

/// Pages `/0`..`/9`, `/` linking them all; `marked` pages carry the hook's
/// marker for `what` (and `/big-marked` is over 512 KiB, so it is processed
/// off the reactor).
fn site(what: &'static str) -> impl Fn(&str) -> Response + Send + Sync + 'static {
    move |p: &str| match p {
        "/robots.txt" => Response::status(404),
        "/" => {
            let mut links: Vec<String> = (0..10).map(|i| format!("/{i}")).collect();
            links.push("/marked".into());
            links.push("/big-marked".into());
            common::page(
                "home",
                &links.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        }
        "/marked" => Response::html(format!("<p>trawl-test-crash:{what}</p>")),
        "/big-marked" => Response::html(format!(
            "<p>{}</p><p>trawl-test-crash:{what}</p>",
            "filler ".repeat(100_000)
        )),
        p => common::page(&format!("page {p}"), &[]),
    }
}

fn crawl_cmd(db: &std::path::Path, seed: &str) -> std::process::Command {
    let mut c = trawl_cmd(&["crawl", "--db", db.to_str().unwrap(), "--seed", seed]);
    c.args(["--delay-ms", "0", "--concurrency", "1", "--per-host", "1"])
        .env("TRAWL_TEST_CRASH_HOOK", "1");
    c
}

/// A crawl that must end by itself, with success.
async fn crawl_to_the_end(db: &std::path::Path, seed: String) {
    common::run_ok(crawl_cmd(db, &seed)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_while_processing_a_page_fails_that_url_only() {
    let f = Fixture::start(site("panic")).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    crawl_to_the_end(&db, f.url("/")).await;
    let store = Arc::new(Store::open(&db).unwrap());
    for p in ["/marked", "/big-marked"] {
        let url = f.url(p);
        assert_eq!(
            store.seen(id(&url)).unwrap().unwrap().state,
            SeenState::Failed(FailReason::Internal),
            "{p}"
        );
        let text = why(&store, &url).await;
        assert!(text.contains("panicked: crash hook: panic"), "{text}");
    }
    // The host was not stranded: every other page of it was fetched.
    for i in 0..10 {
        assert_eq!(f.count(&format!("/{i}")), 1, "/{i}");
    }
    assert!(trawl::crawl::audit(&store).unwrap().is_empty());
}

/// One supervised `trawl crawl` to its end; returns how many times its
/// process died and was started again.
async fn crawl_through_deaths(what: &'static str) -> (Fixture, tempfile::TempDir, usize) {
    let f = Fixture::start(site(what)).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (d, seed) = (db.clone(), f.url("/"));
    let out = tokio::task::spawn_blocking(move || common::output_within(crawl_cmd(&d, &seed)))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the crawl ends by itself: {text}");
    assert!(text.contains("crash loop"), "the skip is reported: {text}");
    let deaths = text.matches("the crawl process died").count();
    assert_eq!(
        text.matches("crawl resumed").count(),
        deaths,
        "each death is a resume: {text}"
    );
    (f, dir, deaths)
}

async fn check_crash_loop(what: &'static str) {
    let (f, dir, deaths) = crawl_through_deaths(what).await;
    // /marked dies twice and is skipped; then /big-marked dies twice.
    assert_eq!(deaths, 4, "two deaths a page");
    let store = Arc::new(Store::open(&dir.path().join("db")).unwrap());
    for p in ["/marked", "/big-marked"] {
        let url = f.url(p);
        assert_eq!(
            store.seen(id(&url)).unwrap().unwrap().state,
            SeenState::Failed(FailReason::CrashLoop),
            "{p}"
        );
        let text = why(&store, &url).await;
        assert!(
            text.contains("crash loop") && text.contains("died 2 times"),
            "{text}"
        );
        assert_eq!(f.count(p), 2, "{p} fetched by the two runs that died");
    }
    for i in 0..10 {
        assert!(f.count(&format!("/{i}")) >= 1, "/{i}");
    }
    let problems = trawl::crawl::audit(&store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_aborts_the_process_twice_is_skipped_as_a_crash_loop() {
    check_crash_loop("abort").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_overflows_the_stack_twice_is_skipped_as_a_crash_loop() {
    check_crash_loop("overflow").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_processing_gets_the_process_killed_twice_is_skipped() {
    // As an out-of-memory kill: SIGKILL, nothing runs after it.
    check_crash_loop("kill").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupervised_each_run_dies_and_the_next_skips_the_loop() {
    // --max-restarts 0: the process is the crawl, as before the supervisor.
    let f = Fixture::start(site("abort")).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut deaths = 0;
    loop {
        let (d, seed) = (db.clone(), f.url("/"));
        let out = tokio::task::spawn_blocking(move || {
            let mut cmd = crawl_cmd(&d, &seed);
            cmd.args(["--max-restarts", "0"]);
            common::output_within(cmd)
        })
        .await
        .unwrap();
        if out.status.success() {
            break;
        }
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{out:?}");
        deaths += 1;
        assert!(deaths <= 4, "still dying after {deaths} runs");
        if deaths == 1 {
            // The home page's in-links died in the crawl's window: they are
            // read from its links row, and the next run writes them.
            let store = Store::open(&db).unwrap();
            let window = store.inlink_window().unwrap();
            assert_eq!(store.waiting_pages(window).unwrap(), vec![id(&f.url("/"))]);
            assert_eq!(
                store.inlinks_to(id(&f.url("/3"))).unwrap(),
                vec![id(&f.url("/"))]
            );
            // The page the process died on is still marked in flight.
            let problems = trawl::crawl::audit(&store).unwrap();
            assert!(
                problems
                    .iter()
                    .all(|p| p.ends_with("still marked in flight")),
                "{problems:#?}"
            );
        }
    }
    assert_eq!(deaths, 4);
    let store = Store::open(&db).unwrap();
    let window = store.inlink_window().unwrap();
    assert!(window > 0, "the window was written");
    assert_eq!(store.waiting_pages(window).unwrap(), vec![]);
    assert_eq!(
        store.inlinks_to(id(&f.url("/3"))).unwrap(),
        vec![id(&f.url("/"))]
    );
    assert_eq!(trawl::crawl::audit(&store).unwrap(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_restarts_the_supervisor_stops_with_one_line() {
    let f = Fixture::start(site("abort")).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (d, seed) = (db.clone(), f.url("/"));
    let out = tokio::task::spawn_blocking(move || {
        let mut cmd = crawl_cmd(&d, &seed);
        cmd.args(["--max-restarts", "2"]);
        common::output_within(cmd)
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert_eq!(text.matches("restarting it").count(), 2, "{text}");
    let last = text.lines().last().unwrap_or("");
    assert!(
        last.starts_with(
            "trawl: error: the crawl process died 3 times in 10 min (last killed by SIGABRT"
        ) && last.contains("Run the same command to resume"),
        "{last}"
    );
    // What the deaths left resumes: the next run skips both pages and ends.
    let (d, seed) = (db.clone(), f.url("/"));
    let out = tokio::task::spawn_blocking(move || common::output_within(crawl_cmd(&d, &seed)))
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspect_no_longer_queued_is_forgotten() {
    use trawl::schema::{CF_INFLIGHT, FrontierKey, InFlightRecord};
    let f = Fixture::start(site("none")).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    // A suspect left by an earlier death whose URL has since left the
    // frontier (a refilter dropped it): nothing is left to judge.
    {
        let store = Store::open(&db).unwrap();
        let gone = id(&f.url("/gone"));
        let key = FrontierKey {
            host: trawl::model::HostId::of("127.0.0.1:1"),
            priority: 0,
            url: gone,
        };
        let suspect = InFlightRecord {
            frontier_key: key.to_key().to_vec(),
            deaths: 1,
            in_flight: false,
        };
        let mut b = store.batch();
        b.put(CF_INFLIGHT, &gone.to_bytes(), &suspect);
        b.write().unwrap();
    }
    crawl_to_the_end(&db, f.url("/")).await;
    let store = Store::open(&db).unwrap();
    assert_eq!(store.scan(CF_INFLIGHT, &[]).count(), 0);
}

#[test]
fn quitting_clears_marks_but_keeps_suspects() {
    use trawl::schema::{CF_INFLIGHT, InFlightRecord, Versioned};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    let rows = [
        ("/fresh", 0, true),
        ("/suspect-marked", 1, true),
        ("/suspect-waiting", 1, false),
    ];
    let mut b = store.batch();
    for (p, deaths, in_flight) in rows {
        let rec = InFlightRecord {
            frontier_key: vec![0; 32],
            deaths,
            in_flight,
        };
        b.put(
            CF_INFLIGHT,
            &id(&format!("http://a.test{p}")).to_bytes(),
            &rec,
        );
    }
    b.write().unwrap();
    // A second Ctrl-C, or an engine error: quitting is not a crash.
    trawl::crawl::forget_in_flight(&store).unwrap();
    let left = |p: &str| {
        store
            .get_raw(CF_INFLIGHT, &id(&format!("http://a.test{p}")).to_bytes())
            .unwrap()
            .map(|v| InFlightRecord::decode(&v).unwrap())
    };
    assert!(left("/fresh").is_none());
    for p in ["/suspect-marked", "/suspect-waiting"] {
        let rec = left(p).unwrap_or_else(|| panic!("{p} kept"));
        assert_eq!((rec.deaths, rec.in_flight), (1, false), "{p}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_crawl_dies_goes_on_from_its_line() {
    let f = Fixture::start(site("abort")).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let job = dir.path().join("job.crawlrc");
    std::fs::write(
        &job,
        format!(
            "seed add {}\nset crawl.delay 0ms\nset crawl.concurrency 1\ncrawl start\ncrawl wait\nstatus\n",
            f.url("/")
        ),
    )
    .unwrap();
    let mut cmd = trawl_cmd(&["run", job.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    cmd.env("TRAWL_TEST_CRASH_HOOK", "1")
        .current_dir(dir.path());
    let out = tokio::task::spawn_blocking(move || common::output_within(cmd))
        .await
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("the batch process died").count(),
        4,
        "{stderr}"
    );
    // Each line ran once to its end; the wait ran again after each death.
    assert_eq!(stdout.matches("> seed add").count(), 1, "{stdout}");
    assert_eq!(stdout.matches("> crawl start").count(), 1, "{stdout}");
    assert_eq!(stdout.matches("> status").count(), 1, "{stdout}");
    assert!(stdout.matches("> crawl wait").count() >= 2, "{stdout}");
    let store = Arc::new(Store::open(&db).unwrap());
    for i in 0..10 {
        let url = f.url(&format!("/{i}"));
        assert_eq!(
            store.seen(id(&url)).unwrap().unwrap().state,
            SeenState::Fetched { status: 200 },
            "{url}"
        );
    }
    assert_eq!(
        store.seen(id(&f.url("/marked"))).unwrap().unwrap().state,
        SeenState::Failed(FailReason::CrashLoop)
    );
    assert!(trawl::crawl::audit(&store).unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_whose_crawl_dies_stays_up_with_the_crawl_resumed() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    let f = Fixture::start(site("overflow")).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut child = trawl_cmd(&["shell", db.to_str().unwrap()])
        .env("TRAWL_TEST_CRASH_HOOK", "1")
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "seed add {}\nset crawl.delay 0ms\nset crawl.concurrency 1\ncrawl start",
        f.url("/")
    )
    .unwrap();
    stdin.flush().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    // Both marked pages die twice: four restarts, each with the crawl.
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while seen
        .iter()
        .filter(|l: &&String| l.contains("the shell process died"))
        .count()
        < 4
    {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => seen.push(l),
            Err(_) => {
                let _ = child.kill();
                panic!("no fourth restart: {seen:#?}");
            }
        }
    }
    assert!(
        seen.iter()
            .all(|l| !l.contains("died") || l.contains("crawl resumed")),
        "{seen:#?}"
    );
    // The restarted shell reads on: it waits for the resumed crawl.
    writeln!(stdin, "crawl wait\nstatus\nquit").unwrap();
    drop(stdin);
    let out = common::output_of(child);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("fetched     11"), "{text}");
    let store = Store::open(&db).unwrap();
    for p in ["/marked", "/big-marked"] {
        assert_eq!(
            store.seen(id(&f.url(p))).unwrap().unwrap().state,
            SeenState::Failed(FailReason::CrashLoop),
            "{p}"
        );
    }
}
