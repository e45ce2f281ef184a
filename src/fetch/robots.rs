//! robots.txt: fetching with RFC 9309's status semantics, and the parsed
//! rules for our user agent (robotxt does the matching: most specific
//! group, longest match, `*` and `$`).

use std::time::Duration;

use super::HttpClient;
use crate::schema::{RobotsOutcome, RobotsRecord};

/// Redirect hops followed for robots.txt (RFC 9309 asks for at least five).
const MAX_REDIRECTS: usize = 5;
/// Parsing stops here (RFC 9309 asks for at least 500 KiB).
const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// The product token robots.txt groups are matched against: the user
/// agent up to the first `/` or space, e.g. `trawl` for `trawl/0.1 (+…)`.
pub fn product_token(user_agent: &str) -> &str {
    user_agent
        .split(['/', ' '])
        .next()
        .unwrap_or(user_agent)
        .trim()
}

/// Fetches `origin/robots.txt`, following up to five redirects.
pub async fn fetch_robots(client: &HttpClient, origin: &str) -> (RobotsOutcome, Vec<u8>) {
    let mut url = format!("{origin}/robots.txt");
    for _ in 0..=MAX_REDIRECTS {
        let resp = match client.get(&url).await {
            Ok(r) => r,
            Err(e) => {
                return (
                    RobotsOutcome::Unreachable {
                        detail: e.to_string(),
                    },
                    Vec::new(),
                );
            }
        };
        match resp.status {
            200..=299 => {
                let mut body = resp.body;
                body.truncate(MAX_ROBOTS_BYTES);
                return (
                    RobotsOutcome::Fetched {
                        status: resp.status,
                    },
                    body,
                );
            }
            300..=399 => {
                let next = resp
                    .location
                    .as_deref()
                    .and_then(|l| url::Url::parse(&url).ok()?.join(l).ok());
                match next {
                    Some(n) => url = n.to_string(),
                    // A redirect with nowhere to go: no file there.
                    None => {
                        return (
                            RobotsOutcome::Unavailable {
                                status: resp.status,
                            },
                            Vec::new(),
                        );
                    }
                }
            }
            // Google treats 429 like a server error; so do we.
            429 => {
                return (
                    RobotsOutcome::Unreachable {
                        detail: "429 Too Many Requests".into(),
                    },
                    Vec::new(),
                );
            }
            400..=499 => {
                return (
                    RobotsOutcome::Unavailable {
                        status: resp.status,
                    },
                    Vec::new(),
                );
            }
            s => {
                return (
                    RobotsOutcome::Unreachable {
                        detail: format!("status {s}"),
                    },
                    Vec::new(),
                );
            }
        }
    }
    (RobotsOutcome::TooManyRedirects, Vec::new())
}

/// The rules of one host's robots.txt that apply to our agent.
pub struct RobotsRules {
    robots: robotxt::Robots,
    unreachable: bool,
}

impl RobotsRules {
    pub fn from_record(rec: &RobotsRecord, agent: &str) -> RobotsRules {
        let unreachable = matches!(rec.outcome, RobotsOutcome::Unreachable { .. });
        let robots = match &rec.outcome {
            RobotsOutcome::Fetched { .. } => robotxt::Robots::parse(&rec.body, agent),
            RobotsOutcome::Unavailable { .. } | RobotsOutcome::TooManyRedirects => {
                robotxt::Robots::allow_all()
            }
            RobotsOutcome::Unreachable { .. } => robotxt::Robots::disallow_all(),
        };
        RobotsRules {
            robots,
            unreachable,
        }
    }

    /// Whether `path_and_query` (e.g. `/a/b?c`) may be fetched.
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

    /// The pattern that decides `path_and_query`, for explanations.
    pub fn deciding_rule(&self, path_and_query: &str) -> Option<String> {
        self.robots.matching_rule(path_and_query).map(|r| {
            format!(
                "{} {}",
                if r.is_allow() { "Allow:" } else { "Disallow:" },
                r.pattern()
            )
        })
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
