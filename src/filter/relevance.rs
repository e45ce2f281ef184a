//! Document 001, keyword scheme: the topic is α = (w1 … wn), one weight per
//! keyword; the page is β = (x1·w1 … xn·wn) where x_i is keyword i's
//! frequency in the page divided by that of the most frequent keyword (so
//! the top one has x = 1). Relevance is
//!
//! ```text
//! cos⟨α,β⟩ = Σ x_i·w_i² / ( sqrt(Σ w_i²) · sqrt(Σ x_i²·w_i²) )
//! ```
//!
//! and a page is relevant when cos ≥ r. A page with none of the keywords
//! has β = 0 and relevance 0.

use super::keywords::Keywords;

/// The weighted topic: keywords with their weights, and the threshold r.
#[derive(Clone, Debug)]
pub struct Topic {
    pub keywords: Keywords,
    pub weights: Vec<f64>,
    pub threshold: f64,
}

impl Topic {
    pub fn new(weighted: &[(&str, f64)], threshold: f64) -> Topic {
        let words: Vec<&str> = weighted.iter().map(|(w, _)| *w).collect();
        Topic {
            keywords: Keywords::new(&words),
            weights: weighted.iter().map(|(_, w)| *w).collect(),
            threshold,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Relevance {
    pub cosine: f64,
    /// The page's x_i (frequency ratios), for explanations.
    pub ratios: Vec<f64>,
}

impl Relevance {
    pub fn relevant(&self, topic: &Topic) -> bool {
        self.cosine >= topic.threshold
    }
}

/// Relevance of a page whose text (title and body together) is `text`.
pub fn relevance(topic: &Topic, text: &str) -> Relevance {
    relevance_of_parts(topic, &[text])
}

/// [`relevance`] of text given in parts (title, body) without joining them.
pub fn relevance_of_parts(topic: &Topic, parts: &[&str]) -> Relevance {
    let mut counts = vec![0u32; topic.weights.len()];
    for part in parts {
        topic.keywords.add_counts(part, &mut counts);
    }
    relevance_of_counts(topic, &counts)
}

/// [`relevance`] from the keyword counts of the text (one per keyword).
pub fn relevance_of_counts(topic: &Topic, counts: &[u32]) -> Relevance {
    let max = counts.iter().copied().max().unwrap_or(0);
    if max == 0 {
        return Relevance {
            cosine: 0.0,
            ratios: vec![0.0; counts.len()],
        };
    }
    let ratios: Vec<f64> = counts
        .iter()
        .map(|&c| f64::from(c) / f64::from(max))
        .collect();
    let (mut dot, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, w) in ratios.iter().zip(&topic.weights) {
        dot += x * w * w;
        aa += w * w;
        bb += x * x * w * w;
    }
    let cosine = if aa == 0.0 || bb == 0.0 {
        0.0
    } else {
        dot / (aa.sqrt() * bb.sqrt())
    };
    Relevance { cosine, ratios }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_on_a_hand_computed_vector() {
        // Weights 3, 2, 1. Counts in the page: 论文 ×4, 研究生 ×2, 篮球 ×0.
        // x = (1, 0.5, 0); Σ x w² = 9 + 2 + 0 = 11; |α| = √14; |β| = √(9 + 1) = √10.
        // cos = 11 / (√14 · √10) = 11 / √140 ≈ 0.929669.
        let t = Topic::new(&[("论文", 3.0), ("研究生", 2.0), ("篮球", 1.0)], 0.9);
        let r = relevance(&t, "论文论文研究生论文。研究生的论文");
        assert_eq!(r.ratios, vec![1.0, 0.5, 0.0]);
        assert!(
            (r.cosine - 11.0 / 140f64.sqrt()).abs() < 1e-12,
            "{}",
            r.cosine
        );
        assert!(r.relevant(&t));
        assert!(!r.relevant(&Topic {
            threshold: 0.93,
            ..t.clone()
        }));
        // All keywords in proportion to their weights' direction: cos = 1 only
        // when x_i are equal (β ∥ α); a single keyword gives w1/|α|.
        let one = relevance(&t, "篮球");
        assert!((one.cosine - 1.0 / 14f64.sqrt()).abs() < 1e-12);
        assert_eq!(relevance(&t, "无关").cosine, 0.0);
    }
}
