//! Where a setting's value is validated: each kind of value parses the
//! text a user typed (`set`, `--set`, a flag, a saved setting) into a
//! typed value, checking its range, and shows a typed value back as text.
//! A key of the table is generic over its kind, so its setter receives
//! the type the kind parses and nothing else.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::Duration;

use super::stop_rules::{STOP_SYNTAX, StopRule};
use crate::model::NamedEnum;

/// One kind of setting value: how it is read from text and shown.
pub trait Kind: Sync {
    type Value;

    /// The value `raw` stands for, or why it is not one (the key adds its
    /// name and [`Kind::type_name`]).
    fn parse(&self, raw: &str) -> Result<Self::Value, String>;

    fn show(&self, v: &Self::Value) -> String;

    /// What values the kind takes, for help and errors.
    fn type_name(&self) -> String;

    /// Candidates for completion.
    fn words(&self) -> Vec<String> {
        Vec::new()
    }

    /// The kind's range, for the checks that every bound holds.
    fn bounds(&self) -> Option<Bounds> {
        None
    }
}

/// The range of a numeric kind.
#[derive(Clone, Copy, Debug)]
pub enum Bounds {
    Whole {
        min: u64,
        max: u64,
    },
    Span {
        min: Duration,
        max: Duration,
    },
    Number {
        min: f64,
        max: f64,
    },
    /// `word:weight` pairs, each weight in `0..=max`.
    Weights {
        max: f64,
    },
}

/// A whole number in `min..=max`.
pub struct Int {
    pub min: u64,
    pub max: u64,
}

/// A whole number in `min..=max`, or `none` (no limit).
pub struct OptInt {
    pub min: u64,
    pub max: u64,
}

/// A duration in `min..=max`: `500ms`, `2s`, `1.5m`, `1h`, `2d`.
pub struct Span {
    pub min: Duration,
    pub max: Duration,
}

/// A finite number in `min..=max`.
pub struct Float {
    pub min: f64,
    pub max: f64,
}

/// Comma-separated `word:weight` pairs, each weight in `0..=max`.
pub struct Weighted {
    pub max: f64,
}

/// `true` or `false` (also on/off, yes/no, 1/0).
pub struct Bool;

/// Comma-separated words.
pub struct Words;

/// A User-Agent header whose product token robots.txt can match.
pub struct UserAgent;

/// A file that exists, or `none`.
pub struct OptPath;

/// A directory, made when first used (or none).
pub struct OptDir;

/// A word safe in a file name: letters, digits, `-`, `_`, `.`.
pub struct FileWord;

/// `crawl.stop_when` rules.
pub struct StopRules;

/// One of an enum's names, in any case.
pub struct Named<E>(PhantomData<fn() -> E>);

/// The kind of a setting that is one of `E`'s names.
pub const fn named<E: NamedEnum>() -> Named<E> {
    Named(PhantomData)
}

impl Kind for Int {
    type Value = u64;
    fn parse(&self, raw: &str) -> Result<u64, String> {
        parse_int(raw, self.min, self.max)
    }
    fn show(&self, v: &u64) -> String {
        v.to_string()
    }
    fn type_name(&self) -> String {
        format!("integer {}..{}", self.min, self.max)
    }
    fn bounds(&self) -> Option<Bounds> {
        Some(Bounds::Whole {
            min: self.min,
            max: self.max,
        })
    }
}

impl Kind for OptInt {
    type Value = Option<u64>;
    fn parse(&self, raw: &str) -> Result<Option<u64>, String> {
        if raw.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        parse_int(raw, self.min, self.max).map(Some)
    }
    fn show(&self, v: &Option<u64>) -> String {
        v.map_or("none".to_string(), |n| n.to_string())
    }
    fn type_name(&self) -> String {
        format!("integer {}..{} or none", self.min, self.max)
    }
    fn words(&self) -> Vec<String> {
        vec!["none".into()]
    }
    fn bounds(&self) -> Option<Bounds> {
        Some(Bounds::Whole {
            min: self.min,
            max: self.max,
        })
    }
}

impl Kind for Span {
    type Value = Duration;
    fn parse(&self, raw: &str) -> Result<Duration, String> {
        let d = parse_duration(raw)?;
        if d > self.max {
            return Err(format!("{raw} is too long"));
        }
        if d < self.min {
            return Err(format!("{raw} is too short"));
        }
        Ok(d)
    }
    fn show(&self, v: &Duration) -> String {
        fmt_duration(*v)
    }
    fn type_name(&self) -> String {
        if self.min.is_zero() {
            format!(
                "duration up to {} (e.g. 500ms, 2s, 1m)",
                fmt_duration(self.max)
            )
        } else {
            format!(
                "duration from {} to {} (e.g. 500ms, 2s, 1m)",
                fmt_duration(self.min),
                fmt_duration(self.max)
            )
        }
    }
    fn bounds(&self) -> Option<Bounds> {
        Some(Bounds::Span {
            min: self.min,
            max: self.max,
        })
    }
}

impl Kind for Float {
    type Value = f64;
    fn parse(&self, raw: &str) -> Result<f64, String> {
        let f: f64 = (raw.trim().parse()).map_err(|_| format!("{raw:?} is not a number"))?;
        in_range(f, self.min, self.max)
    }
    fn show(&self, v: &f64) -> String {
        v.to_string()
    }
    fn type_name(&self) -> String {
        format!("number {}..{}", self.min, self.max)
    }
    fn bounds(&self) -> Option<Bounds> {
        Some(Bounds::Number {
            min: self.min,
            max: self.max,
        })
    }
}

impl Kind for Weighted {
    type Value = Vec<(String, f64)>;
    fn parse(&self, raw: &str) -> Result<Self::Value, String> {
        parse_weighted(&items(raw), self.max)
    }
    fn show(&self, v: &Self::Value) -> String {
        let pairs: Vec<String> = v.iter().map(|(k, w)| format!("{k}:{w}")).collect();
        pairs.join(",")
    }
    fn type_name(&self) -> String {
        format!(
            "comma-separated word:weight pairs, each weight a number 0..{}",
            self.max
        )
    }
    fn bounds(&self) -> Option<Bounds> {
        Some(Bounds::Weights { max: self.max })
    }
}

impl Kind for Bool {
    type Value = bool;
    fn parse(&self, raw: &str) -> Result<bool, String> {
        match raw.to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" | "1" => Ok(true),
            "false" | "off" | "no" | "0" => Ok(false),
            _ => Err(format!("{raw:?} is not a boolean")),
        }
    }
    fn show(&self, v: &bool) -> String {
        v.to_string()
    }
    fn type_name(&self) -> String {
        "true or false".into()
    }
    fn words(&self) -> Vec<String> {
        vec!["true".into(), "false".into()]
    }
}

impl Kind for Words {
    type Value = Vec<String>;
    fn parse(&self, raw: &str) -> Result<Vec<String>, String> {
        Ok(items(raw))
    }
    fn show(&self, v: &Vec<String>) -> String {
        v.join(",")
    }
    fn type_name(&self) -> String {
        "comma-separated words".into()
    }
}

impl Kind for UserAgent {
    type Value = String;
    fn parse(&self, raw: &str) -> Result<String, String> {
        check_user_agent(raw)
    }
    fn show(&self, v: &String) -> String {
        v.clone()
    }
    fn type_name(&self) -> String {
        "printable ASCII starting with a product token of letters, '-' and '_' (e.g. mybot/1.0 (+https://example.org/bot))".into()
    }
}

impl Kind for OptPath {
    type Value = Option<PathBuf>;
    fn parse(&self, raw: &str) -> Result<Option<PathBuf>, String> {
        if raw.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        if !std::path::Path::new(raw).is_file() {
            return Err(format!("no file {raw}"));
        }
        Ok(Some(raw.into()))
    }
    fn show(&self, v: &Option<PathBuf>) -> String {
        v.as_ref()
            .map_or("none".into(), |p| p.display().to_string())
    }
    fn type_name(&self) -> String {
        "file path or none".into()
    }
}

impl Kind for OptDir {
    type Value = Option<PathBuf>;
    fn parse(&self, raw: &str) -> Result<Option<PathBuf>, String> {
        if raw.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let path = std::path::Path::new(raw);
        if path.exists() && !path.is_dir() {
            return Err(format!("{raw} is a file, not a directory"));
        }
        Ok(Some(raw.into()))
    }
    fn show(&self, v: &Option<PathBuf>) -> String {
        v.as_ref()
            .map_or("none".into(), |p| p.display().to_string())
    }
    fn type_name(&self) -> String {
        "directory path (made if missing) or none".into()
    }
}

impl Kind for FileWord {
    type Value = String;
    fn parse(&self, raw: &str) -> Result<String, String> {
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if raw.is_empty() || raw.len() > 64 || !raw.chars().all(ok) || raw.starts_with('.') {
            return Err(format!("{raw:?} is not a file-name word"));
        }
        Ok(raw.to_string())
    }
    fn show(&self, v: &String) -> String {
        v.clone()
    }
    fn type_name(&self) -> String {
        "1 to 64 letters, digits, '-', '_' or '.' (not first)".into()
    }
}

impl Kind for StopRules {
    type Value = Vec<StopRule>;
    fn parse(&self, raw: &str) -> Result<Vec<StopRule>, String> {
        StopRule::parse_list(raw)
    }
    fn show(&self, v: &Vec<StopRule>) -> String {
        StopRule::list_text(v)
    }
    fn type_name(&self) -> String {
        STOP_SYNTAX.into()
    }
}

impl<E: NamedEnum> Kind for Named<E> {
    type Value = E;
    fn parse(&self, raw: &str) -> Result<E, String> {
        E::from_name(&raw.to_ascii_lowercase()).ok_or_else(|| format!("{raw:?} is not one of them"))
    }
    fn show(&self, v: &E) -> String {
        v.name().to_string()
    }
    fn type_name(&self) -> String {
        E::names("|")
    }
    fn words(&self) -> Vec<String> {
        E::VARIANTS.iter().map(|v| v.name().to_string()).collect()
    }
}

/// The comma-separated items of `raw`, trimmed, empty ones dropped.
fn items(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
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
