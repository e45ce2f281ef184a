//! A robots.txt fetch's end: its outcome put in the host's record, with
//! the waits and the Crawl-delay cap `politeness` decides, its sitemaps
//! listed, and the host scheduled again or given up.

use std::time::Duration;

use super::ledger::Ledger;
use super::politeness::{Politeness, cap_crawl_delay};
use super::scheduler::{CrawlError, Scheduler};
use crate::fetch::{NetGuard, RobotsFetch, RobotsRules};
use crate::filter::scope::domain_of;
use crate::model::{self, CanonicalUrl, HostId};
use crate::model::{FailReason, RobotsOutcome, RobotsRecord};
use crate::store::StoreError;

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

/// What recording a robots.txt outcome decided.
struct Recorded {
    unreachable: bool,
    /// Unreachable fetches in a row (0 after an answer).
    failures: u32,
    fetched_ms: u64,
    /// How long the outcome holds.
    wait_ms: u64,
    /// The Crawl-delay asked for, when it was capped.
    capped_from: Option<Duration>,
    /// Why it was unreachable.
    detail: String,
}

/// Puts a robots.txt outcome in host `id`'s record: the file, its rules
/// for our agent, when it expires and the Crawl-delay honoured.
fn record_outcome(
    l: &mut Ledger,
    id: HostId,
    outcome: RobotsOutcome,
    body: Vec<u8>,
) -> Result<Recorded, StoreError> {
    let now = l.clock.now_ms();
    let s = l.settings.clone();
    let agent = l.agent.clone();
    let h = l.loaded(id)?;
    h.robots_in_flight = false;
    let unreachable = matches!(outcome, RobotsOutcome::Unreachable { .. });
    let failures = if unreachable {
        h.record.robots.as_ref().map_or(0, |r| r.failures) + 1
    } else {
        0
    };
    let wait_ms = Politeness::of(&s).robots_wait_ms(unreachable, failures);
    let detail = match &outcome {
        RobotsOutcome::Unreachable { detail } => detail.clone(),
        _ => String::new(),
    };
    let record = RobotsRecord {
        outcome,
        body,
        fetched_ms: now,
        expires_ms: now + wait_ms,
        failures,
    };
    let rules = RobotsRules::from_record(&record, &agent);
    let asked = rules.crawl_delay();
    let honoured = cap_crawl_delay(asked, s.max_crawl_delay);
    h.record.crawl_delay_ms = honoured.map(|(d, _)| d.as_millis() as u64);
    h.record.crawl_delay_capped = honoured.is_some_and(|(_, capped)| capped);
    h.record.robots = Some(record);
    h.robots_unsaved = true;
    h.rules = Some(rules);
    Ok(Recorded {
        unreachable,
        failures,
        fetched_ms: now,
        wait_ms,
        capped_from: asked.filter(|_| h.record.crawl_delay_capped),
        detail,
    })
}

impl Scheduler {
    /// A robots.txt fetch ended: its rules and Crawl-delay go in the host's
    /// record, its redirects may widen the scope, and the host is
    /// scheduled again (or, given up on, its queue dropped).
    pub(super) fn robots_done(
        &mut self,
        id: HostId,
        fetched: RobotsFetch,
    ) -> Result<(), CrawlError> {
        let RobotsFetch {
            outcome,
            body,
            redirects,
            blocked,
        } = fetched;
        let l = &mut self.ledger;
        if l.seed_hosts.contains(&id) && !redirects.is_empty() {
            l.widen_scope_for_robots(id, &redirects)?;
        }
        if let Some(why) = blocked {
            // The guard refuses the host's own address: nothing of it can
            // be fetched, now or on a retry.
            l.loaded(id)?.robots_in_flight = false;
            let origin = l.hosts[&id].record.origin.clone();
            l.notice(format!(
                "{origin}: not fetched, the network guard refuses it ({why})"
            ));
            return Ok(l.fail_host_queue(id, FailReason::NetworkGuard, &why)?);
        }
        let s = l.settings.clone();
        let r = record_outcome(l, id, outcome, body)?;
        if !r.unreachable {
            let listed = match &l.hosts[&id].rules {
                Some(rules) => rules.parsed().sitemaps().to_vec(),
                None => Vec::new(),
            };
            l.robots_sitemaps(id, &listed)?;
        }
        let origin = l.hosts[&id].record.origin.clone();
        let next = r.fetched_ms
            + if r.unreachable {
                r.wait_ms
            } else {
                l.delay_ms(id)
            };
        if let Some(d) = r.capped_from {
            l.notice(format!(
                "{origin}: robots.txt asks Crawl-delay {}s; capped at {}s",
                d.as_secs_f64(),
                s.max_crawl_delay.as_secs_f64()
            ));
        }
        let (failures, detail) = (r.failures, r.detail);
        if Politeness::of(&s).robots_gives_up(r.unreachable, failures) {
            l.notice(format!("{origin}: robots.txt unreachable {failures} times ({detail}); its queued URLs are dropped"));
            l.drop_host_queue(id)?;
        } else {
            l.write_host(id)?;
        }
        if !self.ledger.hosts[&id].queue.is_idle() {
            if !r.unreachable {
                self.rejoin(id, next);
            }
            self.schedule(id, next)?;
        }
        Ok(())
    }
}
