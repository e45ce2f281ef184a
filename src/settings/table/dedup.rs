//! `dedup.*`: near-duplicate detection by simhash.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[
    key!(
        "dedup.near",
        Bool,
        "look for near-duplicates: each HTML page's simhash (of its denoised text when denoising is on) is stored and compared with the stored pages'",
        |s| s.dedup.near,
        |s, b| s.dedup.near = b,
        run_as("dedup.near", |s| match &s.dedup {
            d if !d.near => "false".to_string(),
            d => format!(
                "true (distance {}, cluster budget {})",
                d.distance, d.cluster_budget
            ),
        })
    ),
    key!(
        "dedup.distance",
        Int {
            min: 0,
            max: MAX_DISTANCE as u64
        },
        "bits two simhashes may differ in for their pages to be near-duplicates (the 4-band index finds up to 3)",
        |s| s.dedup.distance as u64,
        |s, n| s.dedup.distance = n as u32
    ),
    key!(
        "dedup.cluster_budget",
        Int {
            min: 0,
            max: 1_000_000_000
        },
        "pages of one site (registrable domain) in a near-duplicate cluster whose links are followed; its later ones are stored, their links not (0: no limit)",
        |s| s.dedup.cluster_budget as u64,
        |s, n| s.dedup.cluster_budget = n as u32
    ),
    key!(
        "dedup.max_indexed",
        Int {
            min: 1,
            max: 1_000_000_000
        },
        "hashed pages the near-duplicate index holds (in memory and in its rows), the latest placed; the oldest are forgotten past it",
        |s| s.dedup.max_indexed as u64,
        |s, n| s.dedup.max_indexed = n as usize
    ),
];
