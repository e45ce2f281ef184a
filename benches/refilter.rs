//! Refilter throughput: stored pages re-judged per second in each filter
//! mode, over a db built by crawling the demo web (4 hosts × N pages, ~8.5
//! links a page) at delay 0. Dry runs, so every mode sees the same db.
//!
//! Run: `cargo bench --bench refilter` (env TRAWL_BENCH_PAGES=N pages per
//! host, default 25,000 → ~104,000 stored pages). With
//! TRAWL_BENCH_DB=DIR the db is kept there and reused by the next run;
//! TRAWL_BENCH_MODES=relevance,… measures only those dry runs (and the
//! writing runs only if TRAWL_BENCH_WRITES is set).

use std::sync::Arc;
use std::time::Duration;

use trawl::crawl::{self};
use trawl::filter::Mode;
use trawl::settings::CrawlSettings;
use trawl::site::demo::Demo;
use trawl::store::Store;

// The same allocator as the `trawl` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let per_host: usize = std::env::var("TRAWL_BENCH_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25_000);
    let kept = std::env::var_os("TRAWL_BENCH_DB").map(std::path::PathBuf::from);
    let dir = kept.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("trawl-bench-refilter-{}", std::process::id()))
    });
    let reuse = kept.is_some() && dir.join("CURRENT").exists();
    let modes: Option<Vec<Mode>> = std::env::var("TRAWL_BENCH_MODES")
        .ok()
        .map(|v| v.split(',').filter_map(Mode::from_name).collect());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let store = Arc::new(Store::open(&dir).expect("open db"));
    if !reuse {
        let built = rt.block_on(async {
            let demo = Demo::start(per_host).await.expect("demo web");
            let s = CrawlSettings {
                delay: Duration::ZERO,
                per_host: 4,
                concurrency: 32,
                ..CrawlSettings::default()
            };
            let (_h, join) = crawl::start(store.clone(), s, &demo.seeds()).expect("start");
            join.await.expect("join").expect("crawl")
        });
        let c = store.counters().expect("counters");
        println!(
            "db: {} pages fetched, {} links, crawled in {:.1} s ({:.0} pages/s)",
            c.fetched,
            c.links,
            built.elapsed.as_secs_f64(),
            built.run_fetched as f64 / built.elapsed.as_secs_f64()
        );
    }
    let run = |mode: Mode, dry_run: bool| {
        let mut s = CrawlSettings::default();
        s.filter.mode = mode;
        let how = crawl::RefilterRun {
            dry_run,
            ..Default::default()
        };
        let r = crawl::refilter(store.clone(), s, how, &mut |_, _| true).expect("refilter");
        let secs = r.elapsed.as_secs_f64();
        let label = if dry_run {
            format!("{} (dry run)", mode.name())
        } else {
            format!("{} (writing)", mode.name())
        };
        println!(
            "{:<32} {:>10} {:>10.2} {:>12.0} {:>10} {:>12}",
            label,
            r.pages,
            secs,
            r.pages as f64 / secs,
            r.changed,
            r.links_changed
        );
    };
    println!(
        "{:<32} {:>10} {:>10} {:>12} {:>10} {:>12}",
        "mode", "pages", "seconds", "pages/s", "changed", "links chg"
    );
    for mode in [
        Mode::None,
        Mode::Domain,
        Mode::DomainTopic,
        Mode::Relevance,
        Mode::RelevanceLinkType,
    ] {
        if modes.as_ref().is_none_or(|m| m.contains(&mode)) {
            run(mode, true);
        }
    }
    // Writing runs: to the strictest mode, back, and again unchanged; the
    // db ends with the verdicts it started with.
    if modes.is_none() || std::env::var_os("TRAWL_BENCH_WRITES").is_some() {
        run(Mode::RelevanceLinkType, false);
        run(Mode::None, false);
        run(Mode::None, false);
    }
    drop(store);
    if kept.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
