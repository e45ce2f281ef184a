//! A DNS cache in front of the system resolver, so a host is resolved once
//! per `TTL` rather than once per connection, with fixed answers for
//! `--resolve HOST:ADDR`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TTL: Duration = Duration::from_secs(300);

/// Resolved addresses and when they were looked up, by host name.
type Cache = HashMap<String, (Vec<IpAddr>, Instant)>;

#[derive(Clone, Default)]
pub struct CachingResolver {
    cache: Arc<Mutex<Cache>>,
    /// Fixed answers (`--resolve`), consulted before the cache.
    fixed: Arc<HashMap<String, IpAddr>>,
}

impl CachingResolver {
    pub fn with_fixed(fixed: &[(String, IpAddr)]) -> CachingResolver {
        let fixed = fixed
            .iter()
            .map(|(h, a)| (h.to_ascii_lowercase(), *a))
            .collect();
        CachingResolver {
            cache: Arc::default(),
            fixed: Arc::new(fixed),
        }
    }

    /// The addresses of `host` (a name; IP literals never get here).
    pub async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        let host = host.to_ascii_lowercase();
        if let Some(ip) = self.fixed.get(&host) {
            return Ok(vec![*ip]);
        }
        if host == "invalid" || host.ends_with(".invalid") {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such host (.invalid names never resolve, RFC 6761)",
            ));
        }
        if let Some((addrs, at)) = self.cache.lock().ok().and_then(|c| c.get(&host).cloned())
            && at.elapsed() < TTL
        {
            return Ok(addrs);
        }
        let addrs: Vec<IpAddr> = tokio::net::lookup_host((host.as_str(), 0))
            .await?
            .map(|a| a.ip())
            .collect();
        if let Ok(mut c) = self.cache.lock() {
            c.insert(host, (addrs.clone(), Instant::now()));
        }
        Ok(addrs)
    }
}
