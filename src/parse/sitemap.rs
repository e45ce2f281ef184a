//! Sitemaps (sitemaps.org protocol 0.9): a `<urlset>` of pages, a
//! `<sitemapindex>` of further sitemaps, or a text file of one URL a line;
//! any of them gzip-compressed. Bounded as the protocol bounds them: at
//! most 50 MB uncompressed and 50,000 URLs a file (the rest are counted,
//! not read). The XML scanner is tolerant: a file cut short or broken
//! keeps the entries read before the break, with the problem named.

use super::sitemap_scan::{Stream, Token, clip};
use crate::model::{self, CanonicalUrl};

pub use super::sitemap_scan::MAX_BYTES;
/// The protocol's bound on one sitemap file's URLs.
pub const MAX_URLS: usize = 50_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SitemapKind {
    /// `<urlset>`: pages.
    UrlSet,
    /// `<sitemapindex>`: further sitemaps.
    Index,
    /// One URL a line.
    Text,
}

impl SitemapKind {
    pub fn name(self) -> &'static str {
        match self {
            SitemapKind::UrlSet => "urlset",
            SitemapKind::Index => "sitemapindex",
            SitemapKind::Text => "text",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SitemapEntry {
    pub url: CanonicalUrl,
    /// `<lastmod>`, as ms since the epoch (UTC).
    pub lastmod_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sitemap {
    pub kind: SitemapKind,
    pub entries: Vec<SitemapEntry>,
    /// Entries whose `<loc>` was not an absolute http(s) URL, or was longer
    /// than the URL limit.
    pub skipped: u32,
    /// Entries past [`MAX_URLS`], not read.
    pub dropped: u32,
    /// What was wrong with the file, if something was (its entries up to
    /// there are kept).
    pub problem: Option<String>,
}

impl Sitemap {
    /// Roughly the heap bytes its entries hold, for the fetch budget.
    pub fn heap_bytes(&self) -> usize {
        self.entries
            .iter()
            .map(|e| std::mem::size_of::<SitemapEntry>() + e.url.as_str().len())
            .sum()
    }
}

/// Reads `body` (as received, after any Content-Encoding) fetched from
/// `base`. An error names why it is not a sitemap at all.
pub fn parse_sitemap(body: &[u8], base: &url::Url) -> Result<Sitemap, String> {
    read_sitemap(body, base, &mut |_| true)
}

/// Bytes the entries kept may grow by between two questions to `hold`.
const HOLD_STEP: usize = 256 << 10;
/// Raw bytes of a `<loc>` kept: an entry longer than the URL limit (with
/// room for entities and white space) is skipped before it is decoded.
const LOC_BYTES: usize = 2 * model::MAX_URL_BYTES;
/// Raw bytes of a `<lastmod>` kept (a W3C datetime is ~30).
const LASTMOD_BYTES: usize = 64;
/// Bytes of a file's problem kept for its record.
const PROBLEM_BYTES: usize = 200;

/// [`parse_sitemap`], with `hold(bytes)` asked before what reading holds
/// (its window and the entries kept) grows past each [`HOLD_STEP`]: the
/// crawl counts it against its memory budget, and a `false` stops the
/// reading there (the entries before are kept, the problem says why).
pub fn read_sitemap(
    body: &[u8],
    base: &url::Url,
    hold: &mut dyn FnMut(usize) -> bool,
) -> Result<Sitemap, String> {
    let mut stream = Stream::new(body);
    let first = stream.first_byte();
    let mut keep = Keep {
        base,
        hold,
        held: 0,
        asked: 0,
        stopped: false,
    };
    let mut map = if first == Some(b'<') {
        scan_xml(&mut stream, &mut keep)?
    } else {
        read_text(&mut stream, &mut keep)
    };
    let problem = if keep.stopped {
        Some(format!(
            "stopped after {} entries: the fetch memory budget stayed spent",
            map.entries.len()
        ))
    } else {
        stream.problem.take().or(map.problem.take())
    };
    map.problem = problem.map(|p| clip(&p, PROBLEM_BYTES));
    Ok(map)
}

fn new_map(kind: SitemapKind) -> Sitemap {
    Sitemap {
        kind,
        entries: Vec::new(),
        skipped: 0,
        dropped: 0,
        problem: None,
    }
}

/// What decides whether an entry is kept, and the memory kept.
struct Keep<'a> {
    base: &'a url::Url,
    hold: &'a mut dyn FnMut(usize) -> bool,
    /// Bytes the entries hold.
    held: usize,
    /// Bytes `hold` has agreed to.
    asked: usize,
    /// `hold` said no: read no further.
    stopped: bool,
}

impl Keep<'_> {
    /// Adds an entry, within the bounds: one whose `<loc>` is not an
    /// absolute http(s) URL, or longer than the URL limit, is counted as
    /// skipped before it is resolved.
    fn push(&mut self, map: &mut Sitemap, loc: &Field, lastmod: Option<&Field>, window: usize) {
        if map.entries.len() >= MAX_URLS {
            map.dropped += 1;
            return;
        }
        let loc = loc.text();
        let loc = loc.as_deref().map(str::trim).unwrap_or("");
        let absolute =
            starts_with_ignore_case(loc, "http://") || starts_with_ignore_case(loc, "https://");
        if !absolute || loc.len() > model::MAX_URL_BYTES {
            map.skipped += 1;
            return;
        }
        let Ok(url) = model::resolve(self.base, loc) else {
            map.skipped += 1;
            return;
        };
        let size = std::mem::size_of::<SitemapEntry>() + url.as_str().len();
        if self.held + size + window > self.asked {
            self.asked = self.held + size + window + HOLD_STEP;
            if !(self.hold)(self.asked) {
                self.stopped = true;
                return;
            }
        }
        self.held += size;
        let lastmod_ms = lastmod
            .and_then(Field::text)
            .and_then(|t| w3c_datetime_ms(&t));
        map.entries.push(SitemapEntry { url, lastmod_ms });
    }
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
}

/// An element's character data as read (escaped), up to a bound.
struct Field {
    raw: Vec<u8>,
    limit: usize,
    too_long: bool,
}

impl Field {
    fn new(limit: usize) -> Field {
        Field {
            raw: Vec::new(),
            limit,
            too_long: false,
        }
    }

    fn push(&mut self, piece: &[u8], literal: bool) {
        if self.too_long {
            return;
        }
        let escaped = if literal {
            piece.iter().filter(|&&b| b == b'&').count() * 4
        } else {
            0
        };
        if self.raw.len() + piece.len() + escaped > self.limit {
            self.too_long = true;
            self.raw = Vec::new();
            return;
        }
        if escaped == 0 {
            self.raw.extend_from_slice(piece);
            return;
        }
        // CDATA is literal: its `&` is escaped so the whole is unescaped once.
        for &b in piece {
            match b {
                b'&' => self.raw.extend_from_slice(b"&amp;"),
                b => self.raw.push(b),
            }
        }
    }

    /// The text, decoded (None when it was too long to keep).
    fn text(&self) -> Option<String> {
        (!self.too_long).then(|| unescape(&String::from_utf8_lossy(&self.raw)))
    }
}

fn read_text(stream: &mut Stream<'_>, keep: &mut Keep<'_>) -> Sitemap {
    let mut map = new_map(SitemapKind::Text);
    let mut line = Field::new(LOC_BYTES);
    while !keep.stopped {
        let window = stream.window();
        let Some((piece, ends)) = stream.line_piece() else {
            break;
        };
        line.push(piece, true);
        if ends {
            end_line(&mut map, keep, &mut line, window);
        }
    }
    if !keep.stopped {
        end_line(&mut map, keep, &mut line, 0);
    }
    map
}

/// A text sitemap's line, ended: an entry unless blank.
fn end_line(map: &mut Sitemap, keep: &mut Keep<'_>, line: &mut Field, window: usize) {
    let blank = !line.too_long && line.raw.iter().all(u8::is_ascii_whitespace);
    if !blank {
        keep.push(map, &*line, None, window);
    }
    *line = Field::new(LOC_BYTES);
}

/// The `<loc>` and `<lastmod>` of each `<url>` (or `<sitemap>`) element.
fn scan_xml(stream: &mut Stream<'_>, keep: &mut Keep<'_>) -> Result<Sitemap, String> {
    let root = loop {
        match stream.token() {
            Some(Ok(Token::Open(name))) => break clip(name, 64),
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(format!("not a sitemap: {e}")),
            None => return Err("not a sitemap: no XML element in it".into()),
        }
    };
    let (kind, item) = match root.as_str() {
        "urlset" => (SitemapKind::UrlSet, "url"),
        "sitemapindex" => (SitemapKind::Index, "sitemap"),
        other => return Err(format!("not a sitemap: its root element is <{other}>")),
    };
    let mut map = new_map(kind);
    let mut loc: Option<Field> = None;
    let mut lastmod: Option<Field> = None;
    // Which of the two the text goes to.
    let mut field: Option<bool> = None;
    // Elements open inside the item: its `<loc>` is a child, an image's
    // (`<image:image><image:loc>`) is not.
    let mut depth = 0u32;
    while !keep.stopped {
        let window = stream.window();
        let Some(token) = stream.token() else { break };
        match token {
            Err(e) => {
                map.problem = Some(e);
                break;
            }
            Ok(Token::Open(n)) if n == item => (loc, lastmod, depth) = (None, None, 0),
            Ok(Token::Open(n)) => {
                depth += 1;
                if depth == 1 && n == "loc" {
                    field = Some(true);
                    loc.get_or_insert_with(|| Field::new(LOC_BYTES));
                } else if depth == 1 && n == "lastmod" {
                    field = Some(false);
                    lastmod.get_or_insert_with(|| Field::new(LASTMOD_BYTES));
                }
            }
            Ok(t @ (Token::Text(_) | Token::CData(_))) => {
                let (piece, literal) = match t {
                    Token::Text(p) => (p, false),
                    Token::CData(p) => (p, true),
                    _ => unreachable!("matched above"),
                };
                let target = match field {
                    Some(true) => loc.as_mut(),
                    Some(false) => lastmod.as_mut(),
                    None => None,
                };
                if let Some(f) = target {
                    f.push(piece, literal);
                }
            }
            Ok(Token::Close(n)) if n == item => {
                if let Some(l) = loc.take() {
                    keep.push(&mut map, &l, lastmod.as_ref(), window);
                }
                lastmod = None;
            }
            Ok(Token::Close(_)) => {
                depth = depth.saturating_sub(1);
                field = None;
            }
            Ok(Token::Other) => {}
        }
    }
    Ok(map)
}

/// Character data with XML's entities and character references decoded.
fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        // An entity is short: look for its `;` in the next few characters.
        let semi = rest
            .char_indices()
            .take(12)
            .find(|&(_, c)| c == ';')
            .map(|(i, _)| i);
        let Some(semi) = semi else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let ch = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e => e
                .strip_prefix("#x")
                .or_else(|| e.strip_prefix("#X"))
                .map(|h| u32::from_str_radix(h, 16))
                .or_else(|| e.strip_prefix('#').map(str::parse))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A W3C datetime (`2024`, `2024-05`, `2024-05-17`,
/// `2024-05-17T10:30+02:00`, `2024-05-17T10:30:15.5Z`) as ms since the
/// epoch; a date alone is its midnight UTC.
pub fn w3c_datetime_ms(s: &str) -> Option<u64> {
    let s = s.trim();
    let (date, time) = match s.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut parts = date.split('-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next().map_or(Ok(1), str::parse).ok()?;
    let day: u32 = parts.next().map_or(Ok(1), str::parse).ok()?;
    let bad = parts.next().is_some() || !(0..=9999).contains(&year);
    if bad || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut secs = days_from_civil(year, month, day) * 86_400;
    if let Some(t) = time {
        let (clock, offset) = split_zone(t)?;
        let mut hms = clock.split(':');
        let h: i64 = hms.next()?.parse().ok()?;
        let m: i64 = hms.next()?.parse().ok()?;
        let sec: f64 = hms.next().map_or(Ok(0.0), str::parse).ok()?;
        if h > 23 || m > 59 || !(0.0..61.0).contains(&sec) {
            return None;
        }
        secs += h * 3600 + m * 60 + sec as i64 - offset;
    }
    // Up to the end of 9999 after the zone (HTTP dates stop there).
    if secs >= 253_402_300_800 {
        return None;
    }
    u64::try_from(secs).ok().map(|s| s * 1000)
}

/// `10:30+02:00` → (`10:30`, 7200 s east of UTC); `Z` is 0.
fn split_zone(t: &str) -> Option<(&str, i64)> {
    if let Some(clock) = t.strip_suffix('Z') {
        return Some((clock, 0));
    }
    let at = t.rfind(['+', '-'])?;
    let (clock, zone) = t.split_at(at);
    let sign = if zone.starts_with('-') { -1 } else { 1 };
    let (h, m) = zone[1..].split_once(':')?;
    let (h, m) = (h.parse::<i64>().ok()?, m.parse::<i64>().ok()?);
    if h > 14 || m > 59 {
        return None;
    }
    Some((clock, sign * (h * 3600 + m * 60)))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn base() -> url::Url {
        url::Url::parse("http://h.org/sitemap.xml").unwrap()
    }

    fn urls(m: &Sitemap) -> Vec<&str> {
        m.entries.iter().map(|e| e.url.as_str()).collect()
    }

    #[test]
    fn a_urlset_gives_its_locs_and_lastmods() {
        let xml = "\u{feff}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
            <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
            <!-- a comment <url> -->\
            <url><loc> http://h.org/a?x=1&amp;y=2 </loc><lastmod>2024-05-17</lastmod></url>\
            <url><loc><![CDATA[http://h.org/b]]></loc><lastmod>2024-05-17T10:30:00+02:00</lastmod><priority>0.5</priority></url>\
            <url><loc>/relative</loc></url>\
            <ns:url><ns:loc>http://h.org/c</ns:loc><lastmod>garbage</lastmod></ns:url>\
            </urlset>";
        let m = parse_sitemap(xml.as_bytes(), &base()).unwrap();
        assert_eq!(m.kind, SitemapKind::UrlSet);
        assert_eq!(
            urls(&m),
            ["http://h.org/a?x=1&y=2", "http://h.org/b", "http://h.org/c"]
        );
        assert_eq!(m.entries[0].lastmod_ms, Some(1_715_904_000_000));
        assert_eq!(
            m.entries[1].lastmod_ms,
            Some(1_715_904_000_000 + 8 * 3_600_000 + 30 * 60_000)
        );
        assert_eq!(m.entries[2].lastmod_ms, None);
        assert_eq!((m.skipped, m.dropped, m.problem.as_deref()), (1, 0, None));
    }

    #[test]
    fn an_index_text_and_gzip_sitemaps_read_and_bounds_hold() {
        let index = "<sitemapindex><sitemap><loc>http://h.org/s1.xml.gz</loc><lastmod>2023-01</lastmod></sitemap></sitemapindex>";
        let m = parse_sitemap(index.as_bytes(), &base()).unwrap();
        assert_eq!(
            (m.kind, urls(&m)),
            (SitemapKind::Index, vec!["http://h.org/s1.xml.gz"])
        );
        assert_eq!(m.entries[0].lastmod_ms, Some(1_672_531_200_000));
        let text = "http://h.org/1\n\n  http://h.org/2  \nftp://h.org/3\n";
        let m = parse_sitemap(text.as_bytes(), &base()).unwrap();
        assert_eq!(
            (m.kind, m.entries.len(), m.skipped),
            (SitemapKind::Text, 2, 1)
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(index.as_bytes()).unwrap();
        let m = parse_sitemap(&gz.finish().unwrap(), &base()).unwrap();
        assert_eq!(m.kind, SitemapKind::Index);
        // 50,000 URLs a file: the rest are counted.
        let many: String = (0..MAX_URLS + 7)
            .map(|i| format!("http://h.org/{i}\n"))
            .collect();
        let m = parse_sitemap(many.as_bytes(), &base()).unwrap();
        assert_eq!((m.entries.len(), m.dropped), (MAX_URLS, 7));
    }

    #[test]
    fn broken_and_oversize_files_keep_what_was_read_and_say_why() {
        // An entity before multi-byte text (a cut inside a character).
        let text = "<urlset><url><loc>http://h.org/a?b=1&amp;c=ééééééééé</loc></url><image:title>&ééééééé</image:title></urlset>";
        let m = parse_sitemap(text.as_bytes(), &base()).unwrap();
        assert_eq!(m.entries.len(), 1);
        // An image's loc is not the page's.
        let images = "<urlset><url><loc>http://h.org/post</loc><image:image><image:loc>http://h.org/a.jpg</image:loc></image:image>\
            <lastmod>2024-01-01</lastmod></url></urlset>";
        let m = parse_sitemap(images.as_bytes(), &base()).unwrap();
        assert_eq!(urls(&m), ["http://h.org/post"]);
        assert!(m.entries[0].lastmod_ms.is_some());
        let cut = "<urlset><url><loc>http://h.org/a</loc></url><url><loc>http://h.org/b</lo";
        let m = parse_sitemap(cut.as_bytes(), &base()).unwrap();
        assert_eq!(urls(&m), ["http://h.org/a"]);
        assert!(m.problem.unwrap().contains("cut short"));
        assert!(
            parse_sitemap(b"<html><body>hi</body></html>", &base())
                .unwrap_err()
                .contains("<html>")
        );
        assert!(parse_sitemap(b"<", &base()).is_err());
        // A gzip bomb stops at 50 MB of output.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(b"http://h.org/x\n").unwrap();
        gz.write_all(&vec![b' '; MAX_BYTES + 10]).unwrap();
        let bomb = gz.finish().unwrap();
        assert!(bomb.len() < 200_000);
        let m = parse_sitemap(&bomb, &base()).unwrap();
        assert_eq!(m.entries.len(), 1);
        assert!(m.problem.unwrap().contains("over 50 MB uncompressed"));
        let broken = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3];
        let m = parse_sitemap(&broken, &base());
        assert!(m.is_err() || m.unwrap().problem.unwrap().contains("gzip"));
    }

    #[test]
    fn w3c_datetimes() {
        assert_eq!(w3c_datetime_ms("1970-01-01"), Some(0));
        assert_eq!(w3c_datetime_ms("2000-03-01T00:00Z"), Some(951_868_800_000));
        assert_eq!(
            w3c_datetime_ms("1970-01-01T01:00:00-01:00"),
            Some(7_200_000)
        );
        assert_eq!(w3c_datetime_ms("1970-01-01T00:00:01.5Z"), Some(1_000));
        for bad in [
            "",
            "2024-13-01",
            "yesterday",
            "2024-05-17T25:00Z",
            "2024-05-17T10:30+0a:00",
            "100000000000000",
            "2024-05-17T10:30+99999999999999:00",
            "9999-12-31T23:00-14:00",
        ] {
            assert_eq!(w3c_datetime_ms(bad), None, "{bad}");
        }
    }
}
