//! The table of robots.txt cases: each row is a file, our product token, a
//! URL (normalized as the crawl normalizes every URL) or a path (matched as
//! given) and whether it may be fetched. Rows come from RFC 9309's text and Google's documented
//! matching behaviour, grouped by what they exercise.
//!
//! Deliberate deviations from Google's parser, each allowed by the RFC:
//! - URLs are matched in their normalized spelling: `http://h/ツ` and
//!   `http://h/%E3%83%84` are one URL (RFC 9309 2.2.2: octets outside
//!   US-ASCII MUST be percent-encoded before comparison), and `%62%61%7A`
//!   in a rule equals `baz` in a path (2.2.2: percent-encoded unreserved
//!   octets MUST be decoded before comparison); Google compares bytes.
//! - Our product token is the User-Agent header up to the first `/` or
//!   space (`Foo Bar/1.0` is `Foo`); Google matches nothing for an agent
//!   that is not a valid token (2.2.1 defines the token as the name a
//!   crawler sets; the header is where it sets it).
//! - `Crawl-delay` is read (from the group that applies), which Google
//!   ignores (2.2.4: crawlers MAY interpret other records).

use super::rules::{MAX_LINE_BYTES, Robots};

struct Case {
    id: &'static str,
    robots: &'static str,
    agent: &'static str,
    url: &'static str,
    allowed: bool,
}

const fn c(
    id: &'static str,
    robots: &'static str,
    agent: &'static str,
    url: &'static str,
    allowed: bool,
) -> Case {
    Case {
        id,
        robots,
        agent,
        url,
        allowed,
    }
}

const FOO_X: &str = "user-agent: FooBot\ndisallow: /\nallow: /x/\n";
const GROUPS: &str = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\n\
user-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\n\
user-agent: FooBot\nallow: /z/\ndisallow: /\n";
const FISH: &str = "user-agent: FooBot\ndisallow: /\nallow: /fish\n";
const FISH_DIR: &str = "user-agent: FooBot\ndisallow: /\nallow: /fish/\n";
const PHP: &str = "user-agent: FooBot\ndisallow: /\nallow: /*.php\n";
const PHP_END: &str = "user-agent: FooBot\ndisallow: /\nallow: /*.php$\n";
const INDEX: &str = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n";
const UTF8: &str = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n";

#[rustfmt::skip]
static CASES: &[Case] = &[
    // Empty and missing content.
    c("empty file", "", "FooBot", "http://h/x", true),
    c("only comments", "# nothing\n#\n", "FooBot", "http://h/x", true),
    c("no groups at all", "disallow: /\n", "FooBot", "http://h/x", true),
    // Line syntax (RFC 2.1; Google accepts a missing colon).
    c("colon", "user-agent: FooBot\ndisallow: /\n", "FooBot", "http://h/x/y", false),
    c("no colon, two words", "user-agent FooBot\ndisallow /\n", "FooBot", "http://h/x/y", false),
    c("no colon, three words ignored", "user-agent FooBot\ndisallow / x\n", "FooBot", "http://h/x", true),
    c("unknown keys", "foo: FooBot\nbar: /\n", "FooBot", "http://h/x/y", true),
    c("space before colon", "user-agent : FooBot\ndisallow : /x\n", "FooBot", "http://h/x", false),
    c("tabs around value", "user-agent:\tFooBot\t\ndisallow:\t/x\t\n", "FooBot", "http://h/x", false),
    c("keys upper case", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", "FooBot", "http://h/x/y", true),
    c("keys upper case, disallowed", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", "FooBot", "http://h/a/b", false),
    c("keys camel case", "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", "FooBot", "http://h/a", false),
    c("typo useragent", "useragent: FooBot\ndisallow: /\n", "FooBot", "http://h/x", false),
    c("typo user agent", "user agent: FooBot\ndisallow: /\n", "FooBot", "http://h/x", false),
    c("typo disalow", "user-agent: FooBot\ndisalow: /\n", "FooBot", "http://h/x", false),
    c("typo dissallow", "user-agent: FooBot\ndissallow: /\n", "FooBot", "http://h/x", false),
    c("typo diasllow", "user-agent: FooBot\ndiasllow: /\n", "FooBot", "http://h/x", false),
    // Comments (RFC 2.2.3).
    c("comment line", "User-agent: FooBot\n# Disallow: /\nAllow: /\n", "FooBot", "http://h/foo/bar", true),
    c("comment ends the pattern", "User-agent: FooBot\nDisallow: /foo/quz#qux\nAllow: /\n", "FooBot", "http://h/foo/quz", false),
    c("comment after agent", "User-agent: FooBot # ours\nDisallow: /x\n", "FooBot", "http://h/x", false),
    // Line endings and byte-order marks.
    c("CRLF", "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n", "bar", "http://h/page", false),
    c("CR only", "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r", "bar", "http://h/page", false),
    c("CR only, other group", "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r", "foo", "http://h/page", true),
    c("mixed endings", "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /", "bar", "http://h/page", false),
    c("no final newline", "User-Agent: foo\nDisallow: /x", "foo", "http://h/x", false),
    c("BOM", "\u{FEFF}User-Agent: foo\nDisallow: /AnyValue\n", "foo", "http://h/AnyValue", false),
    // Groups (RFC 2.1, 2.2.1).
    c("groups: FooBot /x", GROUPS, "FooBot", "http://h/x/b", true),
    c("groups: repeated agent merges /z", GROUPS, "FooBot", "http://h/z/d", true),
    c("groups: FooBot /y", GROUPS, "FooBot", "http://h/y/c", false),
    c("groups: BarBot /y", GROUPS, "BarBot", "http://h/y/c", true),
    c("groups: BarBot /w joins its group", GROUPS, "BarBot", "http://h/w/a", true),
    c("groups: BarBot /z", GROUPS, "BarBot", "http://h/z/d", false),
    c("groups: BazBot shares FooBot's group", GROUPS, "BazBot", "http://h/z/d", true),
    c("groups: rules before any agent ignored", GROUPS, "FooBot", "http://h/foo/bar/", false),
    c("consecutive agents share rules", "user-agent: a\nuser-agent: FooBot\nuser-agent: b\ndisallow: /x\n", "FooBot", "http://h/x", false),
    c("an empty group falls through", "user-agent: FooBot\nuser-agent: BarBot\ndisallow: /x\n", "FooBot", "http://h/x", false),
    c("a specific group hides *", "user-agent: *\ndisallow: /\nuser-agent: FooBot\nallow: /\n", "FooBot", "http://h/x", true),
    c("* when no group matches", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", "BarBot", "http://h/x", true),
    c("* disallows others", "user-agent: *\ndisallow: /\nuser-agent: FooBot\nallow: /\n", "BarBot", "http://h/x", false),
    c("only other agents", "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\n", "QuxBot", "http://h/x/y", true),
    c("specific group without rules", "user-agent: *\ndisallow: /\nuser-agent: FooBot\n", "FooBot", "http://h/x", true),
    c("specific group, *'s rule not merged", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://h/x/page", true),
    c("specific group, own rule", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://h/y/page", false),
    c("* followed by words is global", "user-agent: * everyone\ndisallow: /x\n", "FooBot", "http://h/x", false),
    c("*bot is not global", "user-agent: *bot\ndisallow: /x\n", "FooBot", "http://h/x", true),
    c("two * groups merge", "user-agent: *\ndisallow: /a\nuser-agent: *\ndisallow: /b\n", "FooBot", "http://h/b", false),
    // Google: only a rule ends a run of user-agent lines.
    c("crawl-delay does not end a run of agents", "user-agent: FooBot\ncrawl-delay: 1\nuser-agent: BarBot\ndisallow: /x\n", "FooBot", "http://h/x", false),
    c("sitemap does not end a run of agents", "user-agent: FooBot\nsitemap: http://h/s.xml\nuser-agent: BarBot\ndisallow: /x\n", "FooBot", "http://h/x", false),
    c("sitemap between BarBot and *", "User-agent: BarBot\nSitemap: https://h/sitemap.xml\nUser-agent: *\nDisallow: /\n", "BarBot", "http://h/x", false),
    c("unknown line between BarBot and *", "User-agent: BarBot\nfoo: bar\nUser-agent: *\nDisallow: /\n", "BarBot", "http://h/x", false),
    c("a rule ends the run", "User-agent: BarBot\nAllow: /\nUser-agent: *\nDisallow: /\n", "BarBot", "http://h/x", true),
    c("blank lines do not end a group", "user-agent: FooBot\n\n\ndisallow: /x\n", "FooBot", "http://h/x", false),
    // The user-agent line's product token (RFC 2.2.1; Google: up to the
    // first character outside [A-Za-z_-]).
    c("agent names are case-insensitive", FOO_X, "foobot", "http://h/a", false),
    c("agent FOO BAR names FOO", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", "Foo", "http://h/x/y", true),
    c("agent foo bar names foo", "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n", "Foo", "http://h/a/b", false),
    c("agent FoO bAr vs foo", "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n", "foo", "http://h/x/y", true),
    c("agent Foo Bar is not FooBar", "User-Agent: Foo Bar\nDisallow: /\n", "FooBar", "http://h/x", true),
    c("agent with version", "User-agent: FooBot/2.1\nDisallow: /x\n", "FooBot", "http://h/x", false),
    c("our agent up to a space", "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n", "Foo", "http://h/x/y", true),
    c("agent with underscore and hyphen", "User-agent: Foo_Bot-2\nDisallow: /x\n", "foo_bot-", "http://h/x", false),
    c("agent prefix is not a match", "User-agent: Foo\nDisallow: /x\n", "FooBot", "http://h/x", true),
    // Longest match (RFC 2.2.2).
    c("longer disallow wins", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot", "http://h/x/page.html", false),
    c("longer allow wins", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://h/x/page.html", true),
    c("longer allow, other path", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "http://h/x/", false),
    c("tie: empty patterns", "user-agent: FooBot\ndisallow: \nallow: \n", "FooBot", "http://h/x/page.html", true),
    c("tie: allow wins", "user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot", "http://h/x", true),
    c("tie: same path", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot", "http://h/x/page.html", true),
    c("/x vs /x/, no slash", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://h/x", false),
    c("/x vs /x/, slash", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "http://h/x/", true),
    c("wildcard length counts", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://h/page.html", false),
    c("wildcard shorter loses", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "http://h/page", true),
    c("allow /x/page. beats /*.html", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "http://h/x/page.html", true),
    c("empty disallow allows all", "user-agent: FooBot\ndisallow:\n", "FooBot", "http://h/x", true),
    c("order of lines does not matter", "user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot", "http://h/page", true),
    c("same length, allow wins (folder)", "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot", "http://h/folder/page", true),
    c("allow /$ only the root", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://h/", true),
    c("allow /$ not a page", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "http://h/page.html", false),
    // Paths are case-sensitive; queries are part of the path.
    c("case-sensitive path", "user-agent: FooBot\ndisallow: /x/\n", "FooBot", "http://h/x/y", false),
    c("case-sensitive path, other case", "user-agent: FooBot\ndisallow: /X/\n", "FooBot", "http://h/x/y", true),
    c("query matched", "user-agent: FooBot\ndisallow: /search?q=\n", "FooBot", "http://h/search?q=x", false),
    c("query with a URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot", "http://h/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true),
    c("fragment is not matched", "user-agent: FooBot\ndisallow: /a$\n", "FooBot", "http://h/a#frag", false),
    // Google's documentation: "URL matching based on path values".
    c("/fish vs /bar", FISH, "FooBot", "http://h/bar", false),
    c("/fish", FISH, "FooBot", "http://h/fish", true),
    c("/fish.html", FISH, "FooBot", "http://h/fish.html", true),
    c("/fish/salmon.html", FISH, "FooBot", "http://h/fish/salmon.html", true),
    c("/fishheads", FISH, "FooBot", "http://h/fishheads", true),
    c("/fish.html?id=anything", FISH, "FooBot", "http://h/fish.html?id=anything", true),
    c("/Fish.asp", FISH, "FooBot", "http://h/Fish.asp", false),
    c("/catfish", FISH, "FooBot", "http://h/catfish", false),
    c("/?id=fish", FISH, "FooBot", "http://h/?id=fish", false),
    c("/fish* equals /fish", "user-agent: FooBot\ndisallow: /\nallow: /fish*\n", "FooBot", "http://h/fishheads/yummy.html", true),
    c("/fish/ vs /fish/?salmon", FISH_DIR, "FooBot", "http://h/fish/?salmon", true),
    c("/fish/ vs /fish", FISH_DIR, "FooBot", "http://h/fish", false),
    c("/fish/ vs /Fish/Salmon.html", FISH_DIR, "FooBot", "http://h/Fish/Salmon.html", false),
    c("/*.php: /filename.php", PHP, "FooBot", "http://h/filename.php", true),
    c("/*.php: /folder/filename.php?parameters", PHP, "FooBot", "http://h/folder/filename.php?parameters", true),
    c("/*.php: //folder/any.php.file.html", PHP, "FooBot", "http://h//folder/any.php.file.html", true),
    c("/*.php: path //folder/any.php.file.html", PHP, "FooBot", "//folder/any.php.file.html", true),
    c("/*.php: /index?f=filename.php/", PHP, "FooBot", "http://h/index?f=filename.php/", true),
    c("/*.php: /php/", PHP, "FooBot", "http://h/php/", false),
    c("/*.php: /windows.PHP", PHP, "FooBot", "http://h/windows.PHP", false),
    c("/*.php$: /filename.php", PHP_END, "FooBot", "http://h/folder/filename.php", true),
    c("/*.php$: with parameters", PHP_END, "FooBot", "http://h/filename.php?parameters", false),
    c("/*.php$: /filename.php5", PHP_END, "FooBot", "http://h/filename.php5", false),
    c("/*.php$: /filename.php/", PHP_END, "FooBot", "http://h/filename.php/", false),
    c("/fish*.php", "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n", "FooBot", "http://h/fishheads/catfish.php?parameters", true),
    c("/fish*.php vs /Fish.PHP", "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n", "FooBot", "http://h/Fish.PHP", false),
    // Special characters (RFC 2.2.3).
    c("* in the middle", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://h/foo/bar/quz", false),
    c("* matches an empty segment", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "FooBot", "http://h/foo//quz", true),
    c("$ anchors the end", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://h/foo/bar", false),
    c("$ does not match longer", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", "FooBot", "http://h/foo/bar/", true),
    c("$ inside a pattern is literal", "User-agent: FooBot\nDisallow: /a$b\n", "FooBot", "http://h/a$b", false),
    c("many stars", "User-agent: FooBot\nDisallow: /*a*b*c\n", "FooBot", "http://h/xaybzc", false),
    c("many stars, wrong order", "User-agent: FooBot\nDisallow: /*a*b*c\n", "FooBot", "http://h/xcybza", true),
    // Percent-encoding (RFC 2.2.2).
    c("UTF-8 rule, encoded URL", UTF8, "FooBot", "http://h/foo/bar/%E3%83%84", true),
    c("UTF-8 rule, UTF-8 URL", UTF8, "FooBot", "http://h/foo/bar/ツ", true),
    c("encoded rule, UTF-8 URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "http://h/foo/bar/ツ", true),
    c("lower-case escapes in the rule", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%e3%83%84\n", "FooBot", "http://h/foo/bar/%E3%83%84", true),
    c("lower-case escapes in the URL", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "http://h/foo/bar/%e3%83%84", true),
    c("unreserved escapes decoded", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "http://h/foo/bar/baz", true),
    c("tilde both ways", "User-agent: FooBot\nDisallow: /%7Euser\n", "FooBot", "http://h/~user/x", false),
    c("%2F is not a slash", "User-agent: FooBot\nDisallow: /a%2Fb\n", "FooBot", "http://h/a/b", true),
    c("%2F matches %2f", "User-agent: FooBot\nDisallow: /a%2Fb\n", "FooBot", "http://h/a%2fb", false),
    c("space in a rule", "User-agent: FooBot\nDisallow: /a b\n", "FooBot", "http://h/a%20b", false),
    c("non-ASCII query", "User-agent: FooBot\nDisallow: /s?q=中\n", "FooBot", "http://h/s?q=%E4%B8%AD", false),
    // Google: an allowed index.html allows its directory.
    c("index.html allows the directory", INDEX, "foobot", "http://h/allowed-slash/", true),
    c("index.html: index.htm is not it", INDEX, "foobot", "http://h/allowed-slash/index.htm", false),
    c("index.html itself", INDEX, "foobot", "http://h/allowed-slash/index.html", true),
    c("index.html: other URLs", INDEX, "foobot", "http://h/anyother-url", false),
    c("index.html: not below", INDEX, "foobot", "http://h/allowed-slash/x", false),
];

#[test]
fn the_case_table_agrees() {
    assert!(CASES.len() >= 80, "{} cases", CASES.len());
    let mut failed = Vec::new();
    for case in CASES {
        // A row's URL is normalized as the crawl does; a path is matched
        // as given.
        let path = match case.url.starts_with('/') {
            true => case.url.to_string(),
            false => crate::model::normalize(case.url)
                .unwrap_or_else(|e| panic!("{}: bad URL {}: {e}", case.id, case.url))
                .path_and_query()
                .to_string(),
        };
        let robots = Robots::parse(case.robots.as_bytes(), case.agent);
        if robots.is_allowed(&path) != case.allowed {
            failed.push(format!(
                "{}: {} is {}",
                case.id,
                path,
                if case.allowed {
                    "allowed"
                } else {
                    "disallowed"
                }
            ));
        }
    }
    assert!(failed.is_empty(), "expected:\n{}", failed.join("\n"));
}

/// Byte-level cases a `&str` table cannot hold: partial and broken BOMs,
/// lines over the length limit, long URLs.
#[test]
fn boms_long_lines_and_long_urls() {
    let parse = |b: &[u8]| Robots::parse(b, "foo");
    let rest = b"User-Agent: foo\nDisallow: /AnyValue\n";
    for bom in [&b"\xEF\xBB\xBF"[..], b"\xEF\xBB", b"\xEF"] {
        let r = parse(&[bom, rest].concat());
        assert!(!r.is_allowed("/AnyValue"), "BOM prefix {bom:?} skipped");
    }
    // A broken BOM spoils the first line only.
    let r = parse(&[&b"\xEF\x11\xBF"[..], rest].concat());
    assert!(r.is_allowed("/AnyValue"));
    let r = parse(b"\xEF\x11\xBFUser-Agent: foo\nUser-Agent: foo\nDisallow: /x\n");
    assert!(!r.is_allowed("/x"));
    // A BOM inside the file is garbage on its line.
    let r = parse(b"User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\nDisallow: /y\n");
    assert!(r.is_allowed("/AnyValue") && !r.is_allowed("/y"));

    // A line is cut at MAX_LINE_BYTES: the rule is what is left.
    let head = "disallow: ";
    let long = format!("/x/{}", "a".repeat(MAX_LINE_BYTES - head.len() - 4));
    let file = format!("user-agent: foo\n{head}{long}/qux\n");
    let r = parse(file.as_bytes());
    assert!(r.is_allowed("/fux"));
    assert!(
        !r.is_allowed(&format!("{long}/fux")),
        "the cut rule still applies"
    );
    assert_eq!(r.rules()[0].written.len(), MAX_LINE_BYTES - head.len());

    // A long URL against a long wildcard rule.
    let url = format!("/{}/end", "seg/".repeat(500));
    let r = parse(
        format!(
            "user-agent: foo\ndisallow: /*seg/seg*end$\nallow: /{}\n",
            "seg/".repeat(3)
        )
        .as_bytes(),
    );
    assert!(!r.is_allowed(&url));
    assert!(r.is_allowed(&format!("{url}x")));
}

#[test]
fn crawl_delay_and_sitemaps_come_from_the_right_places() {
    let file = "Sitemap: http://h/one.xml\nuser-agent: *\ncrawl-delay: 9\n\
                user-agent: FooBot\ncrawl-delay: 2.5\ndisallow: /x\nsitemap: http://h/two.xml\n\
                user-agent: BarBot\ncrawl-delay: soon\n";
    let ours = Robots::parse(file.as_bytes(), "foobot");
    assert_eq!(
        ours.crawl_delay(),
        Some(std::time::Duration::from_millis(2500))
    );
    assert!(ours.has_specific_group());
    assert_eq!(ours.sitemaps(), ["http://h/one.xml", "http://h/two.xml"]);
    let other = Robots::parse(file.as_bytes(), "QuxBot");
    assert_eq!(other.crawl_delay(), Some(std::time::Duration::from_secs(9)));
    assert!(!other.has_specific_group());
    assert_eq!(Robots::parse(file.as_bytes(), "BarBot").crawl_delay(), None);
    let r = Robots::parse(file.as_bytes(), "FooBot");
    let rule = r.deciding_rule("/x/y").expect("a rule decides");
    assert_eq!(
        (rule.describe(), rule.line),
        ("Disallow: /x".to_string(), 6)
    );
}
