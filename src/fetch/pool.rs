//! Keep-alive connections: HTTP/1 ones pooled per origin with the idle
//! ones bounded across all origins (the least recently used closed
//! first), and one shared HTTP/2 connection per origin. Built on hyper's
//! connection API rather than hyper-util's pooled client, whose bound is
//! per host only: a crawl over 10,000 hosts kept a connection open for
//! every host it had been to in the last 30 s (~7,650 sockets, 441 MB of
//! RSS), and closing them from outside its pool left dead entries in it
//! (8 KiB each) and raced its checkouts.
//!
//! A request that fails on a reused connection before any response (the
//! server closed it as the request went out, as servers do with idle
//! keep-alive connections) is sent again once on a new connection: every
//! request here is a GET.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response, Uri, header};
use http_body_util::Empty;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsConnector;

use super::connect::{ConnectError, GuardedConnector, host_of, port_of, scheme_port};
use crate::model::FailReason;

type Body = Empty<Bytes>;

/// Why a request got no response.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("{0}")]
    Connect(#[from] ConnectError),
    #[error("TLS: {0}")]
    Tls(std::io::Error),
    #[error("{0}")]
    Http(#[from] hyper::Error),
    #[error("bad URL: {0}")]
    Url(String),
}

/// How many connections are kept, and for how long.
#[derive(Clone, Copy, Debug)]
pub struct PoolLimits {
    /// Idle HTTP/1 connections across all origins.
    pub idle: usize,
    /// Idle HTTP/1 connections of one origin.
    pub idle_per_origin: usize,
    /// An idle connection older than this is closed instead of reused.
    pub idle_timeout: Duration,
}

#[derive(Clone)]
pub struct ConnPool {
    tcp: GuardedConnector,
    tls: TlsConnector,
    limits: PoolLimits,
    idle: Arc<Mutex<IdleSet>>,
}

#[derive(Default)]
struct IdleSet {
    next_seq: u64,
    /// Every idle HTTP/1 connection by when it went idle, oldest first.
    lru: BTreeMap<u64, IdleConn>,
    /// Each origin's idle connections' keys in `lru`, most recent last.
    by_origin: HashMap<Arc<str>, Vec<u64>>,
    /// One HTTP/2 connection per origin, shared by its requests, with when
    /// it was last lent; counted in the idle bound, expired like the rest.
    h2: HashMap<Arc<str>, (http2::SendRequest<Body>, Option<IpAddr>, Instant)>,
    /// When `h2` was last swept of closed and expired connections.
    h2_swept: Option<Instant>,
}

struct IdleConn {
    origin: Arc<str>,
    sender: http1::SendRequest<Body>,
    peer: Option<IpAddr>,
    since: Instant,
}

/// A connection, with the address it is connected to (for a WARC
/// record's `WARC-IP-Address`).
enum Conn {
    H1(http1::SendRequest<Body>, Option<IpAddr>),
    H2(http2::SendRequest<Body>, Option<IpAddr>),
}

/// A response to a request, with what sent it.
pub struct Sent {
    pub response: Response<Incoming>,
    /// For HTTP/1, the connection to give back when the body is read.
    pub checkin: Option<Checkin>,
    /// The address the connection is to.
    pub peer: Option<IpAddr>,
}

/// An HTTP/1 connection lent to one response: [`Checkin::done`] gives it
/// back once the body is read; dropped instead, it closes.
pub struct Checkin {
    idle: Arc<Mutex<IdleSet>>,
    limits: PoolLimits,
    origin: Arc<str>,
    sender: http1::SendRequest<Body>,
    peer: Option<IpAddr>,
}

impl ConnPool {
    pub fn new(tcp: GuardedConnector, tls: Arc<rustls::ClientConfig>, limits: PoolLimits) -> Self {
        ConnPool {
            tcp,
            tls: TlsConnector::from(tls),
            limits,
            idle: Arc::default(),
        }
    }

    /// Idle HTTP/1 connections kept now.
    #[cfg(test)]
    pub fn idle_count(&self) -> usize {
        self.idle.lock().map(|s| s.lru.len()).unwrap_or(0)
    }

    /// GETs `uri` with `headers` (Host is added): the response, and for
    /// HTTP/1 the connection to give back when its body is read.
    pub async fn get(&self, uri: &Uri, headers: &HeaderMap) -> Result<Sent, SendError> {
        let origin = origin_of(uri)?;
        let mut fresh_only = false;
        loop {
            let reused = if fresh_only {
                None
            } else {
                self.checkout(&origin).await
            };
            let was_reused = reused.is_some();
            let conn = match reused {
                Some(c) => c,
                None => self.connect(uri, &origin).await?,
            };
            let sent = match conn {
                Conn::H2(mut s, peer) => s
                    .send_request(request(without_userinfo(uri), headers))
                    .await
                    .map(|response| Sent {
                        response,
                        checkin: None,
                        peer,
                    }),
                Conn::H1(mut s, peer) => {
                    let req = request(origin_form(uri), headers);
                    let req = with_host(req, uri);
                    match s.send_request(req).await {
                        Ok(response) => Ok(Sent {
                            response,
                            checkin: Some(self.checkin(origin.clone(), s, peer)),
                            peer,
                        }),
                        Err(e) => Err(e),
                    }
                }
            };
            match sent {
                Err(e) if was_reused && closed_under_us(&e) => fresh_only = true,
                other => return other.map_err(SendError::Http),
            }
        }
    }

    fn checkin(
        &self,
        origin: Arc<str>,
        sender: http1::SendRequest<Body>,
        peer: Option<IpAddr>,
    ) -> Checkin {
        Checkin {
            idle: self.idle.clone(),
            limits: self.limits,
            origin,
            sender,
            peer,
        }
    }

    /// An open idle connection to `origin`, if one is kept.
    async fn checkout(&self, origin: &Arc<str>) -> Option<Conn> {
        loop {
            let idle = {
                let mut set = self.idle.lock().ok()?;
                if let Some((s, peer, used)) = set.h2.get_mut(origin) {
                    if !s.is_closed() && used.elapsed() <= self.limits.idle_timeout {
                        *used = Instant::now();
                        return Some(Conn::H2(s.clone(), *peer));
                    }
                    set.h2.remove(origin);
                }
                let keys = set.by_origin.get_mut(origin)?;
                let seq = keys.pop();
                if keys.is_empty() {
                    set.by_origin.remove(origin);
                }
                set.lru.remove(&seq?)?
            };
            if idle.since.elapsed() > self.limits.idle_timeout || idle.sender.is_closed() {
                continue;
            }
            let mut sender = idle.sender;
            if sender.ready().await.is_ok() {
                return Some(Conn::H1(sender, idle.peer));
            }
        }
    }

    async fn connect(&self, uri: &Uri, origin: &Arc<str>) -> Result<Conn, SendError> {
        let tcp = self.tcp.connect(uri).await?;
        let peer = tcp.peer_addr().ok().map(|a| a.ip());
        if uri.scheme_str() != Some("https") {
            return h1(tcp, peer).await;
        }
        let host = host_of(uri).unwrap_or_default();
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| SendError::Url(format!("{host}: {e}")))?;
        let tls = self.tls.connect(name, tcp).await.map_err(SendError::Tls)?;
        if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
            return h1(tls, peer).await;
        }
        let (sender, conn) = http2::Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .handshake(TokioIo::new(tls))
            .await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        if let Ok(mut set) = self.idle.lock() {
            set.h2
                .insert(origin.clone(), (sender.clone(), peer, Instant::now()));
            set.sweep_h2(&self.limits);
        }
        Ok(Conn::H2(sender, peer))
    }
}

/// An HTTP/1 connection over `io`, its driver spawned.
async fn h1<T>(io: T, peer: Option<IpAddr>) -> Result<Conn, SendError>
where
    T: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (sender, conn) = http1::handshake(TokioIo::new(io)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Conn::H1(sender, peer))
}

impl Checkin {
    /// The response was read to its end: the connection goes back to the
    /// pool, and the oldest idle ones past the limits are closed.
    pub fn done(self) {
        if self.sender.is_closed() {
            return;
        }
        let Ok(mut set) = self.idle.lock() else {
            return;
        };
        let now = Instant::now();
        let seq = set.next_seq;
        set.next_seq += 1;
        let keys = set.by_origin.entry(self.origin.clone()).or_default();
        keys.push(seq);
        let crowded = (keys.len() > self.limits.idle_per_origin).then(|| keys.remove(0));
        if let Some(old) = crowded {
            set.lru.remove(&old);
        }
        set.lru.insert(
            seq,
            IdleConn {
                origin: self.origin,
                sender: self.sender,
                peer: self.peer,
                since: now,
            },
        );
        loop {
            let over = set.lru.len() > self.limits.idle;
            let Some(entry) = set.lru.first_entry() else {
                break;
            };
            if !over && now.duration_since(entry.get().since) <= self.limits.idle_timeout {
                break;
            }
            let (old, c) = entry.remove_entry();
            set.forget(&c.origin, old);
        }
        set.sweep_h2(&self.limits);
    }
}

/// How often the HTTP/2 connections are swept (a pass over all of them).
const H2_SWEEP: Duration = Duration::from_secs(1);

impl IdleSet {
    /// Drops HTTP/2 connections that closed or were not used within the
    /// idle timeout, and the least recently used past the idle bound (a
    /// request still holding one keeps it open until it ends).
    fn sweep_h2(&mut self, limits: &PoolLimits) {
        let now = Instant::now();
        if self.h2.is_empty() || self.h2_swept.is_some_and(|t| now - t < H2_SWEEP) {
            return;
        }
        self.h2_swept = Some(now);
        self.h2
            .retain(|_, (s, _, used)| !s.is_closed() && now - *used <= limits.idle_timeout);
        let room = limits.idle.saturating_sub(self.lru.len());
        if self.h2.len() > room {
            let mut by_use: Vec<(Instant, Arc<str>)> = self
                .h2
                .iter()
                .map(|(o, (_, _, t))| (*t, o.clone()))
                .collect();
            by_use.sort();
            for (_, origin) in &by_use[..self.h2.len() - room] {
                self.h2.remove(origin);
            }
        }
    }

    /// Drops `seq` from its origin's list (the oldest there, usually).
    fn forget(&mut self, origin: &Arc<str>, seq: u64) {
        if let Some(keys) = self.by_origin.get_mut(origin) {
            keys.retain(|&k| k != seq);
            if keys.is_empty() {
                self.by_origin.remove(origin);
            }
        }
    }
}

/// Whether a request on a reused connection failed because the server had
/// closed it: nothing of a response came, so it may be sent again.
fn closed_under_us(e: &hyper::Error) -> bool {
    e.is_canceled()
        || e.is_closed()
        || e.is_incomplete_message()
        || io_reason(e) == Some(FailReason::Incomplete)
}

/// The reason an I/O error under `e` stands for: the peer closed or reset
/// the connection (incomplete), or sent bytes that are not HTTP.
pub(super) fn io_reason(e: &(dyn std::error::Error + 'static)) -> Option<FailReason> {
    let mut src = e.source();
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            return Some(match io.kind() {
                K::UnexpectedEof | K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => {
                    FailReason::Incomplete
                }
                K::InvalidData | K::InvalidInput => FailReason::BadResponse,
                K::TimedOut => FailReason::Timeout,
                _ => FailReason::Protocol,
            });
        }
        src = s.source();
    }
    None
}

/// `scheme://host:port`, the key connections are pooled by.
fn origin_of(uri: &Uri) -> Result<Arc<str>, SendError> {
    let scheme = match uri.scheme_str() {
        Some(s @ ("http" | "https")) => s,
        _ => return Err(SendError::Url(format!("{uri}: not http or https"))),
    };
    let host = uri
        .host()
        .ok_or_else(|| SendError::Url(format!("{uri}: no host")))?;
    Ok(format!("{scheme}://{host}:{}", port_of(uri)).into())
}

fn request(uri: Uri, headers: &HeaderMap) -> Request<Body> {
    let mut req = Request::new(Empty::new());
    *req.uri_mut() = uri;
    *req.headers_mut() = headers.clone();
    req
}

/// The head of the request [`ConnPool::get`] sends for `uri`, as HTTP/1
/// writes it (an HTTP/2 request's pseudo-headers are written the same
/// way: its path and a Host field), for a WARC request record.
pub fn request_head(uri: &Uri, headers: &HeaderMap) -> Vec<u8> {
    let req = with_host(request(origin_form(uri), headers), uri);
    let mut head = format!("GET {} HTTP/1.1\r\n", req.uri()).into_bytes();
    for (name, value) in req.headers() {
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// `uri` without `user:pass@`, which HTTP/2's `:authority` must not carry.
fn without_userinfo(uri: &Uri) -> Uri {
    let Some(auth) = uri.authority().filter(|a| a.as_str().contains('@')) else {
        return uri.clone();
    };
    let host_port = auth.as_str().rsplit('@').next().unwrap_or_default();
    let mut parts = uri.clone().into_parts();
    parts.authority = host_port.parse().ok();
    Uri::from_parts(parts).unwrap_or_else(|_| uri.clone())
}

/// `/path?query` of `uri`, as HTTP/1 sends it.
fn origin_form(uri: &Uri) -> Uri {
    match uri.path_and_query() {
        Some(pq) if pq.as_str() != "/" => Uri::from(pq.clone()),
        _ => Uri::from_static("/"),
    }
}

/// The Host header: the authority, without a port the scheme implies.
fn with_host(mut req: Request<Body>, uri: &Uri) -> Request<Body> {
    let host = uri.host().unwrap_or_default();
    let value = match uri.port_u16() {
        Some(p) if p != scheme_port(uri) => HeaderValue::from_str(&format!("{host}:{p}")),
        _ => HeaderValue::from_str(host),
    };
    if let Ok(v) = value {
        req.headers_mut().insert(header::HOST, v);
    }
    req
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use crate::fetch::{FetchSettings, HttpClient, NetGuard};

    /// A keep-alive server that counts connections accepted and open; it
    /// answers `answers` requests a connection, then closes it on the next
    /// one without a word (a keep-alive timeout firing as it arrives).
    struct Counted {
        port: u16,
        accepted: Arc<AtomicUsize>,
        open: Arc<AtomicUsize>,
        task: tokio::task::JoinHandle<()>,
    }

    async fn counted_server(answers: usize) -> Counted {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (accepted, open) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (a, o) = (accepted.clone(), open.clone());
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                a.fetch_add(1, SeqCst);
                o.fetch_add(1, SeqCst);
                let o = o.clone();
                tokio::spawn(async move {
                    serve(sock, answers).await;
                    o.fetch_sub(1, SeqCst);
                });
            }
        });
        Counted {
            port,
            accepted,
            open,
            task,
        }
    }

    async fn serve(mut sock: tokio::net::TcpStream, answers: usize) {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 1024];
        let mut answered = 0;
        while let Ok(n @ 1..) = sock.read(&mut chunk).await {
            buf.extend_from_slice(&chunk[..n]);
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                buf.drain(..end + 4);
                if answered == answers {
                    return;
                }
                answered += 1;
                let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                if sock.write_all(reply).await.is_err() {
                    return;
                }
            }
        }
    }

    fn client(limit: usize) -> HttpClient {
        let settings = FetchSettings {
            resolve: vec![("*.pool.test".into(), "127.0.0.1".parse().unwrap())],
            allow_private: true,
            idle_connections: limit,
            ..FetchSettings::default()
        };
        HttpClient::new(settings, NetGuard::default()).unwrap()
    }

    /// Waits (up to 5 s) for the server to see at most `n` connections open.
    async fn open_at_most(server: &Counted, n: usize) -> usize {
        for _ in 0..500 {
            if server.open.load(SeqCst) <= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        server.open.load(SeqCst)
    }

    #[tokio::test]
    async fn idle_connections_past_the_limit_are_closed_least_recent_first() {
        let server = counted_server(usize::MAX).await;
        let client = client(4);
        let url = |i: usize| format!("http://h{i}.pool.test:{}/", server.port);
        for i in 0..12 {
            assert_eq!(client.get(&url(i)).await.unwrap().body, b"ok");
        }
        assert_eq!(server.accepted.load(SeqCst), 12);
        assert_eq!(open_at_most(&server, 4).await, 4, "12 hosts, limit 4");
        assert_eq!(client.idle_connections(), 4);
        // The most recent host's connection is reused; the first host's
        // was closed and is made again.
        client.get(&url(11)).await.unwrap();
        assert_eq!(server.accepted.load(SeqCst), 12);
        client.get(&url(0)).await.unwrap();
        assert_eq!(server.accepted.load(SeqCst), 13);
        assert_eq!(open_at_most(&server, 4).await, 4);
        server.task.abort();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_requests_over_few_idle_connections_all_succeed() {
        let server = counted_server(usize::MAX).await;
        let client = client(3);
        for round in 0..20 {
            let gets = (0..16).map(|i| {
                let (client, port) = (client.clone(), server.port);
                tokio::spawn(async move {
                    let url = format!("http://h{}.pool.test:{port}/", (i * 7 + round) % 24);
                    client.get(&url).await.map(|f| f.body)
                })
            });
            for get in gets.collect::<Vec<_>>() {
                assert_eq!(get.await.unwrap().unwrap(), b"ok");
            }
        }
        assert!(open_at_most(&server, 3).await <= 3);
        server.task.abort();
    }

    #[tokio::test]
    async fn a_reused_connection_the_server_dropped_is_retried_on_a_new_one() {
        // Every connection answers once and drops the second request.
        let server = counted_server(1).await;
        let client = client(16);
        let url = format!("http://a.pool.test:{}/", server.port);
        for i in 1..=3 {
            let got = client.get(&url).await;
            assert_eq!(got.map(|f| f.body).unwrap(), b"ok", "request {i}");
        }
        assert_eq!(server.accepted.load(SeqCst), 3, "one new connection each");
        server.task.abort();
    }
}
