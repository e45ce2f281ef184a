//! The shell's output, pinned: each main command's table and JSON over a
//! small fixed site is compared with a file under `tests/golden/`, so a
//! change to what users see is a reviewed diff. The fixture server's port
//! is written `PORT`, and fetch times `T`. After an intended change, `TRAWL_BLESS=1 cargo test
//! --release --test it golden::` rewrites the files.

use std::path::PathBuf;

use crate::common::{self, Db, Fixture, fast, page};
use trawl::site::Response;

/// One host: `/` links to three pages, a 404, a disallowed page and a
/// page elsewhere; `/a` links back and on; titles in two scripts.
fn site(path: &str) -> Response {
    match path {
        "/robots.txt" => Response::text("User-agent: *\nDisallow: /private\n"),
        "/" => page(
            "home",
            &[
                "/a",
                "/b",
                "/c",
                "/gone",
                "/private/x",
                "http://elsewhere.invalid/y",
            ],
        ),
        "/a" => page("研究生 news", &["/", "/b", "/a/deeper"]),
        "/gone" => Response::status(404),
        p => page(&format!("page {p}"), &[]),
    }
}

/// `out` with the number of every `"fetched_at": N` written `T` (when a
/// page was fetched differs each run).
fn mask_times(out: &str) -> String {
    out.lines()
        .map(|l| match l.split_once("\"fetched_at\": ") {
            Some((head, tail)) => {
                let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
                format!("{head}\"fetched_at\": T{rest}")
            }
            None => l.to_string(),
        })
        .map(|l| l + "\n")
        .collect()
}

/// Compares `got` with the golden file `name`, or writes it when blessing.
fn check(name: &str, got: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("TRAWL_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (TRAWL_BLESS=1 writes it)", path.display()));
    assert!(
        got == want,
        "{name} differs from {} (TRAWL_BLESS=1 rewrites it after an intended change):\n--- want\n{want}\n--- got\n{got}",
        path.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn main_commands_print_what_the_golden_files_say() {
    let f = Fixture::start(site).await;
    let db = Db::new();
    // One fetch at a time: the crawl, and so every depth, is the same each run.
    let settings = trawl::settings::CrawlSettings {
        concurrency: 1,
        ..fast()
    };
    db.crawl(settings, &[f.url("/")]).await;
    let addr = f.server.addr().to_string();
    let root = f.url("/");
    let cases = [
        ("help.txt", "help".to_string()),
        ("help-pages.txt", "help pages".into()),
        ("status.txt", "status".into()),
        ("status.json", "status --json".into()),
        ("pages.txt", "pages order by url".into()),
        (
            "pages.json",
            "pages where status = 200 order by url --json".into(),
        ),
        ("count.txt", "count pages where status >= 400".into()),
        ("links.txt", format!("links from {root}")),
        ("links.json", format!("links from {root} --json")),
        ("hosts.txt", "hosts".into()),
        ("hosts.json", "hosts --json".into()),
        ("why.txt", format!("why {}", f.url("/private/x"))),
        ("frontier.txt", "frontier".into()),
        ("domains.txt", "domains".into()),
    ];
    for (name, cmd) in cases {
        let out = common::shell(db.store.clone(), vec![cmd]).await;
        check(name, &mask_times(&out.replace(&addr, "127.0.0.1:PORT")));
    }
}
