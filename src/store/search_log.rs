//! The `search_log` column family: pages whose search document changed,
//! in the order their batches were written, until the search index beside
//! the db has taken them (schema 26). The ledger appends rows in each
//! page's batch; the index's writer reads them and trims what it took.

use super::{Result, Store, StoreError};
use crate::model::UrlId;
use crate::schema::tables::{Key, LogSeq, SearchLog, Table};
use crate::schema::{SearchLogRecord, Versioned};

impl Store {
    /// Up to `max` rows logged from sequence `from` on, in log order
    /// (a page may be there more than once): each row's sequence and page.
    pub fn search_log(&self, from: u64, max: usize) -> Result<Vec<(u64, UrlId)>> {
        let mut c = self.cursor_range(SearchLog::CF, &LogSeq(from).bytes(), None);
        let mut rows = Vec::new();
        while rows.len() < max {
            let Some((k, v)) = c.next_row()? else { break };
            let seq = LogSeq::parse(k).ok_or_else(|| corrupt("a key is not 8 bytes"))?;
            let row = SearchLogRecord::decode(v).map_err(|err| StoreError::Codec {
                cf: SearchLog::CF,
                err,
            })?;
            rows.push((seq.0, UrlId(row.page)));
        }
        Ok(rows)
    }

    /// Writes the db's log to disk: what an index is about to commit then
    /// survives an OS crash as the index does.
    pub fn sync_wal(&self) -> Result<()> {
        if self.secondary {
            return Ok(());
        }
        self.db
            .flush_wal(true)
            .map_err(|e| StoreError::write(&self.path, e))
    }

    /// Forgets the log's rows before sequence `before`: the index has them.
    pub fn trim_search_log(&self, before: u64) -> Result<()> {
        if before == 0 {
            return Ok(());
        }
        if self.secondary {
            return Err(StoreError::ReadOnly);
        }
        self.db
            .delete_range_cf(
                self.cf(SearchLog::CF),
                LogSeq(0).bytes(),
                LogSeq(before).bytes(),
            )
            .map_err(|e| StoreError::write(&self.path, e))
    }
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Codec {
        cf: SearchLog::CF,
        err: crate::schema::CodecError::Malformed(what.to_string()),
    }
}
