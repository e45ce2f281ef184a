//! A page's stored frame: its decoded body, then its visible text, as one
//! zstd frame, with the db's dictionary once it has one. The text is
//! compressed against the body it was taken from, so it costs a fraction
//! of the separate copy schema 8 kept in `docs`. The body goes in before
//! the parse (which consumes it), the text after; one compression context
//! per thread, as creating one per page showed in the crawl's profile.

use std::cell::RefCell;
use std::io;

use zstd::stream::raw::{Encoder, InBuffer, Operation, OutBuffer};

use crate::schema::dictionary::Dictionary;

/// Level without a dictionary (and for bodies compressed alone).
const LEVEL: i32 = 1;
/// Level with a dictionary. On the bench site's pages (1,000, 110 KiB
/// dictionary, streamed as here): no dictionary level 1 1.68× at 49 µs a
/// page; with it level 1 2.11× at 55 µs, level 2 2.36× at 59 µs, level 3
/// 2.45× at 70 µs. On rust-doc's pages level 1 10.8× and level 2 11.2×.
/// In the bench site's crawl level 2 cost 6 % more CPU a page than level 1
/// (627/588 and 623/583 µs) for a db 0.69 instead of 0.73 times the wire;
/// rust-doc's db stays near 0.37 times the wire with either.
const DICT_LEVEL: i32 = 1;

/// A body above this is compressed alone, at once, and its text kept in
/// `docs` as before schema 9: a streaming context that had buffered a
/// large page would keep that memory on a blocking-pool thread.
pub const STREAM_MAX: usize = 512 * 1024;

thread_local! {
    /// This thread's context, with the id of the dictionary loaded in it
    /// (0: none).
    static ENCODER: RefCell<Option<(u32, Encoder<'static>)>> = const { RefCell::new(None) };
}

/// This thread's encoder for `dict`, made again when the dictionary
/// changed (once a crawl, when it trains one).
fn encoder<'a>(
    slot: &'a mut Option<(u32, Encoder<'static>)>,
    dict: Option<&Dictionary>,
) -> Option<&'a mut Encoder<'static>> {
    let id = dict.map_or(0, |d| d.id);
    if slot.as_ref().is_none_or(|(have, _)| *have != id) {
        let made = match dict {
            Some(d) => Encoder::with_dictionary(DICT_LEVEL, &d.bytes),
            None => Encoder::new(LEVEL),
        };
        *slot = Some((id, made.ok()?));
    }
    slot.as_mut().map(|(_, e)| e)
}

/// A frame being written on this thread: `begin` with the body, `finish`
/// with the text, with nothing else compressed on the thread in between.
pub struct FrameWriter {
    out: Vec<u8>,
    /// The body, kept only when this thread has no encoder (then the frame
    /// is compressed whole at `finish`).
    fallback: Option<Vec<u8>>,
    /// The body was large: `out` is its frame already, without the text.
    closed: bool,
}

impl FrameWriter {
    pub fn begin(body: &[u8], dict: Option<&Dictionary>) -> FrameWriter {
        if body.len() > STREAM_MAX {
            return FrameWriter {
                out: zstd::bulk::compress(body, LEVEL).unwrap_or_default(),
                fallback: None,
                closed: true,
            };
        }
        let mut out = Vec::with_capacity(body.len() / 2 + 64);
        let streamed = ENCODER.with(|e| {
            let mut e = e.borrow_mut();
            let enc = encoder(&mut e, dict)?;
            // A frame a panic cut short is dropped here.
            enc.reinit().ok()?;
            push(enc, &mut out, body).ok()
        });
        FrameWriter {
            out,
            fallback: streamed.is_none().then(|| body.to_vec()),
            closed: false,
        }
    }

    /// Whether `finish` stores the text in the frame.
    pub fn takes_text(&self) -> bool {
        !self.closed
    }

    /// The compressed frame (empty if compression failed, as before); the
    /// text is left out when `takes_text` is false.
    pub fn finish(mut self, text: &[u8]) -> Vec<u8> {
        if self.closed {
            return self.out;
        }
        if let Some(mut whole) = self.fallback.take() {
            whole.extend_from_slice(text);
            return zstd::bulk::compress(&whole, LEVEL).unwrap_or_default();
        }
        let done = ENCODER.with(|e| {
            let mut e = e.borrow_mut();
            let (_, enc) = e.as_mut()?;
            push(enc, &mut self.out, text).ok()?;
            end(enc, &mut self.out).ok()
        });
        match done {
            Some(()) => self.out,
            None => Vec::new(),
        }
    }
}

/// Feeds `data` to the frame, growing `out` as the encoder needs.
fn push(enc: &mut Encoder<'static>, out: &mut Vec<u8>, data: &[u8]) -> io::Result<()> {
    let mut input = InBuffer::around(data);
    while input.pos() < data.len() {
        reserve(out);
        let pos = out.len();
        let mut output = OutBuffer::around_pos(out, pos);
        enc.run(&mut input, &mut output)?;
    }
    Ok(())
}

/// Ends the frame: what the encoder still holds is written out.
fn end(enc: &mut Encoder<'static>, out: &mut Vec<u8>) -> io::Result<()> {
    loop {
        reserve(out);
        let pos = out.len();
        let mut output = OutBuffer::around_pos(out, pos);
        if enc.finish(&mut output, true)? == 0 {
            return Ok(());
        }
    }
}

fn reserve(out: &mut Vec<u8>) {
    if out.capacity() - out.len() < 1024 {
        out.reserve(out.len().max(16 * 1024));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(body: &[u8], text: &[u8]) {
        let frame = FrameWriter::begin(body, None).finish(text);
        let whole = zstd::decode_all(&frame[..]).unwrap();
        assert_eq!(&whole[..body.len()], body);
        assert_eq!(&whole[body.len()..], text);
    }

    #[test]
    fn body_then_text_in_one_frame() {
        roundtrip(b"", b"");
        roundtrip(b"<p>hello</p>", b"hello");
        let body: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i * 7919).to_le_bytes())
            .collect();
        roundtrip(&body, &body[1000..90_000]);
    }

    #[test]
    fn with_the_dictionary_the_frame_names_it_and_reads_back() {
        let page = |i: u32| {
            format!(
                "<html><head><title>t{i}</title></head><body><nav>home news about contact</nav><p>{}</p></body></html>",
                (0..200)
                    .map(|j| format!("w{} ", (i * 31 + j * 17) % 997))
                    .collect::<String>()
            )
        };
        let samples: Vec<String> = (0..60).map(page).collect();
        let dict = Dictionary::train(&samples).unwrap();
        dict.register();
        let body = page(99);
        let frame = FrameWriter::begin(body.as_bytes(), Some(&dict)).finish(b"text");
        let id = zstd::zstd_safe::get_dict_id_from_frame(&frame).map(|i| i.get());
        assert_eq!(id, Some(dict.id));
        let whole = crate::schema::dictionary::decompress(&frame, body.len() + 4).unwrap();
        assert_eq!(whole, [body.as_bytes(), b"text"].concat());
        // Back to no dictionary on the same thread.
        roundtrip(b"<p>plain</p>", b"plain");
    }

    #[test]
    fn a_large_body_is_compressed_alone() {
        let body = vec![b'x'; STREAM_MAX + 1];
        let w = FrameWriter::begin(&body, None);
        assert!(!w.takes_text());
        let frame = w.finish(b"not stored here");
        assert_eq!(zstd::decode_all(&frame[..]).unwrap(), body);
    }

    #[test]
    fn a_frame_left_unfinished_does_not_leak_into_the_next() {
        drop(FrameWriter::begin(b"abandoned by a panic", None));
        roundtrip(b"<p>next</p>", b"next");
    }

    #[test]
    fn the_text_costs_little_next_to_its_body() {
        // Paragraphs of pseudo-random words from a large vocabulary: the
        // text alone compresses to about what the body does.
        let mut x = 12345u32;
        let (mut body, mut text) = (String::new(), String::new());
        for _ in 0..200 {
            let mut para = String::new();
            for _ in 0..12 {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                para += &format!("w{} ", (x >> 8) % 5000);
            }
            body += &format!("<p class=\"t\">{para}</p>\n");
            text += &para;
            text += "\n";
        }
        let alone = FrameWriter::begin(body.as_bytes(), None).finish(b"").len();
        let text_alone = FrameWriter::begin(b"", None).finish(text.as_bytes()).len();
        let both = FrameWriter::begin(body.as_bytes(), None)
            .finish(text.as_bytes())
            .len();
        assert!(both - alone < text_alone / 4, "{alone} {text_alone} {both}");
    }
}
