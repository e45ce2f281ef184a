//! CDXJ index lines as pywb's `cdxj-indexer` writes them: `SURT
//! timestamp {json}`, the JSON's fields in its order (`url`, `mime`,
//! `status`, `digest`, `length`, `offset`, `filename`), every value a
//! string, non-ASCII escaped as Python's `json.dumps` does. A file's index
//! is its lines sorted, written beside it as `NAME.cdxj`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::surt::surt;
use crate::model::Utc;

/// One response or revisit record's index entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub url: String,
    pub date_ms: u64,
    /// The response's media type (`warc/revisit` for a revisit).
    pub mime: String,
    pub status: Option<u16>,
    pub digest: String,
    /// The record's gzip member: its length and offset in the file.
    pub length: u64,
    pub offset: u64,
}

impl Entry {
    /// The entry's line (without its newline) for `filename`.
    pub fn line(&self, filename: &str) -> String {
        let ts = Utc::of_ms(self.date_ms).timestamp14();
        let mut json = String::from("{");
        let mut field = |name: &str, value: &str| {
            if json.len() > 1 {
                json += ", ";
            }
            json += &format!("\"{name}\": {}", json_str(value));
        };
        field("url", &self.url);
        if !self.mime.is_empty() {
            field("mime", &self.mime);
        }
        if let Some(s) = self.status {
            field("status", &s.to_string());
        }
        if !self.digest.is_empty() {
            field("digest", &self.digest);
        }
        field("length", &self.length.to_string());
        field("offset", &self.offset.to_string());
        field("filename", filename);
        json.push('}');
        format!("{} {ts} {json}", surt(&self.url))
    }
}

/// A media type as the index keeps it: up to the first `;` or space.
pub fn mime_of(content_type: &str) -> String {
    let end = content_type
        .find(|c: char| c == ';' || c.is_whitespace())
        .unwrap_or(content_type.len());
    content_type[..end].trim().to_string()
}

/// Where a WARC file's index goes: beside it, `NAME.cdxj`.
pub fn index_path(warc: &Path) -> PathBuf {
    let mut p = warc.as_os_str().to_owned();
    p.push(".cdxj");
    PathBuf::from(p)
}

/// Writes the sorted index of `entries`, for the file named `filename`,
/// to `path` (through a temporary name, so a crash leaves none or all).
pub fn write_index(path: &Path, filename: &str, entries: &[Entry]) -> io::Result<()> {
    let mut lines: Vec<String> = entries.iter().map(|e| e.line(filename)).collect();
    lines.sort_unstable();
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    let mut out = io::BufWriter::new(std::fs::File::create(&tmp)?);
    for l in &lines {
        out.write_all(l.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// A JSON string as Python's `json.dumps` writes it (ASCII only).
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            '\n' => out += "\\n",
            '\r' => out += "\\r",
            '\t' => out += "\\t",
            '\u{8}' => out += "\\b",
            '\u{c}' => out += "\\f",
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out += &format!("\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_surt_timestamp_and_json_in_the_indexers_order() {
        let e = Entry {
            url: "http://www.a.test/P?b=1&a=2".into(),
            date_ms: 1_795_852_385_123,
            mime: mime_of("text/html; charset=utf-8"),
            status: Some(200),
            digest: "sha1:ABC".into(),
            length: 123,
            offset: 0,
        };
        assert_eq!(
            e.line("x.warc.gz"),
            "test,a)/p?a=2&b=1 20261128075305 {\"url\": \"http://www.a.test/P?b=1&a=2\", \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"sha1:ABC\", \"length\": \"123\", \"offset\": \"0\", \"filename\": \"x.warc.gz\"}"
        );
        assert_eq!(
            json_str("é\u{1F600}\u{7f}"),
            "\"\\u00e9\\ud83d\\ude00\\u007f\""
        );
    }
}
