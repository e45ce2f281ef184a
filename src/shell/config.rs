//! Every setting the shell can `set`, in one table: name, type and range,
//! default, meaning, and how it maps onto [`CrawlSettings`]. `set`, `get`,
//! `config`, completion and validation all read this table.

use std::time::Duration;

use crate::crawl::CrawlSettings;

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
    /// A User-Agent header whose product token robots.txt can match.
    UserAgent,
    /// A file path or `none`.
    OptPath,
    Float {
        min: f64,
        max: f64,
    },
    /// Comma-separated words.
    List,
    /// Comma-separated `word:weight` pairs, each weight in `0..=max`.
    Weighted {
        max: f64,
    },
    /// `crawl.stop_when` rules.
    StopRules,
}

pub struct Key {
    pub name: &'static str,
    pub kind: Kind,
    pub meaning: &'static str,
    pub(super) get: fn(&CrawlSettings) -> String,
    pub(super) set: fn(&mut CrawlSettings, Value),
    /// Read when a crawl starts only: a running crawl keeps its value.
    pub at_start: bool,
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

/// A [`Key`] entry: its name, kind and meaning, and how it reads and
/// writes [`CrawlSettings`] (`at_start` for keys a running crawl keeps).
macro_rules! key {
    ($name:expr, $kind:expr, $meaning:expr, |$s:ident| $get:expr, |$t:ident, $v:ident| $set:expr $(, $at_start:ident)?) => {
        Key {
            name: $name,
            kind: $kind,
            meaning: $meaning,
            get: |$s| $get,
            set: |$t, $v| $set,
            at_start: key!(@at_start $($at_start)?),
        }
    };
    (@at_start) => { false };
    (@at_start at_start) => { true };
}

mod dedup_keys;
mod denoise_keys;
mod keys;
mod recrawl_keys;
mod sitemap_keys;

/// Every setting, in the order `config` lists them.
pub fn keys() -> impl Iterator<Item = &'static Key> {
    keys::CRAWL_KEYS
        .iter()
        .chain(denoise_keys::DENOISE_KEYS)
        .chain(dedup_keys::DEDUP_KEYS)
        .chain(sitemap_keys::SITEMAP_KEYS)
        .chain(recrawl_keys::RECRAWL_KEYS)
}

pub fn find(name: &str) -> Option<&'static Key> {
    keys().find(|k| k.name == name)
}

/// The key called `name`, or a one-line error with the nearest name.
pub fn find_or_suggest(name: &str) -> Result<&'static Key, String> {
    find(name).ok_or_else(|| match nearest(name, keys().map(|k| k.name)) {
        Some(n) => format!("unknown setting {name:?}; did you mean {n}?"),
        None => format!("unknown setting {name:?}; config lists them"),
    })
}

/// Candidates for a key's value: its words, or `none`, or true/false.
pub fn value_words(name: &str) -> Vec<String> {
    let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    match find(name).map(|k| k.kind) {
        Some(Kind::Enum(vals)) => w(vals),
        Some(Kind::Bool) => w(&["true", "false"]),
        Some(Kind::OptInt { .. }) => w(&["none"]),
        _ => Vec::new(),
    }
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
            Kind::UserAgent => {
                "printable ASCII starting with a product token of letters, '-' and '_' (e.g. mybot/1.0 (+https://example.org/bot))".into()
            }
            Kind::OptPath => "file path or none".into(),
            Kind::Float { min, max } => format!("number {min}..{max}"),
            Kind::List => "comma-separated words".into(),
            Kind::Weighted { max } => {
                format!("comma-separated word:weight pairs, each weight a number 0..{max}")
            }
            Kind::StopRules => crate::crawl::focus::STOP_SYNTAX.into(),
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
            Kind::UserAgent => Value::Text(check_user_agent(raw).map_err(bad)?),
            Kind::Float { .. } | Kind::List | Kind::Weighted { .. } | Kind::StopRules => {
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
                Value::Float(in_range(f, min, max).map_err(bad)?)
            }
            Kind::List => Value::List(items()),
            Kind::StopRules => {
                let rules = crate::crawl::focus::StopRule::parse_list(raw).map_err(bad)?;
                Value::Text(crate::crawl::focus::StopRule::list_text(&rules))
            }
            Kind::Weighted { max } => Value::Weighted(parse_weighted(&items(), max).map_err(bad)?),
            _ => return Ok(None),
        }))
    }
}

/// `f` if it is a finite number in `min..=max`: a NaN or infinite value
/// would order every queue and judge every page wrongly, silently.
fn in_range(f: f64, min: f64, max: f64) -> Result<f64, String> {
    if !f.is_finite() {
        return Err(format!("{f} is not a finite number"));
    }
    if !(min..=max).contains(&f) {
        return Err(format!("{f} is out of range"));
    }
    Ok(f)
}

/// `word:weight` pairs (a bare word weighs 1), each weight a finite
/// number in `0..=max`.
fn parse_weighted(items: &[String], max: f64) -> Result<Vec<(String, f64)>, String> {
    let pair = |item: &String| {
        let Some((w, n)) = item.rsplit_once(':') else {
            return Ok((item.clone(), 1.0));
        };
        let (w, n) = (w.trim(), n.trim());
        if w.is_empty() {
            return Err(format!("{item:?} is not word:weight"));
        }
        let f = (n.parse::<f64>()).map_err(|_| format!("weight {n:?} of {w:?} is not a number"))?;
        let f = in_range(f, 0.0, max).map_err(|why| format!("weight of {w:?}: {why}"))?;
        Ok((w.to_string(), f))
    };
    items.iter().map(pair).collect()
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

/// A User-Agent the crawl can send and robots.txt can match (RFC 9309
/// 2.2.1: the product token is `[a-zA-Z_-]+`; a header value is printable).
fn check_user_agent(raw: &str) -> Result<String, String> {
    let ua = raw.trim();
    if ua.is_empty() {
        return Err("empty".into());
    }
    if let Some(c) = ua.chars().find(|c| !(' '..='~').contains(c)) {
        return Err(format!("{c:?} cannot be sent in a header"));
    }
    let token = crate::fetch::product_token(ua);
    if token.is_empty()
        || !token
            .chars()
            .all(|c| c.is_ascii_alphabetic() || "-_".contains(c))
    {
        return Err(format!(
            "{token:?} is not a product token robots.txt can name (letters, '-' and '_')"
        ));
    }
    Ok(ua.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawl::Scope;
    use crate::filter::Mode;
    use crate::filter::topic::TopicParams;

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
    fn every_number_and_weight_is_finite_and_in_range() {
        let mut s = CrawlSettings::default();
        let mut checked = 0;
        for k in keys() {
            let (max, value): (f64, fn(&str) -> String) = match k.kind {
                Kind::Float { max, .. } => (max, |v| v.to_string()),
                Kind::Weighted { max } => (max, |v| format!("research:2,paper:{v}")),
                _ => continue,
            };
            let before = k.get(&s);
            let too_big = (max * 2.0).to_string();
            for bad in [
                "NaN", "nan", "inf", "-inf", "infinity", "1e999", "-1", &too_big,
            ] {
                let e = k.set(&mut s, &value(bad)).unwrap_err();
                assert!(
                    e.starts_with(&format!("{}: ", k.name))
                        && (e.contains("not a finite number") || e.contains("out of range"))
                        && e.contains(&format!("0..{max}"))
                        && !e.contains('\n'),
                    "{} {bad}: {e}",
                    k.name
                );
            }
            assert_eq!(k.get(&s), before, "{}", k.name);
            k.set(&mut s, &value(&max.to_string())).unwrap();
            checked += 1;
        }
        assert!(checked >= 13, "{checked}");
        let e = find("relevance.keywords")
            .unwrap()
            .set(&mut s, "research:NaN")
            .unwrap_err();
        assert!(
            e.contains("weight of \"research\": NaN is not a finite number"),
            "{e}"
        );
    }

    #[test]
    fn a_user_agent_needs_a_product_token_and_a_sendable_value() {
        let mut s = CrawlSettings::default();
        let ua = find("fetch.user_agent").unwrap();
        ua.set(&mut s, " my_bot-X/2.0 (+https://example.org/bot) ")
            .unwrap();
        assert_eq!(
            s.fetch.user_agent,
            "my_bot-X/2.0 (+https://example.org/bot)"
        );
        assert_eq!(s.agent_token(), "my_bot-X");
        for (bad, why) in [
            ("", "empty"),
            ("bot2/1.0", "product token"),
            ("/1.0", "product token"),
            ("bot/1.0\r\nX-Evil: 1", "cannot be sent"),
            ("bøt", "cannot be sent"),
        ] {
            let e = ua.set(&mut s, bad).unwrap_err();
            assert!(
                e.contains(why) && e.starts_with("fetch.user_agent: "),
                "{bad}: {e}"
            );
        }
        assert_eq!(
            s.fetch.user_agent,
            "my_bot-X/2.0 (+https://example.org/bot)"
        );
    }

    #[test]
    fn nearest_names() {
        let names = || keys().map(|k| k.name);
        assert_eq!(nearest("crawl.dept", names()), Some("crawl.depth"));
        assert_eq!(
            nearest("denoise.ad_word", names()),
            Some("denoise.ad_words")
        );
        assert_eq!(nearest("zzzzzz", names()), None);
    }
}
