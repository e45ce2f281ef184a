//! A raw TCP server on 127.0.0.1 for the responses no real HTTP library
//! will send: lying lengths, garbage status lines, trickles, resets. Each
//! request's path picks a script of steps; a connection serves requests
//! until a step closes it. Dropping the server stops it and every
//! connection.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// One thing the server does on a connection.
#[derive(Clone, Debug)]
pub enum Step {
    /// Send these bytes.
    Write(Vec<u8>),
    /// Send these bytes one at a time, `every` apart.
    Trickle {
        bytes: Vec<u8>,
        every: Duration,
    },
    /// Send `chunk` again and again until the peer goes away.
    Forever(Vec<u8>),
    Sleep(Duration),
    /// Close the connection (FIN).
    Close,
    /// Reset the connection (RST).
    Reset,
}

/// A script for a request path; `n` is how often the path was asked.
pub type Script = Arc<dyn Fn(&str, usize) -> Vec<Step> + Send + Sync>;

pub struct RawServer {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
    log: Arc<Mutex<Vec<(String, Instant)>>>,
}

impl RawServer {
    pub async fn start(script: Script) -> RawServer {
        Self::bind("127.0.0.1:0", script).await
    }

    pub async fn bind(addr: &str, script: Script) -> RawServer {
        let listener = TcpListener::bind(addr).await.expect("bind raw server");
        let addr = listener.local_addr().unwrap();
        let log: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
        let l = log.clone();
        let task = tokio::spawn(async move {
            let mut conns = JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                conns.spawn(serve(stream, script.clone(), l.clone()));
                while conns.try_join_next().is_some() {}
            }
        });
        RawServer { addr, task, log }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request path with its arrival time.
    pub fn hits(&self) -> Vec<(String, Instant)> {
        self.log.lock().unwrap().clone()
    }

    pub fn count(&self, path: &str) -> usize {
        self.hits().iter().filter(|(p, _)| p == path).count()
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut stream: TcpStream, script: Script, log: Arc<Mutex<Vec<(String, Instant)>>>) {
    let _ = stream.set_nodelay(true);
    loop {
        let Some(path) = read_request(&mut stream).await else {
            return;
        };
        let n = {
            let mut log = log.lock().unwrap();
            log.push((path.clone(), Instant::now()));
            log.iter().filter(|(p, _)| *p == path).count()
        };
        for step in script(&path, n) {
            let ok = match step {
                Step::Write(b) => stream.write_all(&b).await.is_ok(),
                Step::Trickle { bytes, every } => {
                    let mut ok = true;
                    for b in bytes {
                        if stream.write_all(&[b]).await.is_err() {
                            ok = false;
                            break;
                        }
                        tokio::time::sleep(every).await;
                    }
                    ok
                }
                Step::Forever(chunk) => {
                    while stream.write_all(&chunk).await.is_ok() {}
                    false
                }
                Step::Sleep(d) => {
                    tokio::time::sleep(d).await;
                    true
                }
                Step::Close => {
                    let _ = stream.shutdown().await;
                    false
                }
                Step::Reset => {
                    #[allow(deprecated)] // a zero linger does not block
                    let _ = stream.set_linger(Some(Duration::ZERO));
                    return;
                }
            };
            if !ok {
                return;
            }
        }
    }
}

/// Reads one request's head; returns its path (None when the peer closed).
async fn read_request(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() > 64 << 10 {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|&b| b == b'\r').next()?;
    let line = String::from_utf8_lossy(line);
    line.split_whitespace().nth(1).map(str::to_string)
}

/// An HTTP/1.1 response head with these headers (and no others).
pub fn head(status: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut s = format!("HTTP/1.1 {status}\r\n");
    for (k, v) in headers {
        s.push_str(&format!("{k}: {v}\r\n"));
    }
    s.push_str("\r\n");
    s.into_bytes()
}

/// A whole response: head with Content-Length, then the body.
pub fn response(status: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let len = body.len().to_string();
    let mut r = head(
        status,
        &[("content-type", content_type), ("content-length", &len)],
    );
    r.extend_from_slice(body);
    r
}
