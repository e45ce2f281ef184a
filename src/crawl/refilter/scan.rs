//! A refilter scanner's work, pure but for reads: for each stored page,
//! its verdict under the current filters, each of its links judged again
//! (by the same `judge_link` the crawl calls), the rows to rewrite and the
//! targets whose `seen` verdict may change. Runs on a scanner thread over
//! one share of the `docs` key space, walking `verdicts` and `links`
//! alongside (they are keyed by the page first: a merge join).

use std::borrow::Cow;
use std::collections::HashSet;

use super::redenoise::{Fresh, Outcome, Redenoise};
use crate::crawl::ledger::rejudge_reconsiders;
use crate::crawl::sites::PageFilters;
use crate::filter::denoise::{clean_text, noise_of};
use crate::filter::judge::{LinkDecision, LinkJudge, LinkText, judge_link};
use crate::filter::links::{self, LinkType};
use crate::filter::{Filters, Mode, PageVerdict};
use crate::model::FilterReason;
use crate::model::{self, CanonicalUrl, LinkVerdict, UrlId, Verdict};
use crate::schema::{DocView, LinkView, PageLinksBuilder, VerdictRecord, Versioned};
use crate::store::{Cursor, PageLinkRows, Store, StoreError};

/// What a scanner thread worked out for one page: its new verdict, the
/// records to rewrite, and the links whose following changed.
pub(super) struct PageWork {
    pub id: UrlId,
    pub key: Box<[u8]>,
    /// The page's URL, when judging it needed it.
    pub src: Option<CanonicalUrl>,
    pub old: Verdict,
    pub verdict: Verdict,
    /// The page's `verdicts` value, encoded, when its scores or verdict
    /// changed (never in a dry run).
    pub verdict_value: Option<Vec<u8>>,
    /// The page's links row to write back, encoded (none in a dry run).
    pub links: Vec<(Box<[u8]>, Vec<u8>)>,
    pub links_changed: u64,
    /// Targets whose seen verdict may change: their URL, and the filter to
    /// record if a link filter dropped the link.
    pub queue: Vec<(String, Option<FilterReason>)>,
    pub unfollowed: Vec<UrlId>,
    /// Links rows of the page that could not be read.
    pub unreadable_links: u64,
    /// The page's `docs` value with its new denoising (never in a dry run).
    pub doc_value: Option<Vec<u8>>,
    /// What denoising the page again came to, when asked.
    pub denoised: Option<Outcome>,
}

/// A scanner's cursors over the column families keyed like `docs` (by
/// the page's url id first), walked alongside it.
pub(super) struct Cursors<'a> {
    pub links: Cursor<'a>,
    pub verdicts: Cursor<'a>,
    /// Read only when the filters read the text.
    pub pages: Cursor<'a>,
}

/// The settings a scanner thread judges pages with.
#[derive(Clone, Copy)]
pub(super) struct Judging {
    pub follow_nofollow: bool,
    pub soft_focus: bool,
    /// The filters read a page's stored denoised text, when it has one.
    pub denoised_text: bool,
    pub dry_run: bool,
}

/// One page being judged: where to read, and its URL once read.
struct Page<'a> {
    store: &'a Store,
    filters: &'a Filters,
    judging: Judging,
    id: UrlId,
    /// A seed whose links are followed whatever its verdict.
    seed: bool,
    /// The page's URL: a point read, done only when the mode judges by
    /// host or a link's type must be worked out from the URLs.
    src: Option<CanonicalUrl>,
}

impl Page<'_> {
    fn src(&mut self) -> Result<Option<&CanonicalUrl>, StoreError> {
        if self.src.is_none() {
            self.src = source_url(self.store, self.id)?;
        }
        Ok(self.src.as_ref())
    }
}

/// A target a link now leads to: its id, its URL if read, and the filter
/// to record if a link filter dropped the link.
type MaybeQueued = (UrlId, Option<String>, Option<FilterReason>);

/// A link whose judgement changed: what to write, and what it means for
/// its target.
struct Judged {
    kind: LinkType,
    verdict: LinkVerdict,
    detail: String,
    /// Now followed (or dropped by a link filter) where it was not.
    queue: bool,
    unfollowed: bool,
    changed: bool,
    /// The target's URL, if it was read.
    url: Option<String>,
    forced: Option<FilterReason>,
}

/// What a scanner thread judges pages with.
pub(super) struct Scan<'a> {
    pub store: &'a Store,
    /// The crawl's filters and the seed sites' own.
    pub filters: &'a PageFilters,
    pub judging: Judging,
    /// Seeds whose links are followed whatever their verdict (empty when
    /// `crawl.follow_seed_links` is off).
    pub seeds: &'a HashSet<UrlId>,
    /// Set by `refilter --denoise`.
    pub redenoise: Option<Redenoise<'a>>,
}

/// Refilters one page (`key`, its `docs` row `value`).
pub(super) fn judge_page(
    scan: &Scan<'_>,
    cursors: &mut Cursors<'_>,
    key: Box<[u8]>,
    value: &[u8],
) -> Result<Option<PageWork>, StoreError> {
    let (store, judging) = (scan.store, scan.judging);
    let (Some(id), Ok(doc)) = (UrlId::from_slice(&key), DocView::decode(value)) else {
        return Ok(None);
    };
    // A schema-1 doc carries its own verdict: copied into `verdicts` by the
    // migration, unless a trawl of schema 2 to 7 reopened the db first
    // (those stamped the version without converting).
    let in_verdicts = stored_verdict(&mut cursors.verdicts, &key)?;
    let legacy = in_verdicts.is_none() && doc.legacy_verdict.is_some();
    let stored = in_verdicts
        .or_else(|| doc.legacy_verdict.clone())
        .unwrap_or_default();
    let mut page = Page {
        store,
        filters: &scan.filters.global,
        judging,
        id,
        seed: scan.seeds.contains(&id),
        src: None,
    };
    // A seed site's own settings judge its pages and the links on them
    // (its filter mode, its depth): read the URL then.
    if scan.filters.per_site()
        && let Some(host) = page.src()?.map(CanonicalUrl::host_id)
    {
        page.filters = scan.filters.for_host(host);
    }
    let filters = page.filters;
    if filters.settings.mode == Mode::DomainTopic && page.src()?.is_none() {
        return Ok(None);
    }
    let (fresh, denoised) = match &scan.redenoise {
        Some(r) => {
            let url = page.src()?.map(|u| u.url());
            let fresh = r.page(&mut cursors.pages, (id, url), value)?;
            let outcome = fresh.as_ref().map_or(Outcome::NoBody, |f| f.outcome);
            (fresh, Some(outcome))
        }
        None => (None, None),
    };
    let verdict = judge_text(
        &mut cursors.pages,
        filters,
        (&doc, fresh.as_ref()),
        (id, page.src.as_ref()),
        judging.denoised_text,
    )?;
    let mut w = PageWork {
        id,
        key: key.clone(),
        src: None,
        old: stored.verdict,
        verdict: verdict.verdict,
        verdict_value: None,
        links: Vec::new(),
        links_changed: 0,
        queue: Vec::new(),
        unfollowed: Vec::new(),
        unreadable_links: 0,
        doc_value: None,
        denoised,
    };
    if !judging.dry_run {
        w.doc_value = fresh.and_then(|f| f.doc_value);
    }
    let rows = PageLinkRows::read(&mut cursors.links, &key)?;
    // A links row that cannot be read is left as it is, and counted.
    let (entries, unreadable) = rows.links();
    w.unreadable_links = unreadable;
    let maybe_queue = judge_links(&mut page, &entries, doc.nofollow, &verdict, &mut w)?;
    w.queue = still_to_queue(store, maybe_queue)?;
    w.src = page.src;
    // A doc rewritten in the current version no longer carries a legacy
    // verdict: it goes to `verdicts` then.
    let keep_legacy = legacy && w.doc_value.is_some();
    if (scores_changed(&verdict, &stored) || keep_legacy) && !judging.dry_run {
        let v = VerdictRecord {
            topic_score: verdict.topic_score,
            relevance: verdict.relevance,
            verdict: verdict.verdict,
            verdict_detail: verdict.detail,
        };
        w.verdict_value = Some(v.encode());
    }
    Ok(Some(w))
}

/// The page's `verdicts` row, if it has one.
fn stored_verdict(
    cursor: &mut Cursor<'_>,
    key: &[u8],
) -> Result<Option<VerdictRecord>, StoreError> {
    Ok(cursor
        .row_at(key)?
        .and_then(|v| VerdictRecord::decode(v).ok()))
}

/// The page filters' verdict on the stored title and text (validated only
/// when the mode reads them), denoised when `denoised` and the page was
/// (as `fresh` says when it was denoised again, else as stored). From
/// schema 9 the text is in the page's frame, read only then.
fn judge_text(
    pages: &mut Cursor<'_>,
    filters: &Filters,
    (doc, fresh): (&DocView<'_>, Option<&Fresh>),
    (id, src): (UrlId, Option<&CanonicalUrl>),
    denoised: bool,
) -> Result<PageVerdict, StoreError> {
    let host = src.map_or("", |u| u.host());
    if !filters.reads_text() {
        return Ok(filters.page(host, "", ""));
    }
    let (text, record) = match fresh {
        Some(f) => (Cow::Borrowed(f.text.as_str()), f.record.as_ref()),
        None => match doc.text {
            b"" => (
                Store::page_text_at(pages, id)?
                    .map(Cow::Owned)
                    .unwrap_or_default(),
                doc.denoise.as_ref(),
            ),
            t => (String::from_utf8_lossy(t), doc.denoise.as_ref()),
        },
    };
    if let Some(d) = record.filter(|_| denoised) {
        let clean = clean_text(&text, noise_of(&d.noise));
        return Ok(filters.page(host, &d.title, &clean));
    }
    Ok(filters.page(host, &String::from_utf8_lossy(doc.title), &text))
}

fn scores_changed(v: &PageVerdict, stored: &VerdictRecord) -> bool {
    (v.topic_score, v.relevance, v.verdict, v.detail.as_str())
        != (
            stored.topic_score,
            stored.relevance,
            stored.verdict,
            stored.verdict_detail.as_str(),
        )
}

/// Judges every link again; when any changed, the page's links row is
/// rewritten whole in the current layout (in a db of schema 4 it then
/// supersedes the page's per-link rows). Returns the targets that may now
/// be queued.
fn judge_links(
    page: &mut Page<'_>,
    entries: &[(UrlId, LinkView<'_>)],
    page_nofollow: bool,
    verdict: &PageVerdict,
    w: &mut PageWork,
) -> Result<Vec<MaybeQueued>, StoreError> {
    let mut maybe_queue = Vec::new();
    let mut row_changes: Vec<(usize, LinkType, LinkVerdict, String)> = Vec::new();
    for (i, &(dst, rec)) in entries.iter().enumerate() {
        let Some(j) = judge_one(page, dst, &rec, page_nofollow, verdict)? else {
            continue;
        };
        if j.queue {
            maybe_queue.push((dst, j.url, j.forced));
        }
        if j.unfollowed {
            w.unfollowed.push(dst);
        }
        if !j.changed {
            continue;
        }
        w.links_changed += 1;
        if !page.judging.dry_run {
            row_changes.push((i, j.kind, j.verdict, j.detail));
        }
    }
    if !row_changes.is_empty() {
        w.links
            .push((w.key.clone(), rebuilt_row(entries, &row_changes)));
    }
    Ok(maybe_queue)
}

/// One link judged again; None when its type cannot be worked out (a
/// target or source URL that no longer parses).
fn judge_one(
    page: &mut Page<'_>,
    dst: UrlId,
    rec: &LinkView<'_>,
    page_nofollow: bool,
    verdict: &PageVerdict,
) -> Result<Option<Judged>, StoreError> {
    // The target's URL: in the row since link version 4; for older rows it
    // is read only when it matters (an unknown link type, the domain filter
    // without a stored host, a target to queue).
    let stored_url = Some(rec.dst_url).filter(|u| !u.is_empty());
    let target_url = |store: &Store| -> Result<Option<String>, StoreError> {
        match stored_url {
            Some(u) => Ok(Some(u.to_string())),
            None => store.url(dst),
        }
    };
    let mut text: Option<String> = None;
    let kind = match rec.link_type {
        Some(k) => k,
        None => {
            text = target_url(page.store)?;
            let Some(d) = text.as_deref().and_then(|t| model::normalize(t).ok()) else {
                return Ok(None);
            };
            let Some(p) = page.src()? else {
                return Ok(None);
            };
            links::classify(p.url(), d.url())
        }
    };
    // Records before v3 lack the host: read it from the stored URL.
    let domain_mode = page.filters.settings.mode == Mode::Domain;
    if domain_mode && rec.dst_host.is_empty() && text.is_none() {
        text = target_url(page.store)?;
    }
    let host: Option<&str> = if !rec.dst_host.is_empty() {
        Some(rec.dst_host)
    } else {
        text.as_deref().map(model::host_of)
    };
    let link = LinkText {
        nofollow: rec.nofollow,
        before: rec.before,
        anchor: rec.anchor,
        after: rec.after,
    };
    let judge = LinkJudge {
        filters: page.filters,
        follow_nofollow: page.judging.follow_nofollow,
        soft_focus: page.judging.soft_focus,
        seed: page.seed,
    };
    let decision = judge_link(
        judge,
        kind,
        (page.id, dst),
        host,
        page_nofollow,
        verdict,
        link,
    );
    let changed = differs(&decision, kind, rec);
    let forced = decision.verdict.filtered_as();
    let (was, now) = (rec.verdict.follows(), decision.follows());
    Ok(Some(Judged {
        kind,
        verdict: decision.verdict,
        queue: (now && !was) || (forced.is_some() && changed),
        unfollowed: was && !now,
        changed,
        url: text.or_else(|| stored_url.map(str::to_string)),
        forced,
        detail: decision.detail.into_owned(),
    }))
}

/// The page's links row with the changed links' new judgements.
fn rebuilt_row(
    entries: &[(UrlId, LinkView<'_>)],
    changes: &[(usize, LinkType, LinkVerdict, String)],
) -> Vec<u8> {
    let mut row = PageLinksBuilder::default();
    let mut changes = changes.iter().peekable();
    for (i, &(dst, rec)) in entries.iter().enumerate() {
        match changes.peek() {
            Some((j, link_type, verdict, detail)) if *j == i => {
                let new = LinkView {
                    link_type: Some(*link_type),
                    verdict: *verdict,
                    verdict_detail: detail,
                    ..rec
                };
                row.push(dst, &new);
                changes.next();
            }
            _ => row.push(dst, &rec),
        }
    }
    row.encode()
}

/// Of the targets that may be queued, those whose `seen` verdict a link
/// may change, with their URLs: targets already fetched, queued or failed
/// stay as they are. Read here, in parallel and in one MultiGet per page,
/// so the applier does not.
fn still_to_queue(
    store: &Store,
    maybe: Vec<MaybeQueued>,
) -> Result<Vec<(String, Option<FilterReason>)>, StoreError> {
    if maybe.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<UrlId> = maybe.iter().map(|(id, _, _)| *id).collect();
    let seen = store.seen_many(&ids)?;
    let mut out = Vec::new();
    for ((dst, text, forced), prior) in maybe.into_iter().zip(seen) {
        if prior.is_some_and(|p| !rejudge_reconsiders(p.state)) {
            continue;
        }
        let text = match text {
            Some(t) => Some(t),
            None => store.url(dst)?,
        };
        if let Some(t) = text {
            out.push((t, forced));
        }
    }
    Ok(out)
}

/// Whether a stored link says something other than `decision` does.
fn differs(decision: &LinkDecision<'_>, kind: LinkType, stored: &LinkView<'_>) -> bool {
    stored.link_type != Some(kind)
        || stored.verdict != decision.verdict
        || stored.verdict_detail != decision.detail
}

fn source_url(store: &Store, id: UrlId) -> Result<Option<CanonicalUrl>, StoreError> {
    Ok(store.url(id)?.and_then(|u| model::normalize(&u).ok()))
}
