//! A full check of a database against itself: every counter recounted
//! from the rows it counts, every fetched page's links and in-links
//! present both ways, no fetched URL still queued. What a kill at any
//! moment must never break; the tests run it after every kind of death.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::model::UrlId;
use crate::schema::{
    CF_DOCS, CF_FRONTIER, CF_INFLIGHT, CF_INLINKS, CF_LINKS, CF_PAGES, CF_SEEN, DocRecord,
    FrontierKey, InFlightRecord, InLinkKey, LinkView, OutLinkKey, PageLinks, PageRecord,
    SeenRecord, SeenState, Versioned,
};
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
    let seen = scan_seen(store)?;
    check(&mut problems, "seen", seen.states.len() as u64, c.seen);
    check(
        &mut problems,
        "fetched",
        seen.fetched.len() as u64,
        c.fetched,
    );
    check(&mut problems, "queued", seen.queued.len() as u64, c.queued);
    for (status, n) in &c.by_status {
        check(
            &mut problems,
            &format!("status {status}"),
            seen.by_status.get(status).copied().unwrap_or(0),
            *n,
        );
    }
    for (reason, n) in counted_map(&c.failed, &seen.failed) {
        check(&mut problems, &format!("failed {reason}"), n.0, n.1);
    }
    // url-too-long counts link occurrences (such URLs get no row), and
    // page-* count pages by verdict, not seen rows.
    let filtered: BTreeMap<String, u64> = c
        .filtered
        .iter()
        .filter(|(k, _)| *k != "url-too-long" && !k.starts_with("page-"))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    for (reason, n) in counted_map(&filtered, &seen.filtered) {
        check(&mut problems, &format!("filtered {reason}"), n.0, n.1);
    }
    let pages = store.scan(CF_PAGES, &[]).count() as u64;
    check(&mut problems, "pages rows", pages, c.fetched);
    let mut bytes = 0;
    for row in store.scan(CF_PAGES, &[]) {
        let (_, v) = row?;
        if let Ok(p) = PageRecord::decode(&v) {
            bytes += p.wire_len;
        }
    }
    check(&mut problems, "bytes", bytes, c.bytes);
    let frontier = scan_frontier(store)?;
    check(
        &mut problems,
        "frontier rows",
        frontier.len() as u64,
        c.queued,
    );
    for id in &frontier {
        if seen.fetched.contains(id) {
            problems.push(format!("{id:?}: fetched but still in the frontier"));
        } else if !seen.queued.contains(id) {
            problems.push(format!("{id:?}: in the frontier but not queued in seen"));
        }
    }
    let (links, duplicates) = check_links(store, &mut problems)?;
    check(&mut problems, "links", links, c.links);
    check(&mut problems, "duplicates", duplicates, c.duplicates);
    for row in store.scan(CF_INFLIGHT, &[]) {
        let (k, v) = row?;
        if InFlightRecord::decode(&v).is_ok_and(|r| r.in_flight) {
            problems.push(format!("{k:?}: still marked in flight"));
        }
    }
    Ok(problems)
}

/// Pairs of (rows, counter) for every key either side has.
fn counted_map(
    counters: &BTreeMap<String, u64>,
    rows: &HashMap<String, u64>,
) -> BTreeMap<String, (u64, u64)> {
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (k, v) in counters {
        out.entry(k.clone()).or_default().1 = *v;
    }
    for (k, v) in rows {
        out.entry(k.clone()).or_default().0 = *v;
    }
    out
}

#[derive(Default)]
struct SeenScan {
    states: HashMap<UrlId, SeenState>,
    fetched: HashSet<UrlId>,
    queued: HashSet<UrlId>,
    by_status: HashMap<u16, u64>,
    failed: HashMap<String, u64>,
    filtered: HashMap<String, u64>,
}

fn scan_seen(store: &Store) -> Result<SeenScan, StoreError> {
    let mut s = SeenScan::default();
    for row in store.scan(CF_SEEN, &[]) {
        let (k, v) = row?;
        let (Some(id), Ok(rec)) = (UrlId::from_slice(&k), SeenRecord::decode(&v)) else {
            continue;
        };
        match rec.state {
            SeenState::Fetched { status } => {
                s.fetched.insert(id);
                *s.by_status.entry(status).or_default() += 1;
            }
            SeenState::Queued => {
                s.queued.insert(id);
            }
            SeenState::Failed(r) => *s.failed.entry(r.name().into()).or_default() += 1,
            SeenState::Filtered(r) => *s.filtered.entry(r.name().into()).or_default() += 1,
        }
        s.states.insert(id, rec.state);
    }
    Ok(s)
}

fn scan_frontier(store: &Store) -> Result<Vec<UrlId>, StoreError> {
    let mut ids = Vec::new();
    for row in store.scan(CF_FRONTIER, &[]) {
        let (k, _) = row?;
        ids.extend(FrontierKey::from_key(&k).map(|k| k.url));
    }
    Ok(ids)
}

/// Every links row's targets have in-link rows and every in-link row its
/// link; returns the links the docs count and the duplicate pages.
fn check_links(store: &Store, problems: &mut Vec<String>) -> Result<(u64, u64), StoreError> {
    let mut pairs: HashSet<(UrlId, UrlId)> = HashSet::new();
    // A page row sorts before its page's per-link rows (schema 4) and
    // supersedes them.
    let mut page_row_of: Option<UrlId> = None;
    for row in store.scan(CF_LINKS, &[]) {
        let (k, v) = row?;
        if let Some(key) = OutLinkKey::from_key(&k) {
            if page_row_of != Some(key.src) {
                match LinkView::decode(&v) {
                    Ok(_) => {
                        pairs.insert((key.src, key.dst));
                    }
                    Err(e) => problems.push(format!("{key:?}: link row unreadable: {e}")),
                }
            }
            continue;
        }
        let Some(src) = UrlId::from_slice(&k) else {
            problems.push(format!("a links key of {} bytes", k.len()));
            continue;
        };
        page_row_of = Some(src);
        match PageLinks::decode(&v) {
            Ok(links) => pairs.extend(links.into_iter().map(|(dst, _)| (src, dst))),
            Err(e) => problems.push(format!("{src:?}: links row unreadable: {e}")),
        }
    }
    let mut inlinks = 0u64;
    for row in store.scan(CF_INLINKS, &[]) {
        let (k, _) = row?;
        let Some(key) = InLinkKey::from_key(&k) else {
            continue;
        };
        inlinks += 1;
        if !pairs.contains(&(key.src, key.dst)) {
            problems.push(format!("in-link {key:?} has no link"));
        }
    }
    if inlinks != pairs.len() as u64 {
        problems.push(format!("{} links but {inlinks} in-link rows", pairs.len()));
    }
    let (mut links, mut duplicates) = (0, 0);
    for row in store.scan(CF_DOCS, &[]) {
        let (_, v) = row?;
        let Ok(d) = DocRecord::decode(&v) else {
            continue;
        };
        if d.duplicate_of.is_some() {
            duplicates += 1;
        } else {
            links += u64::from(d.outlinks);
        }
    }
    Ok((links, duplicates))
}
