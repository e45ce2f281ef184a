//! The learned order's link scorer: logistic regression over hashed
//! features of the link that queued a URL — the words of its anchor and
//! of the text around it, the URL's tokens and host, the link's type and
//! the linking page's verdict and similarity — trained online, one update
//! per fetched page, on whether the page filters kept the page the link
//! led to (the learned link classifiers of focused-crawling research, in
//! their simplest form). Deterministic: the same pages in the same order
//! give the same weights.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::model::IdHasher;
use crate::schema::{LinkContext, ModelFeature, ModelRecord};

/// Feature buckets (a power of two): the model's memory stays bounded
/// (at most 2^18 weights with their names, ~20 MB) however many words a
/// crawl meets; words that share a bucket share a weight (the hashing
/// trick), and the bucket is named after the first trained into it.
const BUCKETS: u64 = 1 << 18;
/// Step size of the gradient step (features are scaled to unit length).
const RATE: f64 = 2.0;
/// Weights are kept within ±LIMIT, so one surprising page cannot pin a
/// feature for good.
const LIMIT: f32 = 8.0;
/// Tokens taken from each source, at most.
const ANCHOR_TOKENS: usize = 12;
const CONTEXT_TOKENS: usize = 24;
const URL_TOKENS: usize = 16;

/// The model: a weight per feature bucket, with the name of each.
#[derive(Clone, Debug, Default)]
pub struct LinkModel {
    weights: HashMap<u32, (f32, String), BuildHasherDefault<IdHasher>>,
    /// Pages trained on, and the relevant ones among them.
    pub updates: u64,
    pub positives: u64,
}

/// A link's features: bucket numbers, sorted and without repeats.
pub type Features = Vec<u32>;

/// A feature's name and weight, as `learned show` lists it.
pub type Weighted<'a> = (&'a str, f32);

impl LinkModel {
    pub fn from_record(r: ModelRecord) -> LinkModel {
        let weights = r
            .features
            .into_iter()
            .map(|f| (f.hash, (f.weight, f.name)))
            .collect();
        LinkModel {
            weights,
            updates: r.updates,
            positives: r.positives,
        }
    }

    pub fn to_record(&self) -> ModelRecord {
        let mut features: Vec<ModelFeature> = self
            .weights
            .iter()
            .map(|(&hash, (weight, name))| ModelFeature {
                hash,
                weight: *weight,
                name: name.clone(),
            })
            .collect();
        features.sort_unstable_by_key(|f| f.hash);
        ModelRecord {
            updates: self.updates,
            positives: self.positives,
            features,
        }
    }

    /// The estimated probability that a link with `features` leads to a
    /// relevant page.
    pub fn score(&self, features: &[u32]) -> f32 {
        let scale = unit(features.len());
        let z: f64 = features
            .iter()
            .filter_map(|h| self.weights.get(h))
            .map(|(w, _)| f64::from(*w))
            .sum::<f64>()
            * scale;
        (1.0 / (1.0 + (-z).exp())) as f32
    }

    /// The score a URL queued at `depth` by a link with `features` ranks
    /// by: seeds (depth 0) come first, as in every order.
    pub fn score_queued(&self, depth: u16, features: &[u32]) -> f32 {
        if depth == 0 {
            return 1.0;
        }
        self.score(features)
    }

    /// One gradient step of the log loss on a link with the features of
    /// `url` and `link`, whose target was `relevant` (or not); each
    /// feature keeps its name.
    pub fn train(&mut self, url: &url::Url, link: Option<&LinkContext>, relevant: bool) {
        let weights = &mut self.weights;
        let hashes = collect(url, link, |h, kind, token| {
            weights
                .entry(h)
                .or_insert_with(|| (0.0, format!("{kind}:{token}")));
        });
        self.train_features(&hashes, relevant);
    }

    /// [`LinkModel::train`] on features computed before (a replay: new
    /// features get no name).
    pub fn train_features(&mut self, features: &[u32], relevant: bool) {
        let error = f64::from(relevant) - f64::from(self.score(features));
        let step = (RATE * error * unit(features.len())) as f32;
        for h in features {
            let (w, _) = self.weights.entry(*h).or_default();
            *w = (*w + step).clamp(-LIMIT, LIMIT);
        }
        self.updates += 1;
        self.positives += u64::from(relevant);
    }

    /// Features ranked by weight: the `n` highest, then the `n` lowest.
    pub fn top(&self, n: usize) -> (Vec<Weighted<'_>>, Vec<Weighted<'_>>) {
        let mut all: Vec<Weighted<'_>> = self
            .weights
            .values()
            .map(|(w, name)| (name.as_str(), *w))
            .collect();
        // Ties by name: the listing is the same every time.
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        let positive = all.iter().take(n).filter(|f| f.1 > 0.0).copied();
        let negative = all.iter().rev().take(n).filter(|f| f.1 < 0.0).copied();
        (positive.collect(), negative.collect())
    }

    pub fn len(&self) -> usize {
        self.weights.len()
    }

    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// The re-scoring epoch: raised at 1, 2, 4, 8 … updates. Queued URLs
    /// are scored again when it rises, so the work of re-scoring stays
    /// proportional to what was queued.
    pub fn epoch(&self) -> u32 {
        epoch(self.updates)
    }
}

/// The epoch of a model trained `updates` times: 0 untrained, then one
/// more at each power of two.
pub fn epoch(updates: u64) -> u32 {
    match updates {
        0 => 0,
        u => u.ilog2() + 1,
    }
}

/// The link context of a link with `anchor` between `before` and
/// `after`, of type `kind`, on a page of similarity `sim` that the page
/// filters `kept` (or not): one constructor for the live crawl and the
/// replay, whose features must be the same.
pub fn link_context(
    (before, anchor, after): (&str, &str, &str),
    kind: Option<crate::model::LinkType>,
    sim: f64,
    kept: bool,
) -> LinkContext {
    LinkContext {
        anchor: anchor.to_string(),
        context: format!("{before} {after}"),
        link_type: kind,
        parent_sim: sim as f32,
        parent_kept: kept,
    }
}

/// The features of the link that queued `url` (only the URL's own when
/// the link is not known: a seed, or a URL queued under another order).
pub fn features(url: &url::Url, link: Option<&LinkContext>) -> Features {
    collect(url, link, |_, _, _| {})
}

/// The features of `url` and `link`, sorted and distinct, each also
/// handed to `each(bucket, kind, token)`.
fn collect(
    url: &url::Url,
    link: Option<&LinkContext>,
    mut each: impl FnMut(u32, &str, &str),
) -> Features {
    let mut out = Vec::with_capacity(48);
    each_feature(url, link, |kind, token| {
        let h = bucket(kind, token);
        each(h, kind, token);
        out.push(h);
    });
    out.sort_unstable();
    out.dedup();
    out
}

/// A feature's bucket: xxh3-64 of the token, seeded with the xxh3-64 of
/// its kind (no allocation on the hot path).
fn bucket(kind: &str, token: &str) -> u32 {
    let seed = xxh3_64(kind.as_bytes());
    (xxh3_64_with_seed(token.as_bytes(), seed) % BUCKETS) as u32
}

/// 1/√n: each link's feature vector has unit length.
fn unit(n: usize) -> f64 {
    1.0 / (n.max(1) as f64).sqrt()
}

/// Calls `f(kind, token)` for each feature: `bias`, `host`, `url` tokens,
/// and from the link, `anchor` and `context` words, its `type`, and the
/// linking page's `parent` verdict and `sim` (tenths).
fn each_feature(url: &url::Url, link: Option<&LinkContext>, mut f: impl FnMut(&'static str, &str)) {
    f("bias", "");
    f("host", url.host_str().unwrap_or(""));
    // One buffer for every lower-cased token.
    let mut buf = String::new();
    let mut left = URL_TOKENS;
    for part in [url.path(), url.query().unwrap_or("")] {
        left -= each_token(part, left, &mut buf, |t| f("url", t));
    }
    let Some(l) = link else { return };
    each_token(&l.anchor, ANCHOR_TOKENS, &mut buf, |t| f("anchor", t));
    each_token(&l.context, CONTEXT_TOKENS, &mut buf, |t| f("context", t));
    if let Some(kind) = l.link_type {
        f("type", kind.name());
    }
    f("parent", if l.parent_kept { "kept" } else { "dropped" });
    let tenths = (l.parent_sim.clamp(0.0, 1.0) * 10.0).floor() as usize;
    f(
        "sim",
        ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"][tenths.min(10)],
    );
}

/// Calls `f` with at most `max` lower-cased words of `text` — two or more
/// letters or digits, not all digits (a number names one page, not a kind
/// of page) — through `buf`; returns how many.
fn each_token(text: &str, max: usize, buf: &mut String, mut f: impl FnMut(&str)) -> usize {
    let mut n = 0;
    for t in text.split(|c: char| !c.is_alphanumeric()) {
        if n == max {
            break;
        }
        if t.chars().nth(1).is_none() || t.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        buf.clear();
        if t.is_ascii() {
            buf.push_str(t);
            buf.make_ascii_lowercase();
        } else {
            buf.extend(t.chars().flat_map(char::to_lowercase));
        }
        f(buf);
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LinkType;

    fn link(anchor: &str, kept: bool) -> LinkContext {
        LinkContext {
            anchor: anchor.into(),
            context: "see the list below".into(),
            link_type: Some(LinkType::Downward),
            parent_sim: 0.35,
            parent_kept: kept,
        }
    }

    fn url(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    #[test]
    fn features_cover_every_source_once() {
        let mut names = Vec::new();
        let l = link("Specimen Archive 17", true);
        each_feature(&url("http://a.test/x/specimen?id=3"), Some(&l), |k, t| {
            names.push(format!("{k}:{t}"))
        });
        assert_eq!(
            names,
            [
                "bias:",
                "host:a.test",
                "url:specimen",
                "url:id",
                "anchor:specimen",
                "anchor:archive",
                "context:see",
                "context:the",
                "context:list",
                "context:below",
                "type:downward",
                "parent:kept",
                "sim:3"
            ]
        );
        let f = features(&url("http://a.test/x/specimen?id=3"), Some(&l));
        assert!(f.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        assert_eq!(f.len(), 13);
    }

    #[test]
    fn training_separates_anchor_words_and_is_deterministic() {
        let mut m = LinkModel::default();
        let (good, bad) = (link("specimen archive", true), link("news item", true));
        for i in 0..40 {
            let u = url(&format!("http://a.test/p{i}"));
            m.train(&u, Some(if i % 2 == 0 { &good } else { &bad }), i % 2 == 0);
        }
        let u = url("http://a.test/new");
        let (g, b) = (
            m.score(&features(&u, Some(&good))),
            m.score(&features(&u, Some(&bad))),
        );
        assert!(g > 0.8 && b < 0.2, "good {g}, bad {b}");
        let (pos, neg) = m.top(2);
        assert!(pos.iter().any(|(n, _)| n.starts_with("anchor:")), "{pos:?}");
        assert!(neg.iter().any(|(n, _)| n.starts_with("anchor:")), "{neg:?}");
        let again = LinkModel::from_record(m.to_record());
        assert_eq!(again.to_record(), m.to_record());
        assert_eq!(again.score(&features(&u, Some(&good))), g);
        assert_eq!((m.updates, m.positives), (40, 20));
    }

    #[test]
    fn epochs_rise_at_powers_of_two() {
        let e: Vec<u32> = [0, 1, 2, 3, 4, 7, 8, 1 << 20].map(epoch).to_vec();
        assert_eq!(e, [0, 1, 2, 2, 3, 3, 4, 21]);
    }
}
