//! The seeds' exceptions to the guard. A private address is connectable
//! only for a seed's own authority — its host and port, http and https on
//! their default ports alike, as the scope counts them — and only when
//! the seed's name resolved to that address; a host a seed (or its
//! robots.txt) redirects to gets the exception of the seed it came from,
//! for its own host and port (on another port than the seed's or the
//! scheme's default, only while the seed resolves to private addresses
//! alone). A host answered by a `--resolve` entry is
//! named by the entry (`*.example.org`), so every name under a wildcard
//! shares a seed's exception on the seed's port: the user said where
//! those names live.
//!
//! Seed names are looked up as seeds are added, each on a task of its own
//! under its own timeout. A check waits only for the first lookup of its
//! own seed's name, never for one that failed before: that one is tried
//! again in the background, at most once a minute.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::fetch::dns::CachingResolver;

/// How long one seed name's lookup may take (and a check wait for it).
const SEED_LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a seed name whose lookup failed is left before another try.
const SEED_LOOKUP_RETRY: Duration = Duration::from_secs(60);

/// A host and port as the guard keys its exceptions: the host's name (an
/// IP literal in its one spelling, or the `--resolve` entry answering
/// it) and its port when not its scheme's default.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Authority {
    name: String,
    port: Option<u16>,
}

/// Where a seed name's lookup stands.
enum Lookup {
    /// Not started: looked up at the first check that needs it.
    Waiting,
    /// The first lookup is under way: a check waits for it.
    First,
    Found(Vec<IpAddr>),
    /// It failed: checks do not wait for it; tried again from `retry_at`
    /// (`trying` while that retry runs).
    Failed {
        retry_at: Instant,
        trying: bool,
    },
}

#[derive(Default)]
struct State {
    /// Each excepted authority, with the seed names whose addresses it
    /// may connect to.
    vouched: HashMap<Authority, Vec<String>>,
    /// Authorities excepted by a redirect to another port than the seed's.
    other_port: std::collections::HashSet<Authority>,
    lookups: HashMap<String, Lookup>,
}

/// What a check found.
pub(super) enum Verdict {
    Allowed,
    Refused,
    /// The authority is a seed's, but its seed's name has not resolved.
    Unresolved(String),
}

pub(super) struct Exceptions {
    resolver: CachingResolver,
    /// Look seed names up as they are added (a crawl's guard).
    eager: bool,
    state: Mutex<State>,
    /// Bumped each time a lookup ends, for checks waiting for one.
    looked_up: watch::Sender<u64>,
}

impl Default for Exceptions {
    fn default() -> Exceptions {
        Exceptions::new(CachingResolver::default(), false)
    }
}

/// A host as the guard spells it: lower case, an IPv6 address without
/// brackets, an IP literal in its one form.
fn host_name(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => host.to_ascii_lowercase(),
    }
}

impl Exceptions {
    pub(super) fn new(resolver: CachingResolver, eager: bool) -> Exceptions {
        Exceptions {
            resolver,
            eager,
            state: Mutex::default(),
            looked_up: watch::Sender::new(0),
        }
    }

    fn authority(&self, host: &str, port: Option<u16>) -> Authority {
        let host = host_name(host);
        let name = match host.parse::<IpAddr>() {
            Ok(_) => host,
            Err(_) => self.resolver.fixed_name(&host).unwrap_or(host),
        };
        Authority { name, port }
    }

    /// A seed on `host` and `port`: excepted for its own name's addresses.
    pub(super) fn add_seed(self: &Arc<Self>, host: &str, port: Option<u16>) {
        let key = self.authority(host, port);
        let name = host_name(host);
        let start = {
            let Ok(mut s) = self.state.lock() else {
                return;
            };
            let names = s.vouched.entry(key).or_default();
            if !names.contains(&name) {
                names.push(name.clone());
            }
            if s.lookups.contains_key(&name) {
                false
            } else if let Ok(ip) = name.parse::<IpAddr>() {
                s.lookups.insert(name.clone(), Lookup::Found(vec![ip]));
                false
            } else {
                let eager = self.eager && tokio::runtime::Handle::try_current().is_ok();
                let now = if eager {
                    Lookup::First
                } else {
                    Lookup::Waiting
                };
                s.lookups.insert(name.clone(), now);
                eager
            }
        };
        if start {
            self.spawn_lookup(name);
        }
    }

    /// `to` (host, port) gets the exception of `from`, when it has one. On
    /// another port than its scheme's default or `from`'s (another service
    /// than the seed's) it holds only while the seed's names resolve to
    /// private addresses alone: an intranet seed's redirect, not a public
    /// name that also answers 127.0.0.1 sending the crawl to :2375.
    pub(super) fn add_derived(&self, to: (&str, Option<u16>), from: (&str, Option<u16>)) {
        let other_port = to.1.is_some() && to.1 != from.1;
        let (to, from) = (self.authority(to.0, to.1), self.authority(from.0, from.1));
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        if other_port && !s.vouched.contains_key(&to) {
            s.other_port.insert(to.clone());
        }
        let Some(names) = s.vouched.get(&from).cloned() else {
            return;
        };
        let have = s.vouched.entry(to).or_default();
        for n in names {
            if !have.contains(&n) {
                have.push(n);
            }
        }
    }

    /// Whether `ip` is a seed's address for `host` on `port`. Waits only
    /// for the first lookup of the names excepting that authority (at
    /// most the lookup timeout).
    pub(super) async fn allows(
        self: &Arc<Self>,
        host: &str,
        port: Option<u16>,
        ip: IpAddr,
    ) -> Verdict {
        let key = self.authority(host, port);
        let mut changed = self.looked_up.subscribe();
        // A backstop: the lookup ends by its own timeout first.
        let deadline = Instant::now() + SEED_LOOKUP_TIMEOUT + Duration::from_secs(1);
        loop {
            let (verdict, wait, start) = self.judge(&key, ip);
            for name in start {
                self.spawn_lookup(name);
            }
            if !wait || verdict.is_allowed() {
                return verdict;
            }
            match tokio::time::timeout_at(deadline, changed.changed()).await {
                Ok(Ok(())) => continue,
                _ => return verdict,
            }
        }
    }

    /// The verdict from what is known now, whether a first lookup is
    /// under way, and the lookups to start (marked started).
    fn judge(&self, key: &Authority, ip: IpAddr) -> (Verdict, bool, Vec<String>) {
        let Ok(mut s) = self.state.lock() else {
            return (Verdict::Refused, false, Vec::new());
        };
        let Some(names) = s.vouched.get(key).cloned() else {
            return (Verdict::Refused, false, Vec::new());
        };
        let now = Instant::now();
        let intranet_only = s.other_port.contains(key);
        let (mut verdict, mut wait, mut start) = (Verdict::Refused, false, Vec::new());
        for name in names {
            match s.lookups.get_mut(&name) {
                Some(Lookup::Found(addrs))
                    if addrs.contains(&ip) && (!intranet_only || all_private(addrs)) =>
                {
                    return (Verdict::Allowed, false, start);
                }
                Some(Lookup::Found(_)) | None => {}
                Some(l @ Lookup::Waiting) => {
                    *l = Lookup::First;
                    start.push(name);
                    wait = true;
                }
                Some(Lookup::First) => wait = true,
                Some(Lookup::Failed { retry_at, trying }) => {
                    if !*trying && *retry_at <= now {
                        *trying = true;
                        start.push(name.clone());
                    }
                    verdict = Verdict::Unresolved(name);
                }
            }
        }
        (verdict, wait, start)
    }

    /// Looks `name` up on a task of its own, under the lookup timeout.
    fn spawn_lookup(self: &Arc<Self>, name: String) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            if let Ok(mut s) = self.state.lock() {
                s.lookups.insert(name, Lookup::Waiting);
            }
            return;
        };
        let me = self.clone();
        rt.spawn(async move {
            let found = tokio::time::timeout(SEED_LOOKUP_TIMEOUT, me.resolver.resolve(&name)).await;
            let now = match found {
                Ok(Ok(addrs)) if !addrs.is_empty() => Lookup::Found(addrs),
                _ => Lookup::Failed {
                    retry_at: Instant::now() + SEED_LOOKUP_RETRY,
                    trying: false,
                },
            };
            if let Ok(mut s) = me.state.lock() {
                s.lookups.insert(name, now);
            }
            me.looked_up.send_modify(|n| *n += 1);
        });
    }
}

/// None of `addrs` is public.
fn all_private(addrs: &[IpAddr]) -> bool {
    addrs
        .iter()
        .all(|a| !matches!(super::classify(*a), super::AddrClass::Public))
}

impl Verdict {
    fn is_allowed(&self) -> bool {
        matches!(self, Verdict::Allowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A public name that also answers loopback (as an attacker's DNS
    /// does) gets no exception on another port through its redirect.
    #[tokio::test]
    async fn a_redirect_to_another_port_is_excepted_for_an_intranet_seed_only() {
        let ex = Arc::new(Exceptions::new(CachingResolver::default(), false));
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        let public: IpAddr = "93.184.216.34".parse().unwrap();
        for (name, addrs) in [("mixed.test", vec![public, lo]), ("intra.test", vec![lo])] {
            ex.add_seed(name, None);
            let mut s = ex.state.lock().unwrap();
            s.lookups.insert(name.into(), Lookup::Found(addrs));
        }
        for name in ["mixed.test", "intra.test"] {
            ex.add_derived((name, Some(2375)), (name, None));
            ex.add_derived(("127.0.0.1", Some(6379)), (name, None));
            assert!(ex.allows(name, None, lo).await.is_allowed(), "{name}");
        }
        assert!(!ex.allows("mixed.test", Some(2375), lo).await.is_allowed());
        assert!(ex.allows("intra.test", Some(2375), lo).await.is_allowed());
        // 127.0.0.1:6379 is excepted by both; the intranet seed's holds.
        assert!(ex.allows("127.0.0.1", Some(6379), lo).await.is_allowed());
    }
}
