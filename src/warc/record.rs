//! One WARC 1.1 record: its named fields, its block, the digests readers
//! check, and its bytes as one gzip member.

use std::io::{self, Write};

use ring::rand::{SecureRandom, SystemRandom};

use crate::model::Utc;

/// The record types trawl writes (WARC 1.1 section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordType {
    Warcinfo,
    Request,
    Response,
    Revisit,
    Metadata,
}

impl RecordType {
    pub fn name(self) -> &'static str {
        match self {
            RecordType::Warcinfo => "warcinfo",
            RecordType::Request => "request",
            RecordType::Response => "response",
            RecordType::Revisit => "revisit",
            RecordType::Metadata => "metadata",
        }
    }
}

/// A record being built: `WARC-Type`, `WARC-Record-ID` and `WARC-Date`
/// first, then the fields added, then the block's type, digest and length.
pub struct Record {
    kind: RecordType,
    id: String,
    date: String,
    fields: Vec<(&'static str, String)>,
    content_type: String,
    block: Vec<u8>,
}

impl Record {
    /// A record of `kind` made at `date_ms` whose block is `block`, of MIME
    /// type `content_type` (e.g. `application/http;msgtype=response`).
    pub fn new(kind: RecordType, date_ms: u64, content_type: &str, block: Vec<u8>) -> Record {
        Record {
            kind,
            id: new_record_id(),
            date: Utc::of_ms(date_ms).iso_millis(),
            fields: Vec::new(),
            content_type: field_value(content_type),
            block,
        }
    }

    /// The record with `id` (made by another record's [`Record::id`] or
    /// [`new_record_id`]) instead of a new one.
    pub fn with_id(mut self, id: String) -> Record {
        self.id = id;
        self
    }

    /// Adds a named field; a CR or LF in `value` (which would end the
    /// field) becomes a space.
    pub fn field(mut self, name: &'static str, value: &str) -> Record {
        self.fields.push((name, field_value(value)));
        self
    }

    /// `WARC-Payload-Digest` of `payload`: for an HTTP record, the entity
    /// body with its transfer coding removed and its content coding kept.
    pub fn payload(self, payload: &[u8]) -> Record {
        let d = sha1_base32(payload);
        self.field("WARC-Payload-Digest", &d)
    }

    /// `<urn:uuid:…>`, for `WARC-Concurrent-To`, `WARC-Refers-To` and
    /// `WARC-Warcinfo-ID` of other records.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The record's bytes: header fields, a blank line, the block and the
    /// two CRLFs that end it.
    pub fn bytes(&self) -> Vec<u8> {
        let head = self.head(&[&self.block]);
        [head.as_bytes(), &self.block, b"\r\n\r\n"].concat()
    }

    /// The header fields for a block made of `parts`.
    fn head(&self, parts: &[&[u8]]) -> String {
        use std::fmt::Write as _;
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let mut head = String::with_capacity(512);
        // Writing into a String cannot fail.
        let _ = write!(
            head,
            "WARC/1.1\r\nWARC-Type: {}\r\nWARC-Record-ID: {}\r\nWARC-Date: {}\r\n",
            self.kind.name(),
            self.id,
            self.date
        );
        for (name, value) in &self.fields {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        if len > 0 {
            let _ = write!(head, "Content-Type: {}\r\n", self.content_type);
        }
        let _ = write!(
            head,
            "WARC-Block-Digest: {}\r\nContent-Length: {len}\r\n\r\n",
            sha1_base32_of(parts),
        );
        head
    }

    /// Writes the record as one gzip member; returns the bytes written.
    pub fn write_gz(&self, out: &mut impl Write) -> io::Result<u64> {
        let member = self.gz();
        out.write_all(&member)?;
        Ok(member.len() as u64)
    }

    /// The record as one gzip member (at the default level).
    pub fn gz(&self) -> Vec<u8> {
        self.gz_at(GZIP_LEVEL)
    }

    /// The record as one gzip member at deflate `level` (0: stored).
    pub fn gz_at(&self, level: u32) -> Vec<u8> {
        self.gz_of(&[&self.block], level)
    }

    /// The record with its block made of `parts` (instead of the block it
    /// was made with), as one gzip member at `level`: no block is made of
    /// them (`gzip::member` stores them as they are, or deflates them from
    /// a buffer kept per thread).
    pub fn gz_of(&self, parts: &[&[u8]], level: u32) -> Vec<u8> {
        let head = self.head(parts);
        let mut all = Vec::with_capacity(parts.len() + 2);
        all.push(head.as_bytes());
        all.extend_from_slice(parts);
        all.push(b"\r\n\r\n");
        super::gzip::member(&all, level)
    }
}

/// The deflate level of records written without one given.
pub const GZIP_LEVEL: u32 = 6;

/// `bytes` as one gzip member at the default level.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    super::gzip::member(&[bytes], GZIP_LEVEL)
}

/// An HTTP message as a WARC block: its start line, its header fields as
/// sent or received, a blank line, then `body`.
pub fn http_block(start_line: &str, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut head = format!("{}\r\n", field_value(start_line));
    for (name, value) in headers {
        head += &format!("{}: {}\r\n", field_value(name), field_value(value));
    }
    head += "\r\n";
    let mut block = head.into_bytes();
    block.extend_from_slice(body);
    block
}

/// `sha1:` and the SHA-1 of `bytes` in base32, as WARC digests are
/// written.
pub fn sha1_base32(bytes: &[u8]) -> String {
    sha1_base32_of(&[bytes])
}

/// The digest of `parts` concatenated (RustCrypto's SHA-1, which uses the
/// CPU's SHA instructions where it has them: ring's is portable code,
/// 7 % of a crawl's CPU when it wrote WARC).
pub fn sha1_base32_of(parts: &[&[u8]]) -> String {
    use sha1::Digest;
    let mut h = sha1::Sha1::new();
    for p in parts {
        h.update(p);
    }
    format!("sha1:{}", data_encoding::BASE32.encode(&h.finalize()))
}

/// A field value on one line.
fn field_value(v: &str) -> String {
    v.replace(['\r', '\n'], " ")
}

/// `<urn:uuid:…>`, a version 4 UUID (pseudo-random, unique per run).
pub fn new_record_id() -> String {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    // A key drawn from the system once a process, and a counter: ids that
    // differ in every bit, with no system call per record (three a page).
    static KEY: OnceLock<u64> = OnceLock::new();
    static N: AtomicU64 = AtomicU64::new(0);
    let key = *KEY.get_or_init(|| {
        let mut k = [0u8; 8];
        // If the system's source fails, the clock still differs per run.
        match SystemRandom::new().fill(&mut k) {
            Ok(()) => u64::from_le_bytes(k),
            Err(_) => crate::model::now_ms() ^ u64::from(std::process::id()) << 40,
        }
    });
    let n = N.fetch_add(1, Ordering::Relaxed);
    let mut b = xxhash_rust::xxh3::xxh3_128_with_seed(&n.to_le_bytes(), key).to_le_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = data_encoding::HEXLOWER.encode(&b);
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn digests_are_sha1_in_base32() {
        // SHA-1 of "abc" is a9993e36…9cd0d89d; in base32 as WARC writes it.
        assert_eq!(sha1_base32(b"abc"), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
        assert_eq!(sha1_base32(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }

    #[test]
    fn a_record_is_one_gzip_member_with_its_fields_and_block() {
        let body = b"<html>hi</html>";
        let headers = [("Content-Type".to_string(), "text/html".to_string())];
        let block = http_block("HTTP/1.1 200 OK", &headers, body);
        let r = Record::new(
            RecordType::Response,
            1_795_852_385_123,
            "application/http;msgtype=response",
            block.clone(),
        )
        .field("WARC-Target-URI", "http://a.test/\r\nX-Evil: 1")
        .payload(body);
        let mut file = Vec::new();
        let n = r.write_gz(&mut file).unwrap();
        assert_eq!(n as usize, file.len());
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(&file[..])
            .read_to_end(&mut text)
            .unwrap();
        let text = String::from_utf8(text).unwrap();
        let (head, rest) = text.split_once("\r\n\r\n").unwrap();
        let lines: Vec<&str> = head.lines().collect();
        assert_eq!(lines[0], "WARC/1.1");
        assert_eq!(lines[1], "WARC-Type: response");
        assert!(lines[2].starts_with("WARC-Record-ID: <urn:uuid:") && lines[2].len() == 63);
        assert_eq!(lines[3], "WARC-Date: 2026-11-28T07:53:05.123Z");
        assert_eq!(lines[4], "WARC-Target-URI: http://a.test/  X-Evil: 1");
        assert_eq!(
            lines[5],
            format!("WARC-Payload-Digest: {}", sha1_base32(body))
        );
        assert!(lines.contains(&format!("WARC-Block-Digest: {}", sha1_base32(&block)).as_str()));
        assert!(lines.contains(&format!("Content-Length: {}", block.len()).as_str()));
        assert_eq!(rest.as_bytes(), [&block[..], b"\r\n\r\n"].concat());
        let other = Record::new(RecordType::Request, 0, "x", Vec::new());
        assert_ne!(other.id(), r.id());
    }
}
