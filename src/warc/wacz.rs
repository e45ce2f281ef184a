//! WACZ 1.1.1 (Webrecorder's package of a web archive, as Browsertrix
//! writes it and ReplayWeb.page opens it): a ZIP, every file stored (not
//! deflated), with the WARC files under `archive/`, a CDXJ index of them under
//! `indexes/`, a page list `pages/pages.jsonl`, and `datapackage.json`
//! listing every file with its SHA-256 and size, itself hashed in
//! `datapackage-digest.json`.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use ring::digest::{Context, SHA256};
use serde_json::json;
use zip::CompressionMethod;
use zip::write::SimpleFileOptions;

use crate::model::{Utc, now_ms};

/// A WACZ being written.
pub struct WaczWriter {
    zip: zip::ZipWriter<BufWriter<File>>,
    /// Each file's path in the package, SHA-256 and size.
    resources: Vec<(String, String, u64)>,
}

/// Hashes and counts what passes through.
struct Hashing<'a, W> {
    inner: &'a mut W,
    hash: Context,
    bytes: u64,
}

impl<W: Write> Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl WaczWriter {
    pub fn create(path: &Path) -> io::Result<WaczWriter> {
        let file = BufWriter::new(File::create(path)?);
        Ok(WaczWriter {
            zip: zip::ZipWriter::new(file),
            resources: Vec::new(),
        })
    }

    /// Adds a file at `path` in the package from `from`, stored (as WACZ
    /// requires of WARCs; the rest is small beside them).
    pub fn add(&mut self, path: &str, from: &mut impl Read) -> io::Result<()> {
        let opts = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(true);
        self.zip.start_file(path, opts).map_err(io::Error::other)?;
        let mut out = Hashing {
            inner: &mut self.zip,
            hash: Context::new(&SHA256),
            bytes: 0,
        };
        io::copy(from, &mut out)?;
        let hash = format!(
            "sha256:{}",
            data_encoding::HEXLOWER.encode(out.hash.finish().as_ref())
        );
        self.resources.push((path.to_string(), hash, out.bytes));
        Ok(())
    }

    /// Writes `datapackage.json` (titled `title`, its main page
    /// `main_page` when there is one) and its digest, and closes the ZIP.
    pub fn finish(mut self, title: &str, main_page: Option<(&str, u64)>) -> io::Result<()> {
        let resources: Vec<_> = (self.resources.iter())
            .map(|(path, hash, bytes)| {
                json!({"name": resource_name(path), "path": path, "hash": hash, "bytes": bytes})
            })
            .collect();
        let mut package = json!({
            "profile": "data-package",
            "resources": resources,
            "title": title,
            "created": Utc::of_ms(now_ms()).iso_millis(),
            "wacz_version": "1.1.1",
            "software": format!("trawl/{}", env!("CARGO_PKG_VERSION")),
        });
        if let Some((url, ms)) = main_page {
            package["mainPageURL"] = json!(url);
            package["mainPageDate"] = json!(Utc::of_ms(ms).iso_millis());
        }
        let bytes = serde_json::to_vec_pretty(&package).map_err(io::Error::other)?;
        let digest = ring::digest::digest(&SHA256, &bytes);
        let digest = json!({
            "path": "datapackage.json",
            "hash": format!("sha256:{}", data_encoding::HEXLOWER.encode(digest.as_ref())),
        });
        let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
        self.zip
            .start_file("datapackage.json", opts)
            .map_err(io::Error::other)?;
        self.zip.write_all(&bytes)?;
        self.zip
            .start_file("datapackage-digest.json", opts)
            .map_err(io::Error::other)?;
        let digest = serde_json::to_vec_pretty(&digest).map_err(io::Error::other)?;
        self.zip.write_all(&digest)?;
        let mut file = self.zip.finish().map_err(io::Error::other)?;
        file.flush()?;
        file.into_inner().map_err(|e| e.into_error())?.sync_all()
    }
}

/// A Frictionless resource name for `path`: its file name, lower case,
/// with what the name pattern (`[a-z0-9._-]`) does not allow as `-`.
fn resource_name(path: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    base.chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '-',
        })
        .collect()
}
