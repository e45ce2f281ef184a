//! The walk behind `pages where`, `count pages` and the page exports: the
//! candidates (every page's facts in id order, or a page-index range), the
//! filter evaluated on each, and what a row reads beside its facts (doc,
//! scores, rank, visits, in-links, the record for its text) through one
//! cursor per column family moved along with the ids (`store::PageJoin`):
//! `export pages` of 1,000,000 pages read each page's record from a blob
//! file and made five point lookups a page before.

use std::cell::Cell;
use std::collections::HashSet;

use super::pages::{Emit, Output, page_values};
use crate::model::{SeenState, UrlId, now_ms};
use crate::schema::tables::{PageFacts, Pages, Ranks, Seen, Visits};
use crate::schema::{PageDoc, PageFactsRecord, PageRecord};
use crate::shell::error::{Result, bail};
use crate::shell::expr::{self, Query};
use crate::shell::fields::{self, Extra, Reads, Row};
use crate::shell::plan::{self, IndexScan};
use crate::shell::{Ctx, table};
use crate::store::{InLinks, PageJoin, Store};

/// A matching page, with what its fields were read from.
pub(super) struct Matched {
    pub page: PageFactsRecord,
    pub doc: PageDoc,
    pub extra: Extra,
}

/// What a scan found.
#[derive(Default)]
pub(super) struct Found {
    pub rows: Vec<Matched>,
    pub ids: Vec<UrlId>,
    pub count: u64,
    /// Candidates looked at.
    pub scanned: u64,
}

/// What narrows `q`'s scan: the search index's candidates for its `text
/// ~` and `title ~` terms (see `text_plan`), else the page-index range of
/// a status or host term when that index is whole.
pub(super) fn index_plan(sh: &Ctx, q: &Query) -> Result<Option<IndexScan>> {
    if let Some(plan) = super::text_plan::search_plan(sh, &q.filter)? {
        return Ok(Some(plan));
    }
    let indexed = sh.store.page_index_complete()?;
    Ok(indexed.then(|| plan::index_scan(&q.filter)).flatten())
}

/// Reads a row's records beside its facts: cursors joined on the page id
/// and one in-link reader, opened at their first use.
pub(super) struct RowReader<'s> {
    store: &'s Store,
    join: PageJoin<'s>,
    inlinks: Option<InLinks<'s>>,
    /// Page records that did not decode (their rows get no text).
    unreadable: u64,
}

impl<'s> RowReader<'s> {
    /// `dense`: nearly every page is read, in id order (see `PageJoin`).
    pub(super) fn new(store: &'s Store, dense: bool) -> RowReader<'s> {
        RowReader {
            store,
            join: store.page_join(dense),
            inlinks: None,
            unreadable: 0,
        }
    }

    pub(super) fn doc(&mut self, id: UrlId) -> Result<PageDoc> {
        Ok(self.join.doc(id)?.unwrap_or_default())
    }

    fn inlinks(&mut self, id: UrlId) -> Result<u64> {
        let r = match self.inlinks.as_mut() {
            Some(r) => r,
            None => self.inlinks.insert(self.store.inlinks()?),
        };
        Ok(r.count(id)?)
    }

    /// The page's title and stored text (see `fields::stored_text`).
    pub(super) fn title_and_text(&mut self, id: UrlId) -> Result<(String, String)> {
        let doc = self.doc(id)?;
        let record = self.record(id)?;
        let text = fields::stored_text(record.as_ref(), Some(&doc.doc));
        Ok((doc.doc.title, text))
    }

    /// The page's record with its body, None when it does not decode (as
    /// a scan of `pages` passes over such a row, counting it).
    fn record(&mut self, id: UrlId) -> Result<Option<PageRecord>> {
        match self.join.row::<Pages>(id) {
            Err(crate::store::StoreError::Codec { .. }) => {
                self.unreadable += 1;
                Ok(None)
            }
            r => Ok(r?),
        }
    }
}

/// A `pages where` filter checked on pages given by id (a search's hits).
pub(super) struct PageFilter<'s> {
    reader: RowReader<'s>,
    needs: Needs,
    filter: expr::Expr,
    now: f64,
}

impl<'s> PageFilter<'s> {
    pub(super) fn new(store: &'s Store, filter: expr::Expr) -> PageFilter<'s> {
        PageFilter {
            reader: RowReader::new(store, false),
            needs: Needs::of(&|f| filter.uses(f)),
            filter,
            now: now_ms() as f64,
        }
    }

    /// Whether page `id` is stored and matches the filter.
    pub(super) fn matches(&mut self, id: UrlId) -> Result<bool> {
        let Some(page) = self.reader.join.row::<PageFacts>(id)? else {
            return Ok(false);
        };
        let doc = self.reader.doc(id)?;
        let mut extra = Extra::default();
        self.needs.fill(&mut self.reader, id, &doc, &mut extra)?;
        let row = Row::full(&page, &doc, &extra, self.now);
        Ok(self.filter.eval(&|f| fields::value(f, &row), self.now))
    }
}

/// What a page row needs read besides its facts and doc.
#[derive(Clone, Copy)]
pub(super) struct Needs {
    inlinks: bool,
    rank: bool,
    near: bool,
    scores: bool,
    visits: bool,
    /// The page record, for the row's text.
    record: bool,
}

impl Needs {
    /// What the fields `named` says are used need.
    pub(super) fn of(named: &dyn Fn(&str) -> bool) -> Needs {
        let any = |r: Reads| fields::names_reading(r).into_iter().any(named);
        Needs {
            inlinks: named("inlinks"),
            rank: named("pagerank"),
            near: named("near_duplicate_of"),
            scores: any(Reads::Scores),
            visits: any(Reads::Visits),
            record: named("text"),
        }
    }

    /// Reads what is needed and not read yet into `x`.
    pub(super) fn fill(
        &self,
        r: &mut RowReader,
        id: UrlId,
        doc: &PageDoc,
        x: &mut Extra,
    ) -> Result<()> {
        if self.inlinks && x.inlinks.is_none() {
            x.inlinks = Some(r.inlinks(id)?);
        }
        if self.scores && x.scores.is_none() {
            x.scores = r.join.row::<Seen>(id)?.and_then(|s| s.scores);
        }
        if self.rank && x.pagerank.is_none() {
            x.pagerank = r.join.row::<Ranks>(id)?.map(|r| r.pagerank);
        }
        if self.near
            && x.near_of.is_none()
            && let Some(n) = doc.doc.near
        {
            x.near_of = r.store.url(UrlId(n.of))?;
        }
        if self.visits && x.visits.is_none() {
            x.visits = r.join.row::<Visits>(id)?;
        }
        if self.record && x.record.is_none() {
            x.record = r.record(id)?;
        }
        Ok(())
    }
}

/// Walks the candidates, evaluating the filter on each; streams, counts
/// or collects the matches.
pub(super) fn scan(
    sh: &mut Ctx,
    q: &Query,
    plan: Option<&IndexScan>,
    out: Output,
    mut emit: Option<&mut Emit>,
) -> Result<Found> {
    let reads = ScanReads::of(q, plan.is_some(), out, emit.as_deref());
    let now = now_ms() as f64;
    let total = sh.store.counters()?.fetched;
    // Without an order, the scan stops at the limit.
    let early_stop = q.order.is_none().then_some(q.limit).flatten();
    let store = sh.store.clone();
    let mut reader = RowReader::new(&store, plan.is_none());
    // A refetch that changed a page's status leaves it two index rows.
    let mut yielded = HashSet::new();
    let mut found = Found::default();
    let unreadable = Cell::new(0);
    for row in candidates(&store, plan, &unreadable) {
        tick(sh, plan.is_some(), &mut found, total)?;
        let (id, page) = row?;
        if plan.is_some() && !yielded.insert(id) {
            continue;
        }
        let page = match page {
            Some(page) => page,
            None if reads.light => {
                if let Some(keep) = light_match(sh, &q.filter, id, now)? {
                    found.count += u64::from(keep);
                    continue;
                }
                match store.row::<PageFacts>(&id)? {
                    Some(page) => page,
                    None => continue,
                }
            }
            None => match reader.join.row::<PageFacts>(id)? {
                Some(page) => page,
                None => continue,
            },
        };
        let doc = reader.doc(id)?;
        let mut extra = Extra::default();
        reads.filter.fill(&mut reader, id, &doc, &mut extra)?;
        let row = Row::full(&page, &doc, &extra, now);
        if !q.filter.eval(&|f| fields::value(f, &row), now) {
            continue;
        }
        found.count += 1;
        match out {
            Output::Count => {}
            Output::Stream => {
                // Unordered rows go out as they are found.
                if let Some(e) = emit.as_mut() {
                    reads.row.fill(&mut reader, id, &doc, &mut extra)?;
                    let row = Row::full(&page, &doc, &extra, now);
                    let values = page_values(&e.columns, &row);
                    (e.row)(sh, &row, &values)?;
                }
            }
            Output::Table => found.rows.push(Matched { page, doc, extra }),
            Output::Ids => found.ids.push(id),
        }
        if early_stop.is_some_and(|l| found.count >= l as u64) && out != Output::Count {
            break;
        }
    }
    sh.progress_done();
    crate::shell::lookup::unreadable(unreadable.get() + reader.unreadable);
    Ok(found)
}

/// What a scan reads besides each candidate's facts and doc.
struct ScanReads {
    /// For a streamed row's columns.
    row: Needs,
    /// For the filter and the order.
    filter: Needs,
    /// A count checked on the small rows alone (see `light_match`).
    light: bool,
}

impl ScanReads {
    fn of(q: &Query, indexed: bool, out: Output, emit: Option<&Emit>) -> ScanReads {
        // A streamed row reads what its columns need.
        let shown = |f: &str| {
            out == Output::Stream
                && emit.is_some_and(|e| {
                    (f == "text" && e.record)
                        || e.columns.iter().any(|c| c.name == f && (c.shown || e.all))
                })
        };
        let named = |f: &str| q.filter.uses(f) || q.order.is_some_and(|o| o.0 == f);
        // A count over index candidates whose filter reads only what the
        // `seen` row (status, depth) and the `urls` row (url, host) hold is
        // checked there: two small rows instead of the page's.
        let light = out == Output::Count
            && indexed
            && q.filter.uses_only(
                &[Reads::Seen, Reads::Scores]
                    .map(fields::names_reading)
                    .concat(),
            );
        ScanReads {
            row: Needs::of(&|f| named(f) || shown(f)),
            filter: Needs::of(&named),
            light,
        }
    }
}

/// Counts a candidate: stops on Ctrl-C, shows progress every 1,024.
fn tick(sh: &mut Ctx, indexed: bool, found: &mut Found, total: u64) -> Result<()> {
    if sh.interrupted() {
        sh.progress_done();
        bail!("interrupted");
    }
    found.scanned += 1;
    if found.scanned.is_multiple_of(1024) {
        progress(sh, indexed, found.scanned, total, found.count);
    }
    Ok(())
}

fn progress(sh: &mut Ctx, indexed: bool, scanned: u64, total: u64, count: u64) {
    let what = if indexed {
        format!("checking index candidates: {}", table::thousands(scanned))
    } else {
        format!(
            "scanning pages: {} of {}",
            table::thousands(scanned),
            table::thousands(total)
        )
    };
    sh.progress(&format!("{what}, {count} match"));
}

/// A page to consider: its id, and its facts when the walk read them
/// (None: an index candidate, read by id when needed).
type Candidate = (UrlId, Option<PageFactsRecord>);

/// Every page, or the pages of one index range.
fn candidates<'s>(
    store: &'s Store,
    plan: Option<&'s IndexScan>,
    unreadable: &'s Cell<u64>,
) -> Box<dyn Iterator<Item = Result<Candidate>> + 's> {
    let indexed = |r: std::result::Result<UrlId, crate::store::StoreError>| Ok((r?, None));
    match plan {
        None => {
            let mut rows = store.rows::<PageFacts>(&[]);
            Box::new(std::iter::from_fn(move || {
                let row = rows.next();
                unreadable.set(rows.unreadable());
                Some(row?.map(|(id, page)| (id, Some(page))).map_err(Into::into))
            }))
        }
        Some(IndexScan::Prefix(p)) => Box::new(store.page_index_pages(p, None).map(indexed)),
        Some(IndexScan::Pages(ids)) => Box::new(ids.iter().map(|id| Ok((*id, None)))),
        Some(IndexScan::Range(from, to)) => {
            Box::new(store.page_index_pages(from, Some(to)).map(indexed))
        }
    }
}

/// Whether page `id` matches a filter over the `Seen` fields, from its
/// `seen` row (written in the same batch as the page, with the same status
/// and depth) and `urls` row; None when those rows do not say (the page's
/// facts decide).
fn light_match(sh: &Ctx, filter: &expr::Expr, id: UrlId, now: f64) -> Result<Option<bool>> {
    let Some(seen) = sh.store.seen(id)? else {
        return Ok(None);
    };
    let SeenState::Fetched { status } = seen.state else {
        return Ok(None);
    };
    let url = if filter.uses("url") || filter.uses("host") {
        match sh.store.url(id)? {
            Some(u) => u,
            None => return Ok(None),
        }
    } else {
        String::new()
    };
    let row = Row {
        url: &url,
        status,
        depth: seen.depth,
        page: None,
        record: None,
        doc: None,
        verdict: None,
        inlinks: 0,
        scores: seen.scores.as_ref(),
        pagerank: None,
        near_of: None,
        visits: None,
        now_ms: now,
    };
    Ok(Some(filter.eval(&|f| fields::value(f, &row), now)))
}
