//! The integration tests, one binary (each test binary links RocksDB, so
//! one binary saves that link time in CI): each module is a suite against
//! servers on 127.0.0.1 and a real RocksDB in a temp dir, sharing the
//! helpers in `common`. Run one suite with `cargo test --release --test it
//! SUITE::`.

mod common;

mod cli;
mod compat;
mod crash;
mod crawl_loop;
mod dedup;
mod dedup_places;
mod denoise;
mod discover;
mod export_warc;
mod exports;
mod fetch_parse;
mod focused;
mod fuzz;
mod golden;
mod guard;
mod harvest;
mod hostile;
mod hostile_pages;
mod import_warc;
mod learned;
mod orders;
mod paused;
mod ranking;
mod resume;
mod review;
mod revisits;
mod revisits_scale;
mod revisits_truth;
mod robots_politeness;
mod search;
mod seeds;
mod shell;
mod simulate;
mod sitemaps;
mod storage;
mod sudden_death;
mod traps;
mod wacz;
mod warc_live;
