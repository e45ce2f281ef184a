//! The `denoise.*` settings: document 003's denoising rules and their
//! thresholds.

use super::{Key, Kind, Value};

pub(super) static DENOISE_KEYS: &[Key] = &[
    key!(
        "denoise.enabled",
        Kind::Bool,
        "denoise each HTML page (003): store its title, author, date and the lines each rule removed; the page filters then read the denoised text",
        |s| s.denoise.enabled.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.denoise.enabled = b
        }
    ),
    key!(
        "denoise.filter_text",
        Kind::Enum(&["denoised", "raw"]),
        "the text the topic and relevance filters read when pages are denoised",
        |s| if s.denoise.filters_read_raw {
            "raw"
        } else {
            "denoised"
        }
        .to_string(),
        |s, v| if let Value::Text(t) = v {
            s.denoise.filters_read_raw = t == "raw"
        }
    ),
    key!(
        "denoise.nav_separators",
        Kind::Int { min: 1, max: 1000 },
        "a navigation line has at least this many separators (| » • or a lone > / -) …",
        |s| s.denoise.rules.nav_separators.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.denoise.rules.nav_separators = n as u32
        }
    ),
    key!(
        "denoise.nav_words",
        Kind::Float {
            min: 0.0,
            max: 1000.0
        },
        "… and at most this many words between two separators on average",
        |s| s.denoise.rules.nav_words.to_string(),
        |s, v| if let Value::Float(x) = v {
            s.denoise.rules.nav_words = x
        }
    ),
    key!(
        "denoise.ad_words",
        Kind::Int {
            min: 0,
            max: 100_000
        },
        "a line with a link and fewer words than this is an ad (003: 10; a CJK character is a word)",
        |s| s.denoise.rules.ad_words.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.denoise.rules.ad_words = n as u32
        }
    ),
    key!(
        "denoise.ad_link_ratio",
        Kind::Float {
            min: 0.0,
            max: 1000.0
        },
        "a line with more links per word than this is an ad (003: 0.35)",
        |s| s.denoise.rules.ad_link_ratio.to_string(),
        |s, v| if let Value::Float(x) = v {
            s.denoise.rules.ad_link_ratio = x
        }
    ),
    key!(
        "denoise.copyright_words",
        Kind::Int {
            min: 0,
            max: 100_000
        },
        "a line with a copyright term and fewer words than this is dropped (003: 80)",
        |s| s.denoise.rules.copyright_words.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.denoise.rules.copyright_words = n as u32
        }
    ),
    key!(
        "denoise.copyright_terms",
        Kind::List,
        "words that mark a copyright line, any case (003: Copyright, Statement, E-mail, Company)",
        |s| s.denoise.rules.copyright_terms.join(","),
        |s, v| if let Value::List(l) = v {
            s.denoise.rules.copyright_terms = l
        }
    ),
];
