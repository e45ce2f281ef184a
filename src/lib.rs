//! trawl: a focused web crawler whose whole state — frontier, URL-seen set,
//! fetched pages, link graph — lives in one RocksDB database.
//!
//! Data flows one way through the layers:
//!
//! ```text
//! frontier ─► scheduler (host ready? robots allow? politeness delay)
//!          ─► fetch (pooled hyper client, rustls, timeouts, caps, decoding)
//!          ─► parse (charset, one token pass: title, text, links with context)
//!          ─► seen check ─► frontier
//!          ─► one WriteBatch per page
//! ```
//!
//! Modules, lowest first: [`model`] (ids, canonical URLs), [`schema`] (the
//! on-disk format, mirrored by `schema/v23.md`), [`store`] (the only code
//! that touches RocksDB), [`fetch`], [`parse`], [`frontier`], [`crawl`]
//! (the engine and its handle), [`graph`] (the link graph in memory:
//! PageRank), [`shell`] (the query shell and `.crawlrc`
//! batches), [`site`] (servers on loopback for the demo and tests), [`cli`].

pub mod cli;
pub mod crawl;
pub mod dedup;
pub mod fetch;
pub mod filter;
pub mod frontier;
pub mod graph;
pub mod model;
pub mod parse;
pub mod schema;
pub mod shell;
pub mod simulate;
pub mod site;
pub mod store;
