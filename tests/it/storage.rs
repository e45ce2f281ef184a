//! How pages are stored: the zstd dictionary a crawl trains from its first
//! pages (schema 10), read back exact by the library, a fresh process and
//! a read-only attach.

use crate::common;

use std::io::Write;
use std::process::Stdio;

use common::{Db, Fixture, fast};
use trawl::site::Response;
use zstd::zstd_safe;

const PAGES: usize = 90;

/// Page `i` of a site whose pages share their markup, as real sites do:
/// a head, navigation and footer around words that differ by page.
fn body(i: usize) -> String {
    let mut x = i as u32 * 2_654_435_761 + 1;
    let mut words = String::new();
    for _ in 0..250 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        words += &format!("word{} ", (x >> 8) % 4000);
    }
    let next: Vec<String> = [2 * i + 1, 2 * i + 2]
        .iter()
        .filter(|&&j| j < PAGES)
        .map(|j| format!("<li><a href=\"/s/{j}\">Story {j}</a></li>"))
        .collect();
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Story {i} - The Daily Example</title>\
         <link rel=\"stylesheet\" href=\"/static/site.css\"><meta name=\"viewport\" content=\"width=device-width\"></head>\
         <body><header class=\"masthead\"><a class=\"logo\" href=\"/\">The Daily Example</a><nav><ul class=\"menu\">\
         <li><a href=\"/news/\">News</a></li><li><a href=\"/sport/\">Sport</a></li><li><a href=\"/culture/\">Culture</a></li>\
         </ul></nav></header><main class=\"article\"><h1>Story {i}</h1><p class=\"lede\">{words}</p>\
         <aside><h2>Read next</h2><ul>{}</ul></aside></main><footer class=\"site-footer\"><p>© The Daily Example. \
         All rights reserved.</p><p><a href=\"/privacy\">Privacy</a> · <a href=\"/terms\">Terms</a></p></footer></body></html>",
        next.join("")
    )
}

fn site(path: &str) -> Response {
    match path
        .strip_prefix("/s/")
        .and_then(|i| i.parse::<usize>().ok())
    {
        Some(i) if i < PAGES => Response::html(body(i)),
        _ => Response::status(404),
    }
}

fn dict_id(page: &trawl::schema::PageRecord) -> Option<u32> {
    zstd_safe::get_dict_id_from_frame(&page.body_zstd).map(|id| id.get())
}

/// `trawl shell [--read-only] DB` in a new process, fed `cmds`.
fn shell_process(db: &std::path::Path, read_only: bool, cmds: &str) -> String {
    let mut c = common::trawl_cmd(&["shell"]);
    if read_only {
        c.arg("--read-only");
    }
    c.arg(db).stdout(Stdio::piped());
    let out = common::output_with_input(c, cmds);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// `trawl shell --read-only DB` in a new process, attached and waiting for
/// commands; what it prints is gathered by a thread.
struct Attached {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Attached {
    fn start(db: &std::path::Path) -> Attached {
        let mut c = common::trawl_cmd(&["shell", "--read-only"]);
        c.arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        // Both streams, stderr's lines marked (an error ends the wait).
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        for (stream, mark) in [
            (Box::new(out) as Box<dyn std::io::Read + Send>, ""),
            (Box::new(err), "stderr: "),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in std::io::BufRead::lines(std::io::BufReader::new(stream)) {
                    let Ok(line) = line else { break };
                    if tx.send(format!("{mark}{line}")).is_err() {
                        break;
                    }
                }
            });
        }
        let mut a = Attached { child, lines };
        // It answers a command once it has the db open.
        a.send("status\n");
        a.wait_for("fetched");
        a
    }

    fn send(&mut self, cmds: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(cmds.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// What it printed up to the first line that contains `what`.
    fn wait_for(&mut self, what: &str) -> String {
        let mut seen = String::new();
        loop {
            let line = self
                .lines
                .recv_timeout(common::PROCESS_LIMIT)
                .unwrap_or_else(|e| panic!("no {what:?} from the shell ({e}): {seen}"));
            seen += &line;
            seen.push('\n');
            assert!(!line.starts_with("stderr: "), "{seen}");
            if line.contains(what) {
                return seen;
            }
        }
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = common::wait_within(&mut self.child, common::PROCESS_LIMIT);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_compressed_with_a_dictionary_trained_on_the_first() {
    let f = Fixture::start(site).await;
    let db = Db::new();
    let seed = f.url("/s/0");
    // Attached before the dictionary exists, it must find it by catching up.
    let mut attached = Attached::start(db.store.path());
    let mut s = fast();
    s.dictionary_pages = 20;
    s.max_pages = Some(30);
    db.crawl(s.clone(), std::slice::from_ref(&seed)).await;
    let dicts = db.store.dictionaries().unwrap();
    assert_eq!(dicts.len(), 1, "trained on the first 20 pages");
    let id = dicts[0].id;

    // The next run loads it and compresses every page with it.
    s.max_pages = None;
    db.crawl(s, &[]).await;
    assert_eq!(db.store.dictionaries().unwrap().len(), 1, "trained once");
    let (mut with, mut without) = (0, 0);
    let (mut stored, mut plain) = (0, 0);
    for i in 0..PAGES {
        let url = f.url(&format!("/s/{i}"));
        let page = db.page(&url).unwrap_or_else(|| panic!("{url} fetched"));
        assert_eq!(page.body().unwrap(), body(i).as_bytes(), "{url} exact");
        assert!(page.frame_text().unwrap().unwrap().contains("word"));
        match dict_id(&page) {
            Some(d) => {
                assert_eq!(d, id);
                with += 1;
                stored += page.body_zstd.len();
                plain += zstd::bulk::compress(body(i).as_bytes(), 1).unwrap().len();
            }
            None => without += 1,
        }
    }
    assert!(without >= 20, "pages before the dictionary: {without}");
    assert!(with >= PAGES - 30, "pages after it: {with}");
    // With their text inside, the frames are still smaller than the bodies
    // alone without a dictionary.
    assert!(stored < plain, "{stored} against {plain}");

    // A new process reads them through the dictionary in meta, as does a
    // read-only attach.
    let url = f.url(&format!("/s/{}", PAGES - 1));
    assert_eq!(dict_id(&db.page(&url).unwrap()), Some(id));
    attached.send(&format!("page {url} --raw\n"));
    let got = attached.wait_for("All rights reserved");
    assert!(got.contains(&body(PAGES - 1)), "attached before: {got}");
    drop(attached);
    let path = db.store.path().to_path_buf();
    drop(db.store);
    for read_only in [false, true] {
        let out = shell_process(&path, read_only, &format!("page {url} --raw\n"));
        assert!(
            out.contains(&body(PAGES - 1)),
            "read_only {read_only}: {out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_dictionary_when_it_is_turned_off_or_the_crawl_is_short() {
    let f = Fixture::start(site).await;
    for want in [0, 1000] {
        let db = Db::new();
        let mut s = fast();
        s.dictionary_pages = want;
        db.crawl(s, &[f.url("/s/0")]).await;
        assert!(db.store.dictionaries().unwrap().is_empty(), "want {want}");
        let page = db.page(&f.url("/s/5")).unwrap();
        assert_eq!(dict_id(&page), None);
        assert_eq!(page.body().unwrap(), body(5).as_bytes());
    }
}
