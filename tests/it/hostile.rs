//! Hostile servers: every way a server can misbehave that the open web
//! shows, played by a raw TCP server on 127.0.0.1, crawled by `trawl
//! crawl` beside a normal host and a host of 32 anchor-dense 10 MB pages.
//! Each case must end by itself within its limits, be stored with a
//! precise reason that `why` explains, and cost the normal host nothing;
//! the whole crawl's peak RSS must stay under the design bound.
//! `HOSTILE_ONLY=/tarpit,/deep` plays only the cases named (to look at one).

use crate::common;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use common::raw::{RawServer, Script, Step, head, response};
use common::{Fixture, id, run_measured, trawl_cmd, why};
use trawl::model::{FailReason, FilterReason, SeenState};
use trawl::site::{Body, Response, Server, handler};
use trawl::store::Store;

fn html(body: &str) -> Vec<u8> {
    response("200 OK", "text/html; charset=utf-8", body.as_bytes())
}

fn redirect(status: &str, location: &str) -> Vec<u8> {
    head(status, &[("location", location), ("content-length", "0")])
}

fn compressed(kind: &str, data: &[u8]) -> Vec<u8> {
    let level = flate2::Compression::best();
    let body = if kind == "gzip" {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
        e.write_all(data).unwrap();
        e.finish().unwrap()
    } else {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    let len = body.len().to_string();
    let mut r = head(
        "200 OK",
        &[
            ("content-type", "text/html"),
            ("content-encoding", kind),
            ("content-length", &len),
        ],
    );
    r.extend(body);
    r
}

/// What `/cl-small` says its whole body is (more follows on the wire).
const CL_SMALL_BODY: &str = "<title>short</title><p>cut here</p>";

/// Every case the hostile host plays, by path.
const CASES: &[&str] = &[
    "/tarpit",
    "/slow-ttfb",
    "/slowloris",
    "/huge-headers",
    "/endless",
    "/cl-small",
    "/cl-large",
    "/cl-dup",
    "/cl-nan",
    "/bad-chunk",
    "/gzip-bomb",
    "/deflate-bomb",
    "/fake-gzip",
    "/ten-gb",
    "/bad-utf8",
    "/binary",
    "/many-links",
    "/big-attr",
    "/deep",
    "/loop-a",
    "/chain/0",
    "/to-file",
    "/to-nowhere",
    "/no-location",
    "/reset",
    "/empty",
    "/http09",
    "/garbage-status",
    "/keepalive-garbage",
    "/after-garbage",
    "/429-secs",
    "/429-date",
    "/503-storm",
    "/refresh-a",
];

fn hostile() -> Script {
    Arc::new(|path: &str, n: usize| -> Vec<Step> {
        use Step::*;
        let page = |body: &str| vec![Write(html(body))];
        match path {
            "/robots.txt" => vec![Write(response("404 Not Found", "text/plain", b""))],
            "/" => {
                let only = std::env::var("HOSTILE_ONLY").unwrap_or_default();
                let links: String = CASES.iter().filter(|c| only.is_empty() || only.split(',').any(|o| o == **c)).map(|c| format!("<a href={c}>{c}</a> ")).collect();
                page(&format!("<title>hostile</title>{links}"))
            }
            "/tarpit" => vec![
                Write(head("200 OK", &[("content-type", "text/html"), ("content-length", "100")])),
                Trickle { bytes: vec![b'x'; 100], every: Duration::from_secs(1) },
            ],
            "/slow-ttfb" => vec![Sleep(Duration::from_secs(30)), Write(html("late"))],
            "/slowloris" => vec![Trickle {
                bytes: html("slow headers"),
                every: Duration::from_secs(1),
            }],
            "/huge-headers" => {
                let mut r = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n".to_vec();
                for i in 0..20_000 {
                    r.extend(format!("x-pad-{i}: {}\r\n", "a".repeat(90)).bytes());
                }
                r.extend(b"content-length: 2\r\n\r\nhi");
                vec![Write(r)]
            }
            "/endless" => vec![
                Write(head("200 OK", &[("content-type", "text/html"), ("connection", "close")])),
                Forever(b"<p>more and more <a href=/endless-link>again</a></p>\n".repeat(64)),
            ],
            "/cl-small" => {
                let body = CL_SMALL_BODY;
                let len = body.len().to_string();
                let mut r = head("200 OK", &[("content-type", "text/html"), ("content-length", &len)]);
                r.extend(body.bytes());
                r.extend(b"<a href=/beyond-length>never seen</a>".repeat(10));
                vec![Write(r), Close]
            }
            "/cl-large" => vec![
                Write(head("200 OK", &[("content-type", "text/html"), ("content-length", "10000")])),
                Write(vec![b'y'; 100]),
                Close,
            ],
            "/cl-dup" => vec![Write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\ncontent-length: 20\r\n\r\n0123456789".to_vec()), Close],
            "/cl-nan" => vec![Write(b"HTTP/1.1 200 OK\r\ncontent-length: ten\r\n\r\nhello".to_vec()), Close],
            "/bad-chunk" => vec![
                Write(b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n".to_vec()),
                Close,
            ],
            "/gzip-bomb" => vec![Write(compressed("gzip", &vec![0u8; 20 << 20]))],
            "/deflate-bomb" => vec![Write(compressed("deflate", &vec![0u8; 20 << 20]))],
            "/fake-gzip" => vec![Write({
                let body = b"<html>plain text, not gzip</html>";
                let len = body.len().to_string();
                let mut r = head("200 OK", &[("content-type", "text/html"), ("content-encoding", "gzip"), ("content-length", &len)]);
                r.extend(body);
                r
            })],
            "/ten-gb" => vec![
                Write(head("200 OK", &[("content-type", "text/html"), ("content-length", "10737418240")])),
                Forever(b"<p>ten gigabytes of this</p>\n".repeat(256)),
            ],
            "/bad-utf8" => vec![Write({
                let mut body = b"<title>bad \xff\xfe bytes</title><p>nul\0here \xc3\x28 and \xe2\x82</p><a href=/after-utf8>a</a>".to_vec();
                body.extend(b"\0\0\0");
                response("200 OK", "text/html; charset=utf-8", &body)
            })],
            "/binary" => {
                let mut x: u32 = 12345;
                let body: Vec<u8> = (0..65536)
                    .map(|_| {
                        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        (x >> 16) as u8
                    })
                    .collect();
                vec![Write(response("200 OK", "text/html", &body))]
            }
            "/many-links" => {
                // Out of scope: kept as links, not fetched.
                let links: String = (0..100_000).map(|i| format!("<a href=http://elsewhere.example/m/{i}>{i}</a>")).collect();
                page(&links)
            }
            "/big-attr" => page(&format!(
                "<div data-x=\"{}\">attr text</div><a href=/after-attr>after</a>",
                "a".repeat(1 << 20)
            )),
            "/deep" => page(&format!(
                "{}deep text<a href=/after-deep>after</a>",
                "<div>".repeat(100_000)
            )),
            "/loop-a" => vec![Write(redirect("301 Moved Permanently", "/loop-b"))],
            "/loop-b" => vec![Write(redirect("301 Moved Permanently", "/loop-a"))],
            p if p.starts_with("/chain/") => {
                let i: u64 = p[7..].parse().unwrap_or(0);
                vec![Write(redirect("301 Moved Permanently", &format!("/chain/{}", i + 1)))]
            }
            "/to-file" => vec![Write(redirect("302 Found", "file:///etc/passwd"))],
            "/to-nowhere" => vec![Write(redirect("302 Found", "http://nowhere.invalid/"))],
            "/no-location" => vec![Write(head("302 Found", &[("content-length", "0")]))],
            "/reset" => vec![
                Write(head("200 OK", &[("content-type", "text/html"), ("content-length", "1000")])),
                Write(vec![b'z'; 100]),
                Sleep(Duration::from_millis(50)),
                Reset,
            ],
            "/empty" => vec![Close],
            "/http09" => vec![Write(b"<html><a href=/after-09>old style</a></html>".to_vec()), Close],
            "/garbage-status" => vec![Write(b"HTTP/1.1 abc not a status\r\n\r\n".to_vec()), Close],
            "/keepalive-garbage" => {
                let mut r = html("<title>fine page</title><a href=/after-garbage>next</a>");
                r.extend(b"GARBAGE AFTER THE RESPONSE\r\n\r\nHTTP/1.1 200 OK\r\n\r\n");
                vec![Write(r)]
            }
            "/429-secs" if n == 1 => vec![Write(head(
                "429 Too Many Requests",
                &[("retry-after", "1"), ("content-length", "0")],
            ))],
            "/429-date" if n == 1 => {
                let at = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(2));
                vec![Write(head("429 Too Many Requests", &[("retry-after", &at), ("content-length", "0")]))]
            }
            "/503-storm" if n <= 2 => vec![Write(head("503 Service Unavailable", &[("content-length", "0")]))],
            "/refresh-a" => page("<meta http-equiv=refresh content=\"0; url=/refresh-b\">a"),
            "/refresh-b" => page("<meta http-equiv=refresh content=\"0; url=/refresh-a\">b"),
            _ => page("<title>ordinary</title><p>fine</p>"),
        }
    })
}

/// A normal site: a tree of `n` pages, with the times of its requests.
fn normal(n: usize) -> impl Fn(&str) -> Response + Send + Sync + 'static {
    move |p: &str| {
        if p == "/robots.txt" {
            return Response::status(404);
        }
        let i: usize = p.trim_start_matches("/n/").parse().unwrap_or(0);
        let links: Vec<String> = [2 * i + 1, 2 * i + 2]
            .iter()
            .filter(|&&j| j < n)
            .map(|j| format!("/n/{j}"))
            .collect();
        common::page(
            &format!("normal {i}"),
            &links.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    }
}

/// 32 pages of 10 MB of bare anchors each, linked from the front page.
async fn big_pages() -> Server {
    Server::bind(handler(|req| async move {
        match req.path.as_str() {
            "/robots.txt" => Response::status(404),
            "/" => {
                let links: String = (0..32)
                    .map(|i| format!("<a href=/big/{i}>{i}</a>"))
                    .collect();
                Response::html(links)
            }
            p => {
                let chunk =
                    bytes::Bytes::from(format!("<a href=\"{p}/{}\">link</a>", "x".repeat(12)));
                let times = (10 << 20) / chunk.len() as u64;
                let mut r = Response::html("");
                r.body = Body::Repeat { chunk, times };
                r
            }
        }
    }))
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_servers_are_recorded_and_cost_the_rest_nothing() {
    let raw = RawServer::start(hostile()).await;
    let normal_site = Fixture::start(normal(400)).await;
    let untrusted = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    // Its own subject, so that the untrusted certificate's issuer is unknown.
    let wrong_host = {
        let mut params = rcgen::CertificateParams::new(vec!["wrong.test".into()]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "wrong.test");
        let signing_key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&signing_key).unwrap();
        rcgen::CertifiedKey { cert, signing_key }
    };
    let secret = || handler(|_| async { common::page("secret", &[]) });
    let tls_untrusted = common::tls_server(&untrusted, secret()).await;
    let tls_wrong = common::tls_server(&wrong_host, secret()).await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, wrong_host.cert.pem()).unwrap();
    let db = dir.path().join("db");
    let https = |s: &Server| format!("https://localhost:{}/", s.addr().port());
    let seeds = [
        raw.url("/"),
        normal_site.url("/n/0"),
        https(&tls_untrusted),
        https(&tls_wrong),
        // https to a port that speaks plain HTTP.
        format!("https://localhost:{}/", normal_site.server.addr().port()),
    ];
    let mut cmd = trawl_cmd(&["crawl", "--db", db.to_str().unwrap()]);
    for s in &seeds {
        cmd.args(["--seed", s]);
    }
    cmd.args(["--delay-ms", "0", "--concurrency", "64", "--per-host", "32"])
        .args(["--timeout-secs", "4", "--scope", "any", "--ca-file"])
        .arg(&ca)
        .args([
            "--set",
            "fetch.first_byte_timeout=2s",
            "--set",
            "crawl.backoff=300ms",
        ])
        .args(["--set", "robots.max_failures=1"]);
    let run = tokio::task::spawn_blocking(move || run_measured(cmd))
        .await
        .unwrap();
    assert!(run.status.success(), "{}", run.stderr);
    run.assert_rss_bound("hostile cases");

    let store = Arc::new(Store::open(&db).unwrap());
    let state = |url: &str| store.seen(id(url)).unwrap().map(|s| s.state);
    let failed = |r| Some(SeenState::Failed(r));
    let r = |p: &str| raw.url(p);
    let mut expect: Vec<(String, Option<SeenState>, &str)> = vec![
        (
            r("/tarpit"),
            failed(FailReason::Timeout),
            "body not complete in time",
        ),
        (
            r("/slow-ttfb"),
            failed(FailReason::Timeout),
            "no response headers in time",
        ),
        (
            r("/slowloris"),
            failed(FailReason::Timeout),
            "no response headers in time",
        ),
        (
            r("/huge-headers"),
            failed(FailReason::HeadersTooLarge),
            "too large",
        ),
        (r("/cl-large"), failed(FailReason::Incomplete), "incomplete"),
        (
            r("/cl-dup"),
            failed(FailReason::BadResponse),
            "bad-response",
        ),
        (
            r("/cl-nan"),
            failed(FailReason::BadResponse),
            "bad-response",
        ),
        (
            r("/bad-chunk"),
            failed(FailReason::BadResponse),
            "bad-response",
        ),
        (r("/fake-gzip"), failed(FailReason::BadEncoding), "not gzip"),
        (r("/reset"), failed(FailReason::Incomplete), "incomplete"),
        (r("/empty"), failed(FailReason::Incomplete), "incomplete"),
        (
            r("/http09"),
            failed(FailReason::BadResponse),
            "bad-response",
        ),
        (
            r("/garbage-status"),
            failed(FailReason::BadResponse),
            "bad-response",
        ),
        (
            r("/to-file"),
            Some(SeenState::Fetched { status: 302 }),
            "not followed: scheme file",
        ),
        (
            r("/no-location"),
            Some(SeenState::Fetched { status: 302 }),
            "without a Location",
        ),
        (
            r("/chain/6"),
            Some(SeenState::Filtered(FilterReason::RedirectChain)),
            "over crawl.max_redirects",
        ),
        (
            "http://nowhere.invalid/".into(),
            Some(SeenState::Filtered(FilterReason::RobotsUnavailable)),
            "no such host",
        ),
        (
            https(&tls_untrusted),
            Some(SeenState::Filtered(FilterReason::RobotsUnavailable)),
            "UnknownIssuer",
        ),
        (
            https(&tls_wrong),
            Some(SeenState::Filtered(FilterReason::RobotsUnavailable)),
            "not valid for name \"localhost\"",
        ),
        (
            format!("https://localhost:{}/", normal_site.server.addr().port()),
            Some(SeenState::Filtered(FilterReason::RobotsUnavailable)),
            "tls: TLS: received corrupt message",
        ),
    ];
    for ok in [
        "/endless",
        "/cl-small",
        "/gzip-bomb",
        "/deflate-bomb",
        "/ten-gb",
        "/bad-utf8",
        "/binary",
        "/many-links",
        "/big-attr",
        "/deep",
        "/keepalive-garbage",
        "/after-garbage",
        "/429-secs",
        "/429-date",
        "/503-storm",
        "/refresh-a",
        "/refresh-b",
        "/loop-a",
        "/loop-b",
        "/after-attr",
        "/after-deep",
    ] {
        let status = if ok.starts_with("/loop") { 301 } else { 200 };
        expect.push((r(ok), Some(SeenState::Fetched { status }), "fetched"));
    }
    let mut wrong = Vec::new();
    for (url, want, text) in &expect {
        let got = state(url);
        let said = why(&store, url).await;
        if got != *want || !said.contains(text) {
            wrong.push(format!("{url}: {got:?} (want {want:?}); why: {said}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // Bodies: cut at the cap, decoded within it, no byte past a short
    // Content-Length read, no NUL stored.
    let page = |p: &str| store.page(id(&r(p))).unwrap().unwrap();
    let cap = 10 << 20;
    for p in ["/endless", "/gzip-bomb", "/deflate-bomb", "/ten-gb"] {
        let pg = page(p);
        assert!(
            pg.truncated && pg.body_len == cap,
            "{p}: {} bytes, truncated {}",
            pg.body_len,
            pg.truncated
        );
    }
    assert_eq!(page("/cl-small").body_len, CL_SMALL_BODY.len() as u64);
    assert!(
        store.seen(id(&r("/beyond-length"))).unwrap().is_none(),
        "a link past Content-Length was seen"
    );
    assert_eq!(raw.count("/beyond-length"), 0);
    let doc = store
        .doc_with_text(id(&r("/bad-utf8")))
        .unwrap()
        .unwrap()
        .doc;
    assert!(
        !doc.text.contains('\0') && doc.text.contains('\u{FFFD}'),
        "{:?}",
        doc.text
    );
    // As many as crawl.max_outlinks (100,000) lets fit in LINK_BYTES.
    let kept = store
        .doc(id(&r("/many-links")))
        .unwrap()
        .unwrap()
        .doc
        .outlinks;
    assert!((50_000..100_000).contains(&kept), "{kept} links kept");
    // Each case asked as often as it should be: the loops once a URL, the
    // back-offs once more than they refused.
    for (p, n) in [
        ("/loop-a", 1),
        ("/loop-b", 1),
        ("/refresh-a", 1),
        ("/refresh-b", 1),
        ("/429-secs", 2),
        ("/429-date", 2),
        ("/503-storm", 3),
    ] {
        assert_eq!(raw.count(p), n, "{p} asked {} times", raw.count(p));
    }
    let gap = |p: &str| {
        let t: Vec<_> = raw
            .hits()
            .into_iter()
            .filter(|(q, _)| q == p)
            .map(|(_, t)| t)
            .collect();
        t[1] - t[0]
    };
    assert!(
        gap("/429-secs") >= Duration::from_millis(900),
        "Retry-After: 1 waited {:?}",
        gap("/429-secs")
    );
    assert!(
        gap("/429-date") >= Duration::from_millis(900),
        "Retry-After date waited {:?}",
        gap("/429-date")
    );
    // Only the cases meant to fail failed: nothing collateral on the host.
    let mut by_reason: HashMap<String, usize> = HashMap::new();
    let paths: std::collections::HashSet<String> = raw.hits().into_iter().map(|h| h.0).collect();
    for p in paths {
        if let Some(SeenState::Failed(r)) = state(&raw.url(&p)) {
            *by_reason.entry(r.name().to_string()).or_default() += 1;
        }
    }
    let failing = expect
        .iter()
        .filter(|e| matches!(e.1, Some(SeenState::Failed(_))))
        .count();
    assert_eq!(by_reason.values().sum::<usize>(), failing, "{by_reason:?}");

    // The normal host was crawled whole, and at full rate: all of it
    // before the hostile host's slowest case (the tarpit) gave up.
    let c = store.counters().unwrap();
    let normal_fetched = normal_site.page_times().len();
    assert_eq!(normal_fetched, 400, "{c:?}");
    let last_normal = normal_site.page_times().into_iter().max().unwrap();
    let tarpit_start = raw
        .hits()
        .into_iter()
        .find(|(p, _)| p == "/tarpit")
        .unwrap()
        .1;
    assert!(
        last_normal < tarpit_start + Duration::from_secs(4),
        "the normal host finished {:?} after the tarpit began",
        last_normal - tarpit_start
    );
    let problems = trawl::crawl::audit(&store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_huge_pages_at_once_stay_under_the_memory_bound() {
    let big = big_pages().await;
    let normal_site = Fixture::start(normal(200)).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut cmd = trawl_cmd(&["crawl", "--db", db.to_str().unwrap()]);
    cmd.args(["--seed", &big.url("/"), "--seed", &normal_site.url("/n/0")])
        .args(["--delay-ms", "0", "--concurrency", "64", "--per-host", "32"]);
    let run = tokio::task::spawn_blocking(move || run_measured(cmd))
        .await
        .unwrap();
    assert!(run.status.success(), "{}", run.stderr);
    run.assert_rss_bound("32 × 10 MB pages");
    let store = Store::open(&db).unwrap();
    for i in 0..32 {
        let p = store
            .page(id(&big.url(&format!("/big/{i}"))))
            .unwrap()
            .unwrap();
        assert!(
            p.body_len > 10_000_000 && !p.truncated,
            "/big/{i}: {} bytes",
            p.body_len
        );
    }
    assert_eq!(normal_site.page_times().len(), 200);
    let problems = trawl::crawl::audit(&store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}
