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
         <pre>\nlet x = 1;\n  y();</pre><h3>End</h3></body></html>",
    );
    assert_eq!(
        got,
        "# Big title\n\nSome [link](http://a.org/x) here\\_now.\n\n- one\n- two\n  1. a\n  2. b\n\n```\nlet x = 1;\n  y();\n```\n\n### End"
    );
}

#[test]
fn html_as_pages_write_it() {
    // No </head>; items whose text is in paragraphs; </ul> over an open <li>.
    assert_eq!(
        md(
            "<html><head><title>T</title><body><p>Hi</p><ul><li><p>One</p><li><p>Two</p></ul><p>after</p>"
        ),
        "Hi\n\n- One\n\n- Two\n\nafter"
    );
    // A list under a numbered item starts at the item's text.
    assert_eq!(md("<ol><li>a<ul><li>b</ul></ol>"), "1. a\n   - b");
    // Inline tags add no space the page did not have; punctuation stays.
    assert_eq!(
        md("<p>H<sub>2</sub>O and <a href=x>link</a>.</p>"),
        "H2O and [link](http://a.org/dir/x)."
    );
    // A link around blocks (a card) is its text; an empty link is nothing.
    assert_eq!(
        md("<a href=/p><h2>Title</h2></a><p><a href=/e></a>x</p>"),
        "## Title\n\nx"
    );
    // Parentheses in a target, an image-like `![`, a line that would be a list.
    assert_eq!(
        md("<p>See!<a href='/wiki/Mercury_(planet)'>Mercury</a></p><p>2024. was - a year</p>"),
        "See\\![Mercury](http://a.org/wiki/Mercury_%28planet%29)\n\n2024\\. was - a year"
    );
    // A code block holding a fence gets a longer one; <pre><span> closes.
    assert_eq!(
        md("<pre>```\nx</pre><pre><span>y</pre>z"),
        "````\n```\nx\n````\n\n```\ny\n```\n\nz"
    );
    // An empty heading takes nothing with it.
    assert_eq!(md("<h2></h2><p>text</p>"), "text");
}

#[test]
fn dropped_lines_and_deep_nesting() {
    let base = url::Url::parse("http://a.org/").unwrap();
    let drop: HashSet<String> = ["Home | About".to_string()].into();
    let got = markdown(
        "<div><a href=/>Home</a> | <a href=/a>About</a></div><p>Body text</p>",
        &base,
        &drop,
    );
    assert_eq!(got, "Body text");
    // 100,000 nested elements: a stack, no recursion, bounded indentation.
    let deep = format!(
        "{}x{}",
        "<div><ul><li>".repeat(100_000),
        "</li></ul></div>".repeat(100_000)
    );
    let got = markdown(&deep, &base, &HashSet::new());
    assert!(
        got.trim_start().starts_with("- x") && got.len() < 100,
        "{}",
        got.len()
    );
    let unclosed = "<a href='/a'>".repeat(50_000) + "end";
    assert!(markdown(&unclosed, &base, &HashSet::new()).len() < 2_000_000);
    // A paragraph of 100,000 links is written in linear time (each link
    // once, no copy of the line per link).
    let links = format!("<p>{}</p>", "<a href=/x>y</a> ".repeat(100_000));
    let t = std::time::Instant::now();
    let got = markdown(&links, &base, &HashSet::new());
    assert_eq!(got.matches("[y](http://a.org/x)").count(), 100_000);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t.elapsed()
    );
}
