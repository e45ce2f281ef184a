//! Near-duplicates as pages are recorded: a page's simhash looked up in
//! the band index, the page added to it and to its cluster, and the
//! cluster's budget applied to the page's site (past it, the page's links
//! are not followed: the stop for calendars and faceted search, whose
//! pages differ by a date or a filter and link on to more of the same).
//! The budget is a site's, not the cluster's: a site that copies another
//! twenty times spends its own budget, not the copied site's.

use super::Ledger;
use crate::dedup::{BandIndex, MAX_DISTANCE};
use crate::filter::scope::site_key;
use crate::model::{self, CanonicalUrl, HostId, UrlId};
use crate::schema::tables::{ClusterSites, Clusters};
use crate::schema::{ClusterRecord, ClusterSiteKey, NearRecord};
use crate::store::{Batch, StoreError};

/// Where a page's simhash placed it.
pub(super) struct Placed {
    /// Its nearest stored page, when one was within the distance.
    pub near: Option<NearRecord>,
    /// Whether its links are followed (its site is within its cluster's
    /// budget).
    pub expand: bool,
}

impl Ledger {
    /// Finds page `url`'s nearest stored page by `hash`, and adds the page
    /// to the index (in memory and in the batch) and to that page's
    /// cluster.
    pub(super) fn place_near(
        &mut self,
        b: &mut Batch<'_>,
        url: &CanonicalUrl,
        hash: u64,
    ) -> Result<Placed, StoreError> {
        let id = url.id();
        let distance = self.settings.dedup.distance.min(MAX_DISTANCE);
        let found = self.bands(b)?.nearest(hash, distance, id);
        let cluster = found.map_or(id, |m| m.cluster);
        self.index_page(b, id, hash, cluster)?;
        let Some(m) = found else {
            return Ok(Placed {
                near: None,
                expand: true,
            });
        };
        let expand = self.join_cluster(b, m.cluster, url)?;
        self.counters.near_duplicates += 1;
        self.counters.unexpanded += u64::from(!expand);
        Ok(Placed {
            near: Some(NearRecord {
                of: m.page.0,
                distance: m.distance as u8,
                cluster: m.cluster.0,
                expanded: expand,
            }),
            expand,
        })
    }

    /// A changed page's new version keeps its place (`near`, None for a
    /// cluster's first page): it is held under its new hash.
    pub(super) fn keep_place(
        &mut self,
        b: &mut Batch<'_>,
        id: UrlId,
        hash: u64,
        near: Option<NearRecord>,
    ) -> Result<(), StoreError> {
        let cluster = near.map_or(id, |n| UrlId(n.cluster));
        self.index_page(b, id, hash, cluster)
    }

    /// Page `id`'s version held under `hash` changed or went: it leaves
    /// the index (no lookup finds text the db no longer holds).
    pub(super) fn unplace(
        &mut self,
        b: &mut Batch<'_>,
        id: UrlId,
        hash: u64,
    ) -> Result<(), StoreError> {
        b.delete_simhash(hash, id);
        // Loaded now if it will be: a load later in this batch would read
        // the row this batch deletes.
        if self.settings.dedup.near || self.bands.is_some() {
            self.bands(b)?.remove(hash, id);
        }
        Ok(())
    }

    /// The band index, loaded from the store at its first use; the rows
    /// it does not hold (over `dedup.max_indexed`) are deleted in `b`.
    fn bands(&mut self, b: &mut Batch<'_>) -> Result<&mut BandIndex, StoreError> {
        if self.bands.is_none() {
            let max = self.settings.dedup.max_indexed;
            let (index, dropped) = self.store.load_band_index(max)?;
            for (hash, page) in dropped {
                b.delete_simhash(hash, page);
            }
            self.bands = Some(index);
        }
        Ok(self.bands.get_or_insert_default())
    }

    /// Holds page `id` under `hash` in `cluster`, with its row; the rows
    /// of the pages the bound makes it forget are deleted.
    fn index_page(
        &mut self,
        b: &mut Batch<'_>,
        id: UrlId,
        hash: u64,
        cluster: UrlId,
    ) -> Result<(), StoreError> {
        let max = self.settings.dedup.max_indexed;
        let placed = self.bands(b)?.insert(hash, id, cluster, max);
        for (hash, page) in placed.evicted {
            b.delete_simhash(hash, page);
        }
        if let Some(seq) = placed.seq {
            b.put_simhash(hash, id, cluster, seq);
        }
        Ok(())
    }

    /// Page `url` joins `cluster`: the cluster and the page's site in it
    /// count one more page. Returns whether the site is within the
    /// cluster's budget.
    fn join_cluster(
        &mut self,
        b: &mut Batch<'_>,
        cluster: UrlId,
        url: &CanonicalUrl,
    ) -> Result<bool, StoreError> {
        let budget = self.settings.dedup.cluster_budget;
        let site = site_id(&url.host_key());
        let first = ClusterRecord {
            pages: 1,
            unexpanded: 0,
        };
        let at = |site| ClusterSiteKey { cluster, site };
        // A cluster's first page writes no row: a missing one counts it,
        // and its site's row is written when a second page joins (a
        // cluster of a schema before 21 counts its sites from then on).
        let (mut total, own) = match self.store.row::<Clusters>(&cluster)? {
            Some(c) => (c, None),
            None => {
                let first_url = self.store.url(cluster)?;
                let first_site = first_url
                    .and_then(|u| model::normalize(&u).ok())
                    .map(|u| site_id(&u.host_key()));
                match first_site {
                    Some(s) if s == site => (first.clone(), Some(first.clone())),
                    Some(s) => {
                        b.put_row::<ClusterSites>(&at(s), &first);
                        (first.clone(), Some(ClusterRecord::default()))
                    }
                    None => (first.clone(), None),
                }
            }
        };
        let mut own = match own {
            Some(r) => r,
            None => self
                .store
                .row::<ClusterSites>(&at(site))?
                .unwrap_or_default(),
        };
        own.pages += 1;
        total.pages += 1;
        let expand = budget == 0 || own.pages <= budget;
        own.unexpanded += u32::from(!expand);
        total.unexpanded += u32::from(!expand);
        b.put_row::<Clusters>(&cluster, &total);
        b.put_row::<ClusterSites>(&at(site), &own);
        Ok(expand)
    }
}

/// The id of the site of `origin` (its registrable domain; an IP
/// address's origin) as `cluster_sites` keys it.
fn site_id(origin: &str) -> u64 {
    HostId::of(site_key(origin)).0
}
