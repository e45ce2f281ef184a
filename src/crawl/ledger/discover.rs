//! What a discovered URL becomes: filtered with a reason (scope, depth,
//! a spider-trap limit, a link filter), or queued in the frontier; and the
//! re-judging of filtered URLs when the limits change.

use super::{Ledger, PageWrite};
use crate::crawl::traps;
use crate::frontier::PageScore;
use crate::model::{self, CanonicalUrl, HostId, LinkType, UrlId};
use crate::model::{FilterReason, SeenState};
use crate::schema::Filtered;
use crate::schema::tables::{LinkLimitsRow, Seen};
use crate::schema::{FrontierEntry, FrontierScores, LinkContext, LinkLimits, SeenRecord};
use crate::store::{Batch, StoreError};

/// What a discovered URL's frontier scores come from (read only when the
/// URL is queued: most links lead to URLs seen before).
#[derive(Clone, Copy)]
pub enum ScoreFrom<'a> {
    /// Nothing to score from (a seed, or a link judged again offline):
    /// a seed is given top scores.
    Nothing,
    /// The target of a redirect: it keeps the redirected URL's scores
    /// and link.
    Redirect {
        scores: &'a FrontierScores,
        link: Option<&'a LinkContext>,
    },
    /// A URL a sitemap listed: no page, anchor or in-link speaks for it,
    /// so it scores as low as a link can (a seed's top scores would put
    /// 50,000 of them before every relevant link).
    Listed,
    /// A link of a fetched page, of type `kind`, with its anchor and the
    /// text around it.
    Link {
        page: PageScore,
        kind: LinkType,
        before: &'a str,
        anchor: &'a str,
        after: &'a str,
    },
}

/// Where a newly discovered URL comes from.
pub struct Discovery<'a> {
    depth: u16,
    parent: Option<UrlId>,
    redirects: u8,
    /// Seeds skip the scope and depth checks.
    seed: bool,
    /// A page read from an archive: queued whatever filtered it before.
    imported: bool,
    /// Judge a URL filtered for depth or scope again (the limits changed).
    rejudge: bool,
    /// A filter that dropped the link before the seen check (domain, link type).
    filtered: Option<FilterReason>,
    from: ScoreFrom<'a>,
    /// The host of the page it was found on, whose seed site's depth
    /// limit applies (None: the URL's own host's).
    found_on: Option<HostId>,
}

impl<'a> Discovery<'a> {
    /// A seed (or a URL a seed redirected to): no scope or depth check.
    pub fn seed(depth: u16, parent: Option<UrlId>, redirects: u8) -> Discovery<'a> {
        Discovery {
            depth,
            parent,
            redirects,
            seed: true,
            imported: false,
            rejudge: false,
            filtered: None,
            from: ScoreFrom::Nothing,
            found_on: None,
        }
    }

    /// A URL a sitemap listed (or a sitemap found in a robots.txt or an
    /// index, with no parent page): judged like a link.
    pub fn listed(depth: u16, parent: Option<UrlId>) -> Discovery<'a> {
        Discovery {
            depth,
            parent,
            redirects: 0,
            seed: false,
            imported: false,
            rejudge: false,
            filtered: None,
            from: ScoreFrom::Listed,
            found_on: None,
        }
    }

    /// A link or redirect found on a page; `filtered` when a link filter
    /// dropped it before the seen check.
    pub fn found(
        depth: u16,
        parent: UrlId,
        redirects: u8,
        filtered: Option<FilterReason>,
    ) -> Discovery<'a> {
        Discovery {
            depth,
            parent: Some(parent),
            redirects,
            seed: false,
            imported: false,
            rejudge: false,
            filtered,
            from: ScoreFrom::Nothing,
            found_on: None,
        }
    }

    /// A page another crawler fetched, read from its archive (`import
    /// warc`): queued to be stored at once, whatever verdict filtered it
    /// before, with no scope, depth or spider-trap check.
    pub fn imported(depth: u16, parent: Option<UrlId>) -> Discovery<'a> {
        Discovery {
            imported: true,
            ..Discovery::seed(depth, parent, 0)
        }
    }

    /// What the URL's scores are computed from.
    pub(super) fn from(&self) -> ScoreFrom<'a> {
        self.from
    }

    pub(super) fn depth(&self) -> u16 {
        self.depth
    }

    /// A link filter dropped the link.
    pub(super) fn is_filtered(&self) -> bool {
        self.filtered.is_some()
    }

    /// The same discovery, its scores computed from `from`.
    pub fn scored(self, from: ScoreFrom<'a>) -> Discovery<'a> {
        Discovery { from, ..self }
    }

    /// The same discovery, found on a page of `host`.
    pub fn found_on(self, host: HostId) -> Discovery<'a> {
        Discovery {
            found_on: Some(host),
            ..self
        }
    }

    /// A link from page `parent` that refilter now follows (or drops with
    /// `filtered`): one hop deeper than the page, its old verdict void.
    /// `parent_depth` is the page's depth, if it has one.
    pub fn rejudged(
        parent: UrlId,
        parent_depth: Option<u16>,
        filtered: Option<FilterReason>,
    ) -> Discovery<'a> {
        Discovery {
            depth: parent_depth.map_or(1, |d| d.saturating_add(1)),
            parent: Some(parent),
            redirects: 0,
            seed: false,
            imported: false,
            rejudge: true,
            filtered,
            from: ScoreFrom::Nothing,
            found_on: None,
        }
    }
}

/// Whether a URL seen before as `prior` is judged again on discovery
/// `d`: only where the earlier verdict may change — a seed given again, a
/// shallower path to one that was too deep, a re-judged link. A link the
/// crawl follows reopens a target another page's link verdict dropped:
/// the outcome must not depend on which page was seen first.
/// A link within its site's depth limit reopens a URL another site's
/// smaller limit filtered (under one limit, only a shallower link is
/// within it). `site_filters`: seed sites judge links by their own filter
/// mode, so a followed link reopens what another site's domain filter
/// dropped.
fn reopens(prior: &SeenRecord, d: &Discovery<'_>, within_depth: bool, site_filters: bool) -> bool {
    match prior.state {
        SeenState::Filtered(_) if d.imported => true,
        state if d.rejudge && rejudge_reconsiders(state) => true,
        SeenState::Filtered(FilterReason::Depth) => d.seed || within_depth,
        SeenState::Filtered(FilterReason::Scope) => d.seed,
        SeenState::Filtered(FilterReason::LinkType | FilterReason::Refiltered) => {
            d.filtered.is_none()
        }
        SeenState::Filtered(FilterReason::Domain) => {
            let link = matches!(d.from, ScoreFrom::Link { .. });
            site_filters && link && d.filtered.is_none()
        }
        _ => false,
    }
}

/// Whether re-judging a link (after new settings) reconsiders a URL seen
/// in `state`: only verdicts that settings can change are reopened.
pub fn rejudge_reconsiders(state: SeenState) -> bool {
    matches!(
        state,
        SeenState::Filtered(
            FilterReason::Depth
                | FilterReason::Scope
                | FilterReason::Domain
                | FilterReason::LinkType
                | FilterReason::Refiltered
                | FilterReason::PathDepth
                | FilterReason::SegmentRepeats
                | FilterReason::QueryVariants
                | FilterReason::HostBudget,
        )
    )
}

impl Ledger {
    /// When the depth limit or scope differs from the last run's, URLs
    /// filtered for depth or scope are judged again under the new limits
    /// (one scan of `seen`, only on such a change).
    pub fn rejudge_if_limits_changed(&mut self) -> Result<(), StoreError> {
        let now = self.link_limits();
        let before: Option<LinkLimits> = self.store.meta::<LinkLimitsRow>()?;
        if before.as_ref() == Some(&now) {
            return Ok(());
        }
        let store = self.store.clone();
        let mut retry = Vec::new();
        if before.is_some() {
            let mut rows = store.rows::<Seen>(&[]);
            for row in rows.by_ref() {
                let (id, rec) = row?;
                let limited = matches!(
                    rec.state,
                    SeenState::Filtered(
                        FilterReason::Depth
                            | FilterReason::Scope
                            | FilterReason::PathDepth
                            | FilterReason::SegmentRepeats
                            | FilterReason::QueryVariants
                            | FilterReason::HostBudget
                    )
                );
                if limited {
                    retry.push((id, rec));
                }
            }
            if rows.unreadable() > 0 {
                self.notice(format!(
                    "{} seen rows could not be read; their URLs were not judged again",
                    rows.unreadable()
                ));
            }
        }
        let mut w = PageWrite::new(&store);
        for (id, rec) in retry {
            let Some(url) = store.url(id)?.and_then(|u| model::normalize(&u).ok()) else {
                continue;
            };
            // The depth limit of the site of the page that linked it.
            let parent_url = match rec.parent {
                Some(p) => store.url(UrlId(p))?,
                None => None,
            };
            let found_on = parent_url
                .and_then(|u| model::normalize(&u).ok())
                .map(|u| u.host_id());
            let limit = self.depth_limit(found_on, &url);
            let within = limit.is_none_or(|m| rec.depth <= m);
            if within && self.scope.allows(self.settings.scope, &url) {
                let d = Discovery {
                    depth: rec.depth,
                    parent: rec.parent.map(UrlId),
                    redirects: rec.redirects,
                    seed: false,
                    imported: false,
                    rejudge: true,
                    filtered: None,
                    from: ScoreFrom::Nothing,
                    found_on,
                };
                self.discover(&mut w, &url, d)?;
            }
        }
        w.b.put_meta::<LinkLimitsRow>(&now);
        self.finish(w.b, &w.touched)
    }

    /// Records a discovered URL: filtered with a reason, or queued. Returns
    /// nothing; every effect goes into `b` and the in-memory mirrors.
    pub fn discover(
        &mut self,
        w: &mut PageWrite<'_>,
        url: &CanonicalUrl,
        d: Discovery<'_>,
    ) -> Result<(), StoreError> {
        let id = url.id();
        if !w.pending.insert(id) {
            return Ok(());
        }
        // Seeds and re-judged links may reopen any verdict: they always read
        // the stored one.
        let ordinary = !d.seed && !d.rejudge;
        // A revisit's new version raises no target its old one linked.
        let boost = !w.unboosted.contains(&id);
        if ordinary && self.settled.contains(id) {
            if boost {
                self.boost(url, &d);
            }
            return Ok(());
        }
        let prior = if self.front.may_contain(id) {
            self.store.seen(id)?
        } else {
            None
        };
        let limit = self.depth_limit(d.found_on, url);
        let within_depth = d.seed || limit.is_none_or(|m| d.depth <= m);
        if let Some(prior) = &prior {
            let site_filters = self.sites.has_mode_filters();
            if !reopens(prior, &d, within_depth, site_filters) {
                if ordinary {
                    self.settle(id, prior.state);
                }
                if prior.state == SeenState::Queued && boost {
                    self.boost(url, &d);
                }
                return Ok(());
            }
            if let SeenState::Filtered(r) = prior.state {
                self.counters.filtered.add(Filtered::Url(r), -1);
            }
        } else {
            self.front.insert(id);
            self.counters.seen += 1;
            w.b.put_url(id, url.as_str());
        }
        let mut state = self.first_verdict(url, &d, within_depth);
        if state == SeenState::Queued
            && !d.seed
            && let Some(r) = self.trap_verdict(&mut w.b, url)?
        {
            state = SeenState::Filtered(r);
        }
        let now = self.clock.now_ms();
        let mut rec = SeenRecord {
            state,
            depth: d.depth,
            parent: d.parent.map(|p| p.0),
            redirects: d.redirects,
            updated_ms: now,
            priority: None,
            scores: None,
        };
        match state {
            SeenState::Filtered(r) => self.counters.filtered.add(Filtered::Url(r), 1),
            _ => rec.priority = Some(self.enqueue(w, url, &d, now)?),
        }
        w.b.put_row::<Seen>(&id, &rec);
        self.settle(id, state);
        Ok(())
    }

    /// What a discovered URL becomes before the spider-trap limits: out
    /// of scope, dropped by a link filter, too deep, too many redirects
    /// on, or queued.
    fn first_verdict(
        &self,
        url: &CanonicalUrl,
        d: &Discovery<'_>,
        within_depth: bool,
    ) -> SeenState {
        if !d.seed && !self.scope.allows(self.settings.scope, url) {
            SeenState::Filtered(FilterReason::Scope)
        } else if let Some(r) = d.filtered {
            SeenState::Filtered(r)
        } else if !within_depth {
            SeenState::Filtered(FilterReason::Depth)
        } else if d.redirects > self.settings.max_redirects {
            SeenState::Filtered(FilterReason::RedirectChain)
        } else {
            SeenState::Queued
        }
    }

    /// Puts a URL in its host's queue, in the frontier's order; returns
    /// its priority.
    fn enqueue(
        &mut self,
        w: &mut PageWrite<'_>,
        url: &CanonicalUrl,
        d: &Discovery<'_>,
        now: u64,
    ) -> Result<u64, StoreError> {
        // One serialization of the origin serves both id and record.
        let origin = url.host_key();
        let host = HostId::of(&origin);
        let link = self.link_context(d);
        let scores = self.scores_for(url, d, self.counters.next_seq, link.as_ref());
        let priority = self
            .settings
            .order
            .priority_as(self.order_of(host), d.depth, &scores);
        self.counters.next_seq += 1;
        let entry = FrontierEntry {
            url: url.as_str().to_string(),
            depth: d.depth,
            parent: d.parent.map(|p| p.0),
            redirects: d.redirects,
            attempts: 0,
            enqueued_ms: now,
            scores: Some(scores),
            link,
            revisit: None,
        };
        self.counters.queued += 1;
        let h = self.load(host, &origin)?;
        h.record.queued += 1;
        h.record.urls += 1;
        h.queue.enqueue(&mut w.b, priority, url.id(), entry);
        w.touch(host);
        Ok(priority)
    }

    /// The spider-trap limit a URL about to be queued runs into, if any;
    /// when none does, its query string is counted against its path.
    fn trap_verdict(
        &mut self,
        b: &mut Batch<'_>,
        url: &CanonicalUrl,
    ) -> Result<Option<FilterReason>, StoreError> {
        let limits = self.settings.traps;
        if let Some(r) = traps::shape_verdict(url, &limits) {
            return Ok(Some(r));
        }
        let host = url.host_id();
        if let Some(max) = limits.max_host_urls {
            let h = self.load(host, &url.host_key())?;
            if h.record.urls >= max {
                return Ok(Some(FilterReason::HostBudget));
            }
        }
        if url.url().query().is_some() {
            let key = traps::path_key(host, url);
            let n = self.variants.count(&self.store, &key)?;
            if limits.max_query_variants.is_some_and(|m| n >= m) {
                return Ok(Some(FilterReason::QueryVariants));
            }
            self.variants.add(b, &key, n);
        }
        Ok(None)
    }
}
