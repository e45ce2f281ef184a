//! The focused-crawl modes end to end: one loopback server answers for
//! several domain names (fixed to 127.0.0.1 with the resolve override), and
//! each mode's verdicts, scores and link types are checked in the db.

use crate::common;

use common::Db;
use common::by_host::ByHost;
use trawl::filter::Mode;
use trawl::model::{FilterReason, SeenState};
use trawl::schema::LinkRecord;
use trawl::settings::{CrawlSettings, Scope};
use trawl::site::Response;

/// Neutral text that keeps keywords of one link out of the next one's context.
const FILL: &str = "<p>lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod</p>";

fn respond(host: &str, path: &str, port: u16) -> Response {
    let url = |h: &str, p: &str| format!("http://{h}:{port}{p}");
    let a = |href: String, text: &str| format!("{FILL}<a href=\"{href}\">{text}</a>{FILL}");
    let html = |title: &str, body: &str, links: Vec<String>| {
        Response::html(format!(
            "<html><head><title>{title}</title></head><body><p>{body}</p>{}</body></html>",
            links.concat()
        ))
    };
    match (host, path) {
        (_, "/robots.txt") => Response::status(404),
        ("www.uestc.edu.cn", "/") => html(
            "首页",
            "研究生院欢迎你",
            vec![
                a("/news/index.html".into(), "新闻"),
                a(url("news.uestc.edu.cn", "/"), "研究生院新闻"),
                a(url("www.other.com", "/"), "shop"),
                a(url("www.sport.com", "/"), "篮球"),
            ],
        ),
        ("www.uestc.edu.cn", "/news/index.html") => html(
            "新闻",
            "体育新闻",
            vec![
                a("/news/a.html".into(), "a"),
                a("/news/sub/b.html".into(), "b"),
                a("/".into(), "home"),
                a("/edu/c.html".into(), "体育新闻"),
                a("/shop/d.html".into(), "cart"),
            ],
        ),
        ("www.other.com", "/") => html(
            "购物",
            "价格 优惠",
            vec![a(url("www.other.com", "/child"), "child")],
        ),
        ("www.sport.com", "/") => html(
            "研究生论文",
            "研究生 毕业 篮球",
            vec![a(url("www.sport.com", "/child"), "child")],
        ),
        // A portal whose home page is not on topic; its section is.
        ("www.portal.com", "/") => html(
            "Portal - Home",
            "weather markets travel",
            vec![a("/sport/a.html".into(), "news")],
        ),
        ("www.portal.com", "/sport/a.html") => html(
            "篮球",
            "篮球 研究生 篮球",
            vec![a("/sport/b.html".into(), "篮球")],
        ),
        (_, p) => html(p, "page", vec![]),
    }
}

/// The by-host server, asked whether a page was requested.
struct Site(ByHost);

impl Site {
    async fn start() -> Site {
        Site(ByHost::start(respond).await)
    }
    fn url(&self, host: &str, path: &str) -> String {
        self.0.url(host, path)
    }
    fn fetched(&self, host_path: &str) -> bool {
        self.0.requests().iter().any(|(h, _)| h == host_path)
    }
}

async fn crawl(site: &Site, mode: Mode) -> Db {
    let mut s = CrawlSettings {
        scope: Scope::Any,
        max_depth: Some(3),
        ..common::fast()
    };
    s.filter.mode = mode;
    // The loopback stands in for the public hosts (a seed's exception
    // covers only its own host and port, and the names under its wildcard).
    s.fetch.allow_private = true;
    // The uestc names through a wildcard, as `--resolve '*.uestc.edu.cn:…'`.
    s.fetch.resolve = ["*.uestc.edu.cn", "www.other.com", "www.sport.com"]
        .map(|h| (h.to_string(), "127.0.0.1".parse().unwrap()))
        .to_vec();
    let db = Db::new();
    db.crawl(s, &[site.url("www.uestc.edu.cn", "/")]).await;
    db
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_mode_drops_hosts_without_a_key_domain() {
    let site = Site::start().await;
    let db = crawl(&site, Mode::Domain).await;
    assert!(
        site.fetched("news.uestc.edu.cn/"),
        "shares the key domain uestc"
    );
    assert!(!site.fetched("www.other.com/") && !site.fetched("www.sport.com/"));
    let other = db.seen(&site.url("www.other.com", "/")).unwrap();
    assert_eq!(other.state, SeenState::Filtered(FilterReason::Domain));
    assert_eq!(db.store.counters().unwrap().filtered.named("domain"), 2);
    let links: Vec<LinkRecord> = db
        .store
        .links_from(common::id(&site.url("www.uestc.edu.cn", "/")), usize::MAX)
        .unwrap()
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    let dropped: Vec<&LinkRecord> = links
        .iter()
        .filter(|l| l.verdict.name() == "domain")
        .collect();
    assert_eq!(dropped.len(), 2);
    assert!(
        dropped[0].verdict_detail.contains("no key domain (uestc)"),
        "{}",
        dropped[0].verdict_detail
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_topic_mode_keeps_on_topic_pages_off_the_key_domains() {
    let site = Site::start().await;
    let db = crawl(&site, Mode::DomainTopic).await;
    // Stage 2 fetches off-domain pages and judges them by formula (1), preset B.
    assert!(site.fetched("www.other.com/") && site.fetched("www.sport.com/"));
    let sport = db.verdict(&site.url("www.sport.com", "/")).unwrap();
    // Title 研究生 论文, body 研究生 毕业 篮球: (0.4 + 0.3 + 0.1 + 0.1) · (1 + 0.2 · 3) = 1.44.
    assert!(
        (sport.topic_score.unwrap() - 1.44).abs() < 1e-9,
        "{sport:?}"
    );
    assert_eq!(sport.verdict.name(), "keep");
    assert!(
        site.fetched("www.sport.com/child"),
        "an on-topic page's links are followed"
    );
    let other = db.verdict(&site.url("www.other.com", "/")).unwrap();
    assert_eq!(
        (other.verdict.name(), other.topic_score),
        ("topic", Some(0.0))
    );
    assert!(
        other.verdict_detail.contains("domain fails"),
        "{}",
        other.verdict_detail
    );
    assert!(
        !site.fetched("www.other.com/child"),
        "an off-topic page's links are not"
    );
    // www.other.com/ and www.sport.com/child (no keywords) stop there.
    assert_eq!(db.store.counters().unwrap().filtered.named("page-topic"), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relevance_modes_follow_links_of_relevant_pages_by_type() {
    let site = Site::start().await;
    let db = crawl(&site, Mode::Relevance).await;
    let other = db.verdict(&site.url("www.other.com", "/")).unwrap();
    assert_eq!(
        (other.verdict.name(), other.relevance),
        ("relevance", Some(0.0))
    );
    assert!(!site.fetched("www.other.com/child"));
    assert!(
        db.verdict(&site.url("www.sport.com", "/"))
            .unwrap()
            .relevance
            .unwrap()
            >= 0.1
    );
    assert!(site.fetched("www.sport.com/child"));
    assert!(
        site.fetched("www.uestc.edu.cn/shop/d.html"),
        "relevance alone ignores link types"
    );
    // The irrelevant page's link was never followed, so its target has no
    // seen row; refilter without focusing queues it from the link row.
    let child = site.url("www.other.com", "/child");
    assert!(db.seen(&child).is_none());
    let store = db.store.clone();
    let s = CrawlSettings {
        scope: Scope::Any,
        max_depth: Some(3),
        ..common::fast()
    };
    let r = tokio::task::spawn_blocking(move || {
        trawl::crawl::refilter(store, s, Default::default(), &mut |_, _| true).unwrap()
    })
    .await
    .unwrap();
    assert!(r.enqueued >= 1, "{r:?}");
    assert_eq!(db.seen(&child).unwrap().state, SeenState::Queued);
    assert_eq!(
        db.store.url(common::id(&child)).unwrap().as_deref(),
        Some(child.as_str())
    );

    let site = Site::start().await;
    let db = crawl(&site, Mode::RelevanceLinkType).await;
    let news = common::id(&site.url("www.uestc.edu.cn", "/news/index.html"));
    let links: Vec<(String, LinkRecord)> = db
        .store
        .links_from(news, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|(dst, l)| {
            // The row carries its target's URL (link version 4).
            assert_eq!(common::id(&l.dst_url), dst);
            (l.dst_url.clone(), l)
        })
        .collect();
    let kind = |suffix: &str| {
        let (_, l) = links.iter().find(|(u, _)| u.ends_with(suffix)).unwrap();
        (
            l.link_type.map_or("", |t| t.name()).to_string(),
            l.verdict.name().to_string(),
        )
    };
    assert_eq!(kind("/news/a.html"), ("horizontal".into(), "follow".into()));
    assert_eq!(
        kind("/news/sub/b.html"),
        ("downward".into(), "follow".into())
    );
    assert_eq!(
        kind("/edu/c.html"),
        ("crosswise".into(), "follow".into()),
        "anchor 体育新闻 has keywords"
    );
    assert_eq!(
        kind("/shop/d.html"),
        ("crosswise".into(), "link-type".into())
    );
    assert!(
        site.fetched("www.uestc.edu.cn/edu/c.html")
            && !site.fetched("www.uestc.edu.cn/shop/d.html")
    );
    let shop = db
        .seen(&site.url("www.uestc.edu.cn", "/shop/d.html"))
        .unwrap();
    assert_eq!(shop.state, SeenState::Filtered(FilterReason::LinkType));
    // Outward links from the front page: 篮球 and 研究生院新闻 anchors pass, "shop" does not.
    assert!(
        site.fetched("www.sport.com/")
            && site.fetched("news.uestc.edu.cn/")
            && !site.fetched("www.other.com/")
    );
}

/// A seed is where the user said to start: under hard focus its links are
/// followed though the seed itself fails the filters, unless
/// crawl.follow_seed_links is off; `why` says which, and refilter agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_off_topic_still_leads_to_its_links_unless_told_not_to() {
    let portal = |follow_seed_links| {
        let mut s = CrawlSettings {
            follow_seed_links,
            ..common::fast()
        };
        s.filter.mode = Mode::Relevance;
        s.fetch.allow_private = true;
        s.fetch.resolve = vec![("www.portal.com".into(), "127.0.0.1".parse().unwrap())];
        s
    };
    let site = Site::start().await;
    let home = site.url("www.portal.com", "/");
    let db = Db::new();
    db.crawl(portal(true), std::slice::from_ref(&home)).await;
    assert_eq!(db.verdict(&home).unwrap().verdict.name(), "relevance");
    assert!(site.fetched("www.portal.com/sport/a.html"));
    assert!(
        site.fetched("www.portal.com/sport/b.html"),
        "a.html is on topic"
    );
    let text = common::shell(db.store.clone(), vec![format!("why {home}")]).await;
    assert!(
        text.contains("dropped by the relevance filter")
            && text.contains("but its links are followed: it is a seed (crawl.follow_seed_links)"),
        "{text}"
    );
    // The user turns it off: refilter unfollows the seed's links (the
    // target, fetched, stays), and `why` says the links are not followed.
    let r = common::refilter(db.store.clone(), portal(false), false).await;
    assert_eq!(r.links_changed, 1, "{r:?}");
    let cmds = vec![
        "set crawl.follow_seed_links false".to_string(),
        format!("why {home}"),
    ];
    let text = common::shell(db.store.clone(), cmds).await;
    assert!(
        text.contains("its links are not followed: relevance filter"),
        "{text}"
    );

    let site = Site::start().await;
    let home = site.url("www.portal.com", "/");
    let db = Db::new();
    db.crawl(portal(false), std::slice::from_ref(&home)).await;
    assert!(site.fetched("www.portal.com/"));
    assert!(!site.fetched("www.portal.com/sport/a.html"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refilter_requeues_and_drops_without_fetching() {
    let site = Site::start().await;
    let db = crawl(&site, Mode::Domain).await;
    let hits = site.0.requests().len();
    let other = site.url("www.other.com", "/");
    let sport = site.url("www.sport.com", "/");
    let settings = |mode| {
        let mut s = CrawlSettings {
            scope: Scope::Any,
            max_depth: Some(3),
            ..common::fast()
        };
        s.filter.mode = mode;
        s
    };
    let run = |mode, dry| {
        let store = db.store.clone();
        let s = settings(mode);
        let run = trawl::crawl::RefilterRun {
            dry_run: dry,
            ..Default::default()
        };
        move || trawl::crawl::refilter(store, s, run, &mut |_, _| true).unwrap()
    };

    // A dry run reports but writes nothing.
    let r = tokio::task::spawn_blocking(run(Mode::DomainTopic, true))
        .await
        .unwrap();
    assert!(r.dry_run && r.enqueued == 2, "{r:?}");
    assert_eq!(db.store.counters().unwrap().queued, 0);
    assert_eq!(
        db.seen(&other).unwrap().state,
        SeenState::Filtered(FilterReason::Domain)
    );

    // Stage 2 on: the links the domain filter dropped are queued now.
    let r = tokio::task::spawn_blocking(run(Mode::DomainTopic, false))
        .await
        .unwrap();
    assert_eq!((r.enqueued, r.dropped), (2, 0), "{r:?}");
    let c = db.store.counters().unwrap();
    assert_eq!(c.queued, 2);
    assert_eq!(c.filtered.named("domain"), 0);
    assert_eq!(db.seen(&other).unwrap().state, SeenState::Queued);
    assert!(r.pages >= 6 && r.links_changed >= 2);

    // Back to domain only: nothing that passes links to them any more.
    let r = tokio::task::spawn_blocking(run(Mode::Domain, false))
        .await
        .unwrap();
    assert_eq!(r.dropped, 2, "{r:?}");
    assert_eq!(db.store.counters().unwrap().queued, 0);
    assert_eq!(
        db.seen(&sport).unwrap().state,
        SeenState::Filtered(FilterReason::Refiltered)
    );

    // Relevance: pages without keywords change verdict; counts per verdict.
    let r = tokio::task::spawn_blocking(run(Mode::Relevance, false))
        .await
        .unwrap();
    assert_eq!(r.before.get("keep"), Some(&r.pages));
    assert!(
        r.after.get("relevance").copied().unwrap_or(0) > 0 && r.changed > 0,
        "{r:?}"
    );
    let rows = db.store.scan(trawl::schema::CF_DOCS, &[]).count() as u64;
    assert_eq!(r.pages, rows);

    assert_eq!(site.0.requests().len(), hits, "refilter made no request");
    let stored = db.store.counters().unwrap();
    assert_eq!(
        stored.filtered.named("page-relevance"),
        r.after["relevance"]
    );
}

/// Refilter stops when its progress callback says so (the shell's Ctrl-C):
/// the pages done keep their new verdicts, the rest their old ones, and a
/// later run finishes the job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refilter_is_interruptible_and_keeps_work_done() {
    let web = trawl::site::bench::BenchWeb::start(1_200, 1, None)
        .await
        .unwrap();
    let db = Db::new();
    let s = CrawlSettings {
        scope: Scope::Host,
        ..common::fast()
    };
    db.crawl(s.clone(), &web.seeds()).await;
    drop(web);
    let total = db.store.scan(trawl::schema::CF_DOCS, &[]).count() as u64;
    assert!(total > 1_000, "{total} pages stored");

    // A keyword no page has: every page fails relevance.
    let mut s = s;
    s.filter.mode = Mode::Relevance;
    s.filter.relevance_keywords = vec![("zzqx".into(), 1.0)];
    let r = common::refilter(db.store.clone(), s.clone(), true).await;
    assert!(r.interrupted, "{r:?}");
    assert!(r.pages > 0 && r.pages < total, "{} of {total}", r.pages);
    assert_eq!(r.changed, r.pages);

    let r2 = common::refilter(db.store.clone(), s.clone(), false).await;
    assert!(!r2.interrupted);
    assert_eq!(r2.pages, total);
    assert_eq!(r2.before.get("relevance"), Some(&r.pages), "{r2:?}");
    assert_eq!(r2.before.get("keep"), Some(&(total - r.pages)));
    assert_eq!(r2.after.get("relevance"), Some(&total));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_explains_verdicts_refilters_and_lists_runs() {
    let site = Site::start().await;
    let db = crawl(&site, Mode::DomainTopic).await;
    let store = db.store.clone();
    let other = site.url("www.other.com", "/");
    let cmds = vec![
        format!("why {other}"),
        "count pages where verdict = \"topic\"".to_string(),
        "count pages where topic_score > 0.5".to_string(),
        "set filter.mode domain+topic".to_string(),
        "set topic.threshold 2".to_string(),
        "refilter --dry-run".to_string(),
        "runs".to_string(),
        "runs compare 1 1".to_string(),
    ];
    let text = common::shell(store.clone(), cmds).await;
    let e = common::shell_error(store, "runs compare 1 9".into()).await;
    assert!(e.contains("no run 9"), "{e}");
    assert!(text.contains("its links are not followed: topic filter (domain fails; topic score 0.0000 ≤ threshold 0.5"), "{text}");
    let counts: Vec<&str> = text.lines().filter(|l| l.parse::<u64>().is_ok()).collect();
    assert_eq!(counts, ["2", "1"], "{text}");
    // With threshold 2, www.sport.com (score 1.44) no longer passes.
    assert!(
        text.contains("refilter (dry run, nothing written)") && text.contains("keep → topic"),
        "{text}"
    );
    assert!(
        text.contains("domain+topic") && text.contains("links fetched"),
        "{text}"
    );
}

#[test]
fn tlp_experiment_prints_the_three_modes_per_seed() {
    let out = common::output_within(common::trawl_cmd(&[
        "tlp-experiment",
        "--pages",
        "40",
        "--depth",
        "3",
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 12, "{text}");
    for seed in rows.chunks(3) {
        let links = |r: &Vec<&str>| r[2].parse::<u64>().unwrap();
        assert_eq!(
            (seed[0][1], seed[1][1], seed[2][1]),
            ("none", "domain", "domain+topic")
        );
        assert!(
            links(&seed[1]) < links(&seed[2]) && links(&seed[2]) < links(&seed[0]),
            "{text}"
        );
    }
}
