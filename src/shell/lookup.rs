//! Lookups several commands share: a URL or host argument, a page's links
//! out and in, URLs by id, and a positive count.

use super::Ctx;
use super::error::Result;
use crate::model::{self, HostId, UrlId};
use crate::schema::{HostRecord, LinkRecord};

impl Ctx {
    pub(super) fn url_arg(&self, url: &str) -> Result<model::CanonicalUrl> {
        Ok(model::normalize(url).map_err(|e| e.to_string())?)
    }

    /// A host given as `example.org`, `example.org:8080` or a URL.
    pub(super) fn resolve_host(&self, host: &str) -> Result<(HostId, HostRecord)> {
        let candidates: Vec<String> = if host.contains("://") {
            vec![host.to_string()]
        } else {
            vec![format!("http://{host}/"), format!("https://{host}/")]
        };
        for c in candidates {
            if let Ok(u) = model::normalize(&c)
                && let Some(rec) = self.store.host(u.host_id())?
            {
                return Ok((u.host_id(), rec));
            }
        }
        Err(format!("host {host} is not in the db (hosts lists them)").into())
    }

    /// Up to `n` out-links of `id` with their targets' URLs.
    pub(super) fn links_from(&self, id: UrlId, n: usize) -> Result<Vec<(String, LinkRecord)>> {
        let links = self.store.links_from(id, n)?;
        Ok(links
            .into_iter()
            .map(|(_, mut l)| (std::mem::take(&mut l.dst_url), l))
            .collect())
    }

    /// The URLs of up to `n` pages linking to `id`.
    pub(super) fn links_to(&self, id: UrlId, n: usize) -> Result<Vec<String>> {
        let mut ids = self.store.inlinks_to(id)?;
        ids.truncate(n);
        self.urls_of(&ids)
    }

    /// The URLs of `ids`, in order; an id without a `urls` row shows as hex.
    pub(super) fn urls_of(&self, ids: &[UrlId]) -> Result<Vec<String>> {
        let urls = self.store.urls_many(ids)?;
        Ok(urls
            .into_iter()
            .zip(ids)
            .map(|(u, id)| u.unwrap_or_else(|| id.to_string()))
            .collect())
    }
}

/// Tells the user (on stderr, so `--json` output stays JSON) a scan
/// passed over rows it could not decode.
pub(super) fn unreadable(n: u64) {
    if n > 0 {
        eprintln!("note: {n} stored rows could not be read and were left out");
    }
}

/// A count of at least 1 (`top N`).
pub(super) fn parse_n(n: &str) -> Result<usize> {
    n.parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{n:?} is not a positive number").into())
}
