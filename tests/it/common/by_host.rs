//! One loopback server answering for many host names (a crawl's resolve
//! override sends them all to 127.0.0.1): each request is answered by
//! `respond(host, path, port)` and logged as `host/path` with its time.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use trawl::site::{Response, Server, handler};

pub struct ByHost {
    pub server: Server,
    log: Arc<Mutex<Vec<(String, Instant)>>>,
}

impl ByHost {
    pub async fn start(respond: fn(&str, &str, u16) -> Response) -> ByHost {
        let log: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
        let l = log.clone();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = Server::start(
            listener,
            handler(move |req| {
                let host = req.host();
                l.lock()
                    .unwrap()
                    .push((format!("{host}{}", req.path), Instant::now()));
                let r = respond(&host, &req.path, port);
                async move { r }
            }),
        )
        .unwrap();
        ByHost { server, log }
    }

    pub fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.server.addr().port())
    }

    /// Every request, robots.txt included, in order.
    pub fn requests(&self) -> Vec<(String, Instant)> {
        self.log.lock().unwrap().clone()
    }

    /// The pages asked for (robots.txt left out), in order.
    pub fn pages(&self) -> Vec<(String, Instant)> {
        let mut v = self.requests();
        v.retain(|(p, _)| !p.ends_with("/robots.txt"));
        v
    }
}
