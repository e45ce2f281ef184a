//! `why URL` for a URL no stored link leads to: a page may have linked it
//! past its caps (`crawl.max_outlinks`, or the bytes a page's links may
//! hold). The pages `capped` names are parsed again from their stored
//! bodies to find it and name the page, the link's place and the cap.

use crate::model::{self, UrlId};
use crate::schema::tables::Capped;
use crate::shell::error::Result;
use crate::shell::{Ctx, table};

/// Capped pages `why` parses again at most, looking for a URL no stored
/// link leads to (a crawl that capped more names its pages in notices).
const CAPPED_PAGES_READ: usize = 64;

impl Ctx {
    /// A URL a page linked past its caps (its links row stops short of
    /// it): the page and the cap, found by parsing the stored bodies of
    /// the pages `capped` names again, the first [`CAPPED_PAGES_READ`].
    pub(super) fn linked_past_cap(&self, u: &model::CanonicalUrl) -> Result<Option<String>> {
        // A row that does not decode is passed over, not the command.
        let rows = self.store.rows::<Capped>(&[]).filter_map(|r| r.ok());
        for (read, (page_id, capped)) in rows.enumerate() {
            if read == CAPPED_PAGES_READ {
                return Ok(Some(format!(
                    "never seen: no stored link leads to it (the first {CAPPED_PAGES_READ} pages whose links were cut were searched, not all)"
                )));
            }
            let Some(at) = self.find_on_page(page_id, u)? else {
                continue;
            };
            let n = |v: usize| table::thousands(v as u64);
            let cap = if at.nth > capped.max_outlinks as usize {
                format!("crawl.max_outlinks = {}", n(capped.max_outlinks as usize))
            } else if at.bytes_before > capped.link_bytes as usize {
                format!(
                    "the {} MiB a page's links may hold",
                    capped.link_bytes >> 20
                )
            } else {
                continue; // taken when parsed: the body stored is another version
            };
            let src = self.store.url(page_id)?.unwrap_or_default();
            return Ok(Some(format!(
                "not queued: linked from {src} as its link {} of {} (repeats and mailto: counted), past {cap} ({} links taken, {} dropped); raise crawl.max_outlinks and crawl the page again (recrawl) to follow them",
                n(at.nth),
                n(at.of),
                n(capped.kept as usize),
                n(capped.cut as usize),
            )));
        }
        Ok(None)
    }

    /// Where the stored body of page `id` links `u`, parsed again.
    fn find_on_page(
        &self,
        id: UrlId,
        u: &model::CanonicalUrl,
    ) -> Result<Option<crate::parse::LinkPlace>> {
        let Some(page) = self.store.page(id)? else {
            return Ok(None);
        };
        let (Some(src), Ok(body)) = (self.store.url(id)?, page.body()) else {
            return Ok(None);
        };
        let Ok(src_url) = url::Url::parse(&src) else {
            return Ok(None);
        };
        let ct = Some(page.content_type.as_str()).filter(|c| !c.is_empty());
        let decoded = crate::parse::decode(&body, ct);
        let agent = self.settings.agent_token();
        Ok(crate::parse::find_link(
            &decoded.text,
            &src_url,
            decoded.charset,
            agent,
            u.id(),
        ))
    }
}
