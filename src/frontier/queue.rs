//! A host's queue is its key range in the `frontier` CF. Only a window of
//! it is held in memory, so a frontier of millions of URLs costs disk, not
//! RAM. Entries leave the CF in the same batch that records their fetch,
//! so a crash leaves them queued.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet, VecDeque};

use crate::model::{HostId, UrlId};
use crate::schema::tables::Frontier;
use crate::schema::{CF_FRONTIER, FrontierEntry, FrontierKey, FrontierScores};
use crate::store::{Batch, Result, Store, StoreError};

/// Entries read from disk per refill.
const WINDOW: usize = 64;
/// Entries a window may grow to through inserts before it spills to disk.
const MAX_WINDOW: usize = 1024;
/// Rows read and rewritten per batch when a queue is re-keyed.
const REKEY_BATCH: usize = 4096;

pub struct HostQueue {
    host: HostId,
    window: BTreeMap<FrontierKey, FrontierEntry>,
    /// Every queued entry on disk that is not in `window` or in flight has
    /// a key >= `low`.
    low: [u8; 32],
    /// `window` holds every queued entry of the host that is not in flight.
    complete: bool,
    in_flight: HashSet<UrlId>,
}

impl HostQueue {
    pub fn new(host: HostId) -> HostQueue {
        HostQueue {
            host,
            window: BTreeMap::new(),
            low: first_key(host),
            complete: false,
            in_flight: HashSet::new(),
        }
    }

    /// The next entry to fetch; it counts as in flight until [`done`](Self::done).
    pub fn pop(&mut self, store: &Store) -> Result<Option<(FrontierKey, FrontierEntry)>> {
        if self.window.is_empty() && !self.complete {
            self.refill(store)?;
        }
        let next = self.window.pop_first();
        if let Some((k, _)) = &next {
            self.in_flight.insert(k.url);
        }
        Ok(next)
    }

    fn refill(&mut self, store: &Store) -> Result<()> {
        let (rows, end) =
            store.frontier_range(self.host, &self.low, WINDOW + self.in_flight.len())?;
        if let Some((last, _)) = rows.last() {
            self.low = successor(last.to_key());
        }
        for (k, e) in rows {
            if !self.in_flight.contains(&k.url) {
                self.window.insert(k, e);
            }
        }
        self.complete = end;
        Ok(())
    }

    /// Queues `url` at `priority` (from the frontier's [`Order`](super::Order)):
    /// its row goes into `b`, and the window mirrors it.
    pub fn enqueue(&mut self, b: &mut Batch<'_>, priority: u64, url: UrlId, entry: FrontierEntry) {
        let key = FrontierKey {
            host: self.host,
            priority,
            url,
        };
        b.put(CF_FRONTIER, &key.to_key(), &entry);
        self.push(key, entry);
    }

    /// Mirrors an entry just written to the CF.
    fn push(&mut self, key: FrontierKey, entry: FrontierEntry) {
        let below_window = self
            .window
            .last_key_value()
            .is_some_and(|(max, _)| key < *max);
        if self.complete || below_window {
            self.window.insert(key, entry);
            if self.window.len() > MAX_WINDOW {
                // Spill the tail: it is on disk already.
                while self.window.len() > WINDOW {
                    if let Some((k, _)) = self.window.pop_last() {
                        self.low = self.low.min(k.to_key());
                    }
                }
                self.complete = false;
            }
        } else {
            self.low = self.low.min(key.to_key());
        }
    }

    /// The priority of the entry `pop` would hand out next.
    pub fn head(&mut self, store: &Store) -> Result<Option<u64>> {
        if self.window.is_empty() && !self.complete {
            self.refill(store)?;
        }
        Ok(self.window.first_key_value().map(|(k, _)| k.priority))
    }

    /// Takes queued entries `keys` (not in flight) out of the queue to be
    /// changed: from the window, else read from disk in one MultiGet.
    /// Each Some must go back with [`moved`](Self::moved); None for a key
    /// in flight, no longer queued, or whose row does not decode (it stays
    /// where it is). On a read error the window is dropped.
    pub fn take_queued(
        &mut self,
        store: &Store,
        keys: &[FrontierKey],
    ) -> Result<Vec<Option<FrontierEntry>>> {
        let mut out: Vec<Option<FrontierEntry>> = Vec::with_capacity(keys.len());
        let mut on_disk = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            if self.in_flight.contains(&key.url) {
                out.push(None);
                continue;
            }
            let taken = self.window.remove(key);
            // A complete window holds every queued entry: one it lacks is
            // not queued.
            if taken.is_none() && !self.complete {
                on_disk.push(i);
            }
            out.push(taken);
        }
        let disk_keys: Vec<FrontierKey> = on_disk.iter().map(|&i| keys[i]).collect();
        for (i, read) in on_disk
            .into_iter()
            .zip(store.rows_many::<Frontier>(&disk_keys))
        {
            out[i] = match read {
                Ok(entry) => entry,
                // A row that cannot be decoded stays where it is.
                Err(StoreError::Codec { .. }) => None,
                Err(e) => {
                    self.forget_window();
                    return Err(e);
                }
            };
        }
        Ok(out)
    }

    /// Puts an entry [`take_queued`](Self::take_queued) took back, at
    /// `to`: its row moves there in `b`, and the window mirrors it.
    pub fn moved(
        &mut self,
        b: &mut Batch<'_>,
        from: FrontierKey,
        to: FrontierKey,
        e: FrontierEntry,
    ) {
        if to != from {
            b.delete(CF_FRONTIER, &from.to_key());
        }
        b.put(CF_FRONTIER, &to.to_key(), &e);
        self.push(to, e);
    }

    /// Rewrites the key of every queued entry (not in flight) whose
    /// priority `rekey` changes (the entry then keeps the scores it gave), in batches of [`REKEY_BATCH`] rows, and
    /// reloads the window; `moved` adds what goes with each move to its
    /// batch. Returns the rows moved. Each row moves at most once, so the
    /// scan ends; a crash part-way leaves every row queued once (delete and
    /// put share a batch).
    pub fn rekey(
        &mut self,
        store: &Store,
        rekey: impl Fn(&FrontierKey, &FrontierEntry) -> (u64, FrontierScores),
        mut moved_to: impl FnMut(&mut Batch<'_>, &FrontierKey, &FrontierEntry),
    ) -> Result<u64> {
        let mut from = first_key(self.host);
        let mut moved = 0;
        loop {
            let (rows, end) = store.frontier_range(self.host, &from, REKEY_BATCH)?;
            let mut b = store.batch();
            if let Some((last, _)) = rows.last() {
                from = successor(last.to_key());
            }
            for (k, mut e) in rows {
                if self.in_flight.contains(&k.url) {
                    continue;
                }
                // Most rows keep their key: only a moved one is changed.
                let (priority, scores) = rekey(&k, &e);
                if priority != k.priority {
                    e.scores = Some(scores);
                    b.delete(CF_FRONTIER, &k.to_key());
                    let to = FrontierKey { priority, ..k };
                    b.put(CF_FRONTIER, &to.to_key(), &e);
                    moved_to(&mut b, &to, &e);
                    moved += 1;
                }
            }
            b.write()?;
            if end {
                break;
            }
        }
        self.forget_window();
        Ok(moved)
    }

    /// Drops the window (rows in it may not be on disk after a failed
    /// write): the next pop or head reads the queue again.
    pub fn forget_window(&mut self) {
        self.window.clear();
        self.low = first_key(self.host);
        self.complete = false;
    }

    /// The popped entry is no longer queued (its fetch was recorded).
    pub fn done(&mut self, url: UrlId) {
        self.in_flight.remove(&url);
    }

    /// The popped entry goes back to the queue (a retry), changed: its row
    /// is rewritten in `b`.
    pub fn requeue(&mut self, b: &mut Batch<'_>, key: FrontierKey, entry: FrontierEntry) {
        b.put(CF_FRONTIER, &key.to_key(), &entry);
        self.in_flight.remove(&key.url);
        self.window.insert(key, entry);
    }

    /// Whether every queued entry not in flight is in the window (changing
    /// one reads nothing).
    pub fn is_in_memory(&self) -> bool {
        self.complete
    }

    /// Nothing queued and nothing in flight.
    pub fn is_idle(&self) -> bool {
        self.window.is_empty() && self.complete && self.in_flight.is_empty()
    }

    /// Nothing left to pop (entries may still be in flight).
    pub fn is_drained(&self) -> bool {
        self.window.is_empty() && self.complete
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

/// The smallest key of `host`'s range.
fn first_key(host: HostId) -> [u8; 32] {
    let mut k = [0u8; 32];
    k[..8].copy_from_slice(&host.to_bytes());
    k
}

/// The smallest key greater than `k`.
fn successor(mut k: [u8; 32]) -> [u8; 32] {
    for b in k.iter_mut().rev() {
        if *b == u8::MAX {
            *b = 0;
        } else {
            *b += 1;
            break;
        }
    }
    k
}

/// Hosts ordered by the time (ms) they may next be asked, behind a lane
/// of warm hosts that are ready now and go first; each host is in one of
/// them at most once (the caller tracks that). Under a score order, every
/// host whose time has come waits in a third heap ranked by the priority
/// of its best URL, and the best goes first.
#[derive(Default)]
pub struct ReadyHeap {
    heap: BinaryHeap<Reverse<(u64, HostId)>>,
    warm: VecDeque<HostId>,
    /// (best URL's priority, arrival number, host): ready hosts under a
    /// score order.
    due: BinaryHeap<Reverse<(u64, u64, HostId)>>,
    arrivals: u64,
    by_score: bool,
}

impl ReadyHeap {
    pub fn push(&mut self, at_ms: u64, host: HostId) {
        self.heap.push(Reverse((at_ms, host)));
    }

    /// A host that may be asked now and goes ahead of those in the heap.
    pub fn push_warm(&mut self, host: HostId) {
        self.warm.push_back(host);
    }

    /// Ranks ready hosts by their best URL (`on`) or takes them in time
    /// order, warm first (the breadth-first way).
    pub fn set_by_score(&mut self, on: bool) {
        if !on {
            while let Some(Reverse((_, _, h))) = self.due.pop() {
                self.warm.push_back(h);
            }
        }
        self.by_score = on;
    }

    /// The next host to ask at `now`: under a score order the ready host
    /// whose best URL (`head`, lowest first) ranks first; otherwise the
    /// first warm host, else the earliest host if its time has come.
    pub fn pop_ready(
        &mut self,
        now_ms: u64,
        mut head: impl FnMut(HostId) -> u64,
    ) -> Option<HostId> {
        if self.by_score {
            while let Some(h) = self.warm.pop_front().or_else(|| {
                let due = self
                    .heap
                    .peek()
                    .is_some_and(|Reverse((at, _))| *at <= now_ms);
                due.then(|| self.heap.pop().map(|Reverse((_, h))| h))
                    .flatten()
            }) {
                self.arrivals += 1;
                self.due.push(Reverse((head(h), self.arrivals, h)));
            }
            return self.due.pop().map(|Reverse((_, _, h))| h);
        }
        if let Some(h) = self.warm.pop_front() {
            return Some(h);
        }
        match self.heap.peek() {
            Some(Reverse((at, _))) if *at <= now_ms => self.heap.pop().map(|Reverse((_, h))| h),
            _ => None,
        }
    }

    pub fn next_time(&self) -> Option<u64> {
        if !self.warm.is_empty() || !self.due.is_empty() {
            return Some(0);
        }
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.warm.is_empty() && self.due.is_empty()
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.warm.len() + self.due.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_hosts_go_before_the_heap_in_the_order_they_came() {
        let mut r = ReadyHeap::default();
        r.push(5, HostId(1));
        r.push(0, HostId(2));
        r.push_warm(HostId(3));
        r.push_warm(HostId(4));
        assert_eq!(r.next_time(), Some(0));
        let order: Vec<_> = std::iter::from_fn(|| r.pop_ready(10, |_| 0)).collect();
        assert_eq!(order, [HostId(3), HostId(4), HostId(2), HostId(1)]);
        assert!(r.is_empty());
    }

    #[test]
    fn by_score_the_ready_host_with_the_best_url_goes_first() {
        let mut r = ReadyHeap::default();
        r.set_by_score(true);
        let best = |h: HostId| [0, 30, 10, 20, 5][h.0 as usize];
        r.push(0, HostId(1));
        r.push(0, HostId(2));
        r.push_warm(HostId(3));
        // Not ready yet: however good its URL, it waits for its time.
        r.push(50, HostId(4));
        let order: Vec<_> = std::iter::from_fn(|| r.pop_ready(10, best)).collect();
        assert_eq!(order, [HostId(2), HostId(3), HostId(1)]);
        assert_eq!(r.next_time(), Some(50));
        assert_eq!(r.pop_ready(50, best), Some(HostId(4)));
        // Back to breadth-first: hosts ranked so far keep their turn.
        r.push(0, HostId(1));
        r.push(0, HostId(2));
        r.pop_ready(0, best);
        r.set_by_score(false);
        assert_eq!(r.pop_ready(0, best), Some(HostId(1)));
    }

    #[test]
    fn successor_carries() {
        let mut k = [0u8; 32];
        k[31] = 255;
        k[30] = 7;
        let s = successor(k);
        assert_eq!((s[30], s[31]), (8, 0));
    }
}
