//! A DNS cache in front of the system resolver, so a host is resolved once
//! per `TTL` rather than once per connection. (Literal IPs never get here:
//! hyper-util's connector skips the resolver for them.)

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper_util::client::legacy::connect::dns::Name;

const TTL: Duration = Duration::from_secs(300);

/// Resolved addresses and when they were looked up, by host name.
type Cache = HashMap<String, (Vec<SocketAddr>, Instant)>;

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
}

impl tower_service::Service<Name> for CachingResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let host = name.as_str().to_string();
        if let Some(ip) = self.fixed.get(&host.to_ascii_lowercase()) {
            let addr = SocketAddr::new(*ip, 0);
            return Box::pin(async move { Ok(vec![addr].into_iter()) });
        }
        let cache = self.cache.clone();
        Box::pin(async move {
            if let Some((addrs, at)) = cache.lock().ok().and_then(|c| c.get(&host).cloned())
                && at.elapsed() < TTL
            {
                return Ok(addrs.into_iter());
            }
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Ok(mut c) = cache.lock() {
                c.insert(host, (addrs.clone(), Instant::now()));
            }
            Ok(addrs.into_iter())
        })
    }
}
