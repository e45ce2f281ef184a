//! How well the crawl focuses while it runs (document 002's harvest rate):
//! the verdicts of the last pages judged, and the adaptive stop rules
//! (`crawl.stop_when`) that end a crawl once it stops finding what the
//! user wants.

use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasherDefault;

use crate::model::IdHasher;
use crate::settings::StopRule;

/// Pages in the "last pages" harvest rate of `status` and the run record.
pub const RECENT: usize = 1000;

/// Terms kept to tell new ones from seen ones; past this, no more are
/// kept (16 MB) and saturation can only rise.
const TERMS_CAP: usize = 1 << 21;
/// Distinct terms of a page looked at.
const TERMS_PER_PAGE: usize = 500;

/// The last pages' verdicts and what the stop rules read.
pub struct FocusWindow {
    /// Relevant or not, the most recent last; as long as the longest
    /// window a rule or the recent rate needs.
    verdicts: VecDeque<bool>,
    /// Per page, the share of its terms never seen before (saturation
    /// rules only).
    shares: VecDeque<f32>,
    /// Pages judged since the last relevant one.
    since_relevant: u64,
    terms: HashSet<u64, BuildHasherDefault<IdHasher>>,
}

impl Default for FocusWindow {
    fn default() -> Self {
        FocusWindow {
            verdicts: VecDeque::with_capacity(RECENT),
            shares: VecDeque::new(),
            since_relevant: 0,
            terms: HashSet::default(),
        }
    }
}

impl FocusWindow {
    /// A page was judged: `relevant` when the page filters kept it; its
    /// text is read for new terms only when a saturation rule asks.
    pub fn judged(&mut self, relevant: bool, text: &str, rules: &[StopRule]) {
        let longest = |pick: fn(&StopRule) -> Option<u64>| {
            rules.iter().filter_map(pick).max().unwrap_or(0) as usize
        };
        let harvest = longest(|r| match r {
            StopRule::Harvest { over, .. } => Some(*over),
            _ => None,
        });
        push_capped(&mut self.verdicts, relevant, harvest.max(RECENT));
        self.since_relevant = if relevant { 0 } else { self.since_relevant + 1 };
        let saturation = longest(|r| match r {
            StopRule::Saturation { over, .. } => Some(*over),
            _ => None,
        });
        if saturation > 0 {
            let share = self.new_term_share(text);
            push_capped(&mut self.shares, share, saturation);
        }
    }

    /// (pages judged, relevant) over the last [`RECENT`].
    pub fn recent(&self) -> (u64, u64) {
        self.last(RECENT)
    }

    fn last(&self, n: usize) -> (u64, u64) {
        let skip = self.verdicts.len().saturating_sub(n);
        let window = self.verdicts.iter().skip(skip);
        let judged = self.verdicts.len() - skip;
        (judged as u64, window.filter(|r| **r).count() as u64)
    }

    /// The first rule whose condition holds, with the figures behind it.
    pub fn fired(&self, rules: &[StopRule]) -> Option<String> {
        rules.iter().find_map(|r| self.check(r))
    }

    fn check(&self, rule: &StopRule) -> Option<String> {
        let text = rule.text();
        match *rule {
            StopRule::Harvest { below, over } => {
                let (judged, relevant) = self.last(over as usize);
                let rate = relevant as f64 / judged.max(1) as f64;
                (judged >= over && rate < below).then(|| {
                    format!("{text}: {relevant} relevant of the last {judged} pages ({rate:.3})")
                })
            }
            StopRule::NoRelevant { over } => (self.since_relevant >= over).then(|| {
                format!(
                    "{text}: no relevant page in the last {}",
                    self.since_relevant
                )
            }),
            StopRule::Saturation { below, over } => {
                let n = self.shares.len().min(over as usize);
                let last = self.shares.iter().skip(self.shares.len() - n);
                let mean = last.map(|s| f64::from(*s)).sum::<f64>() / n.max(1) as f64;
                (n as u64 >= over && mean < below).then(|| {
                    format!("{text}: {mean:.4} of a page's terms new over the last {n} pages")
                })
            }
        }
    }

    /// The share of `text`'s distinct terms (words of 3 or more letters
    /// or digits, lowercased; its first [`TERMS_PER_PAGE`]) not seen on
    /// an earlier page; a page without terms counts as nothing new.
    fn new_term_share(&mut self, text: &str) -> f32 {
        let mut page: HashSet<u64, BuildHasherDefault<IdHasher>> = HashSet::default();
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if word.chars().nth(2).is_none() {
                continue;
            }
            page.insert(xxhash_rust::xxh3::xxh3_64(word.to_lowercase().as_bytes()));
            if page.len() == TERMS_PER_PAGE {
                break;
            }
        }
        if page.is_empty() {
            return 0.0;
        }
        let mut new = 0usize;
        for t in &page {
            if !self.terms.contains(t) {
                new += 1;
                if self.terms.len() < TERMS_CAP {
                    self.terms.insert(*t);
                }
            }
        }
        new as f32 / page.len() as f32
    }
}

/// Appends `v`, keeping the last `cap` (a window whose rule shrank
/// shrinks with it).
fn push_capped<T>(q: &mut VecDeque<T>, v: T, cap: usize) {
    q.push_back(v);
    while q.len() > cap {
        q.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_print_back() {
        let rules =
            StopRule::parse_list("harvest<0.1/500, no-relevant/1000,saturation<0.02/300").unwrap();
        assert_eq!(
            rules,
            [
                StopRule::Harvest {
                    below: 0.1,
                    over: 500
                },
                StopRule::NoRelevant { over: 1000 },
                StopRule::Saturation {
                    below: 0.02,
                    over: 300
                },
            ]
        );
        assert_eq!(
            StopRule::list_text(&rules),
            "harvest<0.1/500,no-relevant/1000,saturation<0.02/300"
        );
        assert!(StopRule::parse_list("none").unwrap().is_empty());
        for bad in [
            "harvest<2/10",
            "harvest<0.1",
            "sometimes/5",
            "no-relevant/0",
        ] {
            assert!(StopRule::parse_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rules_fire_on_their_window() {
        let rules = [StopRule::Harvest {
            below: 0.5,
            over: 4,
        }];
        let mut w = FocusWindow::default();
        for relevant in [true, true, false] {
            w.judged(relevant, "", &rules);
        }
        assert_eq!(w.fired(&rules), None, "fewer than 4 pages judged");
        w.judged(false, "", &rules);
        assert_eq!(w.fired(&rules), None, "2 of 4 is not below 0.5");
        w.judged(false, "", &rules);
        let why = w.fired(&rules).unwrap();
        assert!(
            why.starts_with("harvest<0.5/4: 1 relevant of the last 4"),
            "{why}"
        );
        assert_eq!(w.recent(), (5, 2));

        let none = [StopRule::NoRelevant { over: 2 }];
        let mut w = FocusWindow::default();
        w.judged(true, "", &none);
        w.judged(false, "", &none);
        assert_eq!(w.fired(&none), None);
        w.judged(false, "", &none);
        assert!(w.fired(&none).is_some());
    }

    #[test]
    fn saturation_is_the_share_of_new_terms() {
        let rules = [StopRule::Saturation {
            below: 0.3,
            over: 2,
        }];
        let mut w = FocusWindow::default();
        w.judged(true, "alpha beta gamma delta", &rules);
        w.judged(true, "alpha beta gamma epsilon", &rules);
        // Shares 1 and 0.25: mean 0.625.
        assert_eq!(w.fired(&rules), None);
        w.judged(true, "Alpha BETA gamma, delta!", &rules);
        // Shares 0.25 and 0: mean 0.125.
        let why = w.fired(&rules).unwrap();
        assert!(why.contains("0.1250 of a page's terms new"), "{why}");

        // Each rule reads its own last N pages, the longer one too.
        let two = [
            StopRule::Saturation {
                below: 0.01,
                over: 1,
            },
            StopRule::Saturation {
                below: 0.5,
                over: 3,
            },
        ];
        let mut w = FocusWindow::default();
        for text in ["a1a b2b c3c", "a1a b2b c3c", "a1a b2b c3c d4d"] {
            w.judged(true, text, &two);
        }
        // Shares 1, 0, 0.25: the last page's 0.25 is not under 0.01; the
        // three pages' mean 0.4167 is under 0.5.
        let why = w.fired(&two).unwrap();
        assert!(why.starts_with("saturation<0.5/3"), "{why}");
    }
}
