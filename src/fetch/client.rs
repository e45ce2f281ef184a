//! One GET with every limit enforced: connect, first-byte and total
//! timeouts; a byte cap while streaming; the same cap on decoded output.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::body::{BodyRules, read_body};
use super::budget::{ByteBudget, Ticket};
use super::connect::{ConnectError, GuardedConnector};
use super::dns::CachingResolver;
use super::guard::NetGuard;
use super::pool::{ConnPool, PoolLimits, SendError, Sent, io_reason, request_head};
use super::wire::{Wire, response_head};
use crate::model::FailReason;
use http::{HeaderMap, HeaderValue, Uri, header};

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
    /// Connect to loopback and private addresses other than the seeds' own
    /// (`net.allow_private`; link-local and metadata ones stay refused).
    pub allow_private: bool,
    /// Bytes of bodies in flight at most, beyond each body's first 64 KiB
    /// (`fetch.memory_budget`; one body may overdraw it, see `budget`).
    pub memory_budget: usize,
    /// Keep-alive connections left open between requests, across all
    /// hosts; past it the least recently used is closed.
    pub idle_connections: usize,
    /// A body that brings less than this many bytes a second over a whole
    /// `min_speed_window` is cut as `too-slow` (0: no minimum).
    pub min_speed: u64,
    pub min_speed_window: Duration,
    /// Keep what went over the wire (`Fetched::wire`) for WARC records.
    pub keep_wire: bool,
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
            allow_private: false,
            memory_budget: 32 << 20,
            idle_connections: IDLE_CONNECTIONS,
            min_speed: 1024,
            min_speed_window: Duration::from_secs(10),
            keep_wire: false,
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
    /// The exchange as on the wire, when the client keeps it.
    pub wire: Option<Box<Wire>>,
    /// The body's share of the client's byte budget, held until the
    /// response is dropped (after the crawl has recorded it).
    ticket: Ticket,
    /// Bytes counted since the body was released.
    kept: usize,
}

impl Fetched {
    /// Frees the body once what a crawl keeps of it (hash, compressed
    /// copy, parse) is made; `kept` bytes of those stay counted against the
    /// budget until this response is dropped.
    pub fn release_body(&mut self, kept: usize) {
        self.body = Vec::new();
        self.kept = kept;
        self.ticket.settle(kept);
    }

    /// Counts `bytes` more kept until this response is dropped (without
    /// waiting: they are held already).
    pub fn hold_also(&mut self, bytes: usize) {
        self.kept += bytes;
        self.ticket.settle(self.kept);
    }

    /// Runs `read` over the body with a `hold(bytes)` that waits, up to
    /// `patience`, until the budget lets this response hold `bytes` more
    /// than its body (false: it stayed spent). For work on the blocking
    /// pool that keeps what it reads (a sitemap's entries): it blocks its
    /// thread while it waits.
    pub fn read_holding<T>(
        &mut self,
        patience: Duration,
        read: impl FnOnce(&[u8], &mut dyn FnMut(usize) -> bool) -> T,
    ) -> T {
        let body_len = self.body.len();
        let ticket = &mut self.ticket;
        let handle = tokio::runtime::Handle::try_current().ok();
        let mut hold = |extra: usize| match &handle {
            Some(h) => h.block_on(async {
                tokio::time::timeout(patience, ticket.grow_to(body_len + extra))
                    .await
                    .is_ok()
            }),
            None => true,
        };
        read(&self.body, &mut hold)
    }

    /// A response read from elsewhere (a WARC file), not the network:
    /// the headers a fetch keeps picked from `headers`, its own budget.
    pub fn stored(
        status: u16,
        http_version: &'static str,
        headers: &[(String, String)],
        body: Vec<u8>,
        truncated: bool,
        wire_len: u64,
    ) -> Fetched {
        let named = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let kept = KEPT_HEADERS
            .iter()
            .filter_map(|&k| named(k).map(|v| (k.to_string(), v)))
            .collect();
        Fetched {
            status,
            http_version,
            headers: kept,
            content_type: named("content-type").unwrap_or_default(),
            location: named("location"),
            retry_after: named("retry-after"),
            wire_len,
            body,
            truncated,
            elapsed: Duration::ZERO,
            wire: None,
            ticket: ByteBudget::new(usize::MAX / 2).ticket(0),
            kept: 0,
        }
    }

    /// A response made here, not read from the network (for the ledger's
    /// tests): `headers` as the client keeps them.
    #[cfg(test)]
    pub(crate) fn offline(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Fetched {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut f = Fetched::stored(status, "HTTP/1.1", &headers, body.to_vec(), false, 0);
        f.wire_len = body.len() as u64;
        f.elapsed = Duration::from_millis(1);
        f
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
    /// Not the URL's failure: it is queued again (a fetch that waited too
    /// long for memory other fetches held).
    pub later: bool,
}

impl FetchError {
    pub fn new(reason: FailReason, detail: impl Into<String>) -> FetchError {
        FetchError {
            reason,
            detail: detail.into(),
            later: false,
        }
    }

    /// A fetch given up for now, to be asked for again.
    pub fn later(detail: String) -> FetchError {
        FetchError {
            reason: FailReason::Timeout,
            detail,
            later: true,
        }
    }
}

/// Idle keep-alive connections kept per host. A host never has more idle
/// connections than the crawl had in flight to it, so this only bounds a
/// lowered per-host limit. At 8, a crawl with 16 per host closed and
/// reopened a connection every ~7 pages (between the scheduler's bursts of
/// dispatches more than 8 sat idle).
const MAX_IDLE_PER_HOST: usize = 64;
/// Idle keep-alive connections kept across hosts: eight times the default
/// concurrency, so the hosts a crawl rotates through keep theirs, while a
/// crawl over thousands of hosts does not keep one for each.
const IDLE_CONNECTIONS: usize = 256;
/// How long an idle connection is kept for reuse.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub struct HttpClient {
    pool: ConnPool,
    /// The headers of every request (Host is added per request).
    headers: HeaderMap,
    settings: FetchSettings,
    /// Bytes of bodies in flight (read, decoded, kept until recorded).
    budget: Arc<ByteBudget>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot read CA file {0}: {1}")]
    CaFile(PathBuf, String),
    #[error("user agent {0:?} is not a valid header value: use printable ASCII")]
    UserAgent(String),
}

impl HttpClient {
    /// A client whose every connection `guard` vets (its seed addresses
    /// are shared with every clone and with other clients of the guard).
    pub fn new(settings: FetchSettings, guard: NetGuard) -> Result<HttpClient, ClientError> {
        let budget = ByteBudget::new(settings.memory_budget);
        Self::with_budget(settings, guard, budget)
    }

    /// A client for new settings that shares this one's byte budget (its
    /// limit set to theirs), so bodies the old client still holds count
    /// against the same bound.
    pub fn retuned(
        &self,
        settings: FetchSettings,
        guard: NetGuard,
    ) -> Result<HttpClient, ClientError> {
        let client = Self::with_budget(settings, guard, self.budget.clone())?;
        client.budget.set_limit(client.settings.memory_budget);
        Ok(client)
    }

    fn with_budget(
        settings: FetchSettings,
        guard: NetGuard,
        budget: Arc<ByteBudget>,
    ) -> Result<HttpClient, ClientError> {
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
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ClientError::CaFile(PathBuf::new(), e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let tcp = GuardedConnector {
            resolver: CachingResolver::with_fixed(&settings.resolve),
            guard,
            allow_private: settings.allow_private,
            connect_timeout: settings.connect_timeout,
        };
        let limits = PoolLimits {
            idle: settings.idle_connections,
            idle_per_origin: MAX_IDLE_PER_HOST,
            idle_timeout: IDLE_TIMEOUT,
        };
        let pool = ConnPool::new(tcp, Arc::new(tls), limits);
        let headers = request_headers(&settings.user_agent)?;
        budget.set_min_rate(usize::try_from(settings.min_speed).unwrap_or(usize::MAX));
        Ok(HttpClient {
            pool,
            headers,
            settings,
            budget,
        })
    }

    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    pub fn budget(&self) -> &Arc<ByteBudget> {
        &self.budget
    }

    /// The budget, to take tickets from it in tests.
    #[cfg(test)]
    pub fn budget_for_tests(&self) -> &Arc<ByteBudget> {
        &self.budget
    }

    /// Keep-alive connections open and idle now.
    #[cfg(test)]
    pub fn idle_connections(&self) -> usize {
        self.pool.idle_count()
    }

    /// GETs `url`. Never panics on anything the server sends; every failure
    /// is a [`FetchError`] with a reason.
    pub async fn get(&self, url: &str) -> Result<Fetched, FetchError> {
        self.get_with(url, &self.headers).await
    }

    /// GETs `url` as a revisit: with `If-None-Match` and
    /// `If-Modified-Since` from the stored version's validators, its
    /// `etag` and `last_modified` (a value that is not a valid header is
    /// not sent).
    pub async fn revalidate(
        &self,
        url: &str,
        etag: Option<&str>,
        last_modified: Option<&str>,
    ) -> Result<Fetched, FetchError> {
        let mut headers = self.headers.clone();
        let pairs = [
            (header::IF_NONE_MATCH, etag),
            (header::IF_MODIFIED_SINCE, last_modified),
        ];
        for (name, value) in pairs {
            if let Some(v) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
                headers.insert(name, v);
            }
        }
        self.get_with(url, &headers).await
    }

    async fn get_with(&self, url: &str, headers: &HeaderMap) -> Result<Fetched, FetchError> {
        let start = Instant::now();
        let deadline = tokio::time::Instant::now() + self.settings.total_timeout;
        let uri: Uri = url
            .parse()
            .map_err(|e| FetchError::new(FailReason::Protocol, format!("{url}: {e}")))?;
        let first_byte = self
            .settings
            .first_byte_timeout
            .min(self.settings.total_timeout);
        let date_ms = crate::model::now_ms();
        let sent = match tokio::time::timeout(first_byte, self.pool.get(&uri, headers)).await {
            Err(_) => return Err(timeout("no response headers in time")),
            Ok(Err(e)) => return Err(classify(&e)),
            Ok(Ok(r)) => r,
        };
        let Sent {
            response,
            checkin: conn,
            peer,
        } = sent;
        let (parts, body) = response.into_parts();
        let encoding = parts
            .headers
            .get(header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let mut ticket = self.budget.ticket(host_key(&uri));
        let rules = BodyRules {
            cap: self.settings.max_body_bytes,
            deadline,
            min_speed: self.settings.min_speed,
            window: self.settings.min_speed_window,
            memory_patience: self.settings.total_timeout,
            keep_raw: self.settings.keep_wire,
        };
        let wire_head = self.settings.keep_wire.then(|| response_head(&parts));
        let mut read = read_body(body, encoding, &rules, &mut ticket).await?;
        if let (Some(conn), true) = (conn, read.complete) {
            conn.done();
        }
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
            wire_len: read.wire_len,
            body: read.bytes,
            truncated: read.truncated,
            elapsed: start.elapsed(),
            wire: wire_head.map(|response_head| {
                Box::new(Wire {
                    request: request_head(&uri, headers),
                    response_head,
                    raw_body: read.raw.take(),
                    peer,
                    date_ms,
                })
            }),
            ticket,
            kept: 0,
        })
    }
}

/// The headers every request carries.
fn request_headers(user_agent: &str) -> Result<HeaderMap, ClientError> {
    let mut h = HeaderMap::new();
    let agent = HeaderValue::from_str(user_agent)
        .map_err(|_| ClientError::UserAgent(user_agent.to_string()))?;
    h.insert(header::USER_AGENT, agent);
    h.insert(
        header::ACCEPT,
        HeaderValue::from_static("text/html,application/xhtml+xml,*/*;q=0.8"),
    );
    h.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("gzip, deflate, br"),
    );
    Ok(h)
}

fn timeout(detail: &str) -> FetchError {
    FetchError::new(FailReason::Timeout, detail)
}

/// What tells the hosts' shares of the byte budget apart: the origin.
fn host_key(uri: &Uri) -> u64 {
    let authority = uri.authority().map_or("", |a| a.as_str());
    xxhash_rust::xxh3::xxh3_64(authority.as_bytes())
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

/// Maps a request's failure to a failure reason.
fn classify(e: &SendError) -> FetchError {
    let fail = |reason, detail: String| FetchError::new(reason, detail);
    match e {
        SendError::Connect(c) => {
            let reason = match c {
                ConnectError::Dns { .. } => FailReason::Dns,
                ConnectError::Guard(_) => FailReason::NetworkGuard,
                ConnectError::Timeout(_) => FailReason::Timeout,
                ConnectError::Io { .. } | ConnectError::NoHost => FailReason::Connect,
            };
            fail(reason, c.to_string())
        }
        SendError::Tls(io) => match rustls_error(io) {
            Some(tls) => fail(FailReason::Tls, format!("TLS: {tls}")),
            // A reset or end of stream during the handshake, not TLS's say.
            None => fail(FailReason::Connect, format!("TLS handshake: {io}")),
        },
        SendError::Http(h) => classify_hyper(h),
        SendError::Url(detail) => fail(FailReason::Protocol, detail.clone()),
    }
}

/// The rustls error `e` is, or wraps in (possibly nested) io::Errors.
fn rustls_error<'a>(mut e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    loop {
        if let Some(r) = e.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        e = e.downcast_ref::<std::io::Error>()?.get_ref()?;
    }
}

/// What hyper's own error says about the response (its status line and
/// headers, or the connection under them).
fn classify_hyper(h: &hyper::Error) -> FetchError {
    let reason = if h.is_parse_too_large() {
        FailReason::HeadersTooLarge
    } else if h.is_parse() || h.is_parse_status() {
        FailReason::BadResponse
    } else if h.is_incomplete_message() || h.is_closed() || h.is_canceled() {
        FailReason::Incomplete
    } else if h.is_timeout() {
        FailReason::Timeout
    } else {
        io_reason(h).unwrap_or(FailReason::Protocol)
    };
    let detail = match std::error::Error::source(h) {
        Some(cause) => format!("{h}: {cause}"),
        None => h.to_string(),
    };
    FetchError::new(reason, detail)
}

/// A failure while reading the body (after the headers).
pub(super) fn body_error(e: &hyper::Error) -> FetchError {
    let reason = if e.is_incomplete_message() {
        FailReason::Incomplete
    } else {
        io_reason(e).unwrap_or(FailReason::Protocol)
    };
    let detail = match std::error::Error::source(e) {
        Some(cause) => format!("body: {e}: {cause}"),
        None => format!("body: {e}"),
    };
    FetchError::new(reason, detail)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after_ms("7"), Some(7000));
        assert_eq!(retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT"), Some(0));
        assert_eq!(retry_after_ms("soon"), None);
    }
}
