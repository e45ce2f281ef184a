//! zstd dictionaries that page frames are compressed with. A crawl trains
//! one per db from its first pages and keeps it in `meta` (`dict:` ‖ id).
//! A frame names its dictionary by id in its header, so a reader needs
//! only a table from id to bytes. This module holds that table for the
//! whole process; `Store` fills it when it opens a db, and the crawl
//! fills it when it trains a dictionary. The id is zstd's hash of the
//! dictionary's content, so one table serves every db a process opens.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, LazyLock, RwLock};

use zstd::bulk::Decompressor;
use zstd::zstd_safe;

/// Largest dictionary trained (zstd's default, 110 KiB). On the bench
/// site, 1,000 pages compressed at level 3 to 2.43× with it, against
/// 1.91× without a dictionary and 2.32× with 32 KiB.
pub const MAX_SIZE: usize = 112_640;

static KNOWN: LazyLock<RwLock<HashMap<u32, Arc<[u8]>>>> = LazyLock::new(Default::default);

/// A dictionary and its id.
#[derive(Clone, Debug)]
pub struct Dictionary {
    pub id: u32,
    pub bytes: Arc<[u8]>,
}

impl Dictionary {
    /// Reads a zstd dictionary (from `meta`, or just trained). Returns None
    /// for bytes that are not a dictionary or carry no id.
    pub fn from_bytes(bytes: &[u8]) -> Option<Dictionary> {
        let id = zstd_safe::get_dict_id_from_dict(bytes)?.get();
        Some(Dictionary {
            id,
            bytes: bytes.into(),
        })
    }

    /// Trains a dictionary on `samples` (pages' bodies).
    pub fn train<S: AsRef<[u8]>>(samples: &[S]) -> io::Result<Dictionary> {
        let bytes = fast_cover(samples)?;
        Dictionary::from_bytes(&bytes)
            .ok_or_else(|| io::Error::other("zstd trained a dictionary without an id"))
    }

    /// Adds it to the table that frame decoding reads.
    pub fn register(&self) {
        let mut known = KNOWN.write().unwrap_or_else(|e| e.into_inner());
        known.entry(self.id).or_insert_with(|| self.bytes.clone());
    }
}

/// Whether the dictionary with this id is registered.
pub fn is_known(id: u32) -> bool {
    let known = KNOWN.read().unwrap_or_else(|e| e.into_inner());
    known.contains_key(&id)
}

/// zstd's fastCover parameters (`ZDICT_fastCover_params_t` of zdict.h's
/// static-linking section, unchanged since zstd 1.4; the zstd crate does
/// not expose it, but the library it links holds the function). The last
/// three fields are its nested `ZDICT_params_t zParams`, laid out alike.
#[repr(C)]
struct FastCoverParams {
    k: u32,
    d: u32,
    f: u32,
    steps: u32,
    nb_threads: u32,
    split_point: f64,
    accel: u32,
    shrink_dict: u32,
    shrink_dict_max_regression: u32,
    compression_level: i32,
    notification_level: u32,
    dict_id: u32,
}

// The C struct's size on 64-bit targets (an edit that moved a field fails
// here, not in zstd).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<FastCoverParams>() == 56);

unsafe extern "C" {
    fn ZDICT_trainFromBuffer_fastCover(
        dict_buffer: *mut std::ffi::c_void,
        dict_buffer_capacity: usize,
        samples_buffer: *const std::ffi::c_void,
        samples_sizes: *const usize,
        nb_samples: u32,
        parameters: FastCoverParams,
    ) -> usize;
    fn ZDICT_isError(code: usize) -> u32;
}

/// fastCover with fixed segment and d-mer sizes. `zstd::dict::from_samples`
/// searches k (and scores each by compressing a quarter of the samples):
/// on 4 MiB of rust-doc pages 0.36 s for frames 11.25× smaller at level 2;
/// k = 1000, d = 8 took 0.09 s for 11.16× (bench site: 0.68 s and 0.26 s,
/// both 2.36×). Training was 5 % of a rust-doc crawl's CPU.
fn fast_cover<S: AsRef<[u8]>>(samples: &[S]) -> io::Result<Vec<u8>> {
    let flat: Vec<u8> = samples.iter().flat_map(|s| s.as_ref()).copied().collect();
    let sizes: Vec<usize> = samples.iter().map(|s| s.as_ref().len()).collect();
    let params = FastCoverParams {
        k: 1000,
        d: 8,
        f: 20,
        // Read only by the optimizing trainer (this one trains on all).
        steps: 0,
        nb_threads: 0,
        split_point: 1.0,
        accel: 1,
        shrink_dict: 0,
        shrink_dict_max_regression: 0,
        // The entropy tables are tuned for the level frames are written
        // at (crawl::frame's DICT_LEVEL).
        compression_level: 1,
        notification_level: 0,
        dict_id: 0,
    };
    let mut dict = vec![0u8; MAX_SIZE];
    let count = u32::try_from(sizes.len()).map_err(io::Error::other)?;
    // SAFETY: both buffers outlive the call and hold the lengths given;
    // zstd writes at most `dict.len()` bytes into `dict`.
    let written = unsafe {
        ZDICT_trainFromBuffer_fastCover(
            dict.as_mut_ptr().cast(),
            dict.len(),
            flat.as_ptr().cast(),
            sizes.as_ptr(),
            count,
            params,
        )
    };
    // SAFETY: a pure function of the code.
    if unsafe { ZDICT_isError(written) } != 0 {
        return Err(io::Error::other(format!(
            "zstd could not train a dictionary: {}",
            zstd_safe::get_error_name(written)
        )));
    }
    dict.truncate(written);
    Ok(dict)
}

fn known(id: u32) -> Option<Arc<[u8]>> {
    let known = KNOWN.read().unwrap_or_else(|e| e.into_inner());
    known.get(&id).cloned()
}

thread_local! {
    /// One context per thread for frames without a dictionary (creating one
    /// per page was 12 % of a refilter's profile), and one for the last
    /// dictionary this thread used.
    static PLAIN: RefCell<Option<Decompressor<'static>>> = RefCell::new(Decompressor::new().ok());
    static WITH_DICT: RefCell<Option<(u32, Decompressor<'static>)>> = const { RefCell::new(None) };
}

/// Decompresses one zstd frame that decodes to at most `capacity` bytes,
/// with the dictionary its header names, if any.
pub fn decompress(frame: &[u8], capacity: usize) -> io::Result<Vec<u8>> {
    let Some(id) = zstd_safe::get_dict_id_from_frame(frame).map(|id| id.get()) else {
        let decoded = PLAIN.with(|d| match d.borrow_mut().as_mut() {
            Some(d) => d.decompress(frame, capacity),
            None => zstd::bulk::decompress(frame, capacity),
        });
        // A frame written by `zstd::stream` may hold more than its
        // lengths promised (before schema 9 none were checked).
        return decoded.or_else(|_| zstd::decode_all(frame));
    };
    WITH_DICT.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.as_ref().is_none_or(|(have, _)| *have != id) {
            let bytes = known(id).ok_or_else(|| {
                io::Error::other(format!(
                    "the frame was compressed with zstd dictionary {id}, which this db does not hold (its meta row dict:{id} is missing or unreadable)"
                ))
            })?;
            *cell = Some((id, Decompressor::with_dictionary(&bytes)?));
        }
        let (_, d) = cell.as_mut().expect("set above");
        d.decompress(frame, capacity)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of one made-up site: a shared frame around varying words.
    fn pages(n: usize) -> Vec<Vec<u8>> {
        let mut x = 7u32;
        (0..n)
            .map(|i| {
                let mut words = String::new();
                for _ in 0..300 {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    words += &format!("w{} ", (x >> 8) % 3000);
                }
                format!(
                    "<!doctype html><html><head><title>Page {i}</title><link rel=stylesheet href=/site.css></head>\
                     <body><nav><a href=/>Home</a> <a href=/news/>News</a> <a href=/about/>About us</a></nav>\
                     <main><h1>Page {i}</h1><p>{words}</p></main><footer>© Example Site. All rights reserved.</footer></body></html>"
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn a_trained_dictionary_round_trips_and_shrinks_frames() {
        let samples = pages(200);
        let dict = Dictionary::train(&samples).unwrap();
        dict.register();
        let page = &pages(201)[200];
        let mut enc = zstd::bulk::Compressor::with_dictionary(3, &dict.bytes).unwrap();
        let with = enc.compress(page).unwrap();
        let without = zstd::bulk::compress(page, 3).unwrap();
        assert!(
            with.len() < without.len(),
            "{} {}",
            with.len(),
            without.len()
        );
        assert_eq!(
            zstd_safe::get_dict_id_from_frame(&with).map(|i| i.get()),
            Some(dict.id)
        );
        assert_eq!(&decompress(&with, page.len()).unwrap(), page);
        assert_eq!(&decompress(&without, page.len()).unwrap(), page);
    }

    #[test]
    fn a_frame_whose_dictionary_is_unknown_fails_with_its_id() {
        let dict = Dictionary::train(&pages(100)).unwrap();
        let mut bytes = dict.bytes.to_vec();
        // Another id in the header (bytes 4..8), never registered.
        bytes[4..8].copy_from_slice(&0x0bad_1d00u32.to_le_bytes());
        let frame = zstd::bulk::Compressor::with_dictionary(1, &bytes)
            .unwrap()
            .compress(b"some page")
            .unwrap();
        let err = decompress(&frame, 100).unwrap_err().to_string();
        assert!(err.contains(&0x0bad_1d00u32.to_string()), "{err}");
    }

    #[test]
    fn too_few_samples_train_no_dictionary() {
        let err = Dictionary::train(&pages(3)).unwrap_err().to_string();
        assert!(err.contains("could not train"), "{err}");
    }

    #[test]
    fn bytes_that_are_not_a_dictionary_are_refused() {
        assert!(Dictionary::from_bytes(b"not a dictionary").is_none());
    }
}
