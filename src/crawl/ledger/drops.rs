//! refilter's drop step: queued URLs that no page links to with a
//! `follow` verdict any more leave the frontier. The candidates are stored
//! (`meta/refilter-drop:`) in the batches of the pages that unfollowed
//! them, so a refilter stopped before this step leaves them for the next.

use std::collections::HashSet;

use super::Ledger;
use crate::model::UrlId;
use crate::model::{FilterReason, SeenState};
use crate::schema::Filtered;
use crate::schema::tables::Frontier;
use crate::schema::{FrontierEntry, FrontierKey, SeenRecord};
use crate::store::{Store, StoreError};

impl Ledger {
    /// The drop candidates stored by refilter runs that did not reach
    /// their drop step.
    pub fn pending_drops(&self) -> Result<Vec<UrlId>, StoreError> {
        self.store.refilter_drops().collect()
    }

    /// Queued URLs that no page links to with a `follow` verdict any more
    /// leave the frontier; the stored candidates go in the same batch.
    pub fn drop_unlinked(
        &mut self,
        candidates: &HashSet<UrlId>,
        dry_run: bool,
    ) -> Result<u64, StoreError> {
        let store = self.store.clone();
        if candidates.is_empty() {
            return Ok(0);
        }
        // Only queued URLs can leave the frontier: one pass over it finds
        // the candidates there, and only those have their in-links read.
        let mut rows: Vec<(FrontierKey, FrontierEntry)> = Vec::new();
        let mut queued = store.rows::<Frontier>(&[]);
        // One in-links reader for every candidate (see `InLinks`).
        let mut inlinks = store.inlinks()?;
        for row in queued.by_ref() {
            let (key, entry) = row?;
            // A revisit's page is fetched: no link change unqueues it.
            let candidate = candidates.contains(&key.url) && entry.revisit.is_none();
            if candidate && !still_linked(&store, &mut inlinks, key.url)? {
                rows.push((key, entry));
            }
        }
        if queued.unreadable() > 0 {
            self.notice(format!(
                "refilter: {} frontier rows could not be read and were left queued",
                queued.unreadable()
            ));
        }
        let n = rows.len() as u64;
        let mut b = store.batch();
        for id in candidates {
            b.delete_refilter_drop(*id);
        }
        let mut hosts = Vec::new();
        for (key, entry) in rows {
            self.dequeue(&mut b, key, &entry)?;
            let rec = SeenRecord {
                state: SeenState::Filtered(FilterReason::Refiltered),
                depth: entry.depth,
                parent: entry.parent,
                redirects: entry.redirects,
                updated_ms: self.clock.now_ms(),
                priority: None,
                scores: entry.scores.clone(),
            };
            b.put(crate::schema::CF_SEEN, &key.url.to_bytes(), &rec);
            self.counters
                .filtered
                .add(Filtered::Url(FilterReason::Refiltered), 1);
            if !hosts.contains(&key.host) {
                hosts.push(key.host);
            }
        }
        if !dry_run {
            self.finish(b, &hosts)?;
        }
        Ok(n)
    }
}

/// Whether some page links to `dst` with a `follow` verdict.
fn still_linked(
    store: &Store,
    inlinks: &mut crate::store::InLinks<'_>,
    dst: UrlId,
) -> Result<bool, StoreError> {
    for src in inlinks.sources(dst)? {
        if store.link(src, dst)?.is_some_and(|l| l.verdict.follows()) {
            return Ok(true);
        }
    }
    Ok(false)
}
