//! `export wacz`: a crawl packaged as WACZ, from the crawl's own WARC
//! files or from the stored pages, accepted by `wacz validate` (PyPI
//! `wacz`, Webrecorder's reference), its index the one cdxj-indexer makes.

use std::io::Read;
use std::path::Path;

use crate::common::raw::RawServer;
use crate::common::tools::{cdxj_indexer, stdout_of, tool};
use crate::common::{self, Db, fast};
use crate::warc_live::{archiving, site, warc_files};

/// Every entry of a ZIP: its name and bytes.
fn entries(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            assert_eq!(f.compression(), zip::CompressionMethod::Stored);
            let mut b = Vec::new();
            f.read_to_end(&mut b).unwrap();
            (f.name().to_string(), b)
        })
        .collect()
}

fn validate(path: &Path) {
    let mut cmd = tool("wacz");
    cmd.args(["validate", "-f"]).arg(path);
    let out = stdout_of(cmd);
    assert!(out.contains("Validation succeeded"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_packages_as_wacz_that_wacz_validate_accepts() {
    let server = RawServer::start(site()).await;
    let dir = tempfile::tempdir().unwrap();
    // Crawled with WARC: the package holds the crawl's own files.
    let db = Db::new();
    let warc = dir.path().join("warc");
    db.crawl(archiving(&warc), &[server.url("/")]).await;
    let path = dir.path().join("live.wacz");
    let cmd = format!("export wacz {} --text", path.display());
    let out = common::shell(db.store.clone(), vec![cmd]).await;
    let files = warc_files(&warc);
    assert!(
        out.contains(&format!("{} WARC files from the crawl's WARC", files.len())),
        "{out}"
    );
    validate(&path);
    let got = entries(&path);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    for f in &files {
        let name = format!("archive/{}", f.file_name().unwrap().to_string_lossy());
        let (_, bytes) = got
            .iter()
            .find(|(n, _)| *n == name)
            .expect("each WARC file");
        assert_eq!(bytes, &std::fs::read(f).unwrap(), "stored byte for byte");
    }
    for n in [
        "indexes/index.cdx",
        "pages/pages.jsonl",
        "datapackage.json",
        "datapackage-digest.json",
    ] {
        assert!(names.contains(&n), "{n}: {names:?}");
    }
    // The index is cdxj-indexer's over the same files.
    let mut want: Vec<String> = files.iter().flat_map(|f| cdxj_indexer(f)).collect();
    want.sort();
    let index = &got
        .iter()
        .find(|(n, _)| n == "indexes/index.cdx")
        .unwrap()
        .1;
    let index: Vec<String> = String::from_utf8_lossy(index)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(index, want);
    // The page list: a header, then each HTML page, with its text.
    let pages = &got
        .iter()
        .find(|(n, _)| n == "pages/pages.jsonl")
        .unwrap()
        .1;
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(pages)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["format"], "json-pages-1.0");
    let home = lines
        .iter()
        .find(|l| l["url"] == server.url("/"))
        .expect("the home page listed");
    assert_eq!(home["title"], "home");
    assert!(
        home["text"]
            .as_str()
            .is_some_and(|t| t.contains("/chunked")),
        "{home}"
    );
    assert!(lines.iter().all(|l| l["url"] != server.url("/gone")));

    // Crawled without WARC: the stored pages written as WARC.
    let plain = Db::new();
    plain.crawl(fast(), &[server.url("/")]).await;
    let path = dir.path().join("stored.wacz");
    let cmd = format!("export wacz {} --where status = 200", path.display());
    let out = common::shell(plain.store.clone(), vec![cmd.clone()]).await;
    assert!(out.contains("1 WARC file from the stored pages"), "{out}");
    validate(&path);
    let got = entries(&path);
    assert!(got.iter().any(|(n, _)| n == "archive/data.warc.gz"));
    let e = common::shell_error(plain.store.clone(), cmd).await;
    assert!(e.contains("exists") && !e.contains('\n'), "{e}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.contains("partial") || n.ends_with(".jsonl"))
        .collect();
    assert!(left.is_empty(), "scratch files left: {left:?}");
}
