//! Tables written to files other tools read: JSONL (one object a line),
//! CSV (RFC 4180, a header line) and Parquet (typed columns, zstd pages),
//! JSONL and CSV gzip- or zstd-compressed when the name ends `.gz` or
//! `.zst`. A file is written under `NAME.partial` and renamed when whole,
//! so the final name never holds half a file; dropped unfinished (an
//! error, Ctrl-C, a failed flush or rename), the partial file is removed.

mod cells;
pub mod graph;
mod parquet_file;

pub use cells::{csv_cell, plain, tsv_cell};

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FileFormat {
    Jsonl,
    Csv,
    Parquet,
    /// Text as it is: each row's one cell, written whole.
    Markdown,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// What a column holds, for Parquet's schema (JSONL and CSV write values
/// as they are).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ColType {
    Int,
    Float,
    Bool,
    Text,
}

#[derive(Clone, Debug)]
pub struct Col {
    pub name: String,
    pub ty: ColType,
}

/// Where and how a table is written.
#[derive(Clone, Debug)]
pub struct Target {
    pub path: PathBuf,
    pub format: FileFormat,
    pub compression: Compression,
}

impl Target {
    /// The target for `path`: the format named, else the one its
    /// extension says (`x.csv.gz` is gzip-compressed CSV); JSONL when it
    /// says none.
    pub fn of(path: &Path, format: Option<&str>) -> Result<Target, String> {
        let name = path.to_string_lossy().to_ascii_lowercase();
        let (stem, compression) = if let Some(s) = name.strip_suffix(".gz") {
            (s, Compression::Gzip)
        } else if let Some(s) = name.strip_suffix(".zst") {
            (s, Compression::Zstd)
        } else {
            (name.as_str(), Compression::None)
        };
        let named = match format {
            Some(f) => Some(parse_format(f)?),
            None => None,
        };
        let by_extension = [
            (".jsonl", FileFormat::Jsonl),
            (".ndjson", FileFormat::Jsonl),
            (".json", FileFormat::Jsonl),
            (".csv", FileFormat::Csv),
            (".parquet", FileFormat::Parquet),
            (".md", FileFormat::Markdown),
            (".markdown", FileFormat::Markdown),
        ]
        .into_iter()
        .find(|(ext, _)| stem.ends_with(ext))
        .map(|(_, f)| f);
        let format = named.or(by_extension).unwrap_or(FileFormat::Jsonl);
        if format == FileFormat::Parquet && compression != Compression::None {
            return Err(format!(
                "{}: Parquet compresses its own pages; drop the .gz or .zst",
                path.display()
            ));
        }
        Ok(Target {
            path: path.to_path_buf(),
            format,
            compression,
        })
    }
}

fn parse_format(f: &str) -> Result<FileFormat, String> {
    match f {
        "jsonl" => Ok(FileFormat::Jsonl),
        "csv" => Ok(FileFormat::Csv),
        "parquet" => Ok(FileFormat::Parquet),
        "markdown" | "md" => Ok(FileFormat::Markdown),
        _ => Err(format!(
            "--format {f:?} is not a file format here; use jsonl, csv or parquet"
        )),
    }
}

/// What a finished file holds.
#[derive(Clone, Debug)]
pub struct Written {
    pub path: PathBuf,
    pub rows: u64,
    pub bytes: u64,
}

/// A file being written under `PATH.partial`: removed when dropped, unless
/// `commit` gave it its name (so no error path leaves half a file).
pub(crate) struct Partial {
    path: PathBuf,
    partial: PathBuf,
    committed: bool,
}

impl Partial {
    /// Creates `PATH.partial` for `path`, which must not exist; refuses a
    /// partial file left there (another export writing it, or one cut
    /// short by a crash) rather than take it over.
    pub(crate) fn create(path: &Path) -> Result<(Partial, File), String> {
        if path.exists() {
            return Err(format!(
                "{} exists; give export a new file name",
                path.display()
            ));
        }
        let partial = partial_of(path);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => format!(
                    "{} exists: another export is writing it, or one was cut short (remove it)",
                    partial.display()
                ),
                _ => format!("cannot create {}: {e}", partial.display()),
            })?;
        let p = Partial {
            path: path.to_path_buf(),
            partial,
            committed: false,
        };
        Ok((p, file))
    }

    /// Syncs `file` and gives it its name; the bytes it holds.
    pub(crate) fn commit(mut self, file: File) -> Result<u64, String> {
        file.sync_all().map_err(|e| self.error(e))?;
        drop(file);
        std::fs::rename(&self.partial, &self.path)
            .map_err(|e| format!("cannot rename to {}: {e}", self.path.display()))?;
        self.committed = true;
        Ok(std::fs::metadata(&self.path).map_or(0, |m| m.len()))
    }

    /// The name the file gets.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn error(&self, e: std::io::Error) -> String {
        format!("cannot write {}: {e}", self.partial.display())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// A table being written.
pub struct TableFile {
    partial: Partial,
    columns: Vec<Col>,
    /// JSONL: each column's index and its key written once (`"name":`),
    /// in key order as a JSON object prints them.
    keys: Vec<(usize, String)>,
    /// The line being written, reused row to row.
    line: Vec<u8>,
    out: Option<Out>,
    csv: bool,
    markdown: bool,
    rows: u64,
}

/// The byte stream under a JSONL or CSV table, or the Parquet writer.
enum Out {
    Plain(BufWriter<File>),
    Gzip(flate2::write::GzEncoder<BufWriter<File>>),
    Zstd(zstd::Encoder<'static, BufWriter<File>>),
    Parquet(Box<parquet_file::ParquetTable>),
}

impl TableFile {
    /// Starts `target` with `columns`; refuses a path that exists.
    pub fn create(target: &Target, columns: Vec<Col>) -> Result<TableFile, String> {
        let (partial, file) = Partial::create(&target.path)?;
        let buf = BufWriter::with_capacity(1 << 20, file);
        let out = match (target.format, target.compression) {
            (FileFormat::Parquet, _) => Out::Parquet(Box::new(
                parquet_file::ParquetTable::new(buf, &columns).map_err(|e| e.to_string())?,
            )),
            (_, Compression::None) => Out::Plain(buf),
            (_, Compression::Gzip) => Out::Gzip(flate2::write::GzEncoder::new(
                buf,
                flate2::Compression::fast(),
            )),
            (_, Compression::Zstd) => {
                Out::Zstd(zstd::Encoder::new(buf, 3).map_err(|e| format!("zstd: {e}"))?)
            }
        };
        let mut t = TableFile {
            partial,
            keys: json_keys(&columns),
            line: Vec::with_capacity(1024),
            columns,
            out: Some(out),
            csv: target.format == FileFormat::Csv,
            markdown: target.format == FileFormat::Markdown,
            rows: 0,
        };
        if t.csv {
            let head: Vec<Value> = t
                .columns
                .iter()
                .map(|c| Value::from(c.name.clone()))
                .collect();
            t.write_csv(&head).map_err(|e| t.io_error(e))?;
        }
        Ok(t)
    }

    /// Appends one row, cells in the columns' order.
    pub fn row(&mut self, cells: &[Value]) -> Result<(), String> {
        let r = match self.out.as_mut() {
            Some(Out::Parquet(p)) => p.row(cells).map_err(|e| e.to_string()),
            None => Ok(()),
            Some(_) => {
                let written = match (self.csv, self.markdown) {
                    (true, _) => self.write_csv(cells),
                    (_, true) => {
                        let text = cells.first().map(plain).unwrap_or_default();
                        self.writer().write_all(text.as_bytes())
                    }
                    _ => self.write_jsonl(cells),
                };
                written.map_err(|e| self.io_error(e))
            }
        };
        self.rows += 1;
        r
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Finishes the file and gives it its name.
    pub fn finish(mut self) -> Result<Written, String> {
        let out = self.out.take().expect("finished once");
        let file = match out {
            Out::Plain(w) => w.into_inner().map_err(|e| e.into_error()),
            Out::Gzip(g) => g
                .finish()
                .and_then(|w| w.into_inner().map_err(|e| e.into_error())),
            Out::Zstd(z) => z
                .finish()
                .and_then(|w| w.into_inner().map_err(|e| e.into_error())),
            Out::Parquet(p) => p.finish().map_err(|e| std::io::Error::other(e.to_string())),
        }
        .map_err(|e| self.io_error(e))?;
        let path = self.partial.path.clone();
        let bytes = self.partial.commit(file)?;
        Ok(Written {
            path,
            rows: self.rows,
            bytes,
        })
    }

    fn writer(&mut self) -> &mut dyn Write {
        match self.out.as_mut() {
            Some(Out::Plain(w)) => w,
            Some(Out::Gzip(g)) => g,
            Some(Out::Zstd(z)) => z,
            _ => unreachable!("JSONL and CSV only"),
        }
    }

    fn write_csv(&mut self, cells: &[Value]) -> std::io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        for (i, v) in cells.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(csv_cell(v).as_bytes());
        }
        line.extend_from_slice(b"\r\n");
        let done = self.writer().write_all(&line);
        self.line = line;
        done
    }

    /// A row as one JSON object, written straight from the cells (no
    /// map of cloned keys and values a row).
    fn write_jsonl(&mut self, cells: &[Value]) -> std::io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.push(b'{');
        for (i, (at, key)) in self.keys.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(key.as_bytes());
            serde_json::to_writer(&mut line, cells.get(*at).unwrap_or(&Value::Null))?;
        }
        line.extend_from_slice(b"}\n");
        let done = self.writer().write_all(&line);
        self.line = line;
        done
    }

    fn io_error(&self, e: std::io::Error) -> String {
        self.partial.error(e)
    }
}

/// Each column's index and `"name":`, in name order.
fn json_keys(columns: &[Col]) -> Vec<(usize, String)> {
    let mut keys: Vec<(usize, String)> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| (i, format!("{}:", Value::from(c.name.as_str()))))
        .collect();
    keys.sort_by(|a, b| columns[a.0].name.cmp(&columns[b.0].name));
    keys.dedup_by(|a, b| columns[a.0].name == columns[b.0].name);
    keys
}

/// `PATH.partial`: where a file is written until it is whole.
pub fn partial_of(path: &Path) -> PathBuf {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    PathBuf::from(partial)
}

#[cfg(test)]
mod tests;
