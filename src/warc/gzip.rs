//! One gzip member from several slices, without joining them: raw deflate
//! through a compressor kept per thread (a new one zeroes ~200 KB of
//! tables, a third of a small record's cost) and the gzip header and
//! trailer written here; level 0 writes stored blocks without deflate.

use std::cell::RefCell;

use flate2::{Compress, Compression, FlushCompress, Status};

/// Deflate levels a crawl may ask for: 0 (stored) to 9.
pub const MAX_LEVEL: u32 = 9;

thread_local! {
    static COMPRESSOR: RefCell<Option<(u32, Compress)>> = const { RefCell::new(None) };
}

/// `parts`, concatenated, as one gzip member compressed at `level`.
pub fn member(parts: &[&[u8]], level: u32) -> Vec<u8> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut out = Vec::with_capacity(match level {
        0 => total + total / 65_535 * 5 + 32,
        _ => total / 2 + 64,
    });
    // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=unknown.
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    let mut crc = crc32fast::Hasher::new();
    for p in parts {
        crc.update(p);
    }
    match level {
        0 => stored(parts, total, &mut out),
        _ => deflated(parts, level.min(MAX_LEVEL), &mut out),
    }
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out
}

/// Stored deflate blocks (at most 65,535 bytes each), the last marked.
fn stored(parts: &[&[u8]], total: usize, out: &mut Vec<u8>) {
    let mut left = total;
    let mut block = Vec::new();
    let emit = |block: &mut Vec<u8>, last: bool, out: &mut Vec<u8>| {
        let n = block.len() as u16;
        out.push(u8::from(last));
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&(!n).to_le_bytes());
        out.append(block);
    };
    if total == 0 {
        emit(&mut block, true, out);
        return;
    }
    for p in parts {
        let mut p = *p;
        while !p.is_empty() {
            let take = (65_535 - block.len()).min(p.len());
            block.extend_from_slice(&p[..take]);
            p = &p[take..];
            left -= take;
            if block.len() == 65_535 || left == 0 {
                emit(&mut block, left == 0, out);
            }
        }
    }
}

/// Raw deflate at `level` through this thread's compressor.
fn deflated(parts: &[&[u8]], level: u32, out: &mut Vec<u8>) {
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let c = match slot.as_mut() {
            Some((l, c)) if *l == level => {
                c.reset();
                c
            }
            _ => {
                &mut slot
                    .insert((level, Compress::new(Compression::new(level), false)))
                    .1
            }
        };
        for (i, p) in parts.iter().enumerate() {
            let flush = match i + 1 == parts.len() {
                true => FlushCompress::Finish,
                false => FlushCompress::None,
            };
            feed(c, p, flush, out);
        }
        if parts.is_empty() {
            feed(c, &[], FlushCompress::Finish, out);
        }
    });
}

/// Feeds `input` to `c`, growing `out` as it needs.
fn feed(c: &mut Compress, mut input: &[u8], flush: FlushCompress, out: &mut Vec<u8>) {
    loop {
        if out.capacity() - out.len() < 1024 {
            out.reserve(out.capacity().max(4096));
        }
        let before = c.total_in();
        // Writing into a Vec with room cannot fail.
        let status = c
            .compress_vec(input, out, flush)
            .unwrap_or(Status::StreamEnd);
        input = &input[(c.total_in() - before) as usize..];
        let done = match flush {
            FlushCompress::Finish => status == Status::StreamEnd,
            _ => input.is_empty(),
        };
        if done {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn members_of_every_level_and_size_decode_to_their_parts() {
        let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for level in [0, 1, 6] {
            for parts in [
                vec![],
                vec![&b""[..]],
                vec![&b"WARC/1.1\r\n"[..], &big[..], &b"\r\n\r\n"[..]],
                vec![&big[..65_535], &big[65_535..65_536]],
            ] {
                let m = member(&parts, level);
                let mut got = Vec::new();
                flate2::read::GzDecoder::new(&m[..])
                    .read_to_end(&mut got)
                    .unwrap();
                assert_eq!(got, parts.concat(), "level {level}");
            }
        }
    }
}
