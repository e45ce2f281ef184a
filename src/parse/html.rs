//! One walk over the tl DOM that yields the title, the visible text (with
//! line breaks at block elements, which the denoising rules work on), and
//! every link with its anchor text and the text on either side.

use std::borrow::Cow;

use crate::model::{self, CanonicalUrl};

/// Bytes of visible text kept on each side of a link.
pub const CONTEXT_BYTES: usize = 50;

#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLink {
    pub url: CanonicalUrl,
    pub anchor: String,
    pub before: String,
    pub after: String,
    pub nofollow: bool,
}

#[derive(Debug, Default)]
pub struct ParsedPage {
    pub title: String,
    pub text: String,
    pub links: Vec<ParsedLink>,
    /// Links that were not http(s) or did not parse.
    pub skipped_links: u32,
    /// Links longer than [`model::MAX_URL_BYTES`] once resolved.
    pub too_long_links: u32,
    /// Links past the `max_links` the page was parsed with, not extracted.
    pub capped_links: u32,
    pub canonical: Option<String>,
    /// `<meta name=robots content=noindex>` (or `none`).
    pub noindex: bool,
    /// `<meta name=robots content=nofollow>` (or `none`).
    pub nofollow: bool,
}

impl ParsedPage {
    /// Roughly the heap bytes the page holds (its text and links), for the
    /// fetch budget while it waits to be recorded.
    pub fn heap_bytes(&self) -> usize {
        let links: usize = self
            .links
            .iter()
            .map(|l| {
                std::mem::size_of::<ParsedLink>()
                    + l.url.as_str().len()
                    + l.anchor.len()
                    + l.before.len()
                    + l.after.len()
            })
            .sum();
        self.title.len() + self.text.len() + links
    }
}

enum Step {
    Enter(tl::NodeHandle),
    LeaveBlock,
    LeaveAnchor(usize),
}

struct RawLink {
    href: String,
    nofollow: bool,
    start: usize,
    end: usize,
}

/// Links a page yields at most by default, as Heritrix's 6,000 outlinks.
pub const DEFAULT_MAX_LINKS: usize = 6_000;

/// Parses decoded HTML fetched from `page_url`. `encoding` is the charset
/// the page was decoded from (link queries are encoded in it, as browsers
/// do); `agent` is the product token whose `<meta name=…>` robots
/// directives also apply. Links after the first `max_links` are counted,
/// not extracted: a 10 MB page of bare anchors holds ~500,000, and keeping
/// them all took a crawl to 1 GB of memory for that one page.
pub fn parse_html(
    html: &str,
    page_url: &url::Url,
    encoding: &'static encoding_rs::Encoding,
    agent: &str,
    max_links: usize,
) -> ParsedPage {
    let masked = mask_raw_text(html);
    // Whether a title or textarea had a `<` masked: only then does text
    // need unmasking (one scan a page instead of one a text node).
    let rcdata =
        matches!(masked, Cow::Owned(_)) && memchr::memchr(RCDATA_LT, masked.as_bytes()).is_some();
    let mut walk = Walk {
        rcdata,
        page: ParsedPage::default(),
        text: TextBuf::default(),
        raw_links: Vec::new(),
        base: None,
        canonical: None,
        page_url,
        agent,
        max_links,
    };
    for src in dom_chunks(&masked) {
        if let Ok(dom) = tl::parse(src, tl::ParserOptions::default()) {
            walk.dom(&dom, src);
        }
    }
    let Walk {
        mut page,
        text,
        raw_links,
        base,
        canonical,
        ..
    } = walk;

    let base = base.as_ref().unwrap_or(page_url);
    let out_enc = encoding.output_encoding();
    let encode_query = query_encoder(out_enc);
    let query: Option<model::QueryEncoder<'_>> =
        (out_enc != encoding_rs::UTF_8).then_some(&encode_query as model::QueryEncoder<'_>);
    page.text = text.s.trim().to_string();
    page.canonical = canonical
        .and_then(|h| model::resolve(base, &decode_entities(&h)).ok())
        .map(|u| u.as_str().to_string());
    for raw in raw_links {
        let href = decode_entities(&raw.href);
        let href = href.trim();
        if href.is_empty() || href.starts_with('#') || has_skipped_scheme(href) {
            page.skipped_links += 1;
            continue;
        }
        match model::resolve_encoded(base, href, query) {
            Ok(url) => page.links.push(ParsedLink {
                url,
                anchor: collapse(&text.s[raw.start..raw.end.max(raw.start)]),
                before: tail(&text.s[..raw.start], CONTEXT_BYTES),
                after: head(&text.s[raw.end.max(raw.start)..], CONTEXT_BYTES),
                nofollow: raw.nofollow,
            }),
            Err(model::UrlError::TooLong(_)) => page.too_long_links += 1,
            Err(_) => page.skipped_links += 1,
        }
    }
    page
}

/// Pages above this are parsed as several DOMs of about this size, cut
/// before a `<`: tl's DOM takes ~40 bytes per byte of tag-dense HTML, so a
/// 10 MB page took ~400 MB in one piece, and a 1 MiB piece ~40 MB. An
/// element open across a cut loses what follows it in the next piece (its
/// anchor text, say), which only pages this large pay.
const DOM_CHUNK_BYTES: usize = 256 << 10;

/// `html` in pieces of about [`DOM_CHUNK_BYTES`], each starting at a `<`
/// (so on a char boundary); one piece when it is smaller.
fn dom_chunks(html: &str) -> impl Iterator<Item = &str> {
    let mut rest = html;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = if rest.len() <= DOM_CHUNK_BYTES {
            rest.len()
        } else {
            memchr::memchr(b'<', &rest.as_bytes()[DOM_CHUNK_BYTES..])
                .map_or(rest.len(), |p| DOM_CHUNK_BYTES + p)
        };
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

/// What the tree walk fills in, across the pieces of a page.
struct Walk<'a> {
    page: ParsedPage,
    text: TextBuf,
    raw_links: Vec<RawLink>,
    base: Option<url::Url>,
    /// `<` was masked in a title or textarea (see [`RCDATA_LT`]).
    rcdata: bool,
    /// The first `<link rel=canonical>`'s href (not a link: it takes no
    /// share of `max_links`).
    canonical: Option<String>,
    page_url: &'a url::Url,
    agent: &'a str,
    max_links: usize,
}

impl Walk<'_> {
    /// Records a link starting at the current text position, unless the
    /// page has given `max_links` already (then it is only counted).
    fn add_link(&mut self, href: String, nofollow: bool) -> Option<usize> {
        if self.raw_links.len() >= self.max_links {
            self.page.capped_links = self.page.capped_links.saturating_add(1);
            return None;
        }
        let start = self.text.s.len();
        self.raw_links.push(RawLink {
            href,
            nofollow,
            start,
            end: start,
        });
        Some(self.raw_links.len() - 1)
    }

    /// Walks `dom`, parsed from `src`, in document order.
    fn dom(&mut self, dom: &tl::VDom<'_>, src: &str) {
        let parser = dom.parser();
        let mut stack: Vec<Step> = dom
            .children()
            .iter()
            .rev()
            .map(|h| Step::Enter(*h))
            .collect();
        while let Some(step) = stack.pop() {
            let handle = match step {
                Step::Enter(h) => h,
                Step::LeaveBlock => {
                    self.text.newline();
                    continue;
                }
                Step::LeaveAnchor(i) => {
                    self.raw_links[i].end = self.text.s.len();
                    continue;
                }
            };
            let Some(node) = handle.get(parser) else {
                continue;
            };
            match node {
                tl::Node::Raw(raw) => {
                    let raw = utf8(src, raw);
                    let t = decode_entities(&raw);
                    if self.rcdata {
                        self.text.push(&unmask_rcdata(&t));
                    } else {
                        self.text.push(&t);
                    }
                }
                tl::Node::Comment(_) => {}
                tl::Node::Tag(tag) => {
                    let mut lower = [0u8; 16];
                    let name = tag_name(tag.name().as_bytes(), &mut lower);
                    match name {
                        // A crawler runs no scripts, so <noscript> is markup
                        // whose links count; these are not.
                        "script" | "style" | "template" | "svg" => continue,
                        "title" => {
                            // Raw text (masked): `<title><div>…` is its title.
                            if self.page.title.is_empty() {
                                let t = tag.inner_text(parser);
                                self.page.title = collapse(&unmask_rcdata(&decode_entities(&t)));
                            }
                            continue;
                        }
                        "base" => {
                            if self.base.is_none()
                                && let Some(h) = attr(tag, "href")
                            {
                                self.base = self.page_url.join(h.trim()).ok();
                            }
                        }
                        "meta" => {
                            meta_robots(tag, self.agent, &mut self.page);
                            if let Some(target) = meta_refresh(tag) {
                                self.add_link(target, false);
                            }
                        }
                        "link" => {
                            let rel = attr(tag, "rel").unwrap_or_default();
                            if self.canonical.is_none()
                                && rel
                                    .split_ascii_whitespace()
                                    .any(|r| r.eq_ignore_ascii_case("canonical"))
                                && let Some(h) = attr(tag, "href")
                            {
                                self.canonical = Some(h.into_owned());
                            }
                        }
                        "a" | "area" | "frame" | "iframe" => {
                            let href = if name.ends_with("frame") {
                                attr(tag, "src")
                            } else {
                                attr(tag, "href")
                            };
                            if let Some(href) = href {
                                let nofollow = attr(tag, "rel").is_some_and(|r| {
                                    r.split_ascii_whitespace()
                                        .any(|t| t.eq_ignore_ascii_case("nofollow"))
                                });
                                if let Some(i) = self.add_link(href.into_owned(), nofollow) {
                                    stack.push(Step::LeaveAnchor(i));
                                }
                            }
                        }
                        "br" | "hr" => self.text.newline(),
                        _ => {}
                    }
                    if is_block(name) {
                        self.text.newline();
                        stack.push(Step::LeaveBlock);
                    }
                    for child in tag.children().top().as_slice().iter().rev() {
                        stack.push(Step::Enter(*child));
                    }
                }
            }
        }
    }
}

/// Encodes text in `enc` (for link queries on legacy-charset pages).
fn query_encoder(enc: &'static encoding_rs::Encoding) -> impl Fn(&str) -> Cow<'_, [u8]> {
    move |q| enc.encode(q).0
}

/// The target of `<meta http-equiv=refresh content="5; url=…">`, which
/// browsers follow like a link.
fn meta_refresh(tag: &tl::HTMLTag) -> Option<String> {
    let equiv = attr(tag, "http-equiv")?;
    if !equiv.trim().eq_ignore_ascii_case("refresh") {
        return None;
    }
    let content = attr(tag, "content")?;
    // "N; url=X", "N,URL=X", "N; X": the part after the delay's separator.
    let (_, rest) = content.split_once([';', ','])?;
    let rest = rest.trim_start();
    let target = match rest.get(..3) {
        Some(u) if u.eq_ignore_ascii_case("url") => {
            let after = rest[3..].trim_start();
            after.strip_prefix('=').unwrap_or(after).trim_start()
        }
        _ => rest,
    };
    let target = match target.chars().next() {
        Some(q @ ('"' | '\'')) => target[1..].split(q).next().unwrap_or(""),
        _ => target,
    };
    let target = target.trim();
    (!target.is_empty()).then(|| target.to_string())
}

fn meta_robots(tag: &tl::HTMLTag, agent: &str, page: &mut ParsedPage) {
    let Some(name) = attr(tag, "name") else {
        return;
    };
    let name = name.trim();
    if !(name.eq_ignore_ascii_case("robots")
        || (!agent.is_empty() && name.eq_ignore_ascii_case(agent)))
    {
        return;
    }
    let content = attr(tag, "content")
        .unwrap_or_default()
        .to_ascii_lowercase();
    for d in content.split([',', ' ']).map(str::trim) {
        match d {
            "noindex" => page.noindex = true,
            "nofollow" => page.nofollow = true,
            "none" => (page.noindex, page.nofollow) = (true, true),
            _ => {}
        }
    }
}

/// An attribute's value, the name matched case-insensitively.
fn attr<'t>(tag: &'t tl::HTMLTag, name: &str) -> Option<Cow<'t, str>> {
    tag.attributes()
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v)
}

fn has_skipped_scheme(href: &str) -> bool {
    let lower: String = href
        .chars()
        .take(11)
        .filter(|c| !c.is_ascii_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    ["javascript:", "mailto:", "data:", "tel:"]
        .iter()
        .any(|s| lower.starts_with(s))
}

fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "dd"
            | "details"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "li"
            | "main"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "section"
            | "table"
            | "td"
            | "th"
            | "tr"
            | "ul"
            | "option"
            | "caption"
    )
}

/// tl's bytes as text. tl parses `src` and hands out slices of it cut at
/// ASCII delimiters, so a slice is found in `src` by its address and taken
/// from there: `str::get` checks only its two ends are char boundaries,
/// where `from_utf8` re-validated every byte of the page's text (4 % of a
/// crawl's CPU). Bytes from anywhere else are validated as before.
fn utf8<'a>(src: &'a str, b: &'a tl::Bytes<'_>) -> Cow<'a, str> {
    let bytes = b.as_bytes();
    let start = (bytes.as_ptr() as usize).wrapping_sub(src.as_ptr() as usize);
    if let Some(s) = start
        .checked_add(bytes.len())
        .and_then(|end| src.get(start..end))
    {
        return Cow::Borrowed(s);
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A tag name in lower case, in `buf` (no allocation a tag); names longer
/// than any this parser acts on come back empty.
fn tag_name<'b>(raw: &[u8], buf: &'b mut [u8; 16]) -> &'b str {
    let Some(buf) = buf.get_mut(..raw.len()) else {
        return "";
    };
    for (d, s) in buf.iter_mut().zip(raw) {
        *d = s.to_ascii_lowercase();
    }
    std::str::from_utf8(buf).unwrap_or("")
}

fn decode_entities(s: &str) -> Cow<'_, str> {
    if s.contains('&') {
        html_escape::decode_html_entities(s)
    } else {
        Cow::Borrowed(s)
    }
}

/// Whitespace collapsed to single spaces.
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// The last `n` bytes of `s` (on a char boundary), trimmed.
fn tail(s: &str, n: usize) -> String {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    collapse(&s[start..])
}

/// The first `n` bytes of `s` (on a char boundary), trimmed.
fn head(s: &str, n: usize) -> String {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    collapse(&s[..end])
}

/// Visible text with whitespace collapsed and a newline per block.
#[derive(Default)]
struct TextBuf {
    s: String,
    space: bool,
}

impl TextBuf {
    fn push(&mut self, raw: &str) {
        // A word at a time: one copy a word instead of a push a char.
        let mut rest = raw;
        loop {
            let word = rest.trim_start();
            if word.len() != rest.len() {
                self.space = true;
            }
            if word.is_empty() {
                return;
            }
            let end = word.find(char::is_whitespace).unwrap_or(word.len());
            if self.space && !self.s.is_empty() && !self.s.ends_with('\n') {
                self.s.push(' ');
            }
            self.space = false;
            self.s.push_str(&word[..end]);
            rest = &word[end..];
        }
    }
    fn newline(&mut self) {
        if !self.s.is_empty() && !self.s.ends_with('\n') {
            self.s.push('\n');
        }
        self.space = false;
    }
}

/// Stands for `<` inside `<title>` and `<textarea>` while tl parses the
/// page (an ASCII control byte, so offsets and UTF-8 validity hold).
const RCDATA_LT: u8 = 0x01;

/// Text with [`RCDATA_LT`] turned back into `<`.
fn unmask_rcdata(s: &str) -> Cow<'_, str> {
    if s.as_bytes().contains(&RCDATA_LT) {
        Cow::Owned(s.replace(RCDATA_LT as char, "<"))
    } else {
        Cow::Borrowed(s)
    }
}

/// Blanks the contents of `<script>` and `<style>` so that markup inside
/// JavaScript strings cannot create elements (tl has no raw-text elements),
/// masks the `<`s inside `<title>` and `<textarea>` (text, not markup),
/// and lower-cases tag names: tl closes an element only on a closing tag of
/// the same case, so `<SCRIPT>…</script>` left the script open and the rest
/// of the page, links and all, inside it. Walks the `<`s with memchr and
/// copies the page only when something changes.
fn mask_raw_text(html: &str) -> Cow<'_, str> {
    let bytes = html.as_bytes();
    let at = |p: usize, name: &[u8]| {
        bytes
            .get(p..p + name.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(name))
    };
    let mut out: Option<Vec<u8>> = None;
    let mut from = 0;
    while let Some(p) = memchr::memchr(b'<', &bytes[from..]).map(|p| from + p) {
        let name_start = p + 1 + usize::from(bytes.get(p + 1) == Some(&b'/'));
        let name_len = bytes[name_start.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let name = name_start..name_start + name_len;
        if bytes[name.clone()].iter().any(u8::is_ascii_uppercase) {
            out.get_or_insert_with(|| bytes.to_vec())[name.clone()].make_ascii_lowercase();
        }
        let opening = bytes.get(p + 1) != Some(&b'/');
        let (close, blank): (&[u8], bool) = if at(p + 1, b"script") {
            (b"/script", true)
        } else if at(p + 1, b"style") {
            (b"/style", true)
        } else if opening && bytes[name.clone()].eq_ignore_ascii_case(b"title") {
            (b"/title", false)
        } else if opening && bytes[name.clone()].eq_ignore_ascii_case(b"textarea") {
            (b"/textarea", false)
        } else {
            from = name.end.max(p + 1);
            continue;
        };
        let Some(gt) = memchr::memchr(b'>', &bytes[p..]) else {
            break;
        };
        let body_start = p + gt + 1;
        let body_end = memchr::memchr_iter(b'<', &bytes[body_start..])
            .map(|e| body_start + e)
            .find(|&e| {
                at(e + 1, close)
                    && (blank
                        || !bytes
                            .get(e + 1 + close.len())
                            .is_some_and(u8::is_ascii_alphanumeric))
            })
            .unwrap_or(bytes.len());
        let body = body_start..body_end;
        if blank {
            // Every byte becomes an ASCII space (and names stay ASCII), so
            // the result stays valid UTF-8 and keeps every offset.
            out.get_or_insert_with(|| bytes.to_vec())[body].fill(b' ');
        } else if memchr::memchr(b'<', &bytes[body.clone()]).is_some() {
            // Title and textarea hold text (entities still count): a `<`
            // there starts no tag, so it is masked and the walk restores it.
            let buf = out.get_or_insert_with(|| bytes.to_vec());
            for b in &mut buf[body] {
                if *b == b'<' {
                    *b = RCDATA_LT;
                }
            }
        }
        from = body_end;
    }
    match out {
        // SAFETY: `buf` is a copy of a `&str` in which only ASCII bytes were
        // lower-cased or replaced by other ASCII bytes (spaces, RCDATA_LT),
        // and ranges were filled with ASCII spaces; each range
        // starts after a '>' and ends at a '<' or the end, so on char
        // boundaries. The result is valid UTF-8 without re-checking every
        // byte of the page (most real pages have a script).
        Some(buf) => {
            debug_assert!(std::str::from_utf8(&buf).is_ok());
            Cow::Owned(unsafe { String::from_utf8_unchecked(buf) })
        }
        None => Cow::Borrowed(html),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_pages_parse_in_pieces_with_nothing_lost_between() {
        let para = "<p>filler words 中文 here</p>\n";
        let mut html = String::from("<html><head><title>big page</title></head><body>");
        for i in 0..2_500 {
            html.push_str(&para.repeat(40));
            html.push_str(&format!("<a href=/l{i}>link {i}</a>"));
        }
        html.push_str("<p>the last words</p></body></html>");
        assert!(html.len() > 3 * DOM_CHUNK_BYTES);
        let pieces: Vec<&str> = dom_chunks(&html).collect();
        assert!(pieces.len() >= 3);
        assert_eq!(pieces.concat(), html);
        assert!(pieces[1..].iter().all(|p| p.starts_with('<')));
        let p = parse_html(
            &html,
            &url::Url::parse("http://h.org/").unwrap(),
            encoding_rs::UTF_8,
            "trawl",
            DEFAULT_MAX_LINKS,
        );
        assert_eq!(p.title, "big page");
        assert_eq!(p.links.len(), 2_500);
        assert_eq!(p.links[2_499].url.as_str(), "http://h.org/l2499");
        assert_eq!(p.links[2_499].anchor, "link 2499");
        assert!(
            p.text.ends_with("the last words"),
            "{}",
            &p.text[p.text.len() - 40..]
        );
        assert_eq!(dom_chunks("").count(), 0);
        assert_eq!(
            dom_chunks("<p>small</p>").collect::<Vec<_>>(),
            ["<p>small</p>"]
        );
    }

    fn parse(html: &str) -> ParsedPage {
        parse_html(
            html,
            &url::Url::parse("http://h.org/dir/page.html").unwrap(),
            encoding_rs::UTF_8,
            "trawl",
            DEFAULT_MAX_LINKS,
        )
    }

    #[test]
    fn title_text_links_and_context() {
        let p = parse(
            "<html><head><title> A &amp; B </title><script>var s='<a href=/js>x</a>';</script></head>\
             <body><p>Intro text before the link</p><P>see <A HREF=/x/y.html>the &quot;page&quot;</A> after it</P>\
             <a href='mailto:a@b'>m</a><a href='javascript:void(0)'>j</a><a href='#top'>t</a>\
             <a href=\"other.html#frag\" rel=\"NoFollow\">o</a></body></html>",
        );
        assert_eq!(p.title, "A & B");
        assert_eq!(
            p.text,
            "Intro text before the link\nsee the \"page\" after it\nmjto"
        );
        assert_eq!(p.links.len(), 2);
        assert_eq!(p.links[0].url.as_str(), "http://h.org/x/y.html");
        assert_eq!(p.links[0].anchor, "the \"page\"");
        assert_eq!(p.links[0].before, "Intro text before the link see");
        assert!(p.links[0].after.starts_with("after it"));
        assert_eq!(p.links[1].url.as_str(), "http://h.org/dir/other.html");
        assert!(p.links[1].nofollow && !p.links[0].nofollow);
        assert_eq!(p.skipped_links, 3);
    }

    #[test]
    fn script_and_style_bodies_are_masked_and_tag_names_lowered() {
        assert_eq!(
            mask_raw_text(
                "<SCRIPT a=1>'<a>'</ScRiPt><P>x</p><sTyle>é</STYLE><scriptx>y</scriptx>é"
            ),
            "<script a=1>     </script><p>x</p><style>  </style><scriptx> </scriptx>é"
        );
        assert_eq!(mask_raw_text("<p>é</p>"), Cow::Borrowed("<p>é</p>"));
        assert_eq!(
            mask_raw_text("<!DOCTYPE html><a HREF=X>"),
            Cow::Borrowed("<!DOCTYPE html><a HREF=X>")
        );
        assert_eq!(mask_raw_text("a <"), Cow::Borrowed("a <"));
        assert_eq!(mask_raw_text("<DIV/>"), "<div/>");
        let unclosed = "'<a>' never closed";
        assert_eq!(
            mask_raw_text(&format!("<p><script>{unclosed}")),
            format!("<p><script>{}", " ".repeat(unclosed.len()))
        );
        // tl closes an element only on a closing tag of the same case.
        let p = parse(
            "<SCRIPT type=x>a='<a href=/js1>'</script><p>one <b>two</b>\t three</P>\
             <style>p{} <a href=/css></STYLE><Style>x</stYle><A href=/ok>k</a>\
             <script>'<a href=/js2>' never closed",
        );
        let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(urls, vec!["http://h.org/ok"]);
        assert_eq!(p.text, "one two three\nk");
    }

    #[test]
    fn base_href_meta_robots_and_canonical() {
        let p = parse(
            "<head><base href='http://other.org/b/'><meta name=ROBOTS content='NOINDEX, nofollow'>\
             <link rel=canonical href='/canon'></head><a href=c.html>c</a>",
        );
        assert_eq!(p.links[0].url.as_str(), "http://other.org/b/c.html");
        assert!(p.noindex && p.nofollow);
        assert_eq!(p.canonical.as_deref(), Some("http://other.org/canon"));
    }

    #[test]
    fn title_and_textarea_are_text_and_noscript_is_markup() {
        // `<title>` is raw text: its markup is its title, and the body
        // after it keeps its text.
        let p = parse(
            "<html><head><title><div><div>Not a div</title></head>\
             <body><p>body text <a href=/real>real</a></p></body></html>",
        );
        assert_eq!(p.title, "<div><div>Not a div");
        assert_eq!(p.text, "body text real");
        // A textarea's markup is its text, not links.
        let p = parse(
            "<TITLE>a &lt; b</TITLE><textarea><a href=/fake>fake</a> &amp; x</textarea>\
             <titled>t</titled><noscript><a href=/ns>no script</a></noscript>",
        );
        assert_eq!(p.title, "a < b");
        let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(urls, ["http://h.org/ns"]);
        assert!(
            p.text.starts_with("<a href=/fake>fake</a> & x"),
            "{}",
            p.text
        );
        assert!(p.text.contains("no script"));
        // Unclosed: the rest of the page is the title, as in a browser.
        assert_eq!(parse("<title>a <b>c").title, "a <b>c");
    }

    #[test]
    fn the_first_canonical_wins_and_takes_no_link_slot() {
        let html = "<link rel=canonical href=/first><link rel=canonical href=/second>\
                    <a href=/a>a</a><a href=/b>b</a>";
        let p = parse_html(
            html,
            &url::Url::parse("http://h.org/").unwrap(),
            encoding_rs::UTF_8,
            "trawl",
            2,
        );
        assert_eq!(p.canonical.as_deref(), Some("http://h.org/first"));
        assert_eq!(p.links.len(), 2);
        assert_eq!(p.capped_links, 0);
    }

    #[test]
    fn meta_refresh_is_a_link() {
        for (content, target) in [
            ("0; url=/next", "http://h.org/next"),
            ("5;URL='/q?x=1'", "http://h.org/q?x=1"),
            ("3, /plain", "http://h.org/plain"),
        ] {
            let p = parse(&format!("<meta http-equiv=Refresh content=\"{content}\">"));
            let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
            assert_eq!(urls, [target], "{content}");
        }
        assert!(
            parse("<meta http-equiv=refresh content=5>")
                .links
                .is_empty()
        );
    }

    #[test]
    fn deep_nesting_and_garbage_do_not_panic() {
        let deep = "<div>".repeat(100_000) + "x";
        assert_eq!(parse(&deep).text, "x");
        parse("<a href='http://[::1'>bad</a><<<>>>&#xFFFFFF;<a href=\u{0}>");
    }

    #[test]
    fn query_is_encoded_in_the_document_charset() {
        let base = url::Url::parse("http://h.org/").unwrap();
        let p = parse_html(
            "<a href='/s/中?q=中文'>x</a>",
            &base,
            encoding_rs::GBK,
            "trawl",
            DEFAULT_MAX_LINKS,
        );
        assert_eq!(
            p.links[0].url.as_str(),
            "http://h.org/s/%E4%B8%AD?q=%D6%D0%CE%C4"
        );
        let p = parse_html(
            "<a href='/s?q=中文'>x</a>",
            &base,
            encoding_rs::UTF_8,
            "trawl",
            DEFAULT_MAX_LINKS,
        );
        assert_eq!(
            p.links[0].url.as_str(),
            "http://h.org/s?q=%E4%B8%AD%E6%96%87"
        );
    }

    #[test]
    fn cjk_context_is_cut_on_char_boundaries() {
        let p = parse(
            "<p>研究生论文答辩安排研究生论文答辩安排研究生论文答辩安排<a href=/x>体育</a>篮球比赛通知篮球比赛通知篮球比赛通知</p>",
        );
        let l = &p.links[0];
        assert_eq!(l.anchor, "体育");
        assert!(l.before.len() <= CONTEXT_BYTES && l.before.ends_with("安排"));
        assert!(l.after.len() <= CONTEXT_BYTES && l.after.starts_with("篮球"));
    }
}
