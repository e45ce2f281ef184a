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
        "warc.prefix",
        FileWord,
        "what the WARC files' names begin with (PREFIX-TIMESTAMP-SERIAL-PID~HOST.warc.gz)",
        |s| s.warc.prefix.clone(),
        |s, p| s.warc.prefix = p,
        at_start
    ),
];
