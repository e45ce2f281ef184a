//! Whether a discovered URL is inside the crawl: a pure function of the
//! seeds and the scope setting.

use std::collections::HashSet;

use crate::model::CanonicalUrl;
use crate::model::named_enum;

/// Which discovered hosts the crawl may enter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Scope {
    /// Only the seeds' hosts (host and port; http and https alike).
    #[default]
    Host,
    /// Any host under a seed's registrable domain (public-suffix list).
    Domain,
    /// Anywhere.
    Any,
}

named_enum!(Scope {
    Host => "host",
    Domain => "domain",
    Any => "any",
});

impl std::str::FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Scope, String> {
        Scope::from_name(&s.to_ascii_lowercase())
            .ok_or_else(|| format!("unknown scope {s:?}; use host, domain or any"))
    }
}

#[derive(Default, Clone)]
pub struct ScopeRule {
    /// `host[:port]` of each seed (default ports dropped).
    authorities: HashSet<String>,
    /// Registrable domain of each seed (or the host itself for IPs).
    domains: HashSet<String>,
}

impl ScopeRule {
    pub fn new<'a>(seeds: impl IntoIterator<Item = &'a CanonicalUrl>) -> ScopeRule {
        let mut r = ScopeRule::default();
        for s in seeds {
            r.add(s);
        }
        r
    }

    pub fn add(&mut self, seed: &CanonicalUrl) {
        self.authorities.insert(authority(seed));
        self.domains.insert(domain_of(seed.host()).to_string());
    }

    pub fn allows(&self, scope: Scope, url: &CanonicalUrl) -> bool {
        match scope {
            Scope::Any => true,
            Scope::Host => self.authorities.contains(&authority(url)),
            Scope::Domain => self.domains.contains(domain_of(url.host())),
        }
    }
}

fn authority(u: &CanonicalUrl) -> String {
    match u.url().port() {
        Some(p) => format!("{}:{p}", u.host()),
        None => u.host().to_string(),
    }
}

/// The registrable domain (`news.bbc.co.uk` → `bbc.co.uk`); IPs and
/// names without a known suffix stand for themselves.
pub(crate) fn domain_of(host: &str) -> &str {
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return host;
    }
    psl::domain_str(host).unwrap_or(host)
}

/// The site of `origin` (`scheme://host[:port]`): its host's registrable
/// domain, or the origin itself for an IP address (loopback servers on
/// other ports are other sites).
pub fn site_key(origin: &str) -> &str {
    let host = origin.split_once("://").map_or(origin, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => host.split(':').next().unwrap_or(host),
    };
    if host.parse::<std::net::IpAddr>().is_ok() {
        return origin;
    }
    domain_of(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::normalize;

    #[test]
    fn host_domain_any() {
        let r = ScopeRule::new([&normalize("http://www.example.co.uk/").unwrap()]);
        let same = normalize("https://www.example.co.uk/x").unwrap();
        let sub = normalize("http://news.example.co.uk/").unwrap();
        let other = normalize("http://example.org/").unwrap();
        assert!(r.allows(Scope::Host, &same) && !r.allows(Scope::Host, &sub));
        assert!(r.allows(Scope::Domain, &sub) && !r.allows(Scope::Domain, &other));
        assert!(r.allows(Scope::Any, &other));
        let ip = ScopeRule::new([&normalize("http://127.0.0.1:8080/").unwrap()]);
        assert!(!ip.allows(Scope::Host, &normalize("http://127.0.0.1:8081/").unwrap()));
    }
}
