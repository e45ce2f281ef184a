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
    pub canonical: Option<String>,
    /// `<meta name=robots content=noindex>` (or `none`).
    pub noindex: bool,
    /// `<meta name=robots content=nofollow>` (or `none`).
    pub nofollow: bool,
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

/// Parses decoded HTML fetched from `page_url`. `encoding` is the charset
/// the page was decoded from (link queries are encoded in it, as browsers
/// do); `agent` is the product token whose `<meta name=…>` robots
/// directives also apply.
pub fn parse_html(
    html: &str,
    page_url: &url::Url,
    encoding: &'static encoding_rs::Encoding,
    agent: &str,
) -> ParsedPage {
    let masked = mask_raw_text(html);
    let mut page = ParsedPage::default();
    let Ok(dom) = tl::parse(&masked, tl::ParserOptions::default()) else {
        return page;
    };
    let parser = dom.parser();
    let mut text = TextBuf::default();
    let mut raw_links: Vec<RawLink> = Vec::new();
    let mut base: Option<url::Url> = None;
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
                text.newline();
                continue;
            }
            Step::LeaveAnchor(i) => {
                raw_links[i].end = text.s.len();
                continue;
            }
        };
        let Some(node) = handle.get(parser) else {
            continue;
        };
        match node {
            tl::Node::Raw(raw) => text.push(&decode_entities(&raw.as_utf8_str())),
            tl::Node::Comment(_) => {}
            tl::Node::Tag(tag) => {
                let name = tag.name().as_utf8_str().to_ascii_lowercase();
                match name.as_str() {
                    "script" | "style" | "noscript" | "template" | "svg" => continue,
                    "title" => {
                        if page.title.is_empty() {
                            page.title = collapse(&decode_entities(&tag.inner_text(parser)));
                        }
                        continue;
                    }
                    "base" => {
                        if base.is_none()
                            && let Some(h) = attr(tag, "href")
                        {
                            base = page_url.join(h.trim()).ok();
                        }
                    }
                    "meta" => meta_robots(tag, agent, &mut page),
                    "link" => {
                        let rel = attr(tag, "rel").unwrap_or_default();
                        if page.canonical.is_none()
                            && rel
                                .split_ascii_whitespace()
                                .any(|r| r.eq_ignore_ascii_case("canonical"))
                            && let Some(h) = attr(tag, "href")
                        {
                            raw_links.push(RawLink {
                                href: format!("\0canonical{h}"),
                                nofollow: true,
                                start: 0,
                                end: 0,
                            });
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
                            let start = text.s.len();
                            raw_links.push(RawLink {
                                href: href.into_owned(),
                                nofollow,
                                start,
                                end: start,
                            });
                            stack.push(Step::LeaveAnchor(raw_links.len() - 1));
                        }
                    }
                    "br" | "hr" => text.newline(),
                    _ => {}
                }
                if is_block(&name) {
                    text.newline();
                    stack.push(Step::LeaveBlock);
                }
                for child in tag.children().top().as_slice().iter().rev() {
                    stack.push(Step::Enter(*child));
                }
            }
        }
    }

    let base = base.as_ref().unwrap_or(page_url);
    let out_enc = encoding.output_encoding();
    let encode_query = query_encoder(out_enc);
    let query: Option<model::QueryEncoder<'_>> =
        (out_enc != encoding_rs::UTF_8).then_some(&encode_query as model::QueryEncoder<'_>);
    page.text = text.s.trim().to_string();
    for raw in raw_links {
        if let Some(h) = raw.href.strip_prefix("\0canonical") {
            page.canonical = model::resolve(base, &decode_entities(h))
                .ok()
                .map(|u| u.as_str().to_string());
            continue;
        }
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

/// Encodes text in `enc` (for link queries on legacy-charset pages).
fn query_encoder(enc: &'static encoding_rs::Encoding) -> impl Fn(&str) -> Cow<'_, [u8]> {
    move |q| enc.encode(q).0
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

fn decode_entities(s: &str) -> Cow<'_, str> {
    if s.contains('&') {
        html_escape::decode_html_entities(s)
    } else {
        Cow::Borrowed(s)
    }
}

/// Whitespace collapsed to single spaces.
fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
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
        for c in raw.chars() {
            if c.is_whitespace() {
                self.space = true;
            } else {
                if self.space && !self.s.is_empty() && !self.s.ends_with('\n') {
                    self.s.push(' ');
                }
                self.space = false;
                self.s.push(c);
            }
        }
    }
    fn newline(&mut self) {
        if !self.s.is_empty() && !self.s.ends_with('\n') {
            self.s.push('\n');
        }
        self.space = false;
    }
}

/// Blanks the contents of `<script>` and `<style>` so that markup inside
/// JavaScript strings cannot create elements (tl has no raw-text elements).
fn mask_raw_text(html: &str) -> Cow<'_, str> {
    let lower = html.to_ascii_lowercase();
    let mut out: Option<Vec<u8>> = None;
    for tag in ["<script", "<style"] {
        let mut from = 0;
        let close = if tag == "<script" {
            "</script"
        } else {
            "</style"
        };
        while let Some(p) = lower[from..].find(tag) {
            let open = from + p;
            let Some(gt) = lower[open..].find('>') else {
                break;
            };
            let body_start = open + gt + 1;
            let body_end = lower[body_start..]
                .find(close)
                .map_or(lower.len(), |e| body_start + e);
            let buf = out.get_or_insert_with(|| html.as_bytes().to_vec());
            for b in &mut buf[body_start..body_end] {
                // Keep UTF-8 continuation bytes' positions valid by blanking
                // every byte: the result stays valid UTF-8 (all ASCII spaces).
                *b = b' ';
            }
            from = body_end;
        }
    }
    match out {
        Some(buf) => Cow::Owned(String::from_utf8(buf).unwrap_or_default()),
        None => Cow::Borrowed(html),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(html: &str) -> ParsedPage {
        parse_html(
            html,
            &url::Url::parse("http://h.org/dir/page.html").unwrap(),
            encoding_rs::UTF_8,
            "trawl",
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
