//! One gzip member from several slices: raw deflate by ISA-L (igzip),
//! the whole record in one stateless call, and the gzip header and
//! trailer written here; level 0 writes stored blocks without deflate.
//! igzip's fastest level deflates crawled HTML at twice zlib-rs's level 1
//! speed and smaller (0.61 of the input on the bench's pages against
//! 0.66; 0.31 against 0.35 on rustdoc), which is most of a page's WARC
//! cost.

use std::cell::RefCell;

use isal_sys::igzip_lib as isal;

/// Levels a crawl may ask for: 0 (stored) to 9; 1 is igzip's fastest,
/// 2 its level 1, 3 and above its best (3).
pub const MAX_LEVEL: u32 = 9;

/// igzip's state and level buffer, made once per thread: a new state is
/// ~100 KB to zero or move, more than deflating a page costs.
struct Deflater {
    stream: Box<isal::isal_zstream>,
    /// u64s: igzip keeps aligned tables in it.
    level_buf: Vec<u64>,
    /// A record's parts joined, for the one-call compressor.
    joined: Vec<u8>,
}

thread_local! {
    static DEFLATER: RefCell<Option<Deflater>> = const { RefCell::new(None) };
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

/// Raw deflate of `parts` at `level` (1 and up) by igzip in one
/// stateless call; stored blocks should it refuse (it cannot: the output
/// has room for stored blocks of the whole input).
fn deflated(parts: &[&[u8]], level: u32, out: &mut Vec<u8>) {
    let (isal_level, buf_size) = match level {
        1 => (0, isal::ISAL_DEF_LVL0_DEFAULT),
        2 => (1, isal::ISAL_DEF_LVL1_DEFAULT),
        _ => (3, isal::ISAL_DEF_LVL3_DEFAULT),
    };
    DEFLATER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let d = slot.get_or_insert_with(|| Deflater {
            // SAFETY: a C struct of integers and pointers; all zero is
            // the state before `isal_deflate_stateless_init`.
            stream: Box::new(unsafe { std::mem::zeroed::<isal::isal_zstream>() }),
            level_buf: Vec::new(),
            joined: Vec::new(),
        });
        let words = (buf_size as usize).div_ceil(8);
        if d.level_buf.len() != words {
            d.level_buf = vec![0; words];
        }
        let input: &[u8] = match parts {
            [one] => one,
            _ => {
                d.joined.clear();
                parts.iter().for_each(|p| d.joined.extend_from_slice(p));
                &d.joined
            }
        };
        let room = input.len() + input.len() / 8 + 1024;
        out.reserve(room);
        let at = out.len();
        let done = match u32::try_from(room) {
            // SAFETY: igzip reads `avail_in` bytes of `input` and writes at
            // most `avail_out` into `out`'s spare capacity, of which
            // `total_out` are then initialized.
            Ok(avail_out) => unsafe {
                let s = &mut *d.stream;
                isal::isal_deflate_stateless_init(s);
                s.level = isal_level;
                s.level_buf = d.level_buf.as_mut_ptr().cast::<u8>();
                s.level_buf_size = buf_size;
                s.gzip_flag = isal::IGZIP_DEFLATE as u16;
                s.flush = isal::NO_FLUSH as u16;
                s.end_of_stream = 1;
                s.next_in = input.as_ptr() as *mut u8;
                s.avail_in = input.len() as u32;
                s.next_out = out.as_mut_ptr().add(at);
                s.avail_out = avail_out;
                let ok = isal::isal_deflate_stateless(s) == isal::COMP_OK as i32;
                if ok {
                    out.set_len(at + s.total_out as usize);
                }
                ok
            },
            Err(_) => false,
        };
        if !done {
            stored(parts, input.len(), out);
        }
        // A large record's copy is not kept for the next one.
        if d.joined.capacity() > 1 << 20 {
            d.joined = Vec::new();
        }
    });
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn members_of_every_level_and_size_decode_to_their_parts() {
        let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for level in [0, 1, 2, 6] {
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
