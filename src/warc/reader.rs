//! Reading WARC files back, record by record, whatever they hold: each
//! gzip member decoded within a cap, a torn last member told apart from a
//! corrupt one (after which the reader finds the next member), and a
//! record's fields and block parsed without trusting its lengths.

use std::io::{self, BufRead, Read};

/// One gzip member of a file, where it was and what it gave.
pub struct Member {
    pub offset: u64,
    /// Bytes of the member in the file (up to where the reader stopped).
    pub length: u64,
    pub outcome: Result<Vec<u8>, MemberError>,
    /// It decoded to more than the cap and only its first bytes were kept
    /// (a reader made with [`Members::truncating`]).
    pub cut: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberError {
    /// The file ends inside the member: a write cut short.
    Torn,
    /// It decodes to more than the cap (the bytes past it were skipped).
    TooLarge,
    /// Not gzip, or gzip that does not decode: skipped to the next member.
    Corrupt(String),
    /// The file could not be read there (the reader stops).
    Io(String),
}

impl std::fmt::Display for MemberError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemberError::Torn => write!(f, "the file ends inside this record"),
            MemberError::TooLarge => write!(f, "the record decodes to more than the cap"),
            MemberError::Corrupt(e) => write!(f, "not a readable gzip member ({e})"),
            MemberError::Io(e) => write!(f, "the file cannot be read here ({e})"),
        }
    }
}

/// A `BufRead` that counts what it hands out.
struct Counted<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.pos += n as u64;
        self.inner.consume(n);
    }
}

/// The gzip members of a `.warc.gz` file in order.
pub struct Members<R> {
    input: Counted<R>,
    cap: usize,
    /// A member past the cap keeps its first `cap` bytes (else it is
    /// `TooLarge`).
    truncate: bool,
    done: bool,
}

impl<R: BufRead> Members<R> {
    /// Members of `input`, each decoded up to `cap` bytes.
    pub fn new(input: R, cap: usize) -> Members<R> {
        Members {
            input: Counted {
                inner: input,
                pos: 0,
            },
            cap,
            truncate: false,
            done: false,
        }
    }

    /// Members of `input`, each decoded up to `cap` bytes; one larger
    /// keeps those and is marked `cut`.
    pub fn truncating(input: R, cap: usize) -> Members<R> {
        Members {
            truncate: true,
            ..Members::new(input, cap)
        }
    }

    /// Goes to `offset`, where a member starts.
    pub fn seek_to(&mut self, offset: u64) -> io::Result<()>
    where
        R: io::Seek,
    {
        self.input.inner.seek(io::SeekFrom::Start(offset))?;
        self.input.pos = offset;
        self.done = false;
        Ok(())
    }

    /// Looks for the next member from `offset` on (past a member that
    /// broke, whose decoder may have read into the members after it).
    pub fn rescan_from(&mut self, offset: u64) -> io::Result<()>
    where
        R: io::Seek,
    {
        self.seek_to(offset)?;
        self.resync()
    }

    /// Bytes of the file read so far.
    pub fn position(&self) -> u64 {
        self.input.pos
    }

    /// Skips to the next gzip magic after a corrupt member (or the end).
    fn resync(&mut self) -> io::Result<()> {
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(());
            }
            match memchr::memmem::find(buf, &[0x1f, 0x8b, 0x08]) {
                // (A member that broke where it started was stepped past.)
                Some(i) => {
                    self.input.consume(i);
                    return Ok(());
                }
                // Keep the last two bytes: the magic may straddle buffers.
                None if buf.len() > 2 => {
                    let n = buf.len() - 2;
                    self.input.consume(n);
                }
                None => {
                    let n = buf.len();
                    self.input.consume(n);
                }
            }
        }
    }
}

impl<R: BufRead> Iterator for Members<R> {
    type Item = Member;

    fn next(&mut self) -> Option<Member> {
        if self.done {
            return None;
        }
        match self.input.fill_buf() {
            Ok([]) => return None,
            Ok(_) => {}
            Err(e) => {
                self.done = true;
                let offset = self.input.pos;
                return Some(Member {
                    offset,
                    length: 0,
                    outcome: Err(MemberError::Io(e.to_string())),
                    cut: false,
                });
            }
        }
        let offset = self.input.pos;
        let mut out = Vec::new();
        let mut gz = flate2::bufread::GzDecoder::new(&mut self.input);
        let read = (&mut gz).take(self.cap as u64 + 1).read_to_end(&mut out);
        let cut = matches!(read, Ok(n) if n > self.cap);
        let outcome = match read {
            Ok(n) if n > self.cap => match io::copy(&mut gz, &mut io::sink()) {
                Ok(_) if self.truncate => {
                    out.truncate(self.cap);
                    Ok(out)
                }
                Ok(_) => Err(MemberError::TooLarge),
                Err(e) => Err(classify(&e)),
            },
            Ok(_) => Ok(out),
            Err(e) => Err(classify(&e)),
        };
        drop(gz);
        match &outcome {
            Err(MemberError::Torn | MemberError::Io(_)) => self.done = true,
            Err(MemberError::Corrupt(_)) => {
                if self.input.pos == offset {
                    self.input.consume(1);
                }
                // A read error while looking for the next member ends it.
                if self.resync().is_err() {
                    self.done = true;
                }
            }
            _ => {}
        }
        Some(Member {
            offset,
            length: self.input.pos - offset,
            cut: cut && outcome.is_ok(),
            outcome,
        })
    }
}

fn classify(e: &io::Error) -> MemberError {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => MemberError::Torn,
        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput => {
            MemberError::Corrupt(e.to_string())
        }
        _ => MemberError::Io(e.to_string()),
    }
}

/// A record's named fields and its block.
#[derive(Debug)]
pub struct RecordView<'a> {
    pub fields: Vec<(&'a str, &'a str)>,
    pub block: &'a [u8],
}

impl<'a> RecordView<'a> {
    /// The value of field `name` (case-insensitive), if present.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }
}

/// Parses one record (`WARC/1.0` or `WARC/1.1`) at the start of `bytes`;
/// returns it and the bytes it took (its block and the CRLFs after it).
pub fn parse_record(bytes: &[u8]) -> Result<(RecordView<'_>, usize), String> {
    let head_end = memchr::memmem::find(bytes, b"\r\n\r\n")
        .ok_or("no blank line after the record's fields")?;
    let head = std::str::from_utf8(&bytes[..head_end])
        .map_err(|_| "the record's fields are not UTF-8".to_string())?;
    let mut lines = head.split("\r\n");
    let version = lines.next().unwrap_or("");
    if version != "WARC/1.1" && version != "WARC/1.0" {
        return Err(format!("not a WARC record (starts {:?})", clip(version)));
    }
    let mut fields = Vec::new();
    for line in lines {
        match line.split_once(':') {
            Some((k, v)) => fields.push((k.trim(), v.trim())),
            // A folded continuation line belongs to the field before.
            None if line.starts_with([' ', '\t']) => {}
            None => return Err(format!("a field line without a colon: {:?}", clip(line))),
        }
    }
    let view = RecordView { fields, block: &[] };
    let len: usize = view
        .get("Content-Length")
        .ok_or("no Content-Length")?
        .parse()
        .map_err(|_| "Content-Length is not a number".to_string())?;
    let start = head_end + 4;
    let available = bytes.len() - start;
    if len > available {
        return Err(format!(
            "Content-Length {len} is more than the {available} bytes the record holds"
        ));
    }
    let block = &bytes[start..start + len];
    Ok((RecordView { block, ..view }, start + len))
}

/// An HTTP message's head in a block: its start line, its fields, and
/// where the body starts (bytes past ASCII read as Latin-1, as HTTP's
/// field values were and as pywb's indexer reads them).
pub struct HttpHead {
    pub start_line: String,
    pub fields: Vec<(String, String)>,
    pub body_at: usize,
}

impl HttpHead {
    pub fn get(&self, name: &str) -> Option<&str> {
        field(&self.fields, name)
    }

    /// A response's status code.
    pub fn status(&self) -> Option<u16> {
        let mut words = self.start_line.split_whitespace();
        words.next().filter(|v| v.starts_with("HTTP/"))?;
        words.next()?.parse().ok()
    }
}

/// Parses the HTTP head at the start of `block` (lines may end in LF
/// alone); None when there is no blank line.
pub fn http_head(block: &[u8]) -> Option<HttpHead> {
    let (end, body_at) = match memchr::memmem::find(block, b"\r\n\r\n") {
        Some(i) => (i, i + 4),
        None => {
            let i = memchr::memmem::find(block, b"\n\n")?;
            (i, i + 2)
        }
    };
    let head: String = block[..end].iter().map(|&b| b as char).collect();
    let mut lines = head.lines();
    let start_line = lines.next()?.trim_end_matches('\r').to_string();
    let fields = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Some(HttpHead {
        start_line,
        fields,
        body_at,
    })
}

/// The value of field `name` among `fields` (names compared without
/// case, as WARC and HTTP compare them), if present.
pub fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// At most the first 60 bytes of `s` (for messages quoting input).
pub fn clip(s: &str) -> &str {
    let mut end = s.len().min(60);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warc::gzip::member;

    fn members_of(file: &[u8]) -> Vec<(u64, Result<Vec<u8>, MemberError>)> {
        Members::new(file, 1 << 20)
            .map(|m| (m.offset, m.outcome))
            .collect()
    }

    #[test]
    fn a_corrupt_member_or_garbage_is_skipped_and_the_next_member_read() {
        let (a, b, c) = (
            member(&[b"one"], 1),
            member(&[b"two"], 1),
            member(&[b"three"], 0),
        );
        // A member whose stored data (so its CRC) is altered, then one
        // right after it.
        let mut bad = c.clone();
        let at = bad.len() - 10;
        bad[at] ^= 0xff;
        let file = [&a[..], b"garbage\x1f\x8b", &bad, &b].concat();
        let got = members_of(&file);
        let whole: Vec<Vec<u8>> = got.iter().filter_map(|(_, r)| r.clone().ok()).collect();
        assert_eq!(whole, vec![b"one".to_vec(), b"two".to_vec()], "{got:?}");
        let last = got.last().unwrap();
        assert_eq!(
            last.0 as usize,
            file.len() - b.len(),
            "the last member found where it is"
        );
        assert!(
            got.iter()
                .any(|(_, r)| matches!(r, Err(MemberError::Corrupt(_))))
        );
    }

    #[test]
    fn a_torn_last_member_is_told_apart_and_ends_the_file() {
        let (a, b) = (member(&[b"one"], 1), member(&[&[7u8; 5000][..]], 1));
        let file = [&a[..], &b[..b.len() / 2]].concat();
        let got = members_of(&file);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].1.as_deref().ok(), Some(&b"one"[..]));
        assert_eq!(got[1], (a.len() as u64, Err(MemberError::Torn)));
    }

    #[test]
    fn records_and_heads_parse_without_trusting_lengths() {
        let rec = b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 999999999999\r\n\r\nx";
        assert!(parse_record(rec).unwrap_err().contains("more than"));
        assert!(parse_record(b"HTTP/1.1 200 OK\r\n\r\n").is_err());
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; q=\xe9\r\n\r\nbody";
        let h = http_head(block).unwrap();
        assert_eq!(h.status(), Some(200));
        assert_eq!(h.get("content-type"), Some("text/html; q=\u{e9}"));
        assert_eq!(&block[h.body_at..], b"body");
    }
}
