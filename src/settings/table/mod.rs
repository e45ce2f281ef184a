//! The table of settings: one entry a key, with its kind and range, its
//! meaning, and how it reads and writes [`CrawlSettings`]. `set`, `get`,
//! `config`, completion, the `trawl crawl` flags, saved settings and a
//! run's record all read it; a file a group of keys, in `config`'s order.

use std::time::Duration;

use super::key::{Setting, key};
use super::validate::{
    Bool, FileWord, Float, Int, OptDir, OptInt, OptPath, Span, StopRules, UserAgent, Weighted,
    Words, named,
};
use super::{CrawlSettings, RecrawlMode, Scope};
use crate::dedup::MAX_DISTANCE;
use crate::filter::Mode;
use crate::filter::topic::TopicParams;
use crate::frontier::{Backlinks, Focus, Order};
use crate::model::named_enum;

mod crawl;
mod dedup;
mod denoise;
mod fetch;
mod filter;
mod order;
mod recrawl;
mod search;
mod sitemaps;
mod warc;

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);
const YEAR: Duration = Duration::from_secs(366 * 86_400);
/// A fetch timeout shorter than this could never be met.
const TIMEOUT_MIN: Duration = Duration::from_millis(100);

/// Every setting, in the order `config` lists them.
pub fn keys() -> impl Iterator<Item = &'static dyn Setting> {
    (crawl::KEYS.iter())
        .chain(fetch::KEYS)
        .chain(filter::KEYS)
        .chain(order::KEYS)
        .chain(denoise::KEYS)
        .chain(dedup::KEYS)
        .chain(sitemaps::KEYS)
        .chain(recrawl::KEYS)
        .chain(warc::KEYS)
        .chain(search::KEYS)
        .copied()
}

pub fn find(name: &str) -> Option<&'static dyn Setting> {
    keys().find(|k| k.name() == name)
}

/// The key called `name`, or a one-line error with the nearest name.
pub fn find_or_suggest(name: &str) -> Result<&'static dyn Setting, String> {
    find(name).ok_or_else(|| match nearest(name, keys().map(|k| k.name())) {
        Some(n) => format!("unknown setting {name:?}; did you mean {n}?"),
        None => format!("unknown setting {name:?}; config lists them"),
    })
}

/// Candidates for a key's value: its names, or `none`, or true/false.
pub fn value_words(name: &str) -> Vec<String> {
    find(name).map(|k| k.words()).unwrap_or_default()
}

/// The candidate closest to `word` by edit distance, if it is close enough
/// to be a likely typo.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}
