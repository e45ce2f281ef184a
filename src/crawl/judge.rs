//! Whether a page's link is followed: the page's nofollow, the link's own
//! rel=nofollow, the page verdict, then the link filters (domain, link
//! type). The crawl and `refilter` judge links with the same function.

use std::borrow::Cow;

use crate::filter::links::LinkType;
use crate::filter::{Filters, PageVerdict};
use crate::model::UrlId;
use crate::schema::{FilterReason, LinkView};

/// What a link's judgement depends on besides the link itself.
#[derive(Clone, Copy)]
pub(super) struct LinkJudge<'a> {
    pub filters: &'a Filters,
    pub follow_nofollow: bool,
}

/// The parts of a link its judgement reads.
#[derive(Clone, Copy)]
pub(super) struct LinkText<'a> {
    pub nofollow: bool,
    pub before: &'a str,
    pub anchor: &'a str,
    pub after: &'a str,
}

/// Whether a link is followed, why, and the numbers that decided it.
pub(super) struct LinkDecision<'v> {
    /// `follow`, or the reason it is not (`nofollow`, `page:<verdict>`,
    /// `domain`, `link-type`).
    pub why: &'static str,
    pub detail: Cow<'v, str>,
    /// The filter to record on the target when a link filter dropped it.
    pub forced: Option<FilterReason>,
}

impl LinkDecision<'_> {
    pub fn follows(&self) -> bool {
        self.why == "follow"
    }

    /// Whether a stored link of this `kind` says something else.
    pub fn differs(&self, kind: LinkType, stored: &LinkView<'_>) -> bool {
        stored.link_type != kind.name()
            || stored.verdict != self.why
            || stored.verdict_detail != self.detail
    }
}

/// Judges a link of type `kind` on a page judged `verdict`.
pub(super) fn judge_link<'v>(
    judge: LinkJudge<'_>,
    kind: LinkType,
    ids: (UrlId, UrlId),
    dst_host: Option<&str>,
    page_nofollow: bool,
    verdict: &'v PageVerdict,
    link: LinkText<'_>,
) -> LinkDecision<'v> {
    let decided = |why, detail, forced| LinkDecision {
        why,
        detail,
        forced,
    };
    // The most basic reason first; the link policy runs only when the page
    // itself lets its links be followed.
    if page_nofollow {
        decided("page:nofollow", Cow::Borrowed(""), None)
    } else if link.nofollow && !judge.follow_nofollow {
        decided("nofollow", Cow::Borrowed(""), None)
    } else if !verdict.follow {
        let why = match verdict.verdict {
            "topic" => "page:topic",
            "relevance" => "page:relevance",
            _ => "page:filtered",
        };
        decided(why, Cow::Borrowed(verdict.detail.as_str()), None)
    } else {
        let judged = judge.filters.link(
            kind,
            (ids.0.0, ids.1.0),
            dst_host,
            [link.before, link.anchor, link.after],
            verdict,
        );
        match judged.dropped_by {
            Some(by) => {
                let reason = if by == "domain" {
                    FilterReason::Domain
                } else {
                    FilterReason::LinkType
                };
                decided(by, Cow::Owned(judged.detail), Some(reason))
            }
            None => decided("follow", Cow::Borrowed(""), None),
        }
    }
}
