//! What a WARC record says was fetched: an HTTP response (or a revisit of
//! one) with its URL, time, status, headers and payload, as any crawler
//! wrote it — the transfer coding some leave in the payload (wget,
//! Heritrix) taken off, the content coding kept as received.

use super::reader::{clip, field, http_head};
use super::records::RawRecord;
use crate::model::Utc;

/// A fetch a record holds.
#[derive(Debug)]
pub struct Capture {
    pub url: String,
    /// `WARC-Date`, in ms since the epoch.
    pub date_ms: u64,
    pub record_id: Option<String>,
    pub payload_digest: Option<String>,
    /// Set for a `revisit` record: what it repeats.
    pub revisit: Option<RevisitOf>,
    pub status: u16,
    pub http_version: &'static str,
    /// Every header of the response, as written.
    pub headers: Vec<(String, String)>,
    /// The payload: transfer coding removed, content coding kept (empty
    /// for most revisits).
    pub payload: Vec<u8>,
    /// The record says its payload is cut, or the reader cut it.
    pub truncated: bool,
}

impl Capture {
    pub fn header(&self, name: &str) -> Option<&str> {
        field(&self.headers, name)
    }
}

/// A revisit record's references to the response it repeats.
#[derive(Debug, Clone)]
pub struct RevisitOf {
    pub profile: String,
    pub target_uri: Option<String>,
    /// `WARC-Refers-To`: the record id of the response.
    pub record_id: Option<String>,
}

/// What one record is to an import.
#[derive(Debug)]
pub enum Read {
    Capture(Box<Capture>),
    /// Not a fetch trawl stores (a request, metadata, warcinfo, DNS...):
    /// counted by this reason.
    Skip(String),
    /// A response or revisit record that cannot be read as one.
    Malformed(String),
}

/// The record types of WARC 1.1, named in the skip counts (any other
/// type counts as one kind, so a file cannot grow the counts unbounded).
const RECORD_TYPES: [&str; 8] = [
    "warcinfo",
    "request",
    "metadata",
    "resource",
    "conversion",
    "continuation",
    "response",
    "revisit",
];

/// The URI schemes named in the skip counts.
const SCHEMES: [&str; 6] = ["dns", "ftp", "whois", "urn", "data", "mailto"];

/// What record `rec` holds.
pub fn read(rec: RawRecord) -> Read {
    let Some(kind) = rec.get("WARC-Type").map(str::to_ascii_lowercase) else {
        return Read::Malformed("the record has no WARC-Type".into());
    };
    if kind != "response" && kind != "revisit" {
        return Read::Skip(match RECORD_TYPES.contains(&kind.as_str()) {
            true => format!("{kind} records"),
            false => "records of a type WARC 1.1 does not name".into(),
        });
    }
    let Some(url) = rec.get("WARC-Target-URI") else {
        return Read::Malformed(format!("a {kind} record without WARC-Target-URI"));
    };
    // WARC 1.0 writers put angle brackets around it.
    let url = url
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string();
    let scheme = url.split(':').next().unwrap_or("").to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Read::Skip(match SCHEMES.contains(&scheme.as_str()) {
            true => format!("{scheme}: records (not HTTP)"),
            false => "records of another URI scheme (not HTTP)".into(),
        });
    }
    let http = rec
        .get("Content-Type")
        .is_none_or(|t| t.to_ascii_lowercase().starts_with("application/http"));
    if !http {
        return Read::Skip(format!("{kind} records that are not HTTP messages"));
    }
    let date = rec.get("WARC-Date").unwrap_or("");
    let Some(date_ms) = Utc::parse_iso(date) else {
        return Read::Malformed(format!("WARC-Date {:?} is not a date", clip(date)));
    };
    let revisit = (kind == "revisit").then(|| RevisitOf {
        profile: rec.get("WARC-Profile").unwrap_or("").to_string(),
        target_uri: rec.get("WARC-Refers-To-Target-URI").map(str::to_string),
        record_id: rec.get("WARC-Refers-To").map(str::to_string),
    });
    let capture = |status, http_version, headers, payload| {
        Read::Capture(Box::new(Capture {
            url: url.clone(),
            date_ms,
            record_id: rec.get("WARC-Record-ID").map(str::to_string),
            payload_digest: rec.get("WARC-Payload-Digest").map(str::to_string),
            revisit: revisit.clone(),
            status,
            http_version,
            truncated: rec.cut || rec.get("WARC-Truncated").is_some(),
            headers,
            payload,
        }))
    };
    let Some(head) = http_head(&rec.block) else {
        // A revisit may hold no HTTP head: the response it repeats has it.
        return match revisit.is_some() && rec.block.iter().all(u8::is_ascii_whitespace) {
            true => capture(0, "HTTP/1.1", Vec::new(), Vec::new()),
            false => Read::Malformed(format!("the {kind} record's block has no HTTP head")),
        };
    };
    let Some(status) = head.status() else {
        return Read::Malformed(format!(
            "not an HTTP status line: {:?}",
            clip(&head.start_line)
        ));
    };
    let payload = payload_of(&rec, &head);
    capture(status, version_of(&head.start_line), head.fields, payload)
}

/// The payload after `head`: taken off its chunking when it is chunked as
/// its head says; kept as it is when it is not (a writer that took the
/// coding off and kept the header), as warcio reads it.
fn payload_of(rec: &RawRecord, head: &super::reader::HttpHead) -> Vec<u8> {
    let chunked = head
        .get("transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    let raw = &rec.block[head.body_at..];
    match chunked {
        true => dechunk(raw).unwrap_or_else(|| raw.to_vec()),
        false => raw.to_vec(),
    }
}

fn version_of(status_line: &str) -> &'static str {
    match status_line.split_whitespace().next().unwrap_or("") {
        "HTTP/1.0" => "HTTP/1.0",
        "HTTP/0.9" => "HTTP/0.9",
        "HTTP/2" | "HTTP/2.0" => "HTTP/2",
        "HTTP/3" => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

/// A chunked body decoded (what arrived of a cut one); None when it is
/// not chunked coding.
fn dechunk(raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut at = 0;
    while at < raw.len() {
        let line_end = at + memchr::memchr(b'\n', &raw[at..])?;
        let line = std::str::from_utf8(&raw[at..line_end]).ok()?;
        let size = line.split(';').next()?.trim();
        let size = usize::from_str_radix(size, 16).ok()?;
        at = line_end + 1;
        if size == 0 {
            return Some(out); // the trailer, if any, is not payload
        }
        let end = at.saturating_add(size);
        if end >= raw.len() {
            out.extend_from_slice(&raw[at.min(raw.len())..]);
            return Some(out);
        }
        out.extend_from_slice(&raw[at..end]);
        at = end;
        at += match &raw[at..] {
            [b'\r', b'\n', ..] => 2,
            [b'\n', ..] => 1,
            [b'\r'] | [] => return Some(out),
            _ => return None,
        };
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_payloads_are_decoded_and_others_kept() {
        let raw = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n";
        assert_eq!(dechunk(raw).unwrap(), b"hello world");
        // Cut in a chunk: what arrived.
        assert_eq!(dechunk(b"5\r\nhel").unwrap(), b"hel");
        assert!(dechunk(b"<html>not chunked</html>").is_none());
        assert!(dechunk(b"5\r\nhelloXX3\r\nabc").is_none());
        // A declared size near usize::MAX does not overflow.
        assert_eq!(dechunk(b"ffffffffffffffff\r\nab").unwrap(), b"ab");
    }

    fn record(fields: &[(&str, &str)], block: &[u8]) -> RawRecord {
        RawRecord {
            offset: 0,
            fields: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            block: block.to_vec(),
            cut: false,
        }
    }

    #[test]
    fn records_are_read_as_captures_skips_or_malformed() {
        let head = [
            ("WARC-Type", "response"),
            ("WARC-Target-URI", "<http://a.test/>"),
            ("WARC-Date", "2024-01-02T03:04:05Z"),
            ("Content-Type", "application/http; msgtype=response"),
        ];
        let block = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n";
        let Read::Capture(c) = read(record(&head, block)) else {
            panic!("a capture")
        };
        assert_eq!(
            (c.url.as_str(), c.status, c.http_version),
            ("http://a.test/", 200, "HTTP/1.0")
        );
        assert_eq!(c.payload, b"hi");
        assert_eq!(c.date_ms, 1_704_164_645_000);
        let dns = [("WARC-Type", "response"), ("WARC-Target-URI", "dns:a.test")];
        assert!(matches!(read(record(&dns, b"")), Read::Skip(s) if s.starts_with("dns:")));
        let meta = [("WARC-Type", "metadata")];
        assert!(matches!(read(record(&meta, b"")), Read::Skip(s) if s == "metadata records"));
        let untyped = [("WARC-Target-URI", "http://a.test/")];
        assert!(matches!(read(record(&untyped, b"")), Read::Malformed(_)));
        let undated = &head[..2];
        assert!(
            matches!(read(record(undated, block)), Read::Malformed(m) if m.contains("WARC-Date"))
        );
    }
}
