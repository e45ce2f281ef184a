//! `text ~ 'w'` and `title ~ 'w'` in a `pages where` filter, answered from
//! the search index: its hits for those terms (`search::contains`: a
//! superset of the pages holding the substring, by the index's unstemmed
//! words), with every page the db logged since the index's last commit
//! (which it may hold an older version of), are the candidates; the scan
//! then checks the whole filter on each, as on every page. So the answer
//! is the scan's, during a crawl too, read from a few pages instead of
//! all of them.

use tantivy::query::{BooleanQuery, Query};

use crate::search::SearchIndex;
use crate::shell::Ctx;
use crate::shell::error::Result;
use crate::shell::expr::{Expr, Lit, Op};
use crate::shell::plan::IndexScan;

/// Candidates past this share of the pages are read by the plain scan
/// instead: it reads pages in key order, which costs less a page.
const MAX_SHARE: u64 = 4;
/// The least cap on candidates, for small dbs.
const MIN_CAP: u64 = 4096;

/// The pages that can match `filter`'s `text ~` and `title ~` terms, when
/// the filter's shape lets them narrow it (an `and` term, or an `or` of
/// such terms) and the db has an index the log keeps current; None: scan.
pub(super) fn search_plan(sh: &Ctx, filter: &Expr) -> Result<Option<IndexScan>> {
    if !narrows(filter) {
        return Ok(None);
    }
    let Ok(Some(index)) = SearchIndex::open(sh.store.path()) else {
        return Ok(None);
    };
    let Ok(mark) = index.mark() else {
        return Ok(None);
    };
    let Some(next) = mark.next_seq.filter(|_| mark.followable()) else {
        return Ok(None);
    };
    let counters = sh.store.counters()?;
    let cap = (counters.fetched / MAX_SHARE).max(MIN_CAP);
    // Read in this order: a commit after the mark holds the pages of the
    // log rows it trims, and the reader reloaded after the log sees it.
    let behind = counters.search_seq.saturating_sub(next);
    if behind > cap {
        return Ok(None);
    }
    let logged = sh.store.search_log(next, cap as usize + 1)?;
    if logged.len() as u64 > cap || index.reload().is_err() {
        return Ok(None);
    }
    let Some(query) = query_of(filter, &index) else {
        return Ok(None);
    };
    let query = index.with_partial(query);
    let Ok(Some(mut ids)) = index.ids(&*query, cap) else {
        return Ok(None);
    };
    ids.extend(logged.into_iter().map(|(_, id)| id));
    ids.sort_unstable();
    ids.dedup();
    Ok(Some(IndexScan::Pages(ids)))
}

/// Whether the index can narrow `e`: it has a `text ~` or `title ~` term
/// every match must pass (an `and` term, or each side of an `or`).
fn narrows(e: &Expr) -> bool {
    match e {
        Expr::Cmp { .. } => contains_term(e).is_some(),
        Expr::And(a, b) => narrows(a) || narrows(b),
        Expr::Or(a, b) => narrows(a) && narrows(b),
        Expr::Not(_) | Expr::True => false,
    }
}

/// `(title?, pattern)` of a `title ~ '…'` or `text ~ '…'` term.
fn contains_term(e: &Expr) -> Option<(bool, &str)> {
    match e {
        Expr::Cmp {
            field: field @ ("text" | "title"),
            op: Op::Contains,
            lit: Lit::Str(p),
        } => Some((*field == "title", p.as_str())),
        _ => None,
    }
}

/// The index query whose hits (with the pages it does not hold whole)
/// include every page `e` matches; None when it has none.
fn query_of(e: &Expr, index: &SearchIndex) -> Option<Box<dyn Query>> {
    match e {
        Expr::Cmp { .. } => {
            let (title, pattern) = contains_term(e)?;
            index.contains(title, pattern)
        }
        Expr::And(a, b) => match (query_of(a, index), query_of(b, index)) {
            (Some(a), Some(b)) => Some(Box::new(BooleanQuery::intersection(vec![a, b]))),
            (a, b) => a.or(b),
        },
        Expr::Or(a, b) => {
            let (a, b) = (query_of(a, index)?, query_of(b, index)?);
            Some(Box::new(BooleanQuery::union(vec![a, b])))
        }
        Expr::Not(_) | Expr::True => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;
    use std::collections::BTreeSet;

    fn urls(jsonl: &str) -> BTreeSet<String> {
        jsonl
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["url"].as_str().unwrap().to_string()
            })
            .collect()
    }

    /// `filter`'s pages read through the search index, and by the scan
    /// (`not not` keeps the index out), which must agree.
    fn both(t: &mut TestShell, filter: &str) -> (BTreeSet<String>, BTreeSet<String>) {
        let indexed = urls(&t.ok(&format!("pages where {filter} --format jsonl")));
        let scanned = urls(&t.ok(&format!("pages where not not ({filter}) --format jsonl")));
        let count = t.ok(&format!("count pages where {filter}"));
        assert_eq!(count.trim(), indexed.len().to_string(), "{filter}");
        (indexed, scanned)
    }

    /// Whole words, parts of words, several words, capitals, Chinese runs
    /// within and across words, titles, and terms combined with others:
    /// the index's candidates hold every page the scan finds.
    #[test]
    fn text_and_title_terms_read_the_index_and_agree_with_the_scan() {
        let mut t = TestShell::crawled(4);
        let all: usize = t.ok("count pages").trim().parse().unwrap();
        let mut found = 0;
        for filter in [
            "text ~ 'price'",
            "text ~ 'ric'",
            "text ~ 'PRICE'",
            "text ~ 'pping disc'",
            "text ~ 'e s'",
            "text ~ 'shipping  discount'",
            "text ~ '论'",
            "text ~ '论文'",
            "text ~ '文毕'",
            "text ~ '研究生'",
            "text ~ '的通知'",
            "text ~ 'zzqx'",
            "title ~ 'home'",
            "title ~ '1'",
            "title ~ 'garden' or text ~ '体育'",
            "text ~ 'price' and depth >= 1",
            "text ~ 'price' and not (text ~ 'garden')",
            "(text ~ 'price' or text ~ 'music') and status = 200",
        ] {
            let (indexed, scanned) = both(&mut t, filter);
            assert_eq!(indexed, scanned, "{filter}");
            found += indexed.len();
            let note = t.ok(&format!("pages where {filter} limit 1"));
            assert!(note.contains("from the search index"), "{filter}: {note}");
        }
        assert!(found > 0 && found < all * 18, "{found} of {all}");
        // A term the index cannot narrow (no letter), or under `not`,
        // is the scan's.
        for filter in [
            "text ~ '--'",
            "not (text ~ 'price')",
            "text ~ 'x' or depth = 0",
        ] {
            let note = t.ok(&format!("pages where {filter} limit 1"));
            assert!(!note.contains("search index"), "{filter}: {note}");
        }
    }

    /// Pages the index has not caught up with are candidates too: after
    /// `refilter --denoise` changed every stored text, with the indexer
    /// not yet run, the answer is still the scan's.
    #[test]
    fn pages_the_index_lags_on_are_read_from_the_log() {
        let mut t = TestShell::crawled(3);
        let before = both(&mut t, "text ~ 'price'");
        assert_eq!(before.0, before.1);
        t.ok("set denoise.enabled true");
        t.ok("refilter --denoise");
        for filter in ["text ~ 'price'", "text ~ 'home'", "text ~ '论文'"] {
            let (indexed, scanned) = both(&mut t, filter);
            assert_eq!(indexed, scanned, "{filter}");
        }
        // The index did lag: the next search takes the changes first.
        let out = t.ok("search price");
        assert!(out.contains("page changes it lacked"), "{out}");
    }
}
