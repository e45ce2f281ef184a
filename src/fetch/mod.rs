//! HTTP(S) fetching: a pooled hyper-util client over rustls, with timeouts,
//! a streaming body cap, capped Content-Encoding decoding, a byte budget
//! over all bodies in flight, a DNS cache, the network guard on every
//! address connected to, and robots.txt retrieval with RFC 9309 semantics.
//! No storage here: results are plain values the crawl loop records.

mod body;
mod budget;
mod client;
mod connect;
mod dns;
mod encoding;
mod guard;
mod pool;
mod robots;
mod wire;

pub use budget::{ByteBudget, FREE_BYTES};
pub use client::{
    ClientError, FetchError, FetchSettings, Fetched, HttpClient, KEPT_HEADERS, retry_after_ms,
};
pub use dns::CachingResolver;
pub use encoding::decode_whole as decode_body;
pub use guard::{AddrClass, NetGuard, classify as classify_addr};
pub use robots::{Robots, RobotsFetch, RobotsHop, RobotsRules, Rule, fetch_robots, product_token};
pub use wire::Wire;
