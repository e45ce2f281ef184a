//! The crawl's WARC files: records appended to an open file named as
//! Heritrix names them (`PREFIX-TIMESTAMP17-SERIAL-PID~HOST.warc.gz`,
//! with `.open` while written), rolled past a size, each file begun with
//! a warcinfo record and closed with its CDXJ index beside it. A file a
//! killed crawl left open is cut back to its last whole record, indexed
//! and closed by the next crawl into the same directory.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::cdxj::{self, Entry};
use super::reader::{MemberError, Members, http_head, parse_record};
use super::record::{Record, RecordType};
use crate::model::{Utc, now_ms};

const OPEN_SUFFIX: &str = ".open";
/// Largest record a file left open is read back with when indexed.
const RECOVER_CAP: usize = 1 << 30;

/// Where a record went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The file's final path (without `.open`; absolute when the writer's
    /// directory is).
    pub path: String,
    pub offset: u64,
    pub length: u64,
}

/// The WARC files of one crawl run.
pub struct WarcWriter {
    dir: PathBuf,
    prefix: String,
    max_size: u64,
    /// The warcinfo record's fields (without `software`), for each file.
    info: String,
    serial: u32,
    open: Option<OpenFile>,
    /// A write failed: the open file may end in part of a record.
    broken: bool,
}

struct OpenFile {
    name: String,
    /// `dir/name`, made once for every record's [`Placed`].
    path: String,
    out: BufWriter<File>,
    len: u64,
    index: Vec<Entry>,
}

impl WarcWriter {
    /// A writer into `dir` (made if missing); no file is opened before the
    /// first record.
    pub fn new(dir: &Path, prefix: &str, max_size: u64, info: String) -> io::Result<WarcWriter> {
        std::fs::create_dir_all(dir)?;
        Ok(WarcWriter {
            dir: dir.to_path_buf(),
            prefix: prefix.to_string(),
            max_size,
            info,
            serial: 0,
            open: None,
            broken: false,
        })
    }

    /// Appends one page's records (`members`, each one gzip member, with
    /// its index entry when it is a response or revisit) to one file,
    /// rolling to a new file first when they would take it past the
    /// maximum size. Returns where the first went (a page's response).
    pub fn append<'m>(
        &mut self,
        members: impl IntoIterator<Item = (&'m [u8], Option<Entry>)>,
    ) -> io::Result<Placed> {
        let members: Vec<_> = members.into_iter().collect();
        let size: u64 = members.iter().map(|(m, _)| m.len() as u64).sum();
        if self
            .open
            .as_ref()
            .is_some_and(|f| f.len + size > self.max_size)
        {
            self.close()?;
        }
        if self.open.is_none() {
            self.open = Some(self.start_file()?);
        }
        let Some(f) = self.open.as_mut() else {
            return Err(io::Error::other("no WARC file open"));
        };
        let mut first = None;
        for (member, entry) in members {
            if let Err(e) = f.out.write_all(member) {
                // Part of a record may be in the file: it stays `.open`
                // for the next crawl to cut back, never closed as whole.
                self.broken = true;
                return Err(e);
            }
            let (offset, length) = (f.len, member.len() as u64);
            f.len += length;
            if let Some(e) = entry {
                f.index.push(Entry {
                    offset,
                    length,
                    ..e
                });
            }
            first.get_or_insert((offset, length));
        }
        let (offset, length) = first.unwrap_or((f.len, 0));
        Ok(Placed {
            path: f.path.clone(),
            offset,
            length,
        })
    }

    /// Hands what was appended to the system, so a killed process leaves
    /// it in the file (called before the db records the pages).
    pub fn flush(&mut self) -> io::Result<()> {
        let flushed = match &mut self.open {
            Some(f) => f.out.flush(),
            None => Ok(()),
        };
        self.broken |= flushed.is_err();
        flushed
    }

    /// Closes the open file: synced, indexed, renamed to its final name.
    /// A file a write failed on is left open (see [`recover_dir`]).
    pub fn close(&mut self) -> io::Result<()> {
        let Some(f) = self.open.take() else {
            return Ok(());
        };
        if self.broken {
            return Ok(());
        }
        let file = f.out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        let done = self.dir.join(&f.name);
        cdxj::write_index(&cdxj::index_path(&done), &f.name, &f.index)?;
        std::fs::rename(open_path(&done), &done)
    }

    /// A new file, its warcinfo record first.
    fn start_file(&mut self) -> io::Result<OpenFile> {
        let now = now_ms();
        let name = loop {
            let name = format!(
                "{}-{}-{:05}-{}~{}.warc.gz",
                self.prefix,
                Utc::of_ms(now).timestamp17(),
                self.serial,
                std::process::id(),
                host_name()
            );
            self.serial += 1;
            let path = self.dir.join(&name);
            if !path.exists() && !open_path(&path).exists() {
                break name;
            }
        };
        let path = open_path(&self.dir.join(&name));
        // Made and locked under a name recovery does not look at, then
        // renamed: no other crawl can take it for one a killed crawl left.
        let fresh = PathBuf::from(format!("{}.new", path.display()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&fresh)?;
        // Held while the file is written: the next crawl into the
        // directory closes it only once this process is gone.
        if !lock(&file) {
            return Err(io::Error::other("cannot lock a new WARC file"));
        }
        std::fs::rename(&fresh, &path)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let fields = format!(
            "software: trawl/{}\r\nformat: WARC File Format 1.1\r\nconformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n{}",
            env!("CARGO_PKG_VERSION"),
            self.info
        );
        let info = Record::new(
            RecordType::Warcinfo,
            now,
            "application/warc-fields",
            fields.into_bytes(),
        )
        .field("WARC-Filename", &name);
        let len = info.write_gz(&mut out)?;
        Ok(OpenFile {
            path: self.dir.join(&name).display().to_string(),
            name,
            out,
            len,
            index: Vec::new(),
        })
    }
}

impl Drop for WarcWriter {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// `PATH.open`.
fn open_path(done: &Path) -> PathBuf {
    let mut p = done.as_os_str().to_owned();
    p.push(OPEN_SUFFIX);
    PathBuf::from(p)
}

/// This machine's name, for file names (`localhost` when unknown).
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    let name = String::from_utf8_lossy(&buf[..end]);
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
        .collect();
    if rc != 0 || name.is_empty() {
        "localhost".into()
    } else {
        name
    }
}

/// What closing a file left open found.
#[derive(Debug, PartialEq, Eq)]
pub struct Recovered {
    pub file: PathBuf,
    pub records: u64,
    /// Bytes of a torn last record cut off.
    pub cut: u64,
}

/// Closes every `PREFIX-….warc.gz.open` in `dir` no process is writing:
/// cut back to its last whole record, indexed, renamed.
pub fn recover_dir(dir: &Path, prefix: &str) -> io::Result<Vec<Recovered>> {
    let mut done = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(done);
    };
    for entry in entries {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with(&format!("{prefix}-")) && name.ends_with(".open.new") {
            // A file a crawl was killed making (no record of a page yet).
            if let Ok(f) = File::open(&path)
                && lock(&f)
            {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        }
        let Some(base) = name.strip_suffix(OPEN_SUFFIX) else {
            continue;
        };
        if !base.starts_with(&format!("{prefix}-")) || !base.ends_with(".warc.gz") {
            continue;
        }
        // A crawl writing it holds its lock; one that closed it since the
        // directory was read has renamed it.
        let file = match OpenOptions::new().read(true).write(true).open(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            opened => opened?,
        };
        if !lock(&file) || !path.exists() {
            continue;
        }
        done.push(recover(file, &path, &dir.join(base))?);
    }
    Ok(done)
}

/// Takes the file's exclusive lock without waiting: false when another
/// process holds it (a crawl writing the file; the lock goes with the
/// process, however it ends).
fn lock(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor this File owns.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// One file left open: its whole records kept, the rest cut, indexed,
/// renamed to `done`.
fn recover(file: File, open: &Path, done: &Path) -> io::Result<Recovered> {
    let name = done
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let size = file.metadata()?.len();
    let mut index = Vec::new();
    let (mut records, mut keep) = (0u64, 0u64);
    for m in Members::new(BufReader::new(&file), RECOVER_CAP) {
        match m.outcome {
            Ok(bytes) => {
                records += 1;
                keep = m.offset + m.length;
                if let Some(e) = entry_of(&bytes, m.offset, m.length) {
                    index.push(e);
                }
            }
            Err(MemberError::Torn) => break,
            // Nothing is cut on a read error: records rows point to may
            // follow.
            Err(MemberError::Io(e)) => return Err(io::Error::other(e)),
            Err(_) => keep = m.offset + m.length,
        }
    }
    if keep < size {
        file.set_len(keep)?;
        file.sync_all()?;
    }
    cdxj::write_index(&cdxj::index_path(done), &name, &index)?;
    std::fs::rename(open, done)?;
    Ok(Recovered {
        file: done.to_path_buf(),
        records,
        cut: size - keep,
    })
}

/// The index entry of a response or revisit record's bytes.
pub fn entry_of(bytes: &[u8], offset: u64, length: u64) -> Option<Entry> {
    let (rec, _) = parse_record(bytes).ok()?;
    let kind = rec.get("WARC-Type")?;
    if kind != "response" && kind != "revisit" {
        return None;
    }
    let head = http_head(rec.block);
    let mime = match kind {
        "revisit" => "warc/revisit".to_string(),
        _ => cdxj::mime_of(
            head.as_ref()
                .and_then(|h| h.get("content-type"))
                .unwrap_or(""),
        ),
    };
    Some(Entry {
        url: rec.get("WARC-Target-URI")?.to_string(),
        date_ms: Utc::parse_iso(rec.get("WARC-Date")?)?,
        mime,
        status: head.as_ref().and_then(|h| h.status()),
        // As cdxj-indexer: a record without one gets its payload's.
        digest: match rec.get("WARC-Payload-Digest") {
            Some(d) => d.to_string(),
            None => super::sha1_base32(rec.block.get(head.as_ref().map_or(0, |h| h.body_at)..)?),
        },
        length,
        offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str) -> Entry {
        Entry {
            url: url.into(),
            date_ms: 1_795_852_385_123,
            mime: "text/html".into(),
            status: Some(200),
            digest: String::new(),
            length: 0,
            offset: 0,
        }
    }

    fn response(url: &str) -> Vec<u8> {
        let block = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\nhi".to_vec();
        Record::new(
            RecordType::Response,
            1_795_852_385_123,
            "application/http;msgtype=response",
            block,
        )
        .field("WARC-Target-URI", url)
        .payload(b"hi")
        .gz()
    }

    #[test]
    fn a_file_left_open_is_cut_to_its_last_whole_record_unless_a_writer_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::new(dir.path(), "t", 1 << 30, String::new()).unwrap();
        let (a, b) = (response("http://a.test/"), response("http://b.test/"));
        let placed = w.append([(&a[..], Some(entry("http://a.test/")))]).unwrap();
        w.flush().unwrap();
        let open = PathBuf::from(format!("{}.open", placed.path));
        // Held by this writer: left alone.
        assert_eq!(recover_dir(dir.path(), "t").unwrap(), vec![]);
        assert!(open.exists());
        // A kill: the writer's lock goes, half a record is at the end.
        w.append([(&b[..b.len() / 2], None)]).unwrap();
        w.flush().unwrap();
        drop(w.open.take());
        let size = open.metadata().unwrap().len();
        let got = recover_dir(dir.path(), "t").unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].records, got[0].cut), (2, b.len() as u64 / 2));
        let done = PathBuf::from(&placed.path);
        assert_eq!(done.metadata().unwrap().len(), size - b.len() as u64 / 2);
        let index = std::fs::read_to_string(cdxj::index_path(&done)).unwrap();
        assert_eq!(index.lines().count(), 1, "{index}");
        assert!(
            index.contains(&format!("\"offset\": \"{}\"", placed.offset)),
            "{index}"
        );
    }
}
