//! Every setting the shell can `set`, in one table: name, type and range,
//! default, meaning, and how it maps onto [`CrawlSettings`]. `set`, `get`,
//! `config`, completion and validation all read this table.

use std::time::Duration;

use crate::crawl::{CrawlSettings, Scope};
use crate::filter::Mode;
use crate::filter::topic::TopicParams;

#[derive(Clone, Copy)]
pub enum Kind {
    Int {
        min: u64,
        max: u64,
    },
    /// An integer or `none` (no limit).
    OptInt {
        min: u64,
        max: u64,
    },
    Duration {
        min: Duration,
        max: Duration,
    },
    Bool,
    Enum(&'static [&'static str]),
    Text,
    /// A file path or `none`.
    OptPath,
    Float {
        min: f64,
        max: f64,
    },
    /// Comma-separated words.
    List,
    /// Comma-separated `word:weight` pairs.
    Weighted,
}

pub struct Key {
    pub name: &'static str,
    pub kind: Kind,
    pub meaning: &'static str,
    get: fn(&CrawlSettings) -> String,
    set: fn(&mut CrawlSettings, Value),
}

/// A parsed, validated value.
pub enum Value {
    Int(u64),
    OptInt(Option<u64>),
    Duration(Duration),
    Bool(bool),
    Text(String),
    Float(f64),
    List(Vec<String>),
    Weighted(Vec<(String, f64)>),
}

macro_rules! key {
    ($name:expr, $kind:expr, $meaning:expr, |$s:ident| $get:expr, |$t:ident, $v:ident| $set:expr) => {
        Key {
            name: $name,
            kind: $kind,
            meaning: $meaning,
            get: |$s| $get,
            set: |$t, $v| $set,
        }
    };
}

const HOUR: Duration = Duration::from_secs(3600);
/// A fetch timeout shorter than this could never be met.
const TIMEOUT_MIN: Duration = Duration::from_millis(100);

pub static KEYS: &[Key] = &[
    key!(
        "crawl.depth",
        Kind::OptInt { min: 0, max: 65535 },
        "links followed at most this many hops from a seed (none: no limit)",
        |s| opt(s.max_depth.map(u64::from)),
        |s, v| if let Value::OptInt(n) = v {
            s.max_depth = n.map(|n| n as u16)
        }
    ),
    key!(
        "crawl.max_pages",
        Kind::OptInt {
            min: 1,
            max: u64::MAX
        },
        "stop when the db holds this many fetched pages (none: no limit)",
        |s| opt(s.max_pages),
        |s, v| if let Value::OptInt(n) = v {
            s.max_pages = n
        }
    ),
    key!(
        "crawl.delay",
        Kind::Duration {
            min: Duration::ZERO,
            max: HOUR
        },
        "pause between two requests to one host",
        |s| fmt_duration(s.delay),
        |s, v| if let Value::Duration(d) = v {
            s.delay = d
        }
    ),
    key!(
        "crawl.concurrency",
        Kind::Int {
            min: 1,
            max: 10_000
        },
        "requests in flight in total",
        |s| s.concurrency.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.concurrency = n as usize
        }
    ),
    key!(
        "crawl.per_host",
        Kind::Int { min: 1, max: 256 },
        "requests in flight per host",
        |s| s.per_host.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.per_host = n as usize
        }
    ),
    key!(
        "crawl.max_outlinks",
        Kind::Int {
            min: 1,
            max: 1_000_000
        },
        "links taken from one page at most; the rest are counted and dropped",
        |s| s.max_outlinks.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.max_outlinks = n as usize
        }
    ),
    key!(
        "crawl.scope",
        Kind::Enum(&["host", "domain", "any"]),
        "hosts the crawl may enter: the seeds' hosts, their registrable domains, or any",
        |s| s.scope.name().to_string(),
        |s, v| if let Value::Text(t) = v {
            s.scope = t.parse().unwrap_or(Scope::Host)
        }
    ),
    key!(
        "crawl.max_path_depth",
        Kind::OptInt { min: 1, max: 1000 },
        "spider traps: URLs with more path segments are not queued (none: no limit)",
        |s| opt(s.traps.max_path_depth.map(u64::from)),
        |s, v| if let Value::OptInt(n) = v {
            s.traps.max_path_depth = n.map(|n| n as u16)
        }
    ),
    key!(
        "crawl.max_segment_repeats",
        Kind::OptInt { min: 1, max: 1000 },
        "spider traps: URLs whose path repeats one segment more often are not queued (/a/b/a/b/a…)",
        |s| opt(s.traps.max_segment_repeats.map(u64::from)),
        |s, v| if let Value::OptInt(n) = v {
            s.traps.max_segment_repeats = n.map(|n| n as u16)
        }
    ),
    key!(
        "crawl.max_query_variants",
        Kind::OptInt {
            min: 1,
            max: u32::MAX as u64
        },
        "spider traps: query strings queued at most for one path of a host (calendars, session ids)",
        |s| opt(s.traps.max_query_variants.map(u64::from)),
        |s, v| if let Value::OptInt(n) = v {
            s.traps.max_query_variants = n.map(|n| n as u32)
        }
    ),
    key!(
        "crawl.max_host_urls",
        Kind::OptInt {
            min: 1,
            max: u64::MAX
        },
        "URLs queued at most for one host (none: no limit)",
        |s| opt(s.traps.max_host_urls),
        |s, v| if let Value::OptInt(n) = v {
            s.traps.max_host_urls = n
        }
    ),
    key!(
        "crawl.follow_nofollow",
        Kind::Bool,
        "follow rel=nofollow links",
        |s| s.follow_nofollow.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.follow_nofollow = b
        }
    ),
    key!(
        "crawl.max_redirects",
        Kind::Int { min: 0, max: 20 },
        "redirect hops followed from the URL first linked",
        |s| s.max_redirects.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.max_redirects = n as u8
        }
    ),
    key!(
        "crawl.max_attempts",
        Kind::Int { min: 1, max: 20 },
        "tries per URL answered with 429/503 before the answer is kept",
        |s| s.max_attempts.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.max_attempts = n as u8
        }
    ),
    key!(
        "crawl.backoff",
        Kind::Duration {
            min: Duration::ZERO,
            max: HOUR
        },
        "host back-off after 429/503 without Retry-After",
        |s| fmt_duration(s.backoff),
        |s, v| if let Value::Duration(d) = v {
            s.backoff = d
        }
    ),
    key!(
        "crawl.max_backoff",
        Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(86_400)
        },
        "upper bound on any back-off, Retry-After included",
        |s| fmt_duration(s.max_backoff),
        |s, v| if let Value::Duration(d) = v {
            s.max_backoff = d
        }
    ),
    key!(
        "robots.max_crawl_delay",
        Kind::Duration {
            min: Duration::ZERO,
            max: HOUR
        },
        "robots.txt Crawl-delay above this is capped",
        |s| fmt_duration(s.max_crawl_delay),
        |s, v| if let Value::Duration(d) = v {
            s.max_crawl_delay = d
        }
    ),
    key!(
        "robots.ttl",
        Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(30 * 86_400)
        },
        "how long a fetched robots.txt is trusted",
        |s| fmt_duration(s.robots_ttl),
        |s, v| if let Value::Duration(d) = v {
            s.robots_ttl = d
        }
    ),
    key!(
        "robots.retry",
        Kind::Duration {
            min: Duration::ZERO,
            max: HOUR
        },
        "first wait before retrying an unreachable robots.txt (doubles each time)",
        |s| fmt_duration(s.robots_retry),
        |s, v| if let Value::Duration(d) = v {
            s.robots_retry = d
        }
    ),
    key!(
        "robots.max_failures",
        Kind::Int { min: 1, max: 100 },
        "unreachable robots.txt fetches in a row before the host's URLs are dropped",
        |s| s.robots_max_failures.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.robots_max_failures = n as u32
        }
    ),
    key!(
        "fetch.user_agent",
        Kind::Text,
        "User-Agent header; its first token is matched against robots.txt groups",
        |s| s.fetch.user_agent.clone(),
        |s, v| if let Value::Text(t) = v {
            s.fetch.user_agent = t
        }
    ),
    key!(
        "fetch.timeout",
        Kind::Duration {
            min: TIMEOUT_MIN,
            max: HOUR
        },
        "total time one fetch may take",
        |s| fmt_duration(s.fetch.total_timeout),
        |s, v| if let Value::Duration(d) = v {
            s.fetch.total_timeout = d
        }
    ),
    key!(
        "fetch.connect_timeout",
        Kind::Duration {
            min: TIMEOUT_MIN,
            max: HOUR
        },
        "time to open a connection",
        |s| fmt_duration(s.fetch.connect_timeout),
        |s, v| if let Value::Duration(d) = v {
            s.fetch.connect_timeout = d
        }
    ),
    key!(
        "fetch.first_byte_timeout",
        Kind::Duration {
            min: TIMEOUT_MIN,
            max: HOUR
        },
        "time until the response headers arrive",
        |s| fmt_duration(s.fetch.first_byte_timeout),
        |s, v| if let Value::Duration(d) = v {
            s.fetch.first_byte_timeout = d
        }
    ),
    key!(
        "fetch.max_body",
        Kind::Int {
            min: 1024,
            max: 1 << 30
        },
        "cap in bytes on a body, on the wire and decoded",
        |s| s.fetch.max_body_bytes.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.fetch.max_body_bytes = n as usize
        }
    ),
    key!(
        "fetch.memory_budget",
        Kind::Int {
            min: 1 << 20,
            max: 1 << 40
        },
        "bytes of bodies in flight at most (read, decoded, waiting to be stored), beyond each body's first 64 KiB",
        |s| s.fetch.memory_budget.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.fetch.memory_budget = n as usize
        }
    ),
    key!(
        "net.allow_private",
        Kind::Bool,
        "connect to loopback and private addresses other than the seeds' own (link-local and cloud-metadata addresses never)",
        |s| s.fetch.allow_private.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.fetch.allow_private = b
        }
    ),
    key!(
        "fetch.ca_file",
        Kind::OptPath,
        "extra PEM root certificate(s) to trust (none: only the built-in roots)",
        |s| s
            .fetch
            .ca_file
            .as_ref()
            .map_or("none".into(), |p| p.display().to_string()),
        |s, v| if let Value::Text(t) = v {
            s.fetch.ca_file = (t != "none").then(|| t.into())
        }
    ),
    key!(
        "filter.mode",
        Kind::Enum(&Mode::NAMES),
        "focused-crawl filters: none, domain (000 stage 1), domain+topic (000 stages 1+2), relevance (001), relevance+linktype (001 with link policy)",
        |s| s.filter.mode.name().to_string(),
        |s, v| if let Value::Text(t) = v {
            s.filter.mode = Mode::parse(&t).unwrap_or_default()
        }
    ),
    key!(
        "domains.common",
        Kind::List,
        "labels removed from seed hosts to leave key domains (000)",
        |s| s.filter.common_domains.join(","),
        |s, v| if let Value::List(l) = v {
            s.filter.common_domains = l
        }
    ),
    key!(
        "domains.extra_keys",
        Kind::List,
        "key domains added by hand (domains key add)",
        |s| s.filter.extra_keys.join(","),
        |s, v| if let Value::List(l) = v {
            s.filter.extra_keys = l
        }
    ),
    key!(
        "domains.removed_keys",
        Kind::List,
        "derived key domains removed by hand (domains key remove)",
        |s| s.filter.removed_keys.join(","),
        |s, v| if let Value::List(l) = v {
            s.filter.removed_keys = l
        }
    ),
    key!(
        "topic.preset",
        Kind::Enum(&["a", "b", "custom"]),
        "000's parameter sets: a = 1, 3, 0.2, 8; b = 0.1, 0.3, 0.2, 0.5 with its five keywords",
        |s| preset_of(&s.filter.topic).to_string(),
        |s, v| if let Value::Text(t) = v {
            apply_preset(s, &t)
        }
    ),
    key!(
        "topic.keywords",
        Kind::List,
        "keywords K of formula (1)",
        |s| s.filter.topic_keywords.join(","),
        |s, v| if let Value::List(l) = v {
            s.filter.topic_keywords = l
        }
    ),
    key!(
        "topic.ct_weight",
        Kind::Float { min: 0.0, max: 1e6 },
        "weight of a keyword in the body text (ct_weight)",
        |s| s.filter.topic.ct_weight.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.topic.ct_weight = f
        }
    ),
    key!(
        "topic.tl_weight",
        Kind::Float { min: 0.0, max: 1e6 },
        "weight of a keyword in the title (tl_weight)",
        |s| s.filter.topic.tl_weight.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.topic.tl_weight = f
        }
    ),
    key!(
        "topic.gain",
        Kind::Float { min: 0.0, max: 1e3 },
        "gain d for several distinct keywords",
        |s| s.filter.topic.gain.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.topic.gain = f
        }
    ),
    key!(
        "topic.threshold",
        Kind::Float { min: 0.0, max: 1e9 },
        "a page off the key domains is kept when its score is above this",
        |s| s.filter.topic.threshold.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.topic.threshold = f
        }
    ),
    key!(
        "relevance.keywords",
        Kind::Weighted,
        "keyword:weight pairs of the topic vector (001)",
        |s| s
            .filter
            .relevance_keywords
            .iter()
            .map(|(k, w)| format!("{k}:{w}"))
            .collect::<Vec<_>>()
            .join(","),
        |s, v| if let Value::Weighted(l) = v {
            s.filter.relevance_keywords = l
        }
    ),
    key!(
        "relevance.threshold",
        Kind::Float { min: 0.0, max: 1.0 },
        "r: a page is relevant when cos ≥ r",
        |s| s.filter.relevance_threshold.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.relevance_threshold = f
        }
    ),
    key!(
        "links.upward_p",
        Kind::Float { min: 0.0, max: 1.0 },
        "probability of following an upward link (hash-decided, reproducible)",
        |s| s.filter.links.upward_p.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.links.upward_p = f
        }
    ),
    key!(
        "links.min_anchor_hits",
        Kind::Int { min: 0, max: 1000 },
        "keywords needed around a crosswise or outward link's anchor",
        |s| s.filter.links.min_anchor_hits.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.filter.links.min_anchor_hits = n as u32
        }
    ),
    key!(
        "links.relevant_only",
        Kind::Bool,
        "follow links of relevant pages only",
        |s| s.filter.links.relevant_only.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.filter.links.relevant_only = b
        }
    ),
];

fn preset_of(p: &TopicParams) -> &'static str {
    if *p == TopicParams::PRESET_A {
        "a"
    } else if *p == TopicParams::PRESET_B {
        "b"
    } else {
        "custom"
    }
}

fn apply_preset(s: &mut CrawlSettings, name: &str) {
    match name {
        "a" => s.filter.topic = TopicParams::PRESET_A,
        "b" => {
            s.filter.topic = TopicParams::PRESET_B;
            s.filter.topic_keywords = TopicParams::PRESET_B_KEYWORDS.map(String::from).to_vec();
        }
        _ => {}
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or("none".to_string(), |n| n.to_string())
}

pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

impl Key {
    pub fn get(&self, s: &CrawlSettings) -> String {
        (self.get)(s)
    }

    pub fn default_value(&self) -> String {
        (self.get)(&CrawlSettings::default())
    }

    /// What values the key takes, for help and errors.
    pub fn type_name(&self) -> String {
        match self.kind {
            Kind::Int { min, max } => format!("integer {min}..{max}"),
            Kind::OptInt { min, max } => format!("integer {min}..{max} or none"),
            Kind::Duration { min, max } if min.is_zero() => {
                format!("duration up to {} (e.g. 500ms, 2s, 1m)", fmt_duration(max))
            }
            Kind::Duration { min, max } => format!(
                "duration from {} to {} (e.g. 500ms, 2s, 1m)",
                fmt_duration(min),
                fmt_duration(max)
            ),
            Kind::Bool => "true or false".into(),
            Kind::Enum(vals) => vals.join("|"),
            Kind::Text => "text".into(),
            Kind::OptPath => "file path or none".into(),
            Kind::Float { min, max } => format!("number {min}..{max}"),
            Kind::List => "comma-separated words".into(),
            Kind::Weighted => "comma-separated word:weight pairs".into(),
        }
    }

    /// Validates `raw` and applies it to `s`.
    pub fn set(&self, s: &mut CrawlSettings, raw: &str) -> Result<(), String> {
        let bad = |why: String| format!("{}: {why}; expected {}", self.name, self.type_name());
        if let Some(v) = self.parse_more(raw)? {
            (self.set)(s, v);
            return Ok(());
        }
        let v = match self.kind {
            Kind::Int { min, max } => Value::Int(parse_int(raw, min, max).map_err(bad)?),
            Kind::OptInt { .. } if raw.eq_ignore_ascii_case("none") => Value::OptInt(None),
            Kind::OptInt { min, max } => {
                Value::OptInt(Some(parse_int(raw, min, max).map_err(bad)?))
            }
            Kind::Duration { min, max } => {
                let d = parse_duration(raw).map_err(bad)?;
                if d > max {
                    return Err(bad(format!("{raw} is too long")));
                }
                if d < min {
                    return Err(bad(format!("{raw} is too short")));
                }
                Value::Duration(d)
            }
            Kind::Bool => Value::Bool(match raw.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" | "1" => true,
                "false" | "off" | "no" | "0" => false,
                _ => return Err(bad(format!("{raw:?} is not a boolean"))),
            }),
            Kind::Enum(vals) => {
                let lower = raw.to_ascii_lowercase();
                if !vals.contains(&lower.as_str()) {
                    return Err(bad(format!("{raw:?} is not one of them")));
                }
                Value::Text(lower)
            }
            Kind::Text if raw.trim().is_empty() => return Err(bad("empty".into())),
            Kind::Text => Value::Text(raw.to_string()),
            Kind::Float { .. } | Kind::List | Kind::Weighted => {
                unreachable!("parsed by parse_more")
            }
            Kind::OptPath => {
                if !raw.eq_ignore_ascii_case("none") && !std::path::Path::new(raw).is_file() {
                    return Err(bad(format!("no file {raw}")));
                }
                Value::Text(if raw.eq_ignore_ascii_case("none") {
                    "none".into()
                } else {
                    raw.to_string()
                })
            }
        };
        (self.set)(s, v);
        Ok(())
    }

    fn parse_more(&self, raw: &str) -> Result<Option<Value>, String> {
        let bad = |why: String| format!("{}: {why}; expected {}", self.name, self.type_name());
        let items = || {
            raw.split(',')
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        };
        Ok(Some(match self.kind {
            Kind::Float { min, max } => {
                let f: f64 = raw
                    .trim()
                    .parse()
                    .map_err(|_| bad(format!("{raw:?} is not a number")))?;
                if !(min..=max).contains(&f) {
                    return Err(bad(format!("{f} is out of range")));
                }
                Value::Float(f)
            }
            Kind::List => Value::List(items()),
            Kind::Weighted => {
                let mut out = Vec::new();
                for item in items() {
                    let (w, weight) = match item.rsplit_once(':') {
                        Some((w, n)) => (
                            w.trim().to_string(),
                            n.trim()
                                .parse::<f64>()
                                .map_err(|_| bad(format!("weight {n:?} is not a number")))?,
                        ),
                        None => (item.clone(), 1.0),
                    };
                    if w.is_empty() || weight < 0.0 {
                        return Err(bad(format!("{item:?} is not word:weight")));
                    }
                    out.push((w, weight));
                }
                Value::Weighted(out)
            }
            _ => return Ok(None),
        }))
    }
}

fn parse_int(raw: &str, min: u64, max: u64) -> Result<u64, String> {
    let n: u64 = raw
        .replace('_', "")
        .parse()
        .map_err(|_| format!("{raw:?} is not a whole number"))?;
    if n < min || n > max {
        return Err(format!("{n} is out of range"));
    }
    Ok(n)
}

/// `500ms`, `2s`, `1.5s`, `3m`, `1h`, `2d`; a bare number is seconds.
pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let split = raw
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(raw.len());
    let (num, unit) = raw.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{raw:?} is not a duration"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86_400.0,
        _ => {
            return Err(format!(
                "{raw:?}: unknown unit {unit:?} (use ms, s, m, h, d)"
            ));
        }
    };
    Duration::try_from_secs_f64(secs).map_err(|_| format!("{raw:?} is not a duration"))
}

pub fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        "0s".into()
    } else if ms.is_multiple_of(86_400_000) {
        format!("{}d", ms / 86_400_000)
    } else if ms.is_multiple_of(3_600_000) {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_are_validated() {
        let mut s = CrawlSettings::default();
        find("crawl.delay").unwrap().set(&mut s, "500ms").unwrap();
        assert_eq!(s.delay, Duration::from_millis(500));
        find("crawl.depth").unwrap().set(&mut s, "none").unwrap();
        assert_eq!(s.max_depth, None);
        find("crawl.scope").unwrap().set(&mut s, "Domain").unwrap();
        assert_eq!(s.scope, Scope::Domain);
        let e = find("crawl.concurrency")
            .unwrap()
            .set(&mut s, "0")
            .unwrap_err();
        assert!(e.contains("out of range") && e.contains("1..10000"), "{e}");
        assert!(find("crawl.delay").unwrap().set(&mut s, "fast").is_err());
        assert!(
            find("crawl.follow_nofollow")
                .unwrap()
                .set(&mut s, "maybe")
                .is_err()
        );
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
    }

    #[test]
    fn filter_keys() {
        let mut s = CrawlSettings::default();
        find("filter.mode")
            .unwrap()
            .set(&mut s, "domain+topic")
            .unwrap();
        assert_eq!(s.filter.mode, Mode::DomainTopic);
        find("topic.preset").unwrap().set(&mut s, "a").unwrap();
        assert_eq!(s.filter.topic, TopicParams::PRESET_A);
        find("topic.keywords")
            .unwrap()
            .set(&mut s, "crawler, filter ,")
            .unwrap();
        assert_eq!(s.filter.topic_keywords, ["crawler", "filter"]);
        find("relevance.keywords")
            .unwrap()
            .set(&mut s, "论文:3, 研究生:2,篮球")
            .unwrap();
        assert_eq!(
            s.filter.relevance_keywords,
            [
                ("论文".into(), 3.0),
                ("研究生".into(), 2.0),
                ("篮球".into(), 1.0)
            ]
        );
        assert!(
            find("relevance.threshold")
                .unwrap()
                .set(&mut s, "1.5")
                .is_err()
        );
        assert!(
            find("relevance.keywords")
                .unwrap()
                .set(&mut s, "x:heavy")
                .is_err()
        );
        assert_eq!(find("topic.preset").unwrap().get(&s), "a");
    }

    #[test]
    fn nearest_names() {
        let names = KEYS.iter().map(|k| k.name);
        assert_eq!(nearest("crawl.dept", names.clone()), Some("crawl.depth"));
        assert_eq!(nearest("zzzzzz", names), None);
    }
}
