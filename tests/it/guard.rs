//! The network guard and seed redirects: a seed on 127.0.0.1 crawls, while
//! links and redirects to other private addresses (a server listening on
//! 127.0.0.2, a name that resolves there, the cloud-metadata addresses),
//! and to another port or another name of a seed's own address, are
//! refused before any connection; a seed's redirect (http→https,
//! apex→www, a chain) and its robots.txt redirect within its registrable
//! domain bring the target's host into scope.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Db, fast, why};
use trawl::model::{FailReason, FilterReason, SeenState};
use trawl::settings::Scope;
use trawl::site::{Request, Response, Server, handler};

/// A listener on `addr` that counts the connections it accepts.
async fn counting_listener(addr: &str) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let l = tokio::net::TcpListener::bind(addr).await.unwrap();
    let a = l.local_addr().unwrap();
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            n2.fetch_add(1, Ordering::SeqCst);
            drop(s);
        }
    });
    (a, n)
}

/// A site whose pages link and redirect to `private` (a listening
/// 127.0.0.2 address) and to the metadata address.
fn site(private: std::net::SocketAddr, port: u16) -> trawl::site::Handler {
    handler(move |req: Request| {
        let r = match req.path.as_str() {
            "/robots.txt" => Response::status(404),
            "/" => common::page(
                "home",
                &[
                    &format!("http://{private}/linked"),
                    "http://169.254.169.254/latest/meta-data/",
                    "http://168.63.129.16/machine/?comp=goalstate",
                    "http://192.0.0.192/opc/v2/instance/",
                    &format!("http://evil.test:{}/rebound", private.port()),
                    "/go-private",
                    "/go-metadata",
                    "/ok",
                ],
            ),
            "/go-private" => Response::redirect(302, &format!("http://{private}/redirected")),
            "/go-metadata" => Response::redirect(302, "http://[::ffff:169.254.169.254]/"),
            _ => common::page("fine", &[&format!("http://127.0.0.1:{port}/")]),
        };
        async move { r }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_private_and_metadata_addresses_a_seed_does_not_vouch_for() {
    let (private, accepted) = counting_listener("127.0.0.2:0").await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = Server::start(listener, site(private, port)).unwrap();
    let seed = server.url("/");
    let mut s = fast();
    s.scope = Scope::Any;
    s.fetch.resolve = vec![("evil.test".into(), "127.0.0.2".parse().unwrap())];
    let db = Db::new();
    db.crawl(s.clone(), std::slice::from_ref(&seed)).await;

    let guard = Some(SeenState::Failed(FailReason::NetworkGuard));
    assert_eq!(
        db.seen(&server.url("/ok")).unwrap().state,
        SeenState::Fetched { status: 200 }
    );
    for url in [
        format!("http://{private}/linked"),
        format!("http://{private}/redirected"),
        format!("http://evil.test:{}/rebound", private.port()),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://168.63.129.16/machine/?comp=goalstate".to_string(),
        "http://192.0.0.192/opc/v2/instance/".to_string(),
        "http://[::ffff:169.254.169.254]/".to_string(),
    ] {
        assert_eq!(db.seen(&url).map(|s| s.state), guard, "{url}");
        let text = why(&db.store, &url).await;
        assert!(text.contains("blocked by the network guard"), "{text}");
    }
    let text = why(&db.store, &format!("http://{private}/linked")).await;
    assert!(
        text.contains("127.0.0.2 is a loopback address") && text.contains("net.allow_private"),
        "{text}"
    );
    let text = why(&db.store, "http://169.254.169.254/latest/meta-data/").await;
    assert!(
        text.contains("cloud metadata") && text.contains("never fetched"),
        "{text}"
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "127.0.0.2 was never connected to"
    );

    // With net.allow_private the other loopback address is fetched; the
    // metadata address never is.
    s.fetch.allow_private = true;
    let db = Db::new();
    db.crawl(s, std::slice::from_ref(&seed)).await;
    assert!(
        accepted.load(Ordering::SeqCst) > 0,
        "allowed: 127.0.0.2 connected to"
    );
    for never in [
        "http://169.254.169.254/latest/meta-data/",
        "http://168.63.129.16/machine/?comp=goalstate",
        "http://192.0.0.192/opc/v2/instance/",
    ] {
        assert_eq!(db.seen(never).map(|s| s.state), guard, "{never}");
        let text = why(&db.store, never).await;
        assert!(text.contains("cloud metadata"), "{text}");
    }
}

/// A seed's exception is its own host and port: another port of its
/// address (in scope under `--scope domain`, as an intranet IP seed's
/// `http://10.0.0.5:2375/` would be) and another name for it are refused
/// before any connection, whether the seed is an IP literal or a name
/// `--resolve` sends there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeds_exception_is_its_own_host_and_port_only() {
    let (other, accepted) = counting_listener("127.0.0.1:0").await;
    let docker = format!("http://127.0.0.1:{}/containers/json", other.port());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let alias = format!("http://alias.test:{port}/");
    let (d, a) = (docker.clone(), alias.clone());
    let server = Server::start(
        listener,
        handler(move |req: Request| {
            let r = match req.path.as_str() {
                "/robots.txt" => Response::status(404),
                "/" => common::page("intranet", &[&d, &a, "/ok"]),
                _ => common::page("fine", &[]),
            };
            async move { r }
        }),
    )
    .unwrap();
    let fetched = Some(SeenState::Fetched { status: 200 });
    let refused = Some(SeenState::Failed(FailReason::NetworkGuard));

    // An IP seed under domain scope: its address's other ports are in scope.
    let mut s = fast();
    s.scope = Scope::Domain;
    let db = Db::new();
    db.crawl(s, &[server.url("/")]).await;
    assert_eq!(db.seen(&server.url("/ok")).map(|s| s.state), fetched);
    assert_eq!(db.seen(&docker).map(|s| s.state), refused);
    let text = why(&db.store, &docker).await;
    assert!(
        text.contains("127.0.0.1 is a loopback address")
            && text.contains("host and port of a seed"),
        "{text}"
    );

    // A named seed: another port of its address, and another name on its
    // own port, are refused too.
    let mut s = fast();
    s.scope = Scope::Any;
    let lo: std::net::IpAddr = "127.0.0.1".parse().unwrap();
    s.fetch.resolve = vec![("seed.test".into(), lo), ("alias.test".into(), lo)];
    let named = format!("http://seed.test:{port}/");
    let db = Db::new();
    db.crawl(s, std::slice::from_ref(&named)).await;
    assert_eq!(db.seen(&format!("{named}ok")).map(|s| s.state), fetched);
    assert_eq!(db.seen(&docker).map(|s| s.state), refused);
    assert_eq!(db.seen(&alias).map(|s| s.state), refused);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "the other port was never connected to"
    );
}

/// Host-routed sites for the redirect cases, on one port.
fn redirecting(port: u16) -> trawl::site::Handler {
    handler(move |req: Request| {
        let host = req.host();
        let on = |h: &str, p: &str| format!("http://{h}:{port}{p}");
        let r = match (host.as_str(), req.path.as_str()) {
            ("www.r.test", "/robots.txt") => Response::text("User-agent: *\nDisallow: /private\n"),
            ("r.test", "/robots.txt") => Response::redirect(301, &on("www.r.test", "/robots.txt")),
            ("q.test", "/robots.txt") => Response::redirect(301, &on("other.test", "/robots.txt")),
            ("q.test", "/") => common::page("q", &[&on("other.test", "/page")]),
            (_, "/robots.txt") => Response::status(404),
            ("example.test", "/") => Response::redirect(301, &on("www.example.test", "/")),
            ("a.test", "/") => Response::redirect(301, &on("b.test", "/")),
            ("b.test", "/") => Response::redirect(302, &on("c.test", "/")),
            ("r.test", "/") => common::page(
                "r",
                &[&on("www.r.test", "/page"), &on("www.r.test", "/private/x")],
            ),
            ("c.test", "/away") => Response::redirect(302, &on("d.test", "/")),
            ("c.test", "/") => common::page("c", &["/inner", "/away"]),
            (h, "/") => common::page(h, &["/inner"]),
            (h, p) => common::page(&format!("{h} {p}"), &[]),
        };
        async move { r }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeds_redirect_target_is_a_seed() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let _server = Server::start(listener, redirecting(port)).unwrap();
    let on = |h: &str, p: &str| format!("http://{h}:{port}{p}");
    let mut s = fast();
    let lo: std::net::IpAddr = "127.0.0.1".parse().unwrap();
    s.fetch.resolve = [
        "example.test",
        "www.example.test",
        "a.test",
        "b.test",
        "c.test",
        "d.test",
        "r.test",
        "www.r.test",
    ]
    .iter()
    .map(|h| (h.to_string(), lo))
    .collect();
    let db = Db::new();
    let seeds = [
        on("example.test", "/"),
        on("a.test", "/"),
        on("r.test", "/"),
    ];
    db.crawl(s, &seeds).await;
    let fetched = |u: &str| {
        matches!(
            db.seen(u).map(|s| s.state),
            Some(SeenState::Fetched { status: 200 })
        )
    };
    // apex → www: the www host is in scope and crawled past its front page.
    assert!(fetched(&on("www.example.test", "/inner")));
    // A chain of two: both targets are seeds; the last one is crawled.
    assert!(
        fetched(&on("c.test", "/inner")),
        "{:?}",
        db.seen(&on("c.test", "/"))
    );
    // robots.txt of a seed host redirects: its target's host is in scope,
    // and the rules found there apply to it.
    assert!(fetched(&on("www.r.test", "/page")));
    assert_eq!(
        db.seen(&on("www.r.test", "/private/x")).unwrap().state,
        SeenState::Filtered(FilterReason::Robots)
    );
    let list = db.store.seeds().unwrap();
    let from = |u: &str| {
        list.derived
            .iter()
            .find(|d| d.url == u)
            .map(|d| (d.from.clone(), d.via.clone()))
    };
    assert_eq!(
        from(&on("www.example.test", "/")),
        Some((on("example.test", "/"), "redirect".into()))
    );
    assert_eq!(
        from(&on("b.test", "/")),
        Some((on("a.test", "/"), "redirect".into()))
    );
    assert_eq!(
        from(&on("c.test", "/")),
        Some((on("b.test", "/"), "redirect".into()))
    );
    assert_eq!(
        from(&on("www.r.test", "/")),
        Some((on("r.test", "/robots.txt"), "robots".into()))
    );
    let listed = common::shell(db.store.clone(), vec!["seed list".into()]).await;
    assert!(
        listed.contains("a.test") && listed.contains("redirects here"),
        "{listed}"
    );
    // A redirect from a page that is not a seed does not widen the scope.
    assert_eq!(
        db.seen(&on("d.test", "/")).unwrap().state,
        SeenState::Filtered(FilterReason::Scope)
    );
}

/// A seed host's robots.txt redirecting outside the seed's registrable
/// domain brings no host into scope (within it, it does: see above). The
/// loopback stands in for public hosts here: private addresses allowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_redirect_widens_the_scope_only_within_the_seeds_domain() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let _server = Server::start(listener, redirecting(port)).unwrap();
    let on = |h: &str, p: &str| format!("http://{h}:{port}{p}");
    let mut s = fast();
    s.fetch.allow_private = true;
    let lo: std::net::IpAddr = "127.0.0.1".parse().unwrap();
    s.fetch.resolve = vec![("q.test".into(), lo), ("other.test".into(), lo)];
    let db = Db::new();
    db.crawl(s, &[on("q.test", "/")]).await;
    assert_eq!(
        db.seen(&on("q.test", "/")).unwrap().state,
        SeenState::Fetched { status: 200 }
    );
    assert_eq!(
        db.seen(&on("other.test", "/page")).unwrap().state,
        SeenState::Filtered(FilterReason::Scope)
    );
    assert!(db.store.seeds().unwrap().derived.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_seed_redirecting_to_https_is_followed() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, cert.cert.pem()).unwrap();
    let https = common::tls_server(
        &cert,
        handler(|req: Request| async move {
            match req.path.as_str() {
                "/robots.txt" => Response::status(404),
                "/" => common::page("secure", &["/a"]),
                _ => common::page("secure page", &[]),
            }
        }),
    )
    .await;
    let target = https.url("/").replace("127.0.0.1", "localhost");
    let t = target.clone();
    let plain = Server::bind(handler(move |req: Request| {
        let r = match req.path.as_str() {
            "/robots.txt" => Response::status(404),
            _ => Response::redirect(301, &t),
        };
        async move { r }
    }))
    .await
    .unwrap();
    let mut s = fast();
    s.fetch.ca_file = Some(ca);
    let db = Db::new();
    db.crawl(s, &[plain.url("/")]).await;
    assert_eq!(
        db.seen(&format!("{target}a")).unwrap().state,
        SeenState::Fetched { status: 200 }
    );
    let derived = db.store.seeds().unwrap().derived;
    assert_eq!(derived.len(), 1);
    assert_eq!(
        (derived[0].url.as_str(), derived[0].from.as_str()),
        (target.as_str(), plain.url("/").as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_redirects_obey_the_guard_and_the_scheme_rules() {
    let (private, accepted) = counting_listener("127.0.0.2:0").await;
    let to_private = Server::bind(handler(move |req: Request| {
        let r = match req.path.as_str() {
            "/robots.txt" => Response::redirect(301, &format!("http://{private}/robots.txt")),
            _ => common::page("a", &[]),
        };
        async move { r }
    }))
    .await
    .unwrap();
    let to_file = Server::bind(handler(|req: Request| {
        let r = match req.path.as_str() {
            "/robots.txt" => Response::redirect(302, "file:///etc/passwd"),
            _ => common::page("b", &[]),
        };
        async move { r }
    }))
    .await
    .unwrap();
    let mut s = fast();
    s.robots_max_failures = 1;
    let db = Db::new();
    db.crawl(s, &[to_private.url("/"), to_file.url("/")]).await;
    // A robots.txt behind a refused address is unreachable: nothing of the
    // host is fetched, and the address was never connected to.
    assert_eq!(
        db.seen(&to_private.url("/")).unwrap().state,
        SeenState::Filtered(FilterReason::RobotsUnavailable)
    );
    let text = why(&db.store, &to_private.url("/")).await;
    assert!(
        text.contains("network-guard") && text.contains("127.0.0.2"),
        "{text}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
    // A redirect to a file: URL leads nowhere: no robots.txt, all allowed.
    assert_eq!(
        db.seen(&to_file.url("/")).unwrap().state,
        SeenState::Fetched { status: 200 }
    );
}
