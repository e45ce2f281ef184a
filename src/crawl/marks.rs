//! The channel between fetch tasks and the scheduler for in-flight marks (see
//! `inflight`). A task asks for its page's mark and waits for the answer;
//! the scheduler puts the marks it grants into its next batch and answers
//! each once that batch is written. A suspect — a URL that was in flight
//! when a run died — is marked alone: only when no other page is marked,
//! and no other page is marked until it is done, so a second death points
//! at it and at no page that merely shared its moment.

use std::collections::{HashSet, VecDeque};

use tokio::sync::{mpsc, oneshot};

use crate::model::UrlId;
use crate::schema::{FrontierKey, InFlightRecord};
use crate::store::Batch;

/// How long a mark may wait for a page's batch to carry it before it is
/// written on its own.
const MARK_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

/// A fetch task's request to have its page marked in flight.
pub(super) struct MarkRequest {
    id: UrlId,
    key: FrontierKey,
    deaths: u8,
    done: oneshot::Sender<()>,
}

/// The fetch tasks' side.
#[derive(Clone)]
pub(super) struct Marks {
    requests: mpsc::UnboundedSender<MarkRequest>,
}

/// The scheduler's side: requests waiting, and the marks written and not yet
/// taken back.
pub(super) struct MarkBook {
    pub requests: mpsc::UnboundedReceiver<MarkRequest>,
    waiting: VecDeque<MarkRequest>,
    suspects: VecDeque<MarkRequest>,
    outstanding: HashSet<UrlId>,
    /// A suspect's mark is out: nothing else is granted until it is back.
    solo: Option<UrlId>,
    /// When the oldest grantable request came.
    since: Option<tokio::time::Instant>,
}

/// Marks granted into a batch, to be answered once it is written.
pub(super) struct Granted(Vec<oneshot::Sender<()>>);

pub(super) fn marks() -> (Marks, MarkBook) {
    let (tx, rx) = mpsc::unbounded_channel();
    let book = MarkBook {
        requests: rx,
        waiting: VecDeque::new(),
        suspects: VecDeque::new(),
        outstanding: HashSet::new(),
        solo: None,
        since: None,
    };
    (Marks { requests: tx }, book)
}

impl Marks {
    /// Marks `id` in flight; returns once the mark is in the db (false when
    /// the scheduler is gone).
    pub async fn mark(&self, id: UrlId, key: FrontierKey, deaths: u8) -> bool {
        let (done, answer) = oneshot::channel();
        let req = MarkRequest {
            id,
            key,
            deaths,
            done,
        };
        self.requests.send(req).is_ok() && answer.await.is_ok()
    }
}

impl MarkBook {
    /// Takes a request (and any others already in the channel).
    pub fn take(&mut self, first: MarkRequest) {
        let mut next = Some(first);
        while let Some(m) = next {
            if m.deaths > 0 {
                self.suspects.push_back(m);
            } else {
                self.waiting.push_back(m);
            }
            next = self.requests.try_recv().ok();
        }
        if self.grantable() > 0 {
            self.since.get_or_insert_with(tokio::time::Instant::now);
        }
    }

    /// Requests the next batch would grant.
    pub fn grantable(&self) -> usize {
        if self.solo.is_some() {
            0
        } else if !self.suspects.is_empty() {
            usize::from(self.outstanding.is_empty())
        } else {
            self.waiting.len()
        }
    }

    /// When the grantable marks must be written even if no page's batch
    /// has carried them (None: nothing grantable).
    pub fn due(&self) -> Option<tokio::time::Instant> {
        self.since.map(|t| t + MARK_WAIT)
    }

    /// A page's mark is taken back (in the batch that records it).
    pub fn unmarked(&mut self, id: UrlId) {
        self.outstanding.remove(&id);
        if self.solo == Some(id) {
            self.solo = None;
        }
        if self.grantable() > 0 {
            self.since.get_or_insert_with(tokio::time::Instant::now);
        }
    }

    /// Puts the marks it can grant now into `b`.
    pub fn write_into(&mut self, b: &mut Batch<'_>) -> Granted {
        self.since = None;
        let granted: Vec<MarkRequest> = match self.grantable() {
            0 => Vec::new(),
            _ if !self.suspects.is_empty() => {
                let m = self.suspects.pop_front().expect("a suspect waits");
                self.solo = Some(m.id);
                vec![m]
            }
            _ => self.waiting.drain(..).collect(),
        };
        let mut answers = Vec::with_capacity(granted.len());
        for m in granted {
            let rec = InFlightRecord {
                frontier_key: m.key.to_key().to_vec(),
                deaths: m.deaths,
                in_flight: true,
            };
            b.put_row::<crate::schema::tables::InFlight>(&m.id, &rec);
            self.outstanding.insert(m.id);
            answers.push(m.done);
        }
        Granted(answers)
    }

    /// The batch carrying `granted` is written: its tasks may go on.
    pub fn written(&mut self, granted: Granted) {
        for done in granted.0 {
            let _ = done.send(());
        }
    }
}
