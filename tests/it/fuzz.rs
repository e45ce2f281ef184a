//! Property-based fuzzing on stable Rust (proptest): URL normalization,
//! charset decoding with link extraction, robots.txt parsing and matching,
//! the command and `.crawlrc` parser, and the `pages where` parser. Each
//! target generates structured inputs (the grammar of what it reads) mixed
//! with raw bytes, and checks properties, not just "no panic".
//!
//! Each target runs for `TRAWL_FUZZ_SECS` seconds (default 3, as the test
//! suite runs them); `scripts/fuzz` runs them for ten minutes each and
//! prints the case counts. Inputs that once broke a target are named
//! regression tests at the end of this file.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use trawl::fetch::Robots;
use trawl::model::{self, MAX_URL_BYTES};
use trawl::parse;
use trawl::shell::{batch, expr, fields, quote, split_words};

/// Runs `test` on inputs from `strategy` until the time budget is spent;
/// returns the number of cases.
fn fuzz<S: Strategy>(name: &str, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let secs: u64 = std::env::var("TRAWL_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut cases = 0u64;
    let mut round = 0u32;
    while Instant::now() < deadline {
        let config = Config {
            cases: 256,
            failure_persistence: None,
            // A new seed a round, reproducible from the round number.
            rng_seed: proptest::test_runner::RngSeed::Fixed(u64::from(round) * 7919 + 17),
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        if let Err(e) = runner.run(&strategy, &test) {
            panic!("{name}: {e}");
        }
        cases += 256;
        round += 1;
    }
    eprintln!("fuzz {name}: {cases} cases in {secs} s");
}

fn url_strategy() -> impl Strategy<Value = String> {
    let scheme = prop_oneof![
        "http",
        "https",
        "HTTP",
        "HtTpS",
        "ftp",
        "file",
        "javascript",
        ""
    ];
    let host = prop_oneof![
        "[a-z0-9-]{1,12}(\\.[a-z]{2,5}){0,2}",
        "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
        "\\[[0-9a-f:]{2,20}\\]",
        "bücher\\.example",
        "例え\\.テスト",
        "xn--[a-z0-9]{1,10}",
        ".{0,8}",
    ];
    let port = prop_oneof![Just(String::new()), "(:[0-9]{1,6})", Just(":".to_string())];
    let seg = prop_oneof![
        "[a-zA-Z0-9._~-]{0,8}",
        "%[0-9a-fA-F]{2}",
        "%[0-9a-zA-Z]{0,2}",
        "\\.\\.?",
        "[ \"<>`{}|^\\\\]",
        "[中文ツé]{1,3}",
    ];
    let path = prop::collection::vec(seg, 0..6).prop_map(|s| s.join("/"));
    let query = prop_oneof![Just(String::new()), "\\?[a-z=&%0-9中 ]{0,12}"];
    let frag = prop_oneof![Just(String::new()), "#.{0,6}"];
    let structured = (scheme, host, port, path, query, frag)
        .prop_map(|(s, h, p, pa, q, f)| format!("{s}://{h}{p}/{pa}{q}{f}"));
    prop_oneof![3 => structured, 1 => ".{0,40}", 1 => "http://h/[a-z]{2000,2100}"]
}

#[test]
fn fuzz_url_normalization() {
    let base = url::Url::parse("http://base.example/dir/page.html?q=1").unwrap();
    fuzz("url", url_strategy(), |input| {
        if let Ok(u) = model::normalize(&input) {
            let s = u.as_str();
            prop_assert!(s.len() <= MAX_URL_BYTES);
            prop_assert!(s.starts_with("http://") || s.starts_with("https://"), "{s}");
            let again =
                model::normalize(s).map_err(|e| TestCaseError::fail(format!("{s}: {e}")))?;
            prop_assert_eq!(again.as_str(), s, "normalizing is idempotent");
            prop_assert_eq!(again.id(), u.id());
            prop_assert!(u.path_and_query().starts_with('/'));
            if !u.host().starts_with('[') {
                prop_assert_eq!(model::host_of(s), u.host());
            }
        }
        // Relative references resolve to the same normal form.
        if let Ok(r) = model::resolve(&base, &input)
            && let Ok(n) = model::normalize(r.as_str())
        {
            prop_assert_eq!(n.as_str(), r.as_str());
        }
        Ok(())
    });
}

fn html_strategy() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        "<(a|A|area|iframe|frame|link|base|meta|title|TITLE|textarea|noscript|script|style|p|div|br|svg|template)",
        " (href|HREF|src|rel|name|content|http-equiv|charset)=(\"[^\"]{0,20}\"|'[^']{0,20}'|[a-z/:.?#=]{0,15})",
        ">",
        "</(a|title|textarea|script|style|div|p|noscript)>",
        "&(amp|lt|gt|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|nbsp);?",
        "[a-z 中文论文\n\t]{0,12}",
        "<!--.{0,10}-->",
        "<meta charset=(gbk|big5|shift_jis|utf-8|koi8-r|x)>",
        "<meta http-equiv=refresh content=\"[0-9]; url=[a-z/]{0,8}\">",
        "https?://[a-z.]{1,10}/[a-z]{0,5}",
        "(javascript|mailto|data|tel):[a-z]{0,5}",
    ];
    let structured = prop::collection::vec(piece, 0..40).prop_map(|p| p.concat().into_bytes());
    prop_oneof![3 => structured, 1 => prop::collection::vec(any::<u8>(), 0..2048)]
}

#[test]
fn fuzz_charset_decoding_and_link_extraction() {
    let page = url::Url::parse("http://h.example/a/b.html").unwrap();
    let ctype = prop_oneof![
        Just(None),
        Just(Some("text/html")),
        Just(Some("text/html; charset=gbk")),
        Just(Some("text/html; charset=\"shift_jis\"")),
        Just(Some("text/html; charset=bogus")),
        Just(Some("text/html; charset=utf-16le")),
    ];
    fuzz(
        "html",
        (html_strategy(), ctype, 1usize..50),
        |(body, ct, max)| {
            let d = parse::decode(&body, ct);
            prop_assert!(!d.text.contains('\0'), "NUL survived decoding");
            let p = parse::parse_html(&d.text, &page, d.charset, "trawl", max);
            prop_assert!(p.links.len() <= max);
            for l in &p.links {
                let s = l.url.as_str();
                prop_assert!(s.len() <= MAX_URL_BYTES);
                let n = model::normalize(s).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(n.as_str(), s, "links are normalized");
                prop_assert!(l.before.len() <= parse::CONTEXT_BYTES + 4);
            }
            if let Some(c) = &p.canonical {
                prop_assert!(model::normalize(c).is_ok());
            }
            let masked = '\u{1}';
            prop_assert!(
                !p.title.contains(masked) || d.text.contains(masked),
                "a masked < leaked into the title: {:?}",
                p.title
            );
            Ok(())
        },
    );
}

/// Deep and unclosed markup: one element kind opened thousands of times
/// (closed or not), unclosed anchors, raw-text elements, each with a link
/// after it that must be found.
fn deep_html_strategy() -> impl Strategy<Value = (String, bool)> {
    let kind = prop_oneof![
        Just("<h1>"),
        Just("<h2>"),
        Just("<b>"),
        Just("<div>"),
        Just("<p>"),
        Just("<span>"),
        Just("<li>"),
        Just("<ul><li>"),
        Just("<table><tr><td>"),
        Just("<noscript>"),
        Just("<blockquote>"),
        Just("<a href=/d>"),
        Just("<a>"),
        Just("<font size=2>"),
    ];
    let text = "[a-z 中文]{0,8}";
    (kind, 1usize..30_000, any::<bool>(), text, 0usize..4).prop_map(
        |(open, depth, closed, text, tail)| {
            let close = match open {
                o if o.starts_with("<ul") => "</li></ul>".to_string(),
                o if o.starts_with("<table") => "</td></tr></table>".to_string(),
                o => format!("</{}>", &o[1..o.find([' ', '>']).unwrap_or(o.len())]),
            };
            let mut s = String::from("<title>t</title>");
            s.push_str(&open.repeat(depth));
            s.push_str(&text);
            if closed {
                s.push_str(&close.repeat(depth));
            }
            s.push_str(&"<a href=/x>x</a> w ".repeat(tail));
            s.push_str("<a href=/after>after</a>");
            (s, open.starts_with("<a href"))
        },
    )
}

#[test]
fn fuzz_deep_and_unclosed_markup() {
    let page = url::Url::parse("http://h.example/a/b.html").unwrap();
    let rules = trawl::filter::denoise::DenoiseRules::default();
    fuzz("deep-html", deep_html_strategy(), |(html, anchors)| {
        // On a fetch task's 2 MiB stack: a walk that recursed by depth dies.
        let (page, rules) = (page.clone(), rules.clone());
        let p = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let p = parse::parse_html(&html, &page, encoding_rs::UTF_8, "trawl", 6_000);
                let d = trawl::filter::denoise::Denoiser::new(&rules);
                let noise = trawl::filter::denoise::denoise(&p, "h.example", &d);
                let clean =
                    trawl::filter::denoise::clean_text(&p.text, noise.noise.iter().copied());
                let _ = trawl::dedup::simhash(&clean);
                p
            })
            .unwrap()
            .join()
            .map_err(|_| TestCaseError::fail("parsing panicked"))?;
        prop_assert!(p.links.iter().all(|l| l.anchor.len() <= 1024));
        prop_assert!(p.title.len() <= 2048 && p.head.h1.len() <= 2048);
        let after = p.links.iter().any(|l| l.url.url().path() == "/after");
        prop_assert!(
            after || (anchors && p.capped_links > 0),
            "the link after is found"
        );
        Ok(())
    });
}

/// Google's matcher, as its source describes it: the set of path prefixes
/// that can match the pattern so far (the reference the fast matcher is
/// checked against).
fn reference_match(pattern: &[u8], path: &[u8]) -> bool {
    let mut pos = vec![0usize];
    for (i, &c) in pattern.iter().enumerate() {
        if c == b'$' && i + 1 == pattern.len() {
            return pos.last() == Some(&path.len());
        }
        if c == b'*' {
            pos = (pos[0]..=path.len()).collect();
        } else {
            pos = pos
                .iter()
                .filter(|&&p| p < path.len() && path[p] == c)
                .map(|p| p + 1)
                .collect();
            if pos.is_empty() {
                return false;
            }
        }
    }
    true
}

fn robots_strategy() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        "(user-agent|User-Agent|useragent|user agent|USER-AGENT)[: ] ?(\\*|trawl|Trawl|other|trawl-x|\\* x|FooBot/1\\.0)",
        "(allow|Allow|disallow|Disallow|disalow|dissallow)[: ] ?/[a-z/*$%0-9A-F?=&ツ]{0,12}",
        "(crawl-delay|Crawl-Delay): ?[0-9.x-]{0,5}",
        "(sitemap|Sitemap): http://[a-z./]{0,10}",
        "# .{0,10}",
        "[a-z]{1,6}: .{0,8}",
        ".{0,16}",
    ];
    let ending = prop_oneof!["\n", "\r\n", "\r"];
    let structured =
        (any::<bool>(), prop::collection::vec((line, ending), 0..25)).prop_map(|(bom, lines)| {
            let mut b = if bom {
                b"\xEF\xBB\xBF".to_vec()
            } else {
                Vec::new()
            };
            for (l, e) in lines {
                b.extend(l.as_bytes());
                b.extend(e.as_bytes());
            }
            b
        });
    prop_oneof![4 => structured, 1 => prop::collection::vec(any::<u8>(), 0..512)]
}

#[test]
fn fuzz_robots_parsing_and_matching() {
    let path = "/[a-z/%0-9A-F?=&*$]{0,16}";
    fuzz("robots", (robots_strategy(), path), |(body, path)| {
        let r = Robots::parse(&body, "trawl");
        let allowed = r.is_allowed(&path);
        // The deciding rule, when there is one, agrees with the answer.
        if let Some(rule) = r.deciding_rule(&path) {
            prop_assert_eq!(rule.allow, allowed);
            prop_assert!(rule.matches(path.as_bytes()));
        }
        Ok(())
    });
    // The fast matcher against the reference, on a small alphabet where
    // wildcards interact the most.
    let pat = "[ab/*]{0,8}\\$?";
    let p = "/[ab/]{0,10}";
    fuzz("robots-matcher", (pat, p), |(pat, path)| {
        let file = format!("user-agent: *\ndisallow: {pat}\n");
        let r = Robots::parse(file.as_bytes(), "trawl");
        let expected = !pat.is_empty() && reference_match(pat.as_bytes(), path.as_bytes());
        prop_assert_eq!(
            !r.is_allowed(&path),
            expected,
            "pattern {:?} path {:?}",
            pat,
            path
        );
        Ok(())
    });
}

#[test]
fn fuzz_command_and_crawlrc_parsing() {
    fuzz("quote", ".{0,30}", |s| {
        let line = format!("set fetch.user_agent {}", quote(&s));
        prop_assert!(!line.contains('\n') && !line.contains('\r'));
        let words = split_words(&line).map_err(TestCaseError::fail)?;
        prop_assert_eq!(words.len(), 3, "{:?}", words);
        prop_assert_eq!(&words[2], &s);
        // A saved line comes back whole through the batch reader.
        let lines = batch::logical_lines(&format!("{line}\n"));
        prop_assert_eq!(lines.len(), 1);
        prop_assert_eq!(
            split_words(&lines[0].1).map_err(TestCaseError::fail)?,
            words
        );
        Ok(())
    });
    let text = prop_oneof![
        prop::collection::vec(
            "(set|seed|crawl|pages|#|source|\\\\|\"|'|[a-z. ]{0,6}|\n|\\\\\n)",
            0..30
        )
        .prop_map(|v| v.concat()),
        ".{0,80}",
    ];
    fuzz("crawlrc", text, |t| {
        for (n, line) in batch::logical_lines(&t) {
            prop_assert!(n >= 1);
            let _ = split_words(&line);
        }
        Ok(())
    });
}

fn expr_strategy() -> impl Strategy<Value = String> {
    let field = prop::sample::select(fields::FIELDS.iter().map(|f| f.name).collect::<Vec<_>>());
    let tok = prop_oneof![
        field.prop_map(str::to_string),
        "(=|!=|<|<=|>|>=|~)",
        "(and|or|not|AND|Or)",
        "\\(|\\)",
        "-?[0-9]{1,5}(\\.[0-9]{1,3})?",
        "[0-9]{1,3}(ms|s|m|h|d)",
        "'[^']{0,6}'|\"[^\"]{0,6}\"",
        "true|false",
        "order by|limit|desc",
        ".{0,4}",
    ];
    prop::collection::vec(tok, 0..30).prop_map(|t| format!("where {}", t.join(" ")))
}

#[test]
fn fuzz_pages_where_parsing() {
    fuzz("pages-where", expr_strategy(), |src| {
        if let Ok(q) = expr::parse_query(&src, 6) {
            let get = |f: &str| match fields::FIELDS.iter().find(|x| x.name == f).map(|x| x.ty) {
                Some(expr::Type::Num) => expr::Val::Num(3.0),
                Some(expr::Type::Bool) => expr::Val::Bool(true),
                _ => expr::Val::Str("论文 x".into()),
            };
            let _ = q.filter.eval(&get, 1e12);
        }
        Ok(())
    });
}

// Regression tests: inputs the fuzzers found, named for what broke.

#[test]
fn regression_a_saved_value_with_a_quote_and_a_hash_reads_back() {
    // `config save` wrote `"\" #"`; the `.crawlrc` comment stripper ended
    // the quote at the escaped `"` and cut the line at ` #`.
    let v = "\" #";
    let lines = batch::logical_lines(&format!("set fetch.user_agent {}\n", quote(v)));
    assert_eq!(split_words(&lines[0].1).unwrap()[2], v);
}

#[test]
fn regression_credentials_are_not_the_host() {
    // `http:// @A/` normalizes to `http://%20@a/`, whose host_of was `%20@a`.
    let u = model::normalize("http:// @A/").unwrap();
    assert_eq!(model::host_of(u.as_str()), u.host());
}

#[test]
fn regression_decoding_an_escape_makes_no_new_escape() {
    // `?%0%61` normalized to `?%0a`, which normalized again to `?%0A`.
    let base = url::Url::parse("http://base.example/dir/page.html").unwrap();
    let r = model::resolve(&base, "://-/?%0%61").unwrap();
    assert_eq!(model::normalize(r.as_str()).unwrap().as_str(), r.as_str());
}
