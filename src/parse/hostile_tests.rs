//! Markup that once stopped or ballooned a crawl: 100,000 levels of
//! nesting of every element whose text the parse reads, and unclosed
//! anchors. Each page is parsed, denoised and hashed as a fetch task does,
//! on a thread with a worker's 2 MiB stack: a walk that recursed by depth
//! overflows it (an abort, which no test harness survives).

use super::*;
use crate::filter::denoise::{DenoiseRules, Denoiser, clean_text, denoise};
use crate::parse::html_links::*;
use crate::parse::page::ParsedLink;
use crate::parse::text::HEADING_BYTES;

const DEPTH: usize = 100_000;

/// Parses, denoises and simhashes `html` on a 2 MiB stack, as a fetch task.
fn on_worker_stack(html: String) -> ParsedPage {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let page = parse_html(
                &html,
                &url::Url::parse("http://h.org/deep").unwrap(),
                encoding_rs::UTF_8,
                "trawl",
                DEFAULT_MAX_LINKS,
            );
            let d = Denoiser::new(&DenoiseRules::default());
            let noise = denoise(&page, "h.org", &d);
            let clean = clean_text(&page.text, noise.noise.iter().copied());
            let _ = crate::dedup::simhash(&clean);
            page
        })
        .unwrap()
        .join()
        .expect("parsing did not panic")
}

/// `<open>` DEPTH times around `inner`, closed with `</close>` when given.
fn nested(open: &str, close: Option<&str>, inner: &str) -> String {
    let mut s = String::with_capacity(DEPTH * (open.len() * 2 + 3) + inner.len() + 200);
    s.push_str("<html><head><title>T</title></head><body><p>before words</p>");
    for _ in 0..DEPTH {
        s.push_str(open);
    }
    s.push_str(inner);
    if let Some(c) = close {
        for _ in 0..DEPTH {
            s.push_str(c);
        }
    }
    s.push_str("<p>after words <a href=/after>the link after</a></p></body></html>");
    s
}

fn link<'a>(p: &'a ParsedPage, path: &str) -> Option<&'a ParsedLink> {
    p.links.iter().find(|l| l.url.url().path() == path)
}

#[test]
fn a_first_h1_over_deep_nesting_is_read_without_recursion() {
    // The page that overflowed: <h1> then 50,000 <b> (under the size
    // where a page is parsed in pieces, so the heading is whole).
    let mut html = String::from("<h1>");
    html.push_str(&"<b>".repeat(50_000));
    html.push_str("deep heading</h1><a href=/after>after</a>");
    let p = on_worker_stack(html);
    // The walk leaves the <b>s open past </h1>, as tl did (browsers close
    // them), so the link after is inside the heading too.
    assert!(p.head.h1.starts_with("deep heading"), "{}", p.head.h1);
    assert!(link(&p, "/after").is_some());
}

#[test]
fn every_element_kind_whose_text_is_read_survives_100000_levels() {
    for (open, close) in [
        ("<h1>", "</h1>"),
        ("<h2>", "</h2>"),
        ("<h6>", "</h6>"),
        ("<a href=/deep>", "</a>"),
        ("<noscript>", "</noscript>"),
        ("<table><tr><td>", "</td></tr></table>"),
        ("<ul><li>", "</li></ul>"),
        ("<ol><li>", "</li></ol>"),
        ("<div>", "</div>"),
        ("<b>", "</b>"),
        ("<span>", "</span>"),
        ("<p>", "</p>"),
        ("<blockquote>", "</blockquote>"),
    ] {
        for close in [Some(close), None] {
            let p = on_worker_stack(nested(open, close, "deep words"));
            assert!(p.text.contains("deep words"), "{open} {close:?}");
            if open.starts_with("<a") {
                // Each <a> ends the one before it, none spanning the
                // page; 100,000 links to /deep are one link, and /after
                // the 100,001st (past crawl.max_outlinks, counted).
                assert_eq!((p.links.len(), p.capped_links), (1, 1), "{open}");
                assert!(p.links.iter().all(|l| l.anchor.len() <= ANCHOR_BYTES));
            } else {
                let after = link(&p, "/after").unwrap_or_else(|| panic!("{open} {close:?}"));
                assert_eq!(after.anchor, "the link after");
            }
            assert!(p.head.h1.len() <= HEADING_BYTES && p.title.len() <= HEADING_BYTES);
        }
    }
}

#[test]
fn raw_text_elements_nested_100000_deep_stay_text() {
    // A title or textarea holds text, never markup: 100,000 opening tags
    // inside one are its text (capped), and the page goes on after it.
    let p = on_worker_stack(nested("<title>", Some("</title>"), "x"));
    assert!(
        p.title.starts_with("T"),
        "the first title counts: {}",
        p.title
    );
    let p = on_worker_stack(format!(
        "<title>{}</title><p>body <a href=/after>after</a>",
        "<title>".repeat(DEPTH)
    ));
    assert!(p.title.starts_with("<title><title>") && p.title.len() <= HEADING_BYTES);
    assert!(link(&p, "/after").is_some());
    let p = on_worker_stack(nested("<textarea>", Some("</textarea>"), "x"));
    assert!(link(&p, "/after").is_some());
    // Scripts and styles nested deep are blanked, not walked.
    let p = on_worker_stack(nested("<script>", Some("</script>"), "var x;"));
    assert!(link(&p, "/after").is_some());
}

#[test]
fn meta_tags_deep_inside_nesting_are_still_read() {
    let p = on_worker_stack(nested(
        "<div>",
        Some("</div>"),
        "<meta name=author content='Deep Author'><meta name=robots content=nofollow>\
         <time datetime=2024-05-01>May</time>",
    ));
    assert_eq!(p.head.author.as_deref(), Some("Deep Author"));
    assert_eq!(p.head.date.as_deref(), Some("2024-05-01"));
    assert!(p.nofollow);
}

#[test]
fn unclosed_anchors_end_at_the_next_and_their_text_is_capped() {
    // 6,000 unclosed <a href> and then 180 KB of text: each anchor spanned
    // the rest of the page (~1 GB of anchor strings).
    let mut html = String::from("<body>");
    for i in 0..6_000 {
        html.push_str(&format!("<a href=/a{i}>w{i} "));
    }
    html.push_str(&"tail text ".repeat(18_000));
    let p = on_worker_stack(html);
    assert_eq!(p.links.len(), 6_000);
    assert_eq!(p.links[0].anchor, "w0");
    assert_eq!(p.links[4_321].anchor, "w4321");
    let last = &p.links[5_999].anchor;
    assert!(last.starts_with("w5999 tail text") && last.len() <= ANCHOR_BYTES);
    let total: usize = p.links.iter().map(|l| l.anchor.len()).sum();
    assert!(total < 64 * 1024, "{total} bytes of anchors");
    // A closed anchor inside an unclosed one ends it too; text after a
    // closing tag is no anchor's.
    let p = on_worker_stack("<a href=/x>one <a href=/y>two</a> three".into());
    let anchors: Vec<&str> = p.links.iter().map(|l| l.anchor.as_str()).collect();
    assert_eq!(anchors, ["one", "two"]);
}
