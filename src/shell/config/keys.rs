//! The table of settings: one entry a key, with its type and range, its
//! meaning, and how it reads and writes [`CrawlSettings`].

use std::time::Duration;

use super::{Key, Kind, Value, fmt_duration};
use crate::crawl::focus::StopRule;
use crate::crawl::{CrawlSettings, Scope};
use crate::filter::Mode;
use crate::filter::topic::TopicParams;
use crate::frontier::{Backlinks, Focus, Order};

const HOUR: Duration = Duration::from_secs(3600);
/// A fetch timeout shorter than this could never be met.
const TIMEOUT_MIN: Duration = Duration::from_millis(100);

pub(super) static CRAWL_KEYS: &[Key] = &[
    key!(
        "crawl.depth",
        Kind::OptInt { min: 0, max: 65535 },
        "links followed at most this many hops from a seed (none: no limit)",
        |s| opt(s.max_depth.map(u64::from)),
        |s, v| if let Value::OptInt(n) = v {
            s.max_depth = n.map(|n| n as u16)
        }
    ),
    key!(
        "crawl.max_pages",
        Kind::OptInt {
            min: 1,
            max: u64::MAX
        },
        "stop when the db holds this many fetched pages (none: no limit)",
        |s| opt(s.max_pages),
        |s, v| if let Value::OptInt(n) = v {
            s.max_pages = n
        }
    ),
    key!(
        "crawl.delay",
        Kind::Duration {
            min: Duration::ZERO,
            max: HOUR
        },
        "pause between two requests to one host",
        |s| fmt_duration(s.delay),
        |s, v| if let Value::Duration(d) = v {
            s.delay = d
        }
    ),
    key!(
        "crawl.concurrency",
        Kind::Int {
            min: 1,
            max: 10_000
        },
        "requests in flight in total",
        |s| s.concurrency.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.concurrency = n as usize
        }
    ),
    key!(
        "crawl.per_host",
        Kind::Int { min: 1, max: 256 },
        "requests in flight per host",
        |s| s.per_host.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.per_host = n as usize
        }
    ),
    key!(
        "crawl.max_outlinks",
        Kind::Int {
            min: 1,
            max: 1_000_000
        },
        "links taken from one page at most; the rest are counted and dropped",
        |s| s.max_outlinks.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.max_outlinks = n as usize
        }
    ),
    key!(
        "crawl.site_batch",
        Kind::Int {
            min: 0,
            max: 1_000_000
        },
        "seed sites crawled at a time, in the order given: a group is finished before the next starts (0: all at once)",
        |s| s.site_batch.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.site_batch = n as usize
        }
    ),
    key!(
        "crawl.scope",
        Kind::Enum(&["host", "domain", "any"]),
        "hosts the crawl may enter: the seeds' hosts, their registrable domains, or any",
        |s| s.scope.name().to_string(),
        |s, v| if let Value::Text(t) = v {
            s.scope = t.parse().unwrap_or(Scope::Host)
        }
    ),
    key!(
        "crawl.max_path_depth",
        Kind::OptInt { min: 1, max: 1000 },
        "spider traps: URLs with more path segments are not queued (none: no limit)",
        |s| opt(s.traps.max_path_depth.map(u64::from)),
        |s, v| if let Value::OptInt(n) = v {
            s.traps.max_path_depth = n.map(|n| n as u16)
        }
    ),
    key!(
        "crawl.max_segment_repeats",
        Kind::OptInt { min: 1, max: 1000 },
        "spider traps: URLs whose path repeats one segment more often are not queued (/a/b/a/b/a…)",
        |s| opt(s.traps.max_segment_repeats.map(u64::from)),
        |s, v| if let Value::OptInt(n) = v {
            s.traps.max_segment_repeats = n.map(|n| n as u16)
        }
    ),
    key!(
        "crawl.max_query_variants",
        Kind::OptInt {
            min: 1,
            max: u32::MAX as u64
        },
        "spider traps: query strings queued at most for one path of a host (calendars, session ids)",
        |s| opt(s.traps.max_query_variants.map(u64::from)),
        |s, v| if let Value::OptInt(n) = v {
            s.traps.max_query_variants = n.map(|n| n as u32)
        }
    ),
    key!(
        "crawl.max_host_urls",
        Kind::OptInt {
            min: 1,
            max: u64::MAX
        },
        "URLs queued at most for one host (none: no limit)",
        |s| opt(s.traps.max_host_urls),
        |s, v| if let Value::OptInt(n) = v {
            s.traps.max_host_urls = n
        }
    ),
    key!(
        "crawl.follow_nofollow",
        Kind::Bool,
        "follow rel=nofollow links",
        |s| s.follow_nofollow.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.follow_nofollow = b
        }
    ),
    key!(
        "crawl.follow_seed_links",
        Kind::Bool,
        "follow a seed's links whatever the page filters say of the seed itself",
        |s| s.follow_seed_links.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.follow_seed_links = b
        }
    ),
    key!(
        "crawl.max_redirects",
        Kind::Int { min: 0, max: 20 },
        "redirect hops followed from the URL first linked",
        |s| s.max_redirects.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.max_redirects = n as u8
        }
    ),
    key!(
        "crawl.max_attempts",
        Kind::Int { min: 1, max: 20 },
        "tries per URL answered with 429/503 before the answer is kept",
        |s| s.max_attempts.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.max_attempts = n as u8
        }
    ),
    key!(
        "crawl.backoff",
        Kind::Duration {
            min: Duration::ZERO,
            max: HOUR
        },
        "host back-off after 429/503 without Retry-After",
        |s| fmt_duration(s.backoff),
        |s, v| if let Value::Duration(d) = v {
            s.backoff = d
        }
    ),
    key!(
        "crawl.max_backoff",
        Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(86_400)
        },
        "upper bound on any back-off, Retry-After included",
        |s| fmt_duration(s.max_backoff),
        |s, v| if let Value::Duration(d) = v {
            s.max_backoff = d
        }
    ),
    key!(
        "robots.max_crawl_delay",
        Kind::Duration {
            min: Duration::ZERO,
            max: HOUR
        },
        "robots.txt Crawl-delay above this is capped",
        |s| fmt_duration(s.max_crawl_delay),
        |s, v| if let Value::Duration(d) = v {
            s.max_crawl_delay = d
        }
    ),
    key!(
        "robots.ttl",
        Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(30 * 86_400)
        },
        "how long a fetched robots.txt is trusted",
        |s| fmt_duration(s.robots_ttl),
        |s, v| if let Value::Duration(d) = v {
            s.robots_ttl = d
        }
    ),
    key!(
        "robots.retry",
        Kind::Duration {
            min: Duration::ZERO,
            max: HOUR
        },
        "first wait before retrying an unreachable robots.txt (doubles each time)",
        |s| fmt_duration(s.robots_retry),
        |s, v| if let Value::Duration(d) = v {
            s.robots_retry = d
        }
    ),
    key!(
        "robots.max_failures",
        Kind::Int { min: 1, max: 100 },
        "unreachable robots.txt fetches in a row before the host's URLs are dropped",
        |s| s.robots_max_failures.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.robots_max_failures = n as u32
        }
    ),
    key!(
        "fetch.user_agent",
        Kind::UserAgent,
        "User-Agent header; its first token is matched against robots.txt groups",
        |s| s.fetch.user_agent.clone(),
        |s, v| if let Value::Text(t) = v {
            s.fetch.user_agent = t
        }
    ),
    key!(
        "fetch.timeout",
        Kind::Duration {
            min: TIMEOUT_MIN,
            max: HOUR
        },
        "total time one fetch may take",
        |s| fmt_duration(s.fetch.total_timeout),
        |s, v| if let Value::Duration(d) = v {
            s.fetch.total_timeout = d
        }
    ),
    key!(
        "fetch.connect_timeout",
        Kind::Duration {
            min: TIMEOUT_MIN,
            max: HOUR
        },
        "time to open a connection",
        |s| fmt_duration(s.fetch.connect_timeout),
        |s, v| if let Value::Duration(d) = v {
            s.fetch.connect_timeout = d
        }
    ),
    key!(
        "fetch.first_byte_timeout",
        Kind::Duration {
            min: TIMEOUT_MIN,
            max: HOUR
        },
        "time until the response headers arrive",
        |s| fmt_duration(s.fetch.first_byte_timeout),
        |s, v| if let Value::Duration(d) = v {
            s.fetch.first_byte_timeout = d
        }
    ),
    key!(
        "fetch.max_body",
        Kind::Int {
            min: 1024,
            max: 1 << 30
        },
        "cap in bytes on a body, on the wire and decoded",
        |s| s.fetch.max_body_bytes.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.fetch.max_body_bytes = n as usize
        }
    ),
    key!(
        "fetch.memory_budget",
        Kind::Int {
            min: 1 << 20,
            max: 1 << 40
        },
        "bytes of bodies in flight at most (read, decoded, waiting to be stored), beyond each body's first 64 KiB",
        |s| s.fetch.memory_budget.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.fetch.memory_budget = n as usize
        }
    ),
    key!(
        "fetch.min_speed",
        Kind::Int {
            min: 0,
            max: 1 << 30
        },
        "bytes a second a body must bring over each fetch.min_speed_window, or it is cut as too-slow (0: no minimum)",
        |s| s.fetch.min_speed.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.fetch.min_speed = n
        }
    ),
    key!(
        "fetch.min_speed_window",
        Kind::Duration {
            min: Duration::from_secs(1),
            max: HOUR
        },
        "the time over which a body's speed is measured against fetch.min_speed",
        |s| fmt_duration(s.fetch.min_speed_window),
        |s, v| if let Value::Duration(d) = v {
            s.fetch.min_speed_window = d
        }
    ),
    key!(
        "net.allow_private",
        Kind::Bool,
        "connect to loopback and private addresses other than the seeds' own (link-local and cloud-metadata addresses never)",
        |s| s.fetch.allow_private.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.fetch.allow_private = b
        }
    ),
    key!(
        "fetch.ca_file",
        Kind::OptPath,
        "extra PEM root certificate(s) to trust (none: only the built-in roots)",
        |s| s
            .fetch
            .ca_file
            .as_ref()
            .map_or("none".into(), |p| p.display().to_string()),
        |s, v| if let Value::Text(t) = v {
            s.fetch.ca_file = (t != "none").then(|| t.into())
        }
    ),
    key!(
        "store.dictionary_pages",
        Kind::Int {
            min: 0,
            max: 10_000
        },
        "HTML pages (at most 4 MiB of them) a crawl trains the db's zstd dictionary on when the db has none; 0: pages are stored without a dictionary",
        |s| s.dictionary_pages.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.dictionary_pages = n as usize
        },
        at_start
    ),
    key!(
        "filter.mode",
        Kind::Enum(&Mode::NAMES),
        "focused-crawl filters: none, domain (000 stage 1), domain+topic (000 stages 1+2), relevance (001), relevance+linktype (001 with link policy)",
        |s| s.filter.mode.name().to_string(),
        |s, v| if let Value::Text(t) = v {
            s.filter.mode = Mode::parse(&t).unwrap_or_default()
        }
    ),
    key!(
        "domains.common",
        Kind::List,
        "labels removed from seed hosts to leave key domains (000)",
        |s| s.filter.common_domains.join(","),
        |s, v| if let Value::List(l) = v {
            s.filter.common_domains = l
        }
    ),
    key!(
        "domains.extra_keys",
        Kind::List,
        "key domains added by hand (domains key add)",
        |s| s.filter.extra_keys.join(","),
        |s, v| if let Value::List(l) = v {
            s.filter.extra_keys = l
        }
    ),
    key!(
        "domains.removed_keys",
        Kind::List,
        "derived key domains removed by hand (domains key remove)",
        |s| s.filter.removed_keys.join(","),
        |s, v| if let Value::List(l) = v {
            s.filter.removed_keys = l
        }
    ),
    key!(
        "topic.preset",
        Kind::Enum(&["a", "b", "custom"]),
        "000's parameter sets: a = 1, 3, 0.2, 8; b = 0.1, 0.3, 0.2, 0.5 with its five keywords",
        |s| preset_of(&s.filter.topic).to_string(),
        |s, v| if let Value::Text(t) = v {
            apply_preset(s, &t)
        }
    ),
    key!(
        "topic.keywords",
        Kind::List,
        "keywords K of formula (1)",
        |s| s.filter.topic_keywords.join(","),
        |s, v| if let Value::List(l) = v {
            s.filter.topic_keywords = l
        }
    ),
    key!(
        "topic.ct_weight",
        Kind::Float { min: 0.0, max: 1e6 },
        "weight of a keyword in the body text (ct_weight)",
        |s| s.filter.topic.ct_weight.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.topic.ct_weight = f
        }
    ),
    key!(
        "topic.tl_weight",
        Kind::Float { min: 0.0, max: 1e6 },
        "weight of a keyword in the title (tl_weight)",
        |s| s.filter.topic.tl_weight.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.topic.tl_weight = f
        }
    ),
    key!(
        "topic.gain",
        Kind::Float { min: 0.0, max: 1e3 },
        "gain d for several distinct keywords",
        |s| s.filter.topic.gain.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.topic.gain = f
        }
    ),
    key!(
        "topic.threshold",
        Kind::Float { min: 0.0, max: 1e9 },
        "a page off the key domains is kept when its score is above this",
        |s| s.filter.topic.threshold.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.topic.threshold = f
        }
    ),
    key!(
        "relevance.keywords",
        Kind::Weighted { max: 1e6 },
        "keyword:weight pairs of the topic vector (001)",
        |s| s
            .filter
            .relevance_keywords
            .iter()
            .map(|(k, w)| format!("{k}:{w}"))
            .collect::<Vec<_>>()
            .join(","),
        |s, v| if let Value::Weighted(l) = v {
            s.filter.relevance_keywords = l
        }
    ),
    key!(
        "relevance.threshold",
        Kind::Float { min: 0.0, max: 1.0 },
        "r: a page is relevant when cos ≥ r",
        |s| s.filter.relevance_threshold.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.relevance_threshold = f
        }
    ),
    key!(
        "links.upward_p",
        Kind::Float { min: 0.0, max: 1.0 },
        "probability of following an upward link (hash-decided, reproducible)",
        |s| s.filter.links.upward_p.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.filter.links.upward_p = f
        }
    ),
    key!(
        "links.min_anchor_hits",
        Kind::Int { min: 0, max: 1000 },
        "keywords needed around a crosswise or outward link's anchor",
        |s| s.filter.links.min_anchor_hits.to_string(),
        |s, v| if let Value::Int(n) = v {
            s.filter.links.min_anchor_hits = n as u32
        }
    ),
    key!(
        "links.relevant_only",
        Kind::Bool,
        "follow links of relevant pages only",
        |s| s.filter.links.relevant_only.to_string(),
        |s, v| if let Value::Bool(b) = v {
            s.filter.links.relevant_only = b
        }
    ),
    key!(
        "crawl.order",
        Kind::Enum(&Order::NAMES),
        "what to fetch next (002): bfs, dfs (deepest first), shark (Shark-search), importance (α·IB + β·IL), learned (a link model trained on the page verdicts; learned show); a change re-keys each host's queue when it is next scheduled",
        |s| s.order.order.name().to_string(),
        |s, v| if let Value::Text(t) = v {
            s.order.order = Order::parse(&t).unwrap_or_default()
        }
    ),
    key!(
        "crawl.stop_when",
        Kind::StopRules,
        "stop the crawl when it stops finding relevant pages: harvest<X/N (harvest rate over the last N pages below X), no-relevant/N, saturation<X/N (share of new terms per page below X over N pages); the rule that fired is kept in the run",
        |s| StopRule::list_text(&s.stop_when),
        |s, v| if let Value::Text(t) = v {
            s.stop_when = StopRule::parse_list(&t).unwrap_or_default()
        }
    ),
    key!(
        "crawl.focus",
        Kind::Enum(&Focus::NAMES),
        "hard: links of pages the page filters drop are not followed (001, 002); soft: they are queued behind every other URL, so the crawl can tunnel through off-topic pages",
        |s| s.order.focus.name().to_string(),
        |s, v| if let Value::Text(t) = v {
            s.order.focus = Focus::parse(&t).unwrap_or_default()
        }
    ),
    key!(
        "shark.delta",
        Kind::Float {
            min: 0.0,
            max: 0.99
        },
        "δ: decay of the score a link inherits from its page (Shark-search)",
        |s| s.order.delta.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.order.delta = f
        }
    ),
    key!(
        "shark.gamma",
        Kind::Float { min: 0.0, max: 1.0 },
        "γ: weight of the inherited score against the anchor-context score (Shark-search)",
        |s| s.order.gamma.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.order.gamma = f
        }
    ),
    key!(
        "importance.alpha",
        Kind::Float { min: 0.0, max: 1.0 },
        "α: weight of IB, the in-links weighted by their pages' scores (importance)",
        |s| s.order.alpha.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.order.alpha = f
        }
    ),
    key!(
        "importance.beta",
        Kind::Float { min: 0.0, max: 1.0 },
        "β: weight of IL, the URL's shape: few path segments, no query, a pattern word (importance)",
        |s| s.order.beta.to_string(),
        |s, v| if let Value::Float(f) = v {
            s.order.beta = f
        }
    ),
    key!(
        "importance.patterns",
        Kind::List,
        "words that make a URL important when in its host or path (IL)",
        |s| s.order.patterns.join(","),
        |s, v| if let Value::List(l) = v {
            s.order.patterns = l
        }
    ),
    key!(
        "importance.backlinks",
        Kind::Enum(&Backlinks::NAMES),
        "what an in-link weighs in IB: inlinks (the linking page's importance) or pagerank (its PageRank from the last rank pagerank, relative to the mean)",
        |s| s.order.backlinks.name().to_string(),
        |s, v| if let Value::Text(t) = v {
            s.order.backlinks = Backlinks::parse(&t).unwrap_or_default()
        }
    ),
];

fn preset_of(p: &TopicParams) -> &'static str {
    if *p == TopicParams::PRESET_A {
        "a"
    } else if *p == TopicParams::PRESET_B {
        "b"
    } else {
        "custom"
    }
}

fn apply_preset(s: &mut CrawlSettings, name: &str) {
    match name {
        "a" => s.filter.topic = TopicParams::PRESET_A,
        "b" => {
            s.filter.topic = TopicParams::PRESET_B;
            s.filter.topic_keywords = TopicParams::PRESET_B_KEYWORDS.map(String::from).to_vec();
        }
        _ => {}
    }
}

pub(super) fn opt(v: Option<u64>) -> String {
    v.map_or("none".to_string(), |n| n.to_string())
}
