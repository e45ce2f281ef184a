//! Sudden death: `trawl crawl` SIGKILLed at 20 seeded random moments and
//! resumed each time must leave a database that opens, agrees with itself
//! (`crawl::audit`: counters, links and in-links, frontier), and must have
//! fetched every page exactly once but for those in flight at a kill. A
//! full disk stops a crawl with one line and a consistent db; a db the
//! user cannot write opens read-only with a note.
//!
//! `TRAWL_KILLS` (default 20) and `TRAWL_KILL_SEED` change the harness;
//! `scripts/sudden-death` runs it longer.

use crate::common;
use crate::common::BoundedOutput;

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Fixture;
use trawl::site::Response;
use trawl::store::Store;

/// Pages of the fixture web: enough for the crawl to outlast the kills.
fn pages_for(kills: u64) -> usize {
    (kills as usize * 150).max(3000)
}

fn site(pages: usize) -> impl Fn(&str) -> Response + Send + Sync + 'static {
    move |path: &str| page(pages, path)
}

fn page(pages: usize, path: &str) -> Response {
    // Slow enough that twenty kills land before the crawl is done.
    common::numbered_page(path, pages, (31, 11), Duration::from_millis(20))
}

/// The crawl, writing WARC beside the db.
fn crawl_cmd(db: &std::path::Path, seed: &str) -> Command {
    let mut c = common::crawl_cmd(db, seed, 16);
    c.arg("--warc").arg(warc_dir(db));
    c
}

fn warc_dir(db: &std::path::Path) -> std::path::PathBuf {
    db.with_file_name("warc")
}

/// Every page's `warc` row names a whole record of that page: in its file,
/// or in the file a kill left open. Returns the rows.
fn check_warc_rows(store: &Store, k: usize) -> u64 {
    use std::io::{Read, Seek, SeekFrom};
    let mut rows = 0;
    for row in store.rows::<trawl::schema::tables::Warc>(&[]) {
        let (_, w) = row.unwrap();
        let open = format!("{}.open", w.file);
        let mut f = std::fs::File::open(&w.file)
            .or_else(|_| std::fs::File::open(&open))
            .unwrap_or_else(|e| panic!("after kill {k}: {} missing: {e}", w.file));
        f.seek(SeekFrom::Start(w.offset)).unwrap();
        let mut member = vec![0; w.length as usize];
        f.read_exact(&mut member)
            .unwrap_or_else(|e| panic!("after kill {k}: {} @{}: {e}", w.file, w.offset));
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(&member[..])
            .read_to_end(&mut text)
            .unwrap_or_else(|e| panic!("after kill {k}: {} @{}: {e}", w.file, w.offset));
        let (rec, _) = trawl::warc::reader::parse_record(&text).unwrap();
        assert_eq!(rec.get("WARC-Target-URI"), Some(w.url.as_str()));
        rows += 1;
    }
    rows
}

/// A small seeded generator (xorshift), so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_random_kills_lose_nothing() {
    let kills = env_u64("TRAWL_KILLS", 20);
    let seed_value = env_u64("TRAWL_KILL_SEED", 0x5eed_1234_abcd);
    eprintln!("sudden death: {kills} kills, TRAWL_KILL_SEED={seed_value}");
    let mut rng = Rng(seed_value | 1);
    let pages = pages_for(kills);
    let f = Fixture::start(site(pages)).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let seed = f.url("/p/0");
    let mut kill_times = Vec::new();
    let mut k = 0;
    while kill_times.len() < kills as usize {
        let fetched_before = f.page_times().len();
        let mut child = crawl_cmd(&db, &seed).spawn().unwrap();
        // A random moment: up to 400 ms after this run's first fetch (or
        // before it, while it opens the db and recovers).
        let wait = Duration::from_millis(rng.next() % 400);
        let start = Instant::now();
        let mut started = None;
        loop {
            if child.try_wait().unwrap().is_some() {
                break; // finished before the kill: fine
            }
            if started.is_none() && f.page_times().len() > fetched_before {
                started = Some(Instant::now());
            }
            let due = match (k % 4, started) {
                (0, _) => start.elapsed() >= wait / 4, // at startup
                (_, Some(t)) => t.elapsed() >= wait,
                (_, None) => start.elapsed() >= Duration::from_secs(20),
            };
            if due {
                common::kill_tree(&mut child);
                kill_times.push(Instant::now());
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        common::wait_within(&mut child, common::PROCESS_LIMIT);
        // Each time, the db opens and agrees with itself.
        let store = Store::open(&db).unwrap_or_else(|e| panic!("after kill {k}: {e}"));
        let problems = trawl::crawl::audit(&store).unwrap();
        let in_flight_marks: Vec<_> = problems
            .iter()
            .filter(|p| !p.contains("still marked in flight"))
            .collect();
        assert!(in_flight_marks.is_empty(), "after kill {k}: {problems:#?}");
        check_warc_rows(&store, k);
        let done = store.counters().unwrap().queued == 0 && k > 0;
        assert!(
            !done,
            "the crawl ended after {} kills of {kills}",
            kill_times.len()
        );
        k += 1;
    }
    common::run_ok(crawl_cmd(&db, &seed)).await;

    let store = Store::open(&db).unwrap();
    let problems = trawl::crawl::audit(&store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
    let c = store.counters().unwrap();
    let crash_loops = c.failed.named("crash-loop");
    assert_eq!(c.fetched + crash_loops, pages as u64, "{c:?}");
    // Every fetched page is archived; every file closed, whole, and
    // accepted by warcio.
    assert_eq!(check_warc_rows(&store, k), c.fetched);
    let files = crate::warc_live::warc_files(&warc_dir(&db));
    let mut records = 0;
    for f in &files {
        records += crate::warc_live::records(f).len();
        crate::common::tools::warcio_check(f);
    }
    assert!(records as u64 >= 3 * c.fetched, "{records} records");
    // Every URL fetched once, but for those in flight at a kill: between
    // two requests of one URL there is always a kill.
    let origin = f.hits().first().map(|h| h.at).unwrap();
    let mut times: HashMap<String, Vec<Instant>> = HashMap::new();
    for h in f.hits().into_iter().filter(|h| h.path != "/robots.txt") {
        times.entry(h.path).or_default().push(h.at);
    }
    assert_eq!(times.len(), pages, "every page requested");
    let mut refetched = 0;
    let slack = Duration::from_millis(20);
    for (path, ts) in &times {
        for pair in ts.windows(2) {
            refetched += 1;
            assert!(
                // A request the killed process sent may reach the server's
                // log a little after the kill: allow for that.
                kill_times
                    .iter()
                    .any(|k| *k + slack > pair[0] && *k <= pair[1] + slack),
                "{path} fetched twice without a kill between: at {:?} and {:?} (ms); kills at {:?}",
                pair[0] - origin,
                pair[1] - origin,
                kill_times
                    .iter()
                    .map(|k| (*k - origin).as_millis())
                    .collect::<Vec<_>>()
            );
        }
    }
    eprintln!(
        "sudden death: {} kills, {refetched} refetches of pages in flight, {crash_loops} crash loops",
        kill_times.len()
    );
}

/// Mounts a tmpfs of `mb` MB at `dir`; false when this machine does not
/// let us (not root, no mount namespace).
fn mount_tmpfs(dir: &std::path::Path, mb: u32) -> bool {
    Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
        .arg(dir)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_stops_the_crawl_with_one_line_and_a_consistent_db() {
    full_disk(false).await;
}

/// The same with WARC written beside the db, which fills the disk first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_the_warc_fills_stops_the_crawl_with_one_line_and_a_consistent_db() {
    full_disk(true).await;
}

async fn full_disk(warc: bool) {
    let f = Fixture::start(site(3000)).await;
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("disk");
    std::fs::create_dir(&mnt).unwrap();
    // With WARC on a small disk of its own (when one can be mounted) it
    // is the WARC that fills it (3,000 pages take ~4 MB of it).
    let tmpfs = mount_tmpfs(&mnt, if warc { 2 } else { 6 });
    let db = match warc && tmpfs {
        true => dir.path().join("db"),
        false => mnt.join("db"),
    };
    let mut cmd = common::crawl_cmd(&db, &f.url("/p/0"), 16);
    if warc {
        cmd.arg("--warc").arg(mnt.join("warc"));
    }
    if !tmpfs {
        // No mounting here: the same write errors come from a file-size
        // limit (EFBIG instead of ENOSPC) on the crawl's own process.
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let lim = libc::rlimit {
                    rlim_cur: 2 << 20,
                    rlim_max: 2 << 20,
                };
                libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
                Ok(())
            });
        }
    }
    eprintln!(
        "full disk: {}",
        if tmpfs {
            "a 6 MB tmpfs"
        } else {
            "RLIMIT_FSIZE 2 MB (no mount here)"
        }
    );
    let out = tokio::task::spawn_blocking(move || cmd.bounded_output())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("trawl: error:"))
        .collect();
    if tmpfs {
        // Give the db room to open (RocksDB writes on open) before checking.
        Command::new("mount")
            .args(["-o", "remount,size=256m"])
            .arg(&mnt)
            .status()
            .unwrap();
    }
    let result = std::panic::catch_unwind(|| {
        assert!(!out.status.success(), "the crawl stops: {err}");
        assert_eq!(errors.len(), 1, "{err}");
        // (Under a file-size limit either may reach it first.)
        let full = match (warc, tmpfs) {
            (true, true) => errors[0].contains("cannot write WARC"),
            (true, false) => {
                errors[0].contains("cannot write WARC") || errors[0].contains("the disk is full")
            }
            (false, _) => errors[0].contains("the disk is full"),
        };
        assert!(
            full && errors[0].contains("run the same command again"),
            "{err}"
        );
        let store = Store::open(&db).unwrap();
        let problems = trawl::crawl::audit(&store).unwrap();
        let real: Vec<_> = problems
            .iter()
            .filter(|p| !p.contains("still marked in flight"))
            .collect();
        assert!(real.is_empty(), "{problems:#?}");
        assert!(store.counters().unwrap().fetched > 0);
    });
    if tmpfs {
        let _ = Command::new("umount").arg(&mnt).status();
    }
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn a_db_the_user_cannot_write_opens_read_only_with_a_note() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.path().join("db");
    drop(Store::open(&db).unwrap());
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let bin = dir.path().join("trawl");
    std::fs::copy(env!("CARGO_BIN_EXE_trawl"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    for entry in std::fs::read_dir(&db).unwrap() {
        let p = entry.unwrap().path();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = Command::new(&bin);
    cmd.args(["shell"])
        .arg(&db)
        .env("HOME", "/nonexistent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .current_dir(dir.path());
    if root {
        // Root writes anything: run as nobody, who cannot.
        use std::os::unix::process::CommandExt;
        cmd.uid(65534).gid(65534);
    }
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "status").unwrap();
        writeln!(stdin, "seed add http://example.org/").unwrap();
    }
    let out = common::output_of(child);
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(
        err.contains("is not writable") && err.contains("opened read-only"),
        "{err}"
    );
    assert!(text.contains("fetched"), "queries work: {text}");
    assert!(
        err.contains("attached read-only"),
        "writes are refused: {err}"
    );
    assert!(!db.join("trawl_history").exists());
}
