//! Refilter throughput: stored pages re-judged per second in each filter
//! mode, over a db built by crawling the demo web (4 hosts × N pages, ~8.5
//! links a page) at delay 0. Dry runs, so every mode sees the same db.
//!
//! Run: `cargo bench --bench refilter` (env TRAWL_BENCH_PAGES=N pages per
//! host, default 25,000 → ~104,000 stored pages).

use std::sync::Arc;
use std::time::Duration;

use trawl::crawl::{self, CrawlSettings};
use trawl::filter::Mode;
use trawl::site::demo::Demo;
use trawl::store::Store;

fn main() {
    let per_host: usize = std::env::var("TRAWL_BENCH_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25_000);
    let dir = std::env::temp_dir().join(format!("trawl-bench-refilter-{}", std::process::id()));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let store = Arc::new(Store::open(&dir).expect("open db"));
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
    println!(
        "{:<20} {:>10} {:>10} {:>12}",
        "mode", "pages", "seconds", "pages/s"
    );
    for mode in [
        Mode::None,
        Mode::Domain,
        Mode::DomainTopic,
        Mode::Relevance,
        Mode::RelevanceLinkType,
    ] {
        let mut s = CrawlSettings::default();
        s.filter.mode = mode;
        let r = crawl::refilter(store.clone(), s, true, &mut |_, _| true).expect("refilter");
        let secs = r.elapsed.as_secs_f64();
        println!(
            "{:<20} {:>10} {:>10.2} {:>12.0}",
            mode.name(),
            r.pages,
            secs,
            r.pages as f64 / secs
        );
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
