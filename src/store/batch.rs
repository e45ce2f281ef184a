//! Atomic write batches: every change one outcome causes, written through
//! the WAL together or not at all.

use rocksdb::WriteBatch;

use super::{Result, Store, StoreError};
use crate::schema::Versioned;

/// Writes that become visible together or not at all.
pub struct Batch<'a> {
    pub(super) store: &'a Store,
    pub(super) wb: WriteBatch,
}

impl Batch<'_> {
    pub fn put<T: Versioned>(&mut self, cf: &'static str, key: &[u8], value: &T) {
        self.wb.put_cf(self.store.cf(cf), key, value.encode());
    }

    pub fn put_raw(&mut self, cf: &'static str, key: &[u8], value: &[u8]) {
        self.wb.put_cf(self.store.cf(cf), key, value);
    }

    pub fn delete(&mut self, cf: &'static str, key: &[u8]) {
        self.wb.delete_cf(self.store.cf(cf), key);
    }

    pub fn is_empty(&self) -> bool {
        self.wb.is_empty()
    }

    /// Applies the batch atomically.
    pub fn write(self) -> Result<()> {
        if self.store.secondary {
            return Err(StoreError::ReadOnly);
        }
        self.store
            .db
            .write(self.wb)
            .map_err(|e| StoreError::write(&self.store.path, e))
    }
}
