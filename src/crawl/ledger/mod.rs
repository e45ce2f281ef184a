//! The ledger: everything the crawl knows and records — counters, host
//! records and queues, the seen front and settled set, scope, filters,
//! seeds and in-flight marks — with the three things that change it:
//! `discover` (a URL found), `dequeue` (a URL leaves the frontier) and
//! `commit` (a fetch outcome, as one atomic batch). It fetches nothing and
//! reads time only from its [`Clock`]: the scheduler drives it, and
//! `refilter` uses it offline.
//!
//! Its parts own their fields, each type in its own file: `HostBook`
//! (`hosts.rs`: the hosts in memory, and `next_for`, what a host taken
//! from the ready heap does next), `OrderBook` (the order's generation,
//! ranking, in-link boosts and learned model), `SiteBook` (seed sites'
//! rules, filters and groups), `SitemapBook`, `DueBook` (revisits) and
//! `Harvest` (this run's figures, stop rules, targets). The other files
//! are the ledger's verbs over them: `page.rs` writes a page's commit,
//! `robots.rs` a robots.txt answer, `discover.rs` a URL found.

mod archive;
#[cfg(test)]
mod commit_tests;
mod discover;
mod drops;
mod due_book;
mod groups;
mod harvest;
mod hosts;
mod import;
mod inflight;
mod inlinks;
mod learned;
mod near;
#[cfg(test)]
mod next_tests;
mod order;
mod order_book;
mod page;
mod retime;
mod revisits;
mod robots;
mod seed_book;
mod seeds;
mod site_book;
mod sitemap_book;
mod sitemaps;
mod sites;
mod write;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

pub(super) use discover::{Discovery, rejudge_reconsiders};
pub(in crate::crawl) use harvest::RunFigures;
pub(in crate::crawl) use hosts::{Ask, Next};
pub use inflight::{CRASH_LOOP_DEATHS, forget_in_flight};
pub(crate) use page::denoise_record;
pub(super) use seeds::VIA_REDIRECT;
pub(super) use write::PageWrite;

use super::clock::Clock;
use super::marks::{self, MarkBook};
use super::traps::QueryVariants;
use crate::crawl::page_text::TextPolicy;
use crate::dedup::BandIndex;
use crate::fetch::NetGuard;
use crate::filter::scope::ScopeRule;
use crate::filter::{FilterSettings, Filters};
use crate::frontier::{SeenFront, SettledSet};
use crate::model::{HostId, UrlId};
use crate::schema::tables::{CountersRow, LogSeq, RunKey, Runs, SearchLog};
use crate::schema::{Counters, Filtered, RunProgress, RunRecord, SearchLogRecord};
use crate::settings::CrawlSettings;
use crate::store::{Batch, Store, StoreError};

pub(super) struct Ledger {
    store: Arc<Store>,
    /// The crawl's clock: every time the ledger records or compares.
    clock: Clock,
    settings: CrawlSettings,
    /// The robots.txt product token of the User-Agent.
    agent: String,
    counters: Counters,
    scope: ScopeRule,
    /// The focused-crawl filters, built from the settings and the seeds.
    filters: Filters,
    /// Learns the seeds' addresses (shared with the client's connector).
    guard: NetGuard,
    hosts: hosts::HostBook,
    front: SeenFront,
    /// Recently seen URLs no ordinary link can change: skips their lookup.
    settled: SettledSet,
    /// Query strings queued per path (`crawl.max_query_variants`).
    variants: QueryVariants,
    /// Seeds, the URLs seeds redirected to, and their hosts.
    seeds: seed_book::SeedBook,
    /// URLs a dead run left in flight once, with how many runs in a row
    /// died with them (see `inflight`).
    suspects: HashMap<UrlId, u8>,
    /// In-flight marks fetch tasks asked for, written with the next batch.
    marks: MarkBook,
    /// This run's `started_ms` (0 offline): batches carry its progress in
    /// the counters.
    run_started_ms: u64,
    /// This run's figures, the harvest window and the targets' recall.
    harvest: harvest::Harvest,
    /// Hosts whose rows the last batches wrote: the scheduler puts those
    /// with queued URLs in its ready heap.
    touched: HashSet<HostId>,
    /// Messages for the user, taken by the scheduler.
    notices: Vec<String>,
    /// The crawl order's state: generation, ranking, in-link boosts and
    /// the learned model.
    order: order_book::OrderBook,
    /// What fetch tasks make of a page's text, built once per settings
    /// change and shared with them.
    text: Arc<TextPolicy>,
    /// The near-duplicate band index, loaded when a page is first hashed.
    bands: Option<BandIndex>,
    /// The seed sites' own settings, the page filters of their modes, and
    /// which sites are finished (`crawl.site_batch`).
    sites: site_book::SiteBook,
    /// The sitemap files found, and how many each host has.
    sitemaps: sitemap_book::SitemapBook,
    /// When revisits are due, and a retiming's progress.
    due: due_book::DueBook,
    /// The last pages' in-links, grouped by target until written.
    inlinks: inlinks::InLinkWindow,
    /// The run's WARC output, when `warc.dir` is set.
    archive: Option<archive::Archive>,
}

impl Ledger {
    /// The ledger of `store`, loaded: counters, seen front, seeds, filters.
    pub fn open(
        store: Arc<Store>,
        settings: CrawlSettings,
        guard: NetGuard,
        marks: MarkBook,
    ) -> Result<Ledger, StoreError> {
        let mut l = Ledger {
            text: Arc::new(TextPolicy::of(&settings)),
            bands: None,
            sites: site_book::SiteBook::default(),
            sitemaps: sitemap_book::SitemapBook::load(&store)?,
            due: due_book::DueBook::default(),
            inlinks: inlinks::InLinkWindow::load(&store)?,
            clock: Clock::start(),
            agent: settings.agent_token().to_string(),
            counters: store.counters()?,
            store,
            settings,
            scope: ScopeRule::default(),
            filters: Filters::new(&FilterSettings::default(), []),
            guard,
            hosts: hosts::HostBook::default(),
            front: SeenFront::with_capacity(0),
            settled: SettledSet::default(),
            variants: QueryVariants::default(),
            seeds: seed_book::SeedBook::default(),
            suspects: HashMap::new(),
            marks,
            run_started_ms: 0,
            harvest: harvest::Harvest::default(),
            touched: HashSet::new(),
            notices: Vec::new(),
            order: order_book::OrderBook::default(),
            archive: None,
        };
        l.load_model();
        // The sites' orders are part of the order's fingerprint.
        l.load_sites()?;
        l.load_order()?;
        l.load_targets()?;
        l.load_seen_front()?;
        l.load_seeds()?;
        l.load_due()?;
        l.regroup();
        Ok(l)
    }

    /// A ledger for offline work (refilter): no fetch will use its guard
    /// or marks.
    pub fn offline(store: Arc<Store>, settings: CrawlSettings) -> Result<Ledger, StoreError> {
        Ledger::open(store, settings, NetGuard::default(), marks::marks().1)
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn settings(&self) -> &CrawlSettings {
        &self.settings
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Learns the seeds' addresses (shared with the client's connector).
    pub fn guard(&self) -> &NetGuard {
        &self.guard
    }

    /// What fetch tasks make of a page's text under the current settings.
    pub fn text_policy(&self) -> Arc<TextPolicy> {
        self.text.clone()
    }

    /// Seeds and the URLs seeds redirected to.
    pub fn seed_ids(&self) -> &HashSet<UrlId> {
        self.seeds.ids()
    }

    /// How many runs in a row died with URL `id` in flight.
    pub fn deaths_of(&self, id: UrlId) -> u8 {
        self.suspects.get(&id).copied().unwrap_or(0)
    }

    /// The in-flight marks fetch tasks ask for (the scheduler grants them).
    pub fn marks(&mut self) -> &mut MarkBook {
        &mut self.marks
    }

    /// Page `id`'s search document changed: logged in its batch for the
    /// search index, which reads the page when it takes the row. The
    /// sequence rides in the counters, written in the same batch.
    pub fn log_search(&mut self, b: &mut Batch<'_>, id: UrlId) {
        let row = SearchLogRecord { page: id.0 };
        b.put_row::<SearchLog>(&LogSeq(self.counters.search_seq), &row);
        self.counters.search_seq += 1;
    }

    /// `counter` of the filtered counts moves by `by`.
    pub fn count_filtered(&mut self, counter: Filtered, by: i64) {
        self.counters.filtered.add(counter, by);
    }

    /// Loads the target list and counts the targets fetched so far.
    pub fn load_targets(&mut self) -> Result<(), StoreError> {
        self.harvest.load_targets(&self.store)
    }

    /// A page was judged by the page filters: the harvest figures and
    /// the stop rules take it in.
    pub fn judged(&mut self, relevant: bool, text: &str) {
        let run = &mut self.counters.run;
        run.judged += 1;
        run.relevant += u64::from(relevant);
        self.harvest
            .judged(relevant, text, &self.settings.stop_when);
    }

    /// A new page (not a revisit) was fetched: this run's figures and a
    /// target's counts.
    fn fetched_new(&mut self, id: UrlId) {
        if self.harvest.fetched(id) {
            self.counters.run.targets += 1;
        }
    }

    /// This run's figures as the scheduler publishes them.
    pub fn run_figures(&self) -> RunFigures {
        self.harvest.figures()
    }

    /// The `crawl.stop_when` rule that fired, with its figures.
    pub fn stop_fired(&self) -> Option<&str> {
        self.harvest.stop_fired()
    }

    fn load_seen_front(&mut self) -> Result<(), StoreError> {
        let n = self.counters.seen as usize;
        // The old filter goes first: holding both would double its memory.
        self.front = SeenFront::with_capacity(0);
        self.front = SeenFront::with_capacity((n * 2).max(1 << 20));
        for id in self.store.seen_ids() {
            self.front.insert(id?);
        }
        Ok(())
    }

    /// Rebuilds the seen front twice as large once it holds more than it was sized for.
    pub fn grow_front_if_needed(&mut self) -> Result<(), StoreError> {
        if self.front.is_overfull() {
            self.counters.seen = self.counters.seen.max(self.front.len() as u64);
            self.load_seen_front()?;
        }
        Ok(())
    }

    /// The hosts written since the last call.
    pub fn take_touched(&mut self) -> Vec<HostId> {
        let hosts: Vec<HostId> = self.touched.drain().collect();
        if !self.sites.groups_on() {
            return hosts;
        }
        // A group that ends touches the next one's hosts.
        self.refresh_groups(&hosts);
        let next = self.touched.drain();
        hosts.into_iter().chain(next).collect()
    }

    /// The messages for the user since the last call.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    pub fn notice(&mut self, msg: String) {
        self.notices.push(msg);
    }

    /// Takes new settings; they apply from the next decision.
    pub fn apply_settings(&mut self, new: CrawlSettings) {
        let agent = new.agent_token().to_string();
        if agent != self.agent {
            self.hosts.reread_rules(&agent);
            self.agent = agent;
        }
        let refilter = new.filter != self.settings.filter;
        let limits = new.link_limits() != self.settings.link_limits();
        let regroup = new.site_batch != self.settings.site_batch;
        let retime = new.recrawl != self.settings.recrawl;
        self.text = Arc::new(TextPolicy::of(&new));
        self.settings = new;
        // `targets import` in the shell tells a running crawl this way.
        if let Err(e) = self.load_targets() {
            self.notice(format!("target list not reloaded: {e}"));
        }
        if let Err(e) = self.note_order() {
            self.notice(format!("new crawl order not recorded: {e}"));
        }
        if regroup {
            self.regroup();
        }
        if retime && let Err(e) = self.retime_revisits() {
            self.notice(format!("revisits not timed under the new policy: {e}"));
        }
        if refilter && let Err(e) = self.rebuild_filters() {
            self.notice(format!("filters not rebuilt: {e}"));
        }
        // URLs filtered under the old limits are judged again now.
        if limits && let Err(e) = self.rejudge_if_limits_changed() {
            self.notice(format!("new limits not applied to filtered URLs: {e}"));
        }
    }

    /// Builds the filters from the settings and every seed's host (the
    /// hosts seeds redirected to included).
    pub fn rebuild_filters(&mut self) -> Result<(), StoreError> {
        let seeds = self.store.seeds()?;
        self.filters_for(&seeds);
        Ok(())
    }

    /// The filters for the seeds in `list`.
    pub fn filters_for(&mut self, list: &crate::schema::SeedList) {
        let seeds = list.urls.iter().chain(list.derived.iter().map(|d| &d.url));
        self.filters = Filters::for_seeds(&self.settings.filter, seeds);
        self.site_filters_for(list);
    }

    /// Writes this run's record: at its start (`ended` None), and with its
    /// totals when it ends (`ended`: whether it was stopped).
    pub fn record_run(
        &mut self,
        started_ms: u64,
        elapsed: std::time::Duration,
        ended: Option<bool>,
    ) -> Result<(), StoreError> {
        let run = self.harvest.figures();
        let rec = RunRecord {
            started_ms,
            ended_ms: if ended.is_some() {
                self.clock.now_ms()
            } else {
                0
            },
            settings: self.settings.summary(),
            seeds: self.store.seeds()?.urls.len() as u32,
            fetched: run.fetched,
            links: run.links,
            elapsed_ms: elapsed.as_millis() as u64,
            tlp: elapsed.as_secs_f64() * run.fetched as f64,
            interrupted: ended.unwrap_or(false),
            // At the start the counters still hold the last run's.
            judged: if ended.is_some() {
                self.counters.run.judged
            } else {
                0
            },
            relevant: if ended.is_some() {
                self.counters.run.relevant
            } else {
                0
            },
            recent_judged: run.recent.0,
            recent_relevant: run.recent.1,
            targets: run.targets.0,
            targets_fetched: run.targets.1,
            stopped_by: self.harvest.stop_fired().unwrap_or_default().to_string(),
        };
        let mut b = self.store.batch();
        if ended.is_none() {
            self.complete_killed_run(&mut b)?;
            self.counters.run = RunProgress {
                started_ms,
                ..RunProgress::default()
            };
            b.put_meta::<CountersRow>(&self.counters);
            self.run_started_ms = started_ms;
        }
        b.put_row::<Runs>(&RunKey(started_ms), &rec);
        b.write()
    }

    /// A run killed before it could write its totals left them in the
    /// counters' run progress (written with every batch): its record gets
    /// them now, marked interrupted.
    fn complete_killed_run(&self, b: &mut crate::store::Batch<'_>) -> Result<(), StoreError> {
        let p = &self.counters.run;
        if p.started_ms == 0 {
            return Ok(());
        }
        let key = RunKey(p.started_ms);
        let Some(mut rec) = self.store.row::<Runs>(&key)? else {
            return Ok(());
        };
        if rec.ended_ms != 0 {
            return Ok(());
        }
        let elapsed_ms = p.last_ms.saturating_sub(p.started_ms);
        rec.fetched = p.fetched;
        rec.links = p.links;
        (rec.judged, rec.relevant) = (p.judged, p.relevant);
        rec.elapsed_ms = elapsed_ms;
        rec.tlp = elapsed_ms as f64 / 1e3 * p.fetched as f64;
        rec.ended_ms = p.last_ms.max(p.started_ms);
        rec.interrupted = true;
        b.put_row::<Runs>(&key, &rec);
        Ok(())
    }
}
