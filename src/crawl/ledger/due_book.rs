//! Where the revisits stand: when the first `due` row is due, the lowest
//! key a `due` row may have (the scan for due rows starts there), and how
//! far a retiming under a new revisit policy has come.

use crate::schema::DueKey;

/// Above every `due` key: the scan's start when there is no row.
pub(super) const NO_DUE: DueKey = DueKey {
    at_ms: u64::MAX,
    url: crate::model::UrlId(u128::MAX),
};

pub(super) struct DueBook {
    /// When the first `due` row is due.
    next_ms: Option<u64>,
    /// No `due` row has a lower key.
    floor: DueKey,
    /// Retiming under a new revisit policy: the next `seen` key to time.
    retime_next: Option<u128>,
}

impl Default for DueBook {
    fn default() -> DueBook {
        DueBook {
            next_ms: None,
            floor: NO_DUE,
            retime_next: None,
        }
    }
}

impl DueBook {
    /// The first `due` row is `first` (None: no revisit waits); every
    /// other is above it.
    pub fn start_at(&mut self, first: Option<DueKey>) {
        self.next_ms = first.map(|k| k.at_ms);
        self.floor = first.unwrap_or(NO_DUE);
    }

    /// A `due` row `key` was written.
    pub fn add(&mut self, key: DueKey) {
        let at = key.at_ms;
        self.next_ms = Some(self.next_ms.map_or(at, |n| n.min(at)));
        self.floor = self.floor.min(key);
    }

    /// When the first `due` row is due.
    pub fn next_ms(&self) -> Option<u64> {
        self.next_ms
    }

    /// The lowest key a `due` row may have.
    pub fn floor(&self) -> &DueKey {
        &self.floor
    }

    /// The next `seen` key a retiming times (None: none under way).
    pub fn retime_next(&self) -> Option<u128> {
        self.retime_next
    }

    pub fn set_retime_next(&mut self, next: Option<u128>) {
        self.retime_next = next;
    }
}
