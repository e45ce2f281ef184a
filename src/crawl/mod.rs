//! The crawl loop and the handle the CLI and shell hold on to it.
//!
//! One engine task owns all mutable crawl state (host queues, the seen
//! front, counters) and is the only writer, so every fetched page becomes
//! exactly one atomic batch and the counters in the db always match its
//! contents. Fetches run as separate tasks, bounded by `concurrency`.

mod commit;
mod engine;
mod handle;
mod refilter;
mod scope;
mod settings;
mod worker;

pub use engine::{CrawlError, Summary, start};
pub use handle::{CrawlHandle, CrawlState, Snapshot};
pub use refilter::{RefilterReport, refilter};
pub use scope::ScopeRule;
pub use settings::{CrawlSettings, Scope};
/// A fetch task's CPU work on a body, public for the crawl-floor benchmark.
pub use worker::{PageData, ParsedHtml, process as process_page};
