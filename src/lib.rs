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
//! Modules, each using only those before it (or, within a group joined by
//! "and", each other): [`model`] (ids, canonical URLs); [`site`] (servers
//! on loopback for the demo and tests); [`fetch`]; [`parse`], [`filter`]
//! (scope, page and link filters, denoising) and [`dedup`] (simhash
//! near-duplicates); [`schema`] (the on-disk format, mirrored by
//! `schema/v26.md`) and [`store`] (the only code that touches RocksDB);
//! [`search`] (the full-text index beside the db);
//! [`frontier`] (queues and crawl orders); [`graph`] (the link graph in
//! memory: PageRank, co-links); [`settings`] (the crawl's settings and the
//! typed table of every key a user sets); [`crawl`] (the crawl loop and its handle);
//! [`simulate`] (crawl orders replayed over a crawl's graph); [`shell`]
//! (the query shell and `.crawlrc` batches); [`cli`].

pub mod cli;
pub mod crawl;
pub mod dedup;
pub mod export;
pub mod fetch;
pub mod filter;
pub mod frontier;
pub mod graph;
pub mod model;
pub mod parse;
pub mod schema;
pub mod search;
pub mod settings;
pub mod shell;
pub mod simulate;
pub mod site;
pub mod store;
pub mod warc;
