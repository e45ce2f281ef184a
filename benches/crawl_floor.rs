//! The floor under a crawl of the benchmark web: what this process spends
//! per page, on the same server, to
//! - fetch: GET every page with trawl's own HTTP client, 64 in flight;
//! - fetch + md5 + zstd: that plus only the work no design that keeps
//!   every body (MD5 for dedup, as the documents require) at ≤ 0.6 × the
//!   bytes on the wire can leave out: MD5 and zstd with the dictionary;
//! - fetch + process: the fetch plus a fetch task's CPU work on each body (MD5,
//!   zstd with a dictionary trained beforehand on the first 400 pages,
//!   charset decoding, parsing), as the crawl does it;
//! - fetch + process + store: that plus one RocksDB batch a page, written
//!   by one task as the engine does, holding only the rows the issue asks
//!   a crawl to store: the page record (body and text in one zstd
//!   frame), its doc (title), its links row, an in-link row per link, its seen row, and for
//!   each URL not seen before a url, seen and frontier row; the page's
//!   frontier row is deleted. No filters, counters, hosts, indexes or
//!   dedup rows. RocksDB's flushes and compactions during the stage count.
//!
//! The crawl does all of that and more, so each stage is a floor under its
//! CPU per page, and 2 cores divided by a stage's CPU plus the server's is a
//! ceiling on pages/s that trawl cannot pass without dropping that work.
//! `scripts/bench-crawl` runs it against its bench web before the crawl; by
//! hand, against a running `trawl bench-web`:
//!
//!   cargo bench --bench crawl_floor -- --pages N [--limit M] [--server-pid PID] SEED...
//!
//! with the web's page count and its seeds in the order it printed them,
//! or `--urls FILE` (one URL a line, each answering 200: how
//! `scripts/bench-peers` measures the floor on its nginx-served site);
//! `--limit` fetches only the first M pages (breadth-first order) of each
//! stage, and `--server-pid` adds the server's CPU per page.
//! Without arguments (as `cargo test --release` runs it) it serves a
//! 2,000-page web itself, in this process, so that it cannot rot; figures
//! from that mode include the server.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use md5::{Digest, Md5};
use tokio::sync::{Semaphore, mpsc};
use trawl::crawl::{FrameWriter, PageData, TextPolicy, process_page};
use trawl::fetch::{FetchSettings, HttpClient, NetGuard};
use trawl::model::SeenState;
use trawl::model::{CanonicalUrl, UrlId};
use trawl::schema::dictionary::Dictionary;
use trawl::schema::{
    CF_DOCS, CF_FRONTIER, CF_LINKS, CF_PAGES, CF_SEEN, DocRecord, FrontierKey, LinkView,
    PageLinksBuilder, PageRecord, SeenRecord,
};
use trawl::settings::CrawlSettings;
use trawl::site::bench::{BenchUrls, BenchWeb};
use trawl::store::Store;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Requests in flight, as `scripts/bench-crawl` runs the crawl.
const IN_FLIGHT: usize = 64;

struct Args {
    pages: usize,
    limit: Option<usize>,
    server_pid: Option<u32>,
    seeds: Vec<String>,
    /// `--urls FILE`: fetch these (one a line) instead of the bench web's.
    urls: Option<std::path::PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        pages: 2_000,
        limit: None,
        server_pid: None,
        seeds: Vec::new(),
        urls: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--pages" => {
                args.pages = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--pages needs a number")?;
            }
            "--limit" => {
                args.limit = Some(
                    it.next()
                        .and_then(|v| v.parse().ok())
                        .ok_or("--limit needs a number")?,
                );
            }
            "--server-pid" => {
                args.server_pid = Some(
                    it.next()
                        .and_then(|v| v.parse().ok())
                        .ok_or("--server-pid needs a process id")?,
                );
            }
            "--urls" => args.urls = Some(it.next().ok_or("--urls needs a file")?.into()),
            // cargo bench / cargo test pass their own flags.
            "--bench" | "--test" => {}
            s if s.starts_with("http://") => args.seeds.push(s.to_string()),
            s => return Err(format!("unexpected argument {s:?}")),
        }
    }
    Ok(args)
}

/// CPU seconds (user + system) this process has used.
fn own_cpu() -> f64 {
    // SAFETY: getrusage writes the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// CPU seconds another process has used, from /proc.
fn process_cpu(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / hz)
}

#[derive(Clone, Copy, PartialEq)]
enum Stage {
    Fetch,
    Md5Zstd,
    Process,
    Store,
}

/// Fetches every URL, 64 in flight; with `Process` or `Store` processes
/// each body, and with `Store` sends it to `writer`. Returns the pages
/// that came back 200.
async fn run(
    client: &HttpClient,
    urls: &[String],
    stage: Stage,
    dict: Option<Arc<Dictionary>>,
    writer: Option<mpsc::Sender<(CanonicalUrl, PageData)>>,
) -> usize {
    let gate = Arc::new(Semaphore::new(IN_FLIGHT));
    // The floor is the crawl's default work: no denoising, no simhash.
    let policy = Arc::new(TextPolicy::of(&CrawlSettings::default()));
    let mut tasks = tokio::task::JoinSet::new();
    let mut ok = 0;
    for u in urls {
        let permit = gate.clone().acquire_owned().await.expect("semaphore open");
        let (client, u, writer, dict) = (client.clone(), u.clone(), writer.clone(), dict.clone());
        let policy = policy.clone();
        tasks.spawn(async move {
            let _permit = permit;
            let Ok(fetched) = client.get(&u).await else {
                return false;
            };
            let good = fetched.status == 200;
            if stage == Stage::Md5Zstd {
                let md5: [u8; 16] = Md5::digest(&fetched.body).into();
                let frame = FrameWriter::begin(&fetched.body, dict.as_deref()).finish(b"");
                std::hint::black_box((md5, frame));
            } else if stage != Stage::Fetch {
                let url = trawl::model::normalize(&u).expect("bench URLs parse");
                let data = process_page(fetched, url.url(), &policy, dict.as_deref());
                match &writer {
                    Some(w) => w.send((url, data)).await.is_ok(),
                    None => std::hint::black_box(data).fetched.status == 200,
                };
            }
            good
        });
        while let Some(done) = tasks.try_join_next() {
            ok += usize::from(done.unwrap_or(false));
        }
    }
    while let Some(done) = tasks.join_next().await {
        ok += usize::from(done.unwrap_or(false));
    }
    ok
}

/// The one writer: a batch a page, as the engine commits one.
async fn write_pages(
    store: Arc<Store>,
    mut pages: mpsc::Receiver<(CanonicalUrl, PageData)>,
) -> Result<usize, String> {
    let mut seen: HashSet<UrlId> = HashSet::new();
    let mut window = common::InLinkWindow::default();
    let mut written = 0;
    while let Some((url, data)) = pages.recv().await {
        let id = url.id();
        seen.insert(id);
        let mut b = store.batch();
        let frontier = |u: &CanonicalUrl| FrontierKey {
            host: u.host_id(),
            priority: 0,
            url: u.id(),
        };
        b.delete(CF_FRONTIER, &frontier(&url).to_key());
        let f = &data.fetched;
        let rec = PageRecord {
            url: url.as_str().to_string(),
            status: f.status,
            content_type: f.content_type.clone(),
            md5: data.md5,
            body_len: data.body_len,
            body_zstd: data.body_zstd,
            text_len: data.text.frame_len(),
            ..PageRecord::default()
        };
        b.put(CF_PAGES, &id.to_bytes(), &rec);
        let fetched_row = SeenRecord {
            state: SeenState::Fetched { status: f.status },
            depth: 1,
            parent: None,
            redirects: 0,
            updated_ms: 0,
            priority: None,
            // As the crawl keeps the scores a page was queued with.
            scores: Some(trawl::schema::FrontierScores::default()),
        };
        b.put(CF_SEEN, &id.to_bytes(), &fetched_row);
        if let Some(parsed) = &data.parsed {
            let page = &parsed.page;
            let mut links = PageLinksBuilder::default();
            let mut targets = Vec::new();
            for l in &page.links {
                let dst = l.url.id();
                links.push(
                    dst,
                    &LinkView {
                        anchor: &l.anchor,
                        before: &l.before,
                        after: &l.after,
                        nofollow: l.nofollow,
                        link_type: Some(trawl::model::LinkType::Horizontal),
                        verdict: trawl::model::LinkVerdict::Follow,
                        dst_host: l.url.host(),
                        dst_url: l.url.as_str(),
                        ..LinkView::default()
                    },
                );
                if !targets.contains(&dst) {
                    targets.push(dst);
                }
                if seen.insert(dst) {
                    common::queue_new_url(&mut b, dst, &l.url, id, 0);
                }
            }
            window.add(&mut b, id, &targets);
            b.put_raw(CF_LINKS, &id.to_bytes(), &links.encode());
            let doc = DocRecord {
                title: page.title.clone(),
                // The text is in the page frame.
                outlinks: page.links.len() as u32,
                ..DocRecord::default()
            };
            b.put(CF_DOCS, &id.to_bytes(), &doc);
        }
        b.write().map_err(|e| e.to_string())?;
        window.write_if_full(&store);
        written += 1;
    }
    Ok(written)
}

async fn floor(args: Args) -> Result<(), String> {
    // Without seeds: serve a small web here (the `cargo test` pass).
    let own_web = if args.seeds.is_empty() && args.urls.is_none() {
        Some(
            BenchWeb::start(args.pages, 4, None)
                .await
                .map_err(|e| format!("cannot start the bench web: {e}"))?,
        )
    } else {
        None
    };
    let seeds = own_web.as_ref().map_or(args.seeds.clone(), |w| w.seeds());
    let ports = seeds
        .iter()
        .map(|s| {
            url::Url::parse(s)
                .ok()
                .and_then(|u| u.port())
                .ok_or(format!("seed {s:?} has no port"))
        })
        .collect::<Result<Vec<u16>, String>>()?;
    let urls: Vec<String> = match &args.urls {
        Some(file) => std::fs::read_to_string(file)
            .map_err(|e| format!("{}: {e}", file.display()))?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .take(args.limit.unwrap_or(usize::MAX))
            .collect(),
        None => BenchUrls::on_ports(args.pages, ports)
            .pages()
            .take(args.limit.unwrap_or(usize::MAX))
            .collect(),
    };
    // The bench web is on loopback, which the network guard refuses unless
    // allowed (the crawl allows it as its seeds' own address).
    let settings = FetchSettings {
        allow_private: true,
        ..FetchSettings::default()
    };
    let client = HttpClient::new(settings, NetGuard::default()).map_err(|e| e.to_string())?;
    // Connections opened once, as a running crawl has them.
    run(
        &client,
        &urls[..urls.len().min(IN_FLIGHT * 4)],
        Stage::Fetch,
        None,
        None,
    )
    .await;
    // The db's dictionary, as a crawl trains it from its first pages.
    let dict = train_dictionary(&client, &urls[..urls.len().min(400)]).await;

    let dir = tempfile::tempdir().map_err(|e| format!("no temp dir: {e}"))?;
    let stages = [
        ("fetch", Stage::Fetch),
        ("fetch + md5 + zstd", Stage::Md5Zstd),
        ("fetch + process", Stage::Process),
        ("+ store", Stage::Store),
    ];
    for (name, stage) in stages {
        let (cpu0, server0) = (own_cpu(), args.server_pid.and_then(process_cpu));
        let t = Instant::now();
        let ok = if stage == Stage::Store {
            let store = Arc::new(Store::open(dir.path()).map_err(|e| e.to_string())?);
            let (tx, rx) = mpsc::channel(IN_FLIGHT);
            let writer = tokio::spawn(write_pages(store.clone(), rx));
            let ok = run(&client, &urls, stage, dict.clone(), Some(tx)).await;
            let written = writer.await.map_err(|e| e.to_string())??;
            // What is still in memtables costs a flush too.
            store.flush().map_err(|e| e.to_string())?;
            ok.min(written)
        } else {
            run(&client, &urls, stage, dict.clone(), None).await
        };
        let secs = t.elapsed().as_secs_f64();
        let cpu = own_cpu() - cpu0;
        let server =
            args.server_pid
                .and_then(process_cpu)
                .zip(server0)
                .map_or(String::new(), |(s1, s0)| {
                    format!(
                        ", server {:.0} us/page",
                        (s1 - s0) * 1e6 / urls.len() as f64
                    )
                });
        println!(
            "floor, {name:<18} {ok} of {} pages, {:.0} pages/s, {:.0} us CPU/page{server}",
            urls.len(),
            urls.len() as f64 / secs,
            cpu * 1e6 / urls.len() as f64,
        );
        if ok != urls.len() {
            return Err(format!("{} pages did not come back 200", urls.len() - ok));
        }
    }
    // Our own web's servers stop when it drops.
    drop(own_web);
    Ok(())
}

/// A dictionary trained on the bodies of `urls` (None if training fails).
async fn train_dictionary(client: &HttpClient, urls: &[String]) -> Option<Arc<Dictionary>> {
    let mut bodies = Vec::new();
    for u in urls {
        if let Ok(f) = client.get(u).await {
            bodies.push(f.body);
        }
    }
    let dict = Dictionary::train(&bodies).ok()?;
    dict.register();
    Some(Arc::new(dict))
}

fn main() {
    let result = parse_args().and_then(|args| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start tokio: {e}"))?
            .block_on(floor(args))
    });
    if let Err(e) = result {
        eprintln!("crawl_floor: {e}");
        std::process::exit(1);
    }
}
