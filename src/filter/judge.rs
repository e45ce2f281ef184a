//! Whether a page's link is followed — the one decision the crawl and
//! `refilter` both call: the page's nofollow, the link's own rel=nofollow,
//! the page verdict, then the link filters (domain, link type).

use std::borrow::Cow;

use super::links::LinkType;
use super::{Filters, PageVerdict};
use crate::model::{LinkVerdict, UrlId, Verdict};

/// What a link's judgement depends on besides the link itself.
#[derive(Clone, Copy)]
pub struct LinkJudge<'a> {
    pub filters: &'a Filters,
    pub follow_nofollow: bool,
    /// Soft focus (`crawl.focus soft`): links of a page the page filters
    /// dropped are judged as a kept page's (and queued behind the rest).
    pub soft_focus: bool,
    /// The page is a seed and `crawl.follow_seed_links` is on: the user
    /// said to start here, so its links are judged as a kept page's
    /// whatever its own verdict.
    pub seed: bool,
}

/// The parts of a link its judgement reads.
#[derive(Clone, Copy)]
pub struct LinkText<'a> {
    pub nofollow: bool,
    pub before: &'a str,
    pub anchor: &'a str,
    pub after: &'a str,
}

/// Whether a link is followed, why, and the numbers that decided it.
pub struct LinkDecision<'v> {
    pub verdict: LinkVerdict,
    pub detail: Cow<'v, str>,
}

impl LinkDecision<'_> {
    pub fn follows(&self) -> bool {
        self.verdict.follows()
    }
}

/// Judges a link of type `kind` from page `ids.0` to `ids.1` on a page
/// judged `verdict`; `dst_host` is needed only by the domain filter.
pub fn judge_link<'v>(
    judge: LinkJudge<'_>,
    kind: LinkType,
    ids: (UrlId, UrlId),
    dst_host: Option<&str>,
    page_nofollow: bool,
    verdict: &'v PageVerdict,
    link: LinkText<'_>,
) -> LinkDecision<'v> {
    let decided = |verdict, detail| LinkDecision { verdict, detail };
    // The most basic reason first; the link policy runs only when the page
    // itself lets its links be followed (or is a seed, or focus is soft).
    if page_nofollow {
        decided(LinkVerdict::PageNofollow, Cow::Borrowed(""))
    } else if link.nofollow && !judge.follow_nofollow {
        decided(LinkVerdict::Nofollow, Cow::Borrowed(""))
    } else if !verdict.follow && !judge.soft_focus && !judge.seed {
        let why = LinkVerdict::of_page(verdict.verdict);
        decided(why, Cow::Borrowed(verdict.detail.as_str()))
    } else {
        // Under soft focus, and on a seed, a dropped page's links are
        // judged as a kept one's.
        let source_relevant = verdict.verdict == Verdict::Keep || !verdict.follow;
        let judged = judge.filters.link(
            kind,
            (ids.0.0, ids.1.0),
            dst_host,
            [link.before, link.anchor, link.after],
            source_relevant,
        );
        match judged.dropped_by {
            Some(by) => decided(by, Cow::Owned(judged.detail)),
            None => decided(LinkVerdict::Follow, Cow::Borrowed("")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{FilterSettings, Mode};

    fn judge(f: &Filters, page: &PageVerdict, nofollow: (bool, bool), host: &str) -> LinkVerdict {
        judge_as(f, page, nofollow, host, false)
    }

    fn judge_as(
        f: &Filters,
        page: &PageVerdict,
        nofollow: (bool, bool),
        host: &str,
        seed: bool,
    ) -> LinkVerdict {
        let j = LinkJudge {
            filters: f,
            follow_nofollow: false,
            soft_focus: false,
            seed,
        };
        let text = LinkText {
            nofollow: nofollow.1,
            before: "",
            anchor: "",
            after: "",
        };
        let ids = (UrlId(1), UrlId(2));
        judge_link(
            j,
            LinkType::Outward,
            ids,
            Some(host),
            nofollow.0,
            page,
            text,
        )
        .verdict
    }

    #[test]
    fn reasons_come_in_order_page_link_verdict_filters() {
        let s = FilterSettings {
            mode: Mode::Domain,
            ..FilterSettings::default()
        };
        let f = Filters::new(&s, ["www.uestc.edu.cn"]);
        let keep = f.page("www.uestc.edu.cn", "", "");
        assert_eq!(
            judge(&f, &keep, (true, true), "x.org"),
            LinkVerdict::PageNofollow
        );
        assert_eq!(
            judge(&f, &keep, (false, true), "x.org"),
            LinkVerdict::Nofollow
        );
        assert_eq!(
            judge(&f, &keep, (false, false), "x.org"),
            LinkVerdict::Domain
        );
        assert_eq!(
            judge(&f, &keep, (false, false), "lib.uestc.edu.cn"),
            LinkVerdict::Follow
        );
        let off = PageVerdict {
            follow: false,
            verdict: Verdict::Topic,
            ..keep
        };
        assert_eq!(
            judge(&f, &off, (false, false), "lib.uestc.edu.cn"),
            LinkVerdict::PageTopic
        );
        // A seed's links pass its own verdict, not the link filters or a
        // nofollow.
        let seed = |nofollow, host| judge_as(&f, &off, nofollow, host, true);
        assert_eq!(
            seed((false, false), "lib.uestc.edu.cn"),
            LinkVerdict::Follow
        );
        assert_eq!(seed((false, false), "x.org"), LinkVerdict::Domain);
        assert_eq!(
            seed((true, false), "lib.uestc.edu.cn"),
            LinkVerdict::PageNofollow
        );
        assert_eq!(
            seed((false, true), "lib.uestc.edu.cn"),
            LinkVerdict::Nofollow
        );
    }
}
