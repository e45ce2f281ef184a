//! One fetch as WARC records: its `response` and `request` (made in the
//! fetch task, compressed there, off the ledger's thread), and the
//! `revisit` the ledger writes in the response's place when the payload
//! repeats one already archived or the server said not modified.

use std::net::IpAddr;

use super::cdxj::Entry;
use super::record::{Record, RecordType, new_record_id, sha1_base32};
use crate::fetch::Wire;
use crate::model::Utc;

pub const RESPONSE_TYPE: &str = "application/http;msgtype=response";
pub const REQUEST_TYPE: &str = "application/http;msgtype=request";

/// WARC 1.1's revisit profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// The payload is byte for byte one archived before.
    IdenticalPayload,
    /// A conditional request answered 304.
    ServerNotModified,
}

impl Profile {
    pub fn uri(self) -> &'static str {
        match self {
            Profile::IdenticalPayload => {
                "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
            }
            Profile::ServerNotModified => {
                "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
            }
        }
    }
}

/// A fetch's records, ready to append.
pub struct Exchange {
    pub target: String,
    /// The response record's id (a revisit in its place takes it, so the
    /// request's `WARC-Concurrent-To` holds).
    pub id: String,
    pub date_ms: u64,
    /// `sha1:…` of the payload as received (content coding kept).
    pub payload_digest: String,
    /// The status line and header fields, for a revisit record.
    pub response_head: Vec<u8>,
    pub ip: Option<IpAddr>,
    /// The response record, one gzip member.
    pub response_gz: Vec<u8>,
    /// The request record, one gzip member.
    pub request_gz: Vec<u8>,
}

impl Exchange {
    /// The records of a fetch of `url`: `wire` as the client kept it,
    /// `body` decoded (the payload when nothing was to decode), cut at the
    /// cap when `truncated`.
    pub fn of(url: &str, wire: Wire, body: &[u8], truncated: bool, level: u32) -> Exchange {
        let payload = wire.raw_body.as_deref().unwrap_or(body);
        let payload_digest = sha1_base32(payload);
        let id = new_record_id();
        let exchange = |kind, content_type| {
            let mut r = Record::new(kind, wire.date_ms, content_type, Vec::new())
                .field("WARC-Target-URI", url);
            if let Some(ip) = wire.peer {
                r = r.field("WARC-IP-Address", &ip.to_string());
            }
            r
        };
        let mut response = exchange(RecordType::Response, RESPONSE_TYPE)
            .with_id(id.clone())
            .field("WARC-Payload-Digest", &payload_digest);
        if truncated {
            response = response.field("WARC-Truncated", "length");
        }
        let request = exchange(RecordType::Request, REQUEST_TYPE).field("WARC-Concurrent-To", &id);
        // The block is the head and the payload, not joined.
        let response_gz = response.gz_of(&[&wire.response_head, payload], level);
        let request_gz = request.gz_of(&[&wire.request], level);
        Exchange {
            target: url.to_string(),
            id,
            date_ms: wire.date_ms,
            payload_digest,
            response_head: wire.response_head,
            ip: wire.peer,
            response_gz,
            request_gz,
        }
    }

    /// Its response's (or a revisit's) index entry, placed when written.
    pub fn entry(&self, mime: String, status: Option<u16>, digest: &str) -> Entry {
        Entry {
            url: self.target.clone(),
            date_ms: self.date_ms,
            mime,
            status,
            digest: digest.to_string(),
            length: 0,
            offset: 0,
        }
    }

    /// Bytes it holds.
    pub fn heap_bytes(&self) -> usize {
        self.response_gz.len() + self.request_gz.len() + self.response_head.len()
    }

    /// A revisit record in the response's place: the response head alone,
    /// referring to the record archived at `refers` (its URI and date).
    pub fn revisit(&self, profile: Profile, refers: (&str, u64), digest: &str) -> Record {
        let mut r = Record::new(
            RecordType::Revisit,
            self.date_ms,
            RESPONSE_TYPE,
            self.response_head.clone(),
        )
        .with_id(self.id.clone())
        .field("WARC-Target-URI", &self.target)
        .field("WARC-Profile", profile.uri())
        .field("WARC-Refers-To-Target-URI", refers.0)
        .field("WARC-Refers-To-Date", &Utc::of_ms(refers.1).iso_millis());
        if let Some(ip) = self.ip {
            r = r.field("WARC-IP-Address", &ip.to_string());
        }
        if !digest.is_empty() {
            r = r.field("WARC-Payload-Digest", digest);
        }
        r
    }

    /// A `metadata` record about the response: `fields` as
    /// `application/warc-fields` lines.
    pub fn metadata(&self, fields: String) -> Record {
        Record::new(
            RecordType::Metadata,
            self.date_ms,
            "application/warc-fields",
            fields.into_bytes(),
        )
        .field("WARC-Target-URI", &self.target)
        .field("WARC-Concurrent-To", &self.id)
    }
}
