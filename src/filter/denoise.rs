//! Page denoising, document 003 §4.3, on the visible text (one line per
//! block element) and the positions of the page's links:
//!
//! 1. the title (the `<h1>` when `<title>` is generic or the site's),
//!    author and date are taken first, and their lines are kept whatever
//!    the later rules say (short lines that look like ads);
//! 2. scripts, styles and tags are gone already (the parser keeps text and
//!    links only);
//! 3. navigation lines: many separators (`|`, `»`, `•`, a lone `>` …)
//!    and few words between them;
//! 4. ad lines: at least one link and fewer than 10 words, or more than
//!    0.35 links a word;
//! 5. link text written in `<…>` is cut out of the line;
//! 6. copyright lines: a copyright word and fewer than 80 words.
//!
//! A word is a run of letters or digits, and each CJK ideograph or kana is
//! a word of its own: Chinese and Japanese put no spaces between words, a
//! dictionary segmenter would add megabytes of data for thresholds that
//! are rough anyway, and a character counts a line as longer than its
//! words do, so a CJK line is called an ad or navigation less readily
//! than an English one of the same length — the error keeps text.
//!
//! The result is a list of removed lines with the rule that removed each,
//! so the text itself is stored once (in the page frame) and the denoised
//! text is [`clean_text`] of the two.

use std::borrow::Cow;
use std::sync::LazyLock;

use super::dates::find_date;
use super::keywords::Keywords;
use super::site_titles::SiteTitles;
use crate::parse::{PageHead, ParsedPage, collapse};

/// The thresholds (document 003's values by default).
#[derive(Clone, Debug, PartialEq)]
pub struct DenoiseRules {
    /// A navigation line has at least this many separators …
    pub nav_separators: u32,
    /// … and at most this many words between two, on average.
    pub nav_words: f64,
    /// A line with a link and fewer words than this is an ad.
    pub ad_words: u32,
    /// A line with more links per word than this is an ad.
    pub ad_link_ratio: f64,
    /// A line with a copyright word and fewer words than this is dropped.
    pub copyright_words: u32,
    /// Words that mark a copyright line (ASCII letters in any case, as
    /// the keyword filters match).
    pub copyright_terms: Vec<String>,
}

impl Default for DenoiseRules {
    fn default() -> Self {
        DenoiseRules {
            nav_separators: 2,
            nav_words: 4.0,
            ad_words: 10,
            ad_link_ratio: 0.35,
            copyright_words: 80,
            copyright_terms: [
                "copyright",
                "statement",
                "e-mail",
                "company",
                "©",
                "all rights reserved",
                "版权",
                "声明",
                "邮箱",
                "公司",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// Denoising as the crawl and refilter apply it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DenoiseSettings {
    /// Denoise each HTML page (off by default: the filters then read the
    /// whole visible text, as before).
    pub enabled: bool,
    /// The page filters read the raw visible text even when pages are
    /// denoised.
    pub filters_read_raw: bool,
    pub rules: DenoiseRules,
}

impl DenoiseSettings {
    /// What pages are denoised with, when they are: built once a settings
    /// change, shared by the fetch tasks.
    pub fn denoiser(&self) -> Option<Denoiser> {
        self.enabled.then(|| Denoiser::new(&self.rules))
    }

    /// Whether the page filters read the denoised text of a page that has
    /// one.
    pub fn filters_read_denoised(&self) -> bool {
        self.enabled && !self.filters_read_raw
    }
}

/// The rules, with the copyright terms made into one automaton, and the
/// titles seen so far on each host.
pub struct Denoiser {
    rules: DenoiseRules,
    copyright: Keywords,
    titles: SiteTitles,
}

impl Denoiser {
    pub fn new(rules: &DenoiseRules) -> Denoiser {
        Denoiser {
            copyright: Keywords::new(&rules.copyright_terms),
            rules: rules.clone(),
            titles: SiteTitles::default(),
        }
    }
}

/// Why a line left the denoised text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Rule {
    Navigation = 3,
    Ad = 4,
    /// Text in `<…>` cut out (the rest of the line stays when any is left).
    Bracketed = 5,
    Copyright = 6,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Navigation => "navigation",
            Rule::Ad => "ad",
            Rule::Bracketed => "bracketed",
            Rule::Copyright => "copyright",
        }
    }

    pub fn from_tag(tag: u8) -> Option<Rule> {
        [Rule::Navigation, Rule::Ad, Rule::Bracketed, Rule::Copyright]
            .into_iter()
            .find(|r| *r as u8 == tag)
    }
}

/// What denoising found on a page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Denoised {
    pub title: String,
    pub author: Option<String>,
    /// `YYYY-MM-DD`.
    pub date: Option<String>,
    /// Lines removed or cut (0-based line numbers of the visible text), in
    /// order.
    pub noise: Vec<(u32, Rule)>,
}

/// Denoises a parsed page of `host`.
pub fn denoise(page: &ParsedPage, host: &str, d: &Denoiser) -> Denoised {
    let lines: Vec<&str> = page.text.split('\n').collect();
    let links = links_per_line(&page.text, &page.link_starts);
    let site_wide = d.titles.site_wide(host, &page.title, &page.head.h1);
    let title = choose_title(&page.title, &page.head, site_wide);
    let title_line = lines
        .iter()
        .position(|l| !title.is_empty() && l.trim() == title);
    let (author, author_line) = match &page.head.author {
        Some(a) => (Some(a.clone()), None),
        None => find_author(&lines).map_or((None, None), |(a, i)| (Some(a), Some(i))),
    };
    let (date, date_line) = match page.head.date.as_deref().and_then(find_date) {
        Some(d) => (Some(d), None),
        None => find_dated_line(&lines, title_line.or(author_line))
            .map_or((None, None), |(d, i)| (Some(d), Some(i))),
    };
    let kept = [title_line, author_line, date_line];
    let noise = lines
        .iter()
        .zip(&links)
        .enumerate()
        .filter(|(i, _)| !kept.contains(&Some(*i)))
        .filter_map(|(i, (line, &n))| Some((i as u32, line_rule(line, n, d)?)))
        .collect();
    Denoised {
        title,
        author,
        date,
        noise,
    }
}

/// The first rule that removes or cuts `line`, which holds `links` links.
fn line_rule(line: &str, links: u32, d: &Denoiser) -> Option<Rule> {
    let r = &d.rules;
    let words = words(line);
    let separators = separators(line);
    if separators >= r.nav_separators.max(1)
        && words as f64 / f64::from(separators + 1) <= r.nav_words
    {
        return Some(Rule::Navigation);
    }
    if links > 0
        && (words < r.ad_words as usize || f64::from(links) / words as f64 > r.ad_link_ratio)
    {
        return Some(Rule::Ad);
    }
    if bracketed(line).is_some() {
        return Some(Rule::Bracketed);
    }
    if words < r.copyright_words as usize && d.copyright.total(line) > 0 {
        return Some(Rule::Copyright);
    }
    None
}

/// The denoised text: `text` without the lines `noise` removed (in line
/// order), with the `<…>` spans cut from the lines it names for that.
pub fn clean_text(text: &str, noise: impl IntoIterator<Item = (u32, Rule)>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut next = noise.into_iter().peekable();
    for (i, line) in text.split('\n').enumerate() {
        let rule = next.next_if(|(n, _)| *n as usize == i).map(|(_, r)| r);
        let kept = match rule {
            None => Cow::Borrowed(line),
            Some(Rule::Bracketed) => Cow::Owned(cut_bracketed(line)),
            Some(_) => continue,
        };
        let kept = kept.trim();
        if kept.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(kept);
    }
    out
}

/// Stored noise (line, rule number) as rules; a number no rule has
/// (written by a later trawl) is left out.
pub fn noise_of(stored: &[(u32, u8)]) -> impl Iterator<Item = (u32, Rule)> + '_ {
    stored
        .iter()
        .filter_map(|&(line, tag)| Some((line, Rule::from_tag(tag)?)))
}

/// What each rule took from `text`: (rule, the line or the cut spans).
pub fn removed(text: &str, noise: impl IntoIterator<Item = (u32, Rule)>) -> Vec<(Rule, String)> {
    let lines: Vec<&str> = text.split('\n').collect();
    noise
        .into_iter()
        .filter_map(|(i, rule)| {
            let line = lines.get(i as usize)?;
            let what = match rule {
                Rule::Bracketed => spans(line)
                    .map(|(a, b)| &line[a..b])
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => line.to_string(),
            };
            Some((rule, what))
        })
        .collect()
}

/// Links starting on each line of `text`.
fn links_per_line(text: &str, starts: &[u32]) -> Vec<u32> {
    let mut counts = Vec::new();
    let mut at = 0usize;
    let mut next = starts.iter().peekable();
    for line in text.split('\n') {
        let end = at + line.len();
        let mut n = 0;
        // A link starting at a line's end (its text begins after the
        // break) belongs to the next line.
        while next
            .next_if(|&&s| (s as usize) < end || (s as usize == end && end == text.len()))
            .is_some()
        {
            n += 1;
        }
        counts.push(n);
        at = end + 1;
    }
    counts
}

/// Words in `s`: runs of letters and digits, each CJK ideograph or kana
/// one word (see the module's note).
pub fn words(s: &str) -> usize {
    let mut n = 0;
    let mut in_word = false;
    for c in s.chars() {
        if is_cjk(c) {
            n += 1;
            in_word = false;
        } else if c.is_alphanumeric() {
            n += usize::from(!in_word);
            in_word = true;
        } else if c != '\'' && c != '’' {
            in_word = false;
        }
    }
    n
}

pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x20000..=0x2FA1F) // extensions B-F, compatibility supplement
}

/// Separators on a navigation line: `|`-like marks anywhere, and `>`, `/`,
/// `-`, `–`, `—`, `:` standing alone between words (a breadcrumb's).
fn separators(line: &str) -> u32 {
    let marks = line
        .chars()
        .filter(|c| matches!(c, '|' | '｜' | '¦' | '•' | '·' | '»' | '›' | '«' | '‹'))
        .count();
    let lone = line
        .split_whitespace()
        .filter(|t| matches!(*t, ">" | "<" | "/" | "-" | "–" | "—" | ":" | "::" | ">>"))
        .count();
    (marks + lone) as u32
}

/// Byte spans of `<…>` in `line` (each closed, none nested).
fn spans(line: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        let open = from + line.get(from..)?.find('<')?;
        let close = open + line[open..].find('>')?;
        from = close + 1;
        Some((open, close + 1))
    })
}

fn bracketed(line: &str) -> Option<(usize, usize)> {
    spans(line).next()
}

fn cut_bracketed(line: &str) -> String {
    let mut out = String::new();
    let mut at = 0;
    for (a, b) in spans(line) {
        out.push_str(&line[at..a]);
        at = b;
    }
    out.push_str(&line[at..]);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Titles that name no page.
const GENERIC_TITLES: [&str; 16] = [
    "home",
    "home page",
    "homepage",
    "index",
    "untitled",
    "untitled document",
    "welcome",
    "default",
    "main page",
    "new page",
    "document",
    "首页",
    "主页",
    "网站首页",
    "无标题",
    "无标题文档",
];

/// The page's title, chosen as a good extractor (trafilatura) does:
/// og:title or a title `<meta>`; the page's one `<h1>`; an `<h1>` or `<h2>`
/// whose class names a title; the first `<h1>` when the `<title>` is
/// empty, generic, the site's name (as `og:site_name` says, or
/// `site_wide` because other pages of the host carry it) or the `<h1>`
/// with the site's name beside it ("Headline | Site"); else the
/// `<title>` without the site's name around it; else the first `<h2>`.
/// Permalink marks (Sphinx's `¶`) and invisible characters are dropped.
pub fn choose_title(title: &str, head: &PageHead, site_wide: bool) -> String {
    let t = title.trim();
    let h1 = clean_title(&head.h1);
    let stated = head.og_title.as_deref().or(head.meta_title.as_deref());
    if let Some(m) = stated.map(clean_title).filter(|m| !m.is_empty()) {
        return m;
    }
    if head.h1_count == 1 && !h1.is_empty() && !is_bare_domain(&h1) {
        return h1;
    }
    let titled = clean_title(&head.titled_heading);
    if !titled.is_empty() && !is_bare_domain(&titled) {
        return titled;
    }
    let lower = t.to_lowercase();
    let site_name = head.site_name.as_deref();
    let site_wide = site_wide || site_name.is_some_and(|s| s.trim().eq_ignore_ascii_case(t));
    // "Headline | Site" (but not "Page | site.org" over a logo's <h1>).
    let h1_lower = h1.to_lowercase();
    let wraps_h1 = lower != h1_lower && lower.contains(&h1_lower) && !is_bare_domain(&h1);
    let generic = t.is_empty() || GENERIC_TITLES.contains(&lower.as_str());
    if !h1.is_empty() && (generic || site_wide || wraps_h1) {
        return h1;
    }
    let t = clean_title(t);
    // A bare domain name ("carta.info") names the site: a heading does better.
    if !t.is_empty() && !is_bare_domain(&t) {
        return without_site_name(&t).to_string();
    }
    let h2 = clean_title(&head.h2);
    [h1, h2].into_iter().find(|h| !h.is_empty()).unwrap_or(t)
}

/// A title that is a domain name ("carta.info"): the site's, no page's.
fn is_bare_domain(t: &str) -> bool {
    t.contains('.') && !t.contains(char::is_whitespace)
}

/// Marks a heading ends with that link to itself (Sphinx's `¶`, `#`,
/// `§`, `🔗`), and characters that show nothing.
fn clean_title(s: &str) -> String {
    const PERMALINKS: [char; 4] = ['¶', '#', '§', '🔗'];
    let visible: String = s
        .chars()
        .filter(|c| {
            !matches!(
                c,
                '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{AD}'
            )
        })
        .collect();
    collapse(visible.trim_end_matches(|c: char| c.is_whitespace() || PERMALINKS.contains(&c)))
}

/// Separators between a page's name and its site's in a `<title>`, with
/// whitespace on both sides ("Page – Site", "Site | Page").
const TITLE_SEPARATORS: [char; 17] = [
    '–', '•', '·', '—', '|', '⁄', '*', '⋆', '~', '‹', '«', '<', '›', '»', '>', ':', '-',
];

/// A `<title>` cut at its last separator: the longer side that is not a
/// domain name, as the site's name is the shorter; else the whole.
fn without_site_name(t: &str) -> &str {
    let cut = t.char_indices().rev().find(|&(i, c)| {
        TITLE_SEPARATORS.contains(&c)
            && t[..i].ends_with(char::is_whitespace)
            && t[i + c.len_utf8()..].starts_with(char::is_whitespace)
            && !t[..i].trim().is_empty()
    });
    let Some((i, c)) = cut else { return t };
    let (before, after) = (t[..i].trim(), t[i + c.len_utf8()..].trim());
    // "U.S. troops leave | Reuters" keeps its page side: only a domain
    // name is ruled out.
    let named = |s: &&str| !s.is_empty() && !is_bare_domain(s);
    match (named(&before), named(&after)) {
        (true, true) if after.chars().count() > before.chars().count() => after,
        (true, _) => before,
        (false, true) => after,
        (false, false) => t,
    }
}

/// Words that introduce an author (ASCII letters in any case); the name
/// follows.
const AUTHOR_MARKS: [&str; 10] = [
    "by ",
    "written by ",
    "posted by ",
    "author:",
    "authors:",
    "作者：",
    "作者:",
    "发布者：",
    "发布者:",
    "文／",
];

/// An author line among the first lines ("By Ann Lee", "作者：张三"): the
/// name (cut at a separator, a comma or a date) and the line's number.
fn find_author(lines: &[&str]) -> Option<(String, usize)> {
    lines.iter().take(60).enumerate().find_map(|(i, line)| {
        let t = line.trim();
        if words(t) > 16 {
            return None;
        }
        let mark = AUTHOR_MARKS
            .iter()
            .find(|m| t.get(..m.len()).is_some_and(|p| p.eq_ignore_ascii_case(m)))?;
        let name = t[mark.len()..]
            .split(['|', '｜', ',', '，', '·'])
            .next()?
            .split(" on ")
            .next()?;
        let name = name[..name
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(name.len())]
            .trim();
        (!name.is_empty() && words(name) <= 8).then(|| (name.to_string(), i))
    })
}

/// Words that introduce a date (ASCII letters in any case).
const DATE_MARKS: [&str; 10] = [
    "last modified",
    "last updated",
    "updated",
    "published",
    "posted",
    "date:",
    "发布时间",
    "更新时间",
    "发表于",
    "日期",
];

/// A date line: one that says what its date is ("Last modified: …"),
/// else a short line with a date within five lines after `near` (the
/// title's or author's line). The date and the line's number.
fn find_dated_line(lines: &[&str], near: Option<usize>) -> Option<(String, usize)> {
    static MARKS: LazyLock<Keywords> = LazyLock::new(|| Keywords::new(&DATE_MARKS));
    let marked = lines.iter().enumerate().find_map(|(i, line)| {
        if words(line) > 24 || MARKS.total(line) == 0 {
            return None;
        }
        Some((find_date(line)?, i))
    });
    marked.or_else(|| {
        let from = near?;
        (from..lines.len().min(from + 6)).find_map(|i| {
            let line = lines[i];
            (words(line) <= 16).then(|| find_date(line).map(|d| (d, i)))?
        })
    })
}

#[cfg(test)]
#[path = "denoise_tests.rs"]
mod tests;
