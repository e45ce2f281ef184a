//! `filter.*`, `domains.*`, `topic.*`, `relevance.*` and `links.*`: the
//! focused-crawl filters of documents 000 and 001.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[
    key!(
        "filter.mode",
        named::<Mode>(),
        "focused-crawl filters: none, domain (000 stage 1), domain+topic (000 stages 1+2), relevance (001), relevance+linktype (001 with link policy)",
        |s| s.filter.mode,
        |s, mode| s.filter.mode = mode,
        run
    ),
    key!(
        "domains.common",
        Words,
        "labels removed from seed hosts to leave key domains (000)",
        |s| s.filter.common_domains.clone(),
        |s, l| s.filter.common_domains = l
    ),
    key!(
        "domains.extra_keys",
        Words,
        "key domains added by hand (domains key add)",
        |s| s.filter.extra_keys.clone(),
        |s, l| s.filter.extra_keys = l
    ),
    key!(
        "domains.removed_keys",
        Words,
        "derived key domains removed by hand (domains key remove)",
        |s| s.filter.removed_keys.clone(),
        |s, l| s.filter.removed_keys = l
    ),
    key!(
        "topic.preset",
        named::<Preset>(),
        "000's parameter sets: a = 1, 3, 0.2, 8; b = 0.1, 0.3, 0.2, 0.5 with its five keywords",
        |s| Preset::of(&s.filter.topic),
        |s, p| p.apply(s)
    ),
    key!(
        "topic.keywords",
        Words,
        "keywords K of formula (1)",
        |s| s.filter.topic_keywords.clone(),
        |s, l| s.filter.topic_keywords = l,
        run
    ),
    key!(
        "topic.ct_weight",
        Float { min: 0.0, max: 1e6 },
        "weight of a keyword in the body text (ct_weight)",
        |s| s.filter.topic.ct_weight,
        |s, f| s.filter.topic.ct_weight = f,
        run_as("topic.weights", |s| {
            let t = &s.filter.topic;
            format!(
                "ct {} tl {} d {} threshold {}",
                t.ct_weight, t.tl_weight, t.gain, t.threshold
            )
        })
    ),
    key!(
        "topic.tl_weight",
        Float { min: 0.0, max: 1e6 },
        "weight of a keyword in the title (tl_weight)",
        |s| s.filter.topic.tl_weight,
        |s, f| s.filter.topic.tl_weight = f
    ),
    key!(
        "topic.gain",
        Float { min: 0.0, max: 1e3 },
        "gain d for several distinct keywords",
        |s| s.filter.topic.gain,
        |s, f| s.filter.topic.gain = f
    ),
    key!(
        "topic.threshold",
        Float { min: 0.0, max: 1e9 },
        "a page off the key domains is kept when its score is above this",
        |s| s.filter.topic.threshold,
        |s, f| s.filter.topic.threshold = f
    ),
    key!(
        "relevance.keywords",
        Weighted { max: 1e6 },
        "keyword:weight pairs of the topic vector (001)",
        |s| s.filter.relevance_keywords.clone(),
        |s, l| s.filter.relevance_keywords = l
    ),
    key!(
        "relevance.threshold",
        Float { min: 0.0, max: 1.0 },
        "r: a page is relevant when cos ≥ r",
        |s| s.filter.relevance_threshold,
        |s, f| s.filter.relevance_threshold = f,
        run
    ),
    key!(
        "links.upward_p",
        Float { min: 0.0, max: 1.0 },
        "probability of following an upward link (hash-decided, reproducible)",
        |s| s.filter.links.upward_p,
        |s, f| s.filter.links.upward_p = f
    ),
    key!(
        "links.min_anchor_hits",
        Int { min: 0, max: 1000 },
        "keywords needed around a crosswise or outward link's anchor",
        |s| s.filter.links.min_anchor_hits as u64,
        |s, n| s.filter.links.min_anchor_hits = n as u32
    ),
    key!(
        "links.relevant_only",
        Bool,
        "follow links of relevant pages only",
        |s| s.filter.links.relevant_only,
        |s, b| s.filter.links.relevant_only = b
    ),
];

/// 000's parameter sets, by name; `custom` is any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Preset {
    A,
    B,
    Custom,
}

named_enum!(Preset {
    A => "a",
    B => "b",
    Custom => "custom",
});

impl Preset {
    fn of(p: &TopicParams) -> Preset {
        if *p == TopicParams::PRESET_A {
            Preset::A
        } else if *p == TopicParams::PRESET_B {
            Preset::B
        } else {
            Preset::Custom
        }
    }

    /// Sets the preset's parameters (b: and its keywords); `custom`
    /// leaves them as they are.
    fn apply(self, s: &mut CrawlSettings) {
        match self {
            Preset::A => s.filter.topic = TopicParams::PRESET_A,
            Preset::B => {
                s.filter.topic = TopicParams::PRESET_B;
                s.filter.topic_keywords = TopicParams::PRESET_B_KEYWORDS.map(String::from).to_vec();
            }
            Preset::Custom => {}
        }
    }
}
