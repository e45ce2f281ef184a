//! Sitemaps as URL sources end to end: a robots.txt's `Sitemap:` lines
//! (an index of a gzip urlset, a text sitemap, a broken file and one that
//! moved), a seed host's `/sitemap.xml` found without one, scope and
//! robots.txt applied to what they list, `<lastmod>` kept and `why`.

use crate::common;

use std::io::Write;
use std::sync::{Arc, OnceLock};

use common::{Db, Fixture};
use trawl::model::{FilterReason, SeenState};
use trawl::schema::tables::{Lastmods, Sitemaps};
use trawl::settings::{CrawlSettings, Scope};
use trawl::site::Response;

fn gzip(text: &str) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

/// The host that names its sitemaps in robots.txt; `base` is its origin.
fn listed(base: &str, path: &str) -> Response {
    let urlset = |locs: &[&str]| {
        let urls: String = locs
            .iter()
            .map(|l| format!("<url><loc>{base}{l}</loc></url>"))
            .collect();
        format!(
            "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"
        )
    };
    match path {
        "/robots.txt" => Response::text(format!(
            "User-agent: *\nDisallow: /private\nSitemap: {base}/index.xml\nSitemap: http://127.0.0.2:9/elsewhere.xml\n"
        )),
        "/index.xml" => Response::new(
            200,
            format!(
                "<sitemapindex><sitemap><loc>{base}/s1.xml.gz</loc></sitemap><sitemap><loc>{base}/s2.txt</loc></sitemap>\
             <sitemap><loc>{base}/broken.xml</loc></sitemap><sitemap><loc>{base}/moved.xml</loc></sitemap>\
             <sitemap><loc>http://127.0.0.2:9/other.xml</loc></sitemap></sitemapindex>"
            ),
        ),
        "/s1.xml.gz" => Response::new(
            200,
            gzip(&format!(
                "<urlset><url><loc>{base}/a</loc><lastmod>2024-05-17</lastmod></url><url><loc>{base}/b</loc></url>\
             <url><loc>{base}/private/x</loc></url></urlset>"
            )),
        ),
        "/s2.txt" => Response::text(format!("{base}/c\nhttp://127.0.0.2:9/out\n")),
        "/broken.xml" => Response::new(
            200,
            format!("<urlset><url><loc>{base}/d</loc></url><url><loc>{base}/e</lo"),
        ),
        "/moved.xml" => Response::redirect(301, &format!("{base}/real.xml")),
        "/real.xml" => Response::new(200, urlset(&["/f"])),
        "/sitemap.xml" => Response::status(404),
        // Pages link nowhere: only the sitemaps lead to them.
        p => common::page(&format!("page {p}"), &[]),
    }
}

async fn listing_host() -> Fixture {
    let base: Arc<OnceLock<String>> = Arc::default();
    let b = base.clone();
    let f = Fixture::start(move |p: &str| listed(b.get().map_or("", String::as_str), p)).await;
    base.set(f.url("/").trim_end_matches('/').to_string())
        .unwrap();
    f
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemaps_lead_to_pages_within_scope_and_robots_with_their_lastmod() {
    let host = listing_host().await;
    // A seed host whose robots.txt names no sitemap: /sitemap.xml is tried.
    let plain = Fixture::start(|p: &str| match p {
        "/robots.txt" => Response::status(404),
        // A site map for people where a sitemap was expected: a page.
        "/sitemap.xml" => common::page("site map", &["/from-html"]),
        p => common::page(&format!("plain {p}"), &[]),
    })
    .await;
    let db = Db::new();
    let mut s = CrawlSettings {
        scope: Scope::Host,
        ..common::fast()
    };
    s.sitemaps.enabled = true;
    db.crawl(s, &[host.url("/"), plain.url("/")]).await;

    let mut got = host.fetched();
    got.sort();
    assert_eq!(
        got,
        [
            "/",
            "/a",
            "/b",
            "/broken.xml",
            "/c",
            "/d",
            "/f",
            "/index.xml",
            "/moved.xml",
            "/real.xml",
            "/s1.xml.gz",
            "/s2.txt"
        ],
        "robots.txt's /private and what lies off the host are not fetched; the broken file gives what came before the break"
    );
    assert_eq!(
        plain.fetched(),
        ["/", "/sitemap.xml", "/from-html"],
        "an HTML page keeps its links"
    );
    let seen = |p: &str| db.seen(&host.url(p)).unwrap();
    assert_eq!(
        seen("/private/x").state,
        SeenState::Filtered(FilterReason::Robots)
    );
    assert_eq!(
        (
            seen("/index.xml").depth,
            seen("/s1.xml.gz").depth,
            seen("/a").depth
        ),
        (0, 0, 1)
    );
    let out = db.seen("http://127.0.0.2:9/out").unwrap();
    assert_eq!(out.state, SeenState::Filtered(FilterReason::Scope));
    // A URL out of scope gets no `lastmods` row; one in scope does.
    let lastmod = |u: &str| db.store.row::<Lastmods>(&common::id(u)).unwrap();
    assert!(lastmod("http://127.0.0.2:9/out").is_none());
    assert!(lastmod(&host.url("/c")).is_some());
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");

    let why = common::why(&db.store, &host.url("/a")).await;
    assert!(
        why.contains(&format!(
            "listed in the sitemap {} (lastmod Fri, 17 May 2024 00:00:00 GMT)",
            host.url("/s1.xml.gz")
        )),
        "{why}"
    );
    let why = common::why(&db.store, &host.url("/index.xml")).await;
    assert!(
        why.contains(
            "a sitemap (from a Sitemap: line of its host's robots.txt; a sitemapindex of 5 entries)"
        ),
        "{why}"
    );
    let why = common::why(&db.store, &host.url("/broken.xml")).await;
    assert!(
        why.contains("a sitemap (from the sitemap index") && why.contains("a urlset of 1 entries"),
        "{why}"
    );
    let why = common::why(&db.store, &host.url("/real.xml")).await;
    assert!(
        why.contains("a sitemap"),
        "a moved sitemap is still one: {why}"
    );
    let why = common::why(&db.store, &plain.url("/sitemap.xml")).await;
    assert!(
        why.contains("its seed host's usual place") && why.contains("not read: not a sitemap"),
        "{why}"
    );
    // Off the host, nothing of another host's sitemap is even recorded.
    for other in [
        "http://127.0.0.2:9/other.xml",
        "http://127.0.0.2:9/elsewhere.xml",
    ] {
        assert!(db.seen(other).is_none(), "{other}");
    }

    // Off (the default), no sitemap is asked for.
    let other = Db::new();
    let s = CrawlSettings {
        scope: Scope::Host,
        ..common::fast()
    };
    let before = host.fetched().len();
    other.crawl(s, &[host.url("/")]).await;
    assert_eq!(host.fetched()[before..], ["/"]);
}

/// A host whose robots.txt names a sitemap on another host and one of its
/// own that redirects to another host; `base` is its origin.
fn pointing_away(base: &str, path: &str) -> Response {
    match path {
        "/robots.txt" => Response::text(format!(
            "User-agent: *\nSitemap: http://127.0.0.2:9/elsewhere.xml\nSitemap: {base}/map.xml\n"
        )),
        "/map.xml" => Response::redirect(301, "http://127.0.0.2:9/away.xml"),
        p => common::page(&format!("page {p}"), &[]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_any_scope_only_the_robots_hosts_own_sitemaps_are_read() {
    let base: Arc<OnceLock<String>> = Arc::default();
    let b = base.clone();
    let host =
        Fixture::start(move |p: &str| pointing_away(b.get().map_or("", String::as_str), p)).await;
    base.set(host.url("/").trim_end_matches('/').to_string())
        .unwrap();
    let db = Db::new();
    let mut s = CrawlSettings {
        scope: Scope::Any,
        ..common::fast()
    };
    s.sitemaps.enabled = true;
    db.crawl(s, &[host.url("/")]).await;
    let sitemap = |u: &str| db.store.row::<Sitemaps>(&common::id(u)).unwrap();
    assert!(sitemap(&host.url("/map.xml")).is_some());
    // Neither is a sitemap of this crawl: one is not even seen, the other
    // is only where a page's redirect leads.
    let elsewhere = "http://127.0.0.2:9/elsewhere.xml";
    assert!(sitemap(elsewhere).is_none() && db.seen(elsewhere).is_none());
    assert!(sitemap("http://127.0.0.2:9/away.xml").is_none());
    let problems = trawl::crawl::audit(&db.store).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}
