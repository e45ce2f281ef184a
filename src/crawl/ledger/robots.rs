//! A robots.txt fetch's end in the ledger: its outcome put in the host's
//! record, with the waits and the Crawl-delay cap `politeness` decides,
//! its redirects widening a seed's scope, its sitemaps listed, and the
//! host given up on when it stays unreachable.

use std::time::Duration;

use super::Ledger;
use crate::crawl::politeness::cap_crawl_delay;
use crate::fetch::{RobotsFetch, RobotsRules};
use crate::model::HostId;
use crate::model::{FailReason, RobotsOutcome, RobotsRecord};
use crate::store::StoreError;

/// When a host whose robots.txt was answered may go on.
#[derive(Clone, Copy, Debug)]
pub(in crate::crawl) struct AfterRobots {
    pub at_ms: u64,
    /// It was answered: the host may take the warm lane.
    pub answered: bool,
}

impl Ledger {
    /// A robots.txt fetch of host `id` ended: its rules and Crawl-delay go
    /// in the host's record, its redirects may widen the scope, and (when
    /// the host has URLs queued) when it may go on. A host given up on
    /// has its queue dropped or failed.
    pub fn robots_answered(
        &mut self,
        id: HostId,
        fetched: RobotsFetch,
    ) -> Result<Option<AfterRobots>, StoreError> {
        let RobotsFetch {
            outcome,
            body,
            redirects,
            blocked,
            ..
        } = fetched;
        if self.seeds.is_seed_host(id) && !redirects.is_empty() {
            self.widen_scope_for_robots(id, &redirects)?;
        }
        if let Some(why) = blocked {
            // The guard refuses the host's own address: nothing of it can
            // be fetched, now or on a retry.
            let origin = self.loaded(id)?.record.origin.clone();
            self.notice(format!(
                "{origin}: not fetched, the network guard refuses it ({why})"
            ));
            self.fail_host_queue(id, FailReason::NetworkGuard, &why)?;
            return Ok(None);
        }
        let (politeness, max_crawl_delay) = (self.politeness(), self.settings.max_crawl_delay);
        let r = record_outcome(self, id, outcome, body)?;
        if !r.unreachable {
            let listed = match &self.hosts.loaded(id).rules {
                Some(rules) => rules.parsed().sitemaps().to_vec(),
                None => Vec::new(),
            };
            self.robots_sitemaps(id, &listed)?;
        }
        let origin = self.hosts.loaded(id).record.origin.clone();
        let next = r.fetched_ms
            + if r.unreachable {
                r.wait_ms
            } else {
                self.delay_ms(id)
            };
        if let Some(d) = r.capped_from {
            self.notice(format!(
                "{origin}: robots.txt asks Crawl-delay {}s; capped at {}s",
                d.as_secs_f64(),
                max_crawl_delay.as_secs_f64()
            ));
        }
        let (failures, detail) = (r.failures, r.detail);
        if politeness.robots_gives_up(r.unreachable, failures) {
            self.notice(format!("{origin}: robots.txt unreachable {failures} times ({detail}); its queued URLs are dropped"));
            self.drop_host_queue(id)?;
        } else {
            self.write_host(id)?;
        }
        let queued = !self.hosts.loaded(id).queue.is_idle();
        Ok(queued.then_some(AfterRobots {
            at_ms: next,
            answered: !r.unreachable,
        }))
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
    let (politeness, max_crawl_delay) = (l.politeness(), l.settings.max_crawl_delay);
    let agent = l.agent.clone();
    let h = l.loaded(id)?;
    let unreachable = matches!(outcome, RobotsOutcome::Unreachable { .. });
    let failures = if unreachable {
        h.record.robots.as_ref().map_or(0, |r| r.failures) + 1
    } else {
        0
    };
    let wait_ms = politeness.robots_wait_ms(unreachable, failures);
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
    let honoured = cap_crawl_delay(asked, max_crawl_delay);
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
