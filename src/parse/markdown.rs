//! A page's HTML as Markdown for text corpora: headings, paragraphs,
//! lists, preformatted blocks and links kept where the tokenizer sees
//! them, everything else as text. One pass over the same tokens the walk
//! reads (`scan`), elements on a stack (never recursion); an end tag
//! closes what was left open inside it, and the closes HTML implies
//! (`<li>` after `<li>`, a block after `<p>`, `<body>` after `<head>`) are
//! made, each element popped once: time and output linear in the input.
//! Lines whose text is in `drop` (what denoising removed) are left out.

use std::collections::{HashMap, HashSet};

use super::mask::{mask_raw_text, unmask_rcdata};
use super::scan::{Sink, Tag, VOID_TAGS, scan};
use super::text::decode_entities;
use super::walk::dom_chunks;

/// Deepest list indentation written (a page nesting lists 100,000 deep
/// gets this, not 100,000 levels of spaces a line).
const MAX_INDENT: usize = 24;

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
        pre: None,
        blank_before: false,
        marker: 0,
        item: false,
        space: false,
    };
    for piece in dom_chunks(&masked) {
        let mut tree = Tree {
            md: &mut md,
            open: Vec::new(),
            counts: HashMap::new(),
            skipping: 0,
        };
        scan(piece, &mut tree);
        tree.pop_to(0);
    }
    md.end_line();
    md.out.trim_end().to_string()
}

/// An open list: ordered, its next number, the column its items start at,
/// and the column its current item's content starts at.
struct List {
    ordered: bool,
    next: u32,
    indent: usize,
    content: usize,
}

struct Markdown<'a> {
    base: &'a url::Url,
    drop: &'a HashSet<String>,
    out: String,
    /// The line being written, with its Markdown.
    line: String,
    /// Its text alone, to compare with the lines denoising removed.
    plain: String,
    lists: Vec<List>,
    /// An open link: its href (resolved) and where its `[` is in the line.
    anchor: Option<(String, usize)>,
    /// The text of an open `<pre>`, written as a fenced block when it ends.
    pre: Option<String>,
    /// The next line starts a block: a blank line before it.
    blank_before: bool,
    /// Bytes of the line that are a heading's or an item's marker.
    marker: usize,
    /// The marker is a list item's (it waits for the item's text).
    item: bool,
    /// Whitespace was seen since the last word: the next word is apart.
    space: bool,
}

impl Markdown<'_> {
    /// Ends the line being written (kept unless it is empty or denoising
    /// dropped it).
    fn end_line(&mut self) {
        self.cancel_anchor();
        let line = std::mem::take(&mut self.line);
        let plain = crate::parse::collapse(&std::mem::take(&mut self.plain));
        let marker = std::mem::take(&mut self.marker);
        self.item = false;
        self.space = false;
        if line.len() <= marker || self.drop.contains(&plain) {
            return;
        }
        self.raw(line.trim_end());
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

    /// Starts a block: the line ends, a blank line comes before the next
    /// (inside a list item the item's marker waits for its text).
    fn block(&mut self) {
        if !(self.item && self.line.len() <= self.marker) {
            self.end_line();
        }
        self.blank_before = true;
    }

    /// A link still open when its line ends loses its `[`: a link around
    /// blocks (a card) is its text.
    fn cancel_anchor(&mut self) {
        if let Some((_, at)) = self.anchor.take()
            && self.line.as_bytes().get(at) == Some(&b'[')
        {
            self.line.remove(at);
        }
    }

    fn text(&mut self, t: &str) {
        if let Some(pre) = &mut self.pre {
            pre.push_str(t);
            return;
        }
        let lead = t.starts_with(char::is_whitespace);
        for (i, w) in t.split_whitespace().enumerate() {
            let at_start = self.line.len() <= self.marker || self.line.ends_with('[');
            if !at_start && (i > 0 || lead || self.space) {
                self.line.push(' ');
            }
            if !self.plain.is_empty() && (i > 0 || lead || self.space) {
                self.plain.push(' ');
            }
            escape(
                w,
                at_start && self.line.len() <= self.marker,
                &mut self.line,
            );
            self.plain.push_str(w);
            self.space = false;
        }
        self.space |= t.ends_with(char::is_whitespace) || (lead && t.trim().is_empty());
    }

    /// Writes a `<pre>`'s text as a fenced block, the fence longer than
    /// any run of backticks in it.
    fn fence(&mut self, code: &str) {
        let code = code
            .strip_prefix('\n')
            .unwrap_or(code)
            .trim_end_matches('\n');
        let (mut run, mut longest) = (0, 0);
        for b in code.bytes() {
            run = if b == b'`' { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        let fence = "`".repeat((longest + 1).max(3));
        self.raw(&format!("{fence}\n{code}\n{fence}\n"));
        self.blank_before = true;
    }
}

/// `w` with the characters Markdown would read as markup escaped; at a
/// line's start also what would begin a list or a quote.
fn escape(w: &str, line_start: bool, out: &mut String) {
    if line_start && matches!(w, "-" | "+" | ">") {
        out.push('\\');
    }
    // `2024.` would start a numbered list.
    let numbered = line_start
        && w.len() > 1
        && w.ends_with('.')
        && w[..w.len() - 1].bytes().all(|b| b.is_ascii_digit());
    for (i, c) in w.char_indices() {
        let list_dot = numbered && i == w.len() - 1;
        if list_dot || matches!(c, '\\' | '*' | '_' | '[' | ']' | '`' | '<' | '#') {
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

struct Element {
    /// Its name in lower case.
    lower: String,
    kind: Kind,
}

struct Tree<'m, 'a> {
    md: &'m mut Markdown<'a>,
    open: Vec<Element>,
    /// Open elements by lower-case name: an end tag pops down to its own
    /// only when one is open.
    counts: HashMap<String, usize>,
    skipping: usize,
}

impl<'p> Sink<'p> for Tree<'_, '_> {
    fn text(&mut self, raw: &str) {
        if self.skipping == 0 {
            let t = decode_entities(raw);
            self.md.text(&unmask_rcdata(&t));
        }
    }

    fn open(&mut self, tag: &Tag<'p, '_>, self_closing: bool) {
        let lower = tag.name.to_ascii_lowercase();
        self.implied_closes(&lower);
        let kind = match self.skipping {
            0 => self.enter(tag, &lower),
            _ => Kind::Skipped,
        };
        let e = Element { lower, kind };
        if self_closing || VOID_TAGS.contains(&tag.name) {
            self.leave(&e);
        } else {
            self.skipping += usize::from(kind == Kind::Skipped);
            *self.counts.entry(e.lower.clone()).or_default() += 1;
            self.open.push(e);
        }
    }

    fn close(&mut self, name: &'p str) {
        let lower = name.to_ascii_lowercase();
        if self.counts.get(&lower).is_some_and(|n| *n > 0)
            && let Some(at) = self.open.iter().rposition(|e| e.lower == lower)
        {
            self.pop_to(at);
        }
    }
}

impl Tree<'_, '_> {
    /// Pops the open elements down to (and with) the one at `at`.
    fn pop_to(&mut self, at: usize) {
        while self.open.len() > at {
            let Some(e) = self.open.pop() else { break };
            self.skipping -= usize::from(e.kind == Kind::Skipped);
            if let Some(n) = self.counts.get_mut(&e.lower) {
                *n -= 1;
            }
            self.leave(&e);
        }
    }

    /// Closes what opening `name` ends in HTML: an open `<head>` for any
    /// content, an open `<p>` for a block, an open `<li>` (of the same
    /// list) for a new item.
    fn implied_closes(&mut self, name: &str) {
        let is_open = |t: &Tree, n: &str| t.counts.get(n).is_some_and(|c| *c > 0);
        if is_open(self, "head")
            && (name == "body" || is_block(name) || heading_level(name).is_some())
        {
            let at = self.open.iter().rposition(|e| e.lower == "head");
            self.pop_to(at.unwrap_or(self.open.len()));
        }
        let closes_p = name == "p"
            || is_block(name)
            || heading_level(name).is_some()
            || matches!(name, "ul" | "ol" | "pre");
        if closes_p && is_open(self, "p") {
            // Through inline elements only: a `<p>` in a `<div>` the new
            // block is inside stays.
            let at = self
                .open
                .iter()
                .rposition(|e| e.lower == "p" || !matches!(e.kind, Kind::Plain | Kind::Link));
            if let Some(at) = at.filter(|a| self.open[*a].lower == "p") {
                self.pop_to(at);
            }
        }
        if name == "li" && is_open(self, "li") {
            let at = self
                .open
                .iter()
                .rposition(|e| matches!(e.lower.as_str(), "li" | "ul" | "ol"));
            if let Some(at) = at.filter(|a| self.open[*a].lower == "li") {
                self.pop_to(at);
            }
        }
    }

    /// What an opening tag starts.
    fn enter(&mut self, tag: &Tag<'_, '_>, name: &str) -> Kind {
        let md = &mut *self.md;
        if let Some(level) = heading_level(name) {
            md.block();
            md.line.push_str(&"#".repeat(level));
            md.line.push(' ');
            md.marker = md.line.len();
            md.item = false;
            return Kind::Heading;
        }
        match name {
            "script" | "style" | "template" | "svg" | "title" | "head" => Kind::Skipped,
            "ul" | "ol" => {
                // A list in a list item goes on under it, no blank line.
                let indent = md.lists.last().map_or(0, |l| l.content.min(MAX_INDENT));
                match md.lists.is_empty() {
                    true => md.block(),
                    false => md.end_line(),
                }
                md.lists.push(List {
                    ordered: name == "ol",
                    next: 1,
                    indent,
                    content: indent + 2,
                });
                Kind::List
            }
            "li" => {
                // An item with nothing in it yet gives way to this one.
                if md.line.len() <= md.marker {
                    md.line.clear();
                    md.marker = 0;
                }
                md.end_line();
                md.item = true;
                let Some(list) = md.lists.last_mut() else {
                    md.line.push_str("- ");
                    md.marker = 2;
                    return Kind::Item;
                };
                let marker = match list.ordered {
                    true => format!("{}. ", list.next),
                    false => "- ".to_string(),
                };
                list.next += 1;
                list.content = list.indent + marker.len();
                md.line.push_str(&" ".repeat(list.indent));
                md.line.push_str(&marker);
                md.marker = md.line.len();
                Kind::Item
            }
            "pre" => {
                md.block();
                if md.pre.is_some() {
                    return Kind::Plain;
                }
                md.pre = Some(String::new());
                Kind::Pre
            }
            "a" => {
                let href = tag.attr("href").and_then(|h| md.base.join(h.trim()).ok());
                match href {
                    Some(u) if md.anchor.is_none() && md.pre.is_none() => {
                        let at_start = md.line.len() <= md.marker;
                        if !at_start && md.space {
                            md.line.push(' ');
                        }
                        if md.line.ends_with('!') {
                            md.line.insert(md.line.len() - 1, '\\');
                        }
                        md.anchor = Some((u.to_string(), md.line.len()));
                        md.line.push('[');
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
    fn leave(&mut self, e: &Element) {
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
                let code = md.pre.take().unwrap_or_default();
                md.fence(&code);
            }
            Kind::Link => {
                let Some((href, at)) = md.anchor.take() else {
                    return;
                };
                if md.line.len() <= at + 1 {
                    // No text: no link.
                    md.line.truncate(at);
                    return;
                }
                let end = md.line.trim_end().len();
                md.line.truncate(end);
                md.line.push_str("](");
                let href = href
                    .replace('(', "%28")
                    .replace(')', "%29")
                    .replace(' ', "%20");
                md.line.push_str(&href);
                md.line.push(')');
            }
            Kind::Plain | Kind::Skipped => {}
        }
    }
}

/// `h1`…`h6`: the level.
fn heading_level(name: &str) -> Option<usize> {
    match name.as_bytes() {
        [b'h', d @ b'1'..=b'6'] => Some(usize::from(d - b'0')),
        _ => None,
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
            | "noscript"
    )
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
