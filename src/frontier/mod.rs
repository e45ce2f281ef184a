//! What to fetch next: per-host queues that live on disk (the `frontier`
//! CF) with a small in-memory window each, a heap of hosts by the time they
//! may next be asked, the order URLs are queued in, and the in-memory
//! front of the URL-seen set.

mod boosts;
pub mod learned;
mod queue;
mod seen;

pub mod order;

pub use boosts::Boosts;
pub use order::{Backlinks, Focus, Order, OrderSettings, PageScore};
pub use queue::{HostQueue, ReadyHeap};
pub use seen::{SeenFront, SettledSet};
