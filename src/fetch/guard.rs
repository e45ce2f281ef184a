//! The network guard: which addresses a crawl may connect to. Link-local,
//! cloud-metadata and unspecified addresses never; loopback and private
//! ones only when a seed itself resolves to that exact address, or when
//! `net.allow_private` says so. The check runs on the address actually
//! connected to, after DNS (see `connect`), for every page, redirect hop
//! and robots.txt fetch alike, so a name that resolves (or rebinds) to a
//! private address gains nothing.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::dns::CachingResolver;

/// What kind of address an IP is, for the guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrClass {
    Public,
    /// Loopback and private ranges: allowed for a seed's own address.
    Private(&'static str),
    /// Never connected to.
    Forbidden(&'static str),
}

/// Classifies `ip`; IPv4 addresses embedded in IPv6 (mapped, NAT64) are
/// judged as the IPv4 address they carry.
pub fn classify(ip: IpAddr) -> AddrClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddrClass {
    let o = ip.octets();
    if o[0] == 0 {
        AddrClass::Forbidden("unspecified")
    } else if o[0] == 169 && o[1] == 254 {
        AddrClass::Forbidden("link-local (cloud metadata)")
    } else if ip == Ipv4Addr::new(100, 100, 100, 200) {
        AddrClass::Forbidden("cloud metadata")
    } else if ip.is_broadcast() || ip.is_multicast() {
        AddrClass::Forbidden("broadcast or multicast")
    } else if o[0] == 127 {
        AddrClass::Private("loopback")
    } else if o[0] == 10
        || (o[0] == 172 && (16..32).contains(&o[1]))
        || (o[0] == 192 && o[1] == 168)
    {
        AddrClass::Private("private")
    } else if o[0] == 100 && (64..128).contains(&o[1]) {
        AddrClass::Private("shared (carrier-grade NAT)")
    } else {
        AddrClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddrClass {
    let s = ip.segments();
    if ip.is_unspecified() {
        AddrClass::Forbidden("unspecified")
    } else if s[0] & 0xffc0 == 0xfe80 {
        AddrClass::Forbidden("link-local")
    } else if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        AddrClass::Forbidden("cloud metadata")
    } else if ip.is_multicast() {
        AddrClass::Forbidden("multicast")
    } else if ip.is_loopback() {
        AddrClass::Private("loopback")
    } else if s[0] & 0xfe00 == 0xfc00 {
        AddrClass::Private("unique local (private)")
    } else {
        AddrClass::Public
    }
}

/// The IPv4 address inside `::ffff:a.b.c.d`, `::a.b.c.d` or NAT64's
/// `64:ff9b::a.b.c.d`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let tail = || Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail());
    }
    // Deprecated IPv4-compatible form (not ::1 or ::).
    (s[..6] == [0; 6] && s[6] != 0).then(tail)
}

/// Why the guard refused an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{addr} is {what}{hint}")]
pub struct Refusal {
    pub addr: IpAddr,
    pub what: String,
    hint: &'static str,
}

/// The seeds' addresses, shared by every client a crawl builds.
#[derive(Clone, Default)]
pub struct NetGuard {
    seeds: Arc<Mutex<SeedAddrs>>,
    /// Held while seed names are resolved, so that a check made meanwhile
    /// waits for the whole set instead of judging by part of it.
    resolving: Arc<tokio::sync::Mutex<()>>,
}

#[derive(Default)]
struct SeedAddrs {
    /// Seed host names not resolved yet (resolved at the first private
    /// address the guard must judge), with when a name whose lookup
    /// failed may be tried again.
    pending: Vec<(String, Option<Instant>)>,
    addrs: HashSet<IpAddr>,
}

/// How long one seed name's lookup may hold up a check.
const SEED_LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a seed name whose lookup failed is left before another try.
const SEED_LOOKUP_RETRY: Duration = Duration::from_secs(60);

impl NetGuard {
    /// Notes a seed's host (a name or an IP literal): the addresses it
    /// resolves to may be connected to even when private.
    pub fn add_seed_host(&self, host: &str) {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let Ok(mut s) = self.seeds.lock() else {
            return;
        };
        match host.parse::<IpAddr>() {
            Ok(ip) => {
                s.addrs.insert(ip);
            }
            Err(_) if !s.pending.iter().any(|(h, _)| h == host) => {
                s.pending.push((host.to_string(), None))
            }
            Err(_) => {}
        }
    }

    /// Whether `ip` may be connected to. `allow_private` is the setting
    /// `net.allow_private`; `resolver` answers the seeds' host names.
    pub async fn check(
        &self,
        ip: IpAddr,
        allow_private: bool,
        resolver: &CachingResolver,
    ) -> Result<(), Refusal> {
        let what = match classify(ip) {
            AddrClass::Public => return Ok(()),
            AddrClass::Forbidden(what) => {
                return Err(Refusal {
                    addr: ip,
                    what: format!("{what}, never fetched"),
                    hint: "",
                });
            }
            AddrClass::Private(_) if allow_private => return Ok(()),
            AddrClass::Private(what) => what,
        };
        if self.is_seed_addr(ip) {
            return Ok(());
        }
        self.resolve_seed_names(resolver).await;
        if self.is_seed_addr(ip) {
            return Ok(());
        }
        Err(Refusal {
            addr: ip,
            what: format!("a {what} address"),
            hint: "; fetched only when a seed resolves to it, or with `set net.allow_private true`",
        })
    }
}

impl NetGuard {
    fn is_seed_addr(&self, ip: IpAddr) -> bool {
        self.seeds.lock().is_ok_and(|s| s.addrs.contains(&ip))
    }

    /// Resolves the seed names not resolved yet, one check at a time (a
    /// check made meanwhile waits for the whole set instead of judging
    /// by part of it). A name leaves the list only once resolved; one
    /// that fails or times out is tried again a minute later.
    async fn resolve_seed_names(&self, resolver: &CachingResolver) {
        let _gate = self.resolving.lock().await;
        let now = Instant::now();
        let due: Vec<String> = self.seeds.lock().map_or_else(
            |_| Vec::new(),
            |s| {
                s.pending
                    .iter()
                    .filter(|(_, retry)| retry.is_none_or(|at| at <= now))
                    .map(|(h, _)| h.clone())
                    .collect()
            },
        );
        for host in due {
            let found = tokio::time::timeout(SEED_LOOKUP_TIMEOUT, resolver.resolve(&host)).await;
            let Ok(mut s) = self.seeds.lock() else {
                return;
            };
            match found {
                Ok(Ok(addrs)) => {
                    s.addrs.extend(addrs);
                    s.pending.retain(|(h, _)| *h != host);
                }
                _ => {
                    let retry = Instant::now() + SEED_LOOKUP_RETRY;
                    for (_, at) in s.pending.iter_mut().filter(|(h, _)| *h == host) {
                        *at = Some(retry);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn address_classes() {
        for f in [
            "169.254.169.254",
            "169.254.0.1",
            "100.100.100.200",
            "0.0.0.0",
            "::",
            "fe80::1",
            "febf::1",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "255.255.255.255",
            "224.0.0.1",
        ] {
            assert!(matches!(classify(ip(f)), AddrClass::Forbidden(_)), "{f}");
        }
        for p in [
            "127.0.0.1",
            "127.0.0.2",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "::1",
            "fc00::1",
            "fd12::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(matches!(classify(ip(p)), AddrClass::Private(_)), "{p}");
        }
        for p in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "169.253.1.1",
            "2606:4700::1",
            "fec0::1",
        ] {
            assert_eq!(classify(ip(p)), AddrClass::Public, "{p}");
        }
    }

    #[tokio::test]
    async fn private_addresses_only_for_a_seed_or_when_allowed() {
        let guard = NetGuard::default();
        let r = CachingResolver::with_fixed(&[("seed.test".into(), ip("10.0.0.5"))]);
        assert!(guard.check(ip("127.0.0.1"), false, &r).await.is_err());
        guard.add_seed_host("127.0.0.1");
        guard.add_seed_host("seed.test");
        assert!(guard.check(ip("127.0.0.1"), false, &r).await.is_ok());
        assert!(guard.check(ip("10.0.0.5"), false, &r).await.is_ok());
        let e = guard.check(ip("127.0.0.2"), false, &r).await.unwrap_err();
        assert!(e.to_string().contains("loopback") && e.to_string().contains("net.allow_private"));
        assert!(guard.check(ip("127.0.0.2"), true, &r).await.is_ok());
        // Never, whatever the settings or seeds.
        guard.add_seed_host("169.254.169.254");
        assert!(guard.check(ip("169.254.169.254"), true, &r).await.is_err());
        assert!(guard.check(ip("8.8.8.8"), false, &r).await.is_ok());
    }
}
