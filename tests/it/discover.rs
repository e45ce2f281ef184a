//! Co-link seed discovery end to end: three seed sites link to hosts off
//! the crawl (each a loopback server of its own); `discover seeds` ranks
//! those linked from several sites and shows their loopback address,
//! `--probe` fetches their robots.txt and home page through the guard
//! (which excepts no candidate), `seed accept` takes a loopback host only
//! with `--allow-private`, and accept/reject persist; an accepted host
//! gets no private exception by being accepted.

use crate::common;

use common::{Db, Fixture, anchored, fast};
use trawl::model::HostId;
use trawl::model::{FailReason, SeenState};
use trawl::schema::tables::Sites;
use trawl::schema::{Decision, SiteRecord};
use trawl::settings::{CrawlSettings, Scope};
use trawl::site::Response;

/// A candidate host: its robots.txt and a home page.
async fn candidate(robots: Response, title: &'static str, body: &'static str) -> Fixture {
    Fixture::start(move |p: &str| match p {
        "/robots.txt" => robots.clone(),
        _ => anchored(title, body, &[]),
    })
    .await
}

/// A seed site whose page `/` (and `/1`) link to `links`: (path, href, anchor).
async fn seed_site(links: Vec<(&'static str, String, &'static str)>) -> Fixture {
    Fixture::start(move |p: &str| {
        if p == "/robots.txt" {
            return Response::status(404);
        }
        let on: Vec<(&str, &str)> = links
            .iter()
            .filter(|(at, _, _)| *at == p)
            .map(|(_, href, a)| (href.as_str(), *a))
            .collect();
        anchored(&format!("seed page {p}"), "a seed site", &on)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn co_linked_hosts_are_ranked_probed_and_decisions_persist() {
    let hub = candidate(
        Response::text("User-agent: *\nAllow: /\n"),
        "Physics Hub",
        "quantum physics papers and physics news",
    )
    .await;
    let closed = candidate(
        Response::text("User-agent: *\nDisallow: /\n"),
        "Closed",
        "x",
    )
    .await;
    let pair = candidate(Response::status(503), "Pair", "x").await;
    // Linked from one site only, at a cloud-metadata address.
    let lone = "http://168.63.129.16/".to_string();
    let alpha = seed_site(vec![
        ("/", hub.url("/"), "Physics Hub"),
        ("/", "/1".into(), "more"),
        ("/", lone.clone(), "lone"),
        ("/1", hub.url("/papers"), "physics hub papers"),
        ("/1", pair.url("/"), "Pair"),
    ])
    .await;
    let beta = seed_site(vec![
        ("/", hub.url("/"), "Physics Hub"),
        ("/", pair.url("/p"), "pair site"),
        ("/", closed.url("/"), "closed"),
    ])
    .await;
    let gamma = seed_site(vec![
        ("/", hub.url("/"), "Physics Hub"),
        ("/", closed.url("/x"), "closed"),
    ])
    .await;
    let db = Db::new();
    let settings = CrawlSettings {
        scope: Scope::Host,
        ..common::fast()
    };
    let seeds = [alpha.url("/"), beta.url("/"), gamma.url("/")];
    db.crawl(settings, &seeds).await;
    assert_eq!(alpha.fetched().len(), 2);
    assert!(hub.fetched().is_empty(), "candidates are not crawled");
    let origin = |f: &Fixture| f.url("/").trim_end_matches('/').to_string();

    let out = common::shell(db.store.clone(), vec!["discover seeds --json".into()]).await;
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let top = j["top"].as_array().unwrap();
    let hosts: Vec<&str> = top.iter().map(|c| c["host"].as_str().unwrap()).collect();
    // Hub: 3 sites, 4 pages; closed and pair: 2 sites, 2 pages each (in
    // host order); the lone host has one site.
    let mut two = [origin(&closed), origin(&pair)];
    two.sort();
    assert_eq!(hosts, [origin(&hub).as_str(), &two[0], &two[1]], "{out}");
    assert_eq!(
        (top[0]["sites"].as_u64(), top[0]["pages"].as_u64()),
        (Some(3), Some(4))
    );
    assert_eq!(top[0]["anchors"][0]["text"], "Physics Hub");
    assert_eq!(top[0]["anchors"][0]["count"], 3);
    assert_eq!(j["candidates"], 3);
    // Each is on the loopback: marked, with its address.
    for c in top {
        assert_eq!(c["address"]["class"], "loopback", "{c}");
        assert_eq!(c["address"]["ip"], "127.0.0.1", "{c}");
    }
    let out = common::shell(db.store.clone(), vec!["discover seeds".into()]).await;
    assert!(
        out.contains("3 at a private, loopback or never-fetched address")
            && out.contains("loopback 127.0.0.1"),
        "{out}"
    );

    // Probed through a guard that excepts no candidate: a loopback one is
    // blocked, though the seeds are on the same address.
    let out = common::shell(
        db.store.clone(),
        vec!["discover seeds --probe --json".into()],
    )
    .await;
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["top"][0]["probe"]["robots"], "blocked", "{out}");
    assert!(
        (j["top"][0]["probe"]["detail"].as_str().unwrap())
            .contains("127.0.0.1 is a loopback address"),
        "{out}"
    );
    assert!(hub.hits().is_empty(), "never connected to");

    // Probed with private addresses allowed: hub's home page read and
    // scored; closed's robots.txt forbids it; pair's robots.txt is
    // unreachable; the lone host's address is never fetched.
    common::shell(
        db.store.clone(),
        vec![
            "set topic.keywords physics,quantum".into(),
            "set crawl.delay 0".into(),
            "set net.allow_private true".into(),
        ],
    )
    .await;
    let out = common::shell(
        db.store.clone(),
        vec!["discover seeds --min-colinks 1 --min-sources 1 --probe --json".into()],
    )
    .await;
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let probe = |host: &str| {
        j["top"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["host"] == host)
            .unwrap()["probe"]
            .clone()
    };
    let p = probe(&origin(&hub));
    assert_eq!(
        (
            p["robots"].as_str(),
            p["home"].as_u64(),
            p["title"].as_str()
        ),
        (Some("200"), Some(200), Some("Physics Hub")),
        "{p}"
    );
    assert!(p["topic"].as_f64().unwrap() > 0.0, "{p}");
    let p = probe(&origin(&closed));
    assert!(
        p["home"].is_null() && p["detail"].as_str().unwrap().contains("disallows"),
        "{p}"
    );
    assert_eq!(closed.fetched(), Vec::<String>::new(), "only robots.txt");
    let p = probe(&origin(&pair));
    assert_eq!(p["robots"], "unreachable", "{p}");
    let p = probe("http://168.63.129.16");
    assert_eq!(p["robots"], "blocked", "{p}");
    assert!(
        p["detail"].as_str().unwrap().contains("cloud metadata"),
        "{p}"
    );
    assert_eq!(hub.fetched(), ["/"]);

    // A loopback host is accepted only with --allow-private.
    let err = common::shell_error(
        db.store.clone(),
        format!("seed accept {} --subject physics", origin(&hub)),
    )
    .await;
    assert!(
        err.contains("resolves to 127.0.0.1, a loopback address")
            && err.contains("--allow-private"),
        "{err}"
    );
    let err =
        common::shell_error(db.store.clone(), "seed accept http://168.63.129.16".into()).await;
    assert!(err.contains("never fetches it"), "{err}");
    // Decisions, each in a shell of its own, hold in the next.
    let out = common::shell(
        db.store.clone(),
        vec![
            format!("seed reject {}", origin(&closed)),
            format!(
                "seed accept {} --allow-private --subject physics",
                origin(&hub)
            ),
        ],
    )
    .await;
    assert!(
        out.contains("rejected") && out.contains("accepted"),
        "{out}"
    );
    let err =
        common::shell_error(db.store.clone(), format!("seed reject {}", origin(&alpha))).await;
    assert!(err.contains("is a seed site"), "{err}");
    let out = common::shell(
        db.store.clone(),
        vec!["discover seeds --json".into(), "seeds --json".into()],
    )
    .await;
    let (found, library) = out.split_once("\n[").unwrap();
    let found: serde_json::Value = serde_json::from_str(found).unwrap();
    let left: Vec<&str> = found["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["host"].as_str().unwrap())
        .collect();
    assert_eq!(left, [origin(&pair).as_str()], "{out}");
    let library: serde_json::Value = serde_json::from_str(&format!("[{library}")).unwrap();
    let hub_site = library
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["site"] == origin(&hub).as_str())
        .unwrap();
    // Not crawled yet: its reachability is what the probe found.
    assert_eq!(
        (hub_site["home"].as_u64(), hub_site["robots"].as_str()),
        (Some(200), Some("200"))
    );
    assert_eq!(
        (hub_site["subject"].as_str(), hub_site["source"].as_str()),
        (Some("physics"), Some("co-link discovery"))
    );
}

/// A seed site `seed accept` took without `--allow-private` (as one that
/// resolved to a public address then, or an older trawl's acceptance)
/// gets no private exception by being accepted: its loopback address is
/// refused. Accepted with `--allow-private`, it is crawled there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_host_gets_no_private_exception_without_allow_private() {
    let site = candidate(Response::status(404), "Found", "found by co-links").await;
    let origin = site.url("/").trim_end_matches('/').to_string();
    let db = Db::new();
    let mut b = db.store.batch();
    let accepted = SiteRecord {
        origin: origin.clone(),
        source: "co-link discovery".into(),
        decision: Decision::Accepted,
        ..SiteRecord::default()
    };
    b.put_row::<Sites>(&HostId::of(&origin), &accepted);
    b.write().unwrap();
    let mut s = fast();
    s.robots_max_failures = 1;
    db.crawl(s.clone(), &[site.url("/")]).await;
    assert!(site.hits().is_empty(), "never connected to");
    assert_eq!(
        db.seen(&site.url("/")).unwrap().state,
        SeenState::Failed(FailReason::NetworkGuard)
    );
    let text = common::why(&db.store, &site.url("/")).await;
    assert!(text.contains("127.0.0.1 is a loopback address"), "{text}");

    let out = common::shell(
        db.store.clone(),
        vec![format!("seed accept {origin} --allow-private")],
    )
    .await;
    assert!(out.contains("accepted"), "{out}");
    // (A URL that failed stays failed; another seed on the host is fetched.)
    db.crawl(s, &[site.url("/more")]).await;
    assert_eq!(
        db.seen(&site.url("/more")).unwrap().state,
        SeenState::Fetched { status: 200 }
    );
}
