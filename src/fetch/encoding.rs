//! Undoing Content-Encoding (gzip, deflate, br) a block at a time, each
//! block counted against the byte budget and the output stopped at the
//! body cap, so a decompression bomb costs what the cap allows and no more.

use std::io::Read;

use super::FetchError;
use super::budget::Ticket;
use crate::model::FailReason;

/// Output read from a decoder at a time.
const BLOCK: usize = 64 << 10;

/// The decoded body and whether it was cut (at `cap`, or a stream that
/// broke after some output). A body that does not decode at all as its
/// encoding claims (`Content-Encoding: gzip` on plain text, say) is a
/// `bad-encoding` failure.
pub async fn decode_content(
    raw: Vec<u8>,
    encoding: &str,
    cap: usize,
    ticket: &mut Ticket,
    deadline: tokio::time::Instant,
) -> Result<(Vec<u8>, bool), FetchError> {
    let enc = encoding.trim().to_ascii_lowercase();
    if raw.is_empty() || !matches!(enc.as_str(), "gzip" | "x-gzip" | "deflate" | "br") {
        return Ok((raw, false));
    }
    let mut out = Vec::new();
    let mut cut = false;
    let mut reader = decoder(&enc, &raw, false);
    let mut block = vec![0u8; BLOCK];
    let mut blocks = 0u32;
    loop {
        let n = match reader.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            // Servers send both zlib-wrapped and raw deflate as "deflate".
            Err(_) if enc == "deflate" && out.is_empty() && blocks == 0 => {
                reader = decoder(&enc, &raw, true);
                blocks += 1;
                continue;
            }
            Err(e) if out.is_empty() => {
                return Err(FetchError {
                    reason: FailReason::BadEncoding,
                    detail: format!(
                        "the body is not {enc} as its Content-Encoding says ({e}; {} bytes)",
                        raw.len()
                    ),
                });
            }
            Err(_) => {
                cut = true; // a broken stream: keep what came out before it
                break;
            }
        };
        blocks += 1;
        let take = n.min(cap - out.len());
        if tokio::time::timeout_at(deadline, ticket.grow_to(raw.len() + out.len() + take))
            .await
            .is_err()
        {
            return Err(FetchError {
                reason: FailReason::Timeout,
                detail: "body not decoded in time (waiting for memory)".into(),
            });
        }
        out.extend_from_slice(&block[..take]);
        if take < n || out.len() == cap {
            // At the cap: cut if anything is left.
            cut = take < n || reader.read(&mut block[..1]).is_ok_and(|m| m > 0);
            break;
        }
        if blocks.is_multiple_of(16) {
            // A long decode must not hold a reactor thread for long.
            tokio::task::yield_now().await;
        }
    }
    drop(reader);
    drop(raw);
    ticket.settle(out.len());
    Ok((out, cut))
}

fn decoder<'a>(enc: &str, raw: &'a [u8], raw_deflate: bool) -> Box<dyn Read + Send + 'a> {
    match enc {
        "gzip" | "x-gzip" => Box::new(flate2::read::MultiGzDecoder::new(raw)),
        "deflate" if raw_deflate => Box::new(flate2::read::DeflateDecoder::new(raw)),
        "deflate" => Box::new(flate2::read::ZlibDecoder::new(raw)),
        _ => Box::new(brotli_decompressor::Decompressor::new(raw, 4096)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::budget::ByteBudget;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    async fn decode(raw: Vec<u8>, enc: &str, cap: usize) -> Result<(Vec<u8>, bool), FetchError> {
        let budget = ByteBudget::new(1 << 30);
        let mut t = budget.ticket();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        decode_content(raw, enc, cap, &mut t, deadline).await
    }

    #[tokio::test]
    async fn bombs_stop_at_the_cap_and_fakes_are_refused() {
        let gz = gzip(&vec![b'a'; 5 << 20]);
        let (out, cut) = decode(gz.clone(), "gzip", 1 << 20).await.unwrap();
        assert_eq!((out.len(), cut), (1 << 20, true));
        let (out, cut) = decode(gz.clone(), "GZIP", 8 << 20).await.unwrap();
        assert_eq!((out.len(), cut), (5 << 20, false));
        let (out, cut) = decode(gz, "gzip", 5 << 20).await.unwrap();
        assert_eq!(
            (out.len(), cut),
            (5 << 20, false),
            "exactly the cap is whole"
        );
        // Plain text that claims to be gzip.
        let e = decode(b"<html>plain</html>".to_vec(), "gzip", 1 << 20)
            .await
            .unwrap_err();
        assert_eq!(e.reason, FailReason::BadEncoding);
        // A stream cut in the middle keeps what decoded.
        let gz = gzip(&vec![b'b'; 1 << 20]);
        let (out, cut) = decode(gz[..gz.len() / 2].to_vec(), "gzip", 8 << 20)
            .await
            .unwrap();
        assert!(cut && !out.is_empty());
        // Raw deflate under the name deflate.
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"raw deflate").unwrap();
        let (out, _) = decode(enc.finish().unwrap(), "deflate", 100).await.unwrap();
        assert_eq!(out, b"raw deflate");
        // Unknown encodings pass through.
        let (out, cut) = decode(b"x".to_vec(), "zstd", 10).await.unwrap();
        assert_eq!((out.as_slice(), cut), (&b"x"[..], false));
    }
}
