//! A table as a Parquet file through the `parquet` crate's column writer
//! (no arrow): every column optional, integers INT64, floats DOUBLE,
//! text UTF-8 BYTE_ARRAY, nested values as their JSON text; rows are kept
//! a row group at a time (bounded: `GROUP_ROWS` rows or `GROUP_BYTES` of
//! text) and written as zstd-compressed pages.

use std::fs::File;
use std::io::BufWriter;
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::Result;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use serde_json::Value;

use super::{Col, ColType};

/// Rows in a row group at most.
pub(super) const GROUP_ROWS: usize = 128 * 1024;
/// Text bytes held for a row group at most (page text can be large).
const GROUP_BYTES: usize = 64 << 20;

pub struct ParquetTable {
    writer: SerializedFileWriter<BufWriter<File>>,
    columns: Vec<Buffered>,
    rows: usize,
    bytes: usize,
}

/// One column's values of the row group being gathered.
enum Buffered {
    Int(Vec<i64>, Vec<i16>),
    Float(Vec<f64>, Vec<i16>),
    Bool(Vec<bool>, Vec<i16>),
    Text(Vec<ByteArray>, Vec<i16>),
}

impl ParquetTable {
    pub fn new(out: BufWriter<File>, columns: &[Col]) -> Result<ParquetTable> {
        let fields = columns
            .iter()
            .map(|c| {
                let (physical, logical) = match c.ty {
                    ColType::Int => (Physical::INT64, None),
                    ColType::Float => (Physical::DOUBLE, None),
                    ColType::Bool => (Physical::BOOLEAN, None),
                    ColType::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
                };
                Type::primitive_type_builder(&c.name, physical)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_logical_type(logical)
                    .build()
                    .map(Arc::new)
            })
            .collect::<Result<Vec<_>>>()?;
        let schema = Type::group_type_builder("trawl")
            .with_fields(fields)
            .build()?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
            .set_created_by(format!("trawl {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props))?;
        let columns = columns
            .iter()
            .map(|c| match c.ty {
                ColType::Int => Buffered::Int(Vec::new(), Vec::new()),
                ColType::Float => Buffered::Float(Vec::new(), Vec::new()),
                ColType::Bool => Buffered::Bool(Vec::new(), Vec::new()),
                ColType::Text => Buffered::Text(Vec::new(), Vec::new()),
            })
            .collect();
        Ok(ParquetTable {
            writer,
            columns,
            rows: 0,
            bytes: 0,
        })
    }

    pub fn row(&mut self, cells: &[Value]) -> Result<()> {
        for (col, v) in self.columns.iter_mut().zip(cells) {
            self.bytes += push(col, v);
        }
        self.rows += 1;
        if self.rows >= GROUP_ROWS || self.bytes >= GROUP_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the last row group and the footer.
    pub fn finish(mut self) -> Result<File> {
        self.flush()?;
        let out = self.writer.into_inner()?;
        out.into_inner()
            .map_err(|e| parquet::errors::ParquetError::External(Box::new(e.into_error())))
    }

    fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.writer.next_row_group()?;
        for col in &mut self.columns {
            let Some(mut w) = group.next_column()? else {
                break;
            };
            match col {
                Buffered::Int(v, d) => {
                    w.typed::<Int64Type>().write_batch(v, Some(d), None)?;
                }
                Buffered::Float(v, d) => {
                    w.typed::<DoubleType>().write_batch(v, Some(d), None)?;
                }
                Buffered::Bool(v, d) => {
                    w.typed::<BoolType>().write_batch(v, Some(d), None)?;
                }
                Buffered::Text(v, d) => {
                    w.typed::<ByteArrayType>().write_batch(v, Some(d), None)?;
                }
            }
            col.clear();
            w.close()?;
        }
        group.close()?;
        self.rows = 0;
        self.bytes = 0;
        Ok(())
    }
}

/// Adds `v` to `col` (null, or a value of another type, as a null);
/// the text bytes it holds.
fn push(col: &mut Buffered, v: &Value) -> usize {
    let mut bytes = 0;
    let present = match col {
        Buffered::Int(vals, _) => v
            .as_i64()
            .or_else(|| v.as_f64().map(|f| f as i64))
            .map(|n| vals.push(n))
            .is_some(),
        Buffered::Float(vals, _) => v.as_f64().map(|n| vals.push(n)).is_some(),
        Buffered::Bool(vals, _) => v.as_bool().map(|b| vals.push(b)).is_some(),
        Buffered::Text(vals, _) if !v.is_null() => {
            let text = super::plain(v);
            bytes = text.len();
            vals.push(ByteArray::from(text.into_bytes()));
            true
        }
        Buffered::Text(..) => false,
    };
    col.defs().push(i16::from(present));
    bytes
}

impl Buffered {
    /// Its definition levels: 1 a value, 0 a null.
    fn defs(&mut self) -> &mut Vec<i16> {
        match self {
            Buffered::Int(_, d)
            | Buffered::Float(_, d)
            | Buffered::Bool(_, d)
            | Buffered::Text(_, d) => d,
        }
    }

    /// Empties it for the next row group.
    fn clear(&mut self) {
        match self {
            Buffered::Int(v, _) => v.clear(),
            Buffered::Float(v, _) => v.clear(),
            Buffered::Bool(v, _) => v.clear(),
            Buffered::Text(v, _) => v.clear(),
        }
        self.defs().clear();
    }
}
