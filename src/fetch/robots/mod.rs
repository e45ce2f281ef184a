//! robots.txt: fetching with RFC 9309's status semantics, and the rules
//! that apply to our user agent ([`rules`] parses and matches them).

#[cfg(test)]
mod cases;
mod rules;

use std::time::Duration;

pub use rules::{Robots, Rule};

use super::{HttpClient, Wire};
use crate::model;
use crate::model::{FailReason, RobotsOutcome, RobotsRecord};

/// Redirect hops followed for robots.txt (RFC 9309 asks for at least five).
const MAX_REDIRECTS: usize = 5;
/// Parsing stops here (RFC 9309 asks for at least 500 KiB).
const MAX_ROBOTS_BYTES: usize = 500 * 1024;
/// Times a robots.txt fetch is asked again after waiting its patience for
/// memory (each wait is `fetch.timeout` long).
const MAX_MEMORY_WAITS: u32 = 10;

/// The product token robots.txt groups are matched against: the user
/// agent up to the first `/` or space, e.g. `trawl` for `trawl/0.1 (+…)`.
pub fn product_token(user_agent: &str) -> &str {
    user_agent
        .trim()
        .split(['/', ' ', '\t'])
        .next()
        .unwrap_or(user_agent)
        .trim()
}

/// How a robots.txt fetch ended, and the redirects it followed.
pub struct RobotsFetch {
    pub outcome: RobotsOutcome,
    pub body: Vec<u8>,
    /// Each redirect target followed, in order (normalized URLs).
    pub redirects: Vec<model::CanonicalUrl>,
    /// The network guard refused the host's own address (not a redirect
    /// target's): why. Nothing of the host can be fetched.
    pub blocked: Option<String>,
    /// Each response as exchanged, when the client keeps the wire (for
    /// WARC records).
    pub hops: Vec<RobotsHop>,
}

/// One response of a robots.txt fetch, as on the wire.
pub struct RobotsHop {
    pub url: String,
    pub wire: Box<Wire>,
    /// The body decoded (the payload when it was not content-coded).
    pub body: Vec<u8>,
    pub truncated: bool,
}

impl RobotsFetch {
    fn ended(outcome: RobotsOutcome, redirects: Vec<model::CanonicalUrl>) -> RobotsFetch {
        RobotsFetch {
            outcome,
            body: Vec::new(),
            redirects,
            blocked: None,
            hops: Vec::new(),
        }
    }
}

/// Fetches `origin/robots.txt`, following up to five redirects. A redirect
/// obeys the rules of a page's: only to http(s) URLs, every hop through
/// the same client (so the network guard checks each address connected to).
/// `before_hop(redirects)` is called before each hop is followed, with the
/// redirects so far (the one about to be followed last).
pub async fn fetch_robots(
    client: &HttpClient,
    origin: &str,
    mut before_hop: impl FnMut(&[model::CanonicalUrl]),
) -> RobotsFetch {
    let mut url = format!("{origin}/robots.txt");
    let mut redirects = Vec::new();
    let mut waits = 0;
    let mut hops = 0;
    let mut wires = Vec::new();
    while hops <= MAX_REDIRECTS {
        let mut resp = match client.get(&url).await {
            Ok(r) => r,
            // It waited its patience for memory other bodies held: no
            // answer of the host's, so asked again rather than counted
            // as unreachable (which drops the host's URLs in the end).
            Err(e) if e.later && waits < MAX_MEMORY_WAITS => {
                waits += 1;
                continue;
            }
            Err(e) => {
                let blocked = (e.reason == FailReason::NetworkGuard && redirects.is_empty())
                    .then(|| e.detail.clone());
                let detail = e.to_string();
                return RobotsFetch {
                    blocked,
                    hops: wires,
                    ..RobotsFetch::ended(RobotsOutcome::Unreachable { detail }, redirects)
                };
            }
        };
        if let Some(mut wire) = resp.wire.take() {
            // Archived up to what a robots.txt is read to (the copy is not
            // counted by the byte budget, so it stays small).
            let cut = |b: &[u8]| b[..b.len().min(MAX_ROBOTS_BYTES)].to_vec();
            let raw_cut = (wire.raw_body.as_ref()).is_some_and(|r| r.len() > MAX_ROBOTS_BYTES);
            if let Some(raw) = wire.raw_body.as_mut() {
                raw.truncate(MAX_ROBOTS_BYTES);
            }
            wires.push(RobotsHop {
                url: url.clone(),
                wire,
                body: cut(&resp.body),
                truncated: resp.truncated || raw_cut || resp.body.len() > MAX_ROBOTS_BYTES,
            });
        }
        let status = resp.status;
        let outcome = match status {
            200..=299 => {
                let mut body = resp.body;
                body.truncate(MAX_ROBOTS_BYTES);
                body.shrink_to_fit(); // kept with the host for the crawl
                return RobotsFetch {
                    outcome: RobotsOutcome::Fetched { status },
                    body,
                    redirects,
                    blocked: None,
                    hops: wires,
                };
            }
            300..=399 => {
                let next = resp.location.as_deref().and_then(|l| {
                    let base = url::Url::parse(&url).ok()?;
                    model::resolve(&base, l).ok()
                });
                match next {
                    Some(n) => {
                        url = n.as_str().to_string();
                        redirects.push(n);
                        before_hop(&redirects);
                        hops += 1;
                        continue;
                    }
                    // No Location, or one that is not an http(s) URL: no
                    // file there.
                    None => RobotsOutcome::Unavailable { status },
                }
            }
            // 429 is a 4xx, but RFC 9309 (2.3.1.3) lets 4xx mean "no
            // rules" only when the file is unavailable; a server asking us
            // to slow down has not said that. Google treats 429 like a 5xx
            // (unreachable: disallow all until a retry succeeds); so do we.
            429 => RobotsOutcome::Unreachable {
                detail: "429 Too Many Requests".into(),
            },
            400..=499 => RobotsOutcome::Unavailable { status },
            s => RobotsOutcome::Unreachable {
                detail: format!("status {s}"),
            },
        };
        return RobotsFetch {
            hops: wires,
            ..RobotsFetch::ended(outcome, redirects)
        };
    }
    RobotsFetch {
        hops: wires,
        ..RobotsFetch::ended(RobotsOutcome::TooManyRedirects, redirects)
    }
}

/// The rules of one host's robots.txt that apply to our agent.
pub struct RobotsRules {
    robots: Robots,
    unreachable: bool,
}

impl RobotsRules {
    pub fn from_record(rec: &RobotsRecord, agent: &str) -> RobotsRules {
        RobotsRules::of(&rec.outcome, &rec.body, agent)
    }

    /// The rules of a robots.txt fetch that ended as `outcome` with `body`.
    pub fn of(outcome: &RobotsOutcome, body: &[u8], agent: &str) -> RobotsRules {
        let unreachable = matches!(outcome, RobotsOutcome::Unreachable { .. });
        let robots = match outcome {
            RobotsOutcome::Fetched { .. } => Robots::parse(body, agent),
            // 4xx, too many redirects: no rules. Unreachable: nothing is
            // fetched at all (see `allows`).
            _ => Robots::allow_all(),
        };
        RobotsRules {
            robots,
            unreachable,
        }
    }

    /// Whether `path_and_query` (e.g. `/a/b?c`, of a normalized URL) may
    /// be fetched.
    pub fn allows(&self, path_and_query: &str) -> bool {
        !self.unreachable && self.robots.is_allowed(path_and_query)
    }

    /// The file could not be fetched (5xx, network): nothing may be fetched.
    pub fn is_unreachable(&self) -> bool {
        self.unreachable
    }

    pub fn crawl_delay(&self) -> Option<Duration> {
        self.robots.crawl_delay()
    }

    /// The rule that decides `path_and_query`, for explanations: its
    /// line number and text.
    pub fn deciding_rule(&self, path_and_query: &str) -> Option<String> {
        self.robots
            .deciding_rule(path_and_query)
            .map(|r| format!("line {}: {}", r.line, r.describe()))
    }

    pub fn parsed(&self) -> &Robots {
        &self.robots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(body: &str) -> RobotsRules {
        let rec = RobotsRecord {
            outcome: RobotsOutcome::Fetched { status: 200 },
            body: body.as_bytes().to_vec(),
            fetched_ms: 0,
            expires_ms: 0,
            failures: 0,
        };
        RobotsRules::from_record(&rec, "trawl")
    }

    #[test]
    fn most_specific_group_longest_match_wildcards() {
        let r = rules(
            "User-agent: *\nDisallow: /\n\nUser-agent: Trawl\nDisallow: /private\nAllow: /private/open\n\
             Disallow: /*.pdf$\nCrawl-delay: 2.5\n",
        );
        assert!(r.allows("/public"));
        assert!(!r.allows("/private/x"));
        assert!(r.allows("/private/open/x"));
        assert!(!r.allows("/doc.pdf") && r.allows("/doc.pdf?x=1"));
        assert_eq!(r.crawl_delay(), Some(Duration::from_millis(2500)));
        assert_eq!(product_token("Trawl/0.1 (+x)"), "Trawl");
        // A UTF-8 byte-order mark does not hide the first line.
        assert!(!rules("\u{FEFF}User-agent: *\nDisallow: /x\n").allows("/x"));
    }

    #[test]
    fn access_results() {
        let mk = |outcome| RobotsRecord {
            outcome,
            body: vec![],
            fetched_ms: 0,
            expires_ms: 0,
            failures: 0,
        };
        assert!(
            RobotsRules::from_record(&mk(RobotsOutcome::Unavailable { status: 404 }), "trawl")
                .allows("/x")
        );
        assert!(
            RobotsRules::from_record(&mk(RobotsOutcome::TooManyRedirects), "trawl").allows("/x")
        );
        let r = RobotsRules::from_record(
            &mk(RobotsOutcome::Unreachable {
                detail: "503".into(),
            }),
            "trawl",
        );
        assert!(!r.allows("/x") && r.is_unreachable());
    }
}
