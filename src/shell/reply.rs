//! What a command answers: data, not text. A [`Reply`] is a table of
//! typed columns, one record, a message or a count, plus notes about it
//! (how many rows, what was skipped) that never enter the data. The
//! renderers in `render` turn it into a human table, JSON, JSONL, CSV or
//! TSV; a command never formats for one of them.

use serde_json::Value;

pub struct Reply {
    pub body: Body,
    /// Lines about the answer: after a human table, on stderr otherwise.
    pub notes: Vec<String>,
}

pub enum Body {
    /// Nothing to show (`{"ok": true}` as JSON).
    Empty,
    Message(String),
    Count(u64),
    Table(Table),
    /// One object; `view` is its human layout when a list of its fields
    /// would read worse (`status`, `page`, `why`).
    Record {
        value: Value,
        view: Option<String>,
    },
    /// Rows a command already wrote to the sink as it found them, under
    /// these columns (an empty answer is still an empty table).
    Streamed(Vec<Column>),
}

/// How a column's values read in a human table (machine formats give the
/// value as it is).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Text,
    /// An integer, as it is.
    Int,
    /// A float: 4 decimals, or in scientific notation when tiny or huge.
    Num,
    /// A share (harvest rate, recall) to 3 decimals.
    Ratio,
    /// Bytes in a short unit (`1.5 KiB`).
    Bytes,
    /// Milliseconds since the epoch as UTC date and time.
    Time,
    Bool,
}

#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    /// Whether the human table shows it (long context columns are left
    /// to the machine formats).
    pub shown: bool,
    /// For a `pages where` field's column, how a page row gives it (found
    /// once here, not by name for every row).
    pub read: Option<fn(&crate::shell::fields::Row) -> crate::shell::fields::Val>,
}

impl Column {
    pub fn new(name: impl Into<String>, kind: Kind) -> Column {
        Column {
            name: name.into(),
            kind,
            shown: true,
            read: None,
        }
    }

    /// Left out of the human table.
    pub fn hidden(mut self) -> Column {
        self.shown = false;
        self
    }

    /// The column of a `pages where` field, typed as the field is.
    pub fn field(name: &str) -> Column {
        use crate::shell::fields::{Type, find};
        let field = find(name);
        let kind = match (name, field.map(|f| f.ty)) {
            ("size", _) => Kind::Bytes,
            ("fetched_at", _) => Kind::Time,
            (
                "status" | "depth" | "inlinks" | "outlinks" | "age" | "visits" | "changes"
                | "near_distance",
                _,
            ) => Kind::Int,
            (_, Some(Type::Num)) => Kind::Num,
            (_, Some(Type::Bool)) => Kind::Bool,
            _ => Kind::Text,
        };
        Column {
            read: field.map(|f| f.read),
            ..Column::new(name, kind)
        }
    }
}

impl Column {
    /// A field's value as this column holds it: integers for counts and
    /// times, floats for scores, null for a number not known (NaN).
    pub fn value(&self, v: crate::shell::fields::Val) -> Value {
        use crate::shell::fields::Val;
        match (self.kind, v) {
            (_, Val::Str(s)) => Value::String(s),
            (_, Val::Bool(b)) => Value::Bool(b),
            (_, Val::Num(n)) if n.is_nan() => Value::Null,
            (Kind::Int | Kind::Bytes | Kind::Time, Val::Num(n)) => Value::from(n as i64),
            (_, Val::Num(n)) => Value::from(n),
        }
    }
}

/// Columns from `(name, kind)` pairs.
pub fn columns(c: &[(&str, Kind)]) -> Vec<Column> {
    c.iter().map(|(n, k)| Column::new(*n, *k)).collect()
}

/// Columns the human table leaves out, from `(name, kind)` pairs.
pub fn hidden(c: &[(&str, Kind)]) -> Vec<Column> {
    c.iter()
        .map(|(n, k)| Column::new(*n, *k).hidden())
        .collect()
}

pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Value>>,
}

impl Reply {
    /// Nothing to print.
    pub fn none() -> Reply {
        Reply::of(Body::Empty)
    }

    /// A message.
    pub fn text(t: impl Into<String>) -> Reply {
        Reply::of(Body::Message(t.into().trim_end().to_string()))
    }

    pub fn count(n: u64) -> Reply {
        Reply::of(Body::Count(n))
    }

    pub fn table(columns: Vec<Column>, rows: Vec<Vec<Value>>) -> Reply {
        Reply::of(Body::Table(Table { columns, rows }))
    }

    /// One object with its human layout.
    pub fn record(view: impl Into<String>, value: Value) -> Reply {
        let view = view.into().trim_end().to_string();
        Reply::of(Body::Record {
            value,
            view: Some(view),
        })
    }

    /// One object, shown to people as its fields one a line.
    pub fn fields(value: Value) -> Reply {
        Reply::of(Body::Record { value, view: None })
    }

    /// Rows written to the sink already.
    pub fn streamed(columns: Vec<Column>) -> Reply {
        Reply::of(Body::Streamed(columns))
    }

    pub fn note(mut self, n: impl Into<String>) -> Reply {
        self.notes.push(n.into());
        self
    }

    /// Its text for people when it is a message or a record with a view
    /// (for a command that quotes another's answer).
    pub fn view(&self) -> String {
        match &self.body {
            Body::Message(m) => m.clone(),
            Body::Record { view: Some(v), .. } => v.clone(),
            _ => String::new(),
        }
    }

    fn of(body: Body) -> Reply {
        Reply {
            body,
            notes: Vec::new(),
        }
    }
}
