//! A full check of a database against itself: every counter recounted
//! from the rows it counts, every fetched page's links and in-links
//! present both ways, no fetched URL still queued. What a kill at any
//! moment must never break; the tests run it after every kind of death.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::model::UrlId;
use crate::model::{FilterReason, SeenState};
use crate::schema::tables::{Docs, Due, Frontier, InFlight, PageFacts, Pages, Seen};
use crate::schema::{CF_PAGE_FACTS, Filtered, FrontierKey, PageFactsRecord};
use crate::store::{Store, StoreError};

/// What a full scan found that disagrees (empty: consistent).
pub fn audit(store: &Store) -> Result<Vec<String>, StoreError> {
    let c = store.counters()?;
    let mut problems = Vec::new();
    let check = |problems: &mut Vec<String>, what: &str, counted: u64, stored: u64| {
        if counted != stored {
            problems.push(format!("{what}: counter {stored}, rows {counted}"));
        }
    };
    let seen = scan_seen(store, &mut problems)?;
    check(&mut problems, "seen", seen.states.len() as u64, c.seen);
    check(
        &mut problems,
        "fetched",
        seen.fetched.len() as u64,
        c.fetched,
    );
    // A page queued again for a revisit stays fetched in `seen`.
    let first_fetches = c.queued.saturating_sub(c.revisits_queued);
    check(
        &mut problems,
        "queued",
        seen.queued.len() as u64,
        first_fetches,
    );
    for (status, n) in &c.by_status {
        check(
            &mut problems,
            &format!("status {status}"),
            seen.by_status.get(status).copied().unwrap_or(0),
            *n,
        );
    }
    let failed = c.failed.iter().map(|(r, n)| (r.name(), n));
    for (reason, n) in counted_map(failed, &seen.failed) {
        check(&mut problems, &format!("failed {reason}"), n.0, n.1);
    }
    // url-too-long counts link occurrences (such URLs get no row), and the
    // page verdicts count pages, not seen rows.
    let filtered = c.filtered.iter().filter_map(|(k, n)| match k {
        Filtered::Url(FilterReason::UrlTooLong) | Filtered::Page(_) => None,
        Filtered::Url(r) => Some((r.name(), n)),
    });
    for (reason, n) in counted_map(filtered, &seen.filtered) {
        check(&mut problems, &format!("filtered {reason}"), n.0, n.1);
    }
    let (pages, bytes, unread) = check_pages(store, &mut problems)?;
    unreadable(&mut problems, "pages", unread);
    check(&mut problems, "pages rows", pages + unread, c.fetched);
    check(&mut problems, "bytes", bytes, c.bytes);
    let frontier = scan_frontier(store, &mut problems)?;
    check(
        &mut problems,
        "frontier rows",
        frontier.len() as u64,
        c.queued,
    );
    let revisits = frontier.iter().filter(|(_, revisit)| *revisit).count();
    check(
        &mut problems,
        "revisits queued",
        revisits as u64,
        c.revisits_queued,
    );
    let due = store.rows::<Due>(&[]).count() as u64;
    check(&mut problems, "due rows", due, c.due);
    for (key, revisit) in &frontier {
        let id = &key.url;
        if *revisit {
            if !seen.fetched.contains(id) {
                problems.push(format!("{id:?}: queued for a revisit but not fetched"));
            }
        } else if seen.fetched.contains(id) {
            problems.push(format!("{id:?}: fetched but still in the frontier"));
        } else if !seen.queued.contains_key(id) {
            problems.push(format!("{id:?}: in the frontier but not queued in seen"));
        } else if let Some(&p) = seen.queued.get(id)
            && p != Some(key.priority)
        {
            problems.push(format!(
                "{id:?}: queued at priority {:#x} but its seen row names {p:x?}",
                key.priority
            ));
        }
    }
    let (links, duplicates) = check_links(store, &mut problems)?;
    check(&mut problems, "links", links, c.links);
    check(&mut problems, "duplicates", duplicates, c.duplicates);
    let mut rows = store.rows::<InFlight>(&[]);
    for row in rows.by_ref() {
        let (id, rec) = row?;
        if rec.in_flight {
            problems.push(format!("{id:?}: still marked in flight"));
        }
    }
    unreadable(&mut problems, "inflight", rows.unreadable());
    Ok(problems)
}

/// Reads every page: its count, bytes on the wire and unreadable rows.
/// Each readable page's facts row must be its record without the body,
/// and there are no more facts rows than pages.
fn check_pages(store: &Store, problems: &mut Vec<String>) -> Result<(u64, u64, u64), StoreError> {
    let (mut pages, mut bytes, mut wrong) = (0, 0, 0u64);
    let mut rows = store.rows::<Pages>(&[]);
    let mut facts = store.page_join(true);
    for row in rows.by_ref() {
        let (id, page) = row?;
        pages += 1;
        bytes += page.wire_len;
        let same = match facts.row::<PageFacts>(id) {
            Ok(f) => f == Some(PageFactsRecord::of(&page)),
            Err(StoreError::Codec { .. }) => false,
            Err(e) => return Err(e),
        };
        if !same {
            wrong += 1;
            if wrong <= 10 {
                problems.push(format!(
                    "{id:?}: its page_facts row is missing, unreadable or not its page's"
                ));
            }
        }
    }
    if wrong > 10 {
        problems.push(format!(
            "{wrong} pages in all whose page_facts row is wrong"
        ));
    }
    let mut facts_rows = 0;
    let mut c = store.cursor(CF_PAGE_FACTS, &[]);
    while c.next_row()?.is_some() {
        facts_rows += 1;
    }
    if facts_rows > pages + rows.unreadable() {
        problems.push(format!(
            "page_facts: {facts_rows} rows for {} pages",
            pages + rows.unreadable()
        ));
    }
    Ok((pages, bytes, rows.unreadable()))
}

/// Rows of a table that did not decode are a problem of their own.
fn unreadable(problems: &mut Vec<String>, table: &str, n: u64) {
    if n > 0 {
        problems.push(format!("{table}: {n} rows unreadable"));
    }
}

/// Each reason's (rows, counter), by name, for every reason either side
/// has.
fn counted_map(
    counters: impl Iterator<Item = (&'static str, u64)>,
    rows: &HashMap<&'static str, u64>,
) -> BTreeMap<&'static str, (u64, u64)> {
    let mut out: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
    for (k, v) in counters {
        out.entry(k).or_default().1 = v;
    }
    for (k, v) in rows {
        out.entry(k).or_default().0 = *v;
    }
    out
}

#[derive(Default)]
struct SeenScan {
    states: HashMap<UrlId, SeenState>,
    fetched: HashSet<UrlId>,
    /// Queued URLs with the frontier priority their `seen` row names.
    queued: HashMap<UrlId, Option<u64>>,
    by_status: HashMap<u16, u64>,
    failed: HashMap<&'static str, u64>,
    filtered: HashMap<&'static str, u64>,
}

fn scan_seen(store: &Store, problems: &mut Vec<String>) -> Result<SeenScan, StoreError> {
    let mut s = SeenScan::default();
    let mut rows = store.rows::<Seen>(&[]);
    for row in rows.by_ref() {
        let (id, rec) = row?;
        match rec.state {
            SeenState::Fetched { status } => {
                s.fetched.insert(id);
                *s.by_status.entry(status).or_default() += 1;
            }
            SeenState::Queued => {
                s.queued.insert(id, rec.priority);
            }
            SeenState::Failed(r) => *s.failed.entry(r.name()).or_default() += 1,
            SeenState::Filtered(r) => *s.filtered.entry(r.name()).or_default() += 1,
        }
        s.states.insert(id, rec.state);
    }
    unreadable(problems, "seen", rows.unreadable());
    Ok(s)
}

/// Every frontier row's key, and whether it is a revisit.
fn scan_frontier(
    store: &Store,
    problems: &mut Vec<String>,
) -> Result<Vec<(FrontierKey, bool)>, StoreError> {
    let mut ids = Vec::new();
    let mut rows = store.rows::<Frontier>(&[]);
    for row in rows.by_ref() {
        let (key, entry) = row?;
        ids.push((key, entry.revisit.is_some()));
    }
    unreadable(problems, "frontier", rows.unreadable());
    Ok(ids)
}

/// Every links row's targets have in-link rows and every in-link row its
/// link; returns the links the docs count (of pages whose links were
/// recorded) and the duplicate pages.
fn check_links(store: &Store, problems: &mut Vec<String>) -> Result<(u64, u64), StoreError> {
    let mut pairs: HashSet<(UrlId, UrlId)> = HashSet::new();
    store.each_page_links(|src, links| match links {
        Ok(links) => pairs.extend(links.into_iter().map(|(dst, _)| (src, dst))),
        Err(e) => problems.push(format!("{src:?}: links unreadable: {e}")),
    })?;
    let mut inlinks = 0u64;
    let mut all = store.all_inlinks()?;
    while let Some((dst, sources)) = all.next_target()? {
        for src in sources {
            inlinks += 1;
            if !pairs.contains(&(src, dst)) {
                problems.push(format!("in-link {src:?} -> {dst:?} has no link"));
            }
        }
    }
    if inlinks != pairs.len() as u64 {
        problems.push(format!("{} links but {inlinks} in-link rows", pairs.len()));
    }
    let (mut links, mut duplicates) = (0, 0);
    let mut rows = store.rows::<Docs>(&[]);
    for row in rows.by_ref() {
        let (_, d) = row?;
        duplicates += u64::from(d.duplicate_of.is_some());
        if d.links_recorded() {
            links += u64::from(d.outlinks);
        }
    }
    unreadable(problems, "docs", rows.unreadable());
    Ok((links, duplicates))
}
