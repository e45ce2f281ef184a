//! Probing candidate seed sites (`discover seeds --probe`): each host's
//! robots.txt, then — when it allows `/` — its home page, fetched as the
//! crawl fetches (the same client settings and network guard, which lets
//! through no private address unless `net.allow_private`: a candidate is
//! no seed; robots.txt obeyed; the crawl's delay, or the host's
//! Crawl-delay, between the two requests), and the home page's topic
//! score under the crawl's topic keywords. Hosts are probed a few at a
//! time; one host sees one request at a time. Also the addresses of
//! candidate hosts that are not public, for `discover seeds` and `seed
//! accept`.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;

use super::politeness::{Politeness, cap_crawl_delay};
use crate::fetch::{
    AddrClass, CachingResolver, ClientError, HttpClient, NetGuard, RobotsRules, classify_addr,
    fetch_robots,
};
use crate::filter::Filters;
use crate::model::{RobotsOutcome, now_ms};
use crate::parse;
use crate::schema::{ProbeRecord, SeedList};
use crate::settings::CrawlSettings;

/// Hosts probed at once.
const AT_ONCE: usize = 8;
/// Host names looked up at once, and how long one lookup may take.
const LOOKUPS_AT_ONCE: usize = 32;
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// For each of `hosts` (as `CanonicalUrl::host` spells them), its first
/// address that is not public, with its class: the address the network
/// guard refuses a host that is no seed's. Names are looked up through
/// `resolve` (`--resolve`'s answers) and DNS, a few dozen at once; one
/// that does not answer in time gets None. `go_on()` is asked as lookups
/// end; when it returns false no more are started.
pub async fn non_public_addresses(
    resolve: &[(String, IpAddr)],
    hosts: &[String],
    mut go_on: impl FnMut() -> bool,
) -> Vec<Option<(IpAddr, AddrClass)>> {
    let resolver = CachingResolver::with_fixed(resolve);
    let mut found = vec![None; hosts.len()];
    let mut tasks = JoinSet::new();
    let (mut next, mut go) = (0, true);
    loop {
        while go && next < hosts.len() && tasks.len() < LOOKUPS_AT_ONCE {
            let (r, host, i) = (resolver.clone(), hosts[next].clone(), next);
            tasks.spawn(async move { (i, addresses_of(&r, &host).await) });
            next += 1;
        }
        let Some(joined) = tasks.join_next().await else {
            break;
        };
        if let Ok((i, addrs)) = joined {
            found[i] = addrs
                .into_iter()
                .map(|ip| (ip, classify_addr(ip)))
                .find(|(_, class)| *class != AddrClass::Public);
        }
        go = go_on();
    }
    found
}

/// `host`'s addresses (an IP literal's own); none when it does not resolve
/// in time.
async fn addresses_of(resolver: &CachingResolver, host: &str) -> Vec<IpAddr> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return vec![ip];
    }
    match tokio::time::timeout(LOOKUP_TIMEOUT, resolver.resolve(bare)).await {
        Ok(Ok(addrs)) => addrs,
        _ => Vec::new(),
    }
}

/// Probes each of `origins` (`scheme://host[:port]`), through a guard
/// that excepts no private address (a candidate is no seed's host and
/// port; `net.allow_private` still applies). `progress(done)` is
/// called as probes end; when it returns false no more are started.
/// Results come in the order of `origins`; None for a host not probed
/// (interrupted first, or its probe panicked).
pub async fn probe(
    settings: &CrawlSettings,
    seeds: &SeedList,
    origins: &[String],
    mut progress: impl FnMut(usize) -> bool,
) -> Result<Vec<Option<ProbeRecord>>, ClientError> {
    // No seed's exception: a candidate is no seed's host and port.
    let client = HttpClient::new(settings.fetch.clone(), NetGuard::default())?;
    let filters = Arc::new(Filters::for_seeds(&settings.filter, seeds.urls.iter()));
    let probe = Arc::new(Probe {
        client,
        agent: settings.agent_token().to_string(),
        politeness: Politeness::of(settings),
        max_crawl_delay: settings.max_crawl_delay,
        filters,
    });
    let mut results: Vec<Option<ProbeRecord>> = vec![None; origins.len()];
    let mut tasks = JoinSet::new();
    let (mut next, mut done, mut go_on) = (0, 0, true);
    loop {
        while go_on && next < origins.len() && tasks.len() < AT_ONCE {
            let (p, origin) = (probe.clone(), origins[next].clone());
            tasks.spawn(async move { (next, p.host(&origin).await) });
            next += 1;
        }
        let Some(joined) = tasks.join_next().await else {
            break;
        };
        // A probe that panicked leaves its host unprobed.
        if let Ok((i, rec)) = joined {
            results[i] = Some(rec);
        }
        done += 1;
        go_on = progress(done);
    }
    Ok(results)
}

struct Probe {
    client: HttpClient,
    agent: String,
    politeness: Politeness,
    max_crawl_delay: Duration,
    filters: Arc<Filters>,
}

impl Probe {
    async fn host(&self, origin: &str) -> ProbeRecord {
        let mut rec = ProbeRecord {
            checked_ms: now_ms(),
            ..ProbeRecord::default()
        };
        let robots = fetch_robots(&self.client, origin, |_| {}).await;
        if let Some(why) = robots.blocked {
            rec.robots = "blocked".into();
            rec.detail = why;
            return rec;
        }
        rec.robots = match &robots.outcome {
            RobotsOutcome::Fetched { status } | RobotsOutcome::Unavailable { status } => {
                status.to_string()
            }
            RobotsOutcome::TooManyRedirects => "redirects".into(),
            RobotsOutcome::Unreachable { detail } => {
                // As the crawl does: nothing of the host is fetched.
                rec.detail = format!("robots.txt unreachable ({detail}): home page not fetched");
                "unreachable".into()
            }
        };
        let rules = RobotsRules::of(&robots.outcome, &robots.body, &self.agent);
        if rules.is_unreachable() {
            return rec;
        }
        if !rules.allows("/") {
            rec.detail = "robots.txt disallows /: home page not fetched".into();
            return rec;
        }
        // The gap the crawl would leave between the two requests.
        let crawl_delay = cap_crawl_delay(rules.crawl_delay(), self.max_crawl_delay)
            .map(|(d, _)| d.as_millis() as u64);
        let gap_ms = self.politeness.gap_ms(None, crawl_delay);
        tokio::time::sleep(Duration::from_millis(gap_ms)).await;
        self.home(origin, &mut rec).await;
        rec
    }

    async fn home(&self, origin: &str, rec: &mut ProbeRecord) {
        let url = format!("{origin}/");
        let fetched = match self.client.get(&url).await {
            Ok(f) => f,
            Err(e) => {
                rec.detail = e.to_string();
                return;
            }
        };
        rec.home = Some(fetched.status);
        if let Some(to) = &fetched.location {
            rec.detail = format!("redirects to {to}");
        }
        if !(200..300).contains(&fetched.status) || !parse::is_html(&fetched.content_type) {
            return;
        }
        let Ok(base) = url::Url::parse(&url) else {
            return;
        };
        let decoded = parse::decode_owned(fetched.body, Some(&fetched.content_type));
        let page = parse::parse_html(&decoded.text, &base, decoded.charset, &self.agent, 0);
        rec.topic = Some(self.filters.topic(&page.title, &page.text));
        rec.title = page.title;
    }
}
