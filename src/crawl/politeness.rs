//! The politeness rule in one place: how long a host waits between two
//! requests, after a 429 or 503, after an unreachable robots.txt and when
//! a resumed crawl loads it; when a second page of it may be in flight;
//! and how long it keeps the warm lane. The ledger, dispatch, the
//! scheduler, the robots code and the probe ask here, and the numbers are
//! tested here. Times are milliseconds on the crawl's clock.

use std::time::Duration;

use crate::settings::CrawlSettings;

/// Pages a host takes in a row from the warm lane before it waits its turn
/// with the others (as Heritrix rotates a queue after its
/// `balance-replenish-amount`).
pub const WARM_PAGES: u32 = 100;

/// The rule's numbers, read from the settings in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Politeness {
    /// The crawl's pause between two requests to a host.
    pub delay_ms: u64,
    /// The default back-off after a 429 or 503 without a Retry-After.
    pub backoff_ms: u64,
    /// The longest back-off, a Retry-After's included.
    pub max_backoff_ms: u64,
    /// Answers of 429 or 503 a URL gets before the answer is stored.
    pub max_attempts: u8,
    /// The first wait after an unreachable robots.txt; doubles per failure.
    pub robots_retry: Duration,
    /// How long a robots.txt answer holds.
    pub robots_ttl: Duration,
    /// Unreachable robots.txt fetches in a row before the host is given up.
    pub robots_max_failures: u32,
}

impl Politeness {
    pub fn of(s: &CrawlSettings) -> Politeness {
        let ms = |d: Duration| d.as_millis() as u64;
        Politeness {
            delay_ms: ms(s.delay),
            backoff_ms: ms(s.backoff),
            max_backoff_ms: ms(s.max_backoff),
            max_attempts: s.max_attempts,
            robots_retry: s.robots_retry,
            robots_ttl: s.robots_ttl,
            robots_max_failures: s.robots_max_failures,
        }
    }

    /// The gap from the end of one request to a host to the start of the
    /// next: our pause (its seed site's own, or the crawl's) or its
    /// robots.txt Crawl-delay (already capped), whichever is longer.
    pub fn gap_ms(&self, site_delay_ms: Option<u64>, crawl_delay_ms: Option<u64>) -> u64 {
        let d = site_delay_ms
            .unwrap_or(self.delay_ms)
            .max(crawl_delay_ms.unwrap_or(0));
        // The clock counts whole milliseconds: from a truncated now, a wait
        // of d could end up to 1 ms short of d (a politeness test saw a
        // 149.x ms gap under a 150 ms delay).
        if d > 0 { d + 1 } else { 0 }
    }

    /// When a host that answered 429 or 503 at `now_ms` may be asked
    /// again: after its Retry-After or the default back-off, at most the
    /// longest back-off, and never sooner than its usual gap.
    pub fn backoff_until(&self, now_ms: u64, retry_after_ms: Option<u64>, gap_ms: u64) -> u64 {
        let wait = retry_after_ms.unwrap_or(self.backoff_ms);
        now_ms + wait.min(self.max_backoff_ms).max(gap_ms)
    }

    /// Whether a URL answered 429 or 503 after `attempts` earlier such
    /// answers is asked again (else this answer is stored).
    pub fn retries_left(&self, attempts: u8) -> bool {
        attempts.saturating_add(1) < self.max_attempts
    }

    /// How long a robots.txt outcome holds: the TTL for an answer; for the
    /// `failures`-th unreachable fetch in a row, the first retry wait
    /// doubled per earlier failure, at most the TTL.
    pub fn robots_wait_ms(&self, unreachable: bool, failures: u32) -> u64 {
        let wait = if unreachable {
            let doublings = failures.saturating_sub(1).min(16);
            self.robots_retry
                .saturating_mul(1 << doublings)
                .min(self.robots_ttl)
        } else {
            self.robots_ttl
        };
        wait.as_millis() as u64
    }

    /// Whether the crawl gives up on a host (drops its queued URLs) after
    /// `failures` unreachable robots.txt fetches in a row.
    pub fn robots_gives_up(&self, unreachable: bool, failures: u32) -> bool {
        unreachable && failures >= self.robots_max_failures
    }

    /// A host's stored next fetch time as loaded at `now_ms`: one past any
    /// wait this crawl sets for it (a clock that went back, a db from
    /// another machine) must not hold the host; it is cut to the longest
    /// of them: the back-off, its gap (a seed site's own delay counts).
    pub fn clamp_on_load(
        &self,
        stored_ms: u64,
        now_ms: u64,
        site_delay_ms: Option<u64>,
        crawl_delay_ms: Option<u64>,
    ) -> u64 {
        let longest = self
            .max_backoff_ms
            .max(self.gap_ms(site_delay_ms, crawl_delay_ms));
        stored_ms.min(now_ms + longest)
    }
}

/// The Crawl-delay honoured: the one asked for, or `cap` when it asks for
/// more (then `true`, for a notice).
pub fn cap_crawl_delay(asked: Option<Duration>, cap: Duration) -> Option<(Duration, bool)> {
    asked.map(|d| if d > cap { (cap, true) } else { (d, false) })
}

/// Whether a status asks the client to slow down: 429 and 503.
pub fn is_backoff(status: u16) -> bool {
    status == 429 || status == 503
}

/// Moves a host's next fetch time to `at_ms` unless it is later already:
/// pages fetched concurrently commit in any order, and one that came back
/// after a 429 must not have its back-off cut short by another page's
/// commit a moment later.
pub fn hold(next_fetch_ms: &mut u64, at_ms: u64) {
    *next_fetch_ms = (*next_fetch_ms).max(at_ms);
}

/// Whether a host with `in_flight` pages in flight sends one more now. A
/// second page only when no other host waits for the slot: spreading over
/// hosts is politer, and a host with one page in flight keeps one
/// connection (it rejoins the warm lane when the page is done).
pub fn sends_another(in_flight: usize, others_wait: bool) -> bool {
    in_flight == 0 || !others_wait
}

/// Whether, after sending a page, the host is ready again one gap later
/// for a further page in flight: below its `per_host` limit, with URLs
/// left and no other host waiting.
pub fn ready_for_more(in_flight: usize, per_host: usize, drained: bool, others_wait: bool) -> bool {
    in_flight < per_host && !drained && !others_wait
}

/// Whether a host whose fetch just ended takes the warm lane (ahead of
/// the hosts waiting; its connection is still open): its next fetch time
/// `at_ms` has come, it has URLs left, and it has not had [`WARM_PAGES`]
/// in a row. Round-robin over 10,000 ready hosts left each host's
/// connection idle for a whole cycle, past the pool's bound, so every page
/// paid a new connection.
pub fn takes_warm_lane(at_ms: u64, now_ms: u64, drained: bool, warm_pages: u32) -> bool {
    at_ms <= now_ms && !drained && warm_pages < WARM_PAGES
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> Politeness {
        Politeness {
            delay_ms: 1_000,
            backoff_ms: 30_000,
            max_backoff_ms: 600_000,
            max_attempts: 3,
            robots_retry: Duration::from_secs(30),
            robots_ttl: Duration::from_secs(86_400),
            robots_max_failures: 3,
        }
    }

    #[test]
    fn the_defaults_are_the_settings_defaults() {
        assert_eq!(Politeness::of(&CrawlSettings::default()), rule());
    }

    #[test]
    fn the_gap_is_the_longer_of_our_delay_and_the_crawl_delay_plus_a_ms() {
        let p = rule();
        assert_eq!(p.gap_ms(None, None), 1_001);
        assert_eq!(p.gap_ms(None, Some(5_000)), 5_001);
        assert_eq!(p.gap_ms(None, Some(200)), 1_001);
        // A seed site's own delay replaces the crawl's, shorter or longer.
        assert_eq!(p.gap_ms(Some(150), None), 151);
        assert_eq!(p.gap_ms(Some(150), Some(300)), 301);
        assert_eq!(p.gap_ms(Some(0), None), 0);
        let none = Politeness { delay_ms: 0, ..p };
        assert_eq!(none.gap_ms(None, None), 0);
        assert_eq!(none.gap_ms(None, Some(0)), 0);
    }

    #[test]
    fn a_back_off_takes_retry_after_capped_and_never_less_than_the_gap() {
        let p = rule();
        let now = 10_000;
        assert_eq!(p.backoff_until(now, None, 1_001), 40_000);
        assert_eq!(p.backoff_until(now, Some(2_000), 1_001), 12_000);
        assert_eq!(p.backoff_until(now, Some(0), 1_001), 11_001);
        assert_eq!(p.backoff_until(now, Some(3_600_000), 1_001), 610_000);
        // A Crawl-delay longer than the cap still spaces the requests.
        assert_eq!(p.backoff_until(now, Some(3_600_000), 900_001), 910_001);
    }

    #[test]
    fn a_url_is_asked_max_attempts_times_in_all() {
        let p = rule();
        assert!(p.retries_left(0));
        assert!(p.retries_left(1));
        assert!(!p.retries_left(2));
        assert!(!p.retries_left(u8::MAX));
        assert!(
            !Politeness {
                max_attempts: 1,
                ..p
            }
            .retries_left(0)
        );
    }

    #[test]
    fn unreachable_robots_retries_doubling_up_to_the_ttl_then_gives_up() {
        let p = rule();
        assert_eq!(p.robots_wait_ms(true, 1), 30_000);
        assert_eq!(p.robots_wait_ms(true, 2), 60_000);
        assert_eq!(p.robots_wait_ms(true, 3), 120_000);
        assert_eq!(p.robots_wait_ms(true, 60), 86_400_000);
        assert_eq!(p.robots_wait_ms(false, 0), 86_400_000);
        // Doubled before it is counted in whole ms.
        let half = Politeness {
            robots_retry: Duration::from_micros(500),
            ..p
        };
        assert_eq!(half.robots_wait_ms(true, 2), 1);
        assert!(!p.robots_gives_up(true, 2));
        assert!(p.robots_gives_up(true, 3));
        assert!(!p.robots_gives_up(false, 99));
    }

    #[test]
    fn a_stored_next_fetch_is_cut_to_the_longest_wait_on_load() {
        let p = rule();
        let now = 5_000;
        let far = u64::MAX / 2;
        assert_eq!(p.clamp_on_load(7_000, now, None, None), 7_000);
        assert_eq!(p.clamp_on_load(0, now, None, None), 0);
        assert_eq!(p.clamp_on_load(far, now, None, None), 605_000);
        assert_eq!(p.clamp_on_load(far, now, None, Some(900_000)), 905_001);
        let slow = Politeness {
            delay_ms: 3_600_000,
            ..p
        };
        assert_eq!(slow.clamp_on_load(far, now, None, None), 3_605_001);
        // A seed site's own hour-long delay survives a restart (it was cut
        // to the 10-minute back-off before).
        let hour = Some(3_600_000);
        assert_eq!(p.clamp_on_load(far, now, hour, None), 3_605_001);
        assert_eq!(p.clamp_on_load(3_000_000, now, hour, None), 3_000_000);
        // It replaces the crawl's delay there too, when shorter: the longest
        // wait set for the host is then the back-off.
        let second = Some(1_000);
        assert_eq!(slow.clamp_on_load(far, now, second, None), 605_000);
    }

    #[test]
    fn crawl_delay_is_capped() {
        let cap = Duration::from_secs(60);
        assert_eq!(cap_crawl_delay(None, cap), None);
        let five = Duration::from_secs(5);
        assert_eq!(cap_crawl_delay(Some(five), cap), Some((five, false)));
        assert_eq!(cap_crawl_delay(Some(cap), cap), Some((cap, false)));
        let ten_min = Some(Duration::from_secs(600));
        assert_eq!(cap_crawl_delay(ten_min, cap), Some((cap, true)));
    }

    #[test]
    fn only_429_and_503_back_off_and_a_hold_never_shortens() {
        assert!(is_backoff(429) && is_backoff(503));
        assert!(![200, 404, 500, 502, 504].into_iter().any(is_backoff));
        let mut next = 2_000;
        hold(&mut next, 1_000);
        assert_eq!(next, 2_000);
        hold(&mut next, 3_000);
        assert_eq!(next, 3_000);
    }

    #[test]
    fn a_second_page_in_flight_waits_for_hosts_that_are_ready() {
        assert!(sends_another(0, true));
        assert!(sends_another(1, false));
        assert!(!sends_another(1, true));
        assert!(ready_for_more(1, 2, false, false));
        assert!(!ready_for_more(2, 2, false, false));
        assert!(!ready_for_more(1, 2, true, false));
        assert!(!ready_for_more(1, 2, false, true));
    }

    #[test]
    fn the_warm_lane_takes_a_ready_host_for_a_hundred_pages_in_a_row() {
        assert!(takes_warm_lane(1_000, 1_000, false, 0));
        assert!(takes_warm_lane(999, 1_000, false, 99));
        assert!(!takes_warm_lane(1_000, 1_000, false, 100));
        assert!(!takes_warm_lane(1_001, 1_000, false, 0));
        assert!(!takes_warm_lane(1_000, 1_000, true, 0));
    }
}
