//! A page's out-links: `links` rows (one per page since schema 5, of
//! [`PageLinks`]) and the link records in them. Since schema 8 a link's
//! type and verdict are one-byte tags; the older layouts, which spelled
//! them out, are read here and nowhere else (rewriting every page's links
//! to convert them would rewrite the blob files).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use serde::{Deserialize, Serialize};

use super::{CodecError, Versioned};
use crate::model::{IdHasher, LinkType, LinkVerdict, UrlId};

/// `links` value: one out-link with its anchor and surrounding text.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct LinkRecord {
    pub anchor: String,
    /// About 50 bytes of visible text before the `<a>`.
    pub before: String,
    /// About 50 bytes of visible text after the `</a>`.
    pub after: String,
    pub nofollow: bool,
    /// Document 001's type (None in a version 1 record).
    pub link_type: Option<LinkType>,
    /// Whether the crawl follows it, or why not.
    pub verdict: LinkVerdict,
    /// The numbers behind the verdict.
    pub verdict_detail: String,
    /// The target's host, so the domain filter needs no URL lookup.
    pub dst_host: String,
    /// The target's URL, so listing a page's out-links (the shell's `page`,
    /// `links from`) or queueing one (refilter) reads no `urls` row. Empty
    /// in records before version 4; [`crate::store::Store::links_from`]
    /// fills it.
    pub dst_url: String,
}

impl Versioned for LinkRecord {
    const VERSION: u8 = 5;

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        LinkView::decode(bytes).map(|v| v.to_record())
    }
}

/// A `links` value read in place: its strings borrow the stored bytes, so
/// scanning millions of links (refilter, the shell) allocates nothing.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct LinkView<'a> {
    pub anchor: &'a str,
    pub before: &'a str,
    pub after: &'a str,
    pub nofollow: bool,
    pub link_type: Option<LinkType>,
    pub verdict: LinkVerdict,
    pub verdict_detail: &'a str,
    pub dst_host: &'a str,
    pub dst_url: &'a str,
}

/// A link as versions 2–4 wrote it (version 4's fields; earlier versions
/// are prefixes of it): type and verdict spelled out.
#[derive(Deserialize, Default)]
struct Spelled<'a> {
    anchor: &'a str,
    before: &'a str,
    after: &'a str,
    nofollow: bool,
    link_type: &'a str,
    verdict: &'a str,
    verdict_detail: &'a str,
    dst_host: &'a str,
    dst_url: &'a str,
}

impl<'a> Spelled<'a> {
    fn typed(self) -> Result<LinkView<'a>, CodecError> {
        let verdict = LinkVerdict::from_name(self.verdict).ok_or_else(|| {
            CodecError::Malformed(format!("unknown link verdict {:?}", self.verdict))
        })?;
        Ok(LinkView {
            anchor: self.anchor,
            before: self.before,
            after: self.after,
            nofollow: self.nofollow,
            // "" in version 1; a link of unknown type is classified again.
            link_type: LinkType::from_name(self.link_type),
            verdict,
            verdict_detail: self.verdict_detail,
            dst_host: self.dst_host,
            dst_url: self.dst_url,
        })
    }
}

impl<'a> LinkView<'a> {
    /// Reads a per-link row of any version: versions 1–4 spell type and
    /// verdict out, each appending fields to the one before.
    pub fn decode(bytes: &'a [u8]) -> Result<LinkView<'a>, CodecError> {
        let (version, rest) = super::split_version(bytes, 1, LinkRecord::VERSION)?;
        if version == LinkRecord::VERSION {
            return postcard::from_bytes(rest).map_err(super::malformed);
        }
        let mut s = Spelled::default();
        let ((anchor, before, after, nofollow), rest) =
            postcard::take_from_bytes::<(&str, &str, &str, bool)>(rest)
                .map_err(super::malformed)?;
        (s.anchor, s.before, s.after, s.nofollow) = (anchor, before, after, nofollow);
        if version >= 2 {
            let ((link_type, verdict, verdict_detail), rest) =
                postcard::take_from_bytes::<(&str, &str, &str)>(rest).map_err(super::malformed)?;
            (s.link_type, s.verdict, s.verdict_detail) = (link_type, verdict, verdict_detail);
            if version >= 3 {
                let (dst_host, rest) =
                    postcard::take_from_bytes::<&str>(rest).map_err(super::malformed)?;
                s.dst_host = dst_host;
                if version >= 4 {
                    s.dst_url = postcard::take_from_bytes::<&str>(rest)
                        .map_err(super::malformed)?
                        .0;
                }
            }
        }
        s.typed()
    }

    /// The same bytes as [`LinkRecord`]'s encoding of these fields.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![LinkRecord::VERSION];
        out.extend(postcard::to_stdvec(self).unwrap_or_default());
        out
    }

    pub fn to_record(&self) -> LinkRecord {
        LinkRecord {
            anchor: self.anchor.to_string(),
            before: self.before.to_string(),
            after: self.after.to_string(),
            nofollow: self.nofollow,
            link_type: self.link_type,
            verdict: self.verdict,
            verdict_detail: self.verdict_detail.to_string(),
            dst_host: self.dst_host.to_string(),
            dst_url: self.dst_url.to_string(),
        }
    }
}

/// `links` value since schema 5: all of a page's out-links in one row, in
/// page order. One row instead of one per link: a page costs ~20 fewer
/// memtable inserts, and the row (usually ≥ 1 KiB) goes to a blob file
/// that compaction does not rewrite. Version 3 (schema 11) holds the links
/// alone, in [`LinkView`]'s layout: a target's id is the hash of its URL
/// (`UrlId::of(dst_url)`), 16 bytes a link that do not compress. Version 2
/// (schema 8) puts each target's id before its link, and is still written
/// when a link's URL is not its id's (a record converted from schema 4);
/// version 1 holds (id, link) in the spelled layout of link record
/// version 4.
pub struct PageLinks;

impl PageLinks {
    pub const VERSION: u8 = 3;
    /// The version with the targets' ids written out.
    const WITH_IDS: u8 = 2;

    /// The links of a page row, borrowing its bytes.
    pub fn decode(bytes: &[u8]) -> Result<Vec<(UrlId, LinkView<'_>)>, CodecError> {
        let (version, rest) = super::split_version(bytes, 1, Self::VERSION)?;
        match version {
            1 => {
                let links: Vec<(u128, Spelled<'_>)> =
                    postcard::from_bytes(rest).map_err(super::malformed)?;
                links
                    .into_iter()
                    .map(|(id, l)| Ok((UrlId(id), l.typed()?)))
                    .collect()
            }
            Self::WITH_IDS => {
                let links: Vec<(u128, LinkView<'_>)> =
                    postcard::from_bytes(rest).map_err(super::malformed)?;
                Ok(links.into_iter().map(|(id, l)| (UrlId(id), l)).collect())
            }
            _ => {
                let links: Vec<LinkView<'_>> =
                    postcard::from_bytes(rest).map_err(super::malformed)?;
                Ok(links
                    .into_iter()
                    .map(|l| (UrlId::of(l.dst_url), l))
                    .collect())
            }
        }
    }
}

/// Builds a [`PageLinks`] row one link at a time (each is encoded when
/// added, so the link's fields need not outlive the call). A second link to
/// the same target replaces the first, as a second put of a per-link row did.
pub struct PageLinksBuilder {
    /// Each link's target and where its encoding is in `bytes`.
    links: Vec<(UrlId, std::ops::Range<usize>)>,
    /// The links' encodings, one after the other (one buffer: a Vec a link
    /// was a tenth of the crawl's allocations); a replaced link's stay.
    bytes: Vec<u8>,
    index: HashMap<UrlId, usize, BuildHasherDefault<IdHasher>>,
    /// Every target's id is its URL's hash (version 3 can be written).
    ids_implied: bool,
}

impl Default for PageLinksBuilder {
    fn default() -> Self {
        PageLinksBuilder {
            links: Vec::new(),
            bytes: Vec::new(),
            index: HashMap::default(),
            ids_implied: true,
        }
    }
}

impl PageLinksBuilder {
    pub fn push(&mut self, dst: UrlId, link: &LinkView<'_>) {
        self.ids_implied &= UrlId::of(link.dst_url) == dst;
        self.add(dst, link);
    }

    /// [`push`](Self::push) for a link whose `dst_url` is the normalized URL
    /// `dst` was computed from (the crawl's links): no second hash. True
    /// when `dst` is new to the row (its in-link is still to be written).
    pub fn push_own(&mut self, dst: UrlId, link: &LinkView<'_>) -> bool {
        debug_assert_eq!(UrlId::of(link.dst_url), dst);
        self.add(dst, link)
    }

    /// True when `dst` is new to the row.
    fn add(&mut self, dst: UrlId, link: &LinkView<'_>) -> bool {
        let start = self.bytes.len();
        if postcard::to_io(link, &mut self.bytes).is_err() {
            self.bytes.truncate(start); // stored empty, as before
        }
        let span = start..self.bytes.len();
        match self.index.get(&dst) {
            Some(&i) => {
                self.links[i].1 = span;
                false
            }
            None => {
                self.index.insert(dst, self.links.len());
                self.links.push((dst, span));
                true
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The row's bytes: version, link count, then the links (each after
    /// its target's id in version 2).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes.len() + 17 * self.links.len() + 11);
        let with_ids = !self.ids_implied;
        out.push(if with_ids {
            PageLinks::WITH_IDS
        } else {
            PageLinks::VERSION
        });
        // postcard writes a sequence's length as a varint, like a usize, and
        // a tuple as its fields one after the other.
        out.extend(postcard::to_stdvec(&self.links.len()).unwrap_or_default());
        for (dst, span) in &self.links {
            if with_ids {
                out.extend(postcard::to_stdvec(&dst.0).unwrap_or_default());
            }
            out.extend_from_slice(&self.bytes[span.clone()]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link as schema 7 wrote it inside a page row (version 4's fields).
    fn spelled(verdict: &str) -> Vec<u8> {
        postcard::to_stdvec(&(
            "anchor",
            "b",
            "a",
            false,
            "outward",
            verdict,
            "why",
            "h.org",
            "http://h.org/",
        ))
        .unwrap()
    }

    #[test]
    fn a_version_1_page_row_reads_typed() {
        let mut row = vec![1u8, 2];
        row.extend(postcard::to_stdvec(&7u128).unwrap());
        row.extend(spelled("follow"));
        row.extend(postcard::to_stdvec(&8u128).unwrap());
        row.extend(spelled("page:topic"));
        let links = PageLinks::decode(&row).unwrap();
        assert_eq!(links.len(), 2);
        assert_eq!(links[0].0, UrlId(7));
        assert_eq!(links[0].1.verdict, LinkVerdict::Follow);
        assert_eq!(links[0].1.link_type, Some(LinkType::Outward));
        assert_eq!(links[1].1.verdict, LinkVerdict::PageTopic);
        assert_eq!(links[1].1.dst_url, "http://h.org/");
        let mut bad = vec![1u8, 1];
        bad.extend(postcard::to_stdvec(&7u128).unwrap());
        bad.extend(spelled("perhaps"));
        assert!(PageLinks::decode(&bad).is_err());
    }

    #[test]
    fn a_version_2_page_row_round_trips_with_one_byte_tags() {
        let view = LinkView {
            anchor: "a",
            link_type: Some(LinkType::Upward),
            verdict: LinkVerdict::LinkType,
            verdict_detail: "coin",
            dst_url: "http://x.org/",
            ..LinkView::default()
        };
        let mut b = PageLinksBuilder::default();
        b.push(UrlId(3), &view);
        let row = b.encode();
        assert_eq!(PageLinks::decode(&row).unwrap(), vec![(UrlId(3), view)]);
        // The tags cost a byte each where the names cost up to 15.
        let spelled_len = postcard::to_stdvec(&(
            "a",
            "",
            "",
            false,
            "upward",
            "link-type",
            "coin",
            "",
            "http://x.org/",
        ))
        .unwrap()
        .len();
        assert!(
            row.len() < spelled_len + 16 + 2,
            "{} vs {spelled_len}",
            row.len()
        );
        assert_eq!(LinkView::decode(&view.encode()).unwrap(), view);
    }

    #[test]
    fn a_version_3_row_leaves_out_the_ids_its_urls_imply() {
        let link = |url| LinkView {
            anchor: "a",
            verdict: LinkVerdict::Follow,
            dst_url: url,
            ..LinkView::default()
        };
        let urls = ["http://h.org/1", "http://h.org/2", "http://x.net/"];
        let mut b = PageLinksBuilder::default();
        for u in urls {
            b.push(UrlId::of(u), &link(u));
        }
        let row = b.encode();
        assert_eq!(row[0], 3);
        let read = PageLinks::decode(&row).unwrap();
        let want: Vec<_> = urls.iter().map(|u| (UrlId::of(u), link(u))).collect();
        assert_eq!(read, want);
        // One link whose id is not its URL's: the ids are written out.
        b.push(UrlId(5), &link("http://h.org/5"));
        let with_ids = b.encode();
        assert_eq!(with_ids[0], 2);
        assert!(
            with_ids.len() >= row.len() + 4 * 16,
            "{} {}",
            with_ids.len(),
            row.len()
        );
        let read = PageLinks::decode(&with_ids).unwrap();
        assert_eq!(read[3], (UrlId(5), link("http://h.org/5")));
        assert_eq!(read[..3], want[..]);
    }

    #[test]
    fn a_second_link_to_a_target_replaces_the_first_in_its_place() {
        let link = |url, anchor| LinkView {
            anchor,
            dst_url: url,
            ..LinkView::default()
        };
        let (a, b) = ("http://h.org/a", "http://h.org/b");
        let mut twice = PageLinksBuilder::default();
        // push_own says which pushes are new targets (an in-link row each).
        assert!(twice.push_own(UrlId::of(a), &link(a, "first anchor, longer")));
        assert!(twice.push_own(UrlId::of(b), &link(b, "b")));
        assert!(!twice.push_own(UrlId::of(a), &link(a, "second")));
        let mut once = PageLinksBuilder::default();
        once.push(UrlId::of(a), &link(a, "second"));
        once.push(UrlId::of(b), &link(b, "b"));
        let row = twice.encode();
        assert_eq!(row, once.encode());
        let read = PageLinks::decode(&row).unwrap();
        assert_eq!(read[0], (UrlId::of(a), link(a, "second")));
    }

    #[test]
    fn per_link_rows_of_every_version_read() {
        let mut v1 = vec![1u8];
        v1.extend(postcard::to_stdvec(&("x", "", "", true)).unwrap());
        let v = LinkView::decode(&v1).unwrap();
        assert_eq!(
            (v.anchor, v.nofollow, v.link_type, v.verdict),
            ("x", true, None, LinkVerdict::Unjudged)
        );
        let mut v3 = vec![3u8];
        v3.extend(
            postcard::to_stdvec(&("a", "", "", false, "outward", "domain", "d", "h.org")).unwrap(),
        );
        let v = LinkView::decode(&v3).unwrap();
        assert_eq!(
            (v.verdict, v.dst_host, v.dst_url),
            (LinkVerdict::Domain, "h.org", "")
        );
    }
}
