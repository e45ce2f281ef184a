//! The `dedup.*` settings: near-duplicate detection by simhash.

use super::{Key, Kind, Value};
use crate::dedup::MAX_DISTANCE;

pub(super) static DEDUP_KEYS: &[Key] = &[
    key!(
        "dedup.near",
        Kind::Bool,
        "look for near-duplicates: each HTML page's simhash (of its denoised text when denoising is on) is stored and compared with the stored pages'",
        |s| s.dedup.near.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.dedup.near = b
        }
    ),
    key!(
        "dedup.distance",
        Kind::Int {
            min: 0,
            max: MAX_DISTANCE as u64
        },
        "bits two simhashes may differ in for their pages to be near-duplicates (the 4-band index finds up to 3)",
        |s| s.dedup.distance.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.dedup.distance = n as u32
        }
    ),
    key!(
        "dedup.cluster_budget",
        Kind::Int {
            min: 0,
            max: 1_000_000_000
        },
        "pages of one site (registrable domain) in a near-duplicate cluster whose links are followed; its later ones are stored, their links not (0: no limit)",
        |s| s.dedup.cluster_budget.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.dedup.cluster_budget = n as u32
        }
    ),
    key!(
        "dedup.max_indexed",
        Kind::Int {
            min: 1,
            max: 1_000_000_000
        },
        "hashed pages the near-duplicate index holds (in memory and in its rows), the latest placed; the oldest are forgotten past it",
        |s| s.dedup.max_indexed.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.dedup.max_indexed = n as usize
        }
    ),
];
