//! The filters' verdicts, as types: what became of a page ([`Verdict`]),
//! of each of its links ([`LinkVerdict`]), and what kind of link it is
//! ([`LinkType`], document 001). They are stored as one-byte tags (schema
//! 8), so a variant is only ever added at the end; `name` is how the shell
//! and older records spell them.

use serde::{Deserialize, Serialize};

use super::FilterReason;

/// Whether the page filters passed a page.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord,
)]
pub enum Verdict {
    /// Passed (also every page when no page filter runs).
    #[default]
    Keep,
    /// Off-domain and below the topic threshold (document 000, stage 2).
    Topic,
    /// Cosine relevance below r (document 001).
    Relevance,
}

impl Verdict {
    pub const ALL: [Verdict; 3] = [Verdict::Keep, Verdict::Topic, Verdict::Relevance];

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Keep => "keep",
            Verdict::Topic => "topic",
            Verdict::Relevance => "relevance",
        }
    }

    /// A stored or typed name; "" (records before verdicts) is `keep`.
    pub fn from_name(name: &str) -> Option<Verdict> {
        match name {
            "" => Some(Verdict::Keep),
            _ => Verdict::ALL.into_iter().find(|v| v.name() == name),
        }
    }

    /// The `filtered` counter a page with this verdict adds to (none for
    /// `keep`).
    pub fn counter(self) -> Option<&'static str> {
        match self {
            Verdict::Keep => None,
            Verdict::Topic => Some("page-topic"),
            Verdict::Relevance => Some("page-relevance"),
        }
    }
}

/// Whether a link is followed, or the first reason it is not.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LinkVerdict {
    /// Stored before links had verdicts (link records of version 1).
    #[default]
    Unjudged,
    Follow,
    /// The link is rel=nofollow.
    Nofollow,
    /// The page says nofollow (meta robots or X-Robots-Tag).
    PageNofollow,
    /// The page's verdict is `topic`.
    PageTopic,
    /// The page's verdict is `relevance`.
    PageRelevance,
    /// The page's links are not followed for another page verdict.
    PageFiltered,
    /// The target's host holds no key domain (document 000, stage 1).
    Domain,
    /// The link-type policy dropped it (document 001).
    LinkType,
}

impl LinkVerdict {
    pub const ALL: [LinkVerdict; 9] = [
        LinkVerdict::Unjudged,
        LinkVerdict::Follow,
        LinkVerdict::Nofollow,
        LinkVerdict::PageNofollow,
        LinkVerdict::PageTopic,
        LinkVerdict::PageRelevance,
        LinkVerdict::PageFiltered,
        LinkVerdict::Domain,
        LinkVerdict::LinkType,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LinkVerdict::Unjudged => "",
            LinkVerdict::Follow => "follow",
            LinkVerdict::Nofollow => "nofollow",
            LinkVerdict::PageNofollow => "page:nofollow",
            LinkVerdict::PageTopic => "page:topic",
            LinkVerdict::PageRelevance => "page:relevance",
            LinkVerdict::PageFiltered => "page:filtered",
            LinkVerdict::Domain => "domain",
            LinkVerdict::LinkType => "link-type",
        }
    }

    pub fn from_name(name: &str) -> Option<LinkVerdict> {
        LinkVerdict::ALL.into_iter().find(|v| v.name() == name)
    }

    pub fn follows(self) -> bool {
        self == LinkVerdict::Follow
    }

    /// The verdict of a link on a page whose own verdict stops its links.
    pub fn of_page(v: Verdict) -> LinkVerdict {
        match v {
            Verdict::Topic => LinkVerdict::PageTopic,
            Verdict::Relevance => LinkVerdict::PageRelevance,
            Verdict::Keep => LinkVerdict::PageFiltered,
        }
    }

    /// What the target of a link a link filter dropped is recorded as
    /// (its `seen` verdict); None for the other reasons.
    pub fn filtered_as(self) -> Option<FilterReason> {
        match self {
            LinkVerdict::Domain => Some(FilterReason::Domain),
            LinkVerdict::LinkType => Some(FilterReason::LinkType),
            _ => None,
        }
    }
}

/// Document 001's link types, from the URL paths of source p and target q.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LinkType {
    /// q is below p's directory.
    Downward,
    /// q is above p's directory (an ancestor directory).
    Upward,
    /// q is in p's directory.
    Horizontal,
    /// Same site, another branch.
    Crosswise,
    /// Another site.
    Outward,
}

impl LinkType {
    pub const ALL: [LinkType; 5] = [
        LinkType::Downward,
        LinkType::Upward,
        LinkType::Horizontal,
        LinkType::Crosswise,
        LinkType::Outward,
    ];

    pub fn parse(name: &str) -> Option<LinkType> {
        LinkType::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            LinkType::Downward => "downward",
            LinkType::Upward => "upward",
            LinkType::Horizontal => "horizontal",
            LinkType::Crosswise => "crosswise",
            LinkType::Outward => "outward",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_tags_are_one_byte() {
        for v in Verdict::ALL {
            assert_eq!(Verdict::from_name(v.name()), Some(v));
            assert_eq!(postcard::to_stdvec(&v).unwrap().len(), 1);
        }
        for v in LinkVerdict::ALL {
            assert_eq!(LinkVerdict::from_name(v.name()), Some(v));
            assert_eq!(postcard::to_stdvec(&v).unwrap().len(), 1);
        }
        for t in LinkType::ALL {
            assert_eq!(LinkType::parse(t.name()), Some(t));
        }
        assert_eq!(Verdict::from_name(""), Some(Verdict::Keep));
        assert_eq!(Verdict::from_name("page-topic"), None);
        // The tags are the variants' places: stored, so never reordered.
        assert_eq!(postcard::to_stdvec(&LinkVerdict::Follow).unwrap(), [1]);
        assert_eq!(postcard::to_stdvec(&Verdict::Relevance).unwrap(), [2]);
        assert_eq!(postcard::to_stdvec(&LinkType::Outward).unwrap(), [4]);
    }
}
