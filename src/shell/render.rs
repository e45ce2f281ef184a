//! The one place a [`Reply`] becomes text: a renderer per format, chosen
//! by `--format table|json|jsonl|csv|tsv` (`--json` for json). Rows can be
//! streamed: `begin` writes what comes before them, `row` one row as it
//! is found, `end` what closes them; a whole table goes the same way, so a
//! streamed and a collected answer print alike in every machine format.

use std::io::Write;

use serde_json::{Map, Value};

use super::reply::{Body, Column, Kind, Reply};
use super::table;
use crate::export::{csv_cell, tsv_cell};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    /// Aligned columns for people.
    Table,
    /// One pretty JSON value: an array of row objects, or an object.
    Json,
    /// One compact JSON object a line.
    Jsonl,
    /// RFC 4180: a header line, fields quoted when they need it, CRLF.
    Csv,
    /// Tab-separated with a header; tab, newline and backslash escaped.
    Tsv,
}

/// Every format and its name, for parsing, help and errors.
pub const FORMATS: &[(&str, Format)] = &[
    ("table", Format::Table),
    ("json", Format::Json),
    ("jsonl", Format::Jsonl),
    ("csv", Format::Csv),
    ("tsv", Format::Tsv),
];

impl Format {
    pub fn parse(name: &str) -> Result<Format, String> {
        FORMATS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                format!("--format {name:?} is not a format; use table, json, jsonl, csv or tsv")
            })
    }
}

/// Where a command's output goes, in the format asked for.
pub struct Sink {
    out: Box<dyn Write + Send>,
    /// Notes when the output is data (stderr): they never enter it.
    notes: Box<dyn Write + Send>,
    pub format: Format,
    /// Terminal width for human tables; 0: no cutting.
    pub width: usize,
    stream: Option<Stream>,
}

/// Rows being streamed.
struct Stream {
    columns: Vec<Column>,
    rows: u64,
}

impl Sink {
    pub fn new(out: Box<dyn Write + Send>, notes: Box<dyn Write + Send>, width: usize) -> Sink {
        Sink {
            out,
            notes,
            format: Format::Table,
            width,
            stream: None,
        }
    }

    /// A line for people (a crawl's notes, progress summaries): on the
    /// output in a human table, with the notes otherwise.
    pub fn say(&mut self, text: &str) {
        let line = text.trim_end_matches('\n');
        let w: &mut dyn Write = match self.format {
            Format::Table => &mut self.out,
            _ => &mut self.notes,
        };
        let _ = writeln!(w, "{line}");
        let _ = w.flush();
    }

    /// Starts streaming rows under `columns`.
    pub fn begin(&mut self, columns: Vec<Column>) {
        let head = match self.format {
            Format::Table => {
                let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
                Some(stream_line(&columns, &names))
            }
            Format::Json | Format::Jsonl => None,
            Format::Csv => Some(delimited(names(&columns), ',')),
            Format::Tsv => Some(delimited(names(&columns), '\t')),
        };
        if let Some(h) = head {
            let _ = writeln!(self.out, "{h}");
        }
        if self.format == Format::Json {
            let _ = write!(self.out, "[");
        }
        self.stream = Some(Stream { columns, rows: 0 });
    }

    /// One streamed row, cells in the columns' order.
    pub fn row(&mut self, cells: &[Value]) {
        let Some(s) = self.stream.as_mut() else {
            return;
        };
        let line = match self.format {
            Format::Table => {
                let text: Vec<String> = s
                    .columns
                    .iter()
                    .zip(cells)
                    .map(|(c, v)| human(c.kind, v))
                    .collect();
                stream_line(&s.columns, &text)
            }
            Format::Json => {
                let obj = Value::Object(object(&s.columns, cells));
                let pretty = serde_json::to_string_pretty(&obj).unwrap_or_default();
                let indented = pretty.replace('\n', "\n  ");
                // The comma closes the previous row: a row is written whole.
                let sep = if s.rows == 0 { "" } else { "," };
                format!("{sep}\n  {indented}")
            }
            Format::Jsonl => Value::Object(object(&s.columns, cells)).to_string(),
            Format::Csv => delimited(cells.iter().map(csv_cell).collect(), ','),
            Format::Tsv => delimited(cells.iter().map(tsv_cell).collect(), '\t'),
        };
        s.rows += 1;
        match self.format {
            // The separator goes before the next row, so no newline yet.
            Format::Json => {
                let _ = write!(self.out, "{line}");
            }
            _ => {
                let _ = writeln!(self.out, "{line}");
            }
        }
    }

    /// Ends the stream; how many rows it had.
    pub fn end(&mut self) -> u64 {
        let Some(s) = self.stream.take() else {
            return 0;
        };
        if self.format == Format::Json {
            let _ = writeln!(self.out, "{}]", if s.rows == 0 { "" } else { "\n" });
        }
        let _ = self.out.flush();
        s.rows
    }

    /// Whether rows are being streamed (a command that failed mid-stream
    /// leaves the stream to be closed).
    pub fn streaming(&self) -> bool {
        self.stream.is_some()
    }

    /// Writes a whole reply, then its notes.
    pub fn reply(&mut self, reply: Reply) {
        match (self.format, reply.body) {
            (f, Body::Streamed(columns)) => {
                // No row came: machine formats still give `[]` or a header.
                if !self.streaming() && f != Format::Table {
                    self.begin(columns);
                }
                self.end();
            }
            (Format::Table, Body::Table(t)) => {
                let shown = |r: &[Value]| -> Vec<String> {
                    t.columns
                        .iter()
                        .zip(r)
                        .filter(|(c, _)| c.shown)
                        .map(|(c, v)| human(c.kind, v))
                        .collect()
                };
                let headers: Vec<&str> = t
                    .columns
                    .iter()
                    .filter(|c| c.shown)
                    .map(|c| c.name.as_str())
                    .collect();
                let rows: Vec<Vec<String>> = t.rows.iter().map(|r| shown(r)).collect();
                if !rows.is_empty() {
                    self.write(&table::render(&headers, &rows, self.width));
                }
            }
            (_, Body::Table(t)) => {
                self.begin(t.columns);
                for r in &t.rows {
                    self.row(r);
                }
                self.end();
            }
            (Format::Table, Body::Empty) => {}
            (Format::Table, Body::Message(m)) => self.write(&m),
            (Format::Table, Body::Count(n)) => self.write(&n.to_string()),
            (Format::Table, Body::Record { view: Some(v), .. }) => self.write(&v),
            (Format::Table, Body::Record { value, view: None }) => self.write(&fields_view(&value)),
            (f, body) => {
                let value = match body {
                    Body::Message(m) => serde_json::json!({ "message": m }),
                    Body::Count(n) => serde_json::json!({ "count": n }),
                    Body::Record { value, .. } => value,
                    _ => serde_json::json!({ "ok": true }),
                };
                self.write(&one_value(f, &value));
            }
        }
        for n in reply.notes {
            self.say(&n);
        }
        let _ = self.out.flush();
    }

    fn write(&mut self, text: &str) {
        if !text.is_empty() {
            let _ = writeln!(self.out, "{}", text.trim_end_matches('\n'));
        }
    }
}

/// One object (a record, a message, a count) in a machine format: in CSV
/// and TSV its keys are the header and its values the one row.
fn one_value(f: Format, v: &Value) -> String {
    let obj = match v {
        Value::Object(m) => m.clone(),
        other => Map::from_iter([("value".to_string(), other.clone())]),
    };
    let columns: Vec<Column> = obj.keys().map(|k| Column::new(k, Kind::Text)).collect();
    let cells: Vec<Value> = obj.values().cloned().collect();
    match f {
        Format::Json | Format::Table => serde_json::to_string_pretty(v).unwrap_or_default(),
        Format::Jsonl => Value::Object(obj).to_string(),
        Format::Csv => format!(
            "{}\n{}",
            delimited(names(&columns), ','),
            delimited(cells.iter().map(csv_cell).collect(), ',')
        ),
        Format::Tsv => format!(
            "{}\n{}",
            delimited(names(&columns), '\t'),
            delimited(cells.iter().map(tsv_cell).collect(), '\t')
        ),
    }
}

/// A record as `key  value` lines, keys aligned.
fn fields_view(v: &Value) -> String {
    let Value::Object(m) = v else {
        return human(Kind::Text, v);
    };
    let w = m.keys().map(|k| k.len()).max().unwrap_or(0);
    m.iter()
        .map(|(k, v)| format!("{k:<w$}  {}\n", human(Kind::Text, v)))
        .collect()
}

fn names(columns: &[Column]) -> Vec<String> {
    columns.iter().map(|c| c.name.clone()).collect()
}

/// A row as an object keyed by column name.
pub fn object(columns: &[Column], cells: &[Value]) -> Map<String, Value> {
    columns
        .iter()
        .zip(cells)
        .map(|(c, v)| (c.name.clone(), v.clone()))
        .collect()
}

/// Cells joined by `sep`, with CSV's line end (CRLF, RFC 4180) or TSV's.
fn delimited(cells: Vec<String>, sep: char) -> String {
    let mut line = cells.join(&sep.to_string());
    if sep == ',' {
        line.push('\r');
    }
    line
}

/// A value as a human table cell of kind `k`.
pub fn human(k: Kind, v: &Value) -> String {
    match (k, v) {
        (_, Value::Null) => "-".into(),
        (Kind::Bytes, Value::Number(n)) => table::bytes(n.as_u64().unwrap_or(0)),
        (Kind::Time, Value::Number(n)) => table::time(n.as_u64().unwrap_or(0)),
        (Kind::Ratio, Value::Number(n)) => format!("{:.3}", n.as_f64().unwrap_or(f64::NAN)),
        (Kind::Num, Value::Number(n)) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            match f.abs() {
                a if a == 0.0 || (1e-3..1e6).contains(&a) => format!("{f:.4}"),
                _ => crate::shell::fields::Val::Num(f).to_string(),
            }
        }
        (_, Value::String(s)) => s.clone(),
        (_, other) => other.to_string(),
    }
}

/// A streamed human row: fixed widths by kind, so rows print as they are
/// found without knowing the widest; the last column is not cut.
fn stream_line(columns: &[Column], cells: &[String]) -> String {
    let shown: Vec<(&Column, &String)> =
        columns.iter().zip(cells).filter(|(c, _)| c.shown).collect();
    let last = shown.len().saturating_sub(1);
    let mut line = String::new();
    for (i, (c, text)) in shown.into_iter().enumerate() {
        if i == last {
            line.push_str(text);
            break;
        }
        let w = c.name.len().max(match c.kind {
            Kind::Int | Kind::Bool => 5,
            Kind::Num | Kind::Ratio => 8,
            Kind::Bytes => 9,
            Kind::Time => 19,
            Kind::Text => 30,
        });
        line.push_str(&table::pad(&table::cut(text, w), w));
        line.push_str("  ");
    }
    line.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    use crate::shell::commands::test_shell::Out as Buf;

    fn render(f: Format, r: Reply) -> (String, String) {
        let (out, notes) = (Arc::new(Mutex::new(vec![])), Arc::new(Mutex::new(vec![])));
        let mut s = Sink::new(Box::new(Buf(out.clone())), Box::new(Buf(notes.clone())), 0);
        s.format = f;
        s.reply(r);
        let text = |b: &Arc<Mutex<Vec<u8>>>| String::from_utf8(b.lock().unwrap().clone()).unwrap();
        (text(&out), text(&notes))
    }

    fn sample() -> Reply {
        Reply::table(
            crate::shell::reply::columns(&[
                ("n", Kind::Int),
                ("size", Kind::Bytes),
                ("t", Kind::Text),
            ]),
            vec![
                vec![json!(1), json!(2048), json!("a, \"b\"\nc")],
                vec![json!(2), Value::Null, json!("x\ty\\")],
            ],
        )
        .note("(2 rows)")
    }

    #[test]
    fn each_format_renders_the_same_rows() {
        let (t, notes) = render(Format::Table, sample());
        assert!(
            t.starts_with("n  size     t\n1  2.0 KiB  a, \"b\" c\n"),
            "{t}"
        );
        assert!(t.ends_with("(2 rows)\n") && notes.is_empty(), "{t}");
        let (j, notes) = render(Format::Json, sample());
        let v: Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v[0]["t"], "a, \"b\"\nc");
        assert_eq!(v[1]["size"], Value::Null);
        assert_eq!(notes, "(2 rows)\n", "notes stay out of the data");
        let (l, _) = render(Format::Jsonl, sample());
        let rows: Vec<Value> = l
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(Value::Array(rows), v);
        let (c, _) = render(Format::Csv, sample());
        assert_eq!(c, "n,size,t\r\n1,2048,\"a, \"\"b\"\"\nc\"\r\n2,,x\ty\\\r\n");
        let (t, _) = render(Format::Tsv, sample());
        assert_eq!(t, "n\tsize\tt\n1\t2048\ta, \"b\"\\nc\n2\t\tx\\ty\\\\\n");
        let (e, _) = render(
            Format::Json,
            Reply::table(vec![Column::new("a", Kind::Int)], vec![]),
        );
        assert_eq!(e, "[]\n");
    }

    #[test]
    fn records_messages_and_counts_are_one_object() {
        let (j, _) = render(Format::Jsonl, Reply::count(3));
        assert_eq!(j, "{\"count\":3}\n");
        let (c, _) = render(Format::Csv, Reply::text("done"));
        assert_eq!(c, "message\r\ndone\r\n");
        let r = || Reply::record("state idle", json!({"state": "idle", "by": {"200": 1}}));
        assert_eq!(render(Format::Table, r()).0, "state idle\n");
        assert_eq!(
            render(Format::Csv, r()).0,
            "by,state\r\n\"{\"\"200\"\":1}\",idle\r\n"
        );
        assert_eq!(
            render(Format::Table, Reply::fields(json!({"a": 1, "bb": "x"}))).0,
            "a   1\nbb  x\n"
        );
        assert!(
            Format::parse("xml")
                .unwrap_err()
                .contains("use table, json")
        );
    }
}
