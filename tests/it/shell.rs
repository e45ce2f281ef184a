//! The shell in-process and through the binary: batches end to end against
//! a fixture site, live `set` during a crawl, Ctrl-C on a wait, piped
//! stdin, `.crawlrc`, and read-only attach beside a running `trawl crawl`.

use crate::common;
use crate::common::BoundedOutput;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Fixture, page};
use trawl::shell::Shell;
use trawl::site::Response;
use trawl::store::Store;

/// Output captured from an in-process shell.
#[derive(Clone, Default)]
pub(crate) struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buf {
    pub(crate) fn take(&self) -> String {
        String::from_utf8(std::mem::take(&mut *self.0.lock().unwrap())).unwrap()
    }
}

/// A small site: `/` links to ten pages; pages 3 and 7 are 404s; `/private` is disallowed.
fn site(path: &str) -> Response {
    match path {
        "/robots.txt" => Response::text("User-agent: *\nDisallow: /private\n"),
        "/" => {
            let mut links: Vec<String> = (0..10).map(|i| format!("/p/{i}")).collect();
            links.push("/private/x".into());
            page(
                "home",
                &links.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        }
        "/p/3" | "/p/7" => Response::status(404),
        p => page(&format!("研究生 page {p}"), &[]),
    }
}

pub(crate) fn shell(store: Arc<Store>, rt: &tokio::runtime::Runtime) -> (Shell, Buf) {
    let buf = Buf::default();
    (
        Shell::new(store, rt.handle().clone(), Box::new(buf.clone()), 0),
        buf,
    )
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn in_process_session_queries_a_finished_crawl() {
    let rt = runtime();
    let f = rt.block_on(Fixture::start(site));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&dir.path().join("db")).unwrap());
    let (mut sh, out) = shell(store.clone(), &rt);
    let root = f.url("/");
    for cmd in [
        "set crawl.delay 0",
        &format!("seed add {root}"),
        "crawl start",
        // Bounded, so a crawl that never ends fails the test.
        "crawl wait --secs 180",
    ] {
        sh.execute(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    let text = out.take();
    assert!(text.contains("crawl finished: 11 pages fetched"), "{text}");

    sh.execute("status --json").unwrap();
    let status: serde_json::Value = serde_json::from_str(&out.take()).unwrap();
    assert_eq!(status["fetched"], 11);
    assert_eq!(status["filtered"]["robots"], 1);
    assert_eq!(status["state"], "idle");

    sh.execute("pages where status = 404 order by url --json")
        .unwrap();
    let rows: serde_json::Value = serde_json::from_str(&out.take()).unwrap();
    let urls: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, vec![f.url("/p/3").as_str(), f.url("/p/7").as_str()]);

    // Without `order by` rows stream as they are found, in fixed columns.
    sh.execute("pages where status = 200 limit 3").unwrap();
    let t = out.take();
    let lines: Vec<&str> = t.lines().collect();
    assert!(
        lines[0].starts_with("status  depth  size") && lines[1].starts_with("200 "),
        "{t}"
    );
    // `status` terms are answered from the page index (schema 3).
    assert_eq!(
        (lines.len(), lines[4]),
        (5, "(3 pages; 3 candidates from the page index)")
    );
    sh.execute("count pages where title ~ '研究生' and status = 200")
        .unwrap();
    assert_eq!(out.take().trim(), "8");
    sh.execute("pages where depth = 1 order by url desc limit 2")
        .unwrap();
    let t = out.take();
    assert!(
        t.contains("/p/9") && t.contains("/p/8") && t.contains("(2 pages)"),
        "{t}"
    );

    // A db without a complete index (as one from before schema 3) scans,
    // with the same answer, until `reindex` fills the index.
    let mut b = store.batch();
    b.delete(
        trawl::schema::CF_META,
        trawl::schema::meta_keys::PAGE_INDEX_COMPLETE,
    );
    b.write().unwrap();
    sh.execute("pages where status = 404 order by url").unwrap();
    let scanned = out.take();
    assert!(scanned.ends_with("(2 pages)\n"), "{scanned}");
    sh.execute("reindex").unwrap();
    assert_eq!(
        out.take()
            .lines()
            .next()
            .map(|l| l.starts_with("indexed 11 pages")),
        Some(true)
    );
    sh.execute("timing on").unwrap();
    sh.execute("pages where status = 404 order by url").unwrap();
    let t = out.take();
    assert!(
        t.contains("(2 pages; 2 candidates from the page index)") && t.contains("/p/7"),
        "{t}"
    );
    assert!(t.lines().last().unwrap().starts_with("time: "), "{t}");
    sh.execute("count pages where host = '127.0.0.1' and status = 200")
        .unwrap();
    assert_eq!(out.take().lines().next(), Some("9"));
    sh.execute("timing off").unwrap();
    out.take();

    sh.execute(&format!("why {}", f.url("/private/x"))).unwrap();
    let t = out.take();
    assert!(
        t.contains("robots.txt") && t.contains("Disallow: /private"),
        "{t}"
    );
    sh.execute(&format!("why {}", f.url("/nowhere"))).unwrap();
    assert!(out.take().contains("never seen"));
    sh.execute(&format!("why {}", f.url("/p/1"))).unwrap();
    assert!(
        out.take()
            .contains("status 200, depth 1, first linked from")
    );

    sh.execute(&format!("page {root}")).unwrap();
    let t = out.take();
    assert!(
        t.contains("title         home") && t.contains("out-links (11)") && t.contains("[/p/0]"),
        "{t}"
    );
    sh.execute(&format!("page {} --raw", f.url("/p/1")))
        .unwrap();
    assert!(out.take().contains("<title>研究生 page /p/1</title>"));
    sh.execute(&format!("links to {}", f.url("/p/2"))).unwrap();
    assert!(out.take().contains(&root));
    sh.execute(&format!("host {}", f.server.addr())).unwrap();
    let t = out.take();
    assert!(
        t.contains("Disallow: /private") && t.contains("pages         11"),
        "{t}"
    );
    sh.execute("hosts top 5 by errors").unwrap();
    assert!(out.take().contains(&format!("http://{}", f.server.addr())));
    sh.execute("frontier").unwrap();
    assert_eq!(out.take().trim(), "0 URLs queued");

    // One-line errors; the shell goes on.
    assert!(
        sh.execute("stauts")
            .unwrap_err()
            .contains("did you mean status")
    );
    assert!(
        sh.execute("pages where status = = 3")
            .unwrap_err()
            .starts_with("column 22:")
    );
    assert!(
        sh.execute("set crawl.concurrency -1")
            .unwrap_err()
            .contains("crawl.concurrency")
    );
    assert!(
        sh.execute("set crawl.dept 3")
            .unwrap_err()
            .contains("did you mean crawl.depth")
    );
    assert!(sh.execute("page not-a-url").is_err());
    assert!(
        sh.execute(&format!("page {}", f.url("/private/x")))
            .unwrap_err()
            .contains("no stored page")
    );
    assert!(
        sh.execute("crawl pause")
            .unwrap_err()
            .contains("no crawl is running")
    );
    assert!(
        sh.execute("seed add http://ok.example/ ftp://bad/")
            .unwrap_err()
            .contains("bad seed")
    );

    // config save writes a .crawlrc that reproduces the settings.
    let rc = dir.path().join("saved.crawlrc");
    sh.execute("set crawl.depth 4").unwrap();
    sh.execute(&format!("config save {}", rc.display()))
        .unwrap();
    let saved = std::fs::read_to_string(&rc).unwrap();
    assert!(
        saved.contains("set crawl.delay 0s")
            && saved.contains("set crawl.depth 4")
            && saved.contains(&format!("seed add {root}")),
        "{saved}"
    );
    drop(sh);
    // Settings live in the db: a new shell has them.
    let (mut sh, out) = shell(store, &rt);
    sh.execute("get crawl.depth").unwrap();
    assert_eq!(out.take().trim(), "crawl.depth = 4");
}

/// The link structure `rank pagerank` is checked on: page -> links.
const RANKED_SITE: &[(&str, &[&str])] = &[
    ("/", &["/a", "/b", "/c", "http://offsite.invalid/x"]),
    ("/a", &["/hub", "/"]),
    ("/b", &["/hub", "/", "/gone"]),
    ("/c", &["/hub", "/c", "/"]),
    ("/hub", &["/"]),
];

/// PageRank of RANKED_SITE by the textbook dense iteration, keyed by link
/// as written (self-links left out, pages without links spread evenly).
fn expected_pagerank() -> std::collections::BTreeMap<&'static str, f64> {
    let mut nodes: Vec<&str> = vec!["/gone", "http://offsite.invalid/x"];
    nodes.extend(RANKED_SITE.iter().map(|(p, _)| *p));
    let n = nodes.len();
    let at = |u: &str| nodes.iter().position(|x| *x == u).unwrap();
    let mut r = vec![1.0 / n as f64; n];
    for _ in 0..1000 {
        let mut next = vec![0.15 / n as f64; n];
        for (u, ru) in nodes.iter().zip(&r) {
            let out: Vec<&str> = RANKED_SITE
                .iter()
                .find(|(p, _)| p == u)
                .map(|(p, l)| l.iter().copied().filter(|x| x != p).collect())
                .unwrap_or_default();
            if out.is_empty() {
                next.iter_mut().for_each(|v| *v += 0.85 * ru / n as f64);
            }
            for t in &out {
                next[at(t)] += 0.85 * ru / out.len() as f64;
            }
        }
        r = next;
    }
    nodes.into_iter().zip(r).collect()
}

#[test]
fn rank_pagerank_over_the_crawled_graph() {
    let rt = runtime();
    let f = rt.block_on(Fixture::start(|path| {
        match RANKED_SITE.iter().find(|(p, _)| *p == path) {
            Some((p, links)) => page(p, links),
            None => Response::status(404),
        }
    }));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&dir.path().join("db")).unwrap());
    let (mut sh, out) = shell(store, &rt);
    sh.execute("rank pagerank").unwrap();
    assert_eq!(out.take().trim(), "no pages stored yet: nothing to rank");
    for cmd in [
        "set crawl.delay 0",
        &format!("seed add {}", f.url("/")),
        "crawl start",
        // Bounded, so a crawl that never ends fails the test.
        "crawl wait --secs 180",
    ] {
        sh.execute(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    assert!(out.take().contains("crawl finished: 6 pages fetched"));

    sh.execute("rank pagerank").unwrap();
    let t = out.take();
    assert!(
        t.starts_with("PageRank of 7 URLs (6 fetched pages) over 12 links, damping 0.85:"),
        "{t}"
    );
    sh.execute("rank pagerank --json").unwrap();
    let j: serde_json::Value = serde_json::from_str(&out.take()).unwrap();
    assert_eq!(j["converged"], true);
    let top = j["top"].as_array().unwrap();
    assert_eq!(top.len(), 7);
    let expected = expected_pagerank();
    let origin = f.url("/").trim_end_matches('/').to_string();
    let mut sum = 0.0;
    for row in top {
        let url = row["url"].as_str().unwrap();
        // The off-site target was never queued: its URL comes from the link.
        let key = url.strip_prefix(origin.as_str()).unwrap_or(url);
        let want = expected[key];
        let got = row["score"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-6, "{url}: {got} vs {want}");
        assert_eq!(row["fetched"], key != "http://offsite.invalid/x", "{url}");
        sum += got;
    }
    assert!((sum - 1.0).abs() < 1e-6, "{sum}");
    assert_eq!(top[0]["url"], f.url("/"));
    assert_eq!(top[0]["inlinks"], 4);
    assert_eq!(top[1]["url"], f.url("/hub"));

    sh.execute("rank pagerank top 2 --damping 0.5 --iterations 3")
        .unwrap();
    let t = out.take();
    assert!(
        t.contains("damping 0.5: 3 iterations") && t.contains("not converged"),
        "{t}"
    );
    assert_eq!(t.lines().count(), 4, "{t}");
    for (cmd, says) in [
        ("rank", "usage: rank pagerank"),
        ("rank pagerank top 0", "top 0: expected a whole number"),
        (
            "rank pagerank --damping 1",
            "--damping 1: expected a number",
        ),
        ("rank pagerank --iterations", "--iterations needs a value"),
        ("rank pagerank --alpha 3", "--alpha: unknown option"),
    ] {
        let e = sh.execute(cmd).unwrap_err();
        assert!(e.contains(says), "{cmd}: {e}");
    }
}

#[test]
fn set_reaches_the_running_crawl_and_ctrl_c_ends_only_the_wait() {
    let rt = runtime();
    // A chain of pages, each answered after 10 ms.
    let f = rt.block_on(Fixture::start(common::chain(Duration::from_millis(10))));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&dir.path().join("db")).unwrap());
    let (mut sh, out) = shell(store, &rt);
    sh.execute("set crawl.delay 0").unwrap();
    sh.execute("set crawl.depth 1000").unwrap();
    sh.execute(&format!("seed add {}", f.url("/d/0"))).unwrap();
    sh.execute("crawl start").unwrap();
    sh.execute("crawl wait --pages 5 --secs 180").unwrap();
    sh.execute("set crawl.delay 300ms").unwrap();
    assert!(
        out.take()
            .contains("crawl.delay = 300ms (applied to the running crawl)")
    );
    let changed_at = Instant::now();
    sh.execute("crawl wait --secs 1.5").unwrap();
    f.assert_spaced_since(changed_at, Duration::from_millis(295));

    // Ctrl-C (the interrupt flag) ends `crawl wait`, not the crawl.
    let flag = sh.interrupt_flag();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let err = sh.execute("crawl wait --secs 180").unwrap_err();
    t.join().unwrap();
    assert!(err.contains("interrupted"), "{err}");
    let before = f.page_times().len();
    sh.execute("status").unwrap();
    assert!(out.take().contains("state       running"));
    sh.execute("crawl pause").unwrap();
    // The frontier is queryable while the crawl runs.
    sh.execute("frontier top 5").unwrap();
    let t = out.take();
    assert!(t.contains("depth") && t.contains("/d/"), "{t}");
    sh.execute(&format!("frontier host {}", f.server.addr()))
        .unwrap();
    assert!(out.take().contains("/d/"));
    // A seed added while the crawl runs is queued in it.
    let other = rt.block_on(Fixture::start(|p: &str| {
        if p == "/robots.txt" {
            Response::status(404)
        } else {
            page("other", &[])
        }
    }));
    sh.execute(&format!("seed add {}", other.url("/start")))
        .unwrap();
    assert!(out.take().contains("queued in the running crawl"));
    std::thread::sleep(Duration::from_millis(700));
    let paused_at = f.page_times().len();
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(f.page_times().len(), paused_at, "no fetches while paused");
    assert!(paused_at >= before);
    sh.execute("crawl resume").unwrap();
    sh.execute("crawl wait --secs 1").unwrap();
    assert!(f.page_times().len() > paused_at, "resumed");
    assert_eq!(other.count("/start"), 1, "the live seed was fetched");
    sh.execute("crawl stop").unwrap();
    assert!(out.take().contains("crawl stopped"));
}

fn trawl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trawl"));
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_batch_files_end_to_end() {
    let f = Fixture::start(site).await;
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.crawlrc");
    std::fs::write(
        &job,
        format!(
            "# a crawl job\nset crawl.delay 0\nseed add \\\n  {}\ncrawl start\ncrawl wait\n\npages where status = 404 --json\nstatus --json # the end\n",
            f.url("/")
        ),
    )
    .unwrap();
    let db = dir.path().join("db");
    let mut c = trawl();
    c.args(["run"]).arg(&job).arg("--db").arg(&db);
    let out = tokio::task::spawn_blocking(move || c.bounded_output())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("> crawl wait") && stdout.contains("> status --json"),
        "commands echoed: {stdout}"
    );
    let json_start = stdout.rfind("> status --json").unwrap() + "> status --json".len();
    let status: serde_json::Value = serde_json::from_str(stdout[json_start..].trim()).unwrap();
    assert_eq!(status["fetched"], 11);

    // The first failing command stops the batch with FILE:LINE.
    let bad = dir.path().join("bad.crawlrc");
    std::fs::write(&bad, "status\n\nset crawl.delay soon\nstatus\n").unwrap();
    let mut c = trawl();
    c.args(["run"]).arg(&bad).arg("--db").arg(&db);
    let out = tokio::task::spawn_blocking(move || c.bounded_output())
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:3: crawl.delay", bad.display())),
        "{err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .matches("> status")
            .count(),
        1,
        "stopped at line 3"
    );

    // --keep-going runs the rest and still fails at the end.
    let mut c = trawl();
    c.args(["run"])
        .arg(&bad)
        .arg("--db")
        .arg(&db)
        .arg("--keep-going");
    let out = tokio::task::spawn_blocking(move || c.bounded_output())
        .await
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .matches("> status")
            .count(),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_runs_crawlrc_then_piped_commands() {
    let f = Fixture::start(site).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".crawlrc"),
        format!("set crawl.delay 0\nseed add {}\n", f.url("/")),
    )
    .unwrap();
    let mut c = trawl();
    c.current_dir(dir.path())
        .args(["shell", "my.db"])
        .stdin(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"crawl start\ncrawl wait\ncount pages\nbogus\nquit\n")
        .unwrap();
    let out = tokio::task::spawn_blocking(move || common::output_of(child))
        .await
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("> seed add") && stdout.lines().any(|l| l.trim() == "11"),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("error: unknown command \"bogus\""));
    assert!(dir.path().join("my.db").join("CURRENT").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_attach_beside_a_running_crawl() {
    let f = Fixture::start(common::chain(Duration::from_millis(20))).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut crawler = trawl();
    crawler
        .args(["crawl", "--db"])
        .arg(&db)
        .args(["--seed", &f.url("/d/0"), "--delay-ms", "0"]);
    let mut crawler = crawler.spawn().unwrap();
    common::wait_until_async("10 pages fetched", common::PROCESS_LIMIT, || {
        f.page_times().len() >= 10
    })
    .await;
    let query = |cmds: &'static str| {
        let db = db.clone();
        tokio::task::spawn_blocking(move || {
            let mut c = trawl();
            c.args(["shell", "--read-only"]).arg(&db);
            common::output_with_input(c, cmds)
        })
    };
    let out = query("status --json\nset crawl.delay 1s\nseed add http://x.example/\n")
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let status: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let first = status["fetched"].as_u64().unwrap();
    assert!(
        first >= 5,
        "the secondary sees the primary's pages: {first}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("attached read-only").count(), 2, "{err}");
    // A later attach (or the next command) catches up.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let out = query(&*Box::leak(
        format!("count pages\npage {}\n", f.url("/d/1")).into_boxed_str(),
    ))
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let n: u64 = stdout.lines().next().unwrap().trim().parse().unwrap();
    assert!(n > first, "caught up: {n} > {first}");
    assert!(stdout.contains("title         level 1"), "{stdout}");
    crawler.kill().unwrap();
    common::wait_within(&mut crawler, common::PROCESS_LIMIT);
}
