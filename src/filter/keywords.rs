//! Counting keyword occurrences in text without word boundaries (CJK), via
//! one Aho-Corasick automaton per keyword list. ASCII letters match without
//! regard to case.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

#[derive(Clone, Debug)]
pub struct Keywords {
    words: Vec<String>,
    automaton: Option<AhoCorasick>,
}

impl Keywords {
    pub fn new<S: AsRef<str>>(words: &[S]) -> Keywords {
        let words: Vec<String> = words
            .iter()
            .map(|w| w.as_ref().trim().to_string())
            .filter(|w| !w.is_empty())
            .collect();
        let automaton = (!words.is_empty())
            .then(|| {
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .build(&words)
                    .ok()
            })
            .flatten();
        Keywords { words, automaton }
    }

    pub fn words(&self) -> &[String] {
        &self.words
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Occurrences of each keyword in `text` (overlapping matches count, so
    /// `研究生` also counts for a keyword `研究`).
    pub fn counts(&self, text: &str) -> Vec<u32> {
        let mut counts = vec![0u32; self.words.len()];
        self.add_counts(text, &mut counts);
        counts
    }

    /// Adds the occurrences of each keyword in `text` to `counts` (one slot
    /// per keyword), so parts of a page are counted without allocating.
    pub fn add_counts(&self, text: &str, counts: &mut [u32]) {
        if let Some(ac) = &self.automaton {
            for m in ac.find_overlapping_iter(text) {
                counts[m.pattern().as_usize()] += 1;
            }
        }
    }

    /// Total occurrences of all keywords in `text`.
    pub fn total(&self, text: &str) -> u32 {
        self.automaton
            .as_ref()
            .map_or(0, |ac| ac.find_overlapping_iter(text).count() as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cjk_without_spaces_and_ascii_without_case() {
        let k = Keywords::new(&["研究生", "研究", "Basketball", ""]);
        assert_eq!(k.words().len(), 3);
        assert_eq!(k.counts("研究生的研究生活basketBALL"), vec![2, 2, 1]);
        assert_eq!(k.total("无关内容"), 0);
        assert_eq!(Keywords::new::<&str>(&[]).counts("x"), Vec::<u32>::new());
    }
}
