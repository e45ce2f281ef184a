//! Undoing Content-Encoding (gzip, deflate, br) as the body arrives, the
//! output stopped at the body cap: a decompression bomb costs what the cap
//! allows and no more, and the rest of it is never read off the wire (a
//! 10 MB gzip of zeros was read whole before decoding stopped).

use std::io::Write;

use super::FetchError;
use crate::model::FailReason;

/// The decoded body so far, refusing to grow past the cap: the decoders
/// stop at its error instead of inflating the rest of a bomb.
struct Sink {
    out: Vec<u8>,
    cap: usize,
    /// Something past the cap was refused: the body is cut.
    over: bool,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.cap - self.out.len();
        if room == 0 && !buf.is_empty() {
            self.over = true;
            return Err(std::io::Error::other("the body cap is reached"));
        }
        let take = buf.len().min(room);
        self.out.extend_from_slice(&buf[..take]);
        Ok(take)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

enum Inner {
    Plain(Sink),
    Gzip(Box<flate2::write::MultiGzDecoder<Sink>>),
    Zlib(Box<flate2::write::ZlibDecoder<Sink>>),
    Deflate(Box<flate2::write::DeflateDecoder<Sink>>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Sink>>),
}

impl Inner {
    fn sink(&self) -> &Sink {
        match self {
            Inner::Plain(s) => s,
            Inner::Gzip(d) => d.get_ref(),
            Inner::Zlib(d) => d.get_ref(),
            Inner::Deflate(d) => d.get_ref(),
            Inner::Brotli(d) => d.get_ref(),
        }
    }
    fn write_all(&mut self, piece: &[u8]) -> std::io::Result<()> {
        match self {
            Inner::Plain(s) => s.write_all(piece),
            Inner::Gzip(d) => d.write_all(piece),
            Inner::Zlib(d) => d.write_all(piece),
            Inner::Deflate(d) => d.write_all(piece),
            Inner::Brotli(d) => d.write_all(piece),
        }
    }
    /// Ends the stream: an error when it stopped short of its end.
    fn finish(self) -> (Sink, std::io::Result<()>) {
        match self {
            Inner::Plain(s) => (s, Ok(())),
            Inner::Gzip(mut d) => {
                let r = d.try_finish();
                (take(d.get_mut()), r)
            }
            Inner::Zlib(mut d) => {
                let r = d.try_finish();
                (take(d.get_mut()), r)
            }
            Inner::Deflate(mut d) => {
                let r = d.try_finish();
                (take(d.get_mut()), r)
            }
            Inner::Brotli(mut d) => {
                let r = d.close();
                (take(d.get_mut()), r)
            }
        }
    }
}

/// The sink's contents, leaving an empty one behind.
fn take(s: &mut Sink) -> Sink {
    Sink {
        out: std::mem::take(&mut s.out),
        cap: s.cap,
        over: s.over,
    }
}

fn sink(cap: usize) -> Sink {
    Sink {
        out: Vec::new(),
        cap,
        over: false,
    }
}

/// A body's Content-Encoding undone a piece at a time.
pub(super) struct Decoder {
    inner: Inner,
    enc: String,
    cap: usize,
    /// The bytes fed before the first output, while a `deflate` body may
    /// still turn out to be raw deflate (servers send both under the name).
    start: Option<Vec<u8>>,
    fed: usize,
    /// The stream broke after some output, or passed the cap: the body is
    /// cut and nothing more is read.
    cut: bool,
}

/// Bytes of a compressed body fed to its decoder at a time: its output
/// (at most ~1,000 times as much for deflate) is counted against the
/// budget after each piece.
pub(super) const PIECE: usize = 1024;

/// A `deflate` body's first bytes kept for the raw deflate retry: a zlib
/// stream that has produced nothing by then is taken as zlib (a stream of
/// empty blocks would otherwise be held whole).
const START_MAX: usize = 4 * PIECE;

impl Decoder {
    /// A decoder for `encoding` (an unknown one passes bytes through, as
    /// does none), its output capped at `cap` bytes.
    pub fn new(encoding: &str, cap: usize) -> Decoder {
        let enc = encoding.trim().to_ascii_lowercase();
        let inner = match enc.as_str() {
            "gzip" | "x-gzip" => {
                Inner::Gzip(Box::new(flate2::write::MultiGzDecoder::new(sink(cap))))
            }
            "deflate" => Inner::Zlib(Box::new(flate2::write::ZlibDecoder::new(sink(cap)))),
            "br" => Inner::Brotli(Box::new(brotli_decompressor::DecompressorWriter::new(
                sink(cap),
                4096,
            ))),
            _ => Inner::Plain(sink(cap)),
        };
        let start = (enc == "deflate").then(Vec::new);
        Decoder {
            inner,
            enc,
            cap,
            start,
            fed: 0,
            cut: false,
        }
    }

    /// Room for `n` bytes of a plain body's output, made at once.
    pub fn reserve(&mut self, n: usize) {
        if let Inner::Plain(s) = &mut self.inner {
            s.out.reserve(n.saturating_sub(s.out.len()));
        }
    }

    /// Whether the body is compressed (then it is fed in [`PIECE`]s).
    pub fn compressed(&self) -> bool {
        !matches!(self.inner, Inner::Plain(_))
    }

    /// Bytes decoded so far.
    pub fn len(&self) -> usize {
        self.inner.sink().out.len()
    }

    /// Nothing more is wanted: the cap is reached or the stream broke.
    pub fn done(&self) -> bool {
        self.cut || self.inner.sink().over
    }

    /// Decodes the next bytes of the body. A body that does not decode at
    /// all as its encoding claims is a `bad-encoding` failure.
    pub fn feed(&mut self, piece: &[u8]) -> Result<(), FetchError> {
        if self.done() || piece.is_empty() {
            return Ok(());
        }
        self.fed += piece.len();
        if let Some(start) = &mut self.start {
            start.extend_from_slice(piece);
        }
        let wrote = self.inner.write_all(piece);
        if self.len() > 0 || self.fed > START_MAX {
            self.start = None;
        }
        if self.compressed() && self.fed > self.cap + self.cap / 64 + PIECE {
            // Compressed bytes past the cap (and any stored blocks' framing)
            // decode to more than it, or to next to nothing (empty blocks
            // at full speed): cut.
            self.cut = true;
        }
        match wrote {
            Ok(()) => Ok(()),
            Err(_) if self.inner.sink().over => Ok(()),
            Err(e) if self.len() == 0 => self.not_decodable(&e),
            Err(_) => {
                self.cut = true; // a broken stream: keep what came out before
                Ok(())
            }
        }
    }

    /// No output and an error: raw deflate is tried once for `deflate`,
    /// else the body is not what its Content-Encoding says.
    fn not_decodable(&mut self, e: &std::io::Error) -> Result<(), FetchError> {
        if let Some(start) = self.start.take() {
            self.inner =
                Inner::Deflate(Box::new(flate2::write::DeflateDecoder::new(sink(self.cap))));
            self.fed = 0;
            return self.feed(&start);
        }
        Err(FetchError::new(
            FailReason::BadEncoding,
            format!(
                "the body is not {} as its Content-Encoding says ({e}; {} bytes)",
                self.enc, self.fed
            ),
        ))
    }

    /// The decoded body, and whether it was cut (at the cap, or a stream
    /// that broke or ended early after some output).
    pub fn finish(self) -> Result<(Vec<u8>, bool), FetchError> {
        let (fed, cut, enc) = (self.fed, self.cut, self.enc);
        let (sink, ended) = self.inner.finish();
        let cut = cut || sink.over;
        if fed == 0 {
            return Ok((Vec::new(), false)); // an empty body, whatever it claims
        }
        match ended {
            Err(e) if !cut && sink.out.is_empty() => Err(FetchError::new(
                FailReason::BadEncoding,
                format!("the body is not {enc} as its Content-Encoding says ({e}; {fed} bytes)"),
            )),
            Err(_) => Ok((sink.out, true)),
            Ok(()) => Ok((sink.out, cut)),
        }
    }
}

/// A whole body (read from a WARC file, not the network) decoded from
/// `encoding` as a fetch decodes one, its output capped at `cap`: the
/// body, and whether it was cut.
pub fn decode_whole(raw: &[u8], encoding: &str, cap: usize) -> Result<(Vec<u8>, bool), FetchError> {
    let mut d = Decoder::new(encoding, cap);
    d.reserve(raw.len().min(cap));
    for piece in raw.chunks(PIECE * 64) {
        if d.done() {
            break;
        }
        d.feed(piece)?;
    }
    d.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    /// Decodes `raw` fed as the fetch feeds it; also returns the bytes fed
    /// before the decoder wanted no more.
    fn decode(raw: &[u8], enc: &str, cap: usize) -> (Result<(Vec<u8>, bool), FetchError>, usize) {
        let mut d = Decoder::new(enc, cap);
        let mut fed = 0;
        for piece in raw.chunks(PIECE) {
            if d.done() {
                break;
            }
            if let Err(e) = d.feed(piece) {
                return (Err(e), fed);
            }
            fed += piece.len();
        }
        (d.finish(), fed)
    }

    /// A zlib stream of empty stored blocks: valid, and it decodes to
    /// nothing however long it is.
    fn empty_blocks(bytes: usize) -> Vec<u8> {
        let mut z = vec![0x78, 0x01];
        while z.len() < bytes {
            z.extend_from_slice(&[0x00, 0x00, 0x00, 0xff, 0xff]);
        }
        z
    }

    #[test]
    fn a_stream_that_decodes_to_nothing_is_held_in_a_few_kib_and_cut() {
        let body = empty_blocks(10 << 20);
        let mut d = Decoder::new("deflate", 1 << 20);
        let mut fed = 0;
        for piece in body.chunks(PIECE) {
            if d.done() {
                break;
            }
            d.feed(piece).unwrap();
            fed += piece.len();
            let held = d.start.as_ref().map_or(0, Vec::len);
            assert!(held <= START_MAX + PIECE, "{held} bytes kept at {fed}");
        }
        assert!(d.done(), "cut");
        assert!(fed < (1 << 20) * 11 / 10, "read {fed} of {}", body.len());
        let (out, cut) = d.finish().unwrap();
        assert_eq!((out.len(), cut), (0, true));
        // An incompressible body at the cap, stored, is whole.
        let data: Vec<u8> = (0..1u32 << 20)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
        enc.write_all(&data).unwrap();
        let gz = enc.finish().unwrap();
        assert!(gz.len() > data.len());
        let (out, cut) = decode(&gz, "gzip", 1 << 20).0.unwrap();
        assert_eq!((out.len(), cut), (1 << 20, false));
    }

    #[test]
    fn bombs_stop_at_the_cap_unread_and_fakes_are_refused() {
        let gz = gzip(&vec![b'a'; 5 << 20]);
        let (r, fed) = decode(&gz, "gzip", 1 << 20);
        let (out, cut) = r.unwrap();
        assert_eq!((out.len(), cut), (1 << 20, true));
        assert!(
            fed < gz.len() / 2,
            "a bomb is not read past the cap: {fed} of {}",
            gz.len()
        );
        let (out, cut) = decode(&gz, "GZIP", 8 << 20).0.unwrap();
        assert_eq!((out.len(), cut), (5 << 20, false));
        let (out, cut) = decode(&gz, "gzip", 5 << 20).0.unwrap();
        assert_eq!(
            (out.len(), cut),
            (5 << 20, false),
            "exactly the cap is whole"
        );
        // Plain text that claims to be gzip.
        let e = decode(b"<html>plain</html>", "gzip", 1 << 20)
            .0
            .unwrap_err();
        assert_eq!(e.reason, FailReason::BadEncoding);
        // A stream cut in the middle keeps what decoded.
        let gz = gzip(&vec![b'b'; 1 << 20]);
        let (out, cut) = decode(&gz[..gz.len() / 2], "gzip", 8 << 20).0.unwrap();
        assert!(cut && !out.is_empty());
        // Raw deflate under the name deflate, and zlib under it.
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"raw deflate").unwrap();
        let (out, _) = decode(&enc.finish().unwrap(), "deflate", 100).0.unwrap();
        assert_eq!(out, b"raw deflate");
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"zlib deflate").unwrap();
        let (out, _) = decode(&enc.finish().unwrap(), "deflate", 100).0.unwrap();
        assert_eq!(out, b"zlib deflate");
        // Unknown encodings pass through, capped as a plain body is.
        let (out, cut) = decode(b"x", "zstd", 10).0.unwrap();
        assert_eq!((out.as_slice(), cut), (&b"x"[..], false));
        let (out, cut) = decode(b"0123456789abc", "", 10).0.unwrap();
        assert_eq!((out.len(), cut), (10, true));
        // An empty body claiming gzip is an empty body.
        assert_eq!(decode(b"", "gzip", 10).0.unwrap(), (Vec::new(), false));
    }

    #[test]
    fn brotli_output_stops_at_the_cap_and_the_rest_is_not_read() {
        let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
        let br = brotli_stored(&data);
        let (out, cut) = decode(&br, "br", 1 << 20).0.unwrap();
        assert_eq!((out.len(), cut), (1 << 20, true));
        assert_eq!(out, data[..1 << 20]);
        let (r, fed) = decode(&br, "br", 1 << 20);
        assert!(
            r.is_ok() && fed < 2 << 20,
            "{fed} of {} bytes read",
            br.len()
        );
        let (out, cut) = decode(&br, "br", 8 << 20).0.unwrap();
        assert_eq!((out.len(), cut), (4 << 20, false));
        // Cut short: what decoded is kept, marked cut.
        let (out, cut) = decode(&br[..br.len() / 2], "br", 8 << 20).0.unwrap();
        assert!(cut && !out.is_empty());
    }

    /// `data` as a brotli stream of uncompressed meta-blocks (RFC 7932
    /// 9.2: WBITS 16, then per block ISLAST 0, MNIBBLES 4 (16 bits of
    /// MLEN-1), ISUNCOMPRESSED 1, padding to a byte, the bytes; then an
    /// empty last block).
    fn brotli_stored(data: &[u8]) -> Vec<u8> {
        let mut bits = BitWriter::default();
        bits.put(0, 1); // WBITS 16
        for chunk in data.chunks(1 << 16) {
            bits.put(0, 1); // ISLAST
            bits.put(0, 2); // MNIBBLES 4
            bits.put((chunk.len() - 1) as u32, 16);
            bits.put(1, 1); // ISUNCOMPRESSED
            bits.align();
            bits.bytes.extend_from_slice(chunk);
        }
        bits.put(1, 1); // ISLAST
        bits.put(1, 1); // ISLASTEMPTY
        bits.align();
        bits.bytes
    }

    #[derive(Default)]
    struct BitWriter {
        bytes: Vec<u8>,
        used: u32,
    }

    impl BitWriter {
        fn put(&mut self, v: u32, n: u32) {
            for i in 0..n {
                if self.used == 0 {
                    self.bytes.push(0);
                }
                let last = self.bytes.len() - 1;
                self.bytes[last] |= (((v >> i) & 1) as u8) << self.used;
                self.used = (self.used + 1) % 8;
            }
        }
        fn align(&mut self) {
            self.used = 0;
        }
    }
}
