//! refilter's drop step: queued URLs that no page links to with a
//! `follow` verdict any more leave the frontier. The candidates are stored
//! (`meta/refilter-drop:`) in the batches of the pages that unfollowed
//! them, so a refilter stopped before this step leaves them for the next.

use std::collections::HashSet;

use super::Ledger;
use super::bump;
use crate::model::{self, UrlId};
use crate::schema::{
    CF_FRONTIER, CF_INLINKS, CF_META, FilterReason, FrontierEntry, FrontierKey, InLinkKey,
    SeenRecord, SeenState, Versioned, meta_keys,
};
use crate::store::{Store, StoreError};

impl Ledger {
    /// The drop candidates stored by refilter runs that did not reach
    /// their drop step.
    pub fn pending_drops(&self) -> Result<Vec<UrlId>, StoreError> {
        let mut ids = Vec::new();
        for row in self.store.scan(CF_META, meta_keys::REFILTER_DROP_PREFIX) {
            let (k, _) = row?;
            ids.extend(UrlId::from_slice(
                &k[meta_keys::REFILTER_DROP_PREFIX.len()..],
            ));
        }
        Ok(ids)
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
        for row in store.scan(CF_FRONTIER, &[]) {
            let (k, v) = row?;
            let Some(key) = FrontierKey::from_key(&k) else {
                continue;
            };
            if !candidates.contains(&key.url) || still_linked(&store, key.url)? {
                continue;
            }
            if let Ok(e) = FrontierEntry::decode(&v) {
                rows.push((key, e));
            }
        }
        let n = rows.len() as u64;
        let mut b = store.batch();
        for id in candidates {
            b.delete(CF_META, &meta_keys::refilter_drop(*id));
        }
        let mut hosts = Vec::new();
        for (key, entry) in rows {
            self.dequeue(&mut b, key)?;
            let rec = SeenRecord {
                state: SeenState::Filtered(FilterReason::Refiltered),
                depth: entry.depth,
                parent: entry.parent,
                redirects: entry.redirects,
                updated_ms: model::now_ms(),
            };
            b.put(crate::schema::CF_SEEN, &key.url.to_bytes(), &rec);
            bump(
                &mut self.counters.filtered,
                FilterReason::Refiltered.name(),
                1,
            );
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
fn still_linked(store: &Store, dst: UrlId) -> Result<bool, StoreError> {
    for row in store.scan(CF_INLINKS, &dst.to_bytes()) {
        let (k, _) = row?;
        let Some(k) = InLinkKey::from_key(&k) else {
            continue;
        };
        if store
            .link(k.src, dst)?
            .is_some_and(|l| l.verdict == "follow")
        {
            return Ok(true);
        }
    }
    Ok(false)
}
