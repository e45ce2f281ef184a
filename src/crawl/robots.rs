//! robots.txt redirects and the scope: how many hops stay in a seed's
//! domain, and the guard's exception for them; and the scheduler's end of
//! a robots.txt fetch (the ledger records it: `ledger/robots.rs`).

use super::scheduler::{CrawlError, Scheduler};
use crate::fetch::{NetGuard, RobotsFetch};
use crate::filter::scope::domain_of;
use crate::model::{self, CanonicalUrl, HostId};

/// How many of a robots.txt's redirect hops, from the first, stay within
/// the registrable domain of `host` (the seed's, as `CanonicalUrl::host`
/// spells it): only those may widen the scope, or get the seed's
/// exception from the network guard.
pub fn robots_hops_in_domain(host: &str, redirects: &[CanonicalUrl]) -> usize {
    let domain = domain_of(host);
    redirects
        .iter()
        .take_while(|t| domain_of(t.host()) == domain)
        .count()
}

/// Before a seed host's robots.txt follows its last hop in `hops`: a hop
/// within the seed's registrable domain gets the exception of the URL it
/// came from (the seed's robots.txt, or the hop before), so the guard
/// lets it reach the seed's own address as the redirect's scope does.
pub fn vouch_for_robots_hop(guard: &NetGuard, origin: &str, hops: &[CanonicalUrl]) {
    let n = robots_hops_in_domain(&model::parsed_host(origin), hops);
    if n == 0 || n < hops.len() {
        return;
    }
    let from = match n {
        1 => model::normalize(&format!("{origin}/robots.txt")).ok(),
        _ => Some(hops[n - 2].clone()),
    };
    if let Some(from) = from {
        guard.add_derived(&hops[n - 1], &from);
    }
}

impl Scheduler {
    /// A robots.txt fetch ended: the ledger records it, and the host, with
    /// URLs queued, is scheduled again (answered, it may take the warm
    /// lane).
    pub(super) fn robots_done(
        &mut self,
        id: HostId,
        fetched: RobotsFetch,
    ) -> Result<(), CrawlError> {
        self.set_robots_in_flight(id, false);
        if let Some(after) = self.ledger.robots_answered(id, fetched)? {
            if after.answered {
                self.rejoin(id, after.at_ms);
            }
            self.schedule(id, after.at_ms)?;
        }
        Ok(())
    }
}
