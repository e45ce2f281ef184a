//! Where a counter is defined: `meta/counters`, the totals over the life
//! of the db that every page's batch updates, and the typed tallies of
//! failures and filtered URLs inside it. A tally is stored as a map from
//! its reasons' names to counts, in name order (the bytes of schema 23),
//! and read and written by typed reason; a name this trawl has no reason
//! for (a newer trawl's) is kept and shown as it is, as the plain map kept
//! it.

use std::borrow::Cow;

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Versioned;
use crate::model::{FailReason, FilterReason, NamedEnum, Verdict};

/// `meta/counters`: totals over the life of the db.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Counters {
    /// Responses stored (any status).
    pub fetched: u64,
    /// Fetches that produced no response, by reason.
    pub failed: Tally<FailReason>,
    /// URLs seen but not fetched, by reason; and fetched pages the page
    /// filters did not keep, by verdict.
    pub filtered: Tally<Filtered>,
    /// URLs in the frontier now.
    pub queued: u64,
    /// Out-links extracted from fetched pages.
    pub links: u64,
    /// Body bytes received on the wire.
    pub bytes: u64,
    /// Pages whose body repeated an earlier page's MD5.
    pub duplicates: u64,
    /// Links dropped before the seen check (bad syntax, other schemes).
    pub invalid_links: u64,
    /// Next frontier sequence number (keeps FIFO order across restarts).
    pub next_seq: u64,
    /// Responses by status code.
    pub by_status: BTreeMap<u16, u64>,
    /// Distinct URLs in `seen`.
    pub seen: u64,
    // Version 2: the current run, kept with the counters (written in every
    // batch) so that a killed run's record can be completed on resume.
    pub run: RunProgress,
    // Version 4:
    /// Pages stored as a near-duplicate of a stored page.
    pub near_duplicates: u64,
    /// Of those, the pages past their cluster's budget, links not followed.
    pub unexpanded: u64,
    // Version 5 (`recrawl`):
    /// Revisits that got a response, and those that found a change.
    pub revisits: u64,
    pub revisits_changed: u64,
    /// Of `queued`, the fetched pages queued again for a revisit.
    pub revisits_queued: u64,
    /// Rows in `due`: pages waiting for their revisit time.
    pub due: u64,
    // Version 6:
    /// Links pages gave past their caps (`crawl.max_outlinks` or their
    /// bytes of links), not followed; `capped` names the pages.
    pub links_cut: u64,
    // Version 7 (schema 26):
    /// The next `search_log` sequence number: changes logged for the
    /// search index so far.
    pub search_seq: u64,
}
impl Versioned for Counters {
    const VERSION: u8 = 7;

    fn decode(bytes: &[u8]) -> Result<Self, super::CodecError> {
        // Version 3 appended three fields to `run`, then the last field;
        // version 4 two after it, version 5 four, version 6 one, version
        // 7 one.
        super::decode_appended(bytes, 1, &[4, 3, 2, 4, 1, 1])
    }
}

/// What the running (or last) crawl run has done so far.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct RunProgress {
    /// The run's `started_ms` (its `meta/run:` key); 0 before any run.
    pub started_ms: u64,
    pub fetched: u64,
    pub links: u64,
    /// When its last page was recorded.
    pub last_ms: u64,
    // Counters version 3:
    /// Pages the page filters judged (parsed HTML), and those they kept:
    /// the run's harvest rate is `relevant / judged`.
    pub judged: u64,
    pub relevant: u64,
    /// Pages fetched that are on the target list (`targets import`).
    pub targets: u64,
}

/// What the `filtered` tally counts under one name: URLs seen and not
/// fetched, by their `seen` reason; or fetched pages by the verdict that
/// did not keep them (`page-topic`, `page-relevance`), which no `seen` row
/// records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filtered {
    Url(FilterReason),
    /// Never `keep`.
    Page(Verdict),
}

impl Filtered {
    /// The tally a page with this verdict adds to (none for `keep`).
    pub fn page(v: Verdict) -> Option<Filtered> {
        (v != Verdict::Keep).then_some(Filtered::Page(v))
    }
}

/// A tally's key: a reason with a stored name.
pub trait Counted: Copy + Eq + 'static {
    fn name(self) -> &'static str;
    fn from_name(name: &str) -> Option<Self>;
}

impl Counted for FailReason {
    fn name(self) -> &'static str {
        NamedEnum::name(self)
    }
    fn from_name(name: &str) -> Option<Self> {
        <Self as NamedEnum>::from_name(name)
    }
}

impl Counted for Filtered {
    fn name(self) -> &'static str {
        match self {
            Filtered::Url(r) => r.name(),
            Filtered::Page(Verdict::Topic) => "page-topic",
            Filtered::Page(Verdict::Relevance) => "page-relevance",
            Filtered::Page(Verdict::Keep) => "page-keep",
        }
    }
    fn from_name(name: &str) -> Option<Self> {
        match name.strip_prefix("page-") {
            Some(v) => Verdict::from_name(v).map(Filtered::Page),
            None => FilterReason::from_name(name).map(Filtered::Url),
        }
    }
}

/// Counts by reason, in the order of the reasons' names (as stored).
#[derive(Clone, PartialEq, Eq)]
pub struct Tally<K: Counted> {
    counts: BTreeMap<Cow<'static, str>, u64>,
    kind: PhantomData<K>,
}

impl<K: Counted> Default for Tally<K> {
    fn default() -> Self {
        Tally {
            counts: BTreeMap::new(),
            kind: PhantomData,
        }
    }
}

impl<K: Counted> Tally<K> {
    /// Adds `by` to `k`'s count (saturating; a count at zero is removed).
    pub fn add(&mut self, k: K, by: i64) {
        self.add_named(Cow::Borrowed(k.name()), by);
    }

    fn add_named(&mut self, name: Cow<'static, str>, by: i64) {
        let v = self.counts.entry(name.clone()).or_insert(0);
        *v = v.saturating_add_signed(by);
        if *v == 0 {
            self.counts.remove(&name);
        }
    }

    pub fn get(&self, k: K) -> u64 {
        self.counts.get(k.name()).copied().unwrap_or(0)
    }

    /// The count under a stored name (0 for a name not counted).
    pub fn named(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Each reason counted, with its count, in name order (a name this
    /// trawl has no reason for is left out).
    pub fn iter(&self) -> impl Iterator<Item = (K, u64)> + '_ {
        (self.counts.iter()).filter_map(|(n, c)| Some((K::from_name(n)?, *c)))
    }

    /// Each name counted with its count, in name order.
    pub fn by_name(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.counts.iter().map(|(n, c)| (n.as_ref(), *c))
    }
}

impl<K: Counted> fmt::Debug for Tally<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.counts.iter()).finish()
    }
}

impl<K: Counted> Serialize for Tally<K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.counts.iter())
    }
}

impl<'de, K: Counted> Deserialize<'de> for Tally<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(TallyVisitor(PhantomData))
    }
}

struct TallyVisitor<K>(PhantomData<K>);

impl<'de, K: Counted> Visitor<'de> for TallyVisitor<K> {
    type Value = Tally<K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of reason names to counts")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tally<K>, A::Error> {
        let mut t = Tally::default();
        while let Some((name, n)) = map.next_entry::<String, u64>()? {
            // A known name is held as its reason's; another as read.
            let name = match K::from_name(&name) {
                Some(k) => Cow::Borrowed(k.name()),
                None => Cow::Owned(name),
            };
            t.add_named(name, n.min(i64::MAX as u64) as i64);
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed tallies write the bytes the string-keyed maps wrote.
    #[test]
    fn a_tally_is_stored_as_the_name_map_it_replaced() {
        let mut c = Counters::default();
        c.failed.add(FailReason::Timeout, 2);
        c.failed.add(FailReason::Dns, 1);
        c.filtered.add(Filtered::Url(FilterReason::Scope), 5);
        c.filtered
            .add(Filtered::page(Verdict::Relevance).unwrap(), 3);
        c.filtered.add(Filtered::Url(FilterReason::Robots), 1);
        c.filtered.add(Filtered::Url(FilterReason::Robots), -1);
        let failed: BTreeMap<String, u64> = [("timeout".into(), 2), ("dns".into(), 1)].into();
        let filtered: BTreeMap<String, u64> =
            [("scope".into(), 5), ("page-relevance".into(), 3)].into();
        assert_eq!(
            postcard::to_allocvec(&c.failed).unwrap(),
            postcard::to_allocvec(&failed).unwrap()
        );
        assert_eq!(
            postcard::to_allocvec(&c.filtered).unwrap(),
            postcard::to_allocvec(&filtered).unwrap()
        );
        let back: Counters = postcard::from_bytes(&postcard::to_allocvec(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.filtered.get(Filtered::Url(FilterReason::Robots)), 0);
        assert_eq!(back.filtered.named("page-relevance"), 3);
        assert_eq!(back.failed.total(), 3);
        // A newer trawl's reason is kept, shown and written back as it was.
        let newer: BTreeMap<String, u64> = [("a-newer-reason".into(), 4), ("dns".into(), 1)].into();
        let bytes = postcard::to_allocvec(&newer).unwrap();
        let t = postcard::from_bytes::<Tally<FailReason>>(&bytes).unwrap();
        assert_eq!(
            t.by_name().collect::<Vec<_>>(),
            [("a-newer-reason", 4), ("dns", 1)]
        );
        assert_eq!(t.iter().collect::<Vec<_>>(), [(FailReason::Dns, 1)]);
        assert_eq!((t.total(), t.named("a-newer-reason")), (5, 4));
        assert_eq!(postcard::to_allocvec(&t).unwrap(), bytes);
        assert_eq!(Filtered::page(Verdict::Keep), None);
        for name in ["page-topic", "page-relevance", "host-budget"] {
            assert_eq!(Filtered::from_name(name).unwrap().name(), name);
        }
    }
}
