//! WARC written while crawling (`warc.dir`), checked by what archivists
//! check it with: `warcio check` and `warcio index` accept every file,
//! `cdxj-indexer` gives the same lines as trawl's own CDXJ, pywb replays
//! a page, and the records say what the wire said (content coding kept,
//! transfer coding removed, request and response paired, revisits of
//! repeated payloads and of 304s).

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::common::raw::{RawServer, Step, head, response};
use crate::common::tools::{cdxj_indexer, stdout_of, tool, warcio_check, warcio_index};
use crate::common::{self, Db, fast};
use trawl::settings::CrawlSettings;
use trawl::warc::reader::{Members, parse_record};
use trawl::warc::sha1_base32;

/// One record of a file: where it is, its fields, its block.
pub(crate) struct Rec {
    pub offset: u64,
    pub fields: BTreeMap<String, String>,
    pub block: Vec<u8>,
}

impl Rec {
    pub fn get(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }

    /// The HTTP head of the block and its payload.
    pub fn http(&self) -> (String, &[u8]) {
        let at = memchr::memmem::find(&self.block, b"\r\n\r\n").expect("HTTP head") + 4;
        (
            String::from_utf8_lossy(&self.block[..at]).into_owned(),
            &self.block[at..],
        )
    }
}

/// Every record of a `.warc.gz`, each its own gzip member.
pub(crate) fn records(path: &Path) -> Vec<Rec> {
    let file = std::fs::File::open(path).unwrap();
    Members::new(std::io::BufReader::new(file), 64 << 20)
        .map(|m| {
            let bytes = m.outcome.expect("every member whole");
            let (r, used) = parse_record(&bytes).expect("a WARC record");
            assert_eq!(&bytes[used..], b"\r\n\r\n", "a record ends in two CRLFs");
            Rec {
                offset: m.offset,
                fields: (r.fields.iter())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                block: r.block.to_vec(),
            }
        })
        .collect()
}

/// The `.warc.gz` files in `dir`, sorted; none may be left open.
pub(crate) fn warc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        assert!(!name.ends_with(".open"), "{name} left open");
        if name.ends_with(".warc.gz") {
            files.push(p);
        }
    }
    files.sort();
    files
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    g.write_all(bytes).unwrap();
    g.finish().unwrap()
}

/// Incompressible text of `n` bytes (hex of a xorshift stream).
fn noise(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut s = String::with_capacity(n);
    while s.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s += &format!("{x:016x}");
    }
    s.truncate(n);
    s
}

const HTML: &str = "text/html; charset=utf-8";

/// The site: a gzip page, a chunked one with its own reason phrase, two
/// pages with one body, a 404, a redirect, and five large pages that
/// take the files past 1 MiB.
pub(crate) fn site() -> crate::common::raw::Script {
    Arc::new(|path: &str, _n: usize| {
        let html = |title: &str, body: &str| {
            format!("<html><head><title>{title}</title></head><body>{body}</body></html>")
        };
        let bytes = match path {
            "/robots.txt" => response("404 Not Found", "text/plain", b""),
            "/" => {
                let mut links: String = ["/a", "/copy", "/gz", "/chunked", "/gone", "/moved"]
                    .iter()
                    .map(|l| format!("<a href=\"{l}\">{l}</a> "))
                    .collect();
                links += &(0..5)
                    .map(|i| format!("<a href=\"/big/{i}\">big</a> "))
                    .collect::<String>();
                response("200 OK", HTML, html("home", &links).as_bytes())
            }
            "/a" | "/copy" => response("200 OK", HTML, html("same", "one body").as_bytes()),
            "/gz" => {
                let body = gzip(html("zipped", "hello").as_bytes());
                let len = body.len().to_string();
                let mut r = head(
                    "200 OK",
                    &[
                        ("content-type", HTML),
                        ("content-encoding", "gzip"),
                        ("content-length", &len),
                    ],
                );
                r.extend_from_slice(&body);
                r
            }
            "/chunked" => {
                let mut r = head(
                    "200 Fine Thanks",
                    &[("content-type", HTML), ("transfer-encoding", "chunked")],
                );
                r.extend_from_slice(b"6\r\n<p>hel\r\n5\r\nlo</p\r\n1\r\n>\r\n0\r\n\r\n");
                r
            }
            "/gone" => response("404 Not Found", "text/plain", b"no such page"),
            "/moved" => {
                let mut r = head(
                    "301 Moved Permanently",
                    &[("location", "/a"), ("content-length", "0")],
                );
                r.extend_from_slice(b"");
                r
            }
            p if p.starts_with("/big/") => {
                let seed = p[5..].parse::<u64>().unwrap_or(0) + 7;
                response(
                    "200 OK",
                    HTML,
                    html("big", &noise(seed, 600_000)).as_bytes(),
                )
            }
            _ => response("404 Not Found", "text/plain", b""),
        };
        vec![Step::Write(bytes)]
    })
}

pub(crate) fn archiving(dir: &Path) -> CrawlSettings {
    let mut s = fast();
    s.warc.dir = Some(dir.to_path_buf());
    s.warc.max_file_size = 1 << 20;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_writes_warc_that_warcio_and_cdxj_indexer_accept() {
    let server = RawServer::start(site()).await;
    let db = Db::new();
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("warc");
    db.crawl(archiving(&warc), &[server.url("/")]).await;
    let files = warc_files(&warc);
    let sizes: Vec<u64> = files.iter().map(|f| f.metadata().unwrap().len()).collect();
    assert!(
        files.len() >= 2,
        "rolled past 1 MiB: {files:?} {sizes:?} {:?}",
        db.store.counters().unwrap()
    );
    let mut all = BTreeMap::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        assert!(name.starts_with("trawl-") && name.contains('~'), "{name}");
        warcio_check(f);
        // warcio's index lists each record; responses with their status.
        for line in warcio_index(f) {
            if line["warc-type"] == "response" || line["warc-type"] == "revisit" {
                let url = line["warc-target-uri"].as_str().unwrap().to_string();
                all.insert(url, line["http:status"].as_str().unwrap_or("").to_string());
            }
        }
        // trawl's CDXJ is cdxj-indexer's, line for line.
        let ours = std::fs::read_to_string(format!("{}.cdxj", f.display())).unwrap();
        let ours: Vec<String> = ours.lines().map(str::to_string).collect();
        assert_eq!(ours, cdxj_indexer(f), "{name}");
        let recs = records(f);
        assert_eq!(recs[0].get("WARC-Type"), "warcinfo");
        assert_eq!(recs[0].get("WARC-Filename"), name);
    }
    // Every page, and the robots.txt fetched before them.
    let pages = db.store.counters().unwrap().fetched;
    assert_eq!(
        all.remove(&server.url("/robots.txt")).as_deref(),
        Some("404")
    );
    assert_eq!(all.len() as u64, pages, "{all:?}");
    assert_eq!(all[&server.url("/gone")], "404");
    assert_eq!(all[&server.url("/moved")], "301");
    assert_eq!(all[&server.url("/gz")], "200");

    let recs: Vec<Rec> = files.iter().flat_map(|f| records(f)).collect();
    let by = |kind: &str, url: &str| {
        recs.iter()
            .find(|r| r.get("WARC-Type") == kind && r.get("WARC-Target-URI") == url)
            .unwrap_or_else(|| panic!("no {kind} record of {url}"))
    };
    // Content coding kept: the payload is the gzip the server sent.
    let gz = by("response", &server.url("/gz"));
    let (head, payload) = gz.http();
    assert!(head.contains("content-encoding: gzip\r\n"), "{head}");
    assert_eq!(
        payload,
        gzip(b"<html><head><title>zipped</title></head><body>hello</body></html>")
    );
    assert_eq!(gz.get("WARC-Payload-Digest"), sha1_base32(payload));
    assert_eq!(gz.get("WARC-IP-Address"), "127.0.0.1");
    assert!(gz.get("WARC-Date").ends_with('Z') && gz.get("WARC-Date").len() == 24);
    // Transfer coding removed, and the field that named it renamed.
    let chunked = by("response", &server.url("/chunked"));
    let (head, payload) = chunked.http();
    assert!(head.starts_with("HTTP/1.1 200 Fine Thanks\r\n"), "{head}");
    assert!(
        head.contains("x-trawl-transfer-encoding: chunked\r\n"),
        "{head}"
    );
    assert_eq!(payload, b"<p>hello</p>");
    // The request as sent, tied to its response.
    let req = by("request", &server.url("/gz"));
    assert_eq!(req.get("WARC-Concurrent-To"), gz.get("WARC-Record-ID"));
    let sent = String::from_utf8_lossy(&req.block).to_string();
    assert!(sent.starts_with("GET /gz HTTP/1.1\r\n"), "{sent}");
    assert!(
        sent.contains("accept-encoding: gzip, deflate, br\r\n"),
        "{sent}"
    );
    assert!(
        sent.contains(&format!("host: {}\r\n", server.addr)),
        "{sent}"
    );
    // The repeated body is a revisit of the first.
    let (a, copy) = (server.url("/a"), server.url("/copy"));
    let revisit = recs
        .iter()
        .find(|r| r.get("WARC-Type") == "revisit")
        .expect("a revisit record");
    let first = if revisit.get("WARC-Target-URI") == a {
        &copy
    } else {
        &a
    };
    let orig = by("response", first);
    assert_eq!(
        revisit.get("WARC-Profile"),
        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    );
    assert_eq!(revisit.get("WARC-Refers-To-Target-URI"), first);
    assert_eq!(revisit.get("WARC-Refers-To-Date"), orig.get("WARC-Date"));
    assert_eq!(
        revisit.get("WARC-Payload-Digest"),
        orig.get("WARC-Payload-Digest")
    );
    // What trawl knows beside: the home page's metadata.
    let home = by("metadata", &server.url("/"));
    let text = String::from_utf8_lossy(&home.block).to_string();
    assert!(
        text.contains(&format!("outlink: {}\r\n", server.url("/gz"))),
        "{text}"
    );
    assert!(
        text.contains("depth: 0\r\nscore-") && text.contains("verdict: keep\r\n"),
        "{text}"
    );
    assert_eq!(
        home.get("WARC-Concurrent-To"),
        by("response", &server.url("/")).get("WARC-Record-ID")
    );

    // `page URL --warc` says where the record is; it is there.
    let out = common::shell(
        db.store.clone(),
        vec![format!("page {} --warc", server.url("/gz"))],
    )
    .await;
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
    };
    let (file, offset) = (field("file"), field("offset").parse::<u64>().unwrap());
    let mut f = std::fs::File::open(&file).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(f)
        .read_to_end(&mut bytes)
        .unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains(&format!("WARC-Target-URI: {}\r\n", server.url("/gz"))),
        "{text:.300}"
    );
    let e = common::shell_error(
        db.store.clone(),
        format!("page {} --warc", server.url("/nowhere")),
    )
    .await;
    assert!(e.contains("no WARC record") && !e.contains('\n'), "{e}");
}

/// A GET over HTTP/1.0 to `url`'s host on loopback: status and body.
fn http_get(port: u16, path: &str) -> Option<(u16, Vec<u8>)> {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n").ok()?;
    let mut all = Vec::new();
    s.read_to_end(&mut all).ok()?;
    let at = memchr::memmem::find(&all, b"\r\n\r\n")? + 4;
    let status = String::from_utf8_lossy(&all[..at])
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((status, all[at..].to_vec()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pywb_replays_a_page_from_the_crawls_warc() {
    let server = RawServer::start(site()).await;
    let db = Db::new();
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("warc");
    db.crawl(archiving(&warc), &[server.url("/")]).await;
    let web = dir.path().join("pywb");
    std::fs::create_dir_all(&web).unwrap();
    let mut init = tool("wb-manager");
    init.current_dir(&web).args(["init", "trawl"]);
    stdout_of(init);
    let mut add = tool("wb-manager");
    add.current_dir(&web)
        .args(["add", "trawl"])
        .args(warc_files(&warc));
    stdout_of(add);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut wayback = tool("wayback");
    wayback
        .current_dir(&web)
        .args(["-b", "127.0.0.1", "-p", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = wayback.spawn().unwrap();
    let replay = |path: &str| http_get(port, &format!("/trawl/2100id_/{}", server.url(path)));
    let mut got = None;
    for _ in 0..200 {
        got = replay("/a");
        if got.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let a = got.expect("pywb answers");
    let gz = replay("/gz");
    common::kill_tree(&mut child);
    let stored = db.page(&server.url("/a")).unwrap().body().unwrap();
    assert_eq!(a, (200, stored), "pywb replays the stored body");
    let (status, body) = gz.expect("the gzip page replays");
    assert_eq!(status, 200);
    let plain = b"<html><head><title>zipped</title></head><body>hello</body></html>";
    let mut decoded = Vec::new();
    match flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut decoded) {
        Ok(_) => assert_eq!(decoded, plain),
        Err(_) => assert_eq!(body, plain),
    }
}

/// `/etag` answers its ETag with 304, `/same` never changes, `/changing`
/// changes every hour.
fn revisited(path: &str, at_ms: u64, req: &trawl::site::Request) -> trawl::site::Response {
    use crate::revisits::{HOUR, html, links};
    use trawl::site::Response;
    let etag = req
        .headers
        .get("if-none-match")
        .and_then(|v| v.to_str().ok());
    match path {
        "/robots.txt" => Response::status(404),
        "/" => html("home", &links(&["/etag", "/same", "/changing"])),
        "/etag" if etag == Some("\"v1\"") => Response::status(304).header("etag", "\"v1\""),
        "/etag" => html("etag", "a page with an entity tag").header("etag", "\"v1\""),
        "/same" => html("same", "the same words every time"),
        "/changing" => html("changing", &format!("edition {}", at_ms / HOUR)),
        _ => Response::status(404),
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn revisits_archive_as_revisit_records_of_the_first_response() {
    use crate::revisits::{Site, crawl_with, hourly};
    let site = Site::start(revisited).await;
    let db = Db::new();
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("warc");
    let s = CrawlSettings {
        recrawl: hourly(),
        ..archiving(&warc)
    };
    // Fetched at about 0 h, revisited at 1 h.
    crawl_with(&db, s, &site.url("/"), Duration::from_secs(5400)).await;
    let files = warc_files(&warc);
    let mut recs = Vec::new();
    for f in &files {
        warcio_check(f);
        let ours = std::fs::read_to_string(format!("{}.cdxj", f.display())).unwrap();
        assert_eq!(
            ours.lines().map(str::to_string).collect::<Vec<_>>(),
            cdxj_indexer(f)
        );
        recs.extend(records(f));
    }
    let of = |path: &str| -> Vec<&Rec> {
        let url = site.url(path);
        recs.iter()
            .filter(|r| r.get("WARC-Target-URI") == url)
            .filter(|r| matches!(r.get("WARC-Type"), "response" | "revisit"))
            .collect()
    };
    // A 304: server-not-modified, referring to the first response.
    let etag = of("/etag");
    assert_eq!(etag.len(), 2, "fetched, then revisited");
    assert_eq!(etag[0].get("WARC-Type"), "response");
    let not_modified = etag[1];
    assert_eq!(not_modified.get("WARC-Type"), "revisit");
    assert_eq!(
        not_modified.get("WARC-Profile"),
        "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
    );
    assert!(
        not_modified
            .http()
            .0
            .starts_with("HTTP/1.1 304 Not Modified\r\n")
    );
    assert_eq!(
        not_modified.get("WARC-Refers-To-Target-URI"),
        site.url("/etag")
    );
    assert_eq!(
        not_modified.get("WARC-Refers-To-Date"),
        etag[0].get("WARC-Date")
    );
    // The same body again: identical-payload-digest.
    let same = of("/same");
    assert_eq!(
        (same[0].get("WARC-Type"), same[1].get("WARC-Type")),
        ("response", "revisit")
    );
    assert_eq!(
        same[1].get("WARC-Profile"),
        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    );
    assert_eq!(
        same[1].get("WARC-Payload-Digest"),
        same[0].get("WARC-Payload-Digest")
    );
    assert_eq!(same[1].get("WARC-Refers-To-Date"), same[0].get("WARC-Date"));
    // A new version is a new response; the page's row points at it.
    let changing = of("/changing");
    assert_eq!(changing.len(), 2);
    assert!(changing.iter().all(|r| r.get("WARC-Type") == "response"));
    let row = db
        .store
        .row::<trawl::schema::tables::Warc>(&common::id(&site.url("/changing")))
        .unwrap()
        .unwrap();
    assert_eq!(row.offset, changing[1].offset);
    assert_eq!(row.refers_to, None);
    let row = db
        .store
        .row::<trawl::schema::tables::Warc>(&common::id(&site.url("/etag")))
        .unwrap()
        .unwrap();
    assert_eq!(row.offset, not_modified.offset);
    assert!(row.refers_to.is_some());
}
