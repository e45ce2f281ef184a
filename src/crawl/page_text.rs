//! What becomes of a page's text: the policy a fetch task applies to it
//! (links taken, denoising, the denoised copy, the simhash), built once
//! per settings change and shared by every fetch task; and where the text
//! is kept, decided once, by the fetch task that frames the body.

use crate::filter::denoise::Denoiser;
use crate::settings::CrawlSettings;

/// What a fetch task makes of a page's text besides parsing it.
#[derive(Default)]
pub struct TextPolicy {
    /// Our robots.txt product token, matched by meta robots and
    /// X-Robots-Tag lines that name a crawler.
    pub agent: String,
    /// Links taken from one page at most.
    pub max_links: usize,
    /// Denoise with this, when denoising is on.
    pub denoise: Option<Denoiser>,
    /// The page filters read the denoised text.
    pub filters_read_clean: bool,
    /// Compute the simhash (of the denoised text when there is one).
    pub simhash: bool,
}

impl TextPolicy {
    pub fn of(s: &CrawlSettings) -> TextPolicy {
        TextPolicy {
            agent: s.agent_token().to_string(),
            max_links: s.max_outlinks,
            denoise: s.denoise.denoiser(),
            filters_read_clean: s.denoise.filters_read_denoised(),
            simhash: s.dedup.near,
        }
    }

    /// Whether the denoised copy of a denoised page's text is made: only
    /// for what reads it.
    pub fn keeps_clean(&self) -> bool {
        self.filters_read_clean || self.simhash
    }
}

/// Where a page's text is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TextPlace {
    /// After the body in its zstd frame (`PageRecord::text_len` bytes).
    Frame { len: u64 },
    /// In its doc: the body was too large to stream into one frame.
    Doc,
    /// Nowhere: the page is noindex, or no page was parsed.
    #[default]
    None,
}

impl TextPlace {
    /// Bytes of text in the page's frame.
    pub fn frame_len(self) -> u64 {
        match self {
            TextPlace::Frame { len } => len,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_follows_the_settings() {
        let mut s = CrawlSettings::default();
        let p = TextPolicy::of(&s);
        assert!(p.denoise.is_none() && !p.keeps_clean() && p.agent == "trawl");
        for (k, v) in [
            ("denoise.enabled", "true"),
            ("dedup.near", "true"),
            ("crawl.max_outlinks", "7"),
        ] {
            crate::settings::find(k).unwrap().set(&mut s, v).unwrap();
        }
        let p = TextPolicy::of(&s);
        assert!(p.denoise.is_some() && p.filters_read_clean && p.simhash);
        assert_eq!(p.max_links, 7);
        crate::settings::find("denoise.filter_text")
            .unwrap()
            .set(&mut s, "raw")
            .unwrap();
        let p = TextPolicy::of(&s);
        assert!(
            !p.filters_read_clean && p.keeps_clean(),
            "the simhash reads it"
        );
        assert_eq!(TextPlace::Frame { len: 9 }.frame_len(), 9);
        assert_eq!(TextPlace::Doc.frame_len(), 0);
    }
}
