//! `import warc`: archives read back into a db as pages — trawl's own
//! (exported and live), wget's `--warc-file`, and broken ones — through
//! the shell, over a real server on 127.0.0.1 and real RocksDB dbs.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use crate::common::raw::RawServer;
use crate::common::{self, Db, fast, run_measured, trawl_cmd};
use crate::warc_live::{archiving, site, warc_files};
use trawl::schema::tables::Pages;
use trawl::store::Store;

/// A db's pages: URL → status, body MD5 and out-links (target, anchor,
/// verdict), sorted.
type Crawl = BTreeMap<String, (u16, [u8; 16], Vec<String>)>;

fn pages_of(store: &Store) -> Crawl {
    let mut out = BTreeMap::new();
    for row in store.rows::<Pages>(&[]) {
        let (id, p) = row.unwrap();
        let mut links: Vec<String> = store
            .links_from(id, usize::MAX)
            .unwrap()
            .into_iter()
            .map(|(_, l)| format!("{} {:?} {:?}", l.dst_url, l.anchor, l.verdict))
            .collect();
        links.sort();
        out.insert(p.url.clone(), (p.status, p.md5, links));
    }
    out
}

/// Rows and counters agree, as after a crawl.
fn audited(store: &Store) {
    assert_eq!(trawl::crawl::audit(store).unwrap(), Vec::<String>::new());
}

async fn import(store: &Arc<Store>, files: &[&Path]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let cmd = format!("import warc {}", names.join(" "));
    common::shell(store.clone(), vec![cmd]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_exported_or_archived_live_imports_as_the_same_pages_and_links() {
    let server = RawServer::start(site()).await;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::new();
    let live = dir.path().join("live");
    db.crawl(archiving(&live), &[server.url("/")]).await;
    let want = pages_of(&db.store);
    assert!(want.len() >= 10, "{want:?}");
    let exported = dir.path().join("export.warc.gz");
    let cmd = format!("export warc {}", exported.display());
    common::shell(db.store.clone(), vec![cmd]).await;

    let from_export = Db::new();
    let out = import(&from_export.store, &[&exported]).await;
    assert!(
        out.contains(&format!("{} pages stored", want.len())),
        "{out}"
    );
    assert_eq!(pages_of(&from_export.store), want, "{out}");
    audited(&from_export.store);
    // The duplicate is a revisit in the export, stored as a duplicate.
    let copy = from_export.page(&server.url("/copy")).unwrap();
    assert_eq!(copy.md5, db.page(&server.url("/a")).unwrap().md5);
    assert_eq!(from_export.store.counters().unwrap().duplicates, 1);

    // The crawl's own files: robots.txt, request and metadata records are
    // counted and skipped; the gzip and chunked bodies come back decoded.
    let files = warc_files(&live);
    let refs: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
    let from_live = Db::new();
    let out = import(&from_live.store, &refs).await;
    assert_eq!(pages_of(&from_live.store), want, "{out}");
    for why in [
        "request records",
        "metadata records",
        "robots.txt responses",
    ] {
        assert!(out.contains(why), "{why}: {out}");
    }
    assert!(out.contains(", 0 malformed"), "{out}");
    // Importing again stores nothing twice.
    let again = import(&from_live.store, &refs).await;
    assert!(again.contains(": 0 pages stored"), "{again}");
    assert!(
        again.contains("captures of a URL the db has an outcome for"),
        "{again}"
    );
    audited(&from_live.store);
    let seeds = common::shell(from_live.store.clone(), vec!["seed list".into()]).await;
    let root = server.url("/");
    assert!(
        seeds
            .lines()
            .any(|l| l.starts_with(&root) && l.contains("in scope: its pages were imported from")),
        "{seeds}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wget_warc_imports_with_every_page_and_link() {
    let server = RawServer::start(site()).await;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::new();
    db.crawl(fast(), &[server.url("/")]).await;
    let crawled = pages_of(&db.store);
    let base = dir.path().join("wget");
    let status = std::process::Command::new("wget")
        .args(["--recursive", "--level=inf", "--no-verbose", "--tries=1"])
        .arg(format!("--warc-file={}", base.display()))
        .arg(format!(
            "--directory-prefix={}",
            dir.path().join("m").display()
        ))
        .arg(server.url("/"))
        .status()
        .expect("wget (Debian package wget) runs");
    // wget exits 8 when a page answered 404, as /gone does.
    assert!(matches!(status.code(), Some(0 | 8)), "{status}");
    let warc = dir.path().join("wget.warc.gz");
    let imported = Db::new();
    let out = import(&imported.store, &[&warc]).await;
    let got = pages_of(&imported.store);
    let responses: std::collections::BTreeSet<String> = crate::common::tools::warcio_index(&warc)
        .into_iter()
        .filter(|r| r["warc-type"] == "response")
        .map(|r| r["warc-target-uri"].as_str().unwrap().to_string())
        .filter(|u| !u.ends_with("/robots.txt"))
        .collect();
    let responses = responses.len();
    assert_eq!(got.len(), responses, "every response wget wrote: {out}");
    assert!(out.contains(", 0 malformed"), "{out}");
    // Each page wget fetched is the page trawl fetched: status, body
    // (the chunked one de-chunked, the gzip one decoded) and links.
    for (url, page) in &got {
        assert_eq!(Some(page), crawled.get(url), "{url}");
    }
    assert!(got.contains_key(&server.url("/chunked")), "{got:?}");
    assert!(got[&server.url("/")].2.len() >= 10, "{got:?}");
    // The rest of trawl works on it as on a crawl of its own.
    let home = server.url("/");
    let wacz = dir.path().join("wget.wacz");
    let cmds = [
        format!("links to {}", server.url("/a")),
        "refilter".to_string(),
        "rank pagerank top 3".to_string(),
        "simulate bfs".to_string(),
        "discover seeds".to_string(),
        format!("export wacz {}", wacz.display()),
        "pages where status = 200 order by url limit 3".to_string(),
    ];
    let out = common::shell(imported.store.clone(), cmds.to_vec()).await;
    assert!(out.contains(&home), "{out}");
    assert!(wacz.exists());
    audited(&imported.store);
}

/// One WARC record's bytes.
fn record(kind: Option<&str>, url: &str, declared: Option<usize>, block: &[u8]) -> Vec<u8> {
    let mut r = b"WARC/1.0\r\n".to_vec();
    if let Some(k) = kind {
        r.extend_from_slice(format!("WARC-Type: {k}\r\n").as_bytes());
    }
    let len = declared.unwrap_or(block.len());
    let fields = format!(
        "WARC-Target-URI: {url}\r\nWARC-Date: 2020-05-06T07:08:09Z\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {len}\r\n\r\n"
    );
    r.extend_from_slice(fields.as_bytes());
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

fn http(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    g.write_all(bytes).unwrap();
    g.finish().unwrap()
}

/// Good records around the broken kinds the issue names: a truncated
/// gzip member (or a record cut by the file's end), a wrong
/// Content-Length, no WARC-Type, a declared length of 2 GB, garbage
/// between records.
fn broken_archive(gzip: bool) -> Vec<u8> {
    let page = |n: usize| {
        http(&format!(
            "<title>p{n}</title><a href=\"/p{}\">next</a>",
            n + 1
        ))
    };
    let url = |n: usize| format!("http://archive.test/p{n}");
    let good = |n: usize| record(Some("response"), &url(n), None, &page(n));
    let wrap = |r: Vec<u8>| if gzip { gz(&r) } else { r };
    let mut out = wrap(good(0));
    let cut = wrap(good(1));
    out.extend_from_slice(&cut[..cut.len() * 2 / 3]);
    out.extend_from_slice(&wrap(good(2)));
    let short = page(3).len() - 10;
    out.extend_from_slice(&wrap(record(
        Some("response"),
        &url(3),
        Some(short),
        &page(3),
    )));
    out.extend_from_slice(&wrap(record(None, &url(4), None, &page(4))));
    out.extend_from_slice(&wrap(record(
        Some("response"),
        &url(5),
        Some(2 << 30),
        &page(5),
    )));
    out.extend_from_slice(b"\x00\x01 some garbage that is no record\r\n");
    out.extend_from_slice(&wrap(good(6)));
    out.extend_from_slice(&wrap(record(
        Some("request"),
        &url(6),
        None,
        b"GET /p6 HTTP/1.1\r\n\r\n",
    )));
    let last = wrap(good(7));
    out.extend_from_slice(&last[..last.len() - 20]);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_archives_are_reported_and_skipped() {
    for gzip in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(if gzip { "b.warc.gz" } else { "b.warc" });
        std::fs::write(&path, broken_archive(gzip)).unwrap();
        let db = Db::new();
        let out = import(&db.store, &[&path]).await;
        let stored: Vec<String> = pages_of(&db.store).into_keys().collect();
        let want: Vec<String> = [0, 2, 6]
            .iter()
            .map(|n| format!("http://archive.test/p{n}"))
            .collect();
        assert_eq!(stored, want, "gzip {gzip}: {out}");
        assert!(out.contains("skipped 1: request records"), "{out}");
        for why in ["Content-Length", "no WARC-Type", "2147483648"] {
            assert!(out.contains(why), "gzip {gzip}: {why}: {out}");
        }
        let malformed = out.lines().filter(|l| l.contains("malformed: ")).count();
        assert!(malformed >= 5, "gzip {gzip}: {out}");
        // Fetched at the archive's time, not the import's.
        let p0 = db.page("http://archive.test/p0").unwrap();
        let at = trawl::model::Utc::parse_iso("2020-05-06T07:08:09Z").unwrap();
        assert_eq!(p0.fetched_ms, at);
        // The link from p0 to p1 (whose record broke) stays queued.
        let p1 = db.seen("http://archive.test/p1").unwrap();
        assert_eq!(p1.state, trawl::model::SeenState::Queued, "{out}");
        audited(&db.store);
    }
}

#[test]
fn a_huge_record_is_cut_at_the_body_cap_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    // 100,000 header lines and 100,000 nested elements, then a body of
    // 60 MB where the cap keeps 10 MB; a record that declares 2 GB.
    let headers = "X:1\r\n".repeat(100_000);
    let nested = "<div>".repeat(100_000);
    let mut body = format!("<title>deep</title>{nested}<a href=\"/other\">x</a>").into_bytes();
    body.resize(60 << 20, b'a');
    let mut block =
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{headers}\r\n").into_bytes();
    block.extend_from_slice(&body);
    let mut file = record(Some("response"), "http://big.test/", None, &block);
    file.extend(record(
        Some("response"),
        "http://big.test/2gb",
        Some(2 << 30),
        b"x",
    ));
    let path = dir.path().join("big.warc");
    std::fs::write(&path, &file).unwrap();
    drop((file, block, body));
    let batch = dir.path().join("import.txt");
    std::fs::write(&batch, format!("import warc {}\n", path.display())).unwrap();
    let db = dir.path().join("db");
    let mut cmd = trawl_cmd(&["run", "--max-restarts", "0", "--db"]);
    cmd.arg(&db).arg(&batch);
    let m = run_measured(cmd);
    assert!(m.status.success(), "{} {}", m.stdout, m.stderr);
    assert!(m.stdout.contains("1 pages stored"), "{}", m.stdout);
    assert!(
        m.stdout.contains("runs past the end of the file"),
        "{}",
        m.stdout
    );
    m.assert_rss_bound("importing a 60 MB record and one declaring 2 GB");
    let store = Store::open(&db).unwrap();
    let page = store.page(common::id("http://big.test/")).unwrap().unwrap();
    assert!(page.truncated);
    assert_eq!(page.body_len, 10 << 20);
}

/// A page at the body cap (10 MB of 100,000 nested elements, a
/// 100,000-letter word, then lists, links and emphasis) goes out as
/// Markdown, as JSONL text and as a CSV row with its text, and into the
/// search index, each in a child process within the RSS bound.
#[test]
fn a_page_at_the_body_cap_exports_as_text_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = format!(
        "<title>capped</title>{}<p>{}</p>",
        "<div>".repeat(100_000),
        "x".repeat(100_000)
    );
    let mut i = 0;
    while body.len() < 11 << 20 {
        body.push_str(&format!(
            "<p>word {i} <a href=\"/l{i}\">link {i}</a> <b>bold</b></p><ul><li>item {i}</li></ul>\n"
        ));
        i += 1;
    }
    let path = dir.path().join("cap.warc");
    std::fs::write(
        &path,
        record(Some("response"), "http://cap.test/", None, &http(&body)),
    )
    .unwrap();
    drop(body);
    let db = dir.path().join("db");
    let run = |line: String| {
        let batch = dir.path().join("job.txt");
        std::fs::write(&batch, format!("{line}\n")).unwrap();
        let mut cmd = trawl_cmd(&["run", "--max-restarts", "0", "--db"]);
        cmd.arg(&db).arg(&batch);
        let m = run_measured(cmd);
        assert!(m.status.success(), "{line}: {} {}", m.stdout, m.stderr);
        m
    };
    run(format!("import warc {}", path.display()));
    for name in ["cap.md", "cap.jsonl"] {
        let out = dir.path().join(name);
        run(format!("export text {}", out.display()))
            .assert_rss_bound(&format!("export text to {name} of a page at the cap"));
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.len() > 1 << 20, "{name}: {} bytes", text.len());
        assert!(text.contains("capped"), "{name}");
    }
    let md = std::fs::read_to_string(dir.path().join("cap.md")).unwrap();
    assert!(md.starts_with("# capped\n"), "{}", &md[..200.min(md.len())]);
    assert!(md.contains("[link 7](http://cap.test/l7)"));
    assert!(md.contains("- item 7"));
    let csv = dir.path().join("cap.csv");
    run(format!("export pages {} --text", csv.display()))
        .assert_rss_bound("export pages --text of a page at the cap");
    let csv = std::fs::read_to_string(&csv).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.split(',').any(|h| h == "text"), "{header}");
    assert!(csv.contains("item 7"));
    // Its million words are indexed; the 100,000-letter one is left out.
    run("reindex search".into()).assert_rss_bound("reindex search of a page at the cap");
    let found = run("search item 7 --format jsonl".into()).stdout;
    assert!(found.contains("http://cap.test/"), "{found}");
    let none = run(format!("search {} --format jsonl", "x".repeat(100_000))).stdout;
    assert!(
        !none.contains("cap.test"),
        "{}",
        &none[..none.len().min(300)]
    );
    // `text ~` reads the index's candidates, the held-in-part page among
    // them, and finds the long word and the words as the scan does.
    for filter in [
        format!("text ~ '{}'", "x".repeat(100_000)),
        "text ~ 'item 7'".to_string(),
        "title ~ 'CAPPED' and text ~ 'bold'".to_string(),
    ] {
        let m = run(format!("pages where {filter} limit 5"));
        m.assert_rss_bound("pages where text ~ on a page at the cap");
        let out = m.stdout;
        assert!(out.contains("http://cap.test/"), "{filter}: {out}");
        assert!(out.contains("from the search index"), "{filter}: {out}");
    }
}

/// A WARC/1.0 file as Heritrix writes one: warcinfo, a `dns:` response,
/// request/response pairs with the body still chunked, metadata, and a
/// revisit (the 1.0 profile, an HTTP head and no payload) of another
/// URL's response, found by its payload digest.
fn heritrix_archive() -> Vec<u8> {
    let rec = |kind: &str, url: &str, extra: &str, ctype: &str, block: &[u8]| {
        let mut r = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {url}\r\nWARC-Date: 2019-01-02T03:04:05Z\r\nWARC-Record-ID: <urn:uuid:{}>\r\n{extra}Content-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
            url.len() + kind.len(),
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        gz(&r)
    };
    let http = "application/http; msgtype=response";
    let chunked = |body: &str| {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        )
    };
    let home = chunked("<title>home</title><a href=\"/same\">s</a> <a href=\"/again\">a</a>");
    let same = chunked("<title>same</title>one body");
    let digest = "WARC-Payload-Digest: sha1:AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH\r\n";
    let revisit = format!(
        "{digest}WARC-Profile: http://netpreserve.org/warc/1.0/revisit/identical-payload-digest\r\nWARC-Refers-To-Target-URI: http://h.test/same\r\n"
    );
    // `rec` names a record `<urn:uuid:N>`, N its URL's and type's length.
    let same_id = "http://h.test/same".len() + "response".len();
    let by_id = format!("WARC-Refers-To: <urn:uuid:{same_id}>\r\n");
    [
        rec(
            "warcinfo",
            "",
            "",
            "application/warc-fields",
            b"software: Heritrix/3.4.0\r\n",
        ),
        rec(
            "response",
            "dns:h.test",
            "",
            "text/dns",
            b"20190102030405\nh.test. 300 IN A 10.0.0.1\n",
        ),
        rec(
            "request",
            "http://h.test/",
            "",
            "application/http; msgtype=request",
            b"GET / HTTP/1.1\r\n\r\n",
        ),
        rec("response", "http://h.test/", "", http, home.as_bytes()),
        rec(
            "metadata",
            "http://h.test/",
            "",
            "application/warc-fields",
            b"outlink: http://h.test/same L a/@href\r\n",
        ),
        rec(
            "revisit",
            "http://h.test/again",
            &revisit,
            http,
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
        ),
        // A revisit with no HTTP head: the response's status and headers.
        rec("revisit", "http://h.test/bare", &revisit, http, b""),
        // One naming the response by its record id, with no digest.
        rec("revisit", "http://h.test/byid", &by_id, http, b""),
        rec(
            "response",
            "http://h.test/same",
            digest,
            http,
            same.as_bytes(),
        ),
    ]
    .concat()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heritrix_style_archive_imports_its_pages_and_revisits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("IAH-20190102030405-00000-h.warc.gz");
    std::fs::write(&path, heritrix_archive()).unwrap();
    let db = Db::new();
    let out = import(&db.store, &[&path]).await;
    assert!(out.contains(": 5 pages stored"), "{out}");
    for why in [
        "dns: records",
        "request records",
        "metadata records",
        "warcinfo records",
    ] {
        assert!(out.contains(why), "{why}: {out}");
    }
    let pages = pages_of(&db.store);
    let (home, same, again) = (
        &pages["http://h.test/"],
        &pages["http://h.test/same"],
        &pages["http://h.test/again"],
    );
    assert_eq!(home.2.len(), 2, "its links: {home:?}");
    // The revisit came first in the file; its payload is the response's.
    assert_eq!(again.1, same.1);
    assert_eq!(pages["http://h.test/bare"].1, same.1);
    assert_eq!(pages["http://h.test/byid"].1, same.1);
    let bare = db.page("http://h.test/bare").unwrap();
    assert_eq!(
        (bare.status, bare.content_type.as_str()),
        (200, "text/html")
    );
    assert_eq!(db.store.counters().unwrap().duplicates, 3);
    let doc = db.doc("http://h.test/same").unwrap();
    assert_eq!(doc.title, "same");
    audited(&db.store);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_stopped_while_finding_hosts_stores_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.warc.gz");
    let file: Vec<u8> = (0..600)
        .flat_map(|n| {
            gz(&record(
                Some("response"),
                &format!("http://m.test/{n}"),
                None,
                &http("x"),
            ))
        })
        .collect();
    std::fs::write(&path, file).unwrap();
    let db = Db::new();
    let store = db.store.clone();
    let report = tokio::task::spawn_blocking(move || {
        let mut stop = |_: &trawl::crawl::ImportProgress| false;
        trawl::crawl::import_warc(store, fast(), &[path], &mut stop).unwrap()
    })
    .await
    .unwrap();
    assert!(report.interrupted);
    assert_eq!(report.stored, 0);
    assert_eq!(db.store.counters().unwrap().fetched, 0);
}
