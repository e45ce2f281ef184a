//! The crawl loop's limits and lifecycle: depth, page limit, scope,
//! non-HTML responses, timeouts, and a clean stop on SIGTERM.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Db, Fixture, fast, page};
use trawl::model::{FailReason, FilterReason, SeenState};
use trawl::settings::Scope;
use trawl::site::Response;

/// `/d/N` links to `/d/N+1`, plus one link to another host.
fn chain(other: String) -> impl Fn(&str) -> Response + Send + Sync + 'static {
    move |p: &str| {
        if p == "/robots.txt" {
            return Response::status(404);
        }
        let n: u32 = p.trim_start_matches("/d/").parse().unwrap_or(0);
        page(&format!("level {n}"), &[&format!("/d/{}", n + 1), &other])
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depth_limit_and_scope() {
    let outside = Fixture::start(|p: &str| {
        if p == "/robots.txt" {
            Response::status(404)
        } else {
            page("outside", &[])
        }
    })
    .await;
    let f = Fixture::start(chain(outside.url("/elsewhere"))).await;
    let db = Db::new();
    let mut s = fast();
    s.max_depth = Some(3);
    let summary = db.crawl(s, &[f.url("/d/0")]).await;
    for n in 0..=3 {
        assert_eq!(f.count(&format!("/d/{n}")), 1);
    }
    assert_eq!(f.count("/d/4"), 0);
    let deep = db.seen(&f.url("/d/4")).unwrap();
    assert_eq!(
        (deep.state, deep.depth),
        (SeenState::Filtered(FilterReason::Depth), 4)
    );
    assert_eq!(
        outside.hits().len(),
        0,
        "scope host keeps to the seed's host"
    );
    assert_eq!(
        db.seen(&outside.url("/elsewhere")).unwrap().state,
        SeenState::Filtered(FilterReason::Scope)
    );
    assert_eq!(summary.run_fetched, 4);
    assert!((summary.tlp() - summary.elapsed.as_secs_f64() * 4.0).abs() < 1e-9);

    // Same db, deeper limit and scope any: the depth-filtered URL is taken up
    // again and the other host is entered.
    let mut s = fast();
    s.max_depth = Some(5);
    s.scope = Scope::Any;
    db.crawl(s, &[f.url("/d/0")]).await;
    assert_eq!(f.count("/d/0"), 1, "nothing fetched twice across runs");
    assert_eq!(f.count("/d/4"), 1);
    assert_eq!(f.count("/d/5"), 1);
    assert_eq!(f.count("/d/6"), 0);
}

/// A URL first found too deep is queued when a shallower link to it turns
/// up later in the same run (the repeat-link cache must not hide it), and
/// links to URLs already settled change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shallower_link_later_in_the_run_queues_a_url_found_too_deep() {
    let fast_host = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let target = fast_host.clone();
    // The slow host's page links to the target at depth 2, but answers only
    // after the fast host has found the target at depth 3.
    let slow = Fixture::start(move |p: &str| match p {
        "/robots.txt" => Response::status(404),
        _ => page(
            "slow",
            &[&format!("{}/t", target.get().cloned().unwrap_or_default())],
        )
        .delayed(Duration::from_millis(600)),
    })
    .await;
    let slow_url = slow.url("/y");
    let f = Fixture::start(move |p: &str| match p {
        "/robots.txt" => Response::status(404),
        "/" => page("root", &["/x1", &slow_url, "/x1"]),
        "/x1" => page("x1", &["/x2", "/", "/x1"]),
        "/x2" => page("x2", &["/t", "/x1", "/"]),
        _ => page("leaf", &["/", "/x1", "/x2"]),
    })
    .await;
    fast_host
        .set(f.url("").trim_end_matches('/').to_string())
        .unwrap();
    let db = Db::new();
    let mut s = fast();
    s.max_depth = Some(2);
    s.scope = Scope::Any;
    // The slow host, on another loopback port, stands in for a public one.
    s.fetch.allow_private = true;
    db.crawl(s, &[f.url("/")]).await;
    assert_eq!(slow.count("/y"), 1);
    assert_eq!(f.count("/t"), 1, "the shallower path queued /t");
    let t = db.seen(&f.url("/t")).unwrap();
    assert_eq!((t.state, t.depth), (SeenState::Fetched { status: 200 }, 2));
    for p in ["/", "/x1", "/x2"] {
        assert_eq!(f.count(p), 1, "{p} fetched once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_stops_the_crawl_and_counts_the_whole_db() {
    let f = Fixture::start(chain("/d/0".into())).await;
    let db = Db::new();
    let mut s = fast();
    s.max_pages = Some(5);
    db.crawl(s.clone(), &[f.url("/d/0")]).await;
    assert_eq!(f.page_times().len(), 5);
    let c = db.store.counters().unwrap();
    assert_eq!((c.fetched, c.queued), (5, 1));
    // Resuming with a higher limit goes on from where it stopped.
    s.max_pages = Some(8);
    let summary = db.crawl(s, &[]).await;
    assert_eq!(summary.run_fetched, 3);
    assert_eq!(f.page_times().len(), 8);
}

/// A page yields at most `max_outlinks` links, the rest counted in a
/// notice: small pages parsed inline and large ones (> 512 KiB, parsed on
/// the blocking pool one at a time) alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_past_max_outlinks_are_dropped_with_a_notice() {
    let big: String = (0..50_000)
        .map(|i| format!("<a href=/b{i}>b</a>"))
        .collect();
    assert!(big.len() > 512 << 10);
    let f = Fixture::start(move |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => {
            let links: Vec<String> = (0..30).map(|i| format!("/s{i}")).collect();
            let mut l: Vec<&str> = links.iter().map(|s| s.as_str()).collect();
            l.insert(0, "/big");
            page("home", &l)
        }
        "/big" => Response::html(format!("<title>big</title>{big}")),
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    let mut s = fast();
    s.max_outlinks = 10;
    s.max_depth = Some(1);
    let (h, join) = trawl::crawl::start(db.store.clone(), s, &[f.url("/")]).unwrap();
    tokio::time::timeout(common::PROCESS_LIMIT, join)
        .await
        .expect("crawl ends")
        .unwrap()
        .unwrap();
    // "/" keeps /big and /s0../s8; /big keeps /b0../b9 (depth 2: not fetched).
    assert_eq!(f.count("/s8"), 1);
    assert_eq!(f.count("/s9"), 0);
    assert_eq!(db.doc(&f.url("/")).unwrap().outlinks, 10);
    assert_eq!(db.doc(&f.url("/big")).unwrap().outlinks, 10);
    assert!(db.seen(&f.url("/b9")).is_some());
    assert!(db.seen(&f.url("/b10")).is_none());
    assert_eq!(db.store.counters().unwrap().links, 20);
    assert_eq!(h.snapshot().run_capped_links, 21 + 49_990);
    let notices = h.take_notices();
    for (path, dropped) in [("/", 21), ("/big", 49_990)] {
        let want = format!(
            "{}: {dropped} more links than crawl.max_outlinks (10)",
            f.url(path)
        );
        assert!(
            notices.iter().any(|n| n.starts_with(&want)),
            "{want} in {notices:?}"
        );
    }
    // why names the page and the cap of a URL linked past it; status
    // keeps the count after the run.
    let cmds = vec![
        format!("why {}", f.url("/s20")),
        format!("why {}", f.url("/b30000")),
        format!("why {}", f.url("/nowhere")),
        "status".to_string(),
    ];
    let text = common::shell(db.store.clone(), cmds).await;
    for want in [
        format!(
            "not queued: linked from {} as its link 22 of 31 (repeats and mailto: counted), past crawl.max_outlinks = 10 (10 links taken, 21 dropped)",
            f.url("/")
        ),
        format!(
            "not queued: linked from {} as its link 30,001 of 50,000 (repeats and mailto: counted), past crawl.max_outlinks = 10",
            f.url("/big")
        ),
        "never seen: no fetched page links to it".to_string(),
        "links cut   50,011 in all, past crawl.max_outlinks".to_string(),
    ] {
        assert!(text.contains(&want), "{want} in {text}");
    }
}

/// Every page reachable by links is fetched with the default link caps: an
/// index of 20,000 links whose last leads to a chain of two pages of 8,000
/// links each, the next page of the chain linked last (past 6,000, where
/// Heritrix's cap and trawl's old one stopped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_linked_from_big_index_pages_is_fetched_by_default() {
    const INDEX: usize = 20_000;
    const CHAIN: usize = 2;
    const EACH: usize = 8_000;
    let index: String = (0..INDEX)
        .map(|i| format!("<li><a href=\"/p/{i}\">page {i}</a></li>"))
        .chain(std::iter::once("<a href=/c/0>chain</a>".to_string()))
        .collect();
    let f = Fixture::start(move |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => Response::html(format!("<title>index</title><ul>{index}</ul>")),
        p if p.starts_with("/c/") => {
            let k: usize = p[3..].parse().unwrap_or(CHAIN);
            let mut body: String = (0..EACH)
                .map(|i| format!("<a href=/q/{k}/{i}>q {i}</a> "))
                .collect();
            if k + 1 < CHAIN {
                body += &format!("<a href=/c/{}>next</a>", k + 1);
            }
            Response::html(format!("<title>chain {k}</title>{body}"))
        }
        p => page(p, &[]),
    })
    .await;
    let db = Db::new();
    let mut s = fast();
    s.per_host = 8;
    let summary = db.crawl(s, &[f.url("/")]).await;
    let want = 1 + INDEX + CHAIN + CHAIN * EACH;
    assert_eq!(summary.run_fetched as usize, want);
    assert_eq!(f.count(&format!("/q/{}/{}", CHAIN - 1, EACH - 1)), 1);
    assert_eq!(db.doc(&f.url("/")).unwrap().outlinks as usize, INDEX + 1);
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Bodies over 1 MiB share four permits (memory bound): eight fetched at
/// once all arrive, stored whole, their length recorded after the body is
/// released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_large_bodies_at_once_are_all_stored() {
    let big = |i: usize| format!("<title>big {i}</title><p>{}</p>", "word ".repeat(300_000));
    let f = Fixture::start(move |path: &str| match path {
        "/robots.txt" => Response::status(404),
        "/" => {
            let links: Vec<String> = (0..8).map(|i| format!("/big{i}")).collect();
            let l: Vec<&str> = links.iter().map(|s| s.as_str()).collect();
            page("home", &l)
        }
        p => match p.strip_prefix("/big").and_then(|n| n.parse().ok()) {
            Some(i) => Response::html(big(i)),
            None => page(p, &[]),
        },
    })
    .await;
    let db = Db::new();
    let mut s = fast();
    s.per_host = 8;
    db.crawl(s, &[f.url("/")]).await;
    for i in 0..8 {
        let url = f.url(&format!("/big{i}"));
        let rec = db.page(&url).unwrap_or_else(|| panic!("{url} stored"));
        assert_eq!(rec.body_len, big(i).len() as u64);
        assert!(!rec.truncated);
        assert_eq!(db.doc(&url).unwrap().title, format!("big {i}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_html_is_recorded_not_parsed_and_long_urls_are_counted() {
    let long = format!("/{}", "x".repeat(2100));
    let home_links = ["/doc.pdf", "/data.json", long.as_str()].map(str::to_string);
    let f = Fixture::start(move |p: &str| match p {
        "/robots.txt" => Response::status(404),
        "/" => page(
            "home",
            &home_links.iter().map(String::as_str).collect::<Vec<_>>(),
        ),
        "/doc.pdf" => Response::new(200, "%PDF-1.4 <a href=/from-pdf>")
            .header("content-type", "application/pdf"),
        "/data.json" => Response::new(200, "{\"a\": \"<a href=/from-json>\"}")
            .header("content-type", "application/json"),
        _ => page("other", &[]),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    let pdf = db.page(&f.url("/doc.pdf")).unwrap();
    assert_eq!(
        (pdf.status, pdf.content_type.as_str(), pdf.body_len),
        (200, "application/pdf", 27)
    );
    assert!(db.doc(&f.url("/doc.pdf")).is_none(), "not parsed");
    assert!(db.page(&f.url("/data.json")).is_some());
    assert_eq!(f.count("/from-pdf") + f.count("/from-json"), 0);
    assert_eq!(
        db.store.counters().unwrap().filtered.named("url-too-long"),
        1
    );
    assert_eq!(f.hits().iter().filter(|h| h.path.len() > 2000).count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_servers_time_out() {
    let f = Fixture::start(|p: &str| match p {
        "/robots.txt" => Response::status(404),
        "/" => page("home", &["/slow", "/fine"]),
        "/slow" => page("slow", &[]).delayed(Duration::from_secs(5)),
        _ => page("fine", &[]),
    })
    .await;
    let db = Db::new();
    let mut s = fast();
    s.fetch.first_byte_timeout = Duration::from_millis(300);
    let start = Instant::now();
    db.crawl(s, &[f.url("/")]).await;
    assert!(start.elapsed() < Duration::from_secs(4));
    assert_eq!(
        db.seen(&f.url("/slow")).unwrap().state,
        SeenState::Failed(FailReason::Timeout)
    );
    assert_eq!(db.page(&f.url("/fine")).unwrap().status, 200);
    assert_eq!(db.store.counters().unwrap().failed.named("timeout"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_cleanly_and_the_rerun_finishes() {
    let f = Fixture::start(common::chain(Duration::from_millis(20))).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let seed = f.url("/d/0");
    let args = move |db: &std::path::Path| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_trawl"));
        c.args(["crawl", "--db"]).arg(db).args([
            "--seed",
            &seed,
            "--delay-ms",
            "0",
            "--depth",
            "60",
        ]);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        c
    };
    let child = args(&db).spawn().unwrap();
    common::wait_until_async("10 pages fetched", common::PROCESS_LIMIT, || {
        f.page_times().len() >= 10
    })
    .await;
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = tokio::task::spawn_blocking(move || common::output_of(child))
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "exit 0 after SIGTERM: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("crawl stopped"), "{stdout}");
    let stopped_at = f.page_times().len();
    assert!(stopped_at < 61);

    let out = tokio::task::spawn_blocking(move || common::output_within(args(&db)))
        .await
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("crawl finished"));
    let mut paths: Vec<String> = f
        .hits()
        .into_iter()
        .map(|h| h.path)
        .filter(|p| p != "/robots.txt")
        .collect();
    let total = paths.len();
    paths.sort();
    paths.dedup();
    assert_eq!(total, paths.len(), "a clean stop loses and repeats nothing");
    assert_eq!(paths.len(), 61);
}

/// Accepts connections, counts them, and relays each to `to`.
async fn counting_relay(
    to: std::net::SocketAddr,
) -> (
    u16,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    tokio::task::JoinHandle<()>,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(AtomicUsize::new(0));
    let n = accepted.clone();
    let task = tokio::spawn(async move {
        let mut relays = tokio::task::JoinSet::new();
        while let Ok((mut inbound, _)) = listener.accept().await {
            n.fetch_add(1, Ordering::SeqCst);
            relays.spawn(async move {
                if let Ok(mut out) = tokio::net::TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                }
            });
            while relays.try_join_next().is_some() {}
        }
    });
    (port, accepted, task)
}

/// Over many hosts each host keeps one connection: while more hosts are
/// ready than there are slots, a host has one page in flight, and its next
/// page goes out first when that one is done, on the same connection.
/// Round-robin over the hosts made a connection per page once the hosts
/// outnumbered the idle connections kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_hosts_keep_one_connection_each() {
    const HOSTS: usize = 40;
    const PAGES: usize = 6;
    let port = std::sync::Arc::new(std::sync::atomic::AtomicU16::new(0));
    let p = port.clone();
    let server = trawl::site::Server::bind(trawl::site::handler(move |req| {
        let port = p.load(std::sync::atomic::Ordering::SeqCst);
        let host = req.host();
        let i: usize = host
            .trim_start_matches('h')
            .split('.')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let r = match req.path.as_str() {
            "/robots.txt" => Response::status(404),
            "/" => {
                // h0 links to every home: all hosts are ready at once.
                let homes = if i == 0 { HOSTS } else { 0 };
                let links: Vec<String> = (1..PAGES)
                    .map(|n| format!("/p{n}"))
                    .chain((1..homes).map(|h| format!("http://h{h}.many.test:{port}/")))
                    .collect();
                let links: Vec<&str> = links.iter().map(String::as_str).collect();
                page(&format!("home {i}"), &links)
            }
            p => page(&format!("{host}{p}"), &[]),
        };
        async move { r }
    }))
    .await
    .unwrap();
    let (relay_port, accepted, relay) = counting_relay(server.addr()).await;
    port.store(relay_port, std::sync::atomic::Ordering::SeqCst);
    let db = Db::new();
    let mut s = fast();
    s.scope = Scope::Any;
    (s.concurrency, s.per_host) = (8, 8);
    s.fetch.idle_connections = 8;
    s.fetch.resolve = vec![("*.many.test".into(), "127.0.0.1".parse().unwrap())];
    let summary = db
        .crawl(s, &[format!("http://h0.many.test:{relay_port}/")])
        .await;
    relay.abort();
    assert_eq!(summary.run_fetched, (HOSTS * PAGES) as u64);
    let connections = accepted.load(std::sync::atomic::Ordering::SeqCst);
    // One per host, with some slack for the first host's parallel pages
    // (fewer hosts than slots are ready then) and evictions.
    assert!(
        connections <= 2 * HOSTS,
        "{connections} connections for {HOSTS} hosts, {} requests",
        HOSTS * (PAGES + 1)
    );
}
