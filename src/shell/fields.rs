//! The fields of a page row in `pages where … order by …`: one table that
//! the expression parser (names and types), the planner (which fields the
//! page index answers), the light count (which fields the `seen` and `urls`
//! rows hold), completion and `help pages` all read.

use crate::frontier::order::backlink_importance;
use crate::model;
use crate::schema::{
    DocRecord, FrontierScores, PageDoc, PageFactsRecord, PageRecord, VerdictRecord, VisitRecord,
};

/// A field's value on one row.
#[derive(Clone, Debug, PartialEq, PartialOrd)]
pub enum Val {
    Str(String),
    Num(f64),
    Bool(bool),
}

impl std::fmt::Display for Val {
    /// As a table cell: a number to 4 significant digits, "-" for none.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Str(s) => f.write_str(s),
            Val::Num(n) if n.is_nan() => f.write_str("-"),
            Val::Num(n) if *n == n.trunc() && n.abs() < 1e15 => write!(f, "{n}"),
            Val::Num(n) if n.abs() >= 1e-3 => {
                write!(f, "{}", format!("{n:.4}").trim_end_matches('0'))
            }
            Val::Num(n) => write!(f, "{n:.3e}"),
            Val::Bool(b) => write!(f, "{b}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Type {
    Str,
    Num,
    Bool,
}

/// What must be read to know a field, cheapest first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reads {
    /// The small `seen` and `urls` rows (status, depth, URL).
    Seen,
    /// The frontier scores kept in the `seen` row.
    Scores,
    /// The page's facts (its record without the body).
    Page,
    /// The parsed document record (title, text, scores, verdict).
    Doc,
    /// A scan of the page's in-links.
    Inlinks,
    /// The page's `ranks` row (`rank pagerank`).
    Rank,
    /// The page's `visits` row (`recrawl`).
    Visits,
    /// The page's stored text, decompressed from its record: the slowest.
    Text,
}

/// A `page_index` key range that can narrow the candidates for a term.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Index {
    /// `host = "…"`: one host's rows.
    Host,
    /// `status OP N`: a range of statuses.
    Status,
}

pub struct Field {
    pub name: &'static str,
    pub ty: Type,
    pub reads: Reads,
    pub index: Option<Index>,
    pub meaning: &'static str,
    pub read: fn(&Row) -> Val,
}

/// What a field is read from: the URL, status and depth always; the
/// records when the query needed them.
pub struct Row<'a> {
    pub url: &'a str,
    pub status: u16,
    pub depth: u16,
    pub page: Option<&'a PageFactsRecord>,
    /// The record with the body and text, when the row's text is asked for.
    pub record: Option<&'a PageRecord>,
    pub doc: Option<&'a DocRecord>,
    pub verdict: Option<&'a VerdictRecord>,
    pub inlinks: u64,
    /// The frontier scores it was queued with (from its `seen` row).
    pub scores: Option<&'a FrontierScores>,
    pub pagerank: Option<f64>,
    /// The URL of its nearest near-duplicate.
    pub near_of: Option<&'a str>,
    /// Its visits under `recrawl`.
    pub visits: Option<&'a VisitRecord>,
    pub now_ms: f64,
}

/// What a page row holds besides its records, read when a query names it.
#[derive(Clone, Debug, Default)]
pub struct Extra {
    /// None until read.
    pub inlinks: Option<u64>,
    pub scores: Option<FrontierScores>,
    pub pagerank: Option<f64>,
    pub near_of: Option<String>,
    pub visits: Option<VisitRecord>,
    pub record: Option<PageRecord>,
}

impl<'a> Row<'a> {
    /// A row of a page whose facts (and document) were read.
    pub fn full(p: &'a PageFactsRecord, d: &'a PageDoc, x: &'a Extra, now_ms: f64) -> Row<'a> {
        Row {
            url: &p.url,
            status: p.status,
            depth: p.depth,
            page: Some(p),
            record: x.record.as_ref(),
            doc: Some(&d.doc),
            verdict: Some(&d.verdict),
            inlinks: x.inlinks.unwrap_or(0),
            scores: x.scores.as_ref(),
            pagerank: x.pagerank,
            near_of: x.near_of.as_deref(),
            visits: x.visits.as_ref(),
            now_ms,
        }
    }
}

/// A figure of the row's visits (NaN without a `visits` row).
fn visits(r: &Row, f: fn(&VisitRecord) -> f64) -> Val {
    Val::Num(r.visits.map_or(f64::NAN, f))
}

/// A frontier score of the row (NaN when it has none: compares false).
fn score(r: &Row, f: fn(&FrontierScores) -> f64) -> Val {
    Val::Num(r.scores.map_or(f64::NAN, f))
}

fn page(r: &Row, f: fn(&PageFactsRecord) -> Val) -> Val {
    r.page.map_or(Val::Bool(false), f)
}

fn doc(r: &Row, f: fn(&DocRecord) -> Val) -> Val {
    r.doc.map_or(Val::Bool(false), f)
}

fn verdict(r: &Row, f: fn(&VerdictRecord) -> Val) -> Val {
    r.verdict.map_or(Val::Bool(false), f)
}

macro_rules! field {
    ($name:expr, $ty:ident, $reads:ident, $index:expr, $meaning:expr, |$r:ident| $read:expr) => {
        Field {
            name: $name,
            ty: Type::$ty,
            reads: Reads::$reads,
            index: $index,
            meaning: $meaning,
            read: |$r| $read,
        }
    };
}

pub static FIELDS: &[Field] = &[
    field!("url", Str, Seen, None, "the page's URL", |r| Val::Str(
        r.url.to_string()
    )),
    field!(
        "host",
        Str,
        Seen,
        Some(Index::Host),
        "its host name (without the port)",
        |r| { Val::Str(model::parsed_host(r.url)) }
    ),
    field!("title", Str, Doc, None, "the document's title", |r| doc(
        r,
        |d| Val::Str(d.title.clone())
    )),
    field!(
        "content_type",
        Str,
        Page,
        None,
        "the Content-Type header",
        |r| { page(r, |p| Val::Str(p.content_type.clone())) }
    ),
    field!(
        "charset",
        Str,
        Doc,
        None,
        "the charset the text was decoded with",
        |r| { doc(r, |d| Val::Str(d.charset.clone())) }
    ),
    field!(
        "status",
        Num,
        Seen,
        Some(Index::Status),
        "the HTTP status",
        |r| { Val::Num(f64::from(r.status)) }
    ),
    field!("depth", Num, Seen, None, "hops from a seed", |r| Val::Num(
        f64::from(r.depth)
    )),
    field!("size", Num, Page, None, "body bytes stored", |r| page(
        r,
        |p| Val::Num(p.body_len as f64)
    )),
    field!(
        "md5",
        Str,
        Page,
        None,
        "the MD5 of the decoded body, in hex",
        |r| {
            page(r, |p| {
                Val::Str(format!("{:032x}", u128::from_be_bytes(p.md5)))
            })
        }
    ),
    field!(
        "inlinks",
        Num,
        Inlinks,
        None,
        "links to the page found so far",
        |r| { Val::Num(r.inlinks as f64) }
    ),
    field!("outlinks", Num, Doc, None, "links the page holds", |r| {
        doc(r, |d| Val::Num(f64::from(d.outlinks)))
    }),
    field!(
        "fetched_at",
        Num,
        Page,
        None,
        "when it was fetched (a duration means that long ago)",
        |r| { page(r, |p| Val::Num(p.fetched_ms as f64)) }
    ),
    field!(
        "age",
        Num,
        Page,
        None,
        "milliseconds since it was fetched",
        |r| {
            let now = r.now_ms;
            r.page
                .map_or(Val::Bool(false), |p| Val::Num(now - p.fetched_ms as f64))
        }
    ),
    field!(
        "duplicate",
        Bool,
        Doc,
        None,
        "its text is another page's",
        |r| { doc(r, |d| Val::Bool(d.duplicate_of.is_some())) }
    ),
    field!(
        "near_duplicate",
        Bool,
        Doc,
        None,
        "its simhash was within dedup.distance bits of a stored page's when it was stored",
        |r| { doc(r, |d| Val::Bool(d.near.is_some())) }
    ),
    field!(
        "near_duplicate_of",
        Str,
        Doc,
        None,
        "the URL of the stored page nearest to it (empty when none was near)",
        |r| { Val::Str(r.near_of.unwrap_or("").to_string()) }
    ),
    field!(
        "near_distance",
        Num,
        Doc,
        None,
        "bits its simhash differs in from its nearest near-duplicate's",
        |r| {
            doc(r, |d| {
                Val::Num(d.near.map_or(f64::NAN, |n| f64::from(n.distance)))
            })
        }
    ),
    field!(
        "truncated",
        Bool,
        Page,
        None,
        "the body was cut at the size cap",
        |r| { page(r, |p| Val::Bool(p.truncated)) }
    ),
    field!(
        "noindex",
        Bool,
        Doc,
        None,
        "meta robots or X-Robots-Tag said noindex",
        |r| { doc(r, |d| Val::Bool(d.noindex)) }
    ),
    // A score that was not computed compares false with everything.
    field!(
        "topic_score",
        Num,
        Doc,
        None,
        "the topic filter's score",
        |r| { verdict(r, |v| Val::Num(v.topic_score.unwrap_or(f64::NAN))) }
    ),
    field!(
        "relevance",
        Num,
        Doc,
        None,
        "the relevance filter's score",
        |r| { verdict(r, |v| Val::Num(v.relevance.unwrap_or(f64::NAN))) }
    ),
    field!(
        "pagerank",
        Num,
        Rank,
        None,
        "its PageRank as `rank pagerank` last stored it",
        |r| { Val::Num(r.pagerank.unwrap_or(f64::NAN)) }
    ),
    field!(
        "inherited",
        Num,
        Scores,
        None,
        "Shark-search's inherited score it was queued with",
        |r| { score(r, |s| f64::from(s.inherited)) }
    ),
    field!(
        "anchor_score",
        Num,
        Scores,
        None,
        "Shark-search's anchor-context score it was queued with",
        |r| { score(r, |s| f64::from(s.anchor)) }
    ),
    field!(
        "ib",
        Num,
        Scores,
        None,
        "importance's backlink score IB when it was fetched",
        |r| { score(r, |s| backlink_importance(s.backlinks)) }
    ),
    field!(
        "il",
        Num,
        Scores,
        None,
        "importance's URL-shape score IL",
        |r| { score(r, |s| f64::from(s.url_shape)) }
    ),
    field!(
        "model",
        Num,
        Scores,
        None,
        "the learned order's link model score it was queued with",
        |r| { score(r, |s| f64::from(s.model)) }
    ),
    field!(
        "verdict",
        Str,
        Doc,
        None,
        "keep, or the filter that rejected it",
        |r| { verdict(r, |v| Val::Str(v.verdict.name().to_string())) }
    ),
    field!(
        "visits",
        Num,
        Visits,
        None,
        "responses its visits got under recrawl, the first fetch included",
        |r| { visits(r, |v| f64::from(v.visits)) }
    ),
    field!(
        "changes",
        Num,
        Visits,
        None,
        "revisits that found a new version",
        |r| { visits(r, |v| f64::from(v.changes)) }
    ),
    field!(
        "change_rate",
        Num,
        Visits,
        None,
        "its estimated changes a day (recrawl change-rate's λ; NaN before a change is seen)",
        |r| {
            visits(r, |v| {
                crate::crawl::revisit::rate_of(v).map_or(f64::NAN, |c| c * 86_400_000.0)
            })
        }
    ),
    field!(
        "text",
        Str,
        Text,
        None,
        "its stored visible text, denoised when it was (`~` reads the search index's candidates when the db has one, else every page record: slow)",
        |r| { Val::Str(text(r)) }
    ),
];

/// The page's stored visible text, denoised when it was; empty without
/// its record (see `Row::record`).
pub fn text(row: &Row) -> String {
    stored_text(row.record, row.doc)
}

/// The text `text ~` reads: the one the search index holds.
pub use crate::search::source::{raw_text, stored_text};

pub fn find(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// The value of field `name` on `row` (false for an unknown name).
pub fn value(name: &str, row: &Row) -> Val {
    find(name).map_or(Val::Bool(false), |f| (f.read)(row))
}

/// Names of the fields that read no more than `reads`.
pub fn names_reading(reads: Reads) -> Vec<&'static str> {
    FIELDS
        .iter()
        .filter(|f| f.reads == reads)
        .map(|f| f.name)
        .collect()
}

/// `help pages`: the fields with type and meaning.
pub fn help() -> String {
    let mut out = String::from("fields:\n");
    for f in FIELDS {
        let ty = match f.ty {
            Type::Str => "text",
            Type::Num => "number",
            Type::Bool => "true/false",
        };
        out.push_str(&format!("  {:<13} {:<10} {}\n", f.name, ty, f.meaning));
    }
    out.push_str("operators: = != < <= > >= ~ (contains), and, or, not, ( )\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_lowercase() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert_eq!(f.name, f.name.to_ascii_lowercase());
            assert!(FIELDS[..i].iter().all(|g| g.name != f.name), "{}", f.name);
        }
    }

    #[test]
    fn seen_fields_read_without_records() {
        let row = Row {
            url: "http://a.org:8080/x",
            status: 404,
            depth: 2,
            page: None,
            record: None,
            doc: None,
            verdict: None,
            inlinks: 0,
            scores: None,
            pagerank: None,
            near_of: None,
            visits: None,
            now_ms: 0.0,
        };
        assert_eq!(value("status", &row), Val::Num(404.0));
        assert_eq!(value("host", &row), Val::Str("a.org".into()));
        assert_eq!(value("depth", &row), Val::Num(2.0));
        assert_eq!(
            names_reading(Reads::Seen),
            vec!["url", "host", "status", "depth"]
        );
        assert_eq!(
            names_reading(Reads::Scores),
            vec!["inherited", "anchor_score", "ib", "il", "model"]
        );
        assert!(value("ib", &row) != value("ib", &row), "no score: NaN");
    }
}
