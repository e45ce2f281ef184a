//! Focus measured while the crawl runs: harvest rate (relevant pages ÷
//! pages judged, under the current page filter) over the run and its last
//! pages, target recall for an imported list, both in `status`, the run
//! records and `runs compare`; and `crawl.stop_when` ending a crawl that
//! stopped finding relevant pages, with the rule kept in the run.

use crate::common;

use common::{Db, Fixture, fast};
use trawl::filter::Mode;
use trawl::schema::tables::Runs;
use trawl::settings::CrawlSettings;
use trawl::settings::StopRule;
use trawl::site::Response;

fn html(title: &str, body: &str, links: &[String]) -> Response {
    let a: String = links
        .iter()
        .map(|l| format!("<p><a href=\"{l}\">next</a></p>"))
        .collect();
    Response::html(format!(
        "<html><head><title>{title}</title></head><body><p>{body}</p>{a}</body></html>"
    ))
}

/// `/` (on topic) links to /r1–/r3 (on topic) and /n1–/n6 (off topic).
fn small_web(path: &str) -> Response {
    let links: Vec<String> = [
        "/r1", "/r2", "/r3", "/n1", "/n2", "/n3", "/n4", "/n5", "/n6",
    ]
    .map(String::from)
    .to_vec();
    match path {
        "/robots.txt" => Response::status(404),
        "/" => html("home", "basketball scores", &links),
        p if p.starts_with("/r") => html(p, &format!("basketball news {p}"), &[]),
        p => html(p, &format!("gardening tips {p}"), &[]),
    }
}

fn relevance() -> CrawlSettings {
    let mut s = fast();
    s.filter.mode = Mode::Relevance;
    s.filter.relevance_keywords = vec![("basketball".into(), 1.0)];
    s.filter.relevance_threshold = 0.1;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn harvest_rate_and_target_recall_in_status_and_runs() {
    let f = Fixture::start(small_web).await;
    let db = Db::new();
    // Three targets: two the crawl will fetch, one it never reaches, and a
    // line that is not a URL (named and skipped).
    let list = db.dir.path().join("targets.txt");
    let targets = format!(
        "# known relevant\n{}\n{}\nnot a url\n{}\n",
        f.url("/r1"),
        f.url("/r2"),
        f.url("/elsewhere")
    );
    std::fs::write(&list, targets).unwrap();
    let import = format!("targets import {}", list.display());
    let out = common::shell(db.store.clone(), vec![import]).await;
    assert!(out.contains("imported 3 URLs"), "{out}");
    assert!(
        out.contains("targets.txt:4:"),
        "the bad line is named: {out}"
    );
    assert!(out.contains("3 targets, 0 fetched (recall 0.000)"), "{out}");

    db.crawl(relevance(), &[f.url("/")]).await;
    // 10 pages judged, 4 on topic: 0.4.
    let run = db.store.rows::<Runs>(&[]).last().unwrap().unwrap().1;
    assert_eq!((run.judged, run.relevant), (10, 4));
    assert_eq!((run.targets, run.targets_fetched), (3, 2));
    let cmds = ["status", "runs", "runs compare 1 1", "targets"].map(String::from);
    let out = common::shell(db.store.clone(), cmds.to_vec()).await;
    for want in [
        "harvest     0.400 (4 relevant of 10 judged this run); last 10: 0.400",
        "targets     2 of 3 fetched (recall 0.667)",
        "harvest rate",
        "target recall",
        "3 targets, 2 fetched (recall 0.667)",
    ] {
        assert!(out.contains(want), "{want:?} in:\n{out}");
    }
    let runs_row = out.lines().find(|l| l.starts_with("1 ")).unwrap();
    let cols: Vec<&str> = runs_row.split_whitespace().collect();
    assert!(
        cols.windows(2).any(|w| w == ["0.400", "0.667"]),
        "{runs_row}"
    );
}

/// `/` (on topic) links to 40 off-topic pages, then one on topic.
fn thinning_web(path: &str) -> Response {
    let mut links: Vec<String> = (0..40).map(|i| format!("/n{i}")).collect();
    links.push("/r".into());
    match path {
        "/robots.txt" => Response::status(404),
        "/" => html("home", "basketball", &links),
        "/r" => html("r", "basketball", &[]),
        p => html(p, &format!("gardening {p}"), &[]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_rules_end_the_crawl_and_are_kept_in_the_run() {
    for (rule, fired) in [
        (
            "no-relevant/10",
            "no-relevant/10: no relevant page in the last 10",
        ),
        (
            "harvest<0.2/8",
            "harvest<0.2/8: 1 relevant of the last 8 pages",
        ),
    ] {
        let f = Fixture::start(thinning_web).await;
        let db = Db::new();
        let mut s = relevance();
        (s.concurrency, s.per_host) = (1, 1);
        s.stop_when = StopRule::parse_list(rule).unwrap();
        db.crawl(s, &[f.url("/")]).await;
        let run = db.store.rows::<Runs>(&[]).last().unwrap().unwrap().1;
        assert!(
            run.stopped_by.starts_with(fired),
            "{rule}: {}",
            run.stopped_by
        );
        // One request at a time: the rule fires on the page that meets it,
        // and at most the fetch already under way follows.
        assert!(run.fetched <= 12, "{rule}: {} pages", run.fetched);
        assert_eq!(f.count("/r"), 0, "{rule}: the crawl went on");
        let out = common::shell(db.store.clone(), vec!["runs".into()]).await;
        assert!(out.contains("stop rule"), "{out}");
    }
    // Saturation: every off-topic page repeats the same words.
    let same = |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => html(
            "home",
            "alpha beta gamma",
            &(0..30).map(|i| format!("/p{i}")).collect::<Vec<_>>(),
        ),
        _ => html("page", "alpha beta gamma delta", &[]),
    };
    let f = Fixture::start(same).await;
    let db = Db::new();
    let mut s = fast();
    (s.concurrency, s.per_host) = (1, 1);
    s.stop_when = StopRule::parse_list("saturation<0.05/5").unwrap();
    db.crawl(s, &[f.url("/")]).await;
    let run = db.store.rows::<Runs>(&[]).last().unwrap().unwrap().1;
    assert!(
        run.stopped_by.starts_with("saturation<0.05/5"),
        "{}",
        run.stopped_by
    );
    assert!(run.fetched < 12, "{} pages", run.fetched);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_rules_are_checked_when_set() {
    let db = Db::new();
    let out = common::shell(
        db.store.clone(),
        vec!["set crawl.stop_when harvest<0.1/500,no-relevant/1000".into()],
    )
    .await;
    assert!(out.contains("harvest<0.1/500,no-relevant/1000"), "{out}");
    let err =
        common::shell_error(db.store.clone(), "set crawl.stop_when harvest<5/10".into()).await;
    assert!(err.contains("X must be a number from 0 to 1"), "{err}");
}

#[test]
fn the_prompt_shows_the_harvest_rate_and_a_running_crawl_takes_new_targets() {
    use std::time::Duration;
    let rt = crate::shell::runtime();
    // A chain of pages titled `level N`, each answered after 50 ms.
    let f = rt.block_on(Fixture::start(common::chain(Duration::from_millis(50))));
    let db = Db::new();
    let (mut sh, out) = crate::shell::shell(db.store.clone(), &rt);
    for cmd in [
        "set crawl.delay 0".to_string(),
        "set filter.mode relevance".into(),
        "set relevance.keywords level".into(),
        format!("seed add {}", f.url("/d/0")),
        "crawl start".into(),
    ] {
        sh.execute(&cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    let until = |sh: &mut trawl::shell::Shell, what: &str, ok: &dyn Fn(&str) -> bool| {
        let end = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let label = sh.state_label();
            if ok(&label) {
                return label;
            }
            assert!(std::time::Instant::now() < end, "{what}: {label}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let label = until(&mut sh, "harvest in the prompt", &|l| l.contains("harvest"));
    assert!(
        label.starts_with("running") && label.ends_with("harvest 1.00"),
        "{label}"
    );
    // Targets imported while it runs: one ahead of it, one it never reaches.
    let list = db.dir.path().join("targets.txt");
    std::fs::write(
        &list,
        format!("{}\n{}\n", f.url("/d/40"), f.url("/nowhere")),
    )
    .unwrap();
    sh.execute(&format!("targets import {}", list.display()))
        .unwrap();
    let end = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        out.take();
        sh.execute("status").unwrap();
        let status = out.take();
        if status.contains("targets     1 of 2 fetched (recall 0.500)") {
            break;
        }
        assert!(std::time::Instant::now() < end, "{status}");
        std::thread::sleep(Duration::from_millis(50));
    }
    sh.execute("crawl stop").unwrap();
}
