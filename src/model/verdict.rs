//! The filters' verdicts, as types: what became of a page ([`Verdict`]),
//! of each of its links ([`LinkVerdict`]), and what kind of link it is
//! ([`LinkType`], document 001). They are stored as one-byte tags (schema
//! 8), so a variant is only ever added at the end; `name` is how the shell
//! and older records spell them.

use serde::{Deserialize, Serialize};

use super::{FilterReason, named_enum};

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

named_enum!(Verdict {
    Keep => "keep",
    Topic => "topic",
    Relevance => "relevance",
});

impl Verdict {
    /// A stored name; "" (records before verdicts) is `keep`.
    pub fn from_stored(name: &str) -> Option<Verdict> {
        match name {
            "" => Some(Verdict::Keep),
            _ => Verdict::from_name(name),
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

named_enum!(LinkVerdict {
    Unjudged => "",
    Follow => "follow",
    Nofollow => "nofollow",
    PageNofollow => "page:nofollow",
    PageTopic => "page:topic",
    PageRelevance => "page:relevance",
    PageFiltered => "page:filtered",
    Domain => "domain",
    LinkType => "link-type",
});

impl LinkVerdict {
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

named_enum!(LinkType {
    Downward => "downward",
    Upward => "upward",
    Horizontal => "horizontal",
    Crosswise => "crosswise",
    Outward => "outward",
});

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
            assert_eq!(LinkType::from_name(t.name()), Some(t));
        }
        assert_eq!(Verdict::from_stored(""), Some(Verdict::Keep));
        assert_eq!(Verdict::from_stored("page-topic"), None);
        // The tags are the variants' places: stored, so never reordered.
        assert_eq!(postcard::to_stdvec(&LinkVerdict::Follow).unwrap(), [1]);
        assert_eq!(postcard::to_stdvec(&Verdict::Relevance).unwrap(), [2]);
        assert_eq!(postcard::to_stdvec(&LinkType::Outward).unwrap(), [4]);
    }
}
