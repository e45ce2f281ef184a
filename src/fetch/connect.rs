//! The TCP connector under the HTTP client: resolves the host (or reads
//! its IP literal), asks the network guard about each address, and
//! connects only to one it allows. hyper-util's own connector skips its
//! resolver for IP literals, which would let `http://169.254.169.254/`
//! past a check done there; here every address goes through the guard.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use tokio::net::TcpStream;

use super::dns::CachingResolver;
use super::guard::{NetGuard, Refusal};

/// Why no connection was made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("URL has no host")]
    NoHost,
    #[error("DNS lookup of {host} failed: {detail}")]
    Dns { host: String, detail: String },
    #[error("network guard: {0}")]
    Guard(Refusal),
    #[error("connect to {addr} failed: {err}")]
    Io {
        addr: SocketAddr,
        err: std::io::Error,
    },
    #[error("connect to {0} timed out")]
    Timeout(SocketAddr),
}

#[derive(Clone)]
pub struct GuardedConnector {
    pub resolver: CachingResolver,
    pub guard: NetGuard,
    pub allow_private: bool,
    pub connect_timeout: Duration,
}

/// `uri`'s port, or its scheme's when it has none.
pub fn port_of(uri: &http::Uri) -> u16 {
    uri.port_u16().unwrap_or(scheme_port(uri))
}

/// The port `uri`'s scheme implies.
pub fn scheme_port(uri: &http::Uri) -> u16 {
    if uri.scheme_str() == Some("https") {
        443
    } else {
        80
    }
}

/// `uri`'s host, an IPv6 address without its brackets.
pub fn host_of(uri: &http::Uri) -> Option<&str> {
    let host = uri.host()?;
    Some(host.trim_start_matches('[').trim_end_matches(']'))
}

impl GuardedConnector {
    /// A TCP connection to `uri`'s host and port, through the guard.
    pub async fn connect(&self, uri: &http::Uri) -> Result<TcpStream, ConnectError> {
        let host = host_of(uri).ok_or(ConnectError::NoHost)?;
        let port = port_of(uri);
        // The guard keys a seed's exception by the port as the URL gives it.
        let url_port = (port != scheme_port(uri)).then_some(port);
        let dns = |detail: String| ConnectError::Dns {
            host: host.to_string(),
            detail,
        };
        let addrs = match host.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            // A resolver that never answers costs the connect timeout.
            Err(_) => tokio::time::timeout(self.connect_timeout, self.resolver.resolve(host))
                .await
                .map_err(|_| dns(format!("no answer in {:?}", self.connect_timeout)))?
                .map_err(|e| dns(e.to_string()))?,
        };
        if addrs.is_empty() {
            return Err(ConnectError::Dns {
                host: host.to_string(),
                detail: "no addresses".into(),
            });
        }
        let mut last = None;
        for ip in addrs {
            if let Err(refusal) = self
                .guard
                .check(host, url_port, ip, self.allow_private)
                .await
            {
                last.get_or_insert(ConnectError::Guard(refusal));
                continue;
            }
            let addr = SocketAddr::new(ip, port);
            match tokio::time::timeout(self.connect_timeout, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                // A refused address explains less than a connect error.
                Ok(Err(err)) => last = Some(ConnectError::Io { addr, err }),
                Err(_) => last = Some(ConnectError::Timeout(addr)),
            }
        }
        Err(last.unwrap_or(ConnectError::NoHost))
    }
}
