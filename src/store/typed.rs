//! Typed rows: reads, scans and batch writes of a [`Table`]'s keys and
//! values. A scan yields only rows it can decode and counts the others,
//! for the caller to report.

use std::marker::PhantomData;

use super::{Batch, Result, Row, Store, StoreError};
use crate::schema::CF_META;
use crate::schema::Versioned;
use crate::schema::tables::{Key, MetaRow, Table};

/// The decodable rows of a table under a prefix; see [`Rows::unreadable`].
pub struct Rows<'a, T: Table> {
    inner: Box<dyn Iterator<Item = Result<Row>> + 'a>,
    unreadable: u64,
    table: PhantomData<T>,
}

impl<T: Table> Rows<'_, T> {
    /// Rows passed over so far because their key or value did not decode.
    pub fn unreadable(&self) -> u64 {
        self.unreadable
    }
}

impl<T: Table> Iterator for Rows<'_, T> {
    type Item = Result<(T::Key, T::Value)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (k, v) = match self.inner.next()? {
                Ok(row) => row,
                Err(e) => return Some(Err(e)),
            };
            match (T::Key::parse(&k), T::Value::decode(&v)) {
                (Some(k), Ok(v)) => return Some(Ok((k, v))),
                _ => self.unreadable += 1,
            }
        }
    }
}

impl Store {
    /// The row of `key`, decoded (a value that does not decode is an error).
    pub fn row<T: Table>(&self, key: &T::Key) -> Result<Option<T::Value>> {
        self.get(T::CF, key.bytes().as_ref())
    }

    /// The rows of many keys at once (one RocksDB MultiGet: it sorts the
    /// keys and reads each block once), each decoded on its own: a value
    /// that does not decode is that key's error.
    pub fn rows_many<T: Table>(&self, keys: &[T::Key]) -> Vec<Result<Option<T::Value>>> {
        let keys: Vec<_> = keys.iter().map(|k| k.bytes()).collect();
        self.db
            .batched_multi_get_cf(self.cf(T::CF), keys.iter().map(|k| k.as_ref()), false)
            .into_iter()
            .map(|r| match r? {
                Some(v) => T::Value::decode(&v)
                    .map(Some)
                    .map_err(|err| StoreError::Codec { cf: T::CF, err }),
                None => Ok(None),
            })
            .collect()
    }

    /// The `meta` row `M`, decoded.
    pub fn meta<M: MetaRow>(&self) -> Result<Option<M::Value>> {
        self.get(CF_META, M::KEY)
    }

    /// The rows whose key starts with the table's prefix and then
    /// `prefix`, in key order.
    pub fn rows<T: Table>(&self, prefix: &[u8]) -> Rows<'_, T> {
        Rows {
            inner: Box::new(self.scan_owned(T::CF, [T::PREFIX, prefix].concat())),
            unreadable: 0,
            table: PhantomData,
        }
    }

    /// The rows with `from <= key < to` (`to` None: to the table's end),
    /// in key order: a seek, so rows (and deletions) before `from` are
    /// not passed over.
    pub fn rows_range<T: Table>(&self, from: &T::Key, to: Option<&T::Key>) -> Rows<'_, T> {
        let mut opts = rocksdb::ReadOptions::default();
        if let Some(to) = to {
            opts.set_iterate_upper_bound(to.bytes().as_ref().to_vec());
        }
        let from = from.bytes();
        let mode = rocksdb::IteratorMode::From(from.as_ref(), rocksdb::Direction::Forward);
        let prefix = T::PREFIX;
        let rows = self
            .db
            .iterator_cf_opt(self.cf(T::CF), opts, mode)
            .map(|r| r.map_err(StoreError::from))
            .take_while(move |r| r.as_ref().map_or(true, |(k, _)| k.starts_with(prefix)));
        Rows {
            inner: Box::new(rows),
            unreadable: 0,
            table: PhantomData,
        }
    }

    /// As [`Store::scan`], owning its prefix.
    pub(super) fn scan_owned(
        &self,
        cf: &'static str,
        prefix: Vec<u8>,
    ) -> impl Iterator<Item = Result<Row>> + '_ {
        self.db
            .iterator_cf(
                self.cf(cf),
                rocksdb::IteratorMode::From(&prefix, rocksdb::Direction::Forward),
            )
            .map(|r| r.map_err(StoreError::from))
            .take_while(move |r| {
                r.as_ref()
                    .map(|(k, _)| k.starts_with(&prefix))
                    .unwrap_or(true)
            })
    }
}

impl Batch<'_> {
    pub fn put_row<T: Table>(&mut self, key: &T::Key, value: &T::Value) {
        self.put(T::CF, key.bytes().as_ref(), value);
    }

    pub fn delete_row<T: Table>(&mut self, key: &T::Key) {
        self.delete(T::CF, key.bytes().as_ref());
    }

    pub fn put_meta<M: MetaRow>(&mut self, value: &M::Value) {
        self.put(CF_META, M::KEY, value);
    }
}
