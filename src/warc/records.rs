//! Any WARC file read record by record, as other tools write them: gzip
//! with a member per record (or a few records to a member), or plain.
//! Each record's block is read up to a cap (the rest skipped, the record
//! marked cut), so memory stays bounded whatever a record declares; a
//! record that does not parse is reported with its offset, and reading
//! goes on at the next record that can be found.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::reader::{MemberError, Members};

/// The most bytes of a record's named fields.
pub const MAX_HEAD: usize = 1 << 20;

/// One record: its fields and (the first `cap` bytes of) its block.
#[derive(Debug)]
pub struct RawRecord {
    /// Where it starts: its byte offset in a plain file, its gzip
    /// member's in a compressed one.
    pub offset: u64,
    pub fields: Vec<(String, String)>,
    pub block: Vec<u8>,
    /// The block was longer than the cap: `block` holds its first bytes.
    pub cut: bool,
}

impl RawRecord {
    /// The value of field `name` (case-insensitive), if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        super::reader::field(&self.fields, name)
    }
}

/// What reading a file gives, in order.
#[derive(Debug)]
pub enum Item {
    Record(RawRecord),
    /// Bytes that are not a readable record, skipped.
    Malformed {
        offset: u64,
        why: String,
    },
}

/// The records of one WARC file.
pub struct WarcRecords {
    source: Source,
    pending: std::collections::VecDeque<Item>,
}

enum Source {
    Gzip(Members<BufReader<File>>),
    Plain(Plain),
}

impl WarcRecords {
    /// Opens `path`, gzip or plain (told by its first bytes), each block
    /// kept up to `cap` bytes past a head of up to [`MAX_HEAD`].
    pub fn open(path: &Path, cap: usize) -> io::Result<WarcRecords> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let mut magic = [0u8; 2];
        let n = read_up_to(&mut file, &mut magic)?;
        file.seek(SeekFrom::Start(0))?;
        let input = BufReader::with_capacity(1 << 16, file);
        let source = match &magic[..n] {
            [0x1f, 0x8b] => Source::Gzip(Members::truncating(input, cap + MAX_HEAD)),
            _ => Source::Plain(Plain {
                input,
                pos: 0,
                len,
                cap: cap + MAX_HEAD,
                done: false,
            }),
        };
        Ok(WarcRecords {
            source,
            pending: Default::default(),
        })
    }

    /// The records of `path` from `offset` on (where a record starts).
    pub fn open_at(path: &Path, cap: usize, offset: u64) -> io::Result<WarcRecords> {
        let mut records = WarcRecords::open(path, cap)?;
        match &mut records.source {
            Source::Gzip(members) => members.seek_to(offset)?,
            Source::Plain(p) => p.seek(offset)?,
        }
        Ok(records)
    }

    /// How far into the file reading has come (bytes).
    pub fn position(&self) -> u64 {
        match &self.source {
            Source::Gzip(m) => m.position(),
            Source::Plain(p) => p.pos,
        }
    }
}

impl Iterator for WarcRecords {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Some(item);
            }
            match &mut self.source {
                Source::Plain(p) => return p.next_item(),
                Source::Gzip(members) => {
                    let m = members.next()?;
                    let e = match m.outcome {
                        Ok(bytes) => {
                            split_member(&bytes, m.offset, m.cut, &mut self.pending);
                            continue;
                        }
                        Err(e) => e,
                    };
                    self.pending.push_back(Item::Malformed {
                        offset: m.offset,
                        why: member_error(&e),
                    });
                    // A member cut short mid-file: its decoder read on into
                    // the next members; they are looked for right after it.
                    let broke = matches!(e, MemberError::Torn | MemberError::Corrupt(_));
                    if broke && members.rescan_from(m.offset + 1).is_err() {
                        return self.pending.pop_front();
                    }
                }
            }
        }
    }
}

fn member_error(e: &MemberError) -> String {
    match e {
        MemberError::Torn => "a gzip member cut short (the file ends inside it)".into(),
        other => other.to_string(),
    }
}

/// The records of one decoded gzip member (one, as WARC writers make
/// them; a few, as some do). `cut`: the member decoded to more than the
/// reader kept, so its last record's block may be short.
fn split_member(bytes: &[u8], offset: u64, cut: bool, out: &mut std::collections::VecDeque<Item>) {
    let mut at = skip_newlines(bytes, 0);
    while at < bytes.len() {
        let rest = &bytes[at..];
        let head = match parse_head(rest) {
            Ok(h) => h,
            Err(why) => {
                out.push_back(Item::Malformed { offset, why });
                return;
            }
        };
        let available = (rest.len() - head.len) as u64;
        if head.block_len > available && cut && at > 0 {
            // Not one large record: many records gzipped as one stream.
            let why = format!(
                "a gzip member holds more than {} MiB of records (a file gzipped whole?); its records from here on were skipped (`warcio recompress` writes one member per record)",
                bytes.len() >> 20
            );
            out.push_back(Item::Malformed { offset, why });
            return;
        }
        if head.block_len > available && !cut {
            let why = format!(
                "Content-Length {} is more than the {available} bytes its gzip member holds",
                head.block_len
            );
            out.push_back(Item::Malformed { offset, why });
            return;
        }
        let take = head.block_len.min(available) as usize;
        let block = rest[head.len..head.len + take].to_vec();
        let end = skip_newlines(bytes, at + head.len + take);
        let whole = take as u64 == head.block_len;
        if whole && end < bytes.len() && !bytes[end..].starts_with(b"WARC/") {
            let why = format!(
                "Content-Length {} ends the record early ({} more bytes follow it in its gzip member)",
                head.block_len,
                bytes.len() - end
            );
            out.push_back(Item::Malformed { offset, why });
            return;
        }
        out.push_back(Item::Record(RawRecord {
            offset,
            fields: head.fields,
            block,
            cut: !whole,
        }));
        at = end;
    }
}

/// A record's fields and the length its block declares.
struct Head {
    fields: Vec<(String, String)>,
    block_len: u64,
    /// Bytes of the version line and fields, with the blank line.
    len: usize,
}

/// Parses the head of the record at the start of `bytes` (`WARC/1.0`,
/// `WARC/1.1`, and the older `WARC/0.x` alike).
fn parse_head(bytes: &[u8]) -> Result<Head, String> {
    let window = &bytes[..bytes.len().min(MAX_HEAD)];
    if !window.starts_with(b"WARC/") {
        return Err(format!(
            "not a WARC record (starts {:?})",
            String::from_utf8_lossy(&window[..window.len().min(40)])
        ));
    }
    let end = memchr::memmem::find(window, b"\r\n\r\n")
        .ok_or_else(|| format!("no blank line ends the record's fields within {MAX_HEAD} bytes"))?;
    let text = String::from_utf8_lossy(&window[..end]);
    let mut fields = Vec::new();
    for line in text.split("\r\n").skip(1) {
        if let Some((k, v)) = line.split_once(':') {
            fields.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let declared = fields
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.as_str())
        .ok_or("the record has no Content-Length")?;
    let block_len = declared
        .parse()
        .map_err(|_| format!("Content-Length {declared:?} is not a number"))?;
    Ok(Head {
        fields,
        block_len,
        len: end + 4,
    })
}

/// Where the next record may start after a head at the start of `head`
/// (the bytes a scan read from there) that does not parse: past its
/// blank line when it has one (a record starting before that line would
/// end its fields there too, with the same fault); at the last `WARC/`
/// the scan saw when it has none (a record whose fields run past the
/// scan); one byte on when it is no record at all. Each scan moves on by
/// what it read, so a file of broken heads costs one pass.
fn past_bad_head(head: &[u8]) -> u64 {
    if !head.starts_with(b"WARC/") {
        return 1;
    }
    if let Some(blank) = memchr::memmem::find(head, b"\r\n\r\n") {
        return (blank + 4) as u64;
    }
    match memchr::memmem::rfind(&head[1..], b"WARC/") {
        Some(i) => (i + 1) as u64,
        None => (head.len() as u64).saturating_sub(4).max(1),
    }
}

fn skip_newlines(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && matches!(bytes[at], b'\r' | b'\n') {
        at += 1;
    }
    at
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// A plain (uncompressed) file, read as a stream: a record that does not
/// end where it says is skipped by seeking back past its head and looking
/// for the next line that starts a record.
struct Plain {
    input: BufReader<File>,
    pos: u64,
    len: u64,
    cap: usize,
    done: bool,
}

impl Plain {
    fn next_item(&mut self) -> Option<Item> {
        if self.done {
            return None;
        }
        match self.read_record() {
            Ok(Some(item)) => Some(item),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Item::Malformed {
                    offset: self.pos,
                    why: format!("the file cannot be read here ({e})"),
                })
            }
        }
    }

    fn read_record(&mut self) -> io::Result<Option<Item>> {
        self.skip_newlines()?;
        let start = self.pos;
        let head_bytes = self.peek_head()?;
        if head_bytes.is_empty() {
            return Ok(None);
        }
        let head = match parse_head(&head_bytes) {
            Ok(h) => h,
            Err(why) => {
                let from = start + past_bad_head(&head_bytes);
                return self.skip_bad(start, from, why);
            }
        };
        // The record's end and what follows it are checked before its
        // block is read: a wrong length costs a seek, not a read.
        let block_at = start + head.len as u64;
        let end = block_at.saturating_add(head.block_len);
        if end > self.len {
            let why = format!(
                "Content-Length {} runs past the end of the file ({} bytes left)",
                head.block_len,
                self.len.saturating_sub(block_at)
            );
            return self.skip_bad(start, block_at, why);
        }
        self.seek(end)?;
        // The two CRLFs that end a record (what follows them is the next
        // read's), or, from a lax writer, fewer before the next record.
        let after = self.peek(9)?;
        let next = &after[skip_newlines(&after, 0).min(4)..];
        let ended = after.starts_with(b"\r\n\r\n") || next.is_empty() || next.starts_with(b"WARC/");
        if !ended {
            let why = format!(
                "Content-Length {} does not end at the record's end",
                head.block_len
            );
            return self.skip_bad(start, block_at, why);
        }
        self.seek(block_at)?;
        let take = head.block_len.min(self.cap as u64);
        let mut block = Vec::with_capacity(take as usize);
        (&mut self.input).take(take).read_to_end(&mut block)?;
        self.pos += block.len() as u64;
        self.seek(end)?;
        Ok(Some(Item::Record(RawRecord {
            offset: start,
            fields: head.fields,
            cut: (block.len() as u64) < head.block_len,
            block,
        })))
    }

    /// A record that cannot be read: reported, and reading goes on at
    /// the next record from `from` on.
    fn skip_bad(&mut self, start: u64, from: u64, why: String) -> io::Result<Option<Item>> {
        let skipped = self.resync(from)? + (from - start);
        let why = format!("{why}; {skipped} bytes skipped to the next record");
        Ok(Some(Item::Malformed { offset: start, why }))
    }

    /// Goes to `to`, keeping the read buffer when `to` is in it.
    fn seek(&mut self, to: u64) -> io::Result<()> {
        if to != self.pos {
            match (self.pos, i64::try_from(to)) {
                (u64::MAX, _) | (_, Err(_)) => self.input.seek(SeekFrom::Start(to)).map(drop)?,
                (pos, Ok(t)) => self.input.seek_relative(t - pos as i64)?,
            }
            self.pos = to;
        }
        Ok(())
    }

    fn skip_newlines(&mut self) -> io::Result<()> {
        loop {
            let buf = self.input.fill_buf()?;
            let n = buf
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n'))
                .count();
            if n == 0 {
                return Ok(());
            }
            self.input.consume(n);
            self.pos += n as u64;
        }
    }

    /// Up to `n` bytes from here, not consumed.
    fn peek(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut out = vec![0u8; n];
        let got = read_up_to(&mut self.input, &mut out)?;
        out.truncate(got);
        self.input.seek_relative(-(got as i64))?;
        Ok(out)
    }

    /// The bytes from here up to and with the blank line that ends a
    /// record's fields (at most [`MAX_HEAD`]), not consumed.
    fn peek_head(&mut self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let n = buf.len().min(MAX_HEAD - out.len());
            let scan_from = out.len().saturating_sub(3);
            out.extend_from_slice(&buf[..n]);
            self.input.consume(n);
            let found = memchr::memmem::find(&out[scan_from..], b"\r\n\r\n").is_some();
            let not_a_record = out.len() >= 5 && !out.starts_with(b"WARC/");
            if found || not_a_record || out.len() >= MAX_HEAD {
                break;
            }
        }
        self.input.seek_relative(-(out.len() as i64))?;
        Ok(out)
    }

    /// Moves to the next `WARC/` at or after `from` (or the end; a
    /// record cut short leaves the next one mid-line); returns the bytes
    /// passed over.
    fn resync(&mut self, from: u64) -> io::Result<u64> {
        const MARK: &[u8] = b"WARC/";
        self.seek(from)?;
        let mut window: Vec<u8> = Vec::new();
        let mut base = from;
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            let n = self.input.read(&mut chunk)?;
            window.extend_from_slice(&chunk[..n]);
            if let Some(i) = memchr::memmem::find(&window, MARK) {
                self.pos = u64::MAX; // unknown until the seek
                self.seek(base + i as u64)?;
                return Ok(base + i as u64 - from);
            }
            if n == 0 {
                self.pos = base + window.len() as u64;
                return Ok(self.pos - from);
            }
            // Keep a marker's length less one: it may straddle chunks.
            let drop = window.len().saturating_sub(MARK.len() - 1);
            window.drain(..drop);
            base += drop as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(url: &str, block: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn items(bytes: &[u8], cap: usize) -> Vec<Item> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.warc");
        std::fs::write(&path, bytes).unwrap();
        WarcRecords::open(&path, cap).unwrap().collect()
    }

    #[test]
    fn garbage_longer_than_a_read_is_skipped_to_the_next_record() {
        // The next record's marker straddles the reader's 64 KiB chunks.
        let garbage = vec![b'x'; (1 << 16) - 3];
        let first = rec("http://a/", b"one");
        let at = first.len() as u64;
        let file = [first, garbage, rec("http://b/", b"two")].concat();
        let got = items(&file, 1 << 20);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(matches!(&got[1], Item::Malformed { offset, .. } if *offset == at));
        let Item::Record(b) = &got[2] else {
            panic!("{got:?}")
        };
        assert_eq!(
            (b.get("warc-target-uri"), &b.block[..]),
            (Some("http://b/"), &b"two"[..])
        );
    }

    #[test]
    fn a_block_past_the_cap_keeps_its_first_bytes_in_plain_and_gzip_files() {
        let big = vec![b'z'; 3 * MAX_HEAD];
        let plain = [rec("http://a/", &big), rec("http://b/", b"after")].concat();
        let gz = [
            crate::warc::gzip(&rec("http://a/", &big)),
            crate::warc::gzip(&rec("http://b/", b"after")),
        ]
        .concat();
        for file in [plain, gz] {
            let got = items(&file, 1000);
            let [Item::Record(a), Item::Record(b)] = &got[..] else {
                panic!("{got:?}")
            };
            let kept = a.block.len();
            assert!(a.cut && (1000..=1000 + MAX_HEAD).contains(&kept), "{kept}");
            assert!(!b.cut && b.block == b"after");
        }
    }

    #[test]
    fn heads_without_end_and_wrong_lengths_cost_one_scan_not_one_per_byte() {
        // 2 MB of record starts that never end their fields, then 40-byte
        // heads that each declare 11 MB, then a record: each would cost a
        // 1 MiB read per byte (or an 11 MB one per head) without the scans
        // moving on by what they read.
        let mut file = b"WARC/1.0 ".repeat(230_000);
        file.extend(b"WARC/1.0\r\nContent-Length: 11000000\r\n\r\n".repeat(50_000));
        file.extend(rec("http://c/", b"three"));
        let got = items(&file, 1 << 20);
        let Some(Item::Record(c)) = got.last() else {
            panic!("{:?}", got.last())
        };
        assert_eq!(c.block, b"three");
        assert!(got.len() < 60_000, "{}", got.len());
    }

    #[test]
    fn a_record_after_junk_or_broken_heads_is_found() {
        // Junk nearly a read buffer long, then a record whose fields end
        // past that buffer; a head with a blank line but no length,
        // repeated; then a record.
        let mut file = vec![b'x'; 65_400];
        let long = format!("http://a/{}", "p".repeat(400));
        file.extend(rec(&long, b"one"));
        file.extend(b"WARC/".repeat(200_000));
        file.extend(b"\r\n\r\n");
        file.extend(rec("http://b/", b"two"));
        let got = items(&file, 1 << 20);
        let records: Vec<&[u8]> = got
            .iter()
            .filter_map(|i| match i {
                Item::Record(r) => Some(&r.block[..]),
                _ => None,
            })
            .collect();
        assert_eq!(records, [&b"one"[..], &b"two"[..]], "{}", got.len());
    }
}
