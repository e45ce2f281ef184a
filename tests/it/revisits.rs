//! Revisits (`recrawl`, document 002) on tokio's paused clock: hours and
//! days of virtual time pass in moments, and the fixture server reads the
//! same clock, so its pages change at known times. Validators are sent,
//! 304 and unchanged bodies store nothing new, changed pages keep a
//! history, and change-rate revisits keep more pages fresh than uniform
//! ones for the same number of fetches. Last, on real time, `crawl wait`
//! ends once only revisits remain.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{self, Db, fast};
use trawl::schema::VisitRecord;
use trawl::schema::tables::Visits;
use trawl::settings::{CrawlSettings, RecrawlMode, RecrawlSettings};
use trawl::site::{Request, Response, Server, handler};

pub(crate) const HOUR: u64 = 3_600_000;

/// A request as the server saw it: path, virtual ms since the server
/// started, and the validators it carried.
#[derive(Clone, Debug)]
pub(crate) struct Asked {
    pub path: String,
    pub at_ms: u64,
    if_none_match: Option<String>,
    if_modified_since: Option<String>,
}

pub(crate) struct Site {
    server: Server,
    pub log: Arc<Mutex<Vec<Asked>>>,
}

impl Site {
    /// Serves `respond(path, ms since start, request)` on the paused clock.
    pub(crate) async fn start(
        respond: impl Fn(&str, u64, &Request) -> Response + Send + Sync + 'static,
    ) -> Site {
        let t0 = tokio::time::Instant::now();
        let log: Arc<Mutex<Vec<Asked>>> = Arc::default();
        let l = log.clone();
        let server = Server::bind(handler(move |req: Request| {
            let at_ms = t0.elapsed().as_millis() as u64;
            let header = |k: &str| {
                req.headers
                    .get(k)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            l.lock().unwrap().push(Asked {
                path: req.path.clone(),
                at_ms,
                if_none_match: header("if-none-match"),
                if_modified_since: header("if-modified-since"),
            });
            let r = respond(&req.path, at_ms, &req);
            async move { r }
        }))
        .await
        .expect("bind");
        Site { server, log }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    pub(crate) fn asked(&self, path: &str) -> Vec<Asked> {
        let log = self.log.lock().unwrap();
        log.iter().filter(|a| a.path == path).cloned().collect()
    }

    pub(crate) fn pages_fetched(&self) -> usize {
        let log = self.log.lock().unwrap();
        log.iter().filter(|a| a.path != "/robots.txt").count()
    }
}

/// Crawls `seed` with `policy` for `horizon` of virtual time, then stops.
async fn crawl_for(db: &Db, policy: RecrawlSettings, seed: &str, horizon: Duration) {
    let s = CrawlSettings {
        recrawl: policy,
        ..fast()
    };
    crawl_with(db, s, seed, horizon).await;
}

/// Crawls `seed` under `s` for `horizon` of virtual time, then stops.
pub(crate) async fn crawl_with(db: &Db, s: CrawlSettings, seed: &str, horizon: Duration) {
    let (h, join) = trawl::crawl::start(db.store.clone(), s, &[seed.to_string()]).unwrap();
    tokio::time::sleep(horizon).await;
    h.stop();
    tokio::time::timeout(Duration::from_secs(3600), join)
        .await
        .expect("the crawl stops")
        .unwrap()
        .unwrap();
}

/// Uniform revisits every hour.
pub(crate) fn hourly() -> RecrawlSettings {
    RecrawlSettings {
        mode: RecrawlMode::Uniform,
        every: Duration::from_secs(3600),
        ..RecrawlSettings::default()
    }
}

pub(crate) fn visits(db: &Db, url: &str) -> VisitRecord {
    db.store
        .row::<Visits>(&common::id(url))
        .unwrap()
        .unwrap_or_else(|| panic!("no visits row for {url}"))
}

pub(crate) fn links(paths: &[&str]) -> String {
    paths
        .iter()
        .map(|p| format!("<a href=\"{p}\">{p}</a> "))
        .collect()
}

pub(crate) fn html(title: &str, body: &str) -> Response {
    Response::html(format!(
        "<html><head><title>{title}</title></head><body><p>{body}</p></body></html>"
    ))
}

const LAST_MODIFIED: &str = "Tue, 03 Nov 2026 10:00:00 GMT";

/// `/etag` answers its ETag with 304, `/lm` its Last-Modified, `/same`
/// has no validators and never changes, `/changing` changes every hour.
fn validating(path: &str, at_ms: u64, req: &Request) -> Response {
    let header = |k: &str| req.headers.get(k).and_then(|v| v.to_str().ok());
    match path {
        "/robots.txt" => Response::status(404),
        "/" => html("home", &links(&["/etag", "/lm", "/same", "/changing"])),
        "/etag" if header("if-none-match") == Some("\"v1\"") => {
            Response::status(304).header("etag", "\"v1\"")
        }
        "/etag" => html("etag", "a page with an entity tag").header("etag", "\"v1\""),
        "/lm" if header("if-modified-since") == Some(LAST_MODIFIED) => Response::status(304),
        "/lm" => html("lm", "a page with a date").header("last-modified", LAST_MODIFIED),
        "/same" => html("same", "the same words every time"),
        "/changing" => html(
            "changing",
            &format!("edition {} of a page that changes hourly", at_ms / HOUR),
        ),
        _ => Response::status(404),
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn revisits_send_validators_keep_unchanged_pages_and_record_history() {
    let site = Site::start(validating).await;
    let db = Db::new();
    let policy = hourly();
    // Fetched at about 0 h, then revisited at 1, 2 and 3 h.
    crawl_for(
        &db,
        policy,
        &site.url("/"),
        Duration::from_secs(3 * 3600 + 1800),
    )
    .await;
    for path in ["/", "/etag", "/lm", "/same", "/changing"] {
        assert_eq!(site.asked(path).len(), 4, "{path}: {:?}", site.asked(path));
    }
    let etag = site.asked("/etag");
    assert_eq!(etag[0].if_none_match, None);
    assert!(
        etag[1..]
            .iter()
            .all(|a| a.if_none_match.as_deref() == Some("\"v1\""))
    );
    let lm = site.asked("/lm");
    assert!(
        lm[1..]
            .iter()
            .all(|a| a.if_modified_since.as_deref() == Some(LAST_MODIFIED))
    );

    // 304 and an unchanged body store nothing: the first version stays.
    for path in ["/etag", "/lm", "/same"] {
        let url = site.url(path);
        let page = db.page(&url).unwrap();
        assert_eq!(page.status, 200, "{path}");
        assert!(page.fetched_ms < HOUR + db.page(&site.url("/")).unwrap().fetched_ms);
        let v = visits(&db, &url);
        assert_eq!((v.visits, v.changes, v.history.len()), (4, 0, 0), "{path}");
    }
    // The changing page: three new versions, the old ones in its history.
    let url = site.url("/changing");
    let v = visits(&db, &url);
    assert_eq!((v.visits, v.changes, v.history.len()), (4, 3, 3));
    let page = db.page(&url).unwrap();
    let body = String::from_utf8(page.body().unwrap()).unwrap();
    assert!(body.contains("edition 3 of"), "{body}");
    assert!(
        v.history
            .windows(2)
            .all(|w| w[0].replaced_ms <= w[1].fetched_ms)
    );
    assert_ne!(v.history[0].md5, page.md5);

    let c = db.store.counters().unwrap();
    assert_eq!((c.fetched, c.revisits, c.revisits_changed), (5, 15, 3));
    assert!(c.due == 5 && c.revisits_queued == 0, "{c:?}");
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:?}");

    let out = common::shell(
        db.store.clone(),
        vec![
            format!("page {url} --history"),
            "status".into(),
            format!("why {url}"),
            "count pages where changes > 0".into(),
            "count pages where visits = 4 and change_rate > 10".into(),
        ],
    )
    .await;
    assert!(
        out.contains("visits        4 (3 found it changed)"),
        "{out}"
    );
    assert_eq!(
        out.matches(" → ").count(),
        4,
        "three past versions and the stored one: {out}"
    );
    assert!(out.contains("(stored)"), "{out}");
    assert!(out.contains("15 done, 3 found changed; fresh ≈"), "{out}");
    // Only /changing changed, at every hourly visit: λ well above 10 a day.
    assert!(out.trim_end().ends_with("\n1\n1"), "{out}");
    assert!(out.contains("; visits 4 (3 found it changed)"), "{out}");
}

/// A deterministic Poisson process: change times (ms) with mean gap
/// `mean_ms` up to `until_ms`, from `seed`.
fn changes(seed: u64, mean_ms: f64, until_ms: u64) -> Vec<u64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut t = 0.0;
    let mut out = Vec::new();
    loop {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        t += -(1.0 - u).ln() * mean_ms;
        if t >= until_ms as f64 {
            return out;
        }
        out.push(t as u64);
    }
}

/// Pages `/p0`… with their change times: five change every 2 h on
/// average, five every 12 h, twenty never (most of the web).
fn schedules(until_ms: u64) -> Vec<Vec<u64>> {
    (0..30u64)
        .map(|i| match i {
            0..5 => changes(i + 1, 2.0 * HOUR as f64, until_ms),
            5..10 => changes(i + 1, 12.0 * HOUR as f64, until_ms),
            _ => Vec::new(),
        })
        .collect()
}

fn version_at(changes: &[u64], at_ms: u64) -> usize {
    changes.partition_point(|&c| c <= at_ms)
}

/// A site whose pages change on `plan`.
async fn changing_site(plan: Arc<Vec<Vec<u64>>>) -> Site {
    Site::start(move |path, at_ms, _| match path {
        "/robots.txt" => Response::status(404),
        "/" => {
            let all: Vec<String> = (0..plan.len()).map(|i| format!("/p{i}")).collect();
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            html("home", &links(&all))
        }
        p => match p.strip_prefix("/p").and_then(|n| n.parse::<usize>().ok()) {
            Some(i) if i < plan.len() => html(
                p,
                &format!("version {} of page {i}", version_at(&plan[i], at_ms)),
            ),
            _ => Response::status(404),
        },
    })
    .await
}

/// The share of (page, minute) samples from `from_ms` to `to_ms` at which
/// the version last fetched was the live one (a page not fetched yet is
/// stale).
fn freshness(site: &Site, plan: &[Vec<u64>], from_ms: u64, to_ms: u64) -> f64 {
    let (mut fresh, mut samples) = (0u64, 0u64);
    for (i, changes) in plan.iter().enumerate() {
        let fetches: Vec<u64> = site
            .asked(&format!("/p{i}"))
            .iter()
            .map(|a| a.at_ms)
            .collect();
        let mut t = from_ms;
        while t < to_ms {
            let last = fetches.iter().copied().filter(|&f| f <= t).max();
            samples += 1;
            if last.is_some_and(|f| version_at(changes, f) == version_at(changes, t)) {
                fresh += 1;
            }
            t += 60_000;
        }
    }
    fresh as f64 / samples as f64
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn change_rate_revisits_keep_more_pages_fresh_than_uniform_for_the_same_fetches() {
    let horizon = 7 * 24 * HOUR;
    let plan = Arc::new(schedules(horizon + HOUR));
    // The first day is the change-rate estimates' warm-up: freshness is
    // compared over the six days after it.
    let warm = 24 * HOUR;

    let adaptive = changing_site(plan.clone()).await;
    let db = Db::new();
    let policy = RecrawlSettings {
        mode: RecrawlMode::ChangeRate,
        min: Duration::from_secs(3600),
        max: Duration::from_secs(7 * 24 * 3600),
        ..RecrawlSettings::default()
    };
    crawl_for(
        &db,
        policy,
        &adaptive.url("/"),
        Duration::from_millis(horizon),
    )
    .await;
    let fetches_adaptive = adaptive.pages_fetched();
    let fresh_adaptive = freshness(&adaptive, &plan, warm, horizon);
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:?}");

    // Uniform revisits given the same number of fetches over the horizon.
    // (Uniform fetches each page once, then once every interval.)
    let pages = plan.len() as f64 + 1.0;
    let every_ms = (horizon as f64 / (fetches_adaptive as f64 / pages - 1.0)) as u64;
    let uniform = changing_site(plan.clone()).await;
    let db = Db::new();
    let policy = RecrawlSettings {
        mode: RecrawlMode::Uniform,
        every: Duration::from_millis(every_ms / 60_000 * 60_000),
        ..RecrawlSettings::default()
    };
    crawl_for(
        &db,
        policy,
        &uniform.url("/"),
        Duration::from_millis(horizon),
    )
    .await;
    let fetches_uniform = uniform.pages_fetched();
    let fresh_uniform = freshness(&uniform, &plan, warm, horizon);
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:?}");

    eprintln!(
        "7 days, 31 pages (5 changing every 2 h, 5 every 12 h, 21 static): \
         change-rate {fetches_adaptive} fetches, fresh {:.1}%; \
         uniform every {:.1} h {fetches_uniform} fetches, fresh {:.1}%",
        fresh_adaptive * 100.0,
        every_ms as f64 / HOUR as f64,
        fresh_uniform * 100.0
    );
    let ratio = fetches_uniform as f64 / fetches_adaptive as f64;
    assert!(
        (0.9..=1.1).contains(&ratio),
        "fetches {fetches_uniform} vs {fetches_adaptive}"
    );
    assert!(
        fresh_adaptive > fresh_uniform + 0.02,
        "change-rate {fresh_adaptive:.3} vs uniform {fresh_uniform:.3}"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_sitemap_lastmod_newer_than_the_last_visit_makes_a_page_due() {
    let base: Arc<std::sync::OnceLock<String>> = Arc::default();
    let b = base.clone();
    let wall0 = trawl::model::now_ms();
    // /slow answers after two hours the first time, so /news, found on it,
    // is first visited two hours after the sitemap; from the first hour on
    // the sitemap says /news changed a minute before it is read.
    let site = Site::start(move |path, at_ms, _| {
        let base = b.get().cloned().unwrap_or_default();
        let lastmod = if at_ms < HOUR {
            "2000-01-01".to_string()
        } else {
            w3c(wall0 + at_ms - 60_000)
        };
        match path {
            "/robots.txt" => Response::text(format!("User-agent: *\nSitemap: {base}/map.xml\n")),
            "/" => html("home", &links(&["/slow"])),
            "/slow" if at_ms < HOUR => {
                html("slow", &links(&["/news"])).delayed(Duration::from_secs(2 * 3600))
            }
            "/slow" => html("slow", &links(&["/news"])),
            "/news" => html("news", &format!("news at {at_ms}")),
            "/map.xml" => Response::new(
                200,
                format!(
                    "<urlset><url><loc>{base}/news</loc><lastmod>{lastmod}</lastmod></url>\
                     <url><loc>{base}/news</loc><lastmod>{lastmod}</lastmod></url></urlset>"
                ),
            )
            .header("content-type", "application/xml"),
            _ => Response::status(404),
        }
    })
    .await;
    base.set(site.url("")).unwrap();
    let db = Db::new();
    // Every page is due 10 h after its visit: the sitemap, read again at
    // 10 h, makes /news due then rather than at 12 h.
    let mut s = CrawlSettings {
        recrawl: RecrawlSettings {
            mode: RecrawlMode::Uniform,
            every: Duration::from_secs(10 * 3600),
            ..RecrawlSettings::default()
        },
        ..fast()
    };
    s.fetch.total_timeout = Duration::from_secs(3 * 3600);
    s.fetch.first_byte_timeout = Duration::from_secs(3 * 3600);
    s.sitemaps.enabled = true;
    let (h, join) = trawl::crawl::start(db.store.clone(), s, &[site.url("/")]).unwrap();
    tokio::time::sleep(Duration::from_secs(11 * 3600)).await;
    h.stop();
    join.await.unwrap().unwrap();
    let news = site.asked("/news");
    let map = site.asked("/map.xml");
    let log = format!("{:?}", site.log.lock().unwrap());
    assert_eq!((news.len(), map.len()), (2, 2), "{log}");
    assert!(
        news[0].at_ms >= 2 * HOUR && map[1].at_ms <= news[1].at_ms,
        "{log}"
    );
    assert!(news[1].at_ms < news[0].at_ms + 10 * HOUR - HOUR, "{log}");
    let v = visits(&db, &site.url("/news"));
    assert_eq!((v.visits, v.changes), (2, 1));
    // The next revisit is the policy's again.
    assert!(v.due_ms >= v.last_ms + 10 * HOUR, "{v:?}");
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
}

/// `ms` since the epoch as a W3C datetime (a sitemap's `<lastmod>`).
pub(crate) fn w3c(ms: u64) -> String {
    // "Tue, 03 Nov 2026 10:00:00 GMT"
    let http = httpdate::fmt_http_date(std::time::UNIX_EPOCH + Duration::from_millis(ms));
    let p: Vec<&str> = http.split(' ').collect();
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = months.iter().position(|m| *m == p[2]).unwrap() + 1;
    format!("{}-{month:02}-{}T{}Z", p[3], p[1], p[4])
}

/// Home's links change at 1 h; /b answers 500 in the second hour.
fn unsteady(path: &str, at_ms: u64, _: &Request) -> Response {
    match path {
        "/robots.txt" => Response::status(404),
        "/" if at_ms < HOUR => html("home", &links(&["/a", "/b"])),
        "/" => html("home, rearranged", &links(&["/b", "/c"])),
        "/b" if (HOUR..2 * HOUR).contains(&at_ms) => Response::status(500),
        p => html(p, "a page that stays the same"),
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_new_version_replaces_the_old_links_and_a_server_error_keeps_the_page() {
    let site = Site::start(unsteady).await;
    let db = Db::new();
    let policy = hourly();
    crawl_for(
        &db,
        policy,
        &site.url("/"),
        Duration::from_secs(2 * 3600 + 1800),
    )
    .await;
    // Home's second version links /c, found and fetched then.
    assert_eq!(site.asked("/c").len(), 2);
    let home = common::id(&site.url("/"));
    let out: Vec<String> = db
        .store
        .links_from(home, 10)
        .unwrap()
        .into_iter()
        .map(|(_, l)| l.dst_url)
        .collect();
    assert_eq!(out, [site.url("/b"), site.url("/c")]);
    // The 500 kept the stored /b; the next revisit found it unchanged.
    let b = site.url("/b");
    assert_eq!(site.asked("/b").len(), 3);
    assert_eq!(db.page(&b).unwrap().status, 200);
    let v = visits(&db, &b);
    assert_eq!((v.visits, v.changes, v.failures), (2, 0, 1), "{v:?}");
    assert!(v.last_error.contains("500"), "{v:?}");
    let c = db.store.counters().unwrap();
    assert_eq!(c.by_status.get(&200), Some(&4), "{c:?}");
    assert_eq!(c.links, 2, "the stored home's two links: {c:?}");
    // In-links and links agree: /a lost its in-link from home.
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    let why = common::why(&db.store, &b).await;
    assert!(why.contains("1 missed (last: status 500"), "{why}");
}

/// Runs `cmd` in `sh`, interrupting it as Ctrl-C would once it has run
/// for `limit`: a wait that never ends fails the test instead of hanging.
fn within(sh: &mut trawl::shell::Shell, cmd: &str, limit: Duration) -> Result<(), String> {
    let flag = sh.interrupt_flag();
    let (done, rx) = std::sync::mpsc::channel::<()>();
    let dog = std::thread::spawn(move || {
        if rx.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let r = sh.execute(cmd);
    drop(done);
    dog.join().unwrap();
    r
}

/// With revisits on a crawl never ends by itself (it waits for the next
/// due page), so `crawl wait` ends with a note once only revisits remain,
/// and so does `crawl wait --pages N` with N beyond the pages there are;
/// the crawl goes on, and takes a seed added meanwhile before the next
/// wait ends.
#[test]
fn crawl_wait_ends_when_only_revisits_remain() {
    let rt = crate::shell::runtime();
    let f = rt.block_on(common::Fixture::start(|p: &str| match p {
        "/robots.txt" => Response::status(404),
        "/" => common::page("home", &["/a", "/b"]),
        p => common::page(p, &[]),
    }));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(trawl::store::Store::open(&dir.path().join("db")).unwrap());
    let (mut sh, out) = crate::shell::shell(store, &rt);
    for cmd in [
        "set crawl.delay 0".to_string(),
        "recrawl uniform 1d".into(),
        format!("seed add {}", f.url("/")),
        "crawl start".into(),
    ] {
        sh.execute(&cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    let limit = Duration::from_secs(120);
    within(&mut sh, "crawl wait", limit).expect("crawl wait ends");
    let text = out.take();
    assert!(
        text.contains("only revisits remain: the next is due in 23h")
            && text.contains("the crawl goes on"),
        "{text}"
    );
    assert_eq!(f.fetched().len(), 3, "{:?}", f.fetched());
    sh.execute("status").unwrap();
    assert!(out.take().contains("state       running"));

    within(&mut sh, "crawl wait --pages 50", limit).expect("crawl wait --pages ends");
    let text = out.take();
    assert!(
        text.contains("only revisits remain (3 pages fetched, short of --pages 50)"),
        "{text}"
    );
    within(&mut sh, "crawl wait --pages 3", limit).unwrap();
    assert_eq!(out.take(), "");

    // New work first: the wait does not end on the idle state before it,
    // however soon after the change it starts (30 tries at the race).
    for i in 0..30 {
        let c = format!("/c{i}");
        sh.execute(&format!("seed add {}", f.url(&c))).unwrap();
        within(&mut sh, "crawl wait", limit).expect("crawl wait ends");
        assert_eq!(f.count(&c), 1, "the new seed {c} was fetched first");
        assert!(out.take().contains("only revisits remain"));
    }

    sh.execute("crawl stop").unwrap();
    let text = out.take();
    assert!(text.contains("crawl stopped: 33 pages fetched"), "{text}");
}
