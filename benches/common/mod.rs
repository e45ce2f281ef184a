//! Rows the per-page benchmarks write the way the engine does.

use trawl::model::{CanonicalUrl, UrlId};
use trawl::schema::{
    CF_FRONTIER, CF_SEEN, CF_URLS, FrontierEntry, FrontierKey, SeenRecord, SeenState,
};
use trawl::store::Batch;

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
