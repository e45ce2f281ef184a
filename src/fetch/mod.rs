//! HTTP(S) fetching: a pooled hyper-util client over rustls, with timeouts,
//! a streaming body cap, capped Content-Encoding decoding, a DNS cache, and
//! robots.txt retrieval with RFC 9309 semantics. No storage here: results
//! are plain values the crawl loop records.

mod client;
mod dns;
mod robots;

pub use client::{
    ClientError, FetchError, FetchSettings, Fetched, HttpClient, KEPT_HEADERS, is_backoff,
    retry_after_ms,
};
pub use robots::{RobotsRules, fetch_robots, product_token};
