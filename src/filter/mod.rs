//! The focused-crawl filters of the source documents, as pure functions of
//! settings and stored features, so the crawl and `refilter` share them:
//!
//! - [`domain`]: stage 1 of document 000 — key domains derived from the
//!   seeds by removing common labels; a host passes when it contains one.
//! - [`topic`]: stage 2 of document 000 — formula (1), the keyword score
//!   over title and body.
//! - [`relevance`]: document 001 — cosine of the page's keyword vector with
//!   the weighted topic vector.
//! - [`links`]: document 001 — the five link types and the per-type policy.

pub mod domain;
pub mod keywords;
pub mod links;
pub mod relevance;
pub mod topic;
