//! The settings table: typed values validated, shown back, recorded.

use std::time::Duration;

use super::validate::Bounds;
use super::*;
use crate::filter::Mode;
use crate::filter::topic::TopicParams;

#[test]
fn typed_values_are_validated() {
    let mut s = CrawlSettings::default();
    find("crawl.delay").unwrap().set(&mut s, "500ms").unwrap();
    assert_eq!(s.delay, Duration::from_millis(500));
    find("crawl.depth").unwrap().set(&mut s, "none").unwrap();
    assert_eq!(s.max_depth, None);
    find("crawl.scope").unwrap().set(&mut s, "Domain").unwrap();
    assert_eq!(s.scope, Scope::Domain);
    let e = find("crawl.concurrency")
        .unwrap()
        .set(&mut s, "0")
        .unwrap_err();
    assert!(e.contains("out of range") && e.contains("1..10000"), "{e}");
    assert!(find("crawl.delay").unwrap().set(&mut s, "fast").is_err());
    assert!(
        find("crawl.follow_nofollow")
            .unwrap()
            .set(&mut s, "maybe")
            .is_err()
    );
    assert_eq!(fmt_duration(Duration::from_millis(1500)), "1500ms");
    assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
}

#[test]
fn filter_keys() {
    let mut s = CrawlSettings::default();
    find("filter.mode")
        .unwrap()
        .set(&mut s, "domain+topic")
        .unwrap();
    assert_eq!(s.filter.mode, Mode::DomainTopic);
    find("topic.preset").unwrap().set(&mut s, "a").unwrap();
    assert_eq!(s.filter.topic, TopicParams::PRESET_A);
    find("topic.keywords")
        .unwrap()
        .set(&mut s, "crawler, filter ,")
        .unwrap();
    assert_eq!(s.filter.topic_keywords, ["crawler", "filter"]);
    find("relevance.keywords")
        .unwrap()
        .set(&mut s, "论文:3, 研究生:2,篮球")
        .unwrap();
    assert_eq!(
        s.filter.relevance_keywords,
        [
            ("论文".into(), 3.0),
            ("研究生".into(), 2.0),
            ("篮球".into(), 1.0)
        ]
    );
    assert!(
        find("relevance.threshold")
            .unwrap()
            .set(&mut s, "1.5")
            .is_err()
    );
    assert!(
        find("relevance.keywords")
            .unwrap()
            .set(&mut s, "x:heavy")
            .is_err()
    );
    assert_eq!(find("topic.preset").unwrap().get(&s), "a");
}

#[test]
fn every_number_and_weight_is_finite_and_in_range() {
    let mut s = CrawlSettings::default();
    let mut checked = 0;
    for k in keys() {
        let (max, value): (f64, fn(&str) -> String) = match k.bounds() {
            Some(Bounds::Number { max, .. }) => (max, |v| v.to_string()),
            Some(Bounds::Weights { max }) => (max, |v| format!("research:2,paper:{v}")),
            _ => continue,
        };
        let before = k.get(&s);
        let too_big = (max * 2.0).to_string();
        for bad in [
            "NaN", "nan", "inf", "-inf", "infinity", "1e999", "-1", &too_big,
        ] {
            let e = k.set(&mut s, &value(bad)).unwrap_err();
            assert!(
                e.starts_with(&format!("{}: ", k.name()))
                    && (e.contains("not a finite number") || e.contains("out of range"))
                    && e.contains(&format!("0..{max}"))
                    && !e.contains('\n'),
                "{} {bad}: {e}",
                k.name()
            );
        }
        assert_eq!(k.get(&s), before, "{}", k.name());
        k.set(&mut s, &value(&max.to_string())).unwrap();
        checked += 1;
    }
    assert!(checked >= 13, "{checked}");
    let e = find("relevance.keywords")
        .unwrap()
        .set(&mut s, "research:NaN")
        .unwrap_err();
    assert!(
        e.contains("weight of \"research\": NaN is not a finite number"),
        "{e}"
    );
}

#[test]
fn a_user_agent_needs_a_product_token_and_a_sendable_value() {
    let mut s = CrawlSettings::default();
    let ua = find("fetch.user_agent").unwrap();
    ua.set(&mut s, " my_bot-X/2.0 (+https://example.org/bot) ")
        .unwrap();
    assert_eq!(
        s.fetch.user_agent,
        "my_bot-X/2.0 (+https://example.org/bot)"
    );
    assert_eq!(s.agent_token(), "my_bot-X");
    for (bad, why) in [
        ("", "empty"),
        ("bot2/1.0", "product token"),
        ("/1.0", "product token"),
        ("bot/1.0\r\nX-Evil: 1", "cannot be sent"),
        ("bøt", "cannot be sent"),
    ] {
        let e = ua.set(&mut s, bad).unwrap_err();
        assert!(
            e.contains(why) && e.starts_with("fetch.user_agent: "),
            "{bad}: {e}"
        );
    }
    assert_eq!(
        s.fetch.user_agent,
        "my_bot-X/2.0 (+https://example.org/bot)"
    );
}

#[test]
fn nearest_names() {
    let names = || keys().map(|k| k.name());
    assert_eq!(nearest("crawl.dept", names()), Some("crawl.depth"));
    assert_eq!(
        nearest("denoise.ad_word", names()),
        Some("denoise.ad_words")
    );
    assert_eq!(nearest("zzzzzz", names()), None);
}

/// Each numeric key takes its bounds and shows them back as given (a
/// setter that narrowed a value would show another), and refuses one
/// step past them.
#[test]
fn every_bound_is_taken_and_shown_back_and_one_past_refused() {
    let mut checked = 0;
    for k in keys() {
        let mut s = CrawlSettings::default();
        let (edges, past): (Vec<String>, Vec<String>) = match k.bounds() {
            Some(Bounds::Whole { min, max }) => (
                vec![min.to_string(), max.to_string()],
                [min.checked_sub(1), max.checked_add(1)]
                    .into_iter()
                    .flatten()
                    .map(|n| n.to_string())
                    .collect(),
            ),
            Some(Bounds::Span { min, max }) => (
                vec![fmt_duration(min), fmt_duration(max)],
                [
                    min.checked_sub(Duration::from_millis(1)),
                    Some(max + Duration::from_millis(1)),
                ]
                .into_iter()
                .flatten()
                .map(|d| format!("{}ms", d.as_millis()))
                .collect(),
            ),
            _ => continue,
        };
        for v in &edges {
            k.set(&mut s, v)
                .unwrap_or_else(|e| panic!("{}={v}: {e}", k.name()));
            assert_eq!(&k.get(&s), v, "{}", k.name());
        }
        for v in &past {
            let e = k.set(&mut s, v).unwrap_err();
            assert!(e.starts_with(k.name()) && !e.contains('\n'), "{e}");
        }
        checked += 1;
    }
    assert!(checked >= 35, "{checked}");
}

/// What `get` shows, `set` takes back to the same value: saved settings
/// are restored this way.
#[test]
fn every_value_shown_is_taken_back() {
    let mut s = CrawlSettings::default();
    find("crawl.stop_when")
        .unwrap()
        .set(&mut s, "harvest<0.1/500,no-relevant/9")
        .unwrap();
    find("relevance.keywords")
        .unwrap()
        .set(&mut s, "论文:3,b:0.5")
        .unwrap();
    find("denoise.filter_text")
        .unwrap()
        .set(&mut s, "RAW")
        .unwrap();
    for k in keys() {
        let shown = k.get(&s);
        let mut t = CrawlSettings::default();
        k.set(&mut t, &shown)
            .unwrap_or_else(|e| panic!("{}={shown}: {e}", k.name()));
        assert_eq!(k.get(&t), shown, "{}", k.name());
    }
    assert!(s.denoise.filters_read_raw);
    assert_eq!(find("denoise.filter_text").unwrap().get(&s), "raw");
}

/// A run's record of its settings comes from the table, under the names
/// and with the texts runs have always recorded.
#[test]
fn the_run_summary_is_generated_from_the_table() {
    let mut s = CrawlSettings::default();
    find("dedup.near").unwrap().set(&mut s, "true").unwrap();
    find("crawl.delay").unwrap().set(&mut s, "1.5s").unwrap();
    let summary: std::collections::BTreeMap<String, String> = s.summary().into_iter().collect();
    let names: Vec<&str> = summary.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "crawl.concurrency",
            "crawl.delay",
            "crawl.depth",
            "crawl.max_outlinks",
            "crawl.max_pages",
            "crawl.order",
            "crawl.per_host",
            "crawl.scope",
            "crawl.site_batch",
            "crawl.stop_when",
            "dedup.near",
            "denoise.enabled",
            "filter.mode",
            "recrawl",
            "relevance.threshold",
            "sitemaps.enabled",
            "topic.keywords",
            "topic.weights",
        ]
    );
    assert_eq!(summary["crawl.delay"], "1500ms");
    assert_eq!(summary["crawl.depth"], "none");
    assert_eq!(summary["crawl.order"], s.order.fingerprint());
    assert_eq!(summary["recrawl"], "off");
    assert_eq!(
        summary["topic.weights"],
        "ct 0.1 tl 0.3 d 0.2 threshold 0.5"
    );
    assert_eq!(
        summary["dedup.near"],
        format!(
            "true (distance 3, cluster budget {})",
            s.dedup.cluster_budget
        )
    );
    assert_eq!(summary["denoise.enabled"], "false");
}
