//! Document 000, stage 2, formula (1):
//!
//! ```text
//! Score(D) = ( Σ_{q∈K} ct(q)·ct_weight + tl(q)·tl_weight ) · ( 1 + d·(num(K,D) − 1) )
//! ```
//!
//! `ct(q)` is 1 when keyword q occurs in the body text, `tl(q)` when it
//! occurs in the title; `num(K,D)` counts the distinct keywords occurring
//! in either. A page whose domain failed stage 1 is kept when its score is
//! above the threshold.

use super::keywords::Keywords;

#[derive(Clone, Debug, PartialEq)]
pub struct TopicParams {
    pub ct_weight: f64,
    pub tl_weight: f64,
    /// Gain `d` for several distinct keywords.
    pub gain: f64,
    pub threshold: f64,
}

impl TopicParams {
    /// Parameter set A (the algorithm description): 1, 3, 0.2, threshold 8.
    pub const PRESET_A: TopicParams = TopicParams {
        ct_weight: 1.0,
        tl_weight: 3.0,
        gain: 0.2,
        threshold: 8.0,
    };
    /// Parameter set B (experiment 2): 0.1, 0.3, 0.2, threshold 0.5.
    pub const PRESET_B: TopicParams = TopicParams {
        ct_weight: 0.1,
        tl_weight: 0.3,
        gain: 0.2,
        threshold: 0.5,
    };
    /// Experiment 2's keywords, used with preset B.
    pub const PRESET_B_KEYWORDS: [&'static str; 5] = ["研究生", "论文", "毕业", "体育", "篮球"];
}

/// The score and what went into it, for `why`.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicScore {
    pub score: f64,
    /// Keywords found in the body (ct = 1).
    pub in_body: u32,
    /// Keywords found in the title (tl = 1).
    pub in_title: u32,
    /// num(K, D): distinct keywords in title or body.
    pub distinct: u32,
}

impl TopicScore {
    /// Strictly above the threshold, as the paper keeps pages.
    pub fn passes(&self, p: &TopicParams) -> bool {
        self.score > p.threshold
    }
}

pub fn topic_score(k: &Keywords, p: &TopicParams, title: &str, body: &str) -> TopicScore {
    let (tl, ct) = (k.counts(title), k.counts(body));
    let (mut in_title, mut in_body, mut distinct, mut sum) = (0, 0, 0, 0.0);
    for (t, c) in tl.iter().zip(&ct) {
        let (t, c) = (*t > 0, *c > 0);
        sum += f64::from(u8::from(c)) * p.ct_weight + f64::from(u8::from(t)) * p.tl_weight;
        in_title += u32::from(t);
        in_body += u32::from(c);
        distinct += u32::from(t || c);
    }
    let score = if distinct == 0 {
        0.0
    } else {
        sum * (1.0 + p.gain * (f64::from(distinct) - 1.0))
    };
    TopicScore {
        score,
        in_body,
        in_title,
        distinct,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn formula_one_preset_a_by_hand() {
        let k = Keywords::new(&["crawler", "filter", "domain"]);
        let p = TopicParams::PRESET_A;
        // crawler: title and body; filter: body; domain: absent.
        // sum = (1·1 + 1·3) + (1·1 + 0·3) = 5; num = 2; 5 · (1 + 0.2·1) = 6.
        let s = topic_score(&k, &p, "A crawler", "the crawler and its filter");
        assert_eq!((s.in_title, s.in_body, s.distinct), (1, 2, 2));
        assert!(close(s.score, 6.0) && !s.passes(&p));
        // All three in both: sum = 3·4 = 12; num = 3; 12 · 1.4 = 16.8 > 8.
        let s = topic_score(&k, &p, "crawler filter domain", "domain filter crawler");
        assert!(close(s.score, 16.8) && s.passes(&p));
        assert_eq!(topic_score(&k, &p, "nothing", "here").score, 0.0);
    }

    #[test]
    fn formula_one_preset_b_on_chinese_pages() {
        let k = Keywords::new(&TopicParams::PRESET_B_KEYWORDS);
        let p = TopicParams::PRESET_B;
        // Title: 研究生 论文; body: 研究生 毕业 篮球 (no spaces anywhere).
        // sum = 研究生 (0.1+0.3) + 论文 (0.3) + 毕业 (0.1) + 篮球 (0.1) = 0.9
        // num = 4 → 0.9 · (1 + 0.2·3) = 1.44 > 0.5.
        let s = topic_score(&k, &p, "研究生论文答辩", "今年研究生毕业典礼后举行篮球赛");
        assert_eq!((s.in_title, s.in_body, s.distinct), (2, 3, 4));
        assert!(close(s.score, 1.44) && s.passes(&p));
        // Body only, one keyword: 0.1 · 1 = 0.1, not above 0.5.
        let s = topic_score(&k, &p, "通知", "体育");
        assert!(close(s.score, 0.1) && !s.passes(&p));
        // 体育 in the title only (0.3), 篮球 in the body (0.1), num 2 → 0.4 · 1.2 = 0.48.
        assert!(close(topic_score(&k, &p, "体育", "篮球").score, 0.48));
        // Exactly at the threshold is not above it.
        let at = TopicScore {
            score: 0.5,
            in_body: 0,
            in_title: 0,
            distinct: 0,
        };
        assert!(!at.passes(&p));
    }
}
