//! What a fetch sent and received, as on the wire, for the crawl's WARC
//! records: kept only when it writes WARC (`warc.dir`).

use std::net::IpAddr;

use http::header;

/// A request and its response's head as exchanged, and a compressed body
/// as received.
#[derive(Debug)]
pub struct Wire {
    /// The request head as sent (see `pool::request_head`).
    pub request: Vec<u8>,
    /// The status line and every header field as received (names as hyper
    /// reads them, lower case), ending in the blank line.
    pub response_head: Vec<u8>,
    /// A body with a content coding, as received (None: `Fetched::body` is
    /// the body as received).
    pub raw_body: Option<Vec<u8>>,
    /// The address the connection was to.
    pub peer: Option<IpAddr>,
    /// When the request went out (ms since the epoch).
    pub date_ms: u64,
}

impl Wire {
    /// Bytes it holds.
    pub fn heap_bytes(&self) -> usize {
        self.request.len() + self.response_head.len() + self.raw_body.as_ref().map_or(0, Vec::len)
    }
}

/// The response's head as a WARC response record writes it. HTTP/2 is
/// written as HTTP/1.1, as replay tools expect (Browsertrix does the same),
/// and `Transfer-Encoding` is renamed `X-Trawl-Transfer-Encoding`: the
/// body is kept with its transfer coding removed, so the field would
/// misdescribe it.
pub(super) fn response_head(parts: &http::response::Parts) -> Vec<u8> {
    let version = match parts.version {
        http::Version::HTTP_09 | http::Version::HTTP_10 => "HTTP/1.0",
        _ => "HTTP/1.1",
    };
    let reason = match parts.extensions.get::<hyper::ext::ReasonPhrase>() {
        Some(r) => String::from_utf8_lossy(r.as_bytes()).into_owned(),
        None => parts.status.canonical_reason().unwrap_or("").to_string(),
    };
    let mut head = format!("{version} {} {reason}\r\n", parts.status.as_u16()).into_bytes();
    for (name, value) in &parts.headers {
        let name = match *name {
            header::TRANSFER_ENCODING => "x-trawl-transfer-encoding",
            _ => name.as_str(),
        };
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        // A value with CR or LF cannot come through hyper; bytes are kept.
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    head
}
