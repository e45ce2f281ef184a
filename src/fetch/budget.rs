//! A byte budget over every body in flight: bytes read, their decoded
//! copy, and what processing keeps until the crawl commits the page. A
//! fetch holds a [`Ticket`] and grows it as bytes arrive; when the budget
//! is spent it waits (its connection stalls, within its own timeout).
//!
//! Rules that keep that from deadlocking or stalling the crawl:
//! - the first [`FREE_BYTES`] of a body are not counted, so small pages
//!   (most of them) never wait, and a trickling server never holds up
//!   anyone;
//! - when nothing is left, one waiting ticket at a time may overdraw: it
//!   reads to its end, so at worst the budget is exceeded by one body. It
//!   goes only to a body arriving at `min_rate` or faster (a server that
//!   sends fast and then trickles would hold it for its whole timeout);
//! - one host holds at most a quarter of the budget ([`HOST_SHARE`]) but
//!   for one body of its at a time (so four hosts that stall cannot spend
//!   it all, and a host's single large body still goes through).
//!
//! So memory for bodies stays under budget + one body cap + the free
//! allowance of each fetch in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// Bytes of each body not counted against the budget.
pub const FREE_BYTES: usize = 64 << 10;

/// The share of the budget one host's bodies may hold together (but for
/// the one body of the host allowed past it).
const HOST_SHARE: usize = 4;

pub struct ByteBudget {
    state: Mutex<State>,
    released: tokio::sync::Notify,
}

#[derive(Default)]
struct State {
    /// Bytes that may be counted at once (changed by `set_limit`).
    limit: usize,
    used: usize,
    next_id: u64,
    /// The ticket allowed to grow past the limit, if one is.
    overdraft: Option<u64>,
    /// That ticket is still reading its body (it has not settled): no
    /// other may take the overdraft from it midway.
    overdraft_reading: bool,
    /// Largest `used` seen (for reports and tests).
    peak: usize,
    /// Bytes per second a body must have averaged to take the overdraft
    /// (0: any body may).
    min_rate: usize,
    /// Bytes counted per host, and the ticket of the host allowed past
    /// its share.
    hosts: HashMap<u64, HostShare>,
}

#[derive(Default)]
struct HostShare {
    used: usize,
    leader: Option<u64>,
}

impl ByteBudget {
    pub fn new(limit: usize) -> Arc<ByteBudget> {
        Arc::new(ByteBudget {
            state: Mutex::new(State {
                limit,
                ..State::default()
            }),
            released: tokio::sync::Notify::new(),
        })
    }

    /// A ticket holding nothing yet, for a body from `host` (any key
    /// that tells hosts apart).
    pub fn ticket(self: &Arc<Self>, host: u64) -> Ticket {
        let id = self
            .state
            .lock()
            .map(|mut s| {
                s.next_id += 1;
                s.next_id
            })
            .unwrap_or(0);
        Ticket {
            budget: self.clone(),
            id,
            host,
            held: 0,
            started: Instant::now(),
            asked: 0,
        }
    }

    /// Sets the rate a body must keep to take the overdraft (bytes a
    /// second; 0: none).
    pub fn set_min_rate(&self, bytes_per_sec: usize) {
        if let Ok(mut s) = self.state.lock() {
            s.min_rate = bytes_per_sec;
        }
    }

    /// Bytes counted now.
    pub fn used(&self) -> usize {
        self.state.lock().map(|s| s.used).unwrap_or(0)
    }

    /// The most bytes ever counted at once.
    pub fn peak(&self) -> usize {
        self.state.lock().map(|s| s.peak).unwrap_or(0)
    }

    pub fn limit(&self) -> usize {
        self.state.lock().map(|s| s.limit).unwrap_or(0)
    }

    /// Changes the limit for tickets now and to come (a retuned
    /// `fetch.memory_budget`); waiting tickets look again.
    pub fn set_limit(&self, limit: usize) {
        if let Ok(mut s) = self.state.lock() {
            s.limit = limit;
        }
        self.released.notify_waiters();
    }
}

/// One body's share of the budget; dropping it gives the share back.
pub struct Ticket {
    budget: Arc<ByteBudget>,
    id: u64,
    host: u64,
    held: usize,
    /// When the body started, and the most bytes of it asked for: its
    /// average rate.
    started: Instant,
    asked: usize,
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ticket({} bytes)", self.held)
    }
}

impl Ticket {
    /// Waits until the ticket may hold the counted part of `total` bytes
    /// (all but the first [`FREE_BYTES`]).
    pub async fn grow_to(&mut self, total: usize) {
        self.asked = self.asked.max(total);
        let want = total.saturating_sub(FREE_BYTES);
        while want > self.held {
            let budget = self.budget.clone();
            let released = budget.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            if self.try_take(want - self.held) {
                return;
            }
            released.await;
        }
    }

    fn try_take(&mut self, n: usize) -> bool {
        let rate = self.rate();
        let Ok(mut s) = self.budget.state.lock() else {
            return true; // a poisoned lock only lifts the bound
        };
        let s = &mut *s;
        let share = s.limit / HOST_SHARE;
        let host = s.hosts.entry(self.host).or_default();
        let past_share = host.used + n > share;
        if past_share && host.leader.is_some_and(|l| l != self.id) {
            return false; // another body of this host is past its share
        }
        let fits = s.used + n <= s.limit;
        if !fits {
            // Spent: only one ticket at a time may go on past the limit. A
            // holder that has settled, with the budget back within its
            // limit, no longer counts; one still reading keeps it.
            match s.overdraft {
                Some(id) if id != self.id && (s.overdraft_reading || s.used > s.limit) => {
                    return false;
                }
                Some(id) if id == self.id => {}
                _ if rate < s.min_rate => return false, // not making progress
                _ => {
                    s.overdraft = Some(self.id);
                    s.overdraft_reading = true;
                }
            }
        }
        if past_share {
            host.leader = Some(self.id);
        }
        host.used += n;
        s.used += n;
        s.peak = s.peak.max(s.used);
        self.held += n;
        true
    }

    /// Bytes a second the body has averaged (asked for over its age).
    fn rate(&self) -> usize {
        let secs = self.started.elapsed().as_secs_f64().max(1.0);
        (self.asked as f64 / secs) as usize
    }

    /// Sets the counted size to `total` bytes (less the free allowance)
    /// without waiting: for what decoding or processing keeps of a body,
    /// which is no more than it read. The overdraft (if this ticket has it)
    /// ends once the budget is back within its limit.
    pub fn settle(&mut self, total: usize) {
        self.resize(total.saturating_sub(FREE_BYTES), false);
    }

    /// Sets the counted size to `n` once reading is over (a settle, or
    /// the drop when `dropping`).
    fn resize(&mut self, n: usize, dropping: bool) {
        let mut released = n < self.held;
        if let Ok(mut s) = self.budget.state.lock() {
            s.used = s.used.saturating_sub(self.held) + n;
            s.peak = s.peak.max(s.used);
            let share = s.limit / HOST_SHARE;
            if let Some(host) = s.hosts.get_mut(&self.host) {
                host.used = host.used.saturating_sub(self.held) + n;
                if host.leader == Some(self.id) && (dropping || host.used <= share) {
                    host.leader = None;
                    released = true;
                }
                if host.used == 0 && host.leader.is_none() {
                    s.hosts.remove(&self.host);
                }
            }
            if s.overdraft == Some(self.id) {
                s.overdraft_reading = false;
                if dropping || s.used <= s.limit {
                    s.overdraft = None;
                }
                released = true;
            }
        }
        self.held = n;
        if released {
            self.budget.released.notify_waiters();
        }
    }

    pub fn held(&self) -> usize {
        self.held
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.resize(0, true);
        self.budget.released.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn waits_when_spent_and_lets_one_overdraw() {
        let b = ByteBudget::new(1 << 20);
        let mut a = b.ticket(1);
        a.grow_to(FREE_BYTES + (1 << 20)).await;
        assert_eq!(b.used(), 1 << 20);
        // Small bodies never wait.
        let mut small = b.ticket(2);
        small.grow_to(FREE_BYTES).await;
        // The budget is spent: the first to wait overdraws...
        let mut over = b.ticket(3);
        over.grow_to(FREE_BYTES + 10).await;
        assert_eq!(b.used(), (1 << 20) + 10);
        // ...and the next waits until something is given back.
        let mut waiter = b.ticket(4);
        {
            let wait = waiter.grow_to(FREE_BYTES + 100);
            tokio::pin!(wait);
            assert!(
                tokio::time::timeout(Duration::from_millis(50), &mut wait)
                    .await
                    .is_err()
            );
            drop(a);
            tokio::time::timeout(Duration::from_secs(5), wait)
                .await
                .expect("released budget wakes the waiter");
        }
        assert_eq!(b.used(), 110);
        // `over` read to its end: settled within the limit, it gives the
        // overdraft up; a body that settles while the budget is spent
        // keeps it.
        over.settle(FREE_BYTES + 10);
        let mut big = b.ticket(5);
        big.grow_to(FREE_BYTES + (2 << 20)).await;
        big.settle(FREE_BYTES + (3 << 19));
        let mut other = b.ticket(6);
        let wait = other.grow_to(FREE_BYTES + 1);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), wait)
                .await
                .is_err(),
            "the settled body still holds the overdraft"
        );
        drop((big, other));
        waiter.settle(FREE_BYTES + 40);
        assert_eq!(b.used(), 50);
        drop((over, waiter, small));
        assert_eq!(b.used(), 0);
        assert_eq!(b.peak(), (2 << 20) + 110);
    }

    #[tokio::test]
    async fn a_body_still_reading_keeps_the_overdraft() {
        let b = ByteBudget::new(1000);
        let mut small = b.ticket(7);
        small.grow_to(FREE_BYTES + 900).await;
        let mut reader = b.ticket(8);
        reader.grow_to(FREE_BYTES + 500).await; // overdraws: 1400
        drop(small); // back within the limit (500), the reader still reading
        let mut other = b.ticket(9);
        let wait = other.grow_to(FREE_BYTES + 800);
        tokio::pin!(wait);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut wait)
                .await
                .is_err(),
            "the overdraft is not taken from a body midway"
        );
        // The reader goes on to its end without waiting.
        tokio::time::timeout(Duration::from_secs(5), reader.grow_to(FREE_BYTES + 2000))
            .await
            .expect("the holder never waits");
        reader.settle(FREE_BYTES + 2000);
        drop(reader);
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("the next body goes once the reader is done");
        assert_eq!(b.used(), 800);
    }

    #[tokio::test]
    async fn a_raised_limit_wakes_waiters() {
        let b = ByteBudget::new(1000);
        let mut a = b.ticket(1);
        a.grow_to(FREE_BYTES + 2000).await; // overdraws
        let mut waiter = b.ticket(10);
        let wait = waiter.grow_to(FREE_BYTES + 500);
        tokio::pin!(wait);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut wait)
                .await
                .is_err()
        );
        b.set_limit(10_000);
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("room under the new limit");
        assert_eq!((b.used(), b.limit()), (2500, 10_000));
    }

    #[tokio::test]
    async fn one_host_holds_a_quarter_but_for_one_body() {
        let b = ByteBudget::new(4 << 20); // a host's share: 1 MiB
        let mut alone = b.ticket(1);
        // A host's only body goes past the share (up to the budget).
        alone.grow_to(FREE_BYTES + (3 << 20)).await;
        let mut second = b.ticket(1);
        second.grow_to(FREE_BYTES).await; // the free part never waits
        let wait = second.grow_to(FREE_BYTES + 10);
        tokio::pin!(wait);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut wait)
                .await
                .is_err(),
            "a second body of a host past its share waits"
        );
        // Another host is not held up by it.
        let mut other = b.ticket(2);
        tokio::time::timeout(
            Duration::from_secs(5),
            other.grow_to(FREE_BYTES + (512 << 10)),
        )
        .await
        .expect("another host has room");
        drop(alone);
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("the host's share is free again");
    }

    #[tokio::test(start_paused = true)]
    async fn the_overdraft_goes_only_to_a_body_making_progress() {
        let b = ByteBudget::new(1 << 20);
        b.set_min_rate(1024);
        let mut full = b.ticket(1);
        full.grow_to(FREE_BYTES + (1 << 20)).await;
        // A body that got 64 KiB and then crawled for a minute.
        let mut slow = b.ticket(2);
        slow.grow_to(FREE_BYTES).await;
        tokio::time::advance(Duration::from_secs(100)).await;
        let wait = slow.grow_to(FREE_BYTES + 10);
        tokio::pin!(wait);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut wait)
                .await
                .is_err(),
            "a trickling body does not take the overdraft"
        );
        // A body arriving fast does.
        let mut fast = b.ticket(3);
        tokio::time::timeout(Duration::from_secs(1), fast.grow_to(FREE_BYTES + (2 << 20)))
            .await
            .expect("a fast body overdraws");
        drop((full, fast));
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("room again");
    }
}
