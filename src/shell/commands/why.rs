//! `why URL`: what became of a URL and the numbers behind it — queued,
//! fetched (and where a redirect leads), failed with the error kept, or
//! skipped with the filter or limit that decided, naming the setting that
//! changes it.

use serde_json::json;

use super::{Call, Command, Run, no_detail, page_history, urls};
use crate::crawl::sites::SiteRules;
use crate::crawl::traps;
use crate::fetch::RobotsRules;
use crate::model::{self, LinkVerdict, UrlId, Verdict};
use crate::model::{FailReason, FilterReason, RobotsOutcome, SeenState};
use crate::schema::tables::{Due, Lastmods, LinkLimitsRow, Sitemaps, Visits};
use crate::schema::{DueKey, DueReason, LinkLimits, PageDoc};
use crate::shell::error::Result;
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "why",
    usage: "why URL",
    summary: "why a URL was fetched, queued, skipped or never seen",
    examples: &["why https://example.org/private/"],
    arity: (1, Some(1)),
    subs: &[],
    writes: false,
    complete: urls,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    sh.why(call.args[0])
}

impl Ctx {
    /// How a URL came from a sitemap, if it did: `, a sitemap (from
    /// robots.txt)`, or `, listed in the sitemap S (lastmod …)`.
    fn sitemap_origin(&self, id: UrlId, parent: Option<u128>) -> Result<Option<String>> {
        if let Some(s) = self.store.row::<Sitemaps>(&id)? {
            let from = match (s.via.as_str(), s.parent) {
                ("robots", _) => "a Sitemap: line of its host's robots.txt".to_string(),
                ("guess", _) => "its seed host's usual place".to_string(),
                (_, Some(p)) => format!(
                    "the sitemap index {}",
                    self.store.url(UrlId(p))?.unwrap_or_default()
                ),
                (via, None) => via.to_string(),
            };
            let read = match s.kind.as_str() {
                "" if s.problem.is_empty() => String::new(),
                "" => format!("; not read: {}", s.problem),
                kind => {
                    let mut read = format!("; a {kind} of {} entries", s.entries);
                    if s.skipped > 0 {
                        read.push_str(&format!(
                            ", {} skipped (not an absolute http(s) URL, or over the URL limit)",
                            s.skipped
                        ));
                    }
                    if s.dropped > 0 {
                        read.push_str(&format!(", {} past the 50,000 a file", s.dropped));
                    }
                    if !s.problem.is_empty() {
                        read.push_str(&format!(", {}", s.problem));
                    }
                    read
                }
            };
            return Ok(Some(format!(", a sitemap (from {from}{read})")));
        }
        let Some(p) = parent else {
            return Ok(None);
        };
        if self.store.row::<Sitemaps>(&UrlId(p))?.is_none() {
            return Ok(None);
        }
        // (A stored date past 9999 would not format as an HTTP date.)
        // The lastmod of the sitemap named: another may have listed it since.
        let lastmod = self
            .store
            .row::<Lastmods>(&id)?
            .filter(|l| l.sitemap == p)
            .and_then(|l| l.lastmod_ms);
        let lastmod = match lastmod.filter(|ms| *ms < 253_402_300_800_000) {
            Some(ms) => format!(
                " (lastmod {})",
                httpdate::fmt_http_date(
                    std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)
                )
            ),
            None => String::new(),
        };
        let sitemap = self.store.url(UrlId(p))?.unwrap_or_default();
        Ok(Some(format!(", listed in the sitemap {sitemap}{lastmod}")))
    }

    /// `; held: its seed site … waits in group 3 of 5 …` for a URL whose
    /// site waits for a later group (`crawl.site_batch`).
    fn group_wait(&self, u: &model::CanonicalUrl) -> Result<String> {
        let Some((groups, rules)) = self.site_groups()? else {
            return Ok(String::new());
        };
        let host = u.host_id();
        let (Some(i), Some(c)) = (rules.site_index(host), groups.counts(&rules)) else {
            return Ok(String::new());
        };
        if !groups.waits(&rules, host) {
            return Ok(String::new());
        }
        let origin = self
            .store
            .host(rules.sites()[i].id)?
            .map_or_else(|| u.host_key(), |r| r.origin);
        Ok(format!(
            "; held: its seed site {origin} is in group {} of {}, after the running group {} (crawl.site_batch {})",
            i / c.size + 1,
            c.groups,
            c.current.unwrap_or(0),
            c.size
        ))
    }

    fn why(&mut self, url: &str) -> Result<Reply> {
        let u = self.url_arg(url)?;
        // The seed sites' own settings, as the crawl judges by them now.
        let (rules, _) = SiteRules::load(&self.store)?;
        let Some(seen) = self.store.seen(u.id())? else {
            let (state, t) = self.explain_unseen(&u)?;
            return Ok(Reply::record(
                format!("{u}: {t}"),
                json!({"url": u.as_str(), "state": state, "explanation": t}),
            ));
        };
        let parent = match (self.sitemap_origin(u.id(), seen.parent)?, seen.parent) {
            (Some(how), _) => how,
            (None, Some(p)) => format!(
                ", first linked from {}",
                self.store.url(UrlId(p))?.unwrap_or_default()
            ),
            (None, None) if seen.depth == 0 => ", a seed".into(),
            (None, None) => String::new(),
        };
        let mut place = None;
        let (state, reason) = match seen.state {
            SeenState::Queued => {
                place = self.queue_place(&u, seen.priority)?;
                let at = place.as_ref().map_or("", |(t, _)| t.as_str());
                let held = self.group_wait(&u)?;
                (
                    "queued",
                    format!("queued at depth {}{parent}{at}{held}", seen.depth),
                )
            }
            SeenState::Fetched { status } => (
                "fetched",
                self.explain_fetched(&u, status, seen.depth, &parent)?,
            ),
            SeenState::Failed(r) => {
                let detail = self
                    .store
                    .detail(u.id())?
                    .map(|d| format!(": {}", d.detail))
                    .unwrap_or_default();
                let what = match r {
                    FailReason::NetworkGuard => "blocked by the network guard".to_string(),
                    FailReason::CrashLoop => "skipped as a crash loop".to_string(),
                    _ => format!("fetch failed: {}", r.name()),
                };
                (
                    "failed",
                    format!("{what}{detail} (depth {}{parent})", seen.depth),
                )
            }
            SeenState::Filtered(r) => (
                "filtered",
                format!(
                    "skipped: {}{parent}",
                    self.explain_filter(&u, r, (seen.depth, seen.parent), seen.redirects, &rules)?
                ),
            ),
        };
        // A seed site's own settings decide for its hosts' pages.
        let reason = match rules.get(u.host_id()) {
            Some(rule) => format!(
                "{reason}; seed site {}'s own settings apply: {}",
                rule.site,
                rule.describe()
            ),
            None => reason,
        };
        let t = format!("{u}: {reason}");
        let mut j =
            json!({"url": u.as_str(), "state": state, "explanation": reason, "depth": seen.depth});
        if let Some((_, queue)) = place {
            j["queue"] = queue;
        }
        Ok(Reply::record(t, j))
    }

    /// A URL with no `seen` row: never linked, or linked only by links the
    /// crawl did not follow (their rows say why).
    fn explain_unseen(&self, u: &model::CanonicalUrl) -> Result<(&'static str, String)> {
        let Some((src, link)) = self.store.first_link_to(u.id())? else {
            if let Some(why) = self.linked_past_cap(u)? {
                return Ok(("not-followed", why));
            }
            return Ok((
                "unseen",
                "never seen: no fetched page links to it and it is not a seed".into(),
            ));
        };
        let from = self.store.url(src)?.unwrap_or_default();
        let why = match link.verdict {
            LinkVerdict::Nofollow => {
                "the link is rel=nofollow (crawl.follow_nofollow is false)".to_string()
            }
            LinkVerdict::PageNofollow => {
                "the page says nofollow (meta robots or X-Robots-Tag)".to_string()
            }
            v @ (LinkVerdict::PageTopic
            | LinkVerdict::PageRelevance
            | LinkVerdict::PageFiltered) => {
                let filter = v.name().trim_start_matches("page:");
                format!(
                    "the page's links are not followed: {filter} filter ({})",
                    link.verdict_detail
                )
            }
            LinkVerdict::Follow => {
                "the link was followed; the URL was judged before this database kept every verdict"
                    .into()
            }
            v => format!(
                "the {} filter dropped the link ({})",
                v.name(),
                link.verdict_detail
            ),
        };
        Ok((
            "not-followed",
            format!("not queued: linked from {from}, but {why}"),
        ))
    }

    /// A fetched URL: when, with what status, the page's verdict, and for
    /// a redirect where it leads.
    fn explain_fetched(
        &self,
        u: &model::CanonicalUrl,
        status: u16,
        depth: u16,
        parent: &str,
    ) -> Result<String> {
        let page = self.store.page(u.id())?;
        let when = page
            .as_ref()
            .map(|p| table::time(p.fetched_ms))
            .unwrap_or_default();
        let doc = self.store.doc(u.id())?;
        let verdict = match &doc {
            Some(PageDoc { doc: d, verdict: v })
                if v.verdict != Verdict::Keep && !d.nofollow && self.follows_as_seed(u)? =>
            {
                format!(
                    "; dropped by the {} filter ({}), but its links are followed: it is a seed (crawl.follow_seed_links)",
                    v.verdict.name(),
                    v.verdict_detail
                )
            }
            Some(PageDoc { verdict: v, .. }) if v.verdict != Verdict::Keep => format!(
                "; its links are not followed: {} filter ({})",
                v.verdict.name(),
                v.verdict_detail
            ),
            Some(PageDoc { verdict: v, .. }) if !v.verdict_detail.is_empty() => {
                format!("; kept ({})", v.verdict_detail)
            }
            _ => String::new(),
        };
        let verdict = verdict + &self.explain_copies(doc.as_ref().map(|d| &d.doc))?;
        let redirect = match &page {
            Some(p) if (300..400).contains(&status) => {
                let location = p
                    .headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                    .map(|(_, v)| v.clone());
                match (&p.redirect_to, location) {
                    (Some(t), _) => {
                        let fate = match self.store.seen(UrlId::of(t))? {
                            Some(s) => seen_word(s.state),
                            None => "not recorded".into(),
                        };
                        format!("; redirects to {t} ({fate})")
                    }
                    (None, Some(l)) => match model::resolve(u.url(), &l) {
                        Err(e) => format!("; redirects to {l}, not followed: {e}"),
                        Ok(_) => format!("; redirects to {l}"),
                    },
                    (None, None) => "; a redirect without a Location header: nowhere to go".into(),
                }
            }
            _ => String::new(),
        };
        let revisits = self.explain_revisits(u.id())?;
        let indexed = self.explain_indexed(u.id())?;
        Ok(format!(
            "fetched {when} with status {status}, depth {depth}{parent}{verdict}{redirect}{revisits}{indexed}"
        ))
    }

    /// Whether (and since when) the search index holds the page.
    fn explain_indexed(&self, id: UrlId) -> Result<String> {
        let index = match crate::search::SearchIndex::open(self.store.path()) {
            Ok(Some(index)) => index,
            Ok(None) => return Ok("; the db has no search index".into()),
            Err(e) => return Ok(format!("; {e}")),
        };
        let behind = (self.store.counters()?.search_seq)
            .saturating_sub(index.mark().map_or(0, |m| m.next_seq.unwrap_or(0)));
        let lag = match behind {
            0 => String::new(),
            n => format!(" (it lacks the last {n} page changes)"),
        };
        Ok(match index.indexed_at(id).map_err(|e| e.to_string())? {
            Some(at) => format!("; in the search index since {}{lag}", table::time(at)),
            None => format!("; not in the search index yet{lag}"),
        })
    }

    /// Whether the crawl follows this URL's links whatever its verdict: a
    /// seed (or a seed's redirect target) while crawl.follow_seed_links is on.
    fn follows_as_seed(&self, u: &model::CanonicalUrl) -> Result<bool> {
        if !self.settings.follow_seed_links {
            return Ok(false);
        }
        let list = self.store.seeds()?;
        let mut starts = list.starts();
        Ok(starts.any(|s| model::normalize(s).is_ok_and(|s| s.id() == u.id())))
    }

    /// A page under `recrawl`: its visits, change rate and next revisit.
    fn explain_revisits(&self, id: UrlId) -> Result<String> {
        let Some(v) = self.store.row::<Visits>(&id)? else {
            return Ok(String::new());
        };
        let line = page_history::visit_summary(&v);
        let due = self
            .store
            .row::<Due>(&DueKey {
                at_ms: v.due_ms,
                url: id,
            })?
            .filter(|r| *r == DueReason::Lastmod)
            .map_or(
                "",
                |_| " (a sitemap's lastmod is newer than the last visit)",
            );
        Ok(format!("; visits {line}{due}"))
    }

    /// What the page repeats: an earlier page's body (its links are not
    /// followed), or a near-duplicate's text.
    fn explain_copies(&self, doc: Option<&crate::schema::DocRecord>) -> Result<String> {
        let Some(d) = doc else {
            return Ok(String::new());
        };
        let url =
            |id: u128| -> Result<String> { Ok(self.store.url(UrlId(id))?.unwrap_or_default()) };
        if let Some(first) = d.duplicate_of {
            return Ok(format!(
                "; its links are not followed: its body repeats {}",
                url(first)?
            ));
        }
        let Some(n) = d.near else {
            return Ok(String::new());
        };
        let of = url(n.of)?;
        Ok(if n.expanded {
            format!("; a near-duplicate of {of} ({} bits apart)", n.distance)
        } else {
            format!(
                "; its links are not followed: a near-duplicate of {of} ({} bits apart) in a cluster where its site's pages are past dedup.cluster_budget",
                n.distance
            )
        })
    }

    fn explain_filter(
        &self,
        u: &model::CanonicalUrl,
        r: FilterReason,
        (depth, parent): (u16, Option<u128>),
        redirects: u8,
        rules: &SiteRules,
    ) -> Result<String> {
        let host = self.store.host(u.host_id())?;
        // The limits the crawl judged by (kept in the db), not this shell's.
        let limits = self
            .store
            .meta::<LinkLimitsRow>()?
            .unwrap_or_else(|| self.settings.link_limits());
        Ok(match r {
            FilterReason::Robots | FilterReason::RobotsUnavailable => {
                self.explain_robots(u, r, host)
            }
            FilterReason::Scope => format!(
                "outside the crawl's scope (crawl.scope = {}; seeds: {})",
                limits.scope,
                self.store.seeds()?.urls.join(" ")
            ),
            FilterReason::Depth => self.explain_depth(u, (depth, parent), &limits, rules)?,
            FilterReason::RedirectChain => format!(
                "reached after {redirects} redirects, over crawl.max_redirects = {}",
                self.settings.max_redirects
            ),
            FilterReason::UrlTooLong => format!("longer than {} bytes", model::MAX_URL_BYTES),
            FilterReason::InvalidUrl => {
                "the URL stored for it no longer parses (written by another trawl version)".into()
            }
            FilterReason::PathDepth
            | FilterReason::SegmentRepeats
            | FilterReason::QueryVariants
            | FilterReason::HostBudget => explain_trap(u, r, &limits),
            FilterReason::Nofollow => "only nofollow links lead here".into(),
            FilterReason::Refiltered => {
                "was queued, but after refilter no page that passes links here".into()
            }
            FilterReason::Domain | FilterReason::LinkType => {
                let via = self.link_verdict_into(u)?;
                format!("dropped by the {} filter{via}", r.name())
            }
        })
    }

    /// Which depth limit a URL was over: that of the seed site of the
    /// page that linked it (or its own), else `crawl.depth`.
    fn explain_depth(
        &self,
        u: &model::CanonicalUrl,
        (depth, parent): (u16, Option<u128>),
        limits: &LinkLimits,
        rules: &SiteRules,
    ) -> Result<String> {
        let parent_url = match parent {
            Some(p) => self.store.url(UrlId(p))?,
            None => None,
        };
        let host = parent_url
            .and_then(|p| model::normalize(&p).ok())
            .map_or(u.host_id(), |p| p.host_id());
        // As the crawl judges now: a host a seed redirected to during the
        // run is its site's, though the stored limits predate it.
        let own = rules.get(host).and_then(|r| r.depth);
        Ok(match own {
            Some(d) => format!(
                "depth {depth} is over the depth = {d} of the seed site it was linked from (seed set HOST depth N changes it)"
            ),
            None => format!(
                "depth {depth} is over crawl.depth = {}",
                limits.max_depth.map_or("none".into(), |d| d.to_string())
            ),
        })
    }

    /// Why robots.txt kept `u` out: the rule that disallows it, or why
    /// the file stayed unreachable.
    fn explain_robots(
        &self,
        u: &model::CanonicalUrl,
        r: FilterReason,
        host: Option<crate::schema::HostRecord>,
    ) -> String {
        if r == FilterReason::Robots {
            let rule = host
                .as_ref()
                .and_then(|h| h.robots.as_ref())
                .map(|rec| RobotsRules::from_record(rec, self.settings.agent_token()))
                .and_then(|rules| rules.deciding_rule(u.path_and_query()));
            return format!(
                "robots.txt of {} disallows it ({})",
                u.host_key(),
                rule.unwrap_or_else(|| "rule no longer present".into())
            );
        }
        let detail = host.and_then(|h| h.robots).map(|r| match r.outcome {
            RobotsOutcome::Unreachable { detail } => {
                format!("{detail}, {} tries", r.failures)
            }
            _ => "since fetched again".into(),
        });
        format!(
            "robots.txt of {} stayed unreachable ({})",
            u.host_key(),
            detail.unwrap_or_default()
        )
    }

    /// The verdict stored on the first link that led to `u`, as `: detail`.
    fn link_verdict_into(&self, u: &model::CanonicalUrl) -> Result<String> {
        Ok(match self.store.first_link_to(u.id())? {
            Some((_, l)) => format!(
                " ({} link: {})",
                super::page::type_name(&l),
                l.verdict_detail
            ),
            None => String::new(),
        })
    }
}

/// Which spider-trap limit kept `u` out, with the numbers.
fn explain_trap(u: &model::CanonicalUrl, r: FilterReason, limits: &LinkLimits) -> String {
    match r {
        FilterReason::PathDepth => format!(
            "a spider-trap limit: its path has {} segments, over crawl.max_path_depth = {} (set crawl.max_path_depth to raise it)",
            traps::path_depth(u),
            opt(limits.max_path_depth.map(u64::from))
        ),
        FilterReason::SegmentRepeats => {
            let (seg, n) = traps::most_repeated_segment(u).unwrap_or_default();
            format!(
                "a spider-trap limit: its path repeats the segment {seg:?} {n} times, over crawl.max_segment_repeats = {} (set crawl.max_segment_repeats to raise it)",
                opt(limits.max_segment_repeats.map(u64::from))
            )
        }
        FilterReason::QueryVariants => format!(
            "a spider-trap limit: crawl.max_query_variants = {} query strings of {}{} were queued before it (set crawl.max_query_variants to raise it)",
            opt(limits.max_query_variants.map(u64::from)),
            u.host_key(),
            u.url().path()
        ),
        _ => format!(
            "{} had crawl.max_host_urls = {} URLs queued before it (set crawl.max_host_urls to raise it)",
            u.host_key(),
            opt(limits.max_host_urls)
        ),
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or("none".into(), |n| n.to_string())
}

/// What became of a URL, in a word or two.
fn seen_word(state: SeenState) -> String {
    match state {
        SeenState::Queued => "queued".into(),
        SeenState::Fetched { status } => format!("fetched, {status}"),
        SeenState::Filtered(r) => format!("skipped: {}", r.name()),
        SeenState::Failed(r) => format!("failed: {}", r.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn explains_a_seed_and_an_unseen_url() {
        let mut t = TestShell::crawled(2);
        let seed = t.seed();
        assert!(t.ok(&format!("why {seed}")).contains("a seed"));
        let out = t.ok("why http://a.invalid/x");
        assert!(out.starts_with("http://a.invalid/x: "), "{out}");
        assert!(t.err("why not-a-url").contains("not-a-url"));
    }
}
