//! The tokenizer the page walk reads: tags, their attributes and the text
//! between them, handed to a [`Sink`] as they are found — no tree, no
//! node or attribute allocated. Its grammar is astral-tl 0.8's, quirks and
//! all (`<a href=x/ >` is no tag, `</p >` closes nothing, `<![CDATA[` is
//! text), so pages parse as they did when the walk read tl's DOM; that DOM
//! cost ~40 bytes a byte of markup and half the parse time (issue 37).
//! The elements a closing tag ends are the walk's business (see
//! [`VOID_TAGS`]).

use std::ops::Range;

/// Elements that hold no content (a closing tag is not looked for).
pub(super) const VOID_TAGS: [&str; 15] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param",
    "source", "track", "wbr",
];

/// What a page's tokens are handed to, in document order.
pub(super) trait Sink<'a> {
    /// Text between tags, as written (entities not decoded).
    fn text(&mut self, raw: &str);
    /// An opening tag (`self_closing`: written `<x/>`).
    fn open(&mut self, tag: &Tag<'a, '_>, self_closing: bool);
    /// A closing tag, its name as written up to the `>`.
    fn close(&mut self, name: &'a str);
}

/// An opening tag: its name as written and its attributes.
pub(super) struct Tag<'a, 's> {
    pub name: &'a str,
    src: &'a str,
    attrs: &'s [Attr],
}

/// An attribute's name and value as byte ranges of the page.
type Attr = (Range<usize>, Option<Range<usize>>);

/// The attributes the walk reads; only the first of each is kept, so a
/// tag of a million repeated attributes holds nothing (tl kept one entry
/// a name, and [`Tag::attr`] answers for these alone).
const READ_ATTRS: [&str; 11] = [
    "href",
    "src",
    "rel",
    "name",
    "content",
    "property",
    "itemprop",
    "http-equiv",
    "datetime",
    "class",
    "id",
];

impl<'a> Tag<'a, '_> {
    /// The value of the first attribute named `name` (any case, one of
    /// [`READ_ATTRS`]), as written; None when it is absent or has no value.
    pub fn attr(&self, name: &str) -> Option<&'a str> {
        debug_assert!(READ_ATTRS.contains(&name), "{name} is not read");
        let (_, value) = self
            .attrs
            .iter()
            .find(|(k, _)| self.src.as_bytes()[k.clone()].eq_ignore_ascii_case(name.as_bytes()))?;
        value.clone().map(|v| slice(self.src, v))
    }
}

/// Tokenizes `src` into `sink`.
pub(super) fn scan<'a>(src: &'a str, sink: &mut impl Sink<'a>) {
    let b = src.as_bytes();
    let mut attrs = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'<' {
            i = tag(src, i, &mut attrs, sink);
        } else {
            let end = memchr::memchr(b'<', &b[i..]).map_or(b.len(), |p| i + p);
            match src.get(i..end) {
                Some(text) => sink.text(text),
                None => sink.text(&String::from_utf8_lossy(&b[i..end])),
            }
            i = end;
        }
    }
}

/// `src[r]`: every range the scanner cuts ends at an ASCII delimiter or
/// the end, so on char boundaries (else nothing rather than a panic).
fn slice(src: &str, r: Range<usize>) -> &str {
    src.get(r).unwrap_or("")
}

/// Past the spaces and newlines at `p` (tl skips no other whitespace).
fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while matches!(b.get(p), Some(b' ' | b'\n')) {
        p += 1;
    }
    p
}

/// The end of the name starting at `p`, or None when none does.
fn ident_end(b: &[u8], p: usize) -> Option<usize> {
    let n = b[p.min(b.len())..]
        .iter()
        .take_while(|&&c| {
            c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b':' | b'+' | b'/')
        })
        .count();
    (n > 0).then_some(p + n)
}

/// The markup at `start` (a `<`): hands a tag to `sink` and returns where
/// scanning goes on (where tl stopped when the markup was no tag).
fn tag<'a>(src: &'a str, start: usize, attrs: &mut Vec<Attr>, sink: &mut impl Sink<'a>) -> usize {
    let b = src.as_bytes();
    let p = skip_ws(b, start + 1);
    match b.get(p) {
        None => return p,
        Some(b'/') => {
            let name_end = memchr::memchr(b'>', &b[p + 1..]).map_or(b.len(), |e| p + 1 + e);
            sink.close(slice(src, p + 1..name_end));
            return (name_end + 1).min(b.len());
        }
        Some(b'!') => return declaration(b, p + 1),
        Some(_) => {}
    }
    let name_start = p;
    let Some(name_end) = ident_end(b, p) else {
        return p;
    };
    attrs.clear();
    let Some(mut p) = attributes(b, name_end, attrs) else {
        return b.len();
    };
    let self_closing = b.get(p) == Some(&b'/');
    p += usize::from(self_closing);
    if b.get(p) != Some(&b'>') {
        return p;
    }
    let tag = Tag {
        name: slice(src, name_start..name_end),
        src,
        attrs,
    };
    sink.open(&tag, self_closing);
    p + 1
}

/// Reads the attributes from `p` into `attrs`; returns the `/` or `>`
/// they end at, or None at the end of the page (no tag then).
fn attributes(b: &[u8], mut p: usize, attrs: &mut Vec<Attr>) -> Option<usize> {
    loop {
        p = skip_ws(b, p);
        let c = *b.get(p)?;
        if c == b'/' || c == b'>' {
            return Some(p);
        }
        let Some(key_end) = ident_end(b, p) else {
            p += 1;
            continue;
        };
        let key = p..key_end;
        let read = READ_ATTRS
            .iter()
            .any(|n| b[key.clone()].eq_ignore_ascii_case(n.as_bytes()))
            && !attrs
                .iter()
                .any(|(k, _)| b[k.clone()].eq_ignore_ascii_case(&b[key.clone()]));
        p = skip_ws(b, key_end);
        if b.get(p) != Some(&b'=') {
            if read {
                attrs.push((key, None));
            }
            continue;
        }
        p = skip_ws(b, p + 1);
        let value = match b.get(p) {
            Some(&q @ (b'"' | b'\'')) => {
                let from = p + 1;
                from..memchr::memchr(q, &b[from..]).map_or(b.len(), |e| from + e)
            }
            _ => p..memchr::memchr3(b' ', b'\n', b'>', &b[p..]).map_or(b.len(), |e| p + e),
        };
        p = value.end;
        if read {
            attrs.push((key, Some(value)));
        }
        // Past the closing quote or the space after the value.
        let c = *b.get(p)?;
        if c != b'/' && c != b'>' {
            p += 1;
        }
    }
}

/// `<!` markup from `p` (past the `!`): a comment, a doctype, or the
/// start of text (`<![CDATA[x]]>` reads as the text `[CDATA[x]]>`).
fn declaration(b: &[u8], p: usize) -> usize {
    if b[p.min(b.len())..].starts_with(b"--") {
        let mut q = p;
        while q < b.len() {
            if b[q..].starts_with(b"--") {
                q += 2;
                if b.get(q) == Some(&b'>') {
                    return q + 1;
                }
            }
            q += 1;
        }
        return b.len();
    }
    let Some(word_end) = ident_end(b, p) else {
        return p;
    };
    let q = skip_ws(b, word_end);
    if !b[p..word_end].eq_ignore_ascii_case(b"doctype") {
        return q;
    }
    let Some(kind_end) = ident_end(b, q) else {
        return q;
    };
    (skip_ws(b, kind_end) + 1).min(b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens of a page, written out.
    #[derive(Default)]
    struct Tokens(Vec<String>);

    impl<'a> Sink<'a> for Tokens {
        fn text(&mut self, raw: &str) {
            self.0.push(format!("text {raw:?}"));
        }
        fn open(&mut self, tag: &Tag<'a, '_>, self_closing: bool) {
            let slash = if self_closing { "/" } else { "" };
            let href = tag.attr("href").map(|h| format!(" href={h:?}"));
            self.0
                .push(format!("<{}{}{slash}>", tag.name, href.unwrap_or_default()));
        }
        fn close(&mut self, name: &'a str) {
            self.0.push(format!("</{name}>"));
        }
    }

    fn tokens(src: &str) -> Vec<String> {
        let mut t = Tokens::default();
        scan(src, &mut t);
        t.0
    }

    #[test]
    fn tags_attributes_and_text_come_in_document_order() {
        assert_eq!(
            tokens("<p>a <A HREF='/x' href=/y>b</a><br/>c</p >"),
            [
                "<p>",
                "text \"a \"",
                "<A href=\"/x\">",
                "text \"b\"",
                "</a>",
                "<br/>",
                "text \"c\"",
                "</p >"
            ]
        );
        // Unquoted values end at a space, a newline or `>`; valueless
        // attributes have none; the first of a name wins.
        let page = "<a download href=/p/q.html?x=1 rel=nofollow REL=x>";
        let mut attrs = Vec::new();
        let end = attributes(page.as_bytes(), 2, &mut attrs).unwrap();
        assert_eq!(&page[end..], ">");
        let tag = Tag {
            name: "a",
            src: page,
            attrs: &attrs,
        };
        assert_eq!(tag.attr("href"), Some("/p/q.html?x=1"));
        assert_eq!(tag.attr("REL"), Some("nofollow"));
        assert_eq!(tag.attr("content"), None);
        // Only the attributes the walk reads are kept, the first of each.
        assert_eq!(attrs.len(), 2);
        let many = format!("<a {}href=/z>", "href=/a b ".repeat(100_000));
        attrs.clear();
        attributes(many.as_bytes(), 2, &mut attrs).unwrap();
        assert_eq!(attrs.len(), 1);
    }

    #[test]
    fn markup_tl_did_not_read_as_a_tag_reads_as_it_did() {
        // A slash then a space after a value: no tag, the rest is text.
        assert_eq!(tokens("<a href=\"x\"/ >t"), ["text \" >t\""]);
        // CDATA and other declarations are text after the word.
        assert_eq!(tokens("<![CDATA[x]]>"), ["text \"[CDATA[x]]>\""]);
        assert_eq!(tokens("<!DOCTYPE html><p>"), ["<p>"]);
        // A comment ends at the first `-->` after its opening.
        assert_eq!(tokens("<!-- a -- b -->c"), ["text \"c\""]);
        assert_eq!(tokens("<!-- never closed <a href=x>"), Vec::<String>::new());
        // A `<` before no name is dropped, and a tag the page ends inside
        // is none.
        assert_eq!(tokens("1 <= 2"), ["text \"1 \"", "text \"= 2\""]);
        assert_eq!(tokens("x <a href=y"), ["text \"x \""]);
        assert_eq!(tokens("<"), Vec::<String>::new());
        assert_eq!(tokens("</"), ["</>"]);
    }

    #[test]
    fn non_ascii_text_and_values_are_cut_on_char_boundaries() {
        assert_eq!(
            tokens("中<a href=\"/é\" é>文</a>"),
            ["text \"中\"", "<a href=\"/é\">", "text \"文\"", "</a>"]
        );
        // A byte the attribute loop steps over inside a char cuts nothing.
        assert_eq!(tokens("<b ééé>x"), ["<b>", "text \"x\""]);
    }
}
