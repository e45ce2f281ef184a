//! A byte budget over every body in flight: bytes read, their decoded
//! copy, and what processing keeps until the engine commits the page. A
//! fetch holds a [`Ticket`] and grows it as bytes arrive; when the budget
//! is spent it waits (its connection stalls, within its own timeout).
//!
//! Two rules keep that from deadlocking or stalling the crawl:
//! - the first [`FREE_BYTES`] of a body are not counted, so small pages
//!   (most of them) never wait, and a trickling server never holds up
//!   anyone;
//! - when nothing is left, one waiting ticket at a time may overdraw: it
//!   reads to its end, so at worst the budget is exceeded by one body.
//!
//! So memory for bodies stays under budget + one body cap + the free
//! allowance of each fetch in flight.

use std::sync::{Arc, Mutex};

/// Bytes of each body not counted against the budget.
pub const FREE_BYTES: usize = 64 << 10;

pub struct ByteBudget {
    limit: usize,
    state: Mutex<State>,
    released: tokio::sync::Notify,
}

#[derive(Default)]
struct State {
    used: usize,
    next_id: u64,
    /// The ticket allowed to grow past the limit, if one is.
    overdraft: Option<u64>,
    /// Largest `used` seen (for reports and tests).
    peak: usize,
}

impl ByteBudget {
    pub fn new(limit: usize) -> Arc<ByteBudget> {
        Arc::new(ByteBudget {
            limit,
            state: Mutex::new(State::default()),
            released: tokio::sync::Notify::new(),
        })
    }

    /// A ticket holding nothing yet.
    pub fn ticket(self: &Arc<Self>) -> Ticket {
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
            held: 0,
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
        self.limit
    }
}

/// One body's share of the budget; dropping it gives the share back.
pub struct Ticket {
    budget: Arc<ByteBudget>,
    id: u64,
    held: usize,
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
        let Ok(mut s) = self.budget.state.lock() else {
            return true; // a poisoned lock only lifts the bound
        };
        let fits = s.used + n <= self.budget.limit;
        if !fits {
            // Spent: only one ticket at a time may go on past the limit.
            match s.overdraft {
                Some(id) if id != self.id => return false,
                _ => s.overdraft = Some(self.id),
            }
        }
        s.used += n;
        s.peak = s.peak.max(s.used);
        self.held += n;
        true
    }

    /// Sets the counted size to `total` bytes (less the free allowance)
    /// without waiting: for what processing keeps of a body, which is
    /// smaller than what it read. Ends an overdraft.
    pub fn settle(&mut self, total: usize) {
        let n = total.saturating_sub(FREE_BYTES);
        if let Ok(mut s) = self.budget.state.lock() {
            s.used = s.used.saturating_sub(self.held) + n;
            s.peak = s.peak.max(s.used);
            if s.overdraft == Some(self.id) {
                s.overdraft = None;
            }
        }
        let shrank = n < self.held;
        self.held = n;
        if shrank {
            self.budget.released.notify_waiters();
        }
    }

    pub fn held(&self) -> usize {
        self.held
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.settle(0);
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
        let mut a = b.ticket();
        a.grow_to(FREE_BYTES + (1 << 20)).await;
        assert_eq!(b.used(), 1 << 20);
        // Small bodies never wait.
        let mut small = b.ticket();
        small.grow_to(FREE_BYTES).await;
        // The budget is spent: the first to wait overdraws...
        let mut over = b.ticket();
        over.grow_to(FREE_BYTES + 10).await;
        assert_eq!(b.used(), (1 << 20) + 10);
        // ...and the next waits until something is given back.
        let mut waiter = b.ticket();
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
        waiter.settle(FREE_BYTES + 40);
        assert_eq!(b.used(), 50);
        drop((over, waiter, small));
        assert_eq!(b.used(), 0);
        assert_eq!(b.peak(), (1 << 20) + 10);
    }
}
