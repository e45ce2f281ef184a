//! The seed-site library end to end: sites with their own depth, filter,
//! delay, page budget and order, set in the shell and obeyed in one crawl
//! (one loopback server answers for several names, fixed to 127.0.0.1 with
//! the resolve override), explained by `why`; the library as CSV.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Db;
use common::by_host::ByHost;
use trawl::model::{FilterReason, SeenState};
use trawl::settings::{CrawlSettings, Scope};
use trawl::site::Response;

/// Every site: `/` links `/1`, `/1` links `/2`… up to `/6`; `/` also links
/// the shop, off every seed site. `www.tree.org` is a tree instead.
fn respond(host: &str, path: &str, port: u16) -> Response {
    let html = |links: Vec<String>| {
        let a: Vec<String> = links
            .iter()
            .map(|l| format!("<a href=\"{l}\">x</a>"))
            .collect();
        Response::html(format!(
            "<html><head><title>{host}{path}</title></head><body>{}</body></html>",
            a.concat()
        ))
    };
    match (host, path) {
        (_, "/robots.txt") => Response::status(404),
        // The bare name sends everything to `www.`, as most sites do.
        ("alpha.org", p) => Response::redirect(301, &format!("http://www.alpha.org:{port}{p}")),
        ("www.tree.org", "/") => html(vec!["/a".into(), "/b".into()]),
        ("www.tree.org", "/a") => html(vec!["/a1".into()]),
        ("www.tree.org", "/b") => html(vec!["/b1".into()]),
        ("www.shop.com", "/") => html(vec!["/child".into()]),
        (_, "/") => html(vec!["/1".into(), format!("http://www.shop.com:{port}/")]),
        (_, p) => match p[1..].parse::<u32>() {
            Ok(n) if n < 6 => html(vec![format!("/{}", n + 1)]),
            _ => html(vec![]),
        },
    }
}

/// The by-host server, with the pages of one host.
struct Site(ByHost);

impl Site {
    async fn start() -> Site {
        Site(ByHost::start(respond).await)
    }
    fn url(&self, host: &str, path: &str) -> String {
        self.0.url(host, path)
    }
    /// The pages of `host` fetched, in order, with their times.
    fn fetched(&self, host: &str) -> Vec<(String, Instant)> {
        let pages = self.0.pages();
        pages
            .into_iter()
            .filter_map(|(p, t)| Some((p.strip_prefix(host)?.to_string(), t)))
            .collect()
    }
    fn paths(&self, host: &str) -> Vec<String> {
        self.fetched(host).into_iter().map(|(p, _)| p).collect()
    }
}

fn settings() -> CrawlSettings {
    let mut s = CrawlSettings {
        scope: Scope::Any,
        concurrency: 1,
        ..common::fast()
    };
    // The loopback stands in for the public hosts not seeded.
    s.fetch.allow_private = true;
    s.fetch.resolve = [
        "alpha.org",
        "www.alpha.org",
        "www.beta.org",
        "www.shop.com",
        "www.tree.org",
        "www.slow.org",
    ]
    .map(|h| (h.to_string(), "127.0.0.1".parse().unwrap()))
    .to_vec();
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_seed_sites_crawl_to_their_own_depth_and_filter() {
    let site = Site::start().await;
    // Alpha's seed redirects to www.alpha.org: its settings go along.
    let (alpha, beta) = (site.url("alpha.org", "/"), site.url("www.beta.org", "/"));
    let db = Db::new();
    let out = common::shell(
        db.store.clone(),
        vec![
            format!("seed add {alpha} --depth 1 --filter domain --subject 'physics, old'"),
            format!("seed add {beta} --depth 3 --source colleague"),
        ],
    )
    .await;
    assert!(out.contains("1 seed(s) added, 2 in all"), "{out}");
    // The crawl's own settings: no depth limit, no filter.
    db.crawl(settings(), &[alpha.clone(), beta.clone()]).await;

    assert_eq!(
        site.paths("www.alpha.org"),
        ["/", "/1"],
        "alpha stops at its depth 1"
    );
    assert_eq!(
        site.paths("www.beta.org"),
        ["/", "/1", "/2", "/3"],
        "beta goes to its depth 3"
    );
    // Alpha's filter drops its link to the shop; beta's (the crawl's
    // none) follows it, and the shop's own links follow the crawl's
    // settings (no depth limit).
    assert_eq!(site.paths("www.shop.com"), ["/", "/child"]);
    let shop = db.seen(&site.url("www.shop.com", "/")).unwrap();
    assert_eq!(
        shop.parent,
        Some(common::id(&beta).0),
        "reached from beta, not alpha"
    );
    let deep = db.seen(&site.url("www.alpha.org", "/2")).unwrap();
    assert_eq!(deep.state, SeenState::Filtered(FilterReason::Depth));

    let why = common::why(&db.store, &site.url("www.alpha.org", "/2")).await;
    assert!(
        why.contains("over the depth = 1 of the seed site it was linked from")
            && why.contains(&format!(
                "seed site {}'s own settings apply: depth 1, filter domain",
                alpha.trim_end_matches('/')
            )),
        "{why}"
    );
    let why = common::why(&db.store, &site.url("www.beta.org", "/4")).await;
    assert!(why.contains("depth = 3 of the seed site"), "{why}");
    let table = common::shell(
        db.store.clone(),
        vec!["seeds where subject ~ 'physics'".into()],
    )
    .await;
    assert!(
        table.contains("http://alpha.org") && !table.contains("www.beta.org"),
        "{table}"
    );
    assert!(table.contains("depth 1, filter domain"), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sites_budget_delay_and_order_are_its_own_and_a_raised_budget_resumes() {
    let site = Site::start().await;
    let (slow, tree) = (site.url("www.slow.org", "/"), site.url("www.tree.org", "/"));
    let db = Db::new();
    common::shell(
        db.store.clone(),
        vec![
            format!("seed add {slow} --max-pages 3 --delay 150ms"),
            format!("seed add {tree} --order dfs"),
        ],
    )
    .await;
    let mut s = settings();
    s.max_depth = Some(2);
    db.crawl(s.clone(), &[slow.clone(), tree.clone()]).await;

    let fetched = site.fetched("www.slow.org");
    let paths: Vec<&str> = fetched.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["/", "/1", "/2"], "depth 2, and the budget of 3");
    // The crawl's delay is 0, the site's 150 ms.
    for pair in fetched.windows(2) {
        let gap = pair[1].1 - pair[0].1;
        assert!(gap >= Duration::from_millis(150), "{gap:?}");
    }
    // Depth-first within the tree: the later branch first, then its child.
    assert_eq!(site.paths("www.tree.org"), ["/", "/b", "/b1", "/a", "/a1"]);

    // A deeper crawl is held by the budget: the deeper URLs stay queued.
    s.max_depth = Some(6);
    db.crawl(s.clone(), &[]).await;
    assert_eq!(site.paths("www.slow.org"), ["/", "/1", "/2"]);
    let left = db.seen(&site.url("www.slow.org", "/3")).unwrap();
    assert_eq!(left.state, SeenState::Queued);
    // Raised: the next run goes on from where the budget held it.
    let out = common::shell(
        db.store.clone(),
        vec![format!(
            "seed set www.slow.org:{} max_pages 5",
            site.0.server.addr().port()
        )],
    )
    .await;
    assert!(out.contains("max_pages 5 (was 3)"), "{out}");
    db.crawl(s, &[]).await;
    assert_eq!(site.paths("www.slow.org"), ["/", "/1", "/2", "/3", "/4"]);
}

#[test]
fn seed_set_reaches_the_running_crawl() {
    let rt = crate::shell::runtime();
    // A chain of pages, each answered after 10 ms.
    let f = rt.block_on(common::Fixture::start(common::chain(
        Duration::from_millis(10),
    )));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(trawl::store::Store::open(&dir.path().join("db")).unwrap());
    let (mut sh, out) = crate::shell::shell(store, &rt);
    let host = f.url("/").trim_end_matches('/').to_string();
    for cmd in [
        "set crawl.delay 0".to_string(),
        "set crawl.depth 1000".into(),
        format!("seed add {} --subject chains", f.url("/d/0")),
        "crawl start".into(),
        "crawl wait --pages 5 --secs 180".into(),
        format!("seed set {host} delay 300ms"),
    ] {
        sh.execute(&cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    assert!(
        out.take()
            .contains("delay 300ms (was none); the running crawl obeys it now")
    );
    let changed_at = Instant::now();
    sh.execute("crawl wait --secs 1.5").unwrap();
    f.assert_spaced_since(changed_at, Duration::from_millis(295));
    // A budget under what is fetched already: the site's host is held and
    // the crawl, with nothing else to do, ends.
    let budget = f.page_times().len() + 1;
    sh.execute(&format!("seed set {host} max_pages {budget}"))
        .unwrap();
    out.take();
    sh.execute("crawl wait --secs 30").unwrap();
    sh.execute("status").unwrap();
    let status = out.take();
    assert!(
        !status.contains("state       running"),
        "the crawl ended: {status}"
    );
    assert!(
        f.page_times().len() <= budget + 1,
        "{} > {budget}",
        f.page_times().len()
    );
    sh.execute("seeds --json").unwrap();
    let seeds: serde_json::Value = serde_json::from_str(&out.take()).unwrap();
    assert_eq!(seeds[0]["subject"], "chains");
    assert_eq!(seeds[0]["delay"], "300ms");
    assert_eq!(seeds[0]["max_pages"], budget as u64);
    assert_eq!(seeds[0]["home"], 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn site_groups_run_one_after_another_and_a_resume_stays_in_its_group() {
    let site = Site::start().await;
    // Three groups of two: alpha (behind a redirect to www.) and beta,
    // then g2 and g3, then g4.
    let seeds: Vec<String> = [
        "alpha.org",
        "www.beta.org",
        "www.g2.org",
        "www.g3.org",
        "www.g4.org",
    ]
    .iter()
    .map(|h| site.url(h, "/"))
    .collect();
    let db = Db::new();
    let mut s = settings();
    s.scope = Scope::Host;
    s.concurrency = 4;
    s.site_batch = 2;
    s.fetch.resolve.extend(
        ["www.g2.org", "www.g3.org", "www.g4.org"]
            .map(|h| (h.to_string(), "127.0.0.1".parse().unwrap())),
    );
    // Each site is 7 pages (`/` to `/6`), alpha one redirect more: the
    // limit stops the crawl inside the second group.
    s.max_pages = Some(19);
    db.crawl(s.clone(), &seeds).await;
    let order =
        |log: &[(String, Instant)]| -> Vec<String> { log.iter().map(|(p, _)| p.clone()).collect() };
    let first = order(&site.0.pages());
    let pos = |log: &[String], host: &str, last: bool| {
        let mut it = log
            .iter()
            .enumerate()
            .filter(|(_, p)| p.starts_with(host))
            .map(|(i, _)| i);
        if last { it.next_back() } else { it.next() }
    };
    let group1_end = pos(&first, "www.alpha.org", true)
        .max(pos(&first, "www.beta.org", true))
        .unwrap();
    assert_eq!(site.paths("www.alpha.org").len(), 7, "{first:?}");
    assert_eq!(site.paths("www.beta.org").len(), 7, "{first:?}");
    let g2 = pos(&first, "www.g2.org", false).expect("the second group started");
    assert!(g2 > group1_end, "group 2 waited for group 1: {first:?}");
    assert!(site.paths("www.g4.org").is_empty(), "{first:?}");

    let status = common::shell(
        db.store.clone(),
        vec!["set crawl.site_batch 2".into(), "status".into()],
    )
    .await;
    assert!(
        status.contains("groups      1 done, 1 running (group 2 of 3), 1 waiting; 2 sites a group, 2 of 5 sites done"),
        "{status}"
    );

    let why = common::shell(
        db.store.clone(),
        vec!["set crawl.site_batch 2".into(), format!("why {}", seeds[4])],
    )
    .await;
    assert!(
        why.contains("held: its seed site")
            && why.contains("is in group 3 of 3, after the running group 2 (crawl.site_batch 2)"),
        "{why}"
    );
    // Resumed: the second group is finished before the third starts.
    s.max_pages = None;
    db.crawl(s, &[]).await;
    let all = order(&site.0.pages());
    let group2_end = pos(&all, "www.g2.org", true)
        .max(pos(&all, "www.g3.org", true))
        .unwrap();
    assert_eq!(site.paths("www.g3.org").len(), 7, "{all:?}");
    assert_eq!(site.paths("www.g4.org").len(), 7, "{all:?}");
    assert!(
        pos(&all, "www.g4.org", false).unwrap() > group2_end,
        "{all:?}"
    );
    let status = common::shell(
        db.store.clone(),
        vec!["set crawl.site_batch 2".into(), "status --json".into()],
    )
    .await;
    let json: serde_json::Value = serde_json::from_str(status.split_once('\n').unwrap().1).unwrap();
    assert_eq!(
        (
            json["groups"]["done"].as_u64(),
            json["groups"]["waiting"].as_u64()
        ),
        (Some(3), Some(0)),
        "{status}"
    );
    assert_eq!(json["groups"]["sites_done"], 5);
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn site_batch_is_live_and_turning_it_off_releases_the_waiting_sites() {
    let rt = crate::shell::runtime();
    // Three sites, each a chain of its own pages (`/d/N` links `/d/N+1`)
    // answered after 50 ms.
    let sites: Vec<common::Fixture> = (0..3)
        .map(|i| {
            rt.block_on(common::Fixture::start(move |p: &str| {
                let n: u32 = p.trim_start_matches("/d/").parse().unwrap_or(0);
                common::page(&format!("site {i} level {n}"), &[&format!("/d/{}", n + 1)])
                    .delayed(Duration::from_millis(50))
            }))
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(trawl::store::Store::open(&dir.path().join("db")).unwrap());
    let (mut sh, out) = crate::shell::shell(store, &rt);
    let mut cmds = vec![
        "set crawl.delay 0".to_string(),
        "set crawl.depth 8".into(),
        "set crawl.site_batch 1".into(),
    ];
    cmds.extend(sites.iter().map(|f| format!("seed add {}", f.url("/d/0"))));
    cmds.extend([
        "crawl start".into(),
        "crawl wait --pages 3 --secs 60".into(),
    ]);
    for cmd in &cmds {
        sh.execute(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    out.take();
    sh.execute("status").unwrap();
    let status = out.take();
    assert!(
        status.contains("1 running (group 1 of 3), 2 waiting"),
        "{status}"
    );
    assert!(sites[1].fetched().is_empty() && sites[2].fetched().is_empty());
    sh.execute("set crawl.site_batch 0").unwrap();
    sh.execute("crawl wait --secs 60").unwrap();
    for f in &sites {
        assert_eq!(
            f.fetched().len(),
            9,
            "every site to depth 8: {:?}",
            f.fetched()
        );
    }
}
