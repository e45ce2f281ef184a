//! A page's HTML as Markdown for text corpora: headings, paragraphs,
//! lists, preformatted blocks and links kept where the tokenizer sees
//! them, everything else as text. One pass over the same tokens the walk
//! reads (`scan`), elements on a stack (never recursion), output linear in
//! the input. Lines whose text is in `drop` (what denoising removed) are
//! left out.

use std::collections::HashSet;

use super::mask::{mask_raw_text, unmask_rcdata};
use super::scan::{Sink, Tag, VOID_TAGS, scan};
use super::text::decode_entities;
use super::walk::dom_chunks;

/// `html` (of the page at `base`) as Markdown, without the lines whose
/// collapsed text is in `drop`.
pub fn markdown(html: &str, base: &url::Url, drop: &HashSet<String>) -> String {
    let masked = mask_raw_text(html);
    let mut md = Markdown {
        base,
        drop,
        out: String::new(),
        line: String::new(),
        plain: String::new(),
        lists: Vec::new(),
        anchor: None,
        pre: 0,
        blank_before: false,
        marker: 0,
    };
    for piece in dom_chunks(&masked) {
        let mut tree = Tree {
            md: &mut md,
            open: Vec::new(),
            skipping: 0,
        };
        scan(piece, &mut tree);
        while let Some(e) = tree.open.pop() {
            tree.leave(&e);
        }
    }
    md.end_line();
    md.out.trim_end().to_string()
}

struct Markdown<'a> {
    base: &'a url::Url,
    drop: &'a HashSet<String>,
    out: String,
    /// The line being written, with its Markdown.
    line: String,
    /// Its text alone, to compare with the lines denoising removed.
    plain: String,
    /// Open lists: ordered, and the next item's number.
    lists: Vec<(bool, u32)>,
    /// An open link's href (resolved), written when it closes.
    anchor: Option<String>,
    /// Open `<pre>` elements: text kept as written.
    pre: usize,
    /// The next line starts a block: a blank line before it.
    blank_before: bool,
    /// Bytes of the line that are a heading's or an item's marker: a line
    /// no longer than that is empty.
    marker: usize,
}

impl Markdown<'_> {
    /// Ends the line being written (kept unless denoising dropped it).
    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let plain = crate::parse::collapse(&std::mem::take(&mut self.plain));
        let marker = std::mem::take(&mut self.marker);
        if line.trim().is_empty()
            || (self.pre == 0 && (line.len() <= marker || self.drop.contains(&plain)))
        {
            return;
        }
        if self.blank_before && !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
        self.blank_before = false;
        self.out.push_str(line.trim_end());
        self.out.push('\n');
    }

    /// Text written as it is, after the blank line a block wants.
    fn raw(&mut self, s: &str) {
        if self.blank_before && !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
        self.blank_before = false;
        self.out.push_str(s);
    }

    /// Starts a block: the line ends, a blank line comes before the next.
    fn block(&mut self) {
        self.end_line();
        self.blank_before = true;
    }

    fn text(&mut self, t: &str) {
        if self.pre > 0 {
            for (i, part) in t.split('\n').enumerate() {
                if i > 0 {
                    self.out.push_str(&std::mem::take(&mut self.line));
                    self.out.push('\n');
                }
                self.line.push_str(part);
            }
            return;
        }
        for w in t.split_whitespace() {
            let at_start = self.line.trim().is_empty() || self.line.ends_with(['[', ' ']);
            if !at_start {
                self.line.push(' ');
            }
            escape(w, &mut self.line);
            if !self.plain.is_empty() {
                self.plain.push(' ');
            }
            self.plain.push_str(w);
        }
        // A space the text ends with separates it from what follows.
        if t.ends_with(char::is_whitespace)
            && !self.line.ends_with([' ', '['])
            && !self.line.trim().is_empty()
        {
            self.line.push(' ');
        }
    }
}

/// `w` with the characters Markdown would read as markup escaped.
fn escape(w: &str, out: &mut String) {
    for c in w.chars() {
        if matches!(c, '\\' | '*' | '_' | '[' | ']' | '`' | '<' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
}

/// What an open element does when it ends.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Plain,
    Skipped,
    Block,
    Heading,
    List,
    Item,
    Link,
    Pre,
}

struct Element<'p> {
    name: &'p str,
    kind: Kind,
}

struct Tree<'m, 'a, 'p> {
    md: &'m mut Markdown<'a>,
    open: Vec<Element<'p>>,
    skipping: usize,
}

impl<'p> Sink<'p> for Tree<'_, '_, 'p> {
    fn text(&mut self, raw: &str) {
        if self.skipping == 0 {
            let t = decode_entities(raw);
            self.md.text(&unmask_rcdata(&t));
        }
    }

    fn open(&mut self, tag: &Tag<'p, '_>, self_closing: bool) {
        let kind = match self.skipping {
            0 => self.enter(tag),
            _ => Kind::Skipped,
        };
        let e = Element {
            name: tag.name,
            kind,
        };
        if self_closing || VOID_TAGS.contains(&tag.name) {
            self.leave(&e);
        } else {
            self.skipping += usize::from(kind == Kind::Skipped);
            self.open.push(e);
        }
    }

    fn close(&mut self, name: &'p str) {
        if self.open.last().is_some_and(|e| e.name == name)
            && let Some(e) = self.open.pop()
        {
            self.skipping -= usize::from(e.kind == Kind::Skipped);
            self.leave(&e);
        }
    }
}

impl Tree<'_, '_, '_> {
    /// What an opening tag starts.
    fn enter(&mut self, tag: &Tag<'_, '_>) -> Kind {
        let name = tag.name.to_ascii_lowercase();
        let md = &mut *self.md;
        match name.as_str() {
            "script" | "style" | "template" | "svg" | "title" | "head" | "noscript" => {
                Kind::Skipped
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                md.block();
                let level = usize::from(name.as_bytes()[1] - b'0');
                md.line.push_str(&"#".repeat(level));
                md.line.push(' ');
                md.marker = md.line.len();
                Kind::Heading
            }
            "ul" | "ol" => {
                // A list in a list item goes on under it, no blank line.
                match md.lists.is_empty() {
                    true => md.block(),
                    false => md.end_line(),
                }
                md.lists.push((name == "ol", 1));
                Kind::List
            }
            "li" => {
                md.end_line();
                let depth = md.lists.len().saturating_sub(1).min(8);
                md.line.push_str(&"  ".repeat(depth));
                match md.lists.last_mut() {
                    Some((true, n)) => {
                        md.line.push_str(&format!("{n}. "));
                        *n += 1;
                    }
                    _ => md.line.push_str("- "),
                }
                md.marker = md.line.len();
                Kind::Item
            }
            "pre" => {
                md.block();
                md.raw("```\n");
                md.pre += 1;
                Kind::Pre
            }
            "a" => {
                let href = tag.attr("href").and_then(|h| md.base.join(h.trim()).ok());
                match href {
                    Some(u) if md.anchor.is_none() => {
                        md.line.push('[');
                        md.anchor = Some(u.to_string());
                        Kind::Link
                    }
                    _ => Kind::Plain,
                }
            }
            "br" => {
                md.end_line();
                Kind::Plain
            }
            n if is_block(n) => {
                md.block();
                Kind::Block
            }
            _ => Kind::Plain,
        }
    }

    /// What an element's end does.
    fn leave(&mut self, e: &Element<'_>) {
        let md = &mut *self.md;
        match e.kind {
            Kind::Heading | Kind::Block => md.block(),
            Kind::List => {
                md.lists.pop();
                match md.lists.is_empty() {
                    true => md.block(),
                    false => md.end_line(),
                }
            }
            Kind::Item => md.end_line(),
            Kind::Pre => {
                md.end_line();
                md.pre = md.pre.saturating_sub(1);
                md.out.push_str("```\n");
                md.blank_before = true;
            }
            Kind::Link => {
                if let Some(href) = md.anchor.take() {
                    let line = md.line.trim_end().to_string();
                    md.line = line;
                    md.line.push_str("](");
                    md.line
                        .push_str(&href.replace(')', "%29").replace(' ', "%20"));
                    md.line.push(')');
                }
            }
            Kind::Plain | Kind::Skipped => {}
        }
    }
}

/// Elements that start a paragraph-like block.
fn is_block(name: &str) -> bool {
    matches!(
        name,
        "p" | "div"
            | "section"
            | "article"
            | "main"
            | "header"
            | "footer"
            | "nav"
            | "aside"
            | "blockquote"
            | "table"
            | "tr"
            | "dl"
            | "dt"
            | "dd"
            | "figure"
            | "figcaption"
            | "form"
            | "address"
            | "details"
            | "caption"
            | "hr"
            | "body"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str) -> String {
        let base = url::Url::parse("http://a.org/dir/").unwrap();
        markdown(html, &base, &HashSet::new())
    }

    #[test]
    fn headings_lists_links_and_code_keep_their_shape() {
        let got = md(
            "<html><head><title>T</title><script>x()</script></head><body><h1>Big  title</h1>\
             <p>Some <a href='/x'>link</a> here_now.</p><ul><li>one<li>two <ol><li>a</li><li>b</li></ol></ul>\
             <pre>let x = 1;\n  y();</pre><h3>End</h3></body></html>",
        );
        assert_eq!(
            got,
            "# Big title\n\nSome [link](http://a.org/x) here\\_now.\n\n- one\n- two\n  1. a\n  2. b\n\n```\nlet x = 1;\n  y();\n```\n\n### End"
        );
    }

    #[test]
    fn dropped_lines_and_deep_nesting() {
        let base = url::Url::parse("http://a.org/").unwrap();
        let drop: HashSet<String> = ["Home | About".to_string()].into();
        let got = markdown("<div>Home | About</div><p>Body text</p>", &base, &drop);
        assert_eq!(got, "Body text");
        // 100,000 nested elements: a stack, no recursion.
        let deep = format!(
            "{}x{}",
            "<div><ul><li>".repeat(100_000),
            "</li></ul></div>".repeat(100_000)
        );
        let got = markdown(&deep, &base, &HashSet::new());
        assert!(got.contains('x') && got.len() < 100, "{}", got.len());
        let unclosed = "<a href='/a'>".repeat(50_000) + "end";
        assert!(markdown(&unclosed, &base, &HashSet::new()).len() < 2_000_000);
    }
}
