//! Pages that once stopped or ballooned an unattended crawl, served beside
//! 50 normal pages with denoising, sitemaps and near-duplicates on: 100,000
//! levels of nesting of each element whose text is read, thousands of
//! unclosed anchors, a sitemap that inflates to 50 MB of invalid bytes, a
//! gzip bomb of 10 GB, tarpits plain and chunked, and four hosts that send
//! 8 MiB and stall while a fifth trickles (the byte budget starved). The
//! crawl must end by itself with exit 0 and no restart, fetch every normal
//! page and every page linked after the hostile markup, and keep its peak
//! RSS under the design bound.

use crate::common;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use common::raw::{RawServer, Script, Step, head, response};
use common::{id, run_measured, trawl_cmd, why};
use trawl::model::{FailReason, SeenState};
use trawl::store::Store;

const DEPTH: usize = 100_000;

/// Element kinds whose text the parse reads, nested [`DEPTH`] deep.
const NESTED: &[(&str, &str, &str)] = &[
    ("h1", "<h1>", "</h1>"),
    ("h1-bold", "<h1>", ""), // the page that overflowed: <h1> then <b>s
    ("title", "<title>", "</title>"),
    ("h3", "<h3>", "</h3>"),
    // Anchors without href: 100,000 links would be past crawl.max_outlinks.
    ("anchor", "<a name=n>", "</a>"),
    ("meta", "<div><meta name=author content=x>", "</div>"),
    ("noscript", "<noscript>", "</noscript>"),
    ("textarea", "<textarea>", "</textarea>"),
    ("table", "<table><tr><td>", "</td></tr></table>"),
    ("list", "<ul><li>", "</li></ul>"),
    ("span", "<span>", ""),
];

/// Words of page `i`, different enough from every other page's that no
/// two are near-duplicates.
fn words(i: usize, n: usize) -> String {
    let mut x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("w{}", x % 5_000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn html(body: &str) -> Vec<u8> {
    response("200 OK", "text/html; charset=utf-8", body.as_bytes())
}

fn nested_page(name: &str, open: &str, close: &str) -> String {
    let inner = if name == "h1-bold" { "<b>" } else { open };
    let mut s = format!("<html><body><p>{}</p>", words(1_000, 40));
    if name == "h1-bold" {
        s.push_str("<h1>");
    }
    s.push_str(&inner.repeat(DEPTH));
    s.push_str("deep text");
    s.push_str(&close.repeat(DEPTH));
    s.push_str(&format!(
        "<p><a href=/after/{name}>after</a></p></body></html>"
    ));
    s
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// 10 MB of gzip members that each inflate to 1 MiB of zeros: ~10 GB.
fn gzip_bomb() -> Vec<u8> {
    let member = gzip(&vec![0u8; 1 << 20]);
    let body = member.repeat((10 << 20) / member.len());
    let len = body.len().to_string();
    let mut r = head(
        "200 OK",
        &[
            ("content-type", "text/html"),
            ("content-encoding", "gzip"),
            ("content-length", &len),
        ],
    );
    r.extend(body);
    r
}

/// The main host, which must know its own origin (`base`, set once it is
/// bound) to list absolute URLs in its sitemaps.
fn main_host(base: Arc<std::sync::OnceLock<String>>) -> Script {
    let sitemap_bomb = Arc::new(gzip(&vec![0xFFu8; (50 << 20) + 4096]));
    let gzip_bomb = Arc::new(gzip_bomb());
    Arc::new(move |path: &str, _n: usize| -> Vec<Step> {
        use Step::*;
        let page = |b: &str| vec![Write(html(b))];
        let base = base.get().map_or("", String::as_str);
        match path {
            "/robots.txt" => vec![Write(response(
                "200 OK",
                "text/plain",
                format!("User-agent: *\nAllow: /\nSitemap: {base}/bomb.xml.gz\nSitemap: {base}/sitemap.xml\n").as_bytes(),
            ))],
            "/" => {
                let mut links: Vec<String> = (0..50).map(|i| format!("/n/{i}")).collect();
                links.extend(NESTED.iter().map(|(n, _, _)| format!("/deep/{n}")));
                links.extend(["/unclosed", "/gzip-bomb", "/tarpit", "/tarpit-chunked"].map(String::from));
                let a: String = links.iter().map(|l| format!("<a href={l}>{l}</a> ")).collect();
                page(&format!("<title>home</title><p>{}</p>{a}", words(999, 30)))
            }
            "/sitemap.xml" => vec![Write(response(
                "200 OK",
                "application/xml",
                format!("<urlset><url><loc>{base}/from-sitemap</loc></url></urlset>").as_bytes(),
            ))],
            "/bomb.xml.gz" => vec![Write(response("200 OK", "application/gzip", &sitemap_bomb))],
            "/gzip-bomb" => vec![Write(gzip_bomb.to_vec())],
            "/unclosed" => {
                // Unclosed anchors over 180 KB of text: each spanned the
                // rest of the page (~1 GB of anchors at 6,000).
                let mut s = String::from("<html><body>");
                for i in 0..5_000 {
                    s.push_str(&format!("<a href=/n/{}>x{i} ", i % 50));
                }
                s.push_str(&"tail text ".repeat(18_000));
                s.push_str("<a href=/after/unclosed>after</a></body></html>");
                page(&s)
            }
            "/tarpit" => vec![
                Write(head("200 OK", &[("content-type", "text/html"), ("content-length", "100000")])),
                Trickle { bytes: vec![b'x'; 100], every: Duration::from_secs(1) },
            ],
            "/tarpit-chunked" => vec![
                Write(head("200 OK", &[("content-type", "text/html"), ("transfer-encoding", "chunked")])),
                Trickle { bytes: b"1\r\nx\r\n".repeat(40), every: Duration::from_millis(300) },
            ],
            p if p.starts_with("/deep/") => {
                let name = &p[6..];
                match NESTED.iter().find(|(n, _, _)| *n == name) {
                    Some((n, open, close)) => page(&nested_page(n, open, close)),
                    None => vec![Write(response("404 Not Found", "text/plain", b""))],
                }
            }
            p if p.starts_with("/n/") => {
                let i: usize = p[3..].parse().unwrap_or(0);
                // The last ten are over the free 64 KiB a body has: they
                // need the budget the stalled hosts hold.
                let n = if i >= 40 { 30_000 } else { 200 };
                page(&format!("<title>page {i}</title><p>{}</p>", words(i, n)))
            }
            p if p.starts_with("/after/") || p == "/from-sitemap" => {
                page(&format!("<title>{p}</title><p>{}</p>", words(p.len() * 31, 60)))
            }
            _ => vec![Write(response("404 Not Found", "text/plain", b""))],
        }
    })
}

/// A host whose home page sends `fast` bytes of a larger body, then
/// stalls (`trickle` false) or sends a byte a second.
fn stalling_host(fast: usize, trickle: bool) -> Script {
    Arc::new(move |path: &str, _n: usize| -> Vec<Step> {
        use Step::*;
        if path == "/robots.txt" {
            return vec![Write(response("404 Not Found", "text/plain", b""))];
        }
        let len = (fast * 2).to_string();
        let mut steps = vec![
            Write(head(
                "200 OK",
                &[("content-type", "text/html"), ("content-length", &len)],
            )),
            Write(vec![b'a'; fast]),
        ];
        steps.push(match trickle {
            true => Trickle {
                bytes: vec![b'b'; fast],
                every: Duration::from_secs(1),
            },
            false => Sleep(Duration::from_secs(600)),
        });
        steps
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unattended_crawl_ends_through_every_hostile_page() {
    let base = Arc::new(std::sync::OnceLock::new());
    let main = RawServer::start(main_host(base.clone())).await;
    base.set(format!("http://{}", main.addr)).unwrap();
    let mut stallers = Vec::new();
    for _ in 0..4 {
        stallers.push(RawServer::start(stalling_host(8 << 20, false)).await);
    }
    let trickler = RawServer::start(stalling_host(1 << 20, true)).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut cmd = trawl_cmd(&["crawl", "--db", db.to_str().unwrap()]);
    for s in stallers.iter().chain([&trickler]) {
        cmd.args(["--seed", &s.url("/")]);
    }
    cmd.args(["--seed", &main.url("/")])
        .args(["--delay-ms", "0", "--timeout-secs", "20"])
        .args([
            "--set",
            "denoise.enabled=true",
            "--set",
            "sitemaps.enabled=true",
        ])
        .args([
            "--set",
            "dedup.near=true",
            "--set",
            "fetch.min_speed_window=3s",
        ]);
    let run = tokio::task::spawn_blocking(move || run_measured(cmd))
        .await
        .unwrap();
    assert!(run.status.success(), "{}", run.stderr);
    assert!(
        !run.stderr.contains("process died"),
        "no death: {}",
        run.stderr
    );
    run.assert_rss_bound("hostile pages");
    assert!(!run.stderr.contains("search index"), "{}", run.stderr);

    let store = Arc::new(Store::open(&db).unwrap());
    // The crawl indexed every page it stored, the hostile ones too.
    let index = trawl::search::SearchIndex::open(&db).unwrap().unwrap();
    assert_eq!(index.pages(), store.counters().unwrap().fetched);
    let state = |url: &str| store.seen(id(url)).unwrap().map(|s| s.state);
    let fetched = Some(SeenState::Fetched { status: 200 });
    let mut must_fetch: Vec<String> = (0..50).map(|i| main.url(&format!("/n/{i}"))).collect();
    must_fetch.extend(
        NESTED
            .iter()
            .map(|(n, _, _)| main.url(&format!("/after/{n}"))),
    );
    must_fetch.push(main.url("/after/unclosed"));
    must_fetch.push(main.url("/from-sitemap"));
    for url in &must_fetch {
        assert_eq!(state(url), fetched, "{url}: {}", why(&store, url).await);
    }
    // Tarpits and stalled bodies are cut after the speed window, as
    // too-slow; the bodies waiting for the memory they held were fetched.
    let slow: Vec<String> = ["/tarpit", "/tarpit-chunked"]
        .iter()
        .map(|p| main.url(p))
        .chain(stallers.iter().chain([&trickler]).map(|s| s.url("/")))
        .collect();
    for url in &slow {
        assert_eq!(
            state(url),
            Some(SeenState::Failed(FailReason::TooSlow)),
            "{url}"
        );
        let text = why(&store, url).await;
        assert!(text.contains("under fetch.min_speed"), "{text}");
    }
    // The bomb is stored cut at the cap, read no further than that.
    let bomb = store.page(id(&main.url("/gzip-bomb"))).unwrap().unwrap();
    assert!(bomb.truncated, "cut at the cap");
    assert!(
        bomb.wire_len < 1 << 20,
        "{} bytes read of the 10 MB bomb",
        bomb.wire_len
    );
    // The sitemap bomb: read in a window, its one 50 MB line skipped.
    let text = why(&store, &main.url("/bomb.xml.gz")).await;
    assert!(text.contains("a text of 0 entries, 1 skipped"), "{text}");
    assert!(text.contains("over 50 MB uncompressed"), "{text}");
    assert!(text.len() < 4_000, "{text}");
    let problems = trawl::crawl::audit(&store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
    // Denoising the stored hostile pages again walks them on a thread of
    // the default 2 MiB stack: it ends, with every page judged.
    let cmds = vec![
        "set denoise.enabled true".into(),
        "refilter --denoise".into(),
    ];
    let text = common::shell(store.clone(), cmds).await;
    assert!(text.contains("refilter: "), "{text}");
}
