//! The crawl loop and the handle the CLI and shell hold on to it.
//!
//! One scheduler task drives the crawl: it owns the client, the fetch tasks
//! and the ready heap (`scheduler`, `dispatch`, `robots`), and hands every
//! outcome to the ledger (`ledger/`), which owns all mutable crawl state
//! (host records and queues, the seen front, counters) and is the only
//! writer, so every fetched page becomes exactly one atomic batch and the
//! counters in the db always match its contents. Fetches run as separate
//! tasks, bounded by `concurrency`. `refilter` and `import warc` use the
//! ledger alone.

mod audit;
mod clock;
mod dictionary;
mod dispatch;
pub mod focus;
mod frame;
pub mod groups;
mod handle;
mod import;
mod ledger;
mod marks;
mod page_text;
mod politeness;
pub mod probe;
mod refilter;
pub mod revisit;
mod robots;
mod scheduler;
pub mod sites;
pub mod traps;
mod worker;

pub use crate::filter::scope::ScopeRule;
pub use audit::audit;
pub use frame::FrameWriter;
pub use handle::{CrawlHandle, CrawlState, Snapshot, wait_text};
pub use import::{ImportError, ImportProgress, ImportReport, import_warc};
pub use ledger::{CRASH_LOOP_DEATHS, forget_in_flight};
/// A fetch task's CPU work on a body, public for the crawl-floor benchmark.
pub use page_text::{TextPlace, TextPolicy};
pub use refilter::{DenoiseCounts, RefilterReport, RefilterRun, refilter};
pub use scheduler::{CrawlError, Summary, start};
pub use worker::{PageData, ParsedHtml, process as process_page};

/// Times every fetched page under `settings.recrawl` when it is not the
/// policy the db's revisits were timed under (a crawl does it at its
/// start; the shell's `recrawl` at once when no crawl runs). Returns what
/// it did, for the user.
pub fn retime_revisits(
    store: std::sync::Arc<crate::store::Store>,
    settings: crate::settings::CrawlSettings,
) -> Result<Vec<String>, crate::store::StoreError> {
    let mut ledger = ledger::Ledger::offline(store, settings)?;
    ledger.retime_revisits()?;
    while ledger.retime_step()? {}
    Ok(ledger.take_notices())
}
