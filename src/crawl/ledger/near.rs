//! Near-duplicates as pages are recorded: a page's simhash looked up in
//! the band index, the page added to it and to its cluster, and the
//! cluster's budget applied (past it, the page's links are not followed:
//! the stop for calendars and faceted search, whose pages differ by a
//! date or a filter and link on to more of the same).

use super::Ledger;
use crate::dedup::MAX_DISTANCE;
use crate::model::UrlId;
use crate::schema::tables::Clusters;
use crate::schema::{ClusterRecord, NearRecord};
use crate::store::{Batch, StoreError};

/// Where a page's simhash placed it.
pub(super) struct Placed {
    /// Its nearest stored page, when one was within the distance.
    pub near: Option<NearRecord>,
    /// Whether its links are followed (its cluster is within budget).
    pub expand: bool,
}

impl Ledger {
    /// Finds page `id`'s nearest stored page by `hash`, and adds the page
    /// to the index (in memory, loaded from the store at the first page,
    /// and in the batch) and to that page's cluster.
    pub(super) fn place_near(
        &mut self,
        b: &mut Batch<'_>,
        id: UrlId,
        hash: u64,
    ) -> Result<Placed, StoreError> {
        let d = &self.settings.dedup;
        let (distance, budget) = (d.distance.min(MAX_DISTANCE), d.cluster_budget);
        if self.bands.is_none() {
            self.bands = Some(self.store.load_band_index()?);
        }
        let bands = self.bands.get_or_insert_default();
        let found = bands.nearest(hash, distance, id);
        let cluster = found.map_or(id, |m| m.cluster);
        bands.insert(hash, id, cluster);
        b.put_simhash(hash, id, cluster);
        let Some(m) = found else {
            return Ok(Placed {
                near: None,
                expand: true,
            });
        };
        // A cluster's first page writes no row: a missing one counts it.
        let mut cluster = self
            .store
            .row::<Clusters>(&m.cluster)?
            .unwrap_or(ClusterRecord {
                pages: 1,
                unexpanded: 0,
            });
        cluster.pages += 1;
        let expand = budget == 0 || cluster.pages <= budget;
        cluster.unexpanded += u32::from(!expand);
        b.put_row::<Clusters>(&m.cluster, &cluster);
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
}
