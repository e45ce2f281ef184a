//! Fetching limits, redirects, charsets, link extraction rules, dedup and
//! HTTPS, each against a fixture on 127.0.0.1 and a real RocksDB.

use crate::common;

use std::io::Write;

use bytes::Bytes;
use common::{Db, Fixture, fast, page};
use trawl::model::{FilterReason, SeenState};
use trawl::site::{Body, Response};

fn no_robots(
    f: impl Fn(&str) -> Response + Send + Sync + 'static,
) -> impl Fn(&str) -> Response + Send + Sync + 'static {
    move |p: &str| {
        if p == "/robots.txt" {
            Response::status(404)
        } else {
            f(p)
        }
    }
}

fn zstd_body(p: &trawl::schema::PageRecord) -> Vec<u8> {
    p.body().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_cap_and_gzip_bomb_stop_at_the_cap() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![0u8; 64 << 20]).unwrap();
    let bomb = Bytes::from(gz.finish().unwrap());
    let f = Fixture::start(no_robots(move |p: &str| match p {
        "/" => page("home", &["/big", "/endless", "/bomb", "/small.gz"]),
        "/big" => Response::html(vec![b'x'; 3 << 20]),
        "/endless" => Response {
            body: Body::Repeat {
                chunk: Bytes::from(vec![b'y'; 64 << 10]),
                times: u64::MAX,
            },
            ..Response::html("")
        },
        "/bomb" => Response::new(200, bomb.clone())
            .header("content-type", "text/html")
            .header("content-encoding", "gzip"),
        "/small.gz" => common::gzipped_html(b"<title>tiny</title>hello"),
        _ => Response::status(404),
    }))
    .await;
    let db = Db::new();
    let mut s = fast();
    s.fetch.max_body_bytes = 1 << 20;
    db.crawl(s, &[f.url("/")]).await;
    for path in ["/big", "/endless", "/bomb"] {
        let p = db
            .page(&f.url(path))
            .unwrap_or_else(|| panic!("{path} recorded"));
        assert!(p.truncated, "{path} truncated");
        assert_eq!(p.body_len, 1 << 20, "{path} body at the cap");
        assert_eq!(zstd_body(&p).len(), 1 << 20);
    }
    assert!(db.page(&f.url("/bomb")).unwrap().wire_len < 1 << 20);
    let small = db.page(&f.url("/small.gz")).unwrap();
    assert!(!small.truncated);
    assert_eq!(db.doc(&f.url("/small.gz")).unwrap().title, "tiny");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirect_chains_are_recorded_and_long_ones_abandoned() {
    let f = Fixture::start(no_robots(|p: &str| {
        if let Some(n) = p.strip_prefix("/hop/") {
            let n: u32 = n.parse().unwrap();
            return if n == 0 {
                page("end", &[])
            } else {
                Response::redirect(302, &format!("/hop/{}", n - 1))
            };
        }
        if let Some(n) = p.strip_prefix("/long/") {
            let n: u32 = n.parse().unwrap();
            return Response::redirect(301, &format!("/long/{}", n + 1));
        }
        match p {
            "/" => page("home", &["/hop/3", "/long/0", "/loop-a"]),
            "/loop-a" => Response::redirect(301, "/loop-b"),
            "/loop-b" => Response::redirect(301, "/loop-a"),
            _ => Response::status(404),
        }
    }))
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    // Every hop of a short chain is a stored response pointing at the next.
    for n in 1..=3 {
        let p = db.page(&f.url(&format!("/hop/{n}"))).unwrap();
        assert_eq!(p.status, 302);
        assert_eq!(
            p.redirect_to.as_deref(),
            Some(f.url(&format!("/hop/{}", n - 1)).as_str())
        );
    }
    assert_eq!(db.doc(&f.url("/hop/0")).unwrap().title, "end");
    assert_eq!(db.seen(&f.url("/hop/0")).unwrap().redirects, 3);
    // An endless chain stops after five hops.
    assert_eq!(
        f.hits()
            .iter()
            .filter(|h| h.path.starts_with("/long/"))
            .count(),
        6
    );
    assert_eq!(
        db.seen(&f.url("/long/6")).unwrap().state,
        SeenState::Filtered(FilterReason::RedirectChain)
    );
    // A loop fetches each URL once.
    assert_eq!((f.count("/loop-a"), f.count("/loop-b")), (1, 1));
}

fn encoded(enc: &'static encoding_rs::Encoding, text: &str) -> Vec<u8> {
    enc.encode(text).0.into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_charsets_come_out_as_unicode() {
    // (path, encoding, text, how it is declared)
    let cases: Vec<(&str, &'static encoding_rs::Encoding, &str, &str)> = vec![
        (
            "/gbk-header",
            encoding_rs::GBK,
            "研究生论文答辩安排",
            "header",
        ),
        (
            "/gbk-meta",
            encoding_rs::GBK,
            "体育学院篮球比赛通知",
            "meta",
        ),
        (
            "/gbk-sniff",
            encoding_rs::GBK,
            "关于毕业生论文提交的通知，请各位研究生按时提交论文。",
            "none",
        ),
        ("/gb18030", encoding_rs::GB18030, "中文𠀀测试页面", "header"),
        (
            "/big5",
            encoding_rs::BIG5,
            "國立臺灣大學研究生論文",
            "header",
        ),
        (
            "/sjis",
            encoding_rs::SHIFT_JIS,
            "東京大学の研究室です",
            "meta",
        ),
        (
            "/euckr",
            encoding_rs::EUC_KR,
            "서울대학교 대학원 논문",
            "header",
        ),
    ];
    let table = cases.clone();
    let f = Fixture::start(no_robots(move |p: &str| {
        if p == "/" {
            let links: Vec<&str> = table.iter().map(|c| c.0).collect();
            return page("home", &links);
        }
        let Some((_, enc, text, how)) = table.iter().find(|c| c.0 == p) else { return Response::status(404) };
        let meta = if *how == "meta" { format!("<meta http-equiv=\"Content-Type\" content=\"text/html; charset={}\">", enc.name()) } else { String::new() };
        let html = format!("<html><head>{meta}<title>{text}</title></head><body><p>{text}</p><p>{text}</p></body></html>");
        let ct = if *how == "header" { format!("text/html; charset={}", enc.name()) } else { "text/html".to_string() };
        Response::new(200, encoded(enc, &html)).header("content-type", &ct)
    }))
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    for (path, enc, text, how) in cases {
        let doc = db
            .doc(&f.url(path))
            .unwrap_or_else(|| panic!("{path} parsed"));
        assert_eq!(doc.title, text, "{path} ({}) title", enc.name());
        assert!(doc.text.contains(text), "{path} text: {}", doc.text);
        let expect_source = match how {
            "header" => "http",
            "meta" => "meta",
            _ => "sniff",
        };
        assert_eq!(doc.charset_source, expect_source, "{path}");
        // The stored page alone rebuilds the doc: no refetch needed.
        let page = db.page(&f.url(path)).unwrap();
        let body = zstd_body(&page);
        let decoded = trawl::parse::decode(&body, Some(&page.content_type));
        let url = url::Url::parse(&page.url).unwrap();
        let rebuilt = trawl::parse::parse_html(
            &decoded.text,
            &url,
            decoded.charset,
            "trawl",
            trawl::parse::DEFAULT_MAX_LINKS,
        );
        assert_eq!(
            (rebuilt.title.as_str(), rebuilt.text.as_str()),
            (doc.title.as_str(), doc.text.as_str())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base_href_nofollow_and_meta_robots() {
    let f = Fixture::start(no_robots(|p: &str| match p {
        "/" => Response::html(
            "<html><head><base href=\"/sub/\"></head><body>\
             <a href=\"rel.html\">relative</a> <a href=\"/nf\" rel=\"nofollow\">nf</a>\
             <a href=\"/noidx\">noindex page</a> <a href=\"/nofollow-page\">nofollow page</a>\
             <a href=/xrt>x</a> <a href=/xrt-other>y</a></body></html>",
        ),
        "/noidx" => Response::html("<meta name=robots content=noindex><title>hidden</title><p>secret words</p><a href=/from-noidx>x</a>"),
        "/nofollow-page" => Response::html("<meta name=\"robots\" content=\"nofollow\"><a href=/never>x</a>"),
        "/xrt" => Response::html("<a href=/never-xrt>x</a>").header("x-robots-tag", "trawl: nofollow"),
        "/xrt-other" => Response::html("<a href=/from-xrt-other>x</a>").header("x-robots-tag", "otherbot: nofollow"),
        p => page(p, &[]),
    }))
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert_eq!(f.count("/sub/rel.html"), 1, "base href honoured");
    assert_eq!(f.count("/rel.html"), 0);
    assert_eq!(f.count("/nf"), 0, "rel=nofollow not followed");
    assert_eq!(f.count("/never"), 0, "meta nofollow: links not followed");
    assert_eq!(
        f.count("/from-noidx"),
        1,
        "noindex alone still follows links"
    );
    let noidx = db.doc(&f.url("/noidx")).unwrap();
    assert!(noidx.noindex && noidx.text.is_empty());
    // The links are still recorded, with their flags.
    let links = db
        .store
        .links_from(common::id(&f.url("/")), usize::MAX)
        .unwrap();
    assert_eq!(links.len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_and_identical_bodies_are_deduplicated() {
    let f = Fixture::start(no_robots(|p: &str| match p {
        "/" => page(
            "home",
            &["/a", "/a#frag", "/./a", "/b", "/B/../a", "/copy/x"],
        ),
        // Byte-identical bodies; the relative link resolves differently at each URL.
        "/a" | "/copy/x" => page("same body", &["rel-child"]),
        p => page(p, &[]),
    }))
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    assert_eq!(f.count("/a"), 1, "one fetch for every spelling of /a");
    assert_eq!(f.count("/rel-child"), 1);
    assert_eq!(
        f.count("/copy/rel-child"),
        0,
        "a duplicate body's links are not expanded"
    );
    let copy = db.doc(&f.url("/copy/x")).unwrap();
    assert_eq!(copy.duplicate_of, Some(common::id(&f.url("/a")).0));
    let c = db.store.counters().unwrap();
    assert_eq!(c.duplicates, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_self_signed_root() {
    let cert =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, cert.cert.pem()).unwrap();
    let versions = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let v = versions.clone();
    let server = common::tls_server(
        &cert,
        trawl::site::handler(move |req| {
            v.lock().unwrap().push(req.version);
            async move {
                match req.path.as_str() {
                    "/robots.txt" => Response::status(404),
                    "/" => page("secure home", &["/inner"]),
                    _ => page("secure inner", &[]),
                }
            }
        }),
    )
    .await;
    let root = server.url("/").replace("127.0.0.1", "localhost");

    // Without the root the handshake fails: robots.txt is unreachable, so
    // nothing is fetched, and the host record says why.
    let db = Db::new();
    let mut s = fast();
    s.robots_max_failures = 1;
    db.crawl(s, std::slice::from_ref(&root)).await;
    assert_eq!(
        db.seen(&root).unwrap().state,
        SeenState::Filtered(FilterReason::RobotsUnavailable)
    );
    let host = db
        .store
        .host(trawl::model::normalize(&root).unwrap().host_id())
        .unwrap()
        .unwrap();
    match host.robots.unwrap().outcome {
        trawl::model::RobotsOutcome::Unreachable { detail } => {
            assert!(detail.starts_with("tls:"), "{detail}")
        }
        o => panic!("expected unreachable, got {o:?}"),
    }

    let db = Db::new();
    let mut s = fast();
    s.fetch.ca_file = Some(ca);
    db.crawl(s, std::slice::from_ref(&root)).await;
    assert_eq!(db.doc(&root).unwrap().title, "secure home");
    let inner = format!("{root}inner");
    let p = db.page(&inner).unwrap();
    assert_eq!(p.http_version, "HTTP/2", "ALPN picked h2");
    assert!(versions.lock().unwrap().contains(&http::Version::HTTP_2));
}

/// Schema 9: a page's text rides in its page frame after the body, not in
/// `docs`; the body reads back exact, and `page`, the refilter and the
/// filters see the text as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_is_stored_in_the_page_frame_after_the_body() {
    const BODY: &str = "<html><head><title>frame</title></head><body>\
        <p>first paragraph about zqxw crawling</p><p>second paragraph</p></body></html>";
    let f = Fixture::start(no_robots(|p: &str| match p {
        "/" => Response::html(BODY),
        _ => Response::status(404),
    }))
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    let id = trawl::model::normalize(&f.url("/")).unwrap().id();
    let page = db.page(&f.url("/")).unwrap();
    assert_eq!(page.body().unwrap(), BODY.as_bytes(), "the body, exactly");
    assert!(page.text_len > 0);
    let text = page.frame_text().unwrap().unwrap();
    assert!(
        text.contains("first paragraph about zqxw crawling"),
        "{text}"
    );
    // The doc row itself has no copy of it.
    assert_eq!(db.store.doc(id).unwrap().unwrap().doc.text, "");
    assert_eq!(db.doc(&f.url("/")).unwrap().text, text);
    let out = common::shell(
        db.store.clone(),
        vec![
            format!("page {} --raw", f.url("/")),
            format!("page {}", f.url("/")),
            "set filter.mode relevance".into(),
            "set relevance.keywords zqxw".into(),
            "refilter".into(),
            "count pages where verdict = 'keep'".into(),
        ],
    )
    .await;
    assert!(out.contains(BODY), "{out}");
    assert!(out.contains("first paragraph about zqxw"), "excerpt: {out}");
    assert!(out.trim_end().ends_with("\n1"), "kept by its text: {out}");
}
