//! The binary's user-facing behaviour: the demo, and one-line errors for
//! everything a user can get wrong.

use std::process::{Command, Output};

use crate::common;

fn trawl(args: &[&str]) -> Output {
    common::output_within(common::trawl_cmd(args))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_one_line_error(o: &Output, needle: &str) {
    assert!(!o.status.success());
    let e = stderr(o);
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    assert!(e.starts_with("trawl: error: ") && e.contains(needle), "{e}");
}

#[test]
fn demo_crawls_its_own_site_offline() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let db_s = db.to_str().unwrap();
    let o = trawl(&["demo", "--db", db_s, "--pages", "60"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("crawl finished") && out.contains("TLP"),
        "{out}"
    );
    let store = trawl::store::Store::open(&db).unwrap();
    let c = store.counters().unwrap();
    // 4 hosts × (60 pages + front page) + redirects, 404s and copies.
    assert!(c.fetched > 240, "{c:?}");
    assert!(
        c.filtered.named("robots") > 0,
        "robots.txt folder skipped: {c:?}"
    );
    assert!(
        c.filtered.named("scope") > 0,
        "external hosts out of scope: {c:?}"
    );
    assert!(
        c.by_status.contains_key(&404) && c.by_status.contains_key(&301),
        "{c:?}"
    );
    assert!(c.duplicates > 0);
    drop(store);
    // A second run replaces the old demo db.
    let o = trawl(&["demo", "--db", db_s, "--pages", "10"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn demo_runs_in_the_current_directory_and_replaces_itself_there() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().join("here");
    std::fs::create_dir(&here).unwrap();
    let demo_here = || {
        let mut c = common::trawl_cmd(&["demo", "--db", ".", "--pages", "5"]);
        c.current_dir(&here);
        common::output_within(c)
    };
    for run in 0..2 {
        let o = demo_here();
        assert!(o.status.success(), "run {run}: {}", stderr(&o));
        assert!(here.join("CURRENT").exists(), "run {run}");
    }
}

#[test]
fn bad_input_gets_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db_s = db.to_str().unwrap();
    assert_one_line_error(
        &trawl(&["crawl", "--db", db_s, "--seed", "not a url"]),
        "bad seed",
    );
    assert_one_line_error(
        &trawl(&["crawl", "--db", db_s, "--seed", "ftp://x.org/"]),
        "only http and https",
    );
    assert_one_line_error(&trawl(&["crawl", "--db", db_s]), "no seeds");
    let seed = ["--seed", "http://a.x.test/"];
    for bad in ["a.*.x.test:127.0.0.1", "*x.test:127.0.0.1", "*.:127.0.0.1"] {
        let o = trawl(&["crawl", "--db", db_s, seed[0], seed[1], "--resolve", bad]);
        assert_one_line_error(&o, "a wildcard is `*.DOMAIN`");
    }

    // A setting's number must be finite and in its range: a NaN weight
    // was taken and put every URL at the head of its queue.
    for (set, needle) in [
        (
            "relevance.keywords=research:NaN",
            "relevance.keywords: weight of \"research\": NaN is not a finite number",
        ),
        ("relevance.keywords=research:inf", "0..1000000"),
        ("topic.gain=-inf", "topic.gain: -inf is not a finite number"),
        ("relevance.threshold=NaN", "expected number 0..1"),
    ] {
        let o = trawl(&["crawl", "--db", db_s, seed[0], seed[1], "--set", set]);
        assert_one_line_error(&o, needle);
    }

    let junk = dir.path().join("junk");
    std::fs::create_dir(&junk).unwrap();
    std::fs::write(junk.join("notes.txt"), "hello").unwrap();
    assert_one_line_error(
        &trawl(&[
            "crawl",
            "--db",
            junk.to_str().unwrap(),
            "--seed",
            "http://127.0.0.1:9/",
        ]),
        "not a trawl database",
    );
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert_one_line_error(
        &trawl(&[
            "crawl",
            "--db",
            file.to_str().unwrap(),
            "--seed",
            "http://127.0.0.1:9/",
        ]),
        "not a trawl database",
    );

    // Held open by this process: a second writer is refused.
    let store = trawl::store::Store::open(&db).unwrap();
    assert_one_line_error(
        &trawl(&["crawl", "--db", db_s, "--seed", "http://127.0.0.1:9/"]),
        "locked by another trawl process",
    );

    // A database from a newer trawl.
    let mut b = store.batch();
    b.put_raw(
        trawl::schema::CF_META,
        trawl::schema::meta_keys::SCHEMA_VERSION,
        &99u32.to_be_bytes(),
    );
    b.write().unwrap();
    drop(store);
    assert_one_line_error(
        &trawl(&["crawl", "--db", db_s, "--seed", "http://127.0.0.1:9/"]),
        "newer trawl",
    );
}

#[test]
fn bench_web_serves_a_web_every_page_of_which_a_crawl_reaches() {
    use std::io::BufRead;
    let mut server = Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(["bench-web", "--pages", "300", "--hosts", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let seeds: Vec<String> = (0..2).map(|_| lines.next().unwrap().unwrap()).collect();
    assert!(seeds.iter().all(|s| s.starts_with("http://127.0.0.1:")));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut args = vec!["crawl", "--db", db.to_str().unwrap(), "--delay-ms", "0"];
    args.extend(["--per-host", "4"]);
    for s in &seeds {
        args.extend(["--seed", s.as_str()]);
    }
    let o = trawl(&args);
    // Stop the server before asserting, so a failure does not leak it.
    unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
    let status = common::wait_within(&mut server, common::PROCESS_LIMIT);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(status.success(), "bench-web exits cleanly on SIGTERM");
    let store = trawl::store::Store::open(&db).unwrap();
    let c = store.counters().unwrap();
    // 2 hosts × (150 pages + the front page), all reachable from `/`;
    // the 8 pages a host links into /private/ are disallowed by robots.txt.
    assert_eq!(c.fetched, 302, "{c:?}");
    assert_eq!(c.filtered.named("robots"), 16, "{c:?}");
    assert!(c.links > 302 * 9, "10–30 links a page: {c:?}");
    assert_one_line_error(&trawl(&["bench-web", "--hosts", "0"]), "--hosts");
}
