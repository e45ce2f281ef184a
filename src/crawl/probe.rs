//! Probing candidate seed sites (`discover seeds --probe`): each host's
//! robots.txt, then — when it allows `/` — its home page, fetched as the
//! crawl fetches (the same client settings and network guard, which lets
//! through only the seeds' private addresses; robots.txt obeyed; the
//! crawl's delay, or the host's Crawl-delay, between the two requests),
//! and the home page's topic score under the crawl's topic keywords.
//! Hosts are probed a few at a time; one host sees one request at a time.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;

use super::CrawlSettings;
use crate::fetch::{ClientError, HttpClient, NetGuard, RobotsRules, fetch_robots};
use crate::filter::Filters;
use crate::model::{self, RobotsOutcome, now_ms};
use crate::parse;
use crate::schema::{ProbeRecord, SeedList};

/// Hosts probed at once.
const AT_ONCE: usize = 8;

/// Probes each of `origins` (`scheme://host[:port]`); the seed URLs'
/// hosts are the addresses the guard lets through when private (not the
/// hosts seeds redirected to: a seed cannot vouch for where it sends us,
/// as in the crawl). `progress(done)` is
/// called as probes end; when it returns false no more are started.
/// Results come in the order of `origins`; None for a host not probed
/// (interrupted first, or its probe panicked).
pub async fn probe(
    settings: &CrawlSettings,
    seeds: &SeedList,
    origins: &[String],
    mut progress: impl FnMut(usize) -> bool,
) -> Result<Vec<Option<ProbeRecord>>, ClientError> {
    let guard = NetGuard::default();
    for u in &seeds.urls {
        if let Ok(u) = model::normalize(u) {
            guard.add_seed_host(u.host());
        }
    }
    let client = HttpClient::new(settings.fetch.clone(), guard)?;
    let filters = Arc::new(Filters::for_seeds(&settings.filter, seeds.urls.iter()));
    let probe = Arc::new(Probe {
        client,
        agent: settings.agent_token().to_string(),
        delay: settings.delay,
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
    delay: Duration,
    max_crawl_delay: Duration,
    filters: Arc<Filters>,
}

impl Probe {
    async fn host(&self, origin: &str) -> ProbeRecord {
        let mut rec = ProbeRecord {
            checked_ms: now_ms(),
            ..ProbeRecord::default()
        };
        let robots = fetch_robots(&self.client, origin).await;
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
        let crawl_delay = super::robots::crawl_delay(rules.crawl_delay(), self.max_crawl_delay)
            .map_or(Duration::ZERO, |(d, _)| d);
        tokio::time::sleep(self.delay.max(crawl_delay)).await;
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
