//! One GET with every limit enforced: connect, first-byte and total
//! timeouts; a byte cap while streaming; the same cap on decoded output.

use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::dns::CachingResolver;
use crate::schema::FailReason;

/// Response headers stored with a page.
pub const KEPT_HEADERS: [&str; 13] = [
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "last-modified",
    "etag",
    "date",
    "expires",
    "cache-control",
    "location",
    "retry-after",
    "server",
    "x-robots-tag",
];

#[derive(Clone, Debug, PartialEq)]
pub struct FetchSettings {
    pub user_agent: String,
    pub connect_timeout: Duration,
    pub first_byte_timeout: Duration,
    pub total_timeout: Duration,
    /// Cap on the body, both as received and after decoding.
    pub max_body_bytes: usize,
    /// An extra PEM root certificate (or bundle) to trust.
    pub ca_file: Option<PathBuf>,
    /// Host names answered with a fixed address instead of DNS (like curl's
    /// `--resolve`): for staging sites and for tests on loopback.
    pub resolve: Vec<(String, std::net::IpAddr)>,
}

impl Default for FetchSettings {
    fn default() -> Self {
        FetchSettings {
            user_agent: concat!(
                "trawl/",
                env!("CARGO_PKG_VERSION"),
                " (+https://github.com/trawl-crawler/trawl)"
            )
            .to_string(),
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(20),
            total_timeout: Duration::from_secs(60),
            max_body_bytes: 10 << 20,
            ca_file: None,
            resolve: Vec::new(),
        }
    }
}

/// A response, body read and decoded.
#[derive(Debug)]
pub struct Fetched {
    pub status: u16,
    pub http_version: &'static str,
    pub headers: Vec<(String, String)>,
    pub content_type: String,
    pub location: Option<String>,
    pub retry_after: Option<String>,
    pub wire_len: u64,
    pub body: Vec<u8>,
    pub truncated: bool,
    pub elapsed: Duration,
    /// A share of the large-body budget while `body` is over
    /// [`LARGE_BODY_BYTES`].
    large: Option<tokio::sync::SemaphorePermit<'static>>,
}

impl Fetched {
    /// Frees the body and its share of the large-body budget, once what a
    /// crawl keeps of it (hash, compressed copy, parse) is made.
    pub fn release_body(&mut self) {
        self.body = Vec::new();
        self.large = None;
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{}: {detail}", reason.name())]
pub struct FetchError {
    pub reason: FailReason,
    pub detail: String,
}

type Connector = HttpsConnector<HttpConnector<CachingResolver>>;

/// Idle keep-alive connections kept per host.
const MAX_IDLE_PER_HOST: usize = 64;

/// Bodies above this hold one of [`LARGE_BODIES`] permits from the moment
/// they pass it until released: at most 4 such bodies (≤ 4 × the body cap,
/// plus their decoded copies) are in memory at once, where 64 fetches of
/// 10 MiB bodies could hold 640 MB. The others wait, their connections
/// stalled, within the fetch's total timeout.
pub const LARGE_BODY_BYTES: usize = 1 << 20;
static LARGE_BODIES: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

#[derive(Clone)]
pub struct HttpClient {
    client: Client<Connector, Empty<Bytes>>,
    settings: FetchSettings,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot read CA file {0}: {1}")]
    CaFile(PathBuf, String),
}

impl HttpClient {
    pub fn new(settings: FetchSettings) -> Result<HttpClient, ClientError> {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        if let Some(path) = &settings.ca_file {
            use rustls_pki_types::pem::PemObject;
            let err = |e: String| ClientError::CaFile(path.clone(), e);
            let certs = rustls_pki_types::CertificateDer::pem_file_iter(path)
                .map_err(|e| err(e.to_string()))?;
            let mut n = 0;
            for cert in certs {
                roots
                    .add(cert.map_err(|e| err(e.to_string()))?)
                    .map_err(|e| err(e.to_string()))?;
                n += 1;
            }
            if n == 0 {
                return Err(err("no PEM certificate in it".into()));
            }
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ClientError::CaFile(PathBuf::new(), e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut http =
            HttpConnector::new_with_resolver(CachingResolver::with_fixed(&settings.resolve));
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(settings.connect_timeout));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(30))
            // A host never has more idle connections than the crawl had in
            // flight to it, so this only bounds a lowered per-host limit. At
            // 8, a crawl with 16 per host closed and reopened a connection
            // every ~7 pages (between the engine's bursts of dispatches
            // more than 8 sat idle): socket, connect, accept and teardown
            // on both sides.
            .pool_max_idle_per_host(MAX_IDLE_PER_HOST)
            .build(https);
        Ok(HttpClient { client, settings })
    }

    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    /// GETs `url`. Never panics on anything the server sends; every failure
    /// is a [`FetchError`] with a reason.
    pub async fn get(&self, url: &str) -> Result<Fetched, FetchError> {
        let start = Instant::now();
        let deadline = tokio::time::Instant::now() + self.settings.total_timeout;
        let req = Request::get(url)
            .header(header::USER_AGENT, &self.settings.user_agent)
            .header(header::ACCEPT, "text/html,application/xhtml+xml,*/*;q=0.8")
            .header(header::ACCEPT_ENCODING, "gzip, deflate, br")
            .body(Empty::new())
            .map_err(|e| FetchError {
                reason: FailReason::Protocol,
                detail: e.to_string(),
            })?;
        let first_byte = self
            .settings
            .first_byte_timeout
            .min(self.settings.total_timeout);
        let resp = match tokio::time::timeout(first_byte, self.client.request(req)).await {
            Err(_) => return Err(timeout("no response headers in time")),
            Ok(Err(e)) => return Err(classify(&e)),
            Ok(Ok(r)) => r,
        };
        let (parts, mut body) = resp.into_parts();
        let cap = self.settings.max_body_bytes;
        let mut raw: Vec<u8> = Vec::new();
        let mut truncated = false;
        let mut large = None;
        loop {
            let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
                Err(_) => return Err(timeout("body not complete in time")),
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    return Err(FetchError {
                        reason: FailReason::Protocol,
                        detail: format!("body: {e}"),
                    });
                }
                Ok(Some(Ok(f))) => f,
            };
            if let Ok(data) = frame.into_data() {
                if large.is_none() && raw.len() + data.len() > LARGE_BODY_BYTES {
                    large = match tokio::time::timeout_at(deadline, LARGE_BODIES.acquire()).await {
                        Err(_) => return Err(timeout("waited too long to read a large body")),
                        // Never closed; a closed one would only lift the bound.
                        Ok(permit) => permit.ok(),
                    };
                }
                let room = cap.saturating_sub(raw.len());
                if data.len() > room {
                    raw.extend_from_slice(&data[..room]);
                    truncated = true;
                    break;
                }
                raw.extend_from_slice(&data);
            }
        }
        let wire_len = raw.len() as u64;
        let encoding = parts
            .headers
            .get(header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let (body, cut) = decode_content(raw, encoding, cap);
        Ok(Fetched {
            status: parts.status.as_u16(),
            http_version: version_name(parts.version),
            content_type: header_str(&parts.headers, header::CONTENT_TYPE.as_str())
                .unwrap_or_default(),
            location: header_str(&parts.headers, header::LOCATION.as_str()),
            retry_after: header_str(&parts.headers, header::RETRY_AFTER.as_str()),
            headers: KEPT_HEADERS
                .iter()
                .filter_map(|&k| header_str(&parts.headers, k).map(|v| (k.to_string(), v)))
                .collect(),
            wire_len,
            body,
            truncated: truncated || cut,
            elapsed: start.elapsed(),
            large,
        })
    }
}

fn timeout(detail: &str) -> FetchError {
    FetchError {
        reason: FailReason::Timeout,
        detail: detail.to_string(),
    }
}

fn header_str(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

fn version_name(v: http::Version) -> &'static str {
    match v {
        http::Version::HTTP_09 => "HTTP/0.9",
        http::Version::HTTP_10 => "HTTP/1.0",
        http::Version::HTTP_2 => "HTTP/2",
        http::Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

/// Undoes Content-Encoding, stopping at `cap` bytes of output. A stream
/// that is corrupt or cut short yields what decoded before the fault.
fn decode_content(raw: Vec<u8>, encoding: &str, cap: usize) -> (Vec<u8>, bool) {
    let enc = encoding.trim().to_ascii_lowercase();
    let limit = cap as u64 + 1;
    let mut out = Vec::new();
    let src = &raw[..];
    let _ = match enc.as_str() {
        "gzip" | "x-gzip" => flate2::read::MultiGzDecoder::new(src)
            .take(limit)
            .read_to_end(&mut out),
        "deflate" => {
            // Servers send both zlib-wrapped and raw deflate under this name.
            let r = flate2::read::ZlibDecoder::new(src)
                .take(limit)
                .read_to_end(&mut out);
            if r.is_err() && out.is_empty() {
                flate2::read::DeflateDecoder::new(src)
                    .take(limit)
                    .read_to_end(&mut out)
            } else {
                r
            }
        }
        "br" => brotli_decompressor::Decompressor::new(src, 4096)
            .take(limit)
            .read_to_end(&mut out),
        _ => return (raw, false),
    };
    let cut = out.len() > cap;
    out.truncate(cap);
    (out, cut)
}

/// Maps a client error to a failure reason by walking its source chain.
fn classify(e: &hyper_util::client::legacy::Error) -> FetchError {
    let mut detail = e.to_string();
    let mut reason = if e.is_connect() {
        FailReason::Connect
    } else {
        FailReason::Protocol
    };
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        detail = format!("{detail}: {s}");
        if s.downcast_ref::<rustls::Error>().is_some() {
            reason = FailReason::Tls;
        } else if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::TimedOut {
                reason = FailReason::Timeout;
            } else if io.get_ref().is_some_and(|i| i.is::<rustls::Error>()) {
                reason = FailReason::Tls;
            }
        }
        let text = s.to_string().to_ascii_lowercase();
        // hyper-util boxes connector errors, so rustls' type is not always
        // reachable by downcasting; its messages are distinctive enough.
        if text.contains("certificate") || text.contains("handshake") || text.contains("tls") {
            reason = FailReason::Tls;
        }
        if reason == FailReason::Connect
            && (text.contains("dns") || text.contains("lookup") || text.contains("resolve"))
        {
            reason = FailReason::Dns;
        }
        src = s.source();
    }
    FetchError { reason, detail }
}

/// `Retry-After` as milliseconds from now (delta-seconds or an HTTP date).
pub fn retry_after_ms(value: &str) -> Option<u64> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(secs.saturating_mul(1000));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
    )
}

/// Whether a status asks the client to slow down.
pub fn is_backoff(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_bomb_stops_at_cap() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(&vec![b'a'; 5 << 20]).unwrap();
        let gz = enc.finish().unwrap();
        let (out, cut) = decode_content(gz.clone(), "gzip", 1 << 20);
        assert_eq!((out.len(), cut), (1 << 20, true));
        let (out, cut) = decode_content(gz, "GZIP", 8 << 20);
        assert_eq!((out.len(), cut), (5 << 20, false));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after_ms("7"), Some(7000));
        assert_eq!(retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT"), Some(0));
        assert_eq!(retry_after_ms("soon"), None);
    }
}
