//! robots.txt as RFC 9309 and Google's parser read it: lines, groups, the
//! group that applies to one product token, and longest-match decisions.
//!
//! Parsing follows Google's open-source parser where the RFC leaves room:
//! a UTF-8 byte-order mark (or a prefix of one) is skipped; `\n`, `\r`
//! and `\r\n` end lines; a line is cut at 16,663 bytes; `#` starts a
//! comment; a missing colon is accepted when the line is exactly two
//! words; keys match by prefix and case-insensitively, common misspellings
//! included (`useragent`, `disalow`, …). A user-agent line names the agent
//! spelled by its leading `[A-Za-z_-]` characters (`FOO BAR` names `FOO`);
//! consecutive user-agent lines share a group; rules before any user-agent
//! line are ignored; groups naming our agent merge, and when there is one,
//! the `*` groups are ignored. An allow or disallow line ends a run of
//! user-agent lines; a sitemap, crawl-delay or unknown line between two
//! does not, as in Google's parser.
//!
//! Matching: a pattern is anchored at the start of the path, `*` matches
//! any bytes, a final `$` anchors the end. Patterns and paths are compared
//! in one spelling: `%xx` escapes upper-cased and those of unreserved
//! characters decoded, non-ASCII bytes and the characters URL parsers
//! escape written as `%XX` (RFC 9309 section 2.2.2). The longest matching
//! pattern decides; on a tie `Allow` wins. Google's rule that an allowed
//! `…/index.html` also allows `…/` is kept.

use std::time::Duration;

/// Bytes of a line kept; the rest is ignored (Google's 2083 × 8 buffer).
pub const MAX_LINE_BYTES: usize = 2083 * 8 - 1;

/// One Allow or Disallow rule of the group that applies to us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub allow: bool,
    /// The pattern as compared (normalized); its length is the priority.
    pattern: Vec<u8>,
    /// The pattern as written in the file, for explanations.
    pub written: String,
    /// 1-based line number in the file.
    pub line: u32,
}

impl Rule {
    fn new(allow: bool, value: &[u8], line: u32) -> Option<Rule> {
        let pattern = normalize_pattern(value);
        // An empty pattern matches with priority 0, which never decides.
        (!pattern.is_empty()).then(|| Rule {
            allow,
            pattern,
            written: String::from_utf8_lossy(value).into_owned(),
            line,
        })
    }

    fn priority(&self) -> usize {
        self.pattern.len()
    }

    /// Whether the pattern matches `path` (normalized, starting with `/`).
    pub fn matches(&self, path: &[u8]) -> bool {
        wildcard_match(&self.pattern, path)
    }

    /// `Allow: /x` or `Disallow: /y`, as written.
    pub fn describe(&self) -> String {
        format!(
            "{} {}",
            if self.allow { "Allow:" } else { "Disallow:" },
            self.written
        )
    }
}

/// The parts of a robots.txt that apply to one product token.
#[derive(Debug, Clone, Default)]
pub struct Robots {
    /// Sorted by priority, longest first, `Allow` before `Disallow` at
    /// equal length: the first match decides.
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
    sitemaps: Vec<String>,
    /// A group names our agent (so the `*` groups were ignored).
    specific: bool,
}

/// What a record's key is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Key {
    UserAgent,
    Allow,
    Disallow,
    Sitemap,
    CrawlDelay,
    Other,
}

fn key_of(key: &[u8]) -> Key {
    let starts =
        |p: &str| key.len() >= p.len() && key[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    if starts("user-agent") || starts("useragent") || starts("user agent") {
        Key::UserAgent
    } else if starts("allow") {
        Key::Allow
    } else if [
        "disallow",
        "dissallow",
        "dissalow",
        "disalow",
        "diasllow",
        "disallaw",
    ]
    .iter()
    .any(|p| starts(p))
    {
        Key::Disallow
    } else if starts("sitemap") || starts("site-map") {
        Key::Sitemap
    } else if starts("crawl-delay") || starts("crawldelay") || starts("crawl delay") {
        Key::CrawlDelay
    } else {
        Key::Other
    }
}

/// The agent a user-agent line's value names: its leading `[A-Za-z_-]`.
pub fn line_agent(value: &[u8]) -> &[u8] {
    let end = value
        .iter()
        .position(|b| !(b.is_ascii_alphabetic() || *b == b'-' || *b == b'_'))
        .unwrap_or(value.len());
    &value[..end]
}

/// `*`, alone or followed by white space, names every agent.
fn is_global(value: &[u8]) -> bool {
    value.first() == Some(&b'*') && value.get(1).is_none_or(u8::is_ascii_whitespace)
}

/// Which groups the lines read so far belong to (Google's state machine).
#[derive(Default)]
struct GroupState {
    global: bool,
    specific: bool,
    /// A non-user-agent record ended the current run of user-agent lines.
    separator: bool,
    ever_specific: bool,
}

/// What the parse collects for both kinds of group.
#[derive(Default)]
struct Collected {
    specific: Vec<Rule>,
    global: Vec<Rule>,
    specific_delay: Option<Duration>,
    global_delay: Option<Duration>,
    sitemaps: Vec<String>,
}

impl Robots {
    /// Parses `body` for the product token `agent` (compared
    /// case-insensitively with each user-agent line's agent).
    pub fn parse(body: &[u8], agent: &str) -> Robots {
        let mut state = GroupState::default();
        let mut got = Collected::default();
        for (n, line) in lines(body).enumerate() {
            let Some((key, value)) = split_record(line) else {
                continue;
            };
            let line_no = u32::try_from(n + 1).unwrap_or(u32::MAX);
            state.record(key_of(key), value, agent.as_bytes(), line_no, &mut got);
        }
        let (mut rules, crawl_delay) = if state.ever_specific {
            (got.specific, got.specific_delay)
        } else {
            (got.global, got.global_delay)
        };
        rules.sort_by(|a, b| b.priority().cmp(&a.priority()).then(b.allow.cmp(&a.allow)));
        Robots {
            rules,
            crawl_delay,
            sitemaps: got.sitemaps,
            specific: state.ever_specific,
        }
    }

    /// Every path allowed (a missing file, a 4xx).
    pub fn allow_all() -> Robots {
        Robots::default()
    }

    /// The rule that decides `path` (normalized path and query), if any;
    /// no rule means allowed.
    pub fn deciding_rule(&self, path: &str) -> Option<&Rule> {
        let p = path.as_bytes();
        self.rules.iter().find(|r| r.matches(p))
    }

    pub fn is_allowed(&self, path: &str) -> bool {
        self.deciding_rule(path).is_none_or(|r| r.allow)
    }

    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }

    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }

    /// A group names our agent, so the `*` groups do not apply.
    pub fn has_specific_group(&self) -> bool {
        self.specific
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }
}

impl GroupState {
    fn record(&mut self, key: Key, value: &[u8], agent: &[u8], line: u32, got: &mut Collected) {
        if key == Key::UserAgent {
            if self.separator {
                (self.global, self.specific, self.separator) = (false, false, false);
            }
            if is_global(value) {
                self.global = true;
            } else {
                let named = line_agent(value);
                if !named.is_empty() && named.eq_ignore_ascii_case(agent) {
                    self.specific = true;
                    self.ever_specific = true;
                }
            }
            return;
        }
        // Only a rule ends a run of user-agent lines (Google's parser): a
        // sitemap, crawl-delay or unknown line between two leaves them one
        // group.
        if matches!(key, Key::Allow | Key::Disallow) {
            self.separator = true;
        }
        let in_group = self.specific || self.global;
        match key {
            Key::Allow | Key::Disallow if in_group => {
                let allow = key == Key::Allow;
                let list = if self.specific {
                    &mut got.specific
                } else {
                    &mut got.global
                };
                list.extend(Rule::new(allow, value, line));
                if allow && let Some(dir) = index_page_directory(value) {
                    list.extend(Rule::new(true, &dir, line));
                }
            }
            Key::CrawlDelay if in_group => {
                let slot = if self.specific {
                    &mut got.specific_delay
                } else {
                    &mut got.global_delay
                };
                if slot.is_none() {
                    *slot = parse_delay(value);
                }
            }
            Key::Sitemap => {
                if let Ok(s) = std::str::from_utf8(value)
                    && !s.is_empty()
                {
                    got.sitemaps.push(s.to_string());
                }
            }
            _ => {}
        }
    }
}

/// Google: `Allow: /dir/index.html` (or `.htm`) also allows `/dir/` itself,
/// as the pattern `/dir/$`.
fn index_page_directory(value: &[u8]) -> Option<Vec<u8>> {
    let slash = value.iter().rposition(|&b| b == b'/')?;
    value[slash..].starts_with(b"/index.htm").then(|| {
        let mut p = value[..=slash].to_vec();
        p.push(b'$');
        p
    })
}

/// `Crawl-delay` seconds (fractions allowed); nonsense is ignored.
fn parse_delay(value: &[u8]) -> Option<Duration> {
    let s = std::str::from_utf8(value).ok()?;
    let secs: f64 = s.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// The file's lines: a leading byte-order mark (or a prefix of one)
/// skipped, split at `\n`, `\r` and `\r\n`, each cut at [`MAX_LINE_BYTES`].
fn lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
    let skip = BOM.iter().zip(body).take_while(|(a, b)| a == b).count();
    let mut rest = &body[skip..];
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let end = memchr::memchr2(b'\n', b'\r', rest);
        let line = &rest[..end.unwrap_or(rest.len())];
        match end {
            None => done = true,
            Some(e) => {
                let crlf = rest[e] == b'\r' && rest.get(e + 1) == Some(&b'\n');
                rest = &rest[e + 1 + usize::from(crlf)..];
            }
        }
        Some(&line[..line.len().min(MAX_LINE_BYTES)])
    })
}

fn trim(s: &[u8]) -> &[u8] {
    s.trim_ascii()
}

/// A record's key and value: comment dropped, split at the first colon, or
/// at white space when the line is exactly two words.
fn split_record(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = trim(&line[..memchr::memchr(b'#', line).unwrap_or(line.len())]);
    let (key, value) = match memchr::memchr(b':', line) {
        Some(c) => (&line[..c], &line[c + 1..]),
        None => {
            let ws = line.iter().position(u8::is_ascii_whitespace)?;
            let value = trim(&line[ws..]);
            if value.iter().any(u8::is_ascii_whitespace) {
                return None;
            }
            (&line[..ws], value)
        }
    };
    let key = trim(key);
    (!key.is_empty()).then(|| (key, trim(value)))
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// A pattern in the spelling of a normalized URL (see the module doc):
/// `%xx` upper-cased, unreserved ones decoded; non-ASCII, controls and the
/// characters a URL parser escapes (space `"` `<` `>` everywhere; `` ` ``
/// `{` `}` in the path; `'` in the query) as `%XX`. `*` and `$` stay.
pub fn normalize_pattern(value: &[u8]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(value.len());
    let mut in_query = false;
    let mut i = 0;
    while i < value.len() {
        let b = value[i];
        if b == b'%'
            && let (Some(h), Some(l)) = (
                value.get(i + 1).copied().and_then(hex_value),
                value.get(i + 2).copied().and_then(hex_value),
            )
        {
            let decoded = h << 4 | l;
            if is_unreserved(decoded) {
                out.push(decoded);
            } else {
                out.extend([b'%', HEX[h as usize], HEX[l as usize]]);
            }
            i += 3;
            continue;
        }
        in_query |= b == b'?';
        let escape = !(0x20..0x7F).contains(&b)
            || matches!(b, b' ' | b'"' | b'<' | b'>')
            || (!in_query && matches!(b, b'`' | b'{' | b'}'))
            || (in_query && b == b'\'');
        if escape {
            out.extend([b'%', HEX[(b >> 4) as usize], HEX[(b & 0xF) as usize]]);
        } else {
            out.push(b);
        }
        i += 1;
    }
    out
}

/// `pattern` (with `*` and a final `$`) against `path`, anchored at the
/// start: each literal piece is found leftmost after the previous one,
/// which is exact for `*`-only globs and linear in practice.
fn wildcard_match(pattern: &[u8], path: &[u8]) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix(b"$") {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let mut pieces = pattern.split(|&b| b == b'*');
    let first = pieces.next().unwrap_or_default();
    if !path.starts_with(first) {
        return false;
    }
    let mut pos = first.len();
    let rest: Vec<&[u8]> = pieces.collect();
    let Some((last, middle)) = rest.split_last() else {
        return !anchored || pos == path.len();
    };
    for piece in middle {
        match memchr::memmem::find(&path[pos..], piece) {
            Some(at) => pos += at + piece.len(),
            None => return false,
        }
    }
    if anchored {
        path.len() >= pos + last.len() && path.ends_with(last)
    } else {
        memchr::memmem::find(&path[pos..], last).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_and_anchors() {
        let m = |p: &str, path: &str| wildcard_match(p.as_bytes(), path.as_bytes());
        assert!(m("/", "/x"));
        assert!(m("/a*b", "/a/x/b") && !m("/a*b", "/a/x/c"));
        assert!(m("/a*b$", "/axb") && !m("/a*b$", "/axbc"));
        assert!(m("/*.php$", "/x.php") && !m("/*.php$", "/x.php?y"));
        assert!(m("/a$", "/a") && !m("/a$", "/ab"));
        assert!(m("/a$b", "/a$b"), "a $ inside the pattern is literal");
        assert!(m("*", "/") && m("/*", "/") && m("/**", "/"));
        assert!(m("/*a*a", "/aa") && !m("/*a*a*a", "/aa"));
        assert!(m("/x*$", "/x/yz"));
        assert!(!m("/a*a$", "/a"));
    }

    #[test]
    fn patterns_take_the_spelling_of_a_normalized_url() {
        let n = |s: &str| String::from_utf8(normalize_pattern(s.as_bytes())).unwrap();
        assert_eq!(n("/ツ"), "/%E3%83%84");
        assert_eq!(n("/%e3%83%84"), "/%E3%83%84");
        assert_eq!(n("/%62%61%7a"), "/baz");
        assert_eq!(n("/a b?c d"), "/a%20b?c%20d");
        assert_eq!(n("/{x}?{y}"), "/%7Bx%7D?{y}");
        assert_eq!(n("/%2f%zz%"), "/%2F%zz%");
    }
}
