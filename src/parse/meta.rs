//! `<meta>` directives a crawler acts on: robots (noindex, nofollow) and
//! refresh (a link browsers follow).

use super::scan::Tag;
use super::text::{decode_entities, heading};

/// The target of `<meta http-equiv=refresh content="5; url=…">`, which
/// browsers follow like a link.
pub(super) fn meta_refresh(tag: &Tag<'_, '_>) -> Option<String> {
    let equiv = tag.attr("http-equiv")?;
    if !equiv.trim().eq_ignore_ascii_case("refresh") {
        return None;
    }
    let content = tag.attr("content")?;
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

/// The directives of a `<meta name=robots>` tag, or of one named for
/// `agent`; None for any other tag.
pub(super) fn meta_robots(tag: &Tag<'_, '_>, agent: &str) -> Option<RobotsDirectives> {
    let name = tag.attr("name")?.trim();
    if !(name.eq_ignore_ascii_case("robots")
        || (!agent.is_empty() && name.eq_ignore_ascii_case(agent)))
    {
        return None;
    }
    Some(robots_directives(
        tag.attr("content").unwrap_or_default(),
        &[',', ' '],
    ))
}

/// The page's own statements of its title, author and date.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PageHead {
    /// The first `<h1>`'s text.
    pub h1: String,
    /// `<h1>` elements on the page: one is the page's headline.
    pub h1_count: u32,
    /// The first `<h2>`'s text (a page without `<h1>`).
    pub h2: String,
    /// The first `<h1>` or `<h2>` whose class names an article's title
    /// (`entry-title`, `post-title`, `headline`…, or an id `headline`),
    /// else the first whose class or id holds `title`.
    pub titled_heading: String,
    /// 2: the first kind, 1: the second, 0: none.
    pub titled_rank: u8,
    /// `<meta property=og:title>` (the last), else a title `<meta>`
    /// (`twitter:title`, `dc.title`, `citation_title`…, the first).
    pub og_title: Option<String>,
    pub meta_title: Option<String>,
    /// `<meta name=author>` and the like.
    pub author: Option<String>,
    /// `<meta property=og:site_name>`: a `<title>` equal to it is the
    /// site's, not the page's.
    pub site_name: Option<String>,
    /// A published or modified date from `<meta>` or the first `<time
    /// datetime>`, as written.
    pub date: Option<String>,
}

/// Classes of an `<h1>` or `<h2>` that name it the article's title.
const TITLE_CLASSES: [&str; 5] = [
    "post-title",
    "entry-title",
    "article-title",
    "post__title",
    "headline",
];

/// The head's heading slots a heading fills when it ends.
#[derive(Clone, Copy, Default)]
pub(super) struct Slots {
    h1: bool,
    h2: bool,
    /// The rank of the title its class names (see `titled_rank`), 0: none.
    titled: u8,
}

impl PageHead {
    /// The slots an `<h1>` or `<h2>` opening now would fill (None: none
    /// left).
    pub(super) fn heading_slots(&self, tag: &Tag<'_, '_>, name: &str) -> Option<Slots> {
        let (h1, h2) = (name == "h1", name == "h2");
        if !(h1 || h2) {
            return None;
        }
        // The classes trafilatura reads as an article's title.
        let names_title = |a: &str, marks: &[&str]| {
            tag.attr(a)
                .is_some_and(|v| marks.iter().any(|m| v.contains(m)))
        };
        let rank = if names_title("class", &TITLE_CLASSES) || names_title("id", &["headline"]) {
            2
        } else if (names_title("class", &["title"]) || names_title("id", &["title"]))
            && !names_title("class", &["site-title", "site_title"])
        {
            1
        } else {
            0
        };
        let slots = Slots {
            h1: h1 && self.h1.is_empty(),
            h2: h2 && self.h2.is_empty(),
            titled: if rank > self.titled_rank { rank } else { 0 },
        };
        (slots.h1 || slots.h2 || slots.titled > 0).then_some(slots)
    }

    /// A heading read for the head ends with `text`: it fills its slots.
    pub(super) fn fill(&mut self, text: String, slots: Slots) {
        if slots.titled > self.titled_rank && (3..200).contains(&text.chars().count()) {
            self.titled_heading = text.clone();
            self.titled_rank = slots.titled;
        }
        if slots.h2 {
            self.h2 = text.clone();
        }
        if slots.h1 {
            self.h1 = text;
        }
    }
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

/// The title, author, site name and date a `<meta>` states (the first of
/// each; og:title's last), each cut to a heading's length,
/// by `name`, `property`, `itemprop` or `http-equiv`. Other metas cost no
/// allocation.
pub(super) fn meta_head(tag: &Tag<'_, '_>, head: &mut PageHead) {
    let Some(key) = tag
        .attr("name")
        .or_else(|| tag.attr("property"))
        .or_else(|| tag.attr("itemprop"))
        .or_else(|| tag.attr("http-equiv"))
    else {
        return;
    };
    // Entities in a name too: `property="og&#x3A;title"` is og:title.
    let key = decode_entities(key);
    let key = key.trim();
    let is = |names: &[&str]| names.iter().any(|n| key.eq_ignore_ascii_case(n));
    // og:title wins over the other title metas, its last over the first.
    let og = key.eq_ignore_ascii_case("og:title");
    if og || (head.meta_title.is_none() && is(&TITLE_NAMES)) {
        let content = heading(&decode_entities(tag.attr("content").unwrap_or_default()));
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
    let content = heading(&decode_entities(tag.attr("content").unwrap_or_default()));
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
