//! `warc.*`: WARC files written while crawling.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[
    key!(
        "warc.dir",
        OptDir,
        "write every fetch as WARC 1.1 records into files in this directory (none: no WARC)",
        |s| s.warc.dir.clone(),
        |s, d| s.warc.dir = d,
        at_start
    ),
    key!(
        "warc.max_file_size",
        Int {
            min: 1 << 20,
            max: 1 << 40
        },
        "bytes a WARC file may reach before the next is begun",
        |s| s.warc.max_file_size,
        |s, n| s.warc.max_file_size = n,
        at_start
    ),
    key!(
        "warc.gzip_level",
        Int { min: 0, max: 9 },
        "deflate level of each WARC record's gzip member (ISA-L's igzip): 1 is fastest, 2 and 3 (up to 9, the same) smaller, 0 stores records uncompressed (still one gzip member each)",
        |s| u64::from(s.warc.gzip_level),
        |s, n| s.warc.gzip_level = n as u32,
        at_start
    ),
    key!(
        "warc.prefix",
        FileWord,
        "what the WARC files' names begin with (PREFIX-TIMESTAMP-SERIAL-PID~HOST.warc.gz)",
        |s| s.warc.prefix.clone(),
        |s, p| s.warc.prefix = p,
        at_start
    ),
];
