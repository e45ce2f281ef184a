//! Turning one fetch outcome into one atomic batch: the page, its doc, its
//! links, the seen marks and frontier entries of what it discovered, the
//! host's state and the counters, all written together. In steps: a
//! failure, a back-off retry, or the response (redirect, page record) and,
//! for HTML, the doc and its links.

use super::archive;
use super::discover::ScoreFrom;
use super::near::Placed;
use super::revisits::{Changed, Revisit};
use super::{Discovery, Ledger, PageWrite, VIA_REDIRECT};
use crate::crawl::page_text::TextPlace;
use crate::crawl::politeness::{hold, is_backoff};
use crate::crawl::worker::{PageData, PageJob, ParsedHtml};
use crate::fetch::{FetchError, retry_after_ms};
use crate::filter::denoise::Denoised;
use crate::filter::judge::{LinkJudge, LinkText, judge_link};
use crate::filter::links;
use crate::frontier::Focus;
use crate::model::{self, HostId};
use crate::model::{FilterReason, SeenState};
use crate::parse::ParsedPage;
use crate::schema::tables::{Capped, Details, Docs, PageFacts, Pages, Verdicts, Warc};
use crate::schema::{
    CappedRecord, DenoiseRecord, DetailRecord, DocRecord, Filtered, FrontierEntry, LinkView,
    NearRecord, PageFactsRecord, PageLinksBuilder, PageRecord, VerdictRecord,
};
use crate::store::StoreError;

/// What recording an HTML page decided.
struct Judged {
    /// The page whose body it repeats.
    duplicate_of: Option<model::UrlId>,
    verdict: VerdictRecord,
    near: Option<NearRecord>,
}

impl Ledger {
    /// Records a page fetch; the host's next fetch time moves to when it
    /// may be asked again.
    pub fn commit_page(
        &mut self,
        job: PageJob,
        result: Result<PageData, FetchError>,
    ) -> Result<(), StoreError> {
        let store = self.store.clone();
        let host = job.key.host;
        self.load(host, &job.url.host_key())?;
        let delay = self.delay_ms(host);
        let mut w = PageWrite::new(&store);
        w.pending.insert(job.url.id());
        w.touch(host);
        for h in self.budget_siblings(host) {
            w.touch(h);
        }
        // The fetch is over, whatever came of it: not in flight any more.
        self.unmark(&mut w.b, job.url.id());
        let revisit = job.entry.revisit.is_some();
        let data = match result {
            // Not the page's failure (it waited too long for memory other
            // fetches held): asked for again, as it was.
            Err(e) if e.later => {
                let at = self.clock.now_ms() + delay;
                let h = self.loaded(host)?;
                h.queue.requeue(&mut w.b, job.key, job.entry);
                hold(&mut h.record.next_fetch_ms, at);
                return self.finish(w.b, &w.touched);
            }
            Err(e) if revisit => {
                return self.commit_missed(w, &job, &e.detail, self.clock.now_ms() + delay);
            }
            Err(e) => return self.commit_failure(w, &job, e, self.clock.now_ms() + delay),
            Ok(d) => d,
        };
        let mut data = data;
        let backoff = is_backoff(data.fetched.status);
        let next_at = if backoff {
            let at = self.backoff_until(&data, delay);
            let h = self.loaded(host)?;
            h.hold_until_ms = h.hold_until_ms.max(at);
            at
        } else {
            self.clock.now_ms() + delay
        };
        if backoff && self.politeness().retries_left(job.entry.attempts) {
            return self.commit_retry(w, job, next_at);
        }
        let changed = match self.revisit_of(&mut w, &job, &data, backoff)? {
            Revisit::First => None,
            Revisit::Missed(why) => return self.commit_missed(w, &job, &why, next_at),
            Revisit::Unchanged(v) => {
                self.archive_unchanged(&mut w, &job, &mut data)?;
                let headers = std::mem::take(&mut data.fetched.headers);
                return self.commit_unchanged(w, &job, v, &headers, next_at);
            }
            Revisit::Changed(c) => Some(c),
        };
        self.commit_response(w, job, data, changed, next_at)
    }

    /// A response to store (a first fetch, or a revisit's new version):
    /// the page record, a sitemap's or an HTML page's rows, its WARC
    /// records, and its visit.
    fn commit_response(
        &mut self,
        mut w: PageWrite<'_>,
        job: PageJob,
        mut data: PageData,
        changed: Option<Changed>,
        next_at: u64,
    ) -> Result<(), StoreError> {
        let revisit = job.entry.revisit.is_some();
        self.record_response(&mut w, &job, &mut data, next_at)?;
        // A revisit is counted apart (`counters.revisits`).
        if !revisit {
            self.fetched_new(job.url.id());
        }
        let text_hash = data.parsed.as_ref().map(|p| p.text_hash);
        let PageData {
            parsed,
            md5,
            fetched,
            text,
            sitemap,
            exchange,
            ..
        } = data;
        let archived = exchange.filter(|_| self.archiving());
        let mut metadata = match &archived {
            Some(_) => archive::fetch_fields(&job, parsed.as_ref()),
            None => String::new(),
        };
        // What the fetch task made of the body decides: a page dispatched
        // before its URL became a sitemap was parsed as a page.
        if sitemap.is_some() || parsed.is_none() && self.is_sitemap(job.url.id()) {
            let response = (fetched.status, fetched.location.as_deref());
            self.record_sitemap(&mut w, &job, response, sitemap)?;
        }
        let mut duplicate_of = None;
        if let Some(html) = parsed {
            let kept_near = changed.as_ref().and_then(|c| c.near);
            let judged = self.record_html(&mut w, &job, html, (md5, kept_near), text)?;
            if archived.is_some() {
                metadata += &archive::judged_fields(&judged.verdict, judged.near.as_ref());
            }
            duplicate_of = judged.duplicate_of;
        }
        match archived {
            Some(ex) => {
                let resp = archive::Response {
                    status: fetched.status,
                    content_type: &fetched.content_type,
                    metadata,
                };
                self.archive_fetch(&mut w, &job, &ex, resp, duplicate_of)?;
            }
            // A new version not archived: an older record is not it.
            None if revisit => w.b.delete_row::<Warc>(&job.url.id()),
            None => {}
        }
        self.visited(&mut w.b, &job, changed, &fetched.headers, text_hash);
        self.finish(w.b, &w.touched)?;
        drop(fetched); // its budget share goes once the page is written
        if self.order.boosts_full() {
            self.apply_all_boosts()?;
        }
        Ok(())
    }

    /// No response to store: the URL fails with the error's reason, and
    /// the error text is kept for `why`.
    fn commit_failure(
        &mut self,
        mut w: PageWrite<'_>,
        job: &PageJob,
        e: FetchError,
        next_at: u64,
    ) -> Result<(), StoreError> {
        let id = job.url.id();
        self.dequeue(&mut w.b, job.key, &job.entry)?;
        self.mark(&mut w.b, id, &job.entry, SeenState::Failed(e.reason));
        self.counters.failed.add(e.reason, 1);
        let detail = DetailRecord {
            reason: e.reason.name().to_string(),
            detail: e.detail,
            at_ms: self.clock.now_ms(),
        };
        w.b.put_row::<Details>(&id, &detail);
        self.host_answered(job.key.host, false, next_at)?;
        self.finish(w.b, &w.touched)
    }

    /// A fetch of `host` ended, with a response (`answered`) or an error:
    /// its error streak, and no next fetch before `next_at`.
    pub(super) fn host_answered(
        &mut self,
        host: HostId,
        answered: bool,
        next_at: u64,
    ) -> Result<(), StoreError> {
        let h = &mut self.loaded(host)?.record;
        if answered {
            h.error_streak = 0;
        } else {
            h.errors += 1;
            h.error_streak += 1;
        }
        hold(&mut h.next_fetch_ms, next_at);
        Ok(())
    }

    /// When a host that answered 429 or 503 may be asked again.
    fn backoff_until(&self, data: &PageData, delay: u64) -> u64 {
        let asked = data.fetched.retry_after.as_deref().and_then(retry_after_ms);
        self.politeness()
            .backoff_until(self.clock.now_ms(), asked, delay)
    }

    /// 429 or 503 with attempts left: the URL stays queued and the host
    /// backs off until `next_at`.
    fn commit_retry(
        &mut self,
        mut w: PageWrite<'_>,
        job: PageJob,
        next_at: u64,
    ) -> Result<(), StoreError> {
        let entry = FrontierEntry {
            attempts: job.entry.attempts + 1,
            ..job.entry
        };
        let h = self.loaded(job.key.host)?;
        h.queue.requeue(&mut w.b, job.key, entry);
        hold(&mut h.record.next_fetch_ms, next_at);
        self.finish(w.b, &w.touched)
    }

    /// The response: the URL leaves the frontier as fetched, a redirect's
    /// target is discovered, and the page record is written.
    fn record_response(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        data: &mut PageData,
        next_at: u64,
    ) -> Result<(), StoreError> {
        let id = job.url.id();
        let body_zstd = std::mem::take(&mut data.body_zstd);
        let f = &data.fetched;
        self.dequeue(&mut w.b, job.key, &job.entry)?;
        let state = SeenState::Fetched { status: f.status };
        self.mark(&mut w.b, id, &job.entry, state);
        self.counters.fetched += 1;
        self.counters.bytes += f.wire_len;
        *self.counters.by_status.entry(f.status).or_insert(0) += 1;
        self.host_answered(job.key.host, true, next_at)?;
        self.loaded(job.key.host)?.record.fetched += 1;
        let redirect_to = match &f.location {
            Some(loc) if (300..400).contains(&f.status) => self.follow_redirect(w, job, loc)?,
            _ => None,
        };
        w.b.put_page_index(f.status, job.url.host(), id);
        let record = PageRecord {
            url: job.url.as_str().to_string(),
            status: f.status,
            http_version: f.http_version.to_string(),
            content_type: f.content_type.clone(),
            headers: f.headers.clone(),
            fetched_ms: self.clock.now_ms(),
            elapsed_ms: f.elapsed.as_millis().min(u32::MAX as u128) as u32,
            depth: job.entry.depth,
            md5: data.md5,
            wire_len: f.wire_len,
            body_len: data.body_len,
            truncated: f.truncated,
            body_zstd,
            redirect_to,
            text_len: data.text.frame_len(),
        };
        w.b.put_row::<PageFacts>(&id, &PageFactsRecord::of(&record));
        w.b.put_row::<Pages>(&id, &record);
        self.log_search(&mut w.b, id);
        Ok(())
    }

    /// A redirect's target is discovered one hop further along the chain;
    /// a seed's target becomes a seed (its host joins the scope). Returns
    /// the target, or None when `loc` is not a URL the crawl fetches.
    fn follow_redirect(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        loc: &str,
    ) -> Result<Option<String>, StoreError> {
        let id = job.url.id();
        let target = match model::resolve(job.url.url(), loc) {
            Ok(t) => t,
            Err(model::UrlError::TooLong(_)) => {
                self.counters
                    .filtered
                    .add(Filtered::Url(FilterReason::UrlTooLong), 1);
                return Ok(None);
            }
            Err(_) => {
                self.counters.invalid_links += 1;
                return Ok(None);
            }
        };
        let (depth, hops) = (job.entry.depth, job.entry.redirects.saturating_add(1));
        // The target takes the redirected URL's place in the order.
        let scores = crate::frontier::order::scores_of(&job.key, &job.entry);
        let d = if self.seeds.is_seed(id) && hops <= self.settings.max_redirects {
            let mut list = self.store.seeds()?;
            let from = job.url.as_str();
            self.add_derived_seed(&mut w.b, &mut list, &target, from, VIA_REDIRECT)?;
            Discovery::seed(depth, Some(id), hops)
        } else {
            let from = ScoreFrom::Redirect {
                scores: &scores,
                link: job.entry.link.as_ref(),
            };
            Discovery::found(depth, id, hops, None)
                .scored(from)
                .found_on(job.key.host)
        };
        self.discover(w, &target, d)?;
        Ok(Some(target.as_str().to_string()))
    }

    /// An HTML page: its doc and verdict, and (unless it repeats an
    /// earlier page's body) its links, each judged and the followed ones
    /// discovered.
    fn record_html(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        html: ParsedHtml,
        (md5, kept_near): ([u8; 16], Option<Option<NearRecord>>),
        text_place: TextPlace,
    ) -> Result<Judged, StoreError> {
        let id = job.url.id();
        let page = html.page;
        let denoised = html.denoised;
        // The filters read the denoised title and text unless told not to.
        let clean = denoised
            .as_ref()
            .zip(html.clean.as_deref())
            .filter(|_| self.text.filters_read_clean);
        let (title, text) = match clean {
            Some((d, text)) => (d.title.as_str(), text),
            None => (page.title.as_str(), page.text.as_str()),
        };
        let duplicate_of = match self.store.content_owner(&md5)? {
            Some(first) if first != id => Some(first),
            Some(_) => None,
            None => {
                w.b.put_content_owner(&md5, id);
                None
            }
        };
        let filters = self.page_filters(job.key.host);
        let verdict = filters.page(job.url.host(), title, text);
        let kept = verdict.verdict == model::Verdict::Keep;
        // A revisit's new version is no newly found page: the harvest
        // figures, the stop rules and the learned order do not take it.
        if job.entry.revisit.is_none() {
            self.judged(kept, text);
            self.learn(&mut w.b, job, kept);
        }
        // A revisit's new version keeps the page's near-duplicate place,
        // held under its new hash (as `DocRecord::near_place` reads it).
        let placed = match (html.simhash, duplicate_of, kept_near) {
            (hash, dup, Some(near)) => {
                if let Some(hash) = hash.filter(|_| dup.is_none() || near.is_some()) {
                    self.keep_place(&mut w.b, id, hash, near)?;
                }
                Some(Placed {
                    expand: near.as_ref().is_none_or(|n| n.expanded),
                    near,
                })
            }
            (Some(hash), None, None) => Some(self.place_near(&mut w.b, &job.url, hash)?),
            _ => None,
        };
        if duplicate_of.is_some() {
            self.counters.duplicates += 1;
        } else if placed.as_ref().is_none_or(|p| p.expand) {
            self.record_links(w, job, &page, (title, text), &verdict, kept)?;
        }
        if let Some(counter) = Filtered::page(verdict.verdict) {
            self.counters.filtered.add(counter, 1);
        }
        let doc = DocRecord {
            title: page.title,
            // Where the fetch task put it (`TextPlace`).
            text: match text_place {
                TextPlace::Doc => page.text,
                TextPlace::Frame { .. } | TextPlace::None => String::new(),
            },
            charset: html.charset.to_string(),
            charset_source: html.charset_source.to_string(),
            canonical: page.canonical,
            noindex: page.noindex,
            nofollow: page.nofollow,
            outlinks: page.links.len() as u32,
            duplicate_of: duplicate_of.map(|d| d.0),
            denoise: denoised.as_ref().map(denoise_record),
            simhash: html.simhash,
            near: placed.and_then(|p| p.near),
        };
        let verdict = VerdictRecord {
            topic_score: verdict.topic_score,
            relevance: verdict.relevance,
            verdict: verdict.verdict,
            verdict_detail: verdict.detail,
        };
        w.b.put_row::<Docs>(&id, &doc);
        w.b.put_row::<Verdicts>(&id, &verdict);
        Ok(Judged {
            duplicate_of,
            verdict,
            near: doc.near,
        })
    }

    /// The page's links row, its in-links (into the ledger's window), and
    /// the discovery of each link the crawl follows (or a link filter
    /// drops).
    fn record_links(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        page: &crate::parse::ParsedPage,
        text: (&str, &str),
        verdict: &crate::filter::PageVerdict,
        kept: bool,
    ) -> Result<(), StoreError> {
        let id = job.url.id();
        let mut row = PageLinksBuilder::default();
        // What the page passes on to the URLs it queues (its links are
        // tunnelled when only soft focus follows them).
        let from_page = self.page_score(
            &job.entry,
            &job.key,
            verdict.relevance,
            text,
            kept,
            !verdict.follow,
        );
        let soft_focus = self.settings.order.focus == Focus::Soft;
        let seed = self.settings.follow_seed_links && self.seeds.is_seed(id);
        let host_id = job.key.host;
        for link in &page.links {
            let kind = links::classify(job.url.url(), link.url.url());
            let judge = LinkJudge {
                filters: self.page_filters(host_id),
                follow_nofollow: self.settings.follow_nofollow,
                soft_focus,
                seed,
            };
            let text = LinkText {
                nofollow: link.nofollow,
                before: &link.before,
                anchor: &link.anchor,
                after: &link.after,
            };
            let ids = (id, link.url.id());
            let host = Some(link.url.host());
            let decision = judge_link(judge, kind, ids, host, page.nofollow, verdict, text);
            // A target a link filter dropped is recorded as filtered.
            let forced = decision.verdict.filtered_as();
            let follow = decision.follows() || forced.is_some();
            // Encoded from borrowed fields: no copy of the link's text.
            let rec = LinkView {
                anchor: &link.anchor,
                before: &link.before,
                after: &link.after,
                nofollow: link.nofollow,
                link_type: Some(kind),
                verdict: decision.verdict,
                verdict_detail: &decision.detail,
                dst_host: link.url.host(),
                // A later refilter queues an unfollowed target from here; a
                // followed one gets a `urls` row from `discover` when new.
                dst_url: link.url.as_str(),
            };
            // A page's second link to a target is the same in-link: 4 in 10
            // of a documentation page's links repeat one.
            if row.push_own(link.url.id(), &rec) {
                self.inlinks.add(&mut w.b, link.url.id(), id);
            }
            if follow {
                let depth = job.entry.depth.saturating_add(1);
                let d = Discovery::found(depth, id, 0, forced)
                    .found_on(host_id)
                    .scored(ScoreFrom::Link {
                        page: from_page,
                        kind,
                        before: &link.before,
                        anchor: &link.anchor,
                        after: &link.after,
                    });
                self.discover(w, &link.url, d)?;
            }
        }
        if !row.is_empty() {
            w.b.put_links(id, &row);
        }
        self.counters.links += page.links.len() as u64;
        self.harvest.links(page.links.len() as u64, 0);
        self.counters.invalid_links += u64::from(page.skipped_links);
        self.record_capped(w, job, page);
        if page.too_long_links > 0 {
            let n = i64::from(page.too_long_links);
            self.counters
                .filtered
                .add(Filtered::Url(FilterReason::UrlTooLong), n);
        }
        Ok(())
    }
}

impl Ledger {
    /// A page whose links past a cap were dropped: its `capped` row (by
    /// which `why` finds them again), the counts and a notice. A revisit
    /// within the caps forgets the old version's row.
    fn record_capped(&mut self, w: &mut PageWrite<'_>, job: &PageJob, page: &ParsedPage) {
        let id = job.url.id();
        if page.capped_links == 0 {
            if job.entry.revisit.is_some() {
                w.b.delete_row::<Capped>(&id);
            }
            return;
        }
        let cut = u64::from(page.capped_links);
        self.harvest.links(0, cut);
        self.counters.links_cut += cut;
        let rec = CappedRecord {
            kept: u32::try_from(page.links.len()).unwrap_or(u32::MAX),
            cut: page.capped_links,
            max_outlinks: u32::try_from(self.settings.max_outlinks).unwrap_or(u32::MAX),
            link_bytes: crate::parse::LINK_BYTES as u32,
            fetched_ms: self.clock.now_ms(),
        };
        w.b.put_row::<Capped>(&id, &rec);
        self.notice(format!(
            "{}: {} more links than crawl.max_outlinks ({}) or {} MiB of links dropped (why URL names the page of a URL among them)",
            job.url.as_str(),
            page.capped_links,
            self.settings.max_outlinks,
            crate::parse::LINK_BYTES >> 20
        ));
    }
}

/// A page's denoising as its `docs` row keeps it.
pub(crate) fn denoise_record(d: &Denoised) -> DenoiseRecord {
    DenoiseRecord {
        title: d.title.clone(),
        author: d.author.clone(),
        date: d.date.clone(),
        noise: d
            .noise
            .iter()
            .map(|&(line, rule)| (line, rule as u8))
            .collect(),
    }
}
