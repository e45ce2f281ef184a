//! The fields of a seed site: one table that `seeds` (its columns and
//! `where` fields), `seed set` (the keys a person writes), `seed add`'s
//! flags and the CSV columns of `seed import` and `seed export` all read.

use std::time::Duration;

use crate::filter::Mode;
use crate::frontier::Order;
use crate::model::NamedEnum;
use crate::schema::{SiteRecord, SiteSettings};
use crate::settings::{fmt_duration, parse_duration};
use crate::shell::expr::{Type, Val};

/// A seed site as `seeds` shows it: its record and what the crawl knows.
pub struct SiteRow<'a> {
    pub rec: &'a SiteRecord,
    /// Its seed URLs.
    pub urls: &'a [String],
    /// The status of its first seed URL's fetch, if fetched.
    pub home: Option<u16>,
    /// Its robots.txt as last fetched (`200`, `404`, `unreachable`…), or `-`.
    pub robots: String,
    /// When its robots.txt was fetched (ms), 0 if never.
    pub checked_ms: u64,
    /// Its host-level PageRank relative to the mean (`rank hosts`).
    pub rank: Option<f64>,
    /// Pages fetched and URLs queued on its hosts.
    pub fetched: u64,
    pub queued: u64,
}

impl<'a> SiteRow<'a> {
    /// A row of what the record says alone (nothing the crawl knows).
    pub fn of_record(rec: &'a SiteRecord, urls: &'a [String]) -> SiteRow<'a> {
        SiteRow {
            rec,
            urls,
            home: None,
            robots: String::new(),
            checked_ms: 0,
            rank: None,
            fetched: 0,
            queued: 0,
        }
    }
}

/// Writes a field of a site's record from text.
pub type Writer = fn(&mut SiteRecord, &str) -> Result<(), String>;

/// Fields a person gave for a site, as (field, text) pairs.
pub type Values = Vec<(&'static str, String)>;

pub struct SiteField {
    pub name: &'static str,
    pub ty: Type,
    pub meaning: &'static str,
    pub read: fn(&SiteRow) -> Val,
    /// How `seed set`, a `seed add` flag and a CSV column write it, from
    /// text (`none` or an empty cell clears a setting); None: the crawl
    /// fills it.
    pub write: Option<Writer>,
}

fn text(s: &str) -> Val {
    Val::Str(s.to_string())
}

fn num(v: Option<f64>) -> Val {
    Val::Num(v.unwrap_or(f64::NAN))
}

/// None for `none`, `-` or nothing: the crawl's setting.
fn cleared(v: &str) -> bool {
    matches!(v.trim(), "" | "none" | "-")
}

fn opt_int(v: &str, min: u64, max: u64) -> Result<Option<u64>, String> {
    if cleared(v) {
        return Ok(None);
    }
    let n: u64 = v
        .trim()
        .parse()
        .map_err(|_| format!("{v:?} is not a whole number (or none)"))?;
    if n < min || n > max {
        return Err(format!("{n} is out of range ({min} to {max})"));
    }
    Ok(Some(n))
}

fn set_depth(r: &mut SiteRecord, v: &str) -> Result<(), String> {
    r.settings.depth = opt_int(v, 0, u64::from(u16::MAX))?.map(|n| n as u16);
    Ok(())
}

fn set_filter(r: &mut SiteRecord, v: &str) -> Result<(), String> {
    r.settings.filter = match v.trim() {
        v if cleared(v) => None,
        v if Mode::from_name(v).is_some() => Some(v.to_string()),
        v => {
            return Err(format!(
                "unknown filter mode {v:?} ({} or none)",
                <Mode as NamedEnum>::names(", ")
            ));
        }
    };
    Ok(())
}

fn set_delay(r: &mut SiteRecord, v: &str) -> Result<(), String> {
    r.settings.delay_ms = if cleared(v) {
        None
    } else {
        let d = parse_duration(v)?;
        if d > Duration::from_secs(3600) {
            return Err(format!("{v}: a delay is at most 1h"));
        }
        Some(d.as_millis() as u64)
    };
    Ok(())
}

fn set_max_pages(r: &mut SiteRecord, v: &str) -> Result<(), String> {
    r.settings.max_pages = opt_int(v, 1, u64::MAX)?;
    Ok(())
}

fn set_order(r: &mut SiteRecord, v: &str) -> Result<(), String> {
    r.settings.order = match v.trim() {
        v if cleared(v) => None,
        // Its model learns from the whole crawl and scores every queue.
        "learned" => return Err("the learned order is crawl-wide: set crawl.order learned".into()),
        v if Order::from_name(v).is_some() => Some(v.to_string()),
        v => {
            return Err(format!(
                "unknown crawl order {v:?} (bfs, dfs, shark, importance or none)"
            ));
        }
    };
    Ok(())
}

fn fmt_delay(s: &SiteSettings) -> String {
    s.delay_ms
        .map_or(String::new(), |ms| fmt_duration(Duration::from_millis(ms)))
}

fn date(ms: u64) -> Val {
    if ms == 0 {
        return text("-");
    }
    text(&httpdate::fmt_http_date(
        std::time::UNIX_EPOCH + Duration::from_millis(ms),
    ))
}

/// Every field, in the order `seeds --json` and `seed export` give them.
pub static SITE_FIELDS: &[SiteField] = &[
    SiteField {
        name: "site",
        ty: Type::Str,
        meaning: "the site's origin, scheme://host[:port]",
        read: |r| text(&r.rec.origin),
        write: None,
    },
    SiteField {
        name: "url",
        ty: Type::Str,
        meaning: "its seed URLs, space-separated",
        read: |r| text(&r.urls.join(" ")),
        write: None,
    },
    SiteField {
        name: "subject",
        ty: Type::Str,
        meaning: "the subject field it belongs to",
        read: |r| text(&r.rec.subject),
        write: Some(|r, v| {
            r.subject = v.trim().to_string();
            Ok(())
        }),
    },
    SiteField {
        name: "source",
        ty: Type::Str,
        meaning: "where it was found",
        read: |r| text(&r.rec.source),
        write: Some(|r, v| {
            r.source = v.trim().to_string();
            Ok(())
        }),
    },
    SiteField {
        name: "type",
        ty: Type::Str,
        meaning: "what it holds (papers, news, a forum…)",
        read: |r| text(&r.rec.content_type),
        write: Some(|r, v| {
            r.content_type = v.trim().to_string();
            Ok(())
        }),
    },
    SiteField {
        name: "notes",
        ty: Type::Str,
        meaning: "free notes",
        read: |r| text(&r.rec.notes),
        write: Some(|r, v| {
            r.notes = v.trim().to_string();
            Ok(())
        }),
    },
    SiteField {
        name: "depth",
        ty: Type::Num,
        meaning: "its own crawl.depth: links found on its pages are followed this deep",
        read: |r| num(r.rec.settings.depth.map(f64::from)),
        write: Some(set_depth),
    },
    SiteField {
        name: "filter",
        ty: Type::Str,
        meaning: "its own filter.mode: judges its pages and the links on them",
        read: |r| text(r.rec.settings.filter.as_deref().unwrap_or("")),
        write: Some(set_filter),
    },
    SiteField {
        name: "delay",
        ty: Type::Str,
        meaning: "its own crawl.delay between two requests to its hosts",
        read: |r| text(&fmt_delay(&r.rec.settings)),
        write: Some(set_delay),
    },
    SiteField {
        name: "max_pages",
        ty: Type::Num,
        meaning: "pages fetched from its hosts at most",
        read: |r| num(r.rec.settings.max_pages.map(|n| n as f64)),
        write: Some(set_max_pages),
    },
    SiteField {
        name: "order",
        ty: Type::Str,
        meaning: "its own crawl.order for its hosts' queues",
        read: |r| text(r.rec.settings.order.as_deref().unwrap_or("")),
        write: Some(set_order),
    },
    SiteField {
        name: "home",
        ty: Type::Num,
        meaning: "HTTP status of its first seed URL when fetched (before that, of its home page when discover seeds --probe fetched it; none: neither)",
        read: |r| num(r.home.map(f64::from)),
        write: None,
    },
    SiteField {
        name: "robots",
        ty: Type::Str,
        meaning: "its robots.txt when last fetched (or probed, before the crawl reached it): a status, unreachable, or -",
        read: |r| text(&r.robots),
        write: None,
    },
    SiteField {
        name: "checked",
        ty: Type::Str,
        meaning: "when its robots.txt was last fetched",
        read: |r| date(r.checked_ms),
        write: None,
    },
    SiteField {
        name: "rank",
        ty: Type::Num,
        meaning: "host-level PageRank relative to the mean (rank hosts)",
        read: |r| num(r.rank),
        write: None,
    },
    SiteField {
        name: "fetched",
        ty: Type::Num,
        meaning: "pages fetched from its hosts",
        read: |r| Val::Num(r.fetched as f64),
        write: None,
    },
    SiteField {
        name: "queued",
        ty: Type::Num,
        meaning: "URLs of its hosts in the frontier",
        read: |r| Val::Num(r.queued as f64),
        write: None,
    },
    SiteField {
        name: "added",
        ty: Type::Str,
        meaning: "when it joined the library",
        read: |r| date(r.rec.added_ms),
        write: None,
    },
];

pub fn find(name: &str) -> Option<&'static SiteField> {
    SITE_FIELDS.iter().find(|f| f.name == name)
}

/// The fields a person writes (`seed set` keys, `seed add` flags).
pub fn writable() -> impl Iterator<Item = &'static SiteField> {
    SITE_FIELDS.iter().filter(|f| f.write.is_some())
}

/// Writes `value` into field `name` of `rec`, with an error naming the
/// field and what it takes.
pub fn write(rec: &mut SiteRecord, name: &str, value: &str) -> Result<(), String> {
    let Some(f) = find(name) else {
        let names: Vec<&str> = writable().map(|f| f.name).collect();
        return Err(format!(
            "unknown seed field {name:?} (settable: {})",
            names.join(", ")
        ));
    };
    let Some(w) = f.write else {
        return Err(format!("{name} is filled by the crawl, not set by hand"));
    };
    w(rec, value).map_err(|e| format!("{name}: {e}"))
}

/// The settable fields' text as the CSV and `seed set` take it.
pub fn cell(f: &SiteField, row: &SiteRow) -> String {
    match (f.read)(row) {
        Val::Num(n) if n.is_nan() => String::new(),
        v => v.to_string(),
    }
}

/// The settable fields `rec` gives a value, as (field, text): what
/// `config save` writes as `seed add` flags.
pub fn given(rec: &SiteRecord) -> Values {
    let row = SiteRow::of_record(rec, &[]);
    writable()
        .map(|f| (f.name, cell(f, &row)))
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_clear_and_refuse_with_the_reason() {
        let mut r = SiteRecord::default();
        write(&mut r, "depth", "2").unwrap();
        write(&mut r, "filter", "domain").unwrap();
        write(&mut r, "delay", "500ms").unwrap();
        write(&mut r, "max_pages", "1_0").unwrap_err();
        write(&mut r, "max_pages", "10").unwrap();
        write(&mut r, "order", "dfs").unwrap();
        assert_eq!(r.settings.delay_ms, Some(500));
        assert_eq!(r.settings.max_pages, Some(10));
        write(&mut r, "depth", "none").unwrap();
        assert_eq!(r.settings.depth, None);
        assert!(
            write(&mut r, "filter", "loose")
                .unwrap_err()
                .contains("domain+topic")
        );
        assert!(
            write(&mut r, "order", "learned")
                .unwrap_err()
                .contains("crawl-wide")
        );
        assert!(
            write(&mut r, "rank", "1")
                .unwrap_err()
                .contains("filled by the crawl")
        );
        assert!(
            write(&mut r, "colour", "1")
                .unwrap_err()
                .contains("settable: subject")
        );
        assert!(
            write(&mut r, "delay", "2h")
                .unwrap_err()
                .contains("at most 1h")
        );
    }
}
