//! `denoise.*`: document 003's denoising rules and their thresholds.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[
    key!(
        "denoise.enabled",
        Bool,
        "denoise each HTML page (003): store its title, author, date and the lines each rule removed; the page filters then read the denoised text",
        |s| s.denoise.enabled,
        |s, b| s.denoise.enabled = b,
        run_as("denoise.enabled", |s| {
            match (s.denoise.enabled, s.denoise.filters_read_raw) {
                (false, _) => "false".to_string(),
                (true, false) => "true (filters read the denoised text)".to_string(),
                (true, true) => "true (filters read the raw text)".to_string(),
            }
        })
    ),
    key!(
        "denoise.filter_text",
        named::<FilterText>(),
        "the text the topic and relevance filters read when pages are denoised",
        |s| if s.denoise.filters_read_raw {
            FilterText::Raw
        } else {
            FilterText::Denoised
        },
        |s, t| s.denoise.filters_read_raw = t == FilterText::Raw
    ),
    key!(
        "denoise.nav_separators",
        Int { min: 1, max: 1000 },
        "a navigation line has at least this many separators (| » • or a lone > / -) …",
        |s| s.denoise.rules.nav_separators as u64,
        |s, n| s.denoise.rules.nav_separators = n as u32
    ),
    key!(
        "denoise.nav_words",
        Float {
            min: 0.0,
            max: 1000.0
        },
        "… and at most this many words between two separators on average",
        |s| s.denoise.rules.nav_words,
        |s, x| s.denoise.rules.nav_words = x
    ),
    key!(
        "denoise.ad_words",
        Int {
            min: 0,
            max: 100_000
        },
        "a line with a link and fewer words than this is an ad (003: 10; a CJK character is a word)",
        |s| s.denoise.rules.ad_words as u64,
        |s, n| s.denoise.rules.ad_words = n as u32
    ),
    key!(
        "denoise.ad_link_ratio",
        Float {
            min: 0.0,
            max: 1000.0
        },
        "a line with more links per word than this is an ad (003: 0.35)",
        |s| s.denoise.rules.ad_link_ratio,
        |s, x| s.denoise.rules.ad_link_ratio = x
    ),
    key!(
        "denoise.copyright_words",
        Int {
            min: 0,
            max: 100_000
        },
        "a line with a copyright term and fewer words than this is dropped (003: 80)",
        |s| s.denoise.rules.copyright_words as u64,
        |s, n| s.denoise.rules.copyright_words = n as u32
    ),
    key!(
        "denoise.copyright_terms",
        Words,
        "words that mark a copyright line, any case (003: Copyright, Statement, E-mail, Company)",
        |s| s.denoise.rules.copyright_terms.clone(),
        |s, l| s.denoise.rules.copyright_terms = l
    ),
];

/// The text the page filters read when pages are denoised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FilterText {
    Denoised,
    Raw,
}

named_enum!(FilterText {
    Denoised => "denoised",
    Raw => "raw",
});
