//! The crawl loop and the handle the CLI and shell hold on to it.
//!
//! One engine task owns all mutable crawl state (host queues, the seen
//! front, counters) and is the only writer, so every fetched page becomes
//! exactly one atomic batch and the counters in the db always match its
//! contents. Fetches run as separate tasks, bounded by `concurrency`.

mod audit;
mod commit;
mod dispatch;
mod drops;
mod engine;
mod handle;
mod inflight;
mod judge;
mod marks;
mod page;
mod refilter;
mod scope;
mod seeds;
mod settings;
pub mod traps;
mod worker;

pub use audit::audit;
pub use engine::{CrawlError, Summary, start};
pub use handle::{CrawlHandle, CrawlState, Snapshot};
pub use inflight::{CRASH_LOOP_DEATHS, forget_in_flight};
pub use refilter::{RefilterReport, refilter};
pub use scope::ScopeRule;
pub use settings::{CrawlSettings, Scope};
pub use traps::TrapLimits;
/// A fetch task's CPU work on a body, public for the crawl-floor benchmark.
pub use worker::{PageData, ParsedHtml, process as process_page};
