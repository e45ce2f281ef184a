//! Tests of the HTML walk (the masking pass has its own).
use super::*;
use crate::parse::html_links::*;
use crate::parse::page::ParsedLink;
use crate::parse::text::{TextBuf, space_len};
use crate::parse::walk::{DOM_CHUNK_BYTES, dom_chunks};

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
fn a_repeated_href_counts_as_it_did_the_first_time() {
    // Each href thrice: one link, the other two repeats, and every
    // occurrence of a bad or too long href counted (a repeat is not
    // resolved again, but counts the same).
    let long = format!("/{}", "x".repeat(3000));
    let bad = "http://[::1/";
    let html: String = (0..3)
        .map(|i| format!("<a href=a.html>a{i}</a><a href='{bad}'>b</a><a href={long}>l</a><a href=./a.html>c</a>"))
        .collect();
    let p = parse(&html);
    assert_eq!(p.links.len(), 1);
    assert_eq!(p.links[0].url.as_str(), "http://h.org/dir/a.html");
    assert_eq!(p.links[0].anchor, "a0");
    assert_eq!(p.skipped_links, 3);
    assert_eq!(p.too_long_links, 3);
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

/// The next of a xorshift32 sequence (the random text tests).
fn xorshift(seed: &mut u32) {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 17;
    *seed ^= *seed << 5;
}

/// The char-by-char collapse the byte scan of `TextBuf::push` replaced.
fn collapse_by_chars(pieces: &[&str]) -> String {
    let (mut s, mut space) = (String::new(), false);
    for raw in pieces {
        for c in raw.chars() {
            if c.is_whitespace() {
                space = true;
            } else {
                if space && !s.is_empty() {
                    s.push(' ');
                }
                space = false;
                s.push(c);
            }
        }
    }
    s
}

#[test]
fn space_len_matches_char_is_whitespace_for_every_char() {
    for c in (0u32..=0x10_FFFF).filter_map(char::from_u32) {
        let s = format!("x{c}y");
        let want = if c.is_whitespace() { c.len_utf8() } else { 0 };
        assert_eq!(space_len(s.as_bytes(), 1), want, "U+{:04X}", c as u32);
    }
}

#[test]
fn long_words_collapse_as_char_by_char() {
    // Mostly chars that are no space, their lead bytes shared with spaces
    // or under 0x21 among them, so that the eight-byte scan stops falsely.
    let alphabet = [
        'a',
        '中',
        'ア',
        '\u{3001}',
        '\u{2060}',
        '\u{a1}',
        '\u{800}',
        '\u{1}',
        '\u{1f}',
        'é',
        '\u{10348}',
        'z',
        'x',
        '文',
        '\u{1681}',
        '\u{2000}',
        ' ',
        '\u{3000}',
        '\n',
    ];
    let mut seed = 0x2545_f491_u32;
    for _ in 0..3_000 {
        let mut p = String::new();
        for _ in 0..(seed % 200) {
            xorshift(&mut seed);
            // The spaces (the last four) may be drawn one time in twenty.
            let n = if seed.is_multiple_of(20) {
                alphabet.len()
            } else {
                alphabet.len() - 4
            };
            p.push(alphabet[(seed >> 8) as usize % n]);
        }
        let mut t = TextBuf::default();
        t.push(&p);
        assert_eq!(t.s, collapse_by_chars(&[&p]), "{p:?}");
    }
}

#[test]
fn text_collapses_every_unicode_space_and_nothing_else() {
    // Every char char::is_whitespace accepts, and neighbours sharing
    // their lead bytes that it does not (U+00A1, U+1681, U+2060, U+3001).
    let alphabet: Vec<char> = (0u32..0x3100)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .chain([
            'a', 'Z', '中', '文', '\u{a1}', '\u{1681}', '\u{2060}', '\u{3001}', 'é', '\u{200b}',
            '\u{205e}', 'ア', '한',
        ])
        .collect();
    let mut seed = 0x9e37_79b9_u32;
    for _ in 0..2_000 {
        let mut pieces = Vec::new();
        for _ in 0..3 {
            let mut p = String::new();
            // Long enough for the eight-byte scan.
            for _ in 0..(seed % 40) {
                xorshift(&mut seed);
                p.push(alphabet[seed as usize % alphabet.len()]);
            }
            pieces.push(p);
        }
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let mut t = TextBuf::default();
        for p in &refs {
            t.push(p);
        }
        assert_eq!(t.s, collapse_by_chars(&refs), "{refs:?}");
    }
}

#[test]
fn an_index_of_tens_of_thousands_of_links_is_whole_and_bounded() {
    // An API index: 30,000 links, each with its name as anchor.
    let body: String = (0..30_000)
        .map(|i| format!("<li><a href=\"/api/item_{i}.html\">item_{i} — a function</a></li>"))
        .collect();
    let p = parse(&format!("<ul>{body}</ul>"));
    assert_eq!((p.links.len(), p.capped_links), (30_000, 0));
    // The first RICH_LINKS keep their context; the rest a short anchor.
    assert!(!p.links[10].after.is_empty());
    let slim = &p.links[RICH_LINKS + 5];
    assert!(slim.before.is_empty() && slim.after.is_empty());
    assert_eq!(slim.anchor, format!("item_{} — a function", RICH_LINKS + 5));
    let held: usize = p.links.iter().map(ParsedLink::heap_bytes).sum();
    assert!(held < 8 << 20, "{held} bytes");
    // Relative links resolved against a 2 KB base grow 200-fold: the page
    // keeps what fits in LINK_BYTES and counts the rest.
    let base = format!("http://h.org/{}/", "d".repeat(1900));
    let many: String = (0..100_000).map(|i| format!("<a href=x{i}>")).collect();
    let p = parse_html(
        &many,
        &url::Url::parse(&base).unwrap(),
        encoding_rs::UTF_8,
        "trawl",
        DEFAULT_MAX_LINKS,
    );
    let held: usize = p.links.iter().map(ParsedLink::heap_bytes).sum();
    assert!(held <= LINK_BYTES + 4096, "{held} bytes");
    assert_eq!(p.links.len() + p.capped_links as usize, 100_000);
    assert!(p.capped_links > 80_000, "{}", p.capped_links);
    // find_link finds a link within the caps and one past them, with the
    // bytes the links before it held, and nothing the page does not link.
    let base = url::Url::parse(&base).unwrap();
    let find = |target: &str| {
        let id = crate::model::normalize(&format!("{base}{target}"))
            .unwrap()
            .id();
        find_link(&many, &base, encoding_rs::UTF_8, "trawl", id)
    };
    let kept = p.links.len();
    let last_kept = find(&format!("x{}", kept - 1)).unwrap();
    assert_eq!(last_kept.nth, kept);
    assert!(last_kept.bytes_before <= LINK_BYTES, "{last_kept:?}");
    let past = find("x99999").unwrap();
    assert_eq!(past.nth, 100_000);
    assert!(past.bytes_before > LINK_BYTES, "{past:?}");
    assert_eq!(find("y1"), None);
}

#[test]
fn a_url_linked_again_is_one_link_with_its_first_anchor() {
    let p = parse(
        "<a href=/a>first</a> <a href=/b>b</a> <a href=/a#x>again</a> <a href=/a>and again</a>",
    );
    let got: Vec<(&str, &str)> = p
        .links
        .iter()
        .map(|l| (l.url.as_str(), l.anchor.as_str()))
        .collect();
    assert_eq!(got, [("http://h.org/a", "first"), ("http://h.org/b", "b")]);
}
