//! The network guard: which addresses a crawl may connect to. Link-local,
//! cloud-metadata and unspecified addresses never; loopback and private
//! ones only for a seed's own host and port when the seed resolves to
//! that exact address (see `exceptions`), or when `net.allow_private`
//! says so. The check runs on the address actually connected to, after
//! DNS (see `connect`), for every page, redirect hop and robots.txt fetch
//! alike, so a name that resolves (or rebinds) to a private address gains
//! nothing, and neither does another host or port at a seed's address.

mod exceptions;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use self::exceptions::{Exceptions, Verdict};
use super::dns::CachingResolver;
use crate::model::CanonicalUrl;

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

/// Cloud metadata services outside link-local: Alibaba's, Azure's
/// WireServer, Oracle Cloud's.
const METADATA_V4: [Ipv4Addr; 3] = [
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(168, 63, 129, 16),
    Ipv4Addr::new(192, 0, 0, 192),
];

fn classify_v4(ip: Ipv4Addr) -> AddrClass {
    let o = ip.octets();
    if o[0] == 0 {
        AddrClass::Forbidden("unspecified")
    } else if o[0] == 169 && o[1] == 254 {
        AddrClass::Forbidden("link-local (cloud metadata)")
    } else if METADATA_V4.contains(&ip) {
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
    hint: String,
}

/// The seeds' exceptions, shared by every client a crawl builds.
#[derive(Clone, Default)]
pub struct NetGuard {
    seeds: Arc<Exceptions>,
}

impl NetGuard {
    /// A crawl's guard: seed names are looked up as seeds are added,
    /// through `resolve` (`--resolve`'s fixed answers) before DNS. (The
    /// default guard looks a name up only when a check needs it, so a
    /// ledger that never fetches looks nothing up.)
    pub fn new(resolve: &[(String, IpAddr)]) -> NetGuard {
        Self::with_resolver(CachingResolver::with_fixed(resolve))
    }

    fn with_resolver(resolver: CachingResolver) -> NetGuard {
        NetGuard {
            seeds: Arc::new(Exceptions::new(resolver, true)),
        }
    }

    /// Notes a seed: its own host and port may connect to the addresses
    /// its host resolves to, even private ones.
    pub fn add_seed(&self, seed: &CanonicalUrl) {
        self.seeds.add_seed(seed.host(), seed.url().port());
    }

    /// Notes that `target` became a seed because `from` redirects there
    /// (a seed, or a seed's robots.txt): `target`'s host and port get
    /// `from`'s exception, the addresses of the seed it came from.
    pub fn add_derived(&self, target: &CanonicalUrl, from: &CanonicalUrl) {
        self.seeds.add_derived(
            (target.host(), target.url().port()),
            (from.host(), from.url().port()),
        );
    }

    /// Whether `ip` may be connected to for `host` on `port` (None: its
    /// scheme's default). `allow_private` is the setting
    /// `net.allow_private`.
    pub async fn check(
        &self,
        host: &str,
        port: Option<u16>,
        ip: IpAddr,
        allow_private: bool,
    ) -> Result<(), Refusal> {
        let what = match classify(ip) {
            AddrClass::Public => return Ok(()),
            AddrClass::Forbidden(what) => {
                return Err(Refusal {
                    addr: ip,
                    what: format!("{what}, never fetched"),
                    hint: String::new(),
                });
            }
            AddrClass::Private(_) if allow_private => return Ok(()),
            AddrClass::Private(what) => what,
        };
        let hint = match self.seeds.allows(host, port, ip).await {
            Verdict::Allowed => return Ok(()),
            Verdict::Refused => "; fetched only for the host and port of a seed that resolves to it, or with `set net.allow_private true`".to_string(),
            Verdict::Unresolved(name) => format!(
                "; fetched for its seed's host and port once the seed name {name} resolves to it (its lookup failed; tried again each minute), or with `set net.allow_private true`"
            ),
        };
        Err(Refusal {
            addr: ip,
            what: format!("a {what} address"),
            hint,
        })
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
            "168.63.129.16",
            "192.0.0.192",
            "::ffff:168.63.129.16",
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
            "168.63.129.17",
            "192.0.0.193",
            "2606:4700::1",
            "fec0::1",
        ] {
            assert_eq!(classify(ip(p)), AddrClass::Public, "{p}");
        }
    }

    fn url(s: &str) -> CanonicalUrl {
        crate::model::normalize(s).unwrap()
    }

    #[tokio::test]
    async fn private_addresses_only_for_a_seeds_own_host_and_port() {
        let guard = NetGuard::new(&[
            ("seed.test".into(), ip("10.0.0.5")),
            ("*.wild.test".into(), ip("10.0.0.6")),
        ]);
        let lo = ip("127.0.0.1");
        assert!(guard.check("127.0.0.1", Some(80), lo, false).await.is_err());
        guard.add_seed(&url("http://127.0.0.1:8080/"));
        guard.add_seed(&url("http://seed.test/"));
        guard.add_seed(&url("http://a.wild.test:81/"));
        assert!(
            guard
                .check("127.0.0.1", Some(8080), lo, false)
                .await
                .is_ok()
        );
        // The seed's address, but another port, or another name for it.
        let e = guard
            .check("127.0.0.1", Some(2375), lo, false)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("loopback") && e.to_string().contains("net.allow_private"));
        assert!(
            guard
                .check("localhost", Some(8080), lo, false)
                .await
                .is_err()
        );
        assert!(guard.check("127.0.0.1", Some(2375), lo, true).await.is_ok());
        // A name: its own address on its own port (http and https on
        // their default ports alike), nothing else.
        let five = ip("10.0.0.5");
        assert!(guard.check("SEED.test", None, five, false).await.is_ok());
        assert!(
            guard
                .check("seed.test", Some(2375), five, false)
                .await
                .is_err()
        );
        assert!(
            guard
                .check("seed.test", None, ip("10.0.0.7"), false)
                .await
                .is_err()
        );
        assert!(guard.check("other.test", None, five, false).await.is_err());
        // Every name under a `--resolve` wildcard, on the seed's port.
        let six = ip("10.0.0.6");
        assert!(
            guard
                .check("b.wild.test", Some(81), six, false)
                .await
                .is_ok()
        );
        assert!(
            guard
                .check("b.wild.test", Some(82), six, false)
                .await
                .is_err()
        );
        // A redirect target gets its seed's addresses, for its own host
        // and port; on another port while the seed resolves to private
        // addresses alone (exceptions::tests has a seed that does not).
        guard.add_derived(&url("https://www.seed.test/"), &url("http://seed.test/"));
        guard.add_derived(&url("http://seed.test:8443/"), &url("http://seed.test/"));
        assert!(
            guard
                .check("www.seed.test", None, five, false)
                .await
                .is_ok()
        );
        assert!(
            guard
                .check("seed.test", Some(8443), five, false)
                .await
                .is_ok()
        );
        assert!(
            guard
                .check("www.seed.test", Some(8443), five, false)
                .await
                .is_err()
        );
        guard.add_derived(&url("http://x.test/"), &url("http://nobody.test/"));
        assert!(guard.check("x.test", None, five, false).await.is_err());
        // Never, whatever the settings or seeds.
        guard.add_seed(&url("http://169.254.169.254/"));
        for never in ["169.254.169.254", "168.63.129.16", "192.0.0.192"] {
            let e = guard.check(never, None, ip(never), true).await.unwrap_err();
            assert!(e.to_string().contains("never fetched"), "{e}");
        }
        assert!(
            guard
                .check("8.8.8.8", None, ip("8.8.8.8"), false)
                .await
                .is_ok()
        );
    }

    /// A guard whose names `stalled` never answer.
    fn stalling(fixed: &[(String, IpAddr)], stalled: &[&str]) -> NetGuard {
        let mut r = CachingResolver::with_fixed(fixed);
        r.stalled = Arc::new(stalled.iter().map(|s| s.to_string()).collect());
        NetGuard::with_resolver(r)
    }

    #[tokio::test(start_paused = true)]
    async fn seed_names_resolve_at_once_and_a_failed_one_never_holds_a_check() {
        use tokio::time::{Duration, Instant};
        let guard = stalling(
            &[("fast.test".into(), ip("10.0.0.5"))],
            &["slow1.test", "slow2.test"],
        );
        for s in [
            "http://slow1.test/",
            "http://slow2.test/",
            "http://fast.test/",
            "http://gone.invalid/",
        ] {
            guard.add_seed(&url(s));
        }
        let started = Instant::now();
        // Not held up by the names before it that never answer.
        assert!(
            guard
                .check("fast.test", None, ip("10.0.0.5"), false)
                .await
                .is_ok()
        );
        assert_eq!(started.elapsed(), Duration::ZERO);
        // A name's first lookup is waited for, up to its timeout; the
        // other slow name's ran meanwhile.
        let e = guard
            .check("slow1.test", None, ip("10.0.0.9"), false)
            .await
            .unwrap_err();
        assert!(
            started.elapsed() <= Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(
            e.to_string().contains("seed name slow1.test resolves"),
            "{e}"
        );
        let at = Instant::now();
        for name in ["slow2.test", "slow1.test", "gone.invalid"] {
            assert!(
                guard
                    .check(name, None, ip("10.0.0.9"), false)
                    .await
                    .is_err()
            );
        }
        assert_eq!(
            at.elapsed(),
            Duration::ZERO,
            "failed names are not waited for"
        );
        // Tried again a minute later, in the background.
        tokio::time::advance(Duration::from_secs(61)).await;
        let at = Instant::now();
        assert!(
            guard
                .check("slow1.test", None, ip("10.0.0.9"), false)
                .await
                .is_err()
        );
        assert_eq!(at.elapsed(), Duration::ZERO);
    }
}
