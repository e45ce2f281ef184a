//! A DNS cache in front of the system resolver, so a host is resolved once
//! per `TTL` rather than once per connection, with fixed answers for
//! `--resolve HOST:ADDR` (HOST may be `*.DOMAIN`, every name under DOMAIN,
//! or `*`, every name).

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
    fixed: Arc<Fixed>,
    /// Names whose lookups never end, for the guard's tests.
    #[cfg(test)]
    pub(crate) stalled: Arc<Vec<String>>,
}

/// `--resolve` answers: exact names first, then the longest wildcard
/// suffix that matches (a handful, so a scan costs nothing per lookup).
#[derive(Default)]
struct Fixed {
    exact: HashMap<String, IpAddr>,
    /// (`.DOMAIN`, or empty for `*`; longest first, address).
    wild: Vec<(String, IpAddr)>,
}

impl Fixed {
    fn get(&self, host: &str) -> Option<IpAddr> {
        self.entry(host).map(|(_, ip)| ip)
    }

    /// The entry answering `host`: its name (`host`, `*.DOMAIN` or `*`)
    /// and address.
    fn entry(&self, host: &str) -> Option<(String, IpAddr)> {
        if let Some(ip) = self.exact.get(host) {
            return Some((host.to_string(), *ip));
        }
        (self.wild.iter())
            .find(|(suffix, _)| host.ends_with(suffix.as_str()) && host.len() > suffix.len())
            .map(|(suffix, ip)| (format!("*{suffix}"), *ip))
    }
}

impl CachingResolver {
    pub fn with_fixed(fixed: &[(String, IpAddr)]) -> CachingResolver {
        let mut answers = Fixed::default();
        for (host, ip) in fixed {
            let host = host.to_ascii_lowercase();
            match host.strip_prefix('*') {
                Some(suffix) => answers.wild.push((suffix.to_string(), *ip)),
                None => {
                    answers.exact.insert(host, *ip);
                }
            }
        }
        // Longest suffix first; the first given wins among equals.
        answers
            .wild
            .sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        CachingResolver {
            fixed: Arc::new(answers),
            ..CachingResolver::default()
        }
    }

    /// The `--resolve` entry that answers `host` (lower case), as given:
    /// `host` itself, `*.DOMAIN` or `*`.
    pub fn fixed_name(&self, host: &str) -> Option<String> {
        self.fixed.entry(host).map(|(name, _)| name)
    }

    /// The addresses of `host` (a name; IP literals never get here).
    pub async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        let host = host.to_ascii_lowercase();
        if let Some(ip) = self.fixed.get(&host) {
            return Ok(vec![ip]);
        }
        #[cfg(test)]
        if self.stalled.contains(&host) {
            std::future::pending::<()>().await;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[tokio::test]
    async fn exact_names_then_the_longest_wildcard() {
        let r = CachingResolver::with_fixed(&[
            ("*".into(), ip("127.0.0.9")),
            ("*.bench.test".into(), ip("127.0.0.1")),
            ("*.deep.bench.test".into(), ip("127.0.0.2")),
            ("Seed.Bench.Test".into(), ip("127.0.0.3")),
        ]);
        let one = |h: &'static str| {
            let r = r.clone();
            async move { r.resolve(h).await.unwrap() }
        };
        assert_eq!(one("h9999.bench.test").await, [ip("127.0.0.1")]);
        assert_eq!(one("a.b.bench.test").await, [ip("127.0.0.1")]);
        assert_eq!(one("x.deep.bench.test").await, [ip("127.0.0.2")]);
        assert_eq!(one("seed.bench.test").await, [ip("127.0.0.3")]);
        // `*.bench.test` is the names under it, not the domain itself.
        assert_eq!(one("bench.test").await, [ip("127.0.0.9")]);
        assert_eq!(one("xbench.test").await, [ip("127.0.0.9")]);
        assert_eq!(
            r.fixed_name("a.b.bench.test").as_deref(),
            Some("*.bench.test")
        );
        assert_eq!(
            r.fixed_name("seed.bench.test").as_deref(),
            Some("seed.bench.test")
        );
        assert_eq!(r.fixed_name("other.org").as_deref(), Some("*"));
        let none = CachingResolver::with_fixed(&[("*.bench.test".into(), ip("127.0.0.1"))]);
        assert_eq!(none.fixed_name("bench.test"), None);
        assert!(none.resolve("other.invalid").await.is_err());
    }
}
