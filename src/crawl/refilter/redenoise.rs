//! `refilter --denoise`: a page's denoising worked out again from its
//! stored body (decoded and parsed as the crawl did), so changed rules or
//! thresholds reach stored pages without refetching them.

use crate::filter::denoise::{Denoiser, denoise};
use crate::model::UrlId;
use crate::schema::{DenoiseRecord, DocRecord, Versioned};
use crate::store::{Cursor, Store, StoreError};

/// What pages are denoised again with.
pub(super) struct Redenoise<'a> {
    pub denoiser: &'a Denoiser,
    /// The crawl's robots product token and out-link cap, which parsing
    /// takes as the crawl gave them.
    pub agent: &'a str,
    pub max_links: usize,
}

/// What denoising a page again came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The stored denoising stands as it was.
    Same,
    /// A new denoising replaces the stored one (or none).
    Changed,
    /// The body parses to other text than was stored (a trawl with another
    /// parser stored it): the stored lines would not match, so the page
    /// keeps what it has.
    TextDiffers,
    /// No stored body (or it could not be read, or no URL to parse it
    /// against): judged as stored.
    NoBody,
}

/// A page denoised again: the text and denoising to judge it by, and its
/// `docs` row to rewrite when the denoising changed.
pub(super) struct Fresh {
    pub text: String,
    pub record: Option<DenoiseRecord>,
    pub doc_value: Option<Vec<u8>>,
    /// Same, Changed or TextDiffers (a page without a body has no Fresh).
    pub outcome: Outcome,
}

impl Redenoise<'_> {
    /// Denoises page `id` (at `url`, its `docs` value `doc_value`) again
    /// from its stored body, read through `pages`; None when there is no
    /// body to parse (the page is then judged as stored).
    pub fn page(
        &self,
        pages: &mut Cursor<'_>,
        (id, url): (UrlId, Option<&url::Url>),
        doc_value: &[u8],
    ) -> Result<Option<Fresh>, StoreError> {
        let (Ok(mut doc), Some(url)) = (DocRecord::decode(doc_value), url) else {
            return Ok(None);
        };
        let Some(page) = Store::page_at(pages, id)? else {
            return Ok(None);
        };
        let Ok((body, frame_text)) = page.body_and_text() else {
            return Ok(None);
        };
        // The text is in the frame, or in the doc for a page too large to
        // stream; a noindex page's was not stored.
        let stored_text = match frame_text {
            Some(t) => Some(t),
            None => Some(doc.text.clone()).filter(|t| !t.is_empty()),
        };
        let ct = Some(page.content_type.as_str()).filter(|c| !c.is_empty());
        let decoded = crate::parse::decode(&body, ct);
        let parsed = crate::parse::parse_html(
            &decoded.text,
            url,
            decoded.charset,
            self.agent,
            self.max_links,
        );
        // Without stored text (noindex), the lines are the parse's.
        let text = match stored_text {
            Some(t) if t != parsed.text => {
                return Ok(Some(Fresh {
                    text: t,
                    record: doc.denoise,
                    doc_value: None,
                    outcome: Outcome::TextDiffers,
                }));
            }
            Some(t) => t,
            None => String::new(),
        };
        let host = url.host_str().unwrap_or("");
        let record = crate::crawl::ledger::denoise_record(&denoise(&parsed, host, self.denoiser));
        if doc.denoise.as_ref() == Some(&record) {
            return Ok(Some(Fresh {
                text,
                record: doc.denoise,
                doc_value: None,
                outcome: Outcome::Same,
            }));
        }
        doc.denoise = Some(record.clone());
        Ok(Some(Fresh {
            text,
            record: Some(record),
            doc_value: Some(doc.encode()),
            outcome: Outcome::Changed,
        }))
    }
}
