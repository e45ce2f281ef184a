//! A value as one CSV or TSV field: the shell's output and the exports
//! write cells the same way.

use serde_json::Value;

/// A value as CSV text: null empty, nested values as compact JSON;
/// quoted when it holds a comma, a quote, a line break or edge spaces.
pub fn csv_cell(v: &Value) -> String {
    let s = plain(v);
    let needs = s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ');
    if needs {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// A value as TSV text: backslash, tab and line breaks escaped.
pub fn tsv_cell(v: &Value) -> String {
    let s = plain(v);
    if !s.contains(['\\', '\t', '\n', '\r']) {
        return s;
    }
    s.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

/// A value as one field's text: strings as they are, null empty, arrays
/// and objects as compact JSON.
pub fn plain(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
