//! Helpers for integration tests: fixture servers on 127.0.0.1 that log
//! every request with its arrival time, and a crawl runner over a temp db.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use trawl::crawl::{self, Summary};
use trawl::model::{UrlId, normalize};
use trawl::schema::{DocRecord, PageRecord, SeenRecord, VerdictRecord};
use trawl::settings::CrawlSettings;
use trawl::site::{Request, Response, Server, handler};
use trawl::store::Store;

#[derive(Clone, Debug)]
pub struct Hit {
    pub path: String,
    pub at: Instant,
    pub user_agent: String,
}

/// A fixture server and the log of what it was asked.
pub struct Fixture {
    pub server: Server,
    pub log: Arc<Mutex<Vec<Hit>>>,
}

impl Fixture {
    pub async fn start<F>(respond: F) -> Fixture
    where
        F: Fn(&str) -> Response + Send + Sync + 'static,
    {
        let log: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let l = log.clone();
        let respond = Arc::new(respond);
        let server = Server::bind(handler(move |req: Request| {
            let ua = req
                .headers
                .get("user-agent")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            l.lock().unwrap().push(Hit {
                path: req.path.clone(),
                // The runtime's clock: virtual in a test on paused time.
                at: tokio::time::Instant::now().into_std(),
                user_agent: ua,
            });
            let r = respond(&req.path);
            async move { r }
        }))
        .await
        .expect("bind fixture");
        Fixture { server, log }
    }

    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.log.lock().unwrap().clone()
    }

    /// How many times `path` was requested.
    /// The pages it was asked for (robots.txt left out), in order.
    pub fn fetched(&self) -> Vec<String> {
        self.hits()
            .into_iter()
            .map(|h| h.path)
            .filter(|p| p != "/robots.txt")
            .collect()
    }

    pub fn count(&self, path: &str) -> usize {
        self.hits().iter().filter(|h| h.path == path).count()
    }

    /// Arrival times of requests other than robots.txt.
    pub fn page_times(&self) -> Vec<Instant> {
        self.hits()
            .iter()
            .filter(|h| h.path != "/robots.txt")
            .map(|h| h.at)
            .collect()
    }
}

impl Fixture {
    /// Asserts the crawl went on after `since` (three pages at least),
    /// each page at least `gap` after the one before.
    pub fn assert_spaced_since(&self, since: Instant, gap: Duration) {
        let after: Vec<Instant> = self
            .page_times()
            .into_iter()
            .filter(|t| *t > since)
            .collect();
        assert!(after.len() >= 3, "the crawl went on: {}", after.len());
        for w in after.windows(2) {
            assert!(w[1] - w[0] >= gap, "gap {:?} under {gap:?}", w[1] - w[0]);
        }
    }
}

/// Settings for loopback tests: no politeness delay, quick retries.
pub fn fast() -> CrawlSettings {
    let mut s = CrawlSettings {
        delay: Duration::ZERO,
        robots_retry: Duration::from_millis(100),
        backoff: Duration::from_millis(100),
        shutdown_grace: Duration::from_secs(5),
        ..CrawlSettings::default()
    };
    s.fetch.total_timeout = Duration::from_secs(10);
    s
}

pub struct Db {
    pub dir: tempfile::TempDir,
    pub store: Arc<Store>,
}

impl Db {
    pub fn new() -> Db {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Arc::new(Store::open(&dir.path().join("db")).expect("open db"));
        Db { dir, store }
    }

    pub async fn crawl(&self, settings: CrawlSettings, seeds: &[String]) -> Summary {
        let (_h, join) = crawl::start(self.store.clone(), settings, seeds).expect("start crawl");
        tokio::time::timeout(Duration::from_secs(60), join)
            .await
            .expect("crawl finishes")
            .unwrap()
            .unwrap()
    }

    pub fn page(&self, url: &str) -> Option<PageRecord> {
        self.store.page(id(url)).unwrap()
    }

    /// The page's doc with its text (from the page frame, schema 9 on).
    pub fn doc(&self, url: &str) -> Option<DocRecord> {
        self.store.doc_with_text(id(url)).unwrap().map(|d| d.doc)
    }

    /// The page's verdict as the filters last judged it.
    pub fn verdict(&self, url: &str) -> Option<VerdictRecord> {
        self.store.doc(id(url)).unwrap().map(|d| d.verdict)
    }

    pub fn seen(&self, url: &str) -> Option<SeenRecord> {
        self.store.seen(id(url)).unwrap()
    }
}

pub fn id(url: &str) -> UrlId {
    normalize(url).expect("valid url").id()
}

/// A small HTML page linking to `links`.
pub fn page(title: &str, links: &[&str]) -> Response {
    let a: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a> "))
        .collect();
    Response::html(format!(
        "<html><head><title>{title}</title></head><body><p>{title}</p>{a}</body></html>"
    ))
}

/// Neutral text, longer than an anchor's context, that keeps one link's
/// anchor out of the next one's.
pub const FILL: &str =
    "<p>lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod</p>";

/// A page titled `title` with `body` text and `(href, anchor)` links, each
/// between two [`FILL`]s (for tests of anchor-context scores).
/// An HTML page sent gzip-compressed with `Content-Encoding: gzip`.
pub fn gzipped_html(html: &[u8]) -> Response {
    use std::io::Write;
    let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    g.write_all(html).unwrap();
    Response::new(200, g.finish().unwrap())
        .header("content-type", "text/html")
        .header("content-encoding", "gzip")
}

pub fn anchored(title: &str, body: &str, links: &[(&str, &str)]) -> Response {
    let a: String = links
        .iter()
        .map(|(h, t)| format!("{FILL}<a href=\"{h}\">{t}</a>{FILL}"))
        .collect();
    Response::html(format!(
        "<html><head><title>{title}</title></head><body><p>{body}</p>{a}</body></html>"
    ))
}

/// A chain of pages: `/d/N` (titled `level N`) links to `/d/N+1`, each
/// answered after `delay`; no robots.txt.
pub fn chain(delay: Duration) -> impl Fn(&str) -> Response + Send + Sync + 'static {
    move |p: &str| {
        if p == "/robots.txt" {
            return Response::status(404);
        }
        let n: u32 = p.trim_start_matches("/d/").parse().unwrap_or(0);
        page(&format!("level {n}"), &[&format!("/d/{}", n + 1)]).delayed(delay)
    }
}

/// Page `path` (`/p/i`) of a web of `pages` numbered pages: links to its
/// two children (`2i+1`, `2i+2`) and two cross links (`7i+3` and
/// `cross.0·i+cross.1`, modulo `pages`), answered after `delay`; no
/// robots.txt.
pub fn numbered_page(path: &str, pages: usize, cross: (usize, usize), delay: Duration) -> Response {
    if path == "/robots.txt" {
        return Response::status(404);
    }
    let i: usize = path.trim_start_matches("/p/").parse().unwrap_or(0);
    let links: Vec<String> = [
        2 * i + 1,
        2 * i + 2,
        (i * 7 + 3) % pages,
        (i * cross.0 + cross.1) % pages,
    ]
    .iter()
    .filter(|&&j| j < pages)
    .map(|j| format!("<a href=\"/p/{j}\">p{j}</a>"))
    .collect();
    Response::html(format!(
        "<title>page {i}</title><p>body of page {i}</p>{}",
        links.join(" ")
    ))
    .delayed(delay)
}

/// `trawl crawl` of `db` from `seed` with no delay and `concurrency`
/// fetches (all may go to one host); stdout dropped, stderr kept.
pub fn crawl_cmd(db: &std::path::Path, seed: &str, concurrency: usize) -> std::process::Command {
    let n = concurrency.to_string();
    let mut c = trawl_cmd(&["crawl", "--db"]);
    c.arg(db)
        .args(["--seed", seed, "--delay-ms", "0", "--per-host", &n])
        .args(["--concurrency", &n])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    c
}

pub mod by_host;
pub mod raw;
pub mod tools;

/// Runs `f` on a shell over `store` (on a thread of its own, as the shell
/// blocks); returns what it gave and what the shell printed.
pub async fn with_shell<T: Send + 'static>(
    store: Arc<Store>,
    f: impl FnOnce(&mut trawl::shell::Shell) -> T + Send + 'static,
) -> (T, String) {
    let session = tokio::task::spawn_blocking(move || {
        let buf = Arc::new(Mutex::new(Vec::<u8>::new()));
        struct W(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for W {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        // A crawl the commands start runs on this runtime's own worker.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let mut sh =
            trawl::shell::Shell::new(store, rt.handle().clone(), Box::new(W(buf.clone())), 0);
        let out = f(&mut sh);
        drop(sh);
        (out, String::from_utf8(buf.lock().unwrap().clone()).unwrap())
    });
    // A command that hangs (a `crawl wait` on a crawl that never ends)
    // fails the test.
    tokio::time::timeout(PROCESS_LIMIT, session)
        .await
        .expect("shell commands end within the limit")
        .unwrap()
}

/// Runs shell commands on `store` and returns what they printed; a
/// failing command panics.
pub async fn shell(store: Arc<Store>, cmds: Vec<String>) -> String {
    with_shell(store, move |sh| {
        for cmd in &cmds {
            sh.execute(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        }
    })
    .await
    .1
}

/// Runs one shell command on `store` that must fail; returns its error.
pub async fn shell_error(store: Arc<Store>, cmd: String) -> String {
    with_shell(store, move |sh| match sh.execute(&cmd) {
        Ok(_) => panic!("{cmd} succeeded"),
        Err(e) => e.to_string(),
    })
    .await
    .0
}

/// A refilter of `store` under `s`, written (not a dry run), that stops
/// at its first progress report when `stop_at_first` (as a Ctrl-C would).
pub async fn refilter(
    store: Arc<Store>,
    s: CrawlSettings,
    stop_at_first: bool,
) -> trawl::crawl::RefilterReport {
    tokio::task::spawn_blocking(move || {
        let mut calls = 0;
        crawl::refilter(store, s, crawl::RefilterRun::default(), &mut |_, _| {
            calls += 1;
            !(stop_at_first && calls == 1)
        })
        .unwrap()
    })
    .await
    .unwrap()
}

/// `why URL` on `store`.
pub async fn why(store: &Arc<Store>, url: &str) -> String {
    shell(store.clone(), vec![format!("why {url}")]).await
}

/// A finished child process: its output and its peak resident memory.
pub struct Measured {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Peak RSS of the process, in bytes (its VmHWM, last read at most
    /// 10 ms before it ended).
    pub max_rss: u64,
}

/// Runs `cmd` to its end and reads its own peak RSS with wait4 (so other
/// tests' children do not count); wait4 reaps it, not `Child::wait`.
#[allow(clippy::zombie_processes)]
/// The design bound on a crawl's resident memory at default settings (README).
pub const RSS_BOUND: u64 = 256 << 20;

impl Measured {
    /// Prints the peak RSS under `what` and asserts the README's bound.
    pub fn assert_rss_bound(&self, what: &str) {
        eprintln!("{what}: peak RSS {:.1} MB", self.max_rss as f64 / 1e6);
        assert!(
            self.max_rss < RSS_BOUND,
            "{what}: peak RSS {} MB over the {} MB bound",
            self.max_rss >> 20,
            RSS_BOUND >> 20
        );
    }
}

pub fn run_measured(mut cmd: std::process::Command) -> Measured {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // Reaped by wait4 below, which gives its rusage.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().expect("spawn");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let pid = child.id() as libc::pid_t;
    // A watchdog kills a child that outlives the limit, so wait4 returns
    // and the test fails instead of hanging.
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watched = done.clone();
    // The peak is read from the child's own VmHWM while it runs: wait4's
    // ru_maxrss starts from the test process's peak at the fork (Linux
    // carries the old mm's high-water mark across exec), which with other
    // tests running reached 290 MB before the child allocated anything.
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen_peak = peak.clone();
    std::thread::spawn(move || {
        let deadline = Instant::now() + PROCESS_LIMIT;
        while Instant::now() < deadline {
            if watched.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            if let Some(hwm) = vm_hwm(pid) {
                seen_peak.fetch_max(hwm, std::sync::atomic::Ordering::SeqCst);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: signalling a pid; the child is not reaped until wait4.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 writes it and the status.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(r, pid, "wait4");
    Measured {
        status: std::process::ExitStatus::from_raw(status),
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
        max_rss: match peak.load(std::sync::atomic::Ordering::SeqCst) {
            0 => usage.ru_maxrss as u64 * 1024,
            hwm => hwm,
        },
    }
}

/// A process's state letter (`R`, `S`, `T`, `Z`…), None when it is gone.
fn proc_state(pid: libc::pid_t) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

/// Kills `child` and everything it started with SIGKILL, as a machine
/// that loses power or the out-of-memory killer would, and waits until
/// all are gone (a supervised crawl's work runs in a grandchild, which
/// dies with its supervisor a moment later and holds the db until then).
pub fn kill_tree(child: &mut std::process::Child) {
    let pid = child.id() as libc::pid_t;
    // Each process is stopped before its children are listed, so none
    // starts another (a supervisor restarting its work) while the tree is
    // read; then all are killed, the work first.
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        // SAFETY: signalling pids of our own tree.
        unsafe { libc::kill(p, libc::SIGSTOP) };
        // The signal lands when the process next runs: a fork under way
        // finishes first, and its child is listed then.
        let until = Instant::now() + Duration::from_secs(2);
        while !matches!(proc_state(p), None | Some('T' | 't' | 'Z' | 'X')) && Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        let kids =
            std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")).unwrap_or_default();
        tree.extend(
            kids.split_whitespace()
                .filter_map(|c| c.parse::<libc::pid_t>().ok()),
        );
        i += 1;
    }
    for p in tree.iter().rev() {
        // SAFETY: as above.
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
    wait_within(child, PROCESS_LIMIT);
    let deadline = Instant::now() + Duration::from_secs(10);
    for p in &tree[1..] {
        while std::path::Path::new(&format!("/proc/{p}")).exists() && Instant::now() < deadline {
            // A zombie waiting for its new parent is gone for our purpose
            // once its last thread is (they close its files).
            let threads = std::fs::read_dir(format!("/proc/{p}/task")).map_or(0, |d| d.count());
            if proc_state(*p) == Some('Z') && threads <= 1 {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// The peak resident memory (VmHWM) of a running process and its
/// descendants (a supervised crawl's work is in its child), summed, in
/// bytes.
fn vm_hwm(pid: libc::pid_t) -> Option<u64> {
    let own = |pid: libc::pid_t| -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    };
    let mut total = own(pid)?;
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        let children =
            std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")).unwrap_or_default();
        for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            total += own(c).unwrap_or(0);
            stack.push(c);
        }
    }
    Some(total)
}

/// `trawl` with `args`, as a command to run.
/// The longest any one process a test starts may run: a hang fails the
/// test instead of the suite.
pub const PROCESS_LIMIT: Duration = Duration::from_secs(180);

/// Waits for `child` to end, at most `limit`; a child still running then
/// is killed and the test fails.
pub fn wait_within(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "process {} still running after {limit:?}; killed",
                child.id()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `child`'s output once it ends (its stdout and stderr must be piped),
/// within [`PROCESS_LIMIT`].
pub fn output_of(mut child: std::process::Child) -> std::process::Output {
    use std::io::Read;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let read = |s: Option<&mut dyn Read>| {
        let mut v = Vec::new();
        if let Some(s) = s {
            let _ = s.read_to_end(&mut v);
        }
        v
    };
    let (status, stdout, stderr) = std::thread::scope(|scope| {
        let o = scope.spawn(|| read(out.as_mut().map(|s| s as &mut dyn Read)));
        let e = scope.spawn(|| read(err.as_mut().map(|s| s as &mut dyn Read)));
        let status = wait_within(&mut child, PROCESS_LIMIT);
        (status, o.join().unwrap(), e.join().unwrap())
    });
    std::process::Output {
        status,
        stdout,
        stderr,
    }
}

/// `cmd` run to its end with its output captured, within [`PROCESS_LIMIT`].
pub fn output_within(mut cmd: std::process::Command) -> std::process::Output {
    cmd.bounded_output()
}

/// `Command::output`, bounded: the child is killed and the test fails
/// after [`PROCESS_LIMIT`].
pub trait BoundedOutput {
    fn bounded_output(&mut self) -> std::process::Output;
}

impl BoundedOutput for std::process::Command {
    fn bounded_output(&mut self) -> std::process::Output {
        self.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        output_of(self.spawn().expect("spawn"))
    }
}

/// Polls `cond` every 10 ms until it holds; fails the test naming `what`
/// after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "{what}: not after {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// As [`wait_until`], from async code.
pub async fn wait_until_async(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "{what}: not after {limit:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Runs `cmd` to its end (off the runtime's threads) and asserts it
/// succeeded; returns its output.
pub async fn run_ok(cmd: std::process::Command) -> std::process::Output {
    let shown = format!("{cmd:?}");
    let out = tokio::task::spawn_blocking(move || output_within(cmd))
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{shown} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `cmd` (a `trawl shell`, its stdout and stderr set as the caller wants)
/// fed `input` on stdin, run to its end within [`PROCESS_LIMIT`].
pub fn output_with_input(mut cmd: std::process::Command, input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd.stdin(std::process::Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    output_of(child)
}

pub fn trawl_cmd(args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_trawl"));
    c.args(args);
    c
}

/// An HTTPS server on 127.0.0.1 presenting `cert`.
pub async fn tls_server(
    cert: &rcgen::CertifiedKey<rcgen::KeyPair>,
    handler: trawl::site::Handler,
) -> Server {
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into());
    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert.cert.der().clone()], key)
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    Server::start_tls(listener, handler, tls).unwrap()
}

/// Column `col` of a CSV `simulate --csv` wrote (its URLs or flags by
/// step; empty cells left out).
pub fn csv_column(path: &std::path::Path, col: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == col).unwrap();
    lines
        .map(|l| l.split(',').nth(i).unwrap_or("").to_string())
        .filter(|v| !v.is_empty())
        .collect()
}
