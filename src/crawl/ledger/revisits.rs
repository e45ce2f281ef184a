//! Revisits (`recrawl.*`, document 002): a fetched page gets a `visits`
//! row and a `due` row at the time its policy gives; when that time comes
//! the page goes back into its host's queue (same politeness, same order
//! as any queued URL) with its validators, and the revisit's answer is
//! recorded as unchanged (304, or the same status and body, text or
//! near-same text: nothing new is stored), changed (the new version
//! replaces the old, whose MD5 and times join the history), or missed (no
//! answer: the stored version stays). A new version is no newly found
//! page: the harvest figures, the stop rules, the learned order and the
//! in-links its old version gave do not take it again (see `page.rs`).

use super::{Ledger, PageWrite};
use crate::crawl::revisit::observe;
use crate::crawl::worker::{PageData, PageJob};
use crate::model::SeenState;
use crate::model::{self, UrlId};
use crate::schema::tables::{Docs, Due, Pages, Verdicts, Visits};
use crate::schema::{
    Compared, DueKey, DueReason, Filtered, FrontierEntry, NearRecord, PageDoc, PageRecord,
    PastVersion, Revalidate, VisitRecord,
};
use crate::store::{Batch, StoreError};

/// Due pages moved into the frontier per batch.
const QUEUE_CHUNK: usize = 512;

/// What a revisit's response was, against the stored version.
enum Answer {
    /// 304, or the same status and body or text: nothing new is stored.
    Unchanged(VisitRecord),
    /// A new version: the page's visits row, and the stored version.
    Changed(VisitRecord, Option<Box<PageRecord>>),
}

/// What a response is to a page's revisit.
pub(super) enum Revisit {
    /// Not a revisit: a first fetch.
    First,
    /// No answer worth storing (a server error): the stored page stays.
    Missed(String),
    Unchanged(VisitRecord),
    Changed(Changed),
}

/// A new version: the page's visits, the old version's history entry,
/// and its near-duplicate place, which the new one keeps.
pub(super) struct Changed {
    pub visits: VisitRecord,
    pub past: PastVersion,
    pub near: Option<Option<NearRecord>>,
}

impl Ledger {
    /// What the response `data` is to `job`'s revisit; a new version's
    /// old one is forgotten in `w` (see [`Ledger::forget_version`]).
    pub(super) fn revisit_of(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        data: &PageData,
        backoff: bool,
    ) -> Result<Revisit, StoreError> {
        if job.entry.revisit.is_none() {
            return Ok(Revisit::First);
        }
        let f = &data.fetched;
        // A server error says nothing of the page: the stored one stays.
        if backoff || f.status >= 500 {
            return Ok(Revisit::Missed(match job.entry.attempts + 1 {
                1 => format!("status {}", f.status),
                n => format!("status {} after {n} attempts", f.status),
            }));
        }
        Ok(match self.answer(job, data)? {
            Answer::Unchanged(v) => Revisit::Unchanged(v),
            Answer::Changed(mut visits, old) => {
                visits.text_hash = data.parsed.as_ref().map(|p| p.text_hash);
                let past = old
                    .as_ref()
                    .map_or_else(PastVersion::default, |p| PastVersion {
                        md5: p.md5,
                        status: p.status,
                        fetched_ms: p.fetched_ms,
                        replaced_ms: self.clock.now_ms(),
                    });
                let near = match old {
                    Some(old) => self.forget_version(w, job, data.md5, &old)?,
                    None => None,
                };
                Revisit::Changed(Changed { visits, past, near })
            }
        })
    }

    /// A response was recorded: the page's visit, when revisits are on or
    /// it was one (sitemaps too: a revisit reads their lastmods again).
    pub(super) fn visited(
        &mut self,
        b: &mut Batch<'_>,
        job: &PageJob,
        changed: Option<Changed>,
        validators: &[(String, String)],
        text_hash: Option<u64>,
    ) {
        match changed {
            Some(c) => self.changed_visit(b, job, c.visits, c.past, validators),
            None if self.settings.recrawl.is_on() => {
                self.first_visit(b, job, validators, text_hash)
            }
            None => {}
        }
    }

    /// When the first `due` row is due (None: no revisit waits); the scan
    /// for due rows starts there from now on.
    pub(super) fn load_due(&mut self) -> Result<(), StoreError> {
        let first = self.store.rows::<Due>(&[]).next().transpose()?;
        self.due.start_at(first.map(|(k, _)| k));
        Ok(())
    }

    /// When the crawl must wake for a revisit, if revisits are on.
    pub fn next_due_ms(&self) -> Option<u64> {
        self.due.next_ms().filter(|_| self.settings.recrawl.is_on())
    }

    /// Writes `v` for page `id`, with a `due` row `interval` after `from`
    /// when revisits are on (its old one removed).
    pub(super) fn schedule_visit(
        &mut self,
        b: &mut Batch<'_>,
        id: UrlId,
        mut v: VisitRecord,
        from_ms: u64,
        reason: DueReason,
    ) {
        v.queued = false;
        if v.due_ms != 0 {
            b.delete_row::<Due>(&DueKey {
                at_ms: v.due_ms,
                url: id,
            });
            self.counters.due = self.counters.due.saturating_sub(1);
            v.due_ms = 0;
        }
        let policy = self.settings.recrawl;
        if policy.is_on() {
            let at = match reason {
                DueReason::Interval => {
                    from_ms.saturating_add(crate::crawl::revisit::interval_ms(&policy, &v))
                }
                DueReason::Lastmod => from_ms,
            };
            let key = DueKey { at_ms: at, url: id };
            b.put_row::<Due>(&key, &reason);
            self.counters.due += 1;
            v.due_ms = at;
            self.due.add(key);
        }
        b.put_row::<Visits>(&id, &v);
    }

    /// A page's first response was recorded: its first visit.
    fn first_visit(
        &mut self,
        b: &mut Batch<'_>,
        job: &PageJob,
        headers: &[(String, String)],
        text_hash: Option<u64>,
    ) {
        let now = self.clock.now_ms();
        let mut v = VisitRecord {
            url: job.url.as_str().to_string(),
            version_ms: now,
            text_hash,
            ..VisitRecord::default()
        };
        take_validators(&mut v, headers);
        observe(&mut v, now, false);
        self.schedule_visit(b, job.url.id(), v, now, DueReason::Interval);
    }

    /// What a revisit's response is against the stored version: the same
    /// when answered 304, or with the stored status (and redirect target)
    /// and either the same body, the same title and text, or a text whose
    /// simhash is within `dedup.distance` of the stored one's.
    fn answer(&mut self, job: &PageJob, data: &PageData) -> Result<Answer, StoreError> {
        let id = job.url.id();
        let mut v = self
            .store
            .row::<Visits>(&id)?
            .unwrap_or_else(|| VisitRecord {
                url: job.url.as_str().to_string(),
                ..VisitRecord::default()
            });
        // (No page row, in a db repaired by hand: a new version.)
        let Some(old) = self.store.row::<Pages>(&id)? else {
            v.compared = Compared::Status;
            return Ok(Answer::Changed(v, None));
        };
        let status = data.fetched.status;
        if status == 304 {
            v.compared = Compared::NotModified;
            return Ok(Answer::Unchanged(v));
        }
        // A redirect is the same only to the same place.
        let target = data
            .fetched
            .location
            .as_deref()
            .filter(|_| (300..400).contains(&status))
            .and_then(|l| model::resolve(job.url.url(), l).ok())
            .map(|t| t.as_str().to_string());
        if old.status != status || old.redirect_to != target {
            v.compared = Compared::Status;
            return Ok(Answer::Changed(v, Some(Box::new(old))));
        }
        let text = data.parsed.as_ref().map(|p| (p.text_hash, p.simhash));
        if old.md5 == data.md5 {
            // A version stored before text hashes were kept gets one.
            v.text_hash = v.text_hash.or(text.map(|t| t.0));
            v.compared = Compared::Md5;
            return Ok(Answer::Unchanged(v));
        }
        let Some((hash, simhash)) = text.filter(|_| v.text_hash.is_some()) else {
            v.compared = Compared::Md5;
            return Ok(Answer::Changed(v, Some(Box::new(old))));
        };
        if v.text_hash == Some(hash) {
            v.compared = Compared::Text;
            return Ok(Answer::Unchanged(v));
        }
        if self.near_stored(id, simhash)? {
            v.compared = Compared::Simhash;
            return Ok(Answer::Unchanged(v));
        }
        v.compared = Compared::Text;
        Ok(Answer::Changed(v, Some(Box::new(old))))
    }

    /// Whether `simhash`, a new version's, is within `dedup.distance` of
    /// the stored version's (both computed: `dedup.near`).
    fn near_stored(&self, id: UrlId, simhash: Option<u64>) -> Result<bool, StoreError> {
        let Some(new) = simhash else {
            return Ok(false);
        };
        let old = self.store.row::<Docs>(&id)?.and_then(|d| d.simhash);
        let distance = self.settings.dedup.distance;
        Ok(old.is_some_and(|old| crate::dedup::distance(old, new) <= distance))
    }

    /// A revisit found the page as stored: its visit is counted, nothing
    /// else is written but the host's politeness.
    pub(super) fn commit_unchanged(
        &mut self,
        mut w: PageWrite<'_>,
        job: &PageJob,
        mut v: VisitRecord,
        headers: &[(String, String)],
        next_at: u64,
    ) -> Result<(), StoreError> {
        self.dequeue(&mut w.b, job.key, &job.entry)?;
        let now = self.clock.now_ms();
        take_validators(&mut v, headers);
        observe(&mut v, now, false);
        self.counters.revisits += 1;
        self.host_answered(job.key.host, true, next_at)?;
        self.schedule_visit(&mut w.b, job.url.id(), v, now, DueReason::Interval);
        self.finish(w.b, &w.touched)
    }

    /// A changed page's new version was recorded: the old one joins its
    /// history.
    fn changed_visit(
        &mut self,
        b: &mut Batch<'_>,
        job: &PageJob,
        mut v: VisitRecord,
        past: PastVersion,
        headers: &[(String, String)],
    ) {
        let now = self.clock.now_ms();
        if past != PastVersion::default() {
            v.history.push(past);
            let over = v.history.len().saturating_sub(VisitRecord::HISTORY);
            v.history.drain(..over);
        }
        v.version_ms = now;
        // The old version's validators go with it.
        (v.etag, v.last_modified) = (None, None);
        take_validators(&mut v, headers);
        observe(&mut v, now, true);
        self.counters.revisits += 1;
        self.counters.revisits_changed += 1;
        self.schedule_visit(b, job.url.id(), v, now, DueReason::Interval);
    }

    /// A revisit got no answer to store (an error, a back-off that ran out,
    /// robots.txt now refusing it): the stored version stays, and the next
    /// revisit is timed from now.
    pub(super) fn revisit_missed(
        &mut self,
        b: &mut Batch<'_>,
        id: UrlId,
        why: &str,
    ) -> Result<(), StoreError> {
        let Some(mut v) = self.store.row::<Visits>(&id)? else {
            return Ok(());
        };
        v.failures += 1;
        v.last_error = why.to_string();
        if why == crate::model::FailReason::CrashLoop.name() {
            // It took the process down: never asked for again.
            v.last_error += ": not revisited again";
            v.queued = false;
            b.put_row::<Visits>(&id, &v);
            return Ok(());
        }
        let now = self.clock.now_ms();
        self.schedule_visit(b, id, v, now, DueReason::Interval);
        Ok(())
    }

    /// Moves the pages due by now into their hosts' queues, a chunk at a
    /// time; returns whether more may be due.
    pub fn queue_due(&mut self) -> Result<bool, StoreError> {
        let now = self.clock.now_ms();
        if self.next_due_ms().is_none_or(|at| at > now) {
            return Ok(false);
        }
        let store = self.store.clone();
        let (mut due, mut next) = (Vec::new(), None);
        // From the lowest key a row may have: not over the rows (and the
        // deletions) of the revisits queued before.
        for row in store.rows_range::<Due>(self.due.floor(), None) {
            let (key, _) = row?;
            if key.at_ms > now || due.len() >= QUEUE_CHUNK {
                next = Some(key);
                break;
            }
            due.push(key);
        }
        let mut w = PageWrite::new(&store);
        for key in &due {
            w.b.delete_row::<Due>(key);
            self.counters.due = self.counters.due.saturating_sub(1);
            self.queue_revisit(&mut w, key)?;
        }
        self.finish(w.b, &w.touched)?;
        self.due.start_at(next);
        Ok(due.len() == QUEUE_CHUNK)
    }

    /// Puts fetched page `id` in its host's queue as a revisit, unless it
    /// is no longer a fetched page the crawl may enter.
    fn queue_revisit(&mut self, w: &mut PageWrite<'_>, key: &DueKey) -> Result<(), StoreError> {
        let id = key.url;
        let Some(mut v) = self.store.row::<Visits>(&id)? else {
            return Ok(());
        };
        // A row its visits row does not name is a stray: dropped.
        if v.queued || v.due_ms != key.at_ms {
            return Ok(());
        }
        v.due_ms = 0;
        let seen = self.store.seen(id)?;
        let url = model::normalize(&v.url).ok();
        let fetched = seen
            .as_ref()
            .is_some_and(|s| matches!(s.state, SeenState::Fetched { .. }));
        let (Some(seen), Some(url), true) = (seen, url, fetched) else {
            w.b.put_row::<Visits>(&id, &v);
            return Ok(());
        };
        if !self.seeds.is_seed(id) && !self.scope.allows(self.settings.scope, &url) {
            v.last_error = "out of the crawl's scope now: not revisited".into();
            w.b.put_row::<Visits>(&id, &v);
            return Ok(());
        }
        let host = url.host_id();
        let origin = url.host_key();
        let scores = seen.scores.clone().unwrap_or_default();
        let priority = self
            .settings
            .order
            .priority_as(self.order_of(host), seen.depth, &scores);
        let entry = FrontierEntry {
            url: v.url.clone(),
            depth: seen.depth,
            parent: seen.parent,
            redirects: seen.redirects,
            attempts: 0,
            enqueued_ms: self.clock.now_ms(),
            scores: Some(scores),
            link: None,
            revisit: Some(Revalidate {
                etag: v.etag.clone(),
                last_modified: v.last_modified.clone(),
            }),
        };
        self.counters.queued += 1;
        self.counters.revisits_queued += 1;
        let h = self.load(host, &origin)?;
        h.record.queued += 1;
        h.queue.enqueue(&mut w.b, priority, id, entry);
        w.touch(host);
        v.queued = true;
        w.b.put_row::<Visits>(&id, &v);
        Ok(())
    }

    /// A sitemap gave fetched page `id` a `<lastmod>` after its last
    /// visit: it is due now, but not sooner than `recrawl.min` after that
    /// visit (a sitemap generated on request stamps every entry "now").
    /// A `<lastmod>` after the sitemap was fetched (some say 9999) is no
    /// date the page changed at: ignored.
    pub(super) fn due_by_lastmod(
        &mut self,
        b: &mut Batch<'_>,
        id: UrlId,
        lastmod_ms: u64,
    ) -> Result<(), StoreError> {
        let now = self.clock.now_ms();
        if !self.settings.recrawl.is_on() || lastmod_ms > now {
            return Ok(());
        }
        let Some(v) = self.store.row::<Visits>(&id)? else {
            return Ok(());
        };
        let min = self.settings.recrawl.min.as_millis() as u64;
        let at = now.max(v.last_ms.saturating_add(min));
        if lastmod_ms > v.last_ms && !v.queued && v.due_ms > at {
            self.schedule_visit(b, id, v, at, DueReason::Lastmod);
        }
        Ok(())
    }
}

/// The validators a revisit sends, from a response's kept headers (a 304
/// may carry new ones; one without keeps the old).
fn take_validators(v: &mut VisitRecord, headers: &[(String, String)]) {
    for (k, value) in headers {
        match k.as_str() {
            "etag" => v.etag = Some(value.clone()),
            "last-modified" => v.last_modified = Some(value.clone()),
            _ => {}
        }
    }
}

impl Ledger {
    /// A revisit that got no answer to store: the page stays as it was,
    /// the host counts the error and waits as after any fetch.
    pub(super) fn commit_missed(
        &mut self,
        mut w: PageWrite<'_>,
        job: &PageJob,
        why: &str,
        next_at: u64,
    ) -> Result<(), StoreError> {
        self.dequeue(&mut w.b, job.key, &job.entry)?;
        self.host_answered(job.key.host, false, next_at)?;
        self.revisit_missed(&mut w.b, job.url.id(), why)?;
        self.finish(w.b, &w.touched)
    }

    /// A revisit found a new version (body `md5`) of `old`: what `old` counted
    /// and derived goes, so that the new one is recorded as a first fetch
    /// would be. Returns the old version's near-duplicate place, if it had
    /// one, which the new one keeps (a page is placed among
    /// near-duplicates once).
    fn forget_version(
        &mut self,
        w: &mut PageWrite<'_>,
        job: &PageJob,
        md5: [u8; 16],
        old: &PageRecord,
    ) -> Result<Option<Option<NearRecord>>, StoreError> {
        let id = job.url.id();
        let c = &mut self.counters;
        c.fetched = c.fetched.saturating_sub(1);
        c.bytes = c.bytes.saturating_sub(old.wire_len);
        if let Some(n) = c.by_status.get_mut(&old.status) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.by_status.remove(&old.status);
            }
        }
        let h = self.loaded(job.key.host)?;
        h.record.fetched = h.record.fetched.saturating_sub(1);
        w.b.delete_page_index(old.status, job.url.host(), id);
        if old.md5 != md5 && self.store.content_owner(&old.md5)? == Some(id) {
            w.b.delete_content_owner(&old.md5);
        }
        let mut near = None;
        // The doc with its verdict: a page the filters did not keep is
        // counted under its verdict, which the new version counts again.
        if let Some(PageDoc { doc, verdict }) = self.store.doc(id)? {
            if doc.duplicate_of.is_some() {
                self.counters.duplicates = self.counters.duplicates.saturating_sub(1);
            }
            if doc.links_recorded() {
                self.counters.links = self.counters.links.saturating_sub(doc.outlinks.into());
            }
            if let Some(counter) = Filtered::page(verdict.verdict) {
                self.counters.filtered.add(counter, -1);
            }
            near = doc.near_place();
            if let (Some(hash), Some(_)) = (doc.simhash, near) {
                self.unplace(&mut w.b, id, hash)?;
            }
            w.b.delete_row::<Docs>(&id);
            w.b.delete_row::<Verdicts>(&id);
        }
        let store = self.store.clone();
        let targets = store
            .link_targets(&[id])?
            .pop()
            .map(|(_, t)| t)
            .unwrap_or_default();
        self.inlinks.forget(&store, &mut w.b, id, &targets)?;
        w.unboosted.extend(targets);
        w.b.delete_links(id);
        Ok(near)
    }
}
