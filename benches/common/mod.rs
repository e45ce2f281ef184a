//! Rows the per-page benchmarks write the way the engine does.

use trawl::model::SeenState;
use trawl::model::{CanonicalUrl, UrlId};
use trawl::schema::{CF_FRONTIER, CF_SEEN, CF_URLS, FrontierEntry, FrontierKey, SeenRecord};
use trawl::store::{Batch, Store};

/// The in-links the way the engine writes them (schema 23): each page
/// marked waiting in its batch, and a group row per target for every
/// 4,096 pages, in a batch of their own.
#[derive(Default)]
pub struct InLinkWindow {
    number: u64,
    by_target: std::collections::HashMap<UrlId, Vec<UrlId>>,
    pages: Vec<UrlId>,
}

impl InLinkWindow {
    /// Page `src`'s links to `targets` (each once), in its batch `b`.
    pub fn add(&mut self, b: &mut Batch<'_>, src: UrlId, targets: &[UrlId]) {
        b.put_inlinks_waiting(self.number, src);
        self.pages.push(src);
        for dst in targets {
            self.by_target.entry(*dst).or_default().push(src);
        }
    }

    /// Writes the window's group rows once it holds 4,096 pages.
    pub fn write_if_full(&mut self, store: &Store) {
        if self.pages.len() < 4096 {
            return;
        }
        let pages = self.pages.drain(..);
        store
            .write_inlink_window(self.number, self.by_target.iter_mut(), pages)
            .unwrap();
        self.by_target.clear();
        self.number += 1;
    }
}

/// Queues a URL first found on page `parent`: its `urls`, `seen` and
/// `frontier` rows, one hop deep, at `priority` in its host's queue.
pub fn queue_new_url(
    b: &mut Batch<'_>,
    id: UrlId,
    url: &CanonicalUrl,
    parent: UrlId,
    priority: u64,
) {
    b.put_raw(CF_URLS, &id.to_bytes(), url.as_str().as_bytes());
    let seen = SeenRecord {
        state: SeenState::Queued,
        depth: 1,
        parent: Some(parent.0),
        redirects: 0,
        updated_ms: 0,
        priority: Some(priority),
        scores: None,
    };
    b.put(CF_SEEN, &id.to_bytes(), &seen);
    let key = FrontierKey {
        host: url.host_id(),
        priority,
        url: id,
    };
    let entry = FrontierEntry {
        url: url.as_str().to_string(),
        depth: 1,
        parent: Some(parent.0),
        redirects: 0,
        attempts: 0,
        enqueued_ms: 0,
        scores: None,
        link: None,
        revisit: None,
    };
    b.put(CF_FRONTIER, &key.to_key(), &entry);
}
