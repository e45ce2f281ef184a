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
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberError {
    /// The file ends inside the member: a write cut short.
    Torn,
    /// It decodes to more than the cap (the bytes past it were skipped).
    TooLarge,
    /// Not gzip, or gzip that does not decode: skipped to the next member.
    Corrupt(String),
}

impl std::fmt::Display for MemberError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemberError::Torn => write!(f, "the file ends inside this record"),
            MemberError::TooLarge => write!(f, "the record decodes to more than the cap"),
            MemberError::Corrupt(e) => write!(f, "not a readable gzip member ({e})"),
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
            done: false,
        }
    }

    /// Skips to the next gzip magic after a corrupt member (or the end).
    fn resync(&mut self) -> io::Result<()> {
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(());
            }
            match memchr::memmem::find(buf, &[0x1f, 0x8b, 0x08]) {
                Some(0) => {
                    self.input.consume(1); // the corrupt member's own start
                }
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
                    outcome: Err(MemberError::Corrupt(e.to_string())),
                });
            }
        }
        let offset = self.input.pos;
        let mut out = Vec::new();
        let mut gz = flate2::bufread::GzDecoder::new(&mut self.input);
        let read = (&mut gz).take(self.cap as u64 + 1).read_to_end(&mut out);
        let outcome = match read {
            Ok(n) if n > self.cap => match io::copy(&mut gz, &mut io::sink()) {
                Ok(_) => Err(MemberError::TooLarge),
                Err(e) => Err(classify(&e)),
            },
            Ok(_) => Ok(out),
            Err(e) => Err(classify(&e)),
        };
        drop(gz);
        match &outcome {
            Err(MemberError::Torn) => self.done = true,
            Err(MemberError::Corrupt(_)) => {
                if self.input.pos == offset {
                    self.input.consume(1);
                }
                if let Err(e) = self.resync() {
                    self.done = true;
                    let _ = e;
                }
            }
            _ => {}
        }
        Some(Member {
            offset,
            length: self.input.pos - offset,
            outcome,
        })
    }
}

fn classify(e: &io::Error) -> MemberError {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => MemberError::Torn,
        _ => MemberError::Corrupt(e.to_string()),
    }
}

/// A record's named fields and its block.
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
/// where the body starts.
pub struct HttpHead<'a> {
    pub start_line: &'a str,
    pub fields: Vec<(&'a str, &'a str)>,
    pub body_at: usize,
}

impl<'a> HttpHead<'a> {
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }

    /// A response's status code.
    pub fn status(&self) -> Option<u16> {
        let mut words = self.start_line.split_whitespace();
        words.next().filter(|v| v.starts_with("HTTP/"))?;
        words.next()?.parse().ok()
    }
}

/// Parses the HTTP head at the start of `block` (lines may end in LF
/// alone); None when there is no blank line or the head is not text.
pub fn http_head(block: &[u8]) -> Option<HttpHead<'_>> {
    let (end, body_at) = match memchr::memmem::find(block, b"\r\n\r\n") {
        Some(i) => (i, i + 4),
        None => {
            let i = memchr::memmem::find(block, b"\n\n")?;
            (i, i + 2)
        }
    };
    // Header bytes past ASCII are read as Latin-1 would be, lossily.
    let head = std::str::from_utf8(&block[..end]).ok()?;
    let mut lines = head.lines();
    let start_line = lines.next()?.trim_end_matches('\r');
    let fields = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    Some(HttpHead {
        start_line,
        fields,
        body_at,
    })
}

fn clip(s: &str) -> &str {
    let mut end = s.len().min(60);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
