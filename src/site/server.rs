//! A minimal HTTP/1.1 + HTTP/2 server (hyper-util's auto builder), with
//! optional TLS, driven by a closure from request to response. It stops
//! when dropped, so a test cannot leak it.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Frame;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// What a handler sees of a request.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path and query, e.g. `/a/b?c=1`.
    pub path: String,
    pub headers: http::HeaderMap,
    pub version: http::Version,
}

/// A response body: bytes, or one chunk repeated (to stream huge bodies
/// without holding them).
#[derive(Debug, Clone)]
pub enum Body {
    Full(Bytes),
    Repeat { chunk: Bytes, times: u64 },
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// Wait this long before sending the headers.
    pub delay: Duration,
}

impl Request {
    /// The Host header without its port, lowercased ("" when absent).
    pub fn host(&self) -> String {
        let h = self
            .headers
            .get("host")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        let h = match h.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(""),
            None => h.split(':').next().unwrap_or(""),
        };
        h.to_ascii_lowercase()
    }
}

impl Response {
    pub fn new(status: u16, body: impl Into<Bytes>) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Full(body.into()),
            delay: Duration::ZERO,
        }
    }
    pub fn html(body: impl Into<Bytes>) -> Response {
        Response::new(200, body).header("content-type", "text/html; charset=utf-8")
    }
    pub fn text(body: impl Into<Bytes>) -> Response {
        Response::new(200, body).header("content-type", "text/plain")
    }
    pub fn status(status: u16) -> Response {
        Response::new(status, Bytes::new())
    }
    pub fn redirect(status: u16, location: &str) -> Response {
        Response::new(status, Bytes::new()).header("location", location)
    }
    pub fn header(mut self, k: &str, v: &str) -> Response {
        self.headers.push((k.to_string(), v.to_string()));
        self
    }
    pub fn delayed(mut self, d: Duration) -> Response {
        self.delay = d;
        self
    }
}

pub type Handler =
    Arc<dyn Fn(Request) -> Pin<Box<dyn Future<Output = Response> + Send>> + Send + Sync>;

/// Wraps an async closure as a [`Handler`].
pub fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    Arc::new(move |r| Box::pin(f(r)))
}

/// A running server; dropping it stops it and closes its connections.
pub struct Server {
    addr: SocketAddr,
    tls: bool,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// Serves plain HTTP on a bound listener.
    pub fn start(listener: TcpListener, handler: Handler) -> std::io::Result<Server> {
        Self::start_inner(listener, handler, None)
    }

    /// Serves HTTPS (ALPN h2 and http/1.1) on a bound listener.
    pub fn start_tls(
        listener: TcpListener,
        handler: Handler,
        mut tls: rustls::ServerConfig,
    ) -> std::io::Result<Server> {
        tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Self::start_inner(
            listener,
            handler,
            Some(tokio_rustls::TlsAcceptor::from(Arc::new(tls))),
        )
    }

    /// Binds 127.0.0.1 on a free port and serves plain HTTP.
    pub async fn bind(handler: Handler) -> std::io::Result<Server> {
        Self::start(TcpListener::bind("127.0.0.1:0").await?, handler)
    }

    fn start_inner(
        listener: TcpListener,
        handler: Handler,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> std::io::Result<Server> {
        let addr = listener.local_addr()?;
        let is_tls = tls.is_some();
        let task = tokio::spawn(async move {
            let mut conns = JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let handler = handler.clone();
                let tls = tls.clone();
                conns.spawn(async move {
                    match tls {
                        Some(acceptor) => {
                            if let Ok(s) = acceptor.accept(stream).await {
                                serve_conn(TokioIo::new(s), handler).await;
                            }
                        }
                        None => serve_conn(TokioIo::new(stream), handler).await,
                    }
                });
                // Reap finished connections so the set does not grow.
                while conns.try_join_next().is_some() {}
            }
        });
        Ok(Server {
            addr,
            tls: is_tls,
            task,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http(s)://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}://{}{}",
            if self.tls { "https" } else { "http" },
            self.addr,
            path
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Aborting the accept task drops its JoinSet, which aborts every connection.
        self.task.abort();
    }
}

async fn serve_conn<I>(io: TokioIo<I>, handler: Handler)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let svc = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let handler = handler.clone();
        async move {
            let r = Request {
                method: req.method().to_string(),
                path: req
                    .uri()
                    .path_and_query()
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "/".into()),
                headers: req.headers().clone(),
                version: req.version(),
            };
            let resp = handler(r).await;
            if !resp.delay.is_zero() {
                tokio::time::sleep(resp.delay).await;
            }
            let mut b = hyper::Response::builder().status(resp.status);
            for (k, v) in &resp.headers {
                b = b.header(k.as_str(), v.as_str());
            }
            let body = match resp.body {
                Body::Full(bytes) => http_body_util::Either::Left(Full::new(bytes)),
                Body::Repeat { chunk, times } => {
                    http_body_util::Either::Right(RepeatBody { chunk, left: times })
                }
            };
            b.body(body).or_else(|_| {
                hyper::Response::builder()
                    .status(500)
                    .body(http_body_util::Either::Left(Full::new(Bytes::from_static(
                        b"bad response",
                    ))))
            })
        }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(30));
    let _ = builder.serve_connection(io, svc).await;
}

/// A body of one chunk sent `left` times.
struct RepeatBody {
    chunk: Bytes,
    left: u64,
}

impl hyper::body::Body for RepeatBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.left == 0 {
            return Poll::Ready(None);
        }
        self.left -= 1;
        Poll::Ready(Some(Ok(Frame::data(self.chunk.clone()))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }
}
