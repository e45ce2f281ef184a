//! Running a crawl from the command line: signals, progress on stderr,
//! the summary on stdout.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::crawl::{self, CrawlHandle, Summary};
use crate::schema::{Counted, Tally};
use crate::settings::CrawlSettings;
use crate::store::Store;

/// Runs a crawl to the end, with progress and Ctrl-C / SIGTERM handling.
pub(super) async fn run(
    store: Arc<Store>,
    settings: CrawlSettings,
    seeds: &[String],
) -> anyhow::Result<Summary> {
    let (handle, join) = crawl::start(store.clone(), settings, seeds)?;
    let signals = tokio::spawn(stop_on_signal(handle.clone(), store));
    let progress = tokio::spawn(show_progress(handle.clone()));
    let summary = join.await.context("the crawl task failed")??;
    signals.abort();
    progress.abort();
    for n in handle.take_notices() {
        eprintln!("note: {n}");
    }
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
    Ok(summary)
}

/// First signal: stop cleanly. Second: leave at once.
async fn stop_on_signal(handle: CrawlHandle, store: Arc<Store>) {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(t) => t,
        Err(_) => return,
    };
    for round in 0..2 {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        if round == 0 {
            eprintln!("\nstopping: finishing fetches in flight (signal again to quit now)");
            handle.stop();
        } else {
            // Quitting on purpose is not a crash: the fetches in flight
            // stay queued without counting towards a crash loop.
            let _ = crawl::forget_in_flight(&store);
            std::process::exit(130);
        }
    }
}

async fn show_progress(handle: CrawlHandle) {
    let tty = std::io::stderr().is_terminal();
    let every = if tty {
        Duration::from_millis(500)
    } else {
        Duration::from_secs(5)
    };
    let mut last = (0u64, std::time::Instant::now());
    loop {
        tokio::time::sleep(every).await;
        let s = handle.snapshot();
        let rate = (s.run_fetched - last.0.min(s.run_fetched)) as f64
            / last.1.elapsed().as_secs_f64().max(1e-3);
        last = (s.run_fetched, std::time::Instant::now());
        let failed: u64 = s.counters.failed.total();
        let line = format!(
            "{:>7.1}s  fetched {}  queued {}  in flight {}  failed {}  {:.0} pages/s",
            s.elapsed.as_secs_f64(),
            s.counters.fetched,
            s.counters.queued,
            s.in_flight,
            failed,
            rate
        );
        let mut err = std::io::stderr().lock();
        for n in handle.take_notices() {
            let _ = writeln!(err, "{}note: {n}", if tty { "\r\x1b[K" } else { "" });
        }
        let _ = if tty {
            write!(err, "\r\x1b[K{line}")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    }
}

pub(super) fn print_summary(s: &Summary, store: &Store) {
    let c = &s.counters;
    fn list<K: Counted>(m: &Tally<K>) -> String {
        let parts: Vec<String> = m.by_name().map(|(k, v)| format!("{k} {v}")).collect();
        if parts.is_empty() {
            "0".to_string()
        } else {
            format!("{} ({})", m.total(), parts.join(", "))
        }
    }
    let secs = s.elapsed.as_secs_f64();
    println!(
        "{}",
        if s.interrupted {
            "crawl stopped (resume by running the same command)"
        } else {
            "crawl finished"
        }
    );
    println!(
        "  pages fetched   {} this run, {} in the db",
        s.run_fetched, c.fetched
    );
    println!(
        "  links found     {} this run, {} in the db",
        s.run_links, c.links
    );
    println!("  queued          {}", c.queued);
    println!("  failed          {}", list(&c.failed));
    println!("  filtered        {}", list(&c.filtered));
    println!("  duplicates      {}", c.duplicates);
    println!(
        "  bytes           {:.1} MB on the wire, {:.1} MB on disk",
        c.bytes as f64 / 1e6,
        store.disk_bytes() as f64 / 1e6
    );
    println!(
        "  elapsed         {secs:.2} s ({:.0} pages/s)",
        s.run_fetched as f64 / secs.max(1e-9)
    );
    println!("  TLP             {:.1} (seconds × links fetched)", s.tlp());
}
