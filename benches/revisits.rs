//! What revisits cost at scale (issue 36), on a db of N `visits` rows
//! (TRAWL_BENCH_VISITS, default 1,000,000), each with 32 intervals of
//! which some found a change, written the way the engine writes them:
//!
//! - the freshness estimate over every row as schema 20 stored them (no
//!   rate kept: a 100-step bisection a row, what each idle `status` did),
//!   over every row with the rate kept (`recrawl`), and over `status`'s
//!   sample; then the `status` command itself;
//! - a due scan's first row after N due rows were queued (deleted): from
//!   the column family's first key (each loop turn before, twice) and from
//!   the lowest key a row may have (now).
//!
//! Run: `cargo bench --bench revisits`.

use std::sync::Arc;
use std::time::Instant;

use trawl::crawl::revisit::{FRESH_SAMPLE, estimate_freshness, observe};
use trawl::model::UrlId;
use trawl::schema::tables::{Due, Visits};
use trawl::schema::{DueKey, DueReason, VisitRecord};
use trawl::store::Store;

// The same allocator as the `trawl` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const HOUR: u64 = 3_600_000;

/// Page `i`'s visits: hourly, every `i % 7 + 2`th found a change.
fn visits(i: u64, stored_rate: bool) -> VisitRecord {
    let mut v = VisitRecord {
        url: format!("http://bench.test/p{i}"),
        ..VisitRecord::default()
    };
    for k in 0..=32 {
        observe(&mut v, k * HOUR, k > 0 && k % (i % 7 + 2) == 0);
    }
    if !stored_rate {
        v.rate = None;
    }
    v
}

fn write_visits(store: &Store, n: u64, stored_rate: bool) {
    let mut b = store.batch();
    for i in 0..n {
        b.put_row::<Visits>(&UrlId(u128::from(i) << 64 | 1), &visits(i, stored_rate));
        if i % 10_000 == 9_999 {
            std::mem::replace(&mut b, store.batch())
                .write()
                .expect("write");
        }
    }
    b.write().expect("write");
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    println!("{what:<58} {:>10.3} ms", t.elapsed().as_secs_f64() * 1e3);
    out
}

fn main() {
    let n: u64 = std::env::var("TRAWL_BENCH_VISITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(&dir.path().join("db")).expect("open db"));
    let now = 33 * HOUR;
    timed("write the visits rows, no rate kept (schema 20)", || {
        write_visits(&store, n, false)
    });
    store.flush().expect("flush");
    let f = timed(
        "freshness over every row, bisecting each (status before)",
        || estimate_freshness(&store, now, None).expect("estimate"),
    );
    println!(
        "  {} pages, fresh share {:.4}",
        f.pages,
        f.share().unwrap_or(0.0)
    );
    timed("write them again, the rate kept (schema 21)", || {
        write_visits(&store, n, true)
    });
    store.flush().expect("flush");
    let all = timed("freshness over every row, rate kept (recrawl)", || {
        estimate_freshness(&store, now, None).expect("estimate")
    });
    println!("  fresh share {:.4}", all.share().unwrap_or(0.0));
    let sample = timed("freshness over status's sample", || {
        estimate_freshness(&store, now, Some(FRESH_SAMPLE)).expect("estimate")
    });
    println!(
        "  {} pages sampled, fresh share {:.4}",
        sample.pages,
        sample.share().unwrap_or(0.0)
    );
    status(&store);
    due_scan(&store, n);
}

/// The `status` command on the db, five times (the first warms the cache).
fn status(store: &Arc<Store>) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let mut sh = trawl::shell::Shell::new(
        store.clone(),
        rt.handle().clone(),
        Box::new(std::io::sink()),
        0,
    );
    for i in 0..5 {
        timed(&format!("status command, run {}", i + 1), || {
            sh.execute("status").expect("status")
        });
    }
}

/// N due rows queued (deleted as the crawl deletes them), one left.
fn due_scan(store: &Store, n: u64) {
    let key = |i: u64| DueKey {
        at_ms: i,
        url: UrlId(u128::from(i)),
    };
    let mut b = store.batch();
    for i in 0..=n {
        b.put_row::<Due>(&key(i), &DueReason::Interval);
    }
    b.write().expect("write");
    for chunk in (0..n).collect::<Vec<_>>().chunks(512) {
        let mut b = store.batch();
        for &i in chunk {
            b.delete_row::<Due>(&key(i));
        }
        b.write().expect("write");
    }
    for _ in 0..3 {
        let first = timed(
            "due scan from the first key, over N deletions (before)",
            || {
                store
                    .rows::<Due>(&[])
                    .next()
                    .expect("a row")
                    .expect("read")
                    .0
            },
        );
        assert_eq!(first, key(n));
        let floor = timed("due scan from the lowest key a row may have (now)", || {
            store
                .rows_range::<Due>(&key(n), None)
                .next()
                .expect("a row")
                .expect("read")
                .0
        });
        assert_eq!(floor, key(n));
    }
}
