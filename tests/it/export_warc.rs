//! `export warc`: a stored crawl written as WARC 1.1 through the shell,
//! read back member by member and checked as a WARC reader checks it.

use std::collections::BTreeMap;
use std::io::Read;

use crate::common::{self, Db, Fixture, fast, page};
use trawl::site::Response;
use trawl::warc::sha1_base32;

/// One record: its fields and its block.
struct Rec {
    fields: BTreeMap<String, String>,
    block: Vec<u8>,
}

/// Every gzip member of a WARC file, as records; each member holds one.
fn records(file: &[u8]) -> Vec<Rec> {
    let mut out = Vec::new();
    let mut rest = file;
    while !rest.is_empty() {
        let mut d = flate2::bufread::GzDecoder::new(rest);
        let mut text = Vec::new();
        d.read_to_end(&mut text).expect("a whole gzip member");
        let used = rest.len() - d.into_inner().len();
        rest = &rest[used..];
        let split = memchr::memmem::find(&text, b"\r\n\r\n").expect("header end");
        let head = String::from_utf8(text[..split].to_vec()).unwrap();
        let mut lines = head.split("\r\n");
        assert_eq!(lines.next(), Some("WARC/1.1"));
        let fields: BTreeMap<String, String> = lines
            .map(|l| l.split_once(": ").expect("name: value"))
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let len: usize = fields["Content-Length"].parse().unwrap();
        let block = text[split + 4..split + 4 + len].to_vec();
        assert_eq!(
            &text[split + 4 + len..],
            b"\r\n\r\n",
            "a record ends in two CRLFs"
        );
        out.push(Rec { fields, block });
    }
    out
}

/// The body of an HTTP block, after its blank line.
fn payload(block: &[u8]) -> &[u8] {
    let at = memchr::memmem::find(block, b"\r\n\r\n").expect("HTTP head end");
    &block[at + 4..]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_crawl_exports_as_warc_with_digests_revisits_and_decoded_bodies() {
    let f = Fixture::start(|path| match path {
        "/" => page("home", &["/a", "/copy", "/gz", "/gone"]),
        "/a" => page("same", &[]),
        "/copy" => page("same", &[]),
        "/gz" => common::gzipped_html(b"<title>zipped</title>hello"),
        _ => Response::status(404),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crawl.warc.gz");
    let cmd = format!("export warc {}", path.display());
    let out = common::shell(db.store.clone(), vec![cmd.clone()]).await;
    assert!(out.contains("5 pages: 4 responses, 1 revisits"), "{out}");
    let recs = records(&std::fs::read(&path).unwrap());
    assert_eq!(recs[0].fields["WARC-Type"], "warcinfo");
    let info_id = recs[0].fields["WARC-Record-ID"].clone();
    let mut by_url = BTreeMap::new();
    for r in &recs {
        assert_eq!(r.fields["WARC-Block-Digest"], sha1_base32(&r.block));
        if let Some(url) = r.fields.get("WARC-Target-URI") {
            assert_eq!(r.fields["WARC-Warcinfo-ID"], info_id);
            by_url.insert(url.clone(), r);
        }
    }
    assert_eq!(by_url.len(), 5, "every fetched page once");
    let gz = by_url[&f.url("/gz")];
    assert_eq!(gz.fields["WARC-Type"], "response");
    let head = String::from_utf8_lossy(&gz.block[..gz.block.len() - payload(&gz.block).len()]);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(
        !head.to_ascii_lowercase().contains("content-encoding"),
        "{head}"
    );
    assert_eq!(payload(&gz.block), b"<title>zipped</title>hello");
    assert!(head.contains("Content-Length: 26\r\n"), "{head}");
    assert_eq!(
        gz.fields["WARC-Payload-Digest"],
        sha1_base32(payload(&gz.block))
    );
    assert!(
        by_url[&f.url("/gone")]
            .block
            .starts_with(b"HTTP/1.1 404 Not Found\r\n")
    );
    // One of the two same bodies is the other's revisit.
    let (a, copy) = (by_url[&f.url("/a")], by_url[&f.url("/copy")]);
    let (orig, rev) = match a.fields["WARC-Type"].as_str() {
        "revisit" => (copy, a),
        _ => (a, copy),
    };
    assert_eq!(rev.fields["WARC-Type"], "revisit");
    assert_eq!(
        rev.fields["WARC-Profile"],
        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    );
    assert_eq!(
        rev.fields["WARC-Refers-To-Target-URI"],
        orig.fields["WARC-Target-URI"]
    );
    assert_eq!(rev.fields["WARC-Refers-To-Date"], orig.fields["WARC-Date"]);
    assert_eq!(
        rev.fields["WARC-Payload-Digest"],
        orig.fields["WARC-Payload-Digest"]
    );
    assert!(payload(&rev.block).is_empty());
    // A where clause narrows it; an existing file is not overwritten.
    let only = dir.path().join("only.warc.gz");
    let cmd2 = format!("export warc {} where status = 404", only.display());
    let out = common::shell(db.store.clone(), vec![cmd2]).await;
    assert!(out.contains("1 pages: 1 responses, 0 revisits"), "{out}");
    assert_eq!(records(&std::fs::read(&only).unwrap()).len(), 2);
    let e = common::shell_error(db.store.clone(), cmd).await;
    assert!(e.contains("exists") && !e.contains('\n'), "{e}");
    let e = common::shell_error(db.store.clone(), "export tar x.tar".into()).await;
    assert!(e.contains("not something to export"), "{e}");
    let nowhere = dir.path().join("no-such-dir").join("x.warc.gz");
    let e = common::shell_error(
        db.store.clone(),
        format!("export warc {}", nowhere.display()),
    )
    .await;
    assert!(e.contains("cannot create") && !e.contains('\n'), "{e}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no partial file is left: {names:?}");
}
