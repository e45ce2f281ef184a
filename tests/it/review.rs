//! What the code review found, each case with a test that failed before
//! its fix: a documented command missing from dispatch, `trawl demo`
//! deleting any db, an interrupted refilter forgetting its drops, a link
//! verdict that depended on which page came first, `why` for targets of
//! unfollowed links, untrusted `./.crawlrc`, `config save` writing
//! commands it cannot read back, unchecked CLI numbers, one bad seed
//! stopping a crawl, a killed run's record, and a stale URL's label.

use crate::common;
use crate::common::BoundedOutput;

use std::sync::Arc;
use std::time::Duration;

use common::{Db, Fixture, fast, id, shell, trawl_cmd, why};
use trawl::filter::Mode;
use trawl::model::{FilterReason, SeenState};
use trawl::schema::{self};
use trawl::settings::{CrawlSettings, Scope};
use trawl::site::Response;
use trawl::store::Store;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domains_is_a_command() {
    let db = Db::new();
    let mut b = db.store.batch();
    let seeds = schema::SeedList {
        urls: vec!["http://www.uestc.edu.cn/".into()],
        derived: vec![],
    };
    b.put(schema::CF_META, schema::meta_keys::SEEDS, &seeds);
    b.write().unwrap();
    let text = shell(
        db.store.clone(),
        vec![
            "domains".into(),
            "domains key add tsinghua".into(),
            "domains key list".into(),
            "domains common list".into(),
            "help domains".into(),
        ],
    )
    .await;
    assert!(
        text.contains("uestc") && text.contains("tsinghua"),
        "{text}"
    );
    assert!(text.contains("domains key add|remove|list"), "{text}");
}

#[test]
fn demo_replaces_only_a_db_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mine.db");
    let store = Store::open(&db).unwrap();
    let mut b = store.batch();
    b.put_raw(schema::CF_URLS, b"precious", b"data");
    b.write().unwrap();
    drop(store);
    let o = trawl_cmd(&["demo", "--db", db.to_str().unwrap(), "--pages", "5"]).bounded_output();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("did not create"), "{}", stderr(&o));
    let store = Store::open(&db).unwrap();
    assert!(
        store
            .get_raw(schema::CF_URLS, b"precious")
            .unwrap()
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_refilter_drops_its_urls_when_run_again() {
    let web = trawl::site::bench::BenchWeb::start(1_500, 1, None)
        .await
        .unwrap();
    let db = Db::new();
    let s = CrawlSettings {
        max_pages: Some(700),
        ..fast()
    };
    db.crawl(s.clone(), &web.seeds()).await;
    drop(web);
    let queued = db.store.counters().unwrap().queued;
    assert!(queued > 0, "a frontier is left");
    // A keyword no page has: no page's links are followed any more.
    let mut s = s;
    s.filter.mode = Mode::Relevance;
    s.filter.relevance_keywords = vec![("zzqx".into(), 1.0)];
    let r = common::refilter(db.store.clone(), s.clone(), true).await;
    assert!(r.interrupted && r.dropped == 0, "{r:?}");
    let r = common::refilter(db.store.clone(), s.clone(), false).await;
    assert!(!r.interrupted);
    assert_eq!(db.store.counters().unwrap().queued, 0, "{r:?}");
    assert_eq!(r.dropped, queued);
    let left = db
        .store
        .scan(schema::CF_META, schema::meta_keys::REFILTER_DROP_PREFIX)
        .count();
    assert_eq!(left, 0, "the stored drops are consumed");
    assert!(trawl::crawl::audit(&db.store).unwrap().is_empty());
}

/// `/x/y/a` is fetched first and drops `/x/t` by link type (an upward
/// link, never followed with `links.upward_p` 0); `/x/b` links it
/// horizontally, which follows.
fn link_order_site(path: &str) -> Response {
    // Each page says where it is: no two bodies are duplicates.
    let page = |links: &[&str]| {
        let a: String = links
            .iter()
            .map(|l| format!("<a href={l}>论文 {l}</a> "))
            .collect();
        Response::html(format!(
            "<title>论文 研究生 {path}</title><p>{}</p>{a}",
            "论文 研究生 ".repeat(20)
        ))
    };
    match path {
        "/robots.txt" => Response::status(404),
        "/" => page(&["/x/y/a", "/x/b"]),
        "/x/y/a" | "/x/b" => page(&["/x/t"]),
        _ => page(&[]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_that_follows_queues_what_another_pages_link_dropped() {
    let f = Fixture::start(link_order_site).await;
    let mut s = CrawlSettings {
        per_host: 1,
        concurrency: 1,
        ..fast()
    };
    s.filter.mode = Mode::RelevanceLinkType;
    s.filter.relevance_keywords = vec![("论文".into(), 1.0), ("研究生".into(), 1.0)];
    s.filter.links.upward_p = 0.0;
    let db = Db::new();
    db.crawl(s, &[f.url("/")]).await;
    let dropped = db
        .store
        .link(id(&f.url("/x/y/a")), id(&f.url("/x/t")))
        .unwrap()
        .unwrap();
    assert_eq!(
        dropped.verdict.name(),
        "link-type",
        "the upward link was dropped"
    );

    assert_eq!(
        db.seen(&f.url("/x/t")).unwrap().state,
        SeenState::Fetched { status: 200 },
        "followed from /x/b although /x/y/a's link dropped it first"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn why_explains_targets_of_links_the_crawl_did_not_follow() {
    let f = Fixture::start(|p: &str| match p {
        "/robots.txt" => Response::status(404),
        _ => Response::html("<a href=/nf rel=nofollow>nf</a>"),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert!(db.seen(&f.url("/nf")).is_none());
    let text = why(&db.store, &f.url("/nf")).await;
    assert!(
        text.contains("not queued: linked from") && text.contains("rel=nofollow"),
        "{text}"
    );
}

#[test]
fn an_untrusted_crawlrc_does_not_run() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join(".crawlrc");
    std::fs::write(&rc, "set crawl.depth 7\n").unwrap();
    std::fs::set_permissions(&rc, std::fs::Permissions::from_mode(0o666)).unwrap();
    let db = dir.path().join("db");
    let run = |db: &std::path::Path| {
        let mut c = trawl_cmd(&["shell"]);
        c.arg(db)
            .current_dir(dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        {
            use std::io::Write;
            writeln!(child.stdin.take().unwrap(), "get crawl.depth").unwrap();
        }
        common::output_of(child)
    };
    let o = run(&db);
    assert!(stderr(&o).contains("others can write it"), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("crawl.depth = none"));
    std::fs::set_permissions(&rc, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = run(&db);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("crawl.depth = 7"),
        "{}",
        stderr(&o)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_save_writes_only_what_reads_back_and_keeps_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("job.crawlrc");
    let other = dir.path().join("notes.txt");
    std::fs::write(&other, "my notes\n").unwrap();
    let db = Db::new();
    // Quotes, a backslash and a comment sign must survive the round trip
    // (a newline or tab is refused by the setting itself).
    let agent = "evil/1 \"q\" \\ #x'; seed add http://injected.example/";
    let text = shell(
        db.store.clone(),
        vec![
            format!("set fetch.user_agent {}", trawl::shell::quote(agent)),
            "seed add \"http://example.org/it's\"".into(),
            format!("config save {}", saved.display()),
        ],
    )
    .await;
    assert!(text.contains("written"), "{text}");
    let db2 = Db::new();
    let text = shell(
        db2.store.clone(),
        vec![
            format!("source {}", saved.display()),
            "get fetch.user_agent".into(),
            "seed list".into(),
        ],
    )
    .await;
    assert!(
        text.contains("it's") && text.contains(&format!("fetch.user_agent = {agent}\n")),
        "{text}"
    );
    let seeds = db2.store.seeds().unwrap().urls;
    assert_eq!(seeds, ["http://example.org/it's"], "no injected seed");
    let read = shell(
        db2.store.clone(),
        vec!["get fetch.user_agent --json".into()],
    )
    .await;
    let v: serde_json::Value = serde_json::from_str(&read).unwrap();
    assert_eq!(v["value"], agent);
    // A file that is not a trawl config is kept unless --force.
    let e = common::shell_error(db.store.clone(), format!("config save {}", other.display())).await;
    common::shell(
        db.store.clone(),
        vec![format!("config save {} --force", other.display())],
    )
    .await;
    assert!(
        e.contains("not a trawl config") && e.contains("--force"),
        "{e}"
    );
    assert!(
        std::fs::read_to_string(&other)
            .unwrap()
            .starts_with("# trawl settings")
    );
}

#[test]
fn cli_numbers_are_range_checked_and_bad_seeds_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db_s = db.to_str().unwrap();
    for (flag, value) in [
        ("--timeout-secs", "18446744073709551615"),
        ("--delay-ms", "18446744073709551615"),
        ("--max-body-bytes", "18446744073709551615"),
        ("--timeout-secs", "0"),
        ("--concurrency", "0"),
    ] {
        let o = trawl_cmd(&[
            "crawl",
            "--db",
            db_s,
            "--seed",
            "http://127.0.0.1:9/",
            flag,
            value,
        ])
        .bounded_output();
        let e = stderr(&o);
        assert!(!o.status.success(), "{flag} {value}");
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
        assert!(e.contains(flag) && e.contains("expected"), "{e}");
    }
    let o = trawl_cmd(&[
        "crawl",
        "--db",
        db_s,
        "--seed",
        "http://127.0.0.1:9/",
        "--set",
        "no.such=1",
    ])
    .bounded_output();
    assert!(stderr(&o).contains("unknown setting"), "{}", stderr(&o));
}

/// Every path a page without links; no robots.txt.
fn ok_pages(path: &str) -> Response {
    match path {
        "/robots.txt" => Response::status(404),
        _ => common::page("ok", &[]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_refused_seed_does_not_stop_the_others() {
    let f = Fixture::start(ok_pages).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let long = format!("http://x.org/{}", "a".repeat(16 << 10));
    let (d, good) = (db.clone(), f.url("/"));
    let o = tokio::task::spawn_blocking(move || {
        trawl_cmd(&["crawl", "--db", d.to_str().unwrap(), "--delay-ms", "0"])
            .args(["--seed", &long, "--seed", "ftp://x.org/", "--seed", &good])
            .bounded_output()
    })
    .await
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("skipped bad seed") && e.contains("ftp"), "{e}");
    assert!(
        e.lines().all(|l| l.len() < 400),
        "long seeds are shortened: {e}"
    );
    assert_eq!(f.count("/"), 1);
    // seed import: the same.
    let list = dir.path().join("seeds.txt");
    std::fs::write(&list, format!("ftp://x.org/\n{}\n", f.url("/other"))).unwrap();
    let store = Arc::new(Store::open(&db).unwrap());
    let text = shell(store, vec![format!("seed import {}", list.display())]).await;
    assert!(
        text.contains("1 seed(s) added") && text.contains("skipped"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_runs_record_keeps_what_it_fetched() {
    let f = Fixture::start(|p: &str| {
        if p == "/robots.txt" {
            return Response::status(404);
        }
        let i: u64 = p.trim_start_matches("/p/").parse().unwrap_or(0);
        common::page("p", &[&format!("/p/{}", i + 1), &format!("/p/{}", i + 2)])
            .delayed(Duration::from_millis(20))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut child = trawl_cmd(&[
        "crawl",
        "--db",
        db.to_str().unwrap(),
        "--seed",
        &f.url("/p/0"),
    ])
    .args(["--delay-ms", "0", "--per-host", "4", "--max-pages", "1000"])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    common::wait_until_async("40 pages fetched", common::PROCESS_LIMIT, || {
        f.page_times().len() >= 40
    })
    .await;
    common::kill_tree(&mut child);
    let (d, seed) = (db.clone(), f.url("/p/0"));
    let o = tokio::task::spawn_blocking(move || {
        trawl_cmd(&["crawl", "--db", d.to_str().unwrap(), "--seed", &seed])
            .args(["--delay-ms", "0", "--max-pages", "60"])
            .bounded_output()
    })
    .await
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let store = Store::open(&db).unwrap();
    let runs: Vec<schema::RunRecord> = store
        .scan(schema::CF_META, schema::meta_keys::RUN_PREFIX)
        .map(|r| {
            use trawl::schema::Versioned;
            schema::RunRecord::decode(&r.unwrap().1).unwrap()
        })
        .collect();
    assert_eq!(runs.len(), 2);
    assert!(
        runs[0].interrupted && runs[0].fetched >= 30,
        "{:?}",
        runs[0]
    );
    assert!(
        runs[0].ended_ms > 0 && runs[0].elapsed_ms > 0,
        "{:?}",
        runs[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_url_that_no_longer_parses_is_labelled_invalid() {
    let f = Fixture::start(ok_pages).await;
    let db = Db::new();
    // A frontier row as another version might have left it.
    let seed = trawl::model::normalize(&f.url("/")).unwrap();
    let bad = trawl::model::UrlId::of("http:// not a url");
    let key = schema::FrontierKey {
        host: seed.host_id(),
        priority: 0,
        url: bad,
    };
    let entry = schema::FrontierEntry {
        url: "http:// not a url".into(),
        depth: 1,
        parent: None,
        redirects: 0,
        attempts: 0,
        enqueued_ms: 0,
        scores: None,
        link: None,
        revisit: None,
    };
    let mut c = db.store.counters().unwrap();
    c.queued = 1;
    c.seen = 1;
    let mut b = db.store.batch();
    b.put(schema::CF_FRONTIER, &key.to_key(), &entry);
    let rec = schema::SeenRecord {
        state: SeenState::Queued,
        depth: 1,
        parent: None,
        redirects: 0,
        updated_ms: 0,
        priority: Some(key.priority),
        scores: None,
    };
    b.put(schema::CF_SEEN, &bad.to_bytes(), &rec);
    b.put(schema::CF_META, schema::meta_keys::COUNTERS, &c);
    b.write().unwrap();
    let s = CrawlSettings {
        scope: Scope::Host,
        ..fast()
    };
    db.crawl(s, &[f.url("/")]).await;
    assert_eq!(
        db.store.seen(bad).unwrap().unwrap().state,
        SeenState::Filtered(FilterReason::InvalidUrl)
    );
    assert_eq!(
        db.store.counters().unwrap().filtered.named("invalid-url"),
        1
    );
}

#[test]
fn a_db_killed_while_being_created_is_created_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    // As a kill between RocksDB's create and trawl's first write leaves it.
    {
        let mut o = rocksdb::Options::default();
        o.create_if_missing(true);
        o.create_missing_column_families(true);
        let _ = rocksdb::DB::open_cf(&o, &db, [schema::CF_META]).unwrap();
    }
    let store = Store::open(&db).expect("a db with an empty meta opens as new");
    assert!(
        store
            .get_raw(schema::CF_META, schema::meta_keys::SCHEMA_VERSION)
            .unwrap()
            .is_some()
    );
}

#[test]
fn a_db_is_created_in_an_empty_directory_and_over_a_killed_creation() {
    let dir = tempfile::tempdir().unwrap();
    let has_schema = |s: &Store| {
        s.get_raw(schema::CF_META, schema::meta_keys::SCHEMA_VERSION)
            .unwrap()
            .is_some()
    };
    // An empty directory (`--db .`, a mount point) is used in place.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(empty.join("sub")).unwrap();
    let store = Store::open(&empty.join("sub").join(".."));
    assert!(
        store.is_err(),
        "a directory holding a directory is not empty"
    );
    std::fs::remove_dir(empty.join("sub")).unwrap();
    let store = Store::open(&empty.join(".")).expect("an empty directory takes a new db");
    assert!(has_schema(&store));
    drop(store);
    assert!(empty.join("CURRENT").exists(), "built in place");
    // Missing parent directories are made, as `mkdir -p` would.
    drop(Store::open(&dir.path().join("a/b/db")).expect("parents are made"));
    // A creation in place killed before RocksDB wrote CURRENT.
    let killed = dir.path().join("killed");
    std::fs::create_dir(&killed).unwrap();
    for f in ["LOCK", "IDENTITY", "LOG", "MANIFEST-000001", "000003.log"] {
        std::fs::write(killed.join(f), b"").unwrap();
    }
    let store = Store::open(&killed).expect("a killed creation is cleared");
    assert!(has_schema(&store));
    drop(store);
    // Anything else without CURRENT is not ours to clear: a user's file
    // beside RocksDB's names (`trawl crawl --db . > crawl.log` makes the
    // log first), or RocksDB-like names without the LOCK a creation
    // starts with.
    for (name, files) in [
        ("notes", &["LOCK", "notes.txt"][..]),
        ("shell-log", &["LOCK", "crawl.log"][..]),
        ("no-lock", &["000005.log", "LOG"][..]),
    ] {
        let other = dir.path().join(name);
        std::fs::create_dir(&other).unwrap();
        for f in files {
            std::fs::write(other.join(f), b"mine").unwrap();
        }
        let err = Store::open(&other).err().expect("refused").to_string();
        assert!(err.contains("non-empty directory"), "{name}: {err}");
        for f in files {
            assert!(other.join(f).exists(), "{name}: {f} kept");
        }
    }
}
