//! Revisits (`recrawl.*`, document 002): a fetched page gets a `visits`
//! row and a `due` row at the time its policy gives; when that time comes
//! the page goes back into its host's queue (same politeness, same order
//! as any queued URL) with its validators, and the revisit's answer is
//! recorded as unchanged (304, or the same status and MD5: no new body),
//! changed (the new version replaces the old, whose MD5 and times join the
//! history), or missed (no answer: the stored version stays).

use super::{Ledger, PageWrite};
use crate::crawl::revisit::observe;
use crate::crawl::worker::PageJob;
use crate::model::{self, UrlId};
use crate::schema::tables::{Docs, Due, Pages, RecrawlRow, Verdicts, Visits};
use crate::schema::{
    DueKey, DueReason, FrontierEntry, InLinkKey, NearRecord, PageRecord, PastVersion, RecrawlState,
    Revalidate, SeenState, VisitRecord,
};
use crate::store::{Batch, StoreError};

/// Due pages moved into the frontier per batch.
const QUEUE_CHUNK: usize = 512;

/// What a revisit's response was, against the stored version.
enum Answer {
    /// 304, or the same status and body: nothing new is stored.
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
        data: &crate::crawl::worker::PageData,
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
        Ok(
            match self.answer(job, f.status, data.md5, f.location.as_deref())? {
                Answer::Unchanged(v) => Revisit::Unchanged(v),
                Answer::Changed(visits, old) => {
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
            },
        )
    }

    /// A response was recorded: the page's visit, when revisits are on or
    /// it was one (sitemaps too: a revisit reads their lastmods again).
    pub(super) fn visited(
        &mut self,
        b: &mut Batch<'_>,
        job: &PageJob,
        changed: Option<Changed>,
        validators: &[(String, String)],
    ) {
        match changed {
            Some(c) => self.changed_visit(b, job, c.visits, c.past, validators),
            None if self.settings.recrawl.is_on() => self.first_visit(b, job, validators),
            None => {}
        }
    }

    /// When the first `due` row is due (None: no revisit waits).
    pub(super) fn load_due(&mut self) -> Result<(), StoreError> {
        self.next_due_ms = match self.store.rows::<Due>(&[]).next() {
            Some(row) => Some(row?.0.at_ms),
            None => None,
        };
        Ok(())
    }

    /// When the crawl must wake for a revisit, if revisits are on.
    pub fn next_due_ms(&self) -> Option<u64> {
        self.next_due_ms.filter(|_| self.settings.recrawl.is_on())
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
                DueReason::Interval => from_ms.saturating_add(policy.interval_ms(&v)),
                DueReason::Lastmod => from_ms,
            };
            b.put_row::<Due>(&DueKey { at_ms: at, url: id }, &reason);
            self.counters.due += 1;
            v.due_ms = at;
            self.next_due_ms = Some(self.next_due_ms.map_or(at, |n| n.min(at)));
        }
        b.put_row::<Visits>(&id, &v);
    }

    /// A page's first response was recorded: its first visit.
    fn first_visit(&mut self, b: &mut Batch<'_>, job: &PageJob, headers: &[(String, String)]) {
        let now = self.clock.now_ms();
        let mut v = VisitRecord {
            url: job.url.as_str().to_string(),
            version_ms: now,
            ..VisitRecord::default()
        };
        take_validators(&mut v, headers);
        observe(&mut v, now, false);
        self.schedule_visit(b, job.url.id(), v, now, DueReason::Interval);
    }

    /// What a revisit's response is against the stored version.
    fn answer(
        &mut self,
        job: &PageJob,
        status: u16,
        md5: [u8; 16],
        location: Option<&str>,
    ) -> Result<Answer, StoreError> {
        let id = job.url.id();
        let v = self
            .store
            .row::<Visits>(&id)?
            .unwrap_or_else(|| VisitRecord {
                url: job.url.as_str().to_string(),
                ..VisitRecord::default()
            });
        let old = self.store.row::<Pages>(&id)?;
        // A redirect is the same only to the same place.
        let target = location
            .filter(|_| (300..400).contains(&status))
            .and_then(|l| model::resolve(job.url.url(), l).ok())
            .map(|t| t.as_str().to_string());
        let same = |p: &PageRecord| p.status == status && p.md5 == md5 && p.redirect_to == target;
        match old {
            Some(_) if status == 304 => Ok(Answer::Unchanged(v)),
            Some(p) if same(&p) => Ok(Answer::Unchanged(v)),
            // (No page row, in a db repaired by hand: a new version.)
            old => Ok(Answer::Changed(v, old.map(Box::new))),
        }
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
        if why == crate::schema::FailReason::CrashLoop.name() {
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
        let mut due = Vec::new();
        for row in store.rows::<Due>(&[]) {
            let (key, _) = row?;
            if key.at_ms > now || due.len() >= QUEUE_CHUNK {
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
        self.load_due()?;
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
        if !self.seed_ids.contains(&id) && !self.scope.allows(self.settings.scope, &url) {
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
        let h = self.host(host, &origin)?;
        h.record.queued += 1;
        h.queue.enqueue(&mut w.b, priority, id, entry);
        w.touch(host);
        v.queued = true;
        w.b.put_row::<Visits>(&id, &v);
        Ok(())
    }

    /// A sitemap gave fetched page `id` a `<lastmod>` after its last
    /// visit: it is due now.
    pub(super) fn due_by_lastmod(
        &mut self,
        b: &mut Batch<'_>,
        id: UrlId,
        lastmod_ms: u64,
    ) -> Result<(), StoreError> {
        if !self.settings.recrawl.is_on() {
            return Ok(());
        }
        let Some(v) = self.store.row::<Visits>(&id)? else {
            return Ok(());
        };
        let now = self.clock.now_ms();
        if lastmod_ms > v.last_ms && !v.queued && v.due_ms > now {
            self.schedule_visit(b, id, v, now, DueReason::Lastmod);
        }
        Ok(())
    }

    /// Times every fetched page under the revisit policy when it differs
    /// from the one the `due` rows were timed under: pages fetched before
    /// revisits were on get their first `visits` row.
    pub fn retime_revisits(&mut self) -> Result<(), StoreError> {
        let policy = self.settings.recrawl;
        if self.store.is_read_only() {
            return Ok(());
        }
        let fingerprint = policy.fingerprint();
        let stored = self.store.meta::<RecrawlRow>()?.unwrap_or_default();
        if stored.fingerprint == fingerprint {
            return Ok(());
        }
        let store = self.store.clone();
        if !policy.is_on() {
            // Pages fetched from now on get no visits row: turned on
            // again, every page is timed anew.
            let mut b = store.batch();
            b.put_meta::<RecrawlRow>(&RecrawlState { fingerprint });
            return b.write();
        }
        let (mut timed, mut new) = (0u64, 0u64);
        let mut b = store.batch();
        for row in store.rows::<crate::schema::tables::Seen>(&[]) {
            let (id, seen) = row?;
            if !matches!(seen.state, SeenState::Fetched { .. }) {
                continue;
            }
            let v = match store.row::<Visits>(&id)? {
                Some(v) if v.queued => continue,
                Some(v) => v,
                None => match store.url(id)? {
                    Some(url) => {
                        new += 1;
                        let mut v = VisitRecord {
                            url,
                            version_ms: seen.updated_ms,
                            ..VisitRecord::default()
                        };
                        observe(&mut v, seen.updated_ms, false);
                        v
                    }
                    None => continue,
                },
            };
            let from = v.last_ms;
            self.schedule_visit(&mut b, id, v, from, DueReason::Interval);
            timed += 1;
            if timed.is_multiple_of(4096) {
                self.finish(std::mem::replace(&mut b, store.batch()), &[])?;
            }
        }
        b.put_meta::<RecrawlRow>(&RecrawlState { fingerprint });
        self.finish(b, &[])?;
        self.load_due()?;
        if timed > 0 {
            self.notice(format!(
                "recrawl {}: {timed} pages timed ({new} fetched before revisits were on)",
                policy.mode.name()
            ));
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
        let h = self.host(job.key.host, "")?;
        h.record.fetched = h.record.fetched.saturating_sub(1);
        w.b.delete_page_index(old.status, job.url.host(), id);
        if old.md5 != md5 && self.store.content_owner(&old.md5)? == Some(id) {
            w.b.delete_content_owner(&old.md5);
        }
        let mut near = None;
        if let Some(doc) = self.store.row::<Docs>(&id)? {
            if doc.duplicate_of.is_some() {
                self.counters.duplicates = self.counters.duplicates.saturating_sub(1);
            }
            if doc.links_recorded() {
                self.counters.links = self.counters.links.saturating_sub(doc.outlinks.into());
            }
            if let Some(counter) = doc.verdict.counter() {
                super::bump(&mut self.counters.filtered, counter, -1);
            }
            near = doc.near_place();
            if let (Some(hash), Some(_)) = (doc.simhash, near) {
                self.unplace(&mut w.b, id, hash)?;
            }
            w.b.delete_row::<Docs>(&id);
            w.b.delete_row::<Verdicts>(&id);
        }
        for (dst, _) in self.store.links_from(id, usize::MAX)? {
            w.b.delete_inlink(InLinkKey { dst, src: id });
        }
        w.b.delete_links(id);
        Ok(near)
    }
}
