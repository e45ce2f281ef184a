//! Site groups (`crawl.site_batch`, document 003's sub-tasks): with many
//! seed sites, at most N are crawled at a time, in the order their seeds
//! were given. A group runs until each of its sites is finished — nothing
//! queued or in flight on its hosts, or its page budget spent — and then
//! the next group starts. Hosts of later groups are held with their URLs
//! queued.
//!
//! Which group runs is worked out from the frontier, not stored: a resumed
//! crawl goes on in the first group with work left, whatever N was, and a
//! URL that a later group's page queued on an earlier group's site (a link
//! between two seed sites) is fetched before the later group goes on.
//! Hosts no seed site governs are never held.

use super::sites::{Site, SiteRules};
use crate::model::HostId;
use crate::store::Store;

/// What a site's hosts hold, for whether the site is finished.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostLoad {
    /// URLs queued.
    pub queued: u64,
    /// Pages fetched.
    pub fetched: u64,
    /// A page in flight (a robots.txt in flight is not counted: see
    /// `ledger/groups.rs`).
    pub busy: bool,
}

impl HostLoad {
    /// What host `h`'s stored row says (nothing is in flight offline).
    pub fn stored(store: &Store, h: HostId) -> HostLoad {
        match store.host(h) {
            Ok(Some(r)) => HostLoad {
                queued: r.queued,
                fetched: r.fetched,
                busy: false,
            },
            Ok(None) => HostLoad::default(),
            // Unreadable: not finished, so its group is not left early.
            Err(_) => HostLoad {
                busy: true,
                ..HostLoad::default()
            },
        }
    }
}

/// Whether a site whose hosts hold `loads` is finished: nothing in flight,
/// and nothing queued or its `max_pages` fetched.
pub fn finished(loads: &[HostLoad], max_pages: Option<u64>) -> bool {
    if loads.iter().any(|l| l.busy) {
        return false;
    }
    let fetched: u64 = loads.iter().map(|l| l.fetched).sum();
    loads.iter().all(|l| l.queued == 0) || max_pages.is_some_and(|m| fetched >= m)
}

/// The groups of a crawl: their size and which sites are finished.
#[derive(Clone, Debug, Default)]
pub struct SiteGroups {
    /// Sites a group (0: groups are off).
    size: usize,
    /// By site index (`SiteRules::sites`); a site past the end (added
    /// since) is not finished.
    finished: Vec<bool>,
    /// The running group: the first with a site not finished.
    running: Option<usize>,
}

/// `status`'s figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct GroupCounts {
    /// Sites a group.
    pub size: usize,
    pub groups: usize,
    pub done: usize,
    pub running: usize,
    pub waiting: usize,
    /// The running group, from 1.
    pub current: Option<usize>,
    pub sites: usize,
    pub sites_done: usize,
}

impl SiteGroups {
    /// Groups of `size` sites (0: off), every site finished as `load`
    /// says (`load(host)`: what the host holds).
    pub fn new(size: usize, rules: &SiteRules, load: impl Fn(HostId) -> HostLoad) -> SiteGroups {
        let mut g = SiteGroups {
            size,
            finished: Vec::new(),
            running: None,
        };
        if g.is_on() {
            g.finished = rules
                .sites()
                .iter()
                .map(|s| site_finished(rules, s, &load))
                .collect();
            g.running = g.first_unfinished(rules, 0);
        }
        g
    }

    pub fn is_on(&self) -> bool {
        self.size > 0
    }

    /// Judges again the sites of `hosts` (those whose rows changed);
    /// returns whether the running group changed.
    pub fn refresh(
        &mut self,
        rules: &SiteRules,
        hosts: &[HostId],
        load: impl Fn(HostId) -> HostLoad,
    ) -> bool {
        if !self.is_on() {
            return false;
        }
        let before = self.running;
        // Sites before the running group are finished, unless one of
        // these reopened: the search starts there, not at the first site.
        let mut from = before.map_or(self.finished.len(), |g| g * self.size);
        for h in hosts {
            let Some(i) = rules.site_index(*h) else {
                continue;
            };
            if i >= self.finished.len() {
                self.finished.resize(rules.sites().len(), false);
            }
            self.finished[i] = site_finished(rules, &rules.sites()[i], &load);
            if !self.finished[i] {
                from = from.min(i);
            }
        }
        self.running = self.first_unfinished(rules, from);
        self.running != before
    }

    /// The running group (from 0): the first with a site not finished.
    pub fn current(&self) -> Option<usize> {
        self.running
    }

    /// The group of the first site from `from` on not finished.
    fn first_unfinished(&self, rules: &SiteRules, from: usize) -> Option<usize> {
        let first = (from..rules.sites().len())
            .find(|i| !self.finished.get(*i).copied().unwrap_or(false))?;
        Some(first / self.size)
    }

    /// Whether `host` is held: its site is in a group after the running one.
    pub fn waits(&self, rules: &SiteRules, host: HostId) -> bool {
        if !self.is_on() {
            return false;
        }
        match (rules.site_index(host), self.running) {
            (Some(i), Some(g)) => i / self.size > g,
            _ => false,
        }
    }

    /// The sites of group `g`.
    pub fn group<'r>(&self, rules: &'r SiteRules, g: usize) -> &'r [Site] {
        let all = rules.sites();
        let start = (g * self.size).min(all.len());
        &all[start..(start + self.size).min(all.len())]
    }

    /// Groups done, running and waiting; None when groups are off.
    pub fn counts(&self, rules: &SiteRules) -> Option<GroupCounts> {
        if !self.is_on() {
            return None;
        }
        let n = rules.sites().len();
        let done_site = |i: usize| self.finished.get(i).copied().unwrap_or(false);
        let groups = n.div_ceil(self.size);
        let done = (0..groups)
            .filter(|g| (g * self.size..((g + 1) * self.size).min(n)).all(done_site))
            .count();
        let current = self.running;
        let running = usize::from(current.is_some());
        Some(GroupCounts {
            size: self.size,
            groups,
            done,
            running,
            waiting: groups - done - running,
            current: current.map(|g| g + 1),
            sites: n,
            sites_done: (0..n).filter(|i| done_site(*i)).count(),
        })
    }
}

fn site_finished(rules: &SiteRules, site: &Site, load: &impl Fn(HostId) -> HostLoad) -> bool {
    let loads: Vec<HostLoad> = site.hosts.iter().map(|h| load(*h)).collect();
    finished(&loads, rules.get(site.id).and_then(|r| r.max_pages))
}

impl GroupCounts {
    /// `2 done, 1 running (group 3 of 10), 7 waiting; 10 sites a group, 24 of 100 sites done`
    pub fn line(&self) -> String {
        let running = match self.current {
            Some(g) => format!("1 running (group {g} of {})", self.groups),
            None => "0 running".to_string(),
        };
        format!(
            "{} done, {running}, {} waiting; {} sites a group, {} of {} sites done",
            self.done, self.waiting, self.size, self.sites_done, self.sites
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SeedList;

    fn rules(n: usize) -> SiteRules {
        let seeds = SeedList {
            urls: (0..n).map(|i| format!("http://s{i}.org/")).collect(),
            derived: Vec::new(),
        };
        SiteRules::build(Vec::new(), &seeds).0
    }

    fn host(i: usize) -> HostId {
        HostId::of(&format!("http://s{i}.org"))
    }

    #[test]
    fn a_group_runs_until_its_sites_are_finished_and_a_link_back_reopens_one() {
        let r = rules(5);
        let queued = |q: &[usize]| {
            let q: Vec<HostId> = q.iter().map(|i| host(*i)).collect();
            move |h: HostId| HostLoad {
                queued: u64::from(q.contains(&h)),
                ..HostLoad::default()
            }
        };
        let mut g = SiteGroups::new(2, &r, queued(&[0, 1, 2, 3, 4]));
        assert_eq!(g.current(), Some(0));
        assert!(!g.waits(&r, host(1)) && g.waits(&r, host(2)));
        assert!(!g.waits(&r, HostId::of("http://other.org")));
        let c = g.counts(&r).unwrap();
        assert_eq!((c.groups, c.done, c.running, c.waiting), (3, 0, 1, 2));
        // Site 0 done: group 0 still runs.
        assert!(!g.refresh(&r, &[host(0)], queued(&[1, 2, 3, 4])));
        assert!(g.refresh(&r, &[host(1)], queued(&[2, 3, 4])));
        assert_eq!(g.current(), Some(1));
        assert_eq!(g.group(&r, 1).len(), 2);
        assert_eq!(g.group(&r, 2).len(), 1);
        // A page of site 2 queues a URL on site 0: group 0 again.
        assert!(g.refresh(&r, &[host(0)], queued(&[0, 2, 3, 4])));
        assert!(g.waits(&r, host(2)));
        let c = g.counts(&r).unwrap();
        assert_eq!(
            c.line(),
            "0 done, 1 running (group 1 of 3), 2 waiting; 2 sites a group, 1 of 5 sites done"
        );
        let all_done = SiteGroups::new(2, &r, queued(&[]));
        assert_eq!(all_done.current(), None);
        assert_eq!(all_done.counts(&r).unwrap().done, 3);
        assert!(SiteGroups::new(0, &r, queued(&[0])).counts(&r).is_none());
    }

    #[test]
    fn a_site_is_finished_when_idle_and_empty_or_at_its_budget() {
        let l = |queued, fetched, busy| HostLoad {
            queued,
            fetched,
            busy,
        };
        assert!(finished(&[l(0, 3, false)], None));
        assert!(!finished(&[l(0, 3, true)], None));
        assert!(!finished(&[l(0, 3, false), l(2, 0, false)], None));
        assert!(finished(&[l(0, 3, false), l(2, 2, false)], Some(5)));
        assert!(!finished(&[l(0, 3, false), l(2, 1, false)], Some(5)));
    }
}
