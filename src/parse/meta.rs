//! `<meta>` directives a crawler acts on: robots (noindex, nofollow) and
//! refresh (a link browsers follow).

use std::borrow::Cow;

use super::html::{PageHead, ParsedPage, collapse, decode_entities, heading};

/// The target of `<meta http-equiv=refresh content="5; url=…">`, which
/// browsers follow like a link.
pub(super) fn meta_refresh(tag: &tl::HTMLTag) -> Option<String> {
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

pub(super) fn meta_robots(tag: &tl::HTMLTag, agent: &str, page: &mut ParsedPage) {
    let Some(name) = attr(tag, "name") else {
        return;
    };
    let name = name.trim();
    if !(name.eq_ignore_ascii_case("robots")
        || (!agent.is_empty() && name.eq_ignore_ascii_case(agent)))
    {
        return;
    }
    let d = robots_directives(&attr(tag, "content").unwrap_or_default(), &[',', ' ']);
    page.noindex |= d.noindex;
    page.nofollow |= d.nofollow;
}

/// `<meta>` names (any case) besides og:title that state a page's title,
/// as trafilatura reads them.
const TITLE_NAMES: [&str; 11] = [
    "twitter:title",
    "citation_title",
    "dc.title",
    "dcterms.title",
    "fb_title",
    "headline",
    "parsely-title",
    "sailthru.title",
    "shareaholic:title",
    "rbtitle",
    "title",
];

/// `<meta>` names (any case) that state a page's author, site name and date.
const AUTHOR_NAMES: [&str; 4] = ["author", "dc.creator", "byl", "article:author"];
const SITE_NAMES: [&str; 2] = ["og:site_name", "application-name"];
const DATE_NAMES: [&str; 11] = [
    "article:published_time",
    "article:modified_time",
    "date",
    "dc.date",
    "dcterms.created",
    "dcterms.modified",
    "datepublished",
    "datemodified",
    "pubdate",
    "publishdate",
    "last-modified",
];

/// The author, site name and date a `<meta>` states (the first of each),
/// by `name`, `property`, `itemprop` or `http-equiv`. Other metas cost no
/// allocation.
pub(super) fn meta_head(tag: &tl::HTMLTag, head: &mut PageHead) {
    let Some(key) = attr(tag, "name")
        .or_else(|| attr(tag, "property"))
        .or_else(|| attr(tag, "itemprop"))
        .or_else(|| attr(tag, "http-equiv"))
    else {
        return;
    };
    // Entities in a name too: `property="og&#x3A;title"` is og:title.
    let key = decode_entities(&key);
    let key = key.trim();
    let is = |names: &[&str]| names.iter().any(|n| key.eq_ignore_ascii_case(n));
    // og:title wins over the other title metas, its last over the first.
    let og = key.eq_ignore_ascii_case("og:title");
    if og || (head.meta_title.is_none() && is(&TITLE_NAMES)) {
        let content = heading(&decode_entities(&attr(tag, "content").unwrap_or_default()));
        if !content.is_empty() {
            *(if og {
                &mut head.og_title
            } else {
                &mut head.meta_title
            }) = Some(content);
        }
        return;
    }
    let slot = if is(&AUTHOR_NAMES) {
        &mut head.author
    } else if is(&SITE_NAMES) {
        &mut head.site_name
    } else if is(&DATE_NAMES) {
        &mut head.date
    } else {
        return;
    };
    if slot.is_some() {
        return;
    }
    let content = collapse(&decode_entities(&attr(tag, "content").unwrap_or_default()));
    // article:author is often a profile URL, not a name.
    let url_author = key.eq_ignore_ascii_case("article:author") && content.starts_with("http");
    if !content.is_empty() && !url_author {
        *slot = Some(content);
    }
}

/// The robots directives a crawler acts on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RobotsDirectives {
    pub noindex: bool,
    pub nofollow: bool,
}

/// The directives in a meta robots `content` (words separated by commas
/// or spaces) or an X-Robots-Tag value (by commas), in any case; `none`
/// is both.
pub fn robots_directives(content: &str, separators: &[char]) -> RobotsDirectives {
    let mut d = RobotsDirectives::default();
    for word in content.split(separators).map(str::trim) {
        if word.eq_ignore_ascii_case("noindex") {
            d.noindex = true;
        } else if word.eq_ignore_ascii_case("nofollow") {
            d.nofollow = true;
        } else if word.eq_ignore_ascii_case("none") {
            (d.noindex, d.nofollow) = (true, true);
        }
    }
    d
}

/// An attribute's value, the name matched case-insensitively.
pub(super) fn attr<'t>(tag: &'t tl::HTMLTag, name: &str) -> Option<Cow<'t, str>> {
    tag.attributes()
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v)
}
