//! Exports read back by the tools researchers use: DuckDB reads the JSONL,
//! CSV (gzip and zstd too) and Parquet files, Python's `json` and `csv`
//! read the shell's own `--format jsonl|csv`; counts and values are
//! checked against the shell's answers. A Ctrl-C mid-export leaves no
//! file under the final name.

use std::path::Path;
use std::time::Duration;

use crate::common::{self, Db, Fixture, fast, page, tools};
use trawl::site::Response;

/// Titles with a comma, quotes, a line break in the text and CJK.
fn site(path: &str) -> Response {
    match path {
        "/" => page(
            "home, \"sweet\" home",
            &[
                "/a",
                "/b",
                "/c",
                "http://elsewhere.invalid/y",
                "http://elsewhere.invalid/z",
            ],
        ),
        "/a" => page("研究生 news", &["/", "/b"]),
        "/b" => page("b", &["/c"]),
        "/c" => Response::status(404),
        _ => Response::status(404),
    }
}

/// Runs `script` in the venv's Python with `args`; its stdout as JSON.
fn python(script: &str, args: &[&Path]) -> serde_json::Value {
    let mut cmd = tools::tool("python");
    cmd.arg("-c").arg(script).args(args);
    let out = tools::stdout_of(cmd);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

const DUCKDB: &str = r#"
import duckdb, json, sys
pages_jsonl, pages_csv, pages_parquet, links_gz, links_zst, hosts, inlinks = sys.argv[1:]
q = lambda s: duckdb.sql(s).fetchall()
out = {
  "jsonl": q(f"select count(*), sum(outlinks), max(inlinks) from read_json_auto('{pages_jsonl}')")[0],
  "jsonl_home": q(f"select title, status, depth from read_json_auto('{pages_jsonl}') where depth = 0")[0],
  "csv": q(f"select count(*), count(title) from read_csv_auto('{pages_csv}')")[0],
  "csv_cjk": q(f"select url from read_csv_auto('{pages_csv}') where title like '%研究生%'")[0],
  "parquet": q(f"select count(*), sum(status), count(*) filter (where text like '%sweet%') from '{pages_parquet}'")[0],
  "parquet_types": [str(t) for t in duckdb.sql(f"select status, pagerank, url from '{pages_parquet}'").types],
  "links_gz": q(f"select count(*), count(distinct \"from\") from read_csv_auto('{links_gz}')")[0],
  "links_zst": q(f"select count(*) from read_json_auto('{links_zst}')")[0],
  "hosts": q(f"select count(*), sum(pages) from read_json_auto('{hosts}')")[0],
  "inlinks": q(f"select count(*) from read_json_auto('{inlinks}')")[0],
}
print(json.dumps(out, ensure_ascii=False, default=str))
"#;

const PY_FORMATS: &str = r#"
import csv, json, sys
rows_json = json.load(open(sys.argv[1]))
rows_jsonl = [json.loads(l) for l in open(sys.argv[2])]
rows_csv = list(csv.DictReader(open(sys.argv[3], newline="")))
text = lambda v: "" if v is None else (v if isinstance(v, str) else json.dumps(v, separators=(",", ":")))
print(json.dumps({
  "same_jsonl": rows_json == rows_jsonl,
  "same_csv": [{k: text(v) for k, v in r.items()} for r in rows_json] == [dict(r) for r in rows_csv],
  "rows": len(rows_json),
}))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_table_reads_back_in_duckdb_and_python() {
    let f = Fixture::start(site).await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let cmds: Vec<String> = [
        format!("export pages {}", p("pages.jsonl").display()),
        format!(
            "export pages {} --fields url,status,title,depth",
            p("pages.csv").display()
        ),
        format!("export pages {} --text", p("pages.parquet").display()),
        format!("export links {}", p("links.csv.gz").display()),
        format!("export links {} --format jsonl", p("links.zst").display()),
        format!("export hosts {}", p("hosts.json").display()),
        format!("export inlinks {}", p("inlinks.jsonl").display()),
        format!(
            "export hosts \"{}\" --fields host",
            p("my hosts.csv").display()
        ),
        "count pages".into(),
        format!("links from {}", f.url("/")),
    ]
    .into();
    let out = common::shell(db.store.clone(), cmds).await;
    assert!(out.contains("wrote ") && out.contains(" rows, "), "{out}");
    let hosts = std::fs::read_to_string(p("my hosts.csv")).unwrap();
    assert_eq!(
        hosts.lines().count(),
        2,
        "a quoted path with a space: {hosts}"
    );
    // A partial file left by a crash is not taken over.
    std::fs::write(p("left.jsonl.partial"), "x").unwrap();
    let e = common::shell_error(
        db.store.clone(),
        format!("export pages {}", p("left.jsonl").display()),
    )
    .await;
    assert!(
        e.contains("cut short (remove it)") && !p("left.jsonl").exists(),
        "{e}"
    );
    for n in ["pages.jsonl", "pages.csv", "pages.parquet", "links.csv.gz"] {
        assert!(!p(&format!("{n}.partial")).exists(), "{n}: partial left");
    }
    let files = [
        "pages.jsonl",
        "pages.csv",
        "pages.parquet",
        "links.csv.gz",
        "links.zst",
        "hosts.json",
        "inlinks.jsonl",
    ]
    .map(p);
    let args: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
    let got = python(DUCKDB, &args);
    // 4 pages (one a 404); / has 5 links (2 off-site), /a 2, /b 1.
    assert_eq!(got["jsonl"], serde_json::json!([4, 8, 2]), "{got}");
    assert_eq!(
        got["jsonl_home"],
        serde_json::json!(["home, \"sweet\" home", 200, 0])
    );
    assert_eq!(got["csv"], serde_json::json!([4, 3]), "{got}");
    assert_eq!(got["csv_cjk"][0], f.url("/a"));
    assert_eq!(got["parquet"], serde_json::json!([4, 1004, 1]), "{got}");
    assert_eq!(
        got["parquet_types"],
        serde_json::json!(["BIGINT", "DOUBLE", "VARCHAR"])
    );
    assert_eq!(got["links_gz"], serde_json::json!([8, 3]), "{got}");
    assert_eq!(got["links_zst"], serde_json::json!([8]), "{got}");
    assert_eq!(got["hosts"], serde_json::json!([1, 4]), "{got}");
    assert_eq!(got["inlinks"], serde_json::json!([8]), "{got}");

    // The shell's own formats parse back in Python to the JSON's rows.
    let q = "pages where depth <= 1 order by url";
    let mut texts = Vec::new();
    for fmt in ["json", "jsonl", "csv"] {
        let out = common::shell(db.store.clone(), vec![format!("{q} --format {fmt}")]).await;
        let path = p(&format!("answer.{fmt}"));
        std::fs::write(&path, &out).unwrap();
        texts.push(path);
    }
    let args: Vec<&Path> = texts.iter().map(|f| f.as_path()).collect();
    let same = python(PY_FORMATS, &args);
    assert_eq!(
        same,
        serde_json::json!({"same_jsonl": true, "same_csv": true, "rows": 4})
    );
}

const NETWORKX: &str = r#"
import json, sys, csv
import networkx as nx
graphml, gexf, edges, dot, hosts = sys.argv[1:]
g = nx.read_graphml(graphml)
x = nx.read_gexf(gexf, version="1.3")
h = nx.read_gexf(hosts, version="1.3")
home = [n for n, d in g.nodes(data=True) if d.get("depth") == 0][0]
rows = list(csv.DictReader(open(edges, newline="")))
print(json.dumps({
  "graphml": [g.number_of_nodes(), g.number_of_edges()],
  "gexf": [x.number_of_nodes(), x.number_of_edges()],
  "home": [g.nodes[home]["title"], g.nodes[home]["status"], x.nodes[home]["label"]],
  "weights": sorted(d["weight"] for _, _, d in g.edges(data=True)),
  "edges_csv": len(rows),
  "dot_edges": open(dot).read().count(" -> "),
  "hosts": [h.number_of_nodes(), h.number_of_edges(), sorted(d["weight"] for _, _, d in h.edges(data=True))],
  "directed": g.is_directed() and x.is_directed(),
}, ensure_ascii=False))
"#;

/// The page graph and the host graph read in networkx with the node and
/// edge counts the crawl has; GraphML and GEXF agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphs_read_in_networkx() {
    let f = Fixture::start(|p: &str| match p {
        "/" => page(
            "home <&> \"q\"",
            &[
                "/a",
                "/a",
                "/b",
                "http://elsewhere.invalid/y",
                "http://elsewhere.invalid/z",
            ],
        ),
        "/a" => page("研究生", &["/", "/b"]),
        _ => page("b", &[]),
    })
    .await;
    let db = Db::new();
    db.crawl(fast(), &[f.url("/")]).await;
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let cmds = vec![
        format!("export graph {}", p("g.graphml").display()),
        format!("export graph {}", p("g.gexf").display()),
        format!(
            "export graph {} --format edges-csv",
            p("edges.txt").display()
        ),
        format!("export graph {}", p("g.dot").display()),
        format!("export graph {} --hosts", p("hosts.gexf").display()),
    ];
    let out = common::shell(db.store.clone(), cmds).await;
    assert!(out.contains("3 nodes, 4 edges"), "{out}");
    let files = ["g.graphml", "g.gexf", "edges.txt", "g.dot", "hosts.gexf"].map(p);
    let args: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
    let got = python(NETWORKX, &args);
    // / → /a, /b; /a → /, /b; the off-site targets
    // are no pages, so no nodes of the page graph.
    assert_eq!(got["graphml"], serde_json::json!([3, 4]), "{got}");
    assert_eq!(got["gexf"], serde_json::json!([3, 4]), "{got}");
    let home = "home <&> \"q\"";
    assert_eq!(got["home"], serde_json::json!([home, 200, home]), "{got}");
    // A page's links are one per target: each edge is one link.
    assert_eq!(got["weights"], serde_json::json!([1, 1, 1, 1]), "{got}");
    assert_eq!(
        (got["edges_csv"].as_u64(), got["dot_edges"].as_u64()),
        (Some(4), Some(4))
    );
    // The host graph: this host and the one linked to, one edge of 2 links.
    assert_eq!(got["hosts"], serde_json::json!([2, 1, [2.0]]), "{got}");
    assert_eq!(got["directed"], true);
}

/// Ctrl-C during an export stops it; neither the file nor its partial
/// copy is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_mid_export_leaves_no_file() {
    let demo = trawl::site::demo::Demo::start(1500).await.unwrap();
    let db = Db::new();
    db.crawl(fast(), &demo.seeds()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pages.jsonl");
    let partial = dir.path().join("pages.jsonl.partial");
    let line = format!("export pages {} --text", path.display());
    let (result, _) = common::with_shell(db.store.clone(), move |sh| {
        let flag = sh.interrupt_flag();
        let watch = partial.clone();
        // Ctrl-C as soon as the partial file is there.
        let stopper = std::thread::spawn(move || {
            let t = std::time::Instant::now();
            while !watch.exists() && t.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_micros(200));
            }
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let r = sh.execute(&line);
        stopper.join().unwrap();
        r
    })
    .await;
    let e = result.expect_err("the export was interrupted");
    assert!(e.contains("interrupted"), "{e}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(!path.exists());
}

/// A news page (navigation bar, byline, date, article with a list, code
/// and a link, copyright line) and a leaf page.
fn news(path: &str) -> Response {
    match path {
        "/" => Response::html(
            "<html><head><title>Council news</title></head><body>\
             <div><a href=/c>Casino</a> | <a href=/p>Poker</a> | <a href=/g>Casino games</a> | \
             <a href=/n>Poker night</a></div>\
             <h1>Council expands riverside park</h1>\
             <p>By Ann Lee</p><p>Last modified: March 5, 2009</p>\
             <p>The city council voted on Tuesday to expand the riverside park by twelve acres, \
             ending a debate that began in 2004; <a href=/budget>the budget office</a> put the \
             cost at four million dollars over five years.</p>\
             <h2>What changes</h2><ul><li>twelve acres of park</li><li>a rail yard gone</li></ul>\
             <pre>cost = 4_000_000</pre>\
             <p>Copyright 2009 The Example Company. All rights reserved.</p></body></html>",
        ),
        _ => Response::html("<title>leaf</title><p>a leaf page</p>"),
    }
}

/// `export text` writes the stored pages as Markdown sections and JSONL
/// records from their bodies: headings, lists, code and links kept, the
/// lines denoising removed left out unless `--raw`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_exports_as_markdown_and_jsonl() {
    let f = Fixture::start(news).await;
    let db = Db::new();
    let mut s = fast();
    s.max_depth = Some(1);
    s.denoise.enabled = true;
    db.crawl(s, &[f.url("/")]).await;
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let cmds = vec![
        format!("export text {} --where depth = 0", p("news.md").display()),
        format!(
            "export text {} --raw --where depth = 0",
            p("raw.md").display()
        ),
        format!("export text {}", p("all.jsonl").display()),
        "count pages where status = 200".into(),
    ];
    let out = common::shell(db.store.clone(), cmds).await;
    assert!(out.contains("(1 pages,"), "{out}");
    let md = std::fs::read_to_string(p("news.md")).unwrap();
    for want in [
        "# Council expands riverside park\n",
        &format!("<{}> · fetched ", f.url("/")),
        "by Ann Lee",
        "## What changes\n\n- twelve acres of park\n- a rail yard gone\n",
        "```\ncost = 4_000_000\n```",
        &format!("[the budget office]({})", f.url("/budget")),
    ] {
        assert!(md.contains(want), "{want:?} in:\n{md}");
    }
    // Denoising dropped the navigation bar and the copyright line; --raw
    // keeps them.
    assert!(
        !md.contains("Poker night") && !md.contains("All rights reserved"),
        "{md}"
    );
    let raw = std::fs::read_to_string(p("raw.md")).unwrap();
    assert!(
        raw.contains("Poker night") && raw.contains("All rights reserved"),
        "{raw}"
    );
    // JSONL: one record a page with text, read by Python's json.
    let got = python(
        r#"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
home = [r for r in rows if r["title"] == "Council expands riverside park"][0]
print(json.dumps({"rows": len(rows), "author": home["author"], "denoised": home["denoised"],
  "nav": "Poker night" in home["text"], "article": "riverside park by twelve acres" in home["text"]}))
"#,
        &[p("all.jsonl").as_path()],
    );
    let pages: u64 = out.lines().last().unwrap().trim().parse().unwrap();
    assert_eq!(got["rows"].as_u64(), Some(pages), "{got}");
    assert_eq!(got["author"], "Ann Lee");
    assert_eq!(
        (got["denoised"].as_bool(), got["nav"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(got["article"], true);
}
