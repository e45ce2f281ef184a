//! Revisit policies (document 002): when a fetched page is due again.
//! Uniform gives every page the same interval; change-rate gives each page
//! the interval of its estimated change rate λ, its changes modelled as a
//! Poisson process and λ estimated from what its visits found.
//!
//! A visit sees only whether the page changed since the last one, not how
//! often: counting changes over time (X / T) misses every change after the
//! first in an interval, and underestimates a page that changes more often
//! than it is visited. The estimate is the maximum-likelihood λ of Cho and
//! Garcia-Molina ("Estimating frequency of change", 2003) for visits at
//! irregular intervals: an interval t ends changed with probability
//! 1 − e^(−λt), so λ solves Σ_changed t / (e^(λt) − 1) = Σ_unchanged t.
//! For equal intervals that is λ = ln(n / (n − X)) / t — larger than X / T,
//! the changes missed between visits taken into account. When every
//! interval found a change the likelihood has no maximum; their estimator
//! for that case, λ = ln(2n + 1) · n / T (its 0.5 correction), is used.

use crate::schema::tables::Visits;
use crate::schema::{VisitInterval, VisitRecord};
use crate::settings::{RecrawlMode, RecrawlSettings};
use crate::store::{Store, StoreError};

/// How long after its last visit the page of `v` is due.
pub fn interval_ms(policy: &RecrawlSettings, v: &VisitRecord) -> u64 {
    let (min, max) = (policy.min.as_millis() as u64, policy.max.as_millis() as u64);
    let max = max.max(min);
    match policy.mode {
        RecrawlMode::Off => 0,
        RecrawlMode::Uniform => policy.every.as_millis() as u64,
        RecrawlMode::ChangeRate => match (rate_of(v), v.recent.last()) {
            (Some(rate), _) => ((1.0 / rate) as u64).clamp(min, max),
            // No change seen: each wait is twice the last (the max in
            // a few doublings).
            (None, Some(last)) => last.ms.saturating_mul(2).clamp(min, max),
            (None, None) => min,
        },
    }
}

/// The estimated changes per millisecond of the page of `v` (None: no
/// change seen yet).
pub fn change_rate(v: &VisitRecord) -> Option<f64> {
    let (mut changed, mut unchanged_ms) = (Vec::new(), 0f64);
    for i in v.recent.iter().filter(|i| i.ms > 0) {
        if i.changed {
            changed.push(i.ms as f64);
        } else {
            unchanged_ms += i.ms as f64;
        }
    }
    if changed.is_empty() {
        return None;
    }
    if unchanged_ms == 0.0 {
        let n = changed.len() as f64;
        return Some((2.0 * n + 1.0).ln() * n / changed.iter().sum::<f64>());
    }
    // Σ t / (e^(λt) − 1) falls from +∞ to 0 as λ grows: bisect (in log
    // space) for the λ where it meets the unchanged time.
    let excess =
        |rate: f64| changed.iter().map(|t| t / (rate * t).exp_m1()).sum::<f64>() - unchanged_ms;
    let (mut lo, mut hi) = (1e-18f64, 1.0f64);
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if excess(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some((lo * hi).sqrt())
}

/// The page's change rate as its last visit estimated it (a row from
/// before schema 21 has none stored: estimated now).
pub fn rate_of(v: &VisitRecord) -> Option<f64> {
    match v.rate {
        Some(r) => (r > 0.0).then_some(r),
        None => change_rate(v),
    }
}

/// The probability that the stored version of the page of `v` is still
/// the live one at `now_ms`: e^(−λ̂·t) since its last visit (1 when no
/// change was ever seen).
pub fn fresh_probability(v: &VisitRecord, now_ms: u64) -> f64 {
    match rate_of(v) {
        None => 1.0,
        Some(rate) => (-rate * now_ms.saturating_sub(v.last_ms) as f64).exp(),
    }
}

/// What a revisit compares besides the body's MD5: the page's title and
/// text (a token in an attribute or a script changes the body, not
/// this), xxh3.
pub fn text_hash(title: &str, text: &str) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(title.as_bytes());
    h.update(&[0]);
    h.update(text.as_bytes());
    h.digest()
}

/// The estimated freshness of the pages that have a `visits` row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Freshness {
    /// Pages whose rows were read.
    pub pages: u64,
    /// Σ of each page's probability of being fresh.
    pub fresh: f64,
    /// The rows read were a sample: there are more.
    pub sampled: bool,
}

impl Freshness {
    /// The estimated share of those pages whose stored version is live.
    pub fn share(&self) -> Option<f64> {
        (self.pages > 0).then(|| self.fresh / self.pages as f64)
    }
}

/// Rows `status` reads for its freshness estimate: keyed by URL hash, the
/// first rows are a uniform sample of the pages (a standard error of at
/// most 1.6 points), read in well under a millisecond.
pub const FRESH_SAMPLE: usize = 1024;

/// `seen` rows a retiming under a new policy looks at in one crawl loop
/// turn (a few milliseconds; fetches go on between turns).
pub const RETIME_CHUNK: usize = 1024;

/// Reads the `visits` rows, at most `limit` of them (a stream; a few
/// dozen bytes a page, no estimate to compute: each row keeps its rate).
pub fn estimate_freshness(
    store: &Store,
    now_ms: u64,
    limit: Option<usize>,
) -> Result<Freshness, StoreError> {
    let mut f = Freshness::default();
    for row in store.rows::<Visits>(&[]) {
        if limit.is_some_and(|n| f.pages as usize >= n) {
            f.sampled = true;
            break;
        }
        let (_, v) = row?;
        f.pages += 1;
        f.fresh += fresh_probability(&v, now_ms);
    }
    Ok(f)
}

/// A visit that got a response: the interval since the last one is
/// observed, with whether the page changed in it.
pub fn observe(v: &mut VisitRecord, now_ms: u64, changed: bool) {
    if v.visits > 0 {
        let ms = now_ms.saturating_sub(v.last_ms);
        v.recent.push(VisitInterval { ms, changed });
        let over = v.recent.len().saturating_sub(VisitRecord::RECENT);
        v.recent.drain(..over);
        v.changes += u32::from(changed);
    }
    v.visits += 1;
    v.last_ms = now_ms;
    // Kept with the visit: readers of many rows (status, `pages where`)
    // do not solve for it again.
    v.rate = Some(change_rate(v).unwrap_or(0.0));
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const HOUR: u64 = 3_600_000;

    /// `intervals` visits `every_ms` apart, the first `changes` of which
    /// found a change.
    fn seen(intervals: u32, changes: u32, every_ms: u64) -> VisitRecord {
        VisitRecord {
            visits: intervals + 1,
            changes,
            recent: (0..intervals)
                .map(|i| VisitInterval {
                    ms: every_ms,
                    changed: i < changes,
                })
                .collect(),
            last_ms: u64::from(intervals) * every_ms,
            ..Default::default()
        }
    }

    #[test]
    fn the_estimate_corrects_for_changes_missed_between_visits() {
        // Changed at every one of 10 hourly visits: the naive estimate is
        // one change an hour; the corrected one is ln(21) ≈ 3 an hour.
        let rate = change_rate(&seen(10, 10, HOUR)).unwrap() * HOUR as f64;
        assert!((rate - 21f64.ln()).abs() < 1e-9, "{rate}");
        // Equal intervals: ln(n / (n − X)) per interval, above X / T.
        let rate = change_rate(&seen(10, 5, HOUR)).unwrap() * HOUR as f64;
        assert!((rate - 2f64.ln()).abs() < 1e-6, "{rate}");
        let rate = change_rate(&seen(30, 1, HOUR)).unwrap() * HOUR as f64;
        assert!((rate - (30f64 / 29.0).ln()).abs() < 1e-6, "{rate}");
        // Irregular: a change in a short interval says more than one in a
        // long one.
        let mut short = seen(4, 0, 4 * HOUR);
        short.recent[0] = VisitInterval {
            ms: HOUR,
            changed: true,
        };
        let mut long = seen(4, 0, 4 * HOUR);
        long.recent[0] = VisitInterval {
            ms: 8 * HOUR,
            changed: true,
        };
        assert!(change_rate(&short).unwrap() > change_rate(&long).unwrap());
        assert_eq!(change_rate(&seen(5, 0, HOUR)), None);
    }

    #[test]
    fn change_rate_intervals_follow_the_rate_within_bounds() {
        let s = RecrawlSettings {
            mode: RecrawlMode::ChangeRate,
            min: Duration::from_secs(1800),
            max: Duration::from_secs(48 * 3600),
            ..Default::default()
        };
        assert_eq!(interval_ms(&s, &VisitRecord::default()), HOUR / 2);
        // Half the visits found a change: λ = ln 2 an hour, 1/λ ≈ 1.44 h.
        let i = interval_ms(&s, &seen(10, 5, HOUR));
        assert!((5_150_000..5_250_000).contains(&i), "{i}");
        // Changed every time: faster than the min allows.
        assert_eq!(interval_ms(&s, &seen(10, 10, HOUR)), HOUR / 2);
        // Never changed: each wait is twice the last, up to the max.
        let mut v = VisitRecord::default();
        let (mut at, mut waits) = (0, Vec::new());
        for _ in 0..8 {
            observe(&mut v, at, false);
            let wait = interval_ms(&s, &v);
            waits.push(wait / (HOUR / 2));
            at += wait;
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 96]);
        let u = RecrawlSettings {
            mode: RecrawlMode::Uniform,
            ..s
        };
        assert_eq!(interval_ms(&u, &seen(10, 10, HOUR)), 24 * HOUR);
    }

    #[test]
    fn observing_keeps_a_bounded_recent_history() {
        let mut v = VisitRecord::default();
        observe(&mut v, 1000, false);
        assert_eq!((v.visits, v.recent.len()), (1, 0));
        observe(&mut v, 4000, true);
        assert_eq!(
            v.recent,
            [VisitInterval {
                ms: 3000,
                changed: true
            }]
        );
        for i in 0..200 {
            observe(&mut v, 5000 + i * 1000, i % 2 == 0);
        }
        assert_eq!((v.visits, v.changes), (202, 101));
        assert_eq!(v.recent.len(), VisitRecord::RECENT);
        let p = fresh_probability(&v, v.last_ms + 1000);
        assert!(p > 0.0 && p < 1.0, "{p}");
    }
}
