//! `commit_page` on an offline ledger over a real RocksDB in a temp dir:
//! one fetch outcome a test, each checked by the rows it wrote and by the
//! audit (rows and counters agree).

use std::sync::Arc;
use std::time::Duration;

use super::Ledger;
use crate::crawl::audit;
use crate::crawl::worker::{PageJob, process};
use crate::fetch::Fetched;
use crate::model::{self, CanonicalUrl, SeenState};
use crate::schema::tables::Docs;
use crate::settings::{CrawlSettings, RecrawlMode, RecrawlSettings};
use crate::store::Store;

const HTML: (&str, &str) = ("content-type", "text/html; charset=utf-8");

struct Crawl {
    _dir: tempfile::TempDir,
    store: Arc<Store>,
    ledger: Ledger,
}

fn url(s: &str) -> CanonicalUrl {
    model::normalize(s).unwrap()
}

impl Crawl {
    fn new(seeds: &[&str]) -> Crawl {
        Crawl::with(CrawlSettings::default(), seeds)
    }

    fn with(settings: CrawlSettings, seeds: &[&str]) -> Crawl {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let mut ledger = Ledger::offline(store.clone(), settings).unwrap();
        // As a crawl starts: pages timed under the recrawl policy.
        ledger.retime_revisits().unwrap();
        while ledger.retime_step().unwrap() {}
        let seeds: Vec<_> = seeds.iter().map(|s| url(s)).collect();
        ledger.add_seeds(&seeds).unwrap();
        Crawl {
            _dir: dir,
            store,
            ledger,
        }
    }

    /// The next queued URL of `of`'s host, taken as dispatch takes it.
    fn take(&mut self, of: &str) -> PageJob {
        let u = url(of);
        self.ledger.load(u.host_id(), &u.host_key()).unwrap();
        let h = self.ledger.hosts.get_mut(u.host_id()).unwrap();
        let (key, entry) = h.queue.pop(&self.store).unwrap().expect("a queued URL");
        PageJob {
            url: url(&entry.url),
            key,
            entry,
        }
    }

    /// Commits `job` answered with `status`, `headers` and `body`, made
    /// into a page as a fetch task makes it.
    fn answer(&mut self, job: PageJob, status: u16, headers: &[(&str, &str)], body: &str) {
        let fetched = Fetched::offline(status, headers, body.as_bytes());
        let data = process(fetched, job.url.url(), &self.ledger.text_policy(), None);
        self.ledger.commit_page(job, Ok(data)).unwrap();
    }

    fn state(&self, of: &str) -> Option<SeenState> {
        self.store.seen(url(of).id()).unwrap().map(|r| r.state)
    }

    fn audited(&self) {
        assert_eq!(audit(&self.store).unwrap(), Vec::<String>::new());
    }
}

/// ~800 words from a fixed generator, the `changed`-th replaced.
fn prose(changed: usize) -> String {
    let mut x = 7u64;
    let mut words: Vec<String> = (0..800)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            format!("w{}", (x >> 33) % 600)
        })
        .collect();
    words[changed] = "different".into();
    words.join(" ")
}

fn page(links: &[&str]) -> String {
    let a: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a> "))
        .collect();
    format!("<html><head><title>T</title></head><body><p>Some words here.</p>{a}</body></html>")
}

#[test]
fn a_200_stores_the_page_and_queues_its_links() {
    let mut c = Crawl::new(&["http://a.test/"]);
    let job = c.take("http://a.test/");
    c.answer(job, 200, &[HTML], &page(&["/x", "/y", "/x"]));
    assert_eq!(
        c.state("http://a.test/"),
        Some(SeenState::Fetched { status: 200 })
    );
    assert_eq!(c.state("http://a.test/x"), Some(SeenState::Queued));
    assert_eq!(c.state("http://a.test/y"), Some(SeenState::Queued));
    assert!(c.store.page(url("http://a.test/").id()).unwrap().is_some());
    assert_eq!(c.store.counters().unwrap().fetched, 1);
    c.audited();
}

#[test]
fn a_seeds_redirect_queues_its_target() {
    let mut c = Crawl::new(&["http://a.test/"]);
    let job = c.take("http://a.test/");
    let to = ("location", "http://www.a.test/home");
    c.answer(job, 301, &[HTML, to], "");
    assert_eq!(
        c.state("http://a.test/"),
        Some(SeenState::Fetched { status: 301 })
    );
    assert_eq!(c.state("http://www.a.test/home"), Some(SeenState::Queued));
    let next = c.take("http://www.a.test/home");
    assert_eq!(next.entry.redirects, 1);
    c.audited();
}

#[test]
fn a_429_with_attempts_left_queues_the_url_again_and_holds_the_host() {
    let mut c = Crawl::new(&["http://a.test/"]);
    let job = c.take("http://a.test/");
    let now = c.ledger.clock.now_ms();
    c.answer(job, 429, &[HTML, ("retry-after", "120")], "slow down");
    assert_eq!(c.state("http://a.test/"), Some(SeenState::Queued));
    let host = url("http://a.test/").host_id();
    let h = c.ledger.hosts.loaded(host);
    assert!(
        h.record.next_fetch_ms >= now + 120_000,
        "held for its Retry-After"
    );
    assert!(h.hold_until_ms >= now + 120_000);
    c.audited();
    // Asked again, its attempts counted; the third answer (max_attempts)
    // is stored.
    let job = c.take("http://a.test/");
    assert_eq!(job.entry.attempts, 1);
    c.answer(job, 503, &[HTML], "busy");
    let job = c.take("http://a.test/");
    assert_eq!(job.entry.attempts, 2);
    c.answer(job, 503, &[HTML], "busy");
    assert_eq!(
        c.state("http://a.test/"),
        Some(SeenState::Fetched { status: 503 })
    );
    c.audited();
}

#[test]
fn a_5xx_is_the_urls_answer() {
    let mut c = Crawl::new(&["http://a.test/"]);
    let job = c.take("http://a.test/");
    c.answer(job, 500, &[HTML], &page(&["/x"]));
    assert_eq!(
        c.state("http://a.test/"),
        Some(SeenState::Fetched { status: 500 })
    );
    assert_eq!(c.store.counters().unwrap().fetched, 1);
    c.audited();
}

#[test]
fn a_body_seen_before_is_a_duplicate_and_its_links_are_not_followed() {
    let mut c = Crawl::new(&["http://a.test/"]);
    let job = c.take("http://a.test/");
    c.answer(job, 200, &[HTML], &page(&["/one", "/two"]));
    let same = page(&["/three"]);
    let job = c.take("http://a.test/");
    assert_eq!(job.url.url().path(), "/one");
    c.answer(job, 200, &[HTML], &same);
    let job = c.take("http://a.test/");
    assert_eq!(job.url.url().path(), "/two");
    c.answer(job, 200, &[HTML], &same);
    let two = c
        .store
        .row::<Docs>(&url("http://a.test/two").id())
        .unwrap()
        .unwrap();
    assert_eq!(two.duplicate_of, Some(url("http://a.test/one").id().0));
    assert_eq!(c.store.counters().unwrap().duplicates, 1);
    // The first copy's link was followed; the duplicate links nowhere.
    assert_eq!(c.state("http://a.test/three"), Some(SeenState::Queued));
    let from = c.store.inlinks_to(url("http://a.test/three").id()).unwrap();
    assert_eq!(from, vec![url("http://a.test/one").id()]);
    c.audited();
}

#[test]
fn a_near_duplicate_past_its_clusters_budget_is_stored_but_not_followed() {
    let mut settings = CrawlSettings::default();
    settings.dedup.near = true;
    settings.dedup.cluster_budget = 1;
    let mut c = Crawl::with(settings, &["http://a.test/"]);
    let job = c.take("http://a.test/");
    c.answer(job, 200, &[HTML], &page(&["/one", "/two"]));
    let near = |n: usize, link: &str| {
        format!(
            "<html><body><p>{}</p><a href=\"{link}\">on</a></body></html>",
            prose(n)
        )
    };
    let job = c.take("http://a.test/");
    c.answer(job, 200, &[HTML], &near(10, "/x1"));
    let job = c.take("http://a.test/");
    assert_eq!(job.url.url().path(), "/two");
    c.answer(job, 200, &[HTML], &near(400, "/x2"));
    assert_eq!(c.state("http://a.test/x1"), Some(SeenState::Queued));
    assert_eq!(
        c.state("http://a.test/x2"),
        None,
        "past the budget: not followed"
    );
    let two = c
        .store
        .row::<Docs>(&url("http://a.test/two").id())
        .unwrap()
        .unwrap();
    let place = two.near.expect("a near-duplicate");
    assert_eq!(place.of, url("http://a.test/one").id().0);
    assert!(!place.expanded);
    let counters = c.store.counters().unwrap();
    assert_eq!((counters.near_duplicates, counters.unexpanded), (1, 1));
    c.audited();
}

#[test]
fn a_revisit_keeps_an_unchanged_page_and_stores_a_changed_one() {
    let settings = CrawlSettings {
        recrawl: RecrawlSettings {
            mode: RecrawlMode::Uniform,
            every: Duration::from_millis(1),
            ..RecrawlSettings::default()
        },
        ..CrawlSettings::default()
    };
    let mut c = Crawl::with(settings, &["http://a.test/"]);
    let job = c.take("http://a.test/");
    c.answer(job, 200, &[HTML], &page(&["/x"]));
    let revisit = |c: &mut Crawl, body: &str| {
        std::thread::sleep(Duration::from_millis(20));
        c.ledger.queue_due().unwrap();
        let job = c.take("http://a.test/");
        assert!(
            job.entry.revisit.is_some(),
            "{} is a revisit",
            job.url.url()
        );
        c.answer(job, 200, &[HTML], body);
        c.store.counters().unwrap()
    };
    let after = revisit(&mut c, &page(&["/x"]));
    assert_eq!((after.revisits, after.revisits_changed), (1, 0));
    assert_eq!(after.fetched, 1, "a revisit is no new page");
    c.audited();
    let after = revisit(&mut c, &page(&["/x", "/y"]));
    assert_eq!((after.revisits, after.revisits_changed), (2, 1));
    assert_eq!(c.state("http://a.test/y"), Some(SeenState::Queued));
    c.audited();
}

/// A page the filters did not keep is counted once under its verdict, and
/// a changed revisit of it moves that count from its old version to the
/// new one (it once read the old verdict from the doc, where it is no
/// longer stored, and counted the page twice).
#[test]
fn a_changed_revisit_of_a_filtered_page_counts_it_once() {
    let mut settings = CrawlSettings {
        recrawl: RecrawlSettings {
            mode: RecrawlMode::Uniform,
            every: Duration::from_millis(1),
            ..RecrawlSettings::default()
        },
        ..CrawlSettings::default()
    };
    for (k, v) in [
        ("filter.mode", "relevance"),
        ("relevance.keywords", "zebra"),
    ] {
        crate::settings::find(k)
            .unwrap()
            .set(&mut settings, v)
            .unwrap();
    }
    let mut c = Crawl::with(settings, &["http://a.test/"]);
    let page_relevance = |c: &Crawl| c.store.counters().unwrap().filtered.named("page-relevance");
    let job = c.take("http://a.test/");
    c.answer(job, 200, &[HTML], &page(&["/x"]));
    assert_eq!(page_relevance(&c), 1);
    for body in [page(&["/x", "/y"]), page(&["/z"])] {
        std::thread::sleep(Duration::from_millis(20));
        c.ledger.queue_due().unwrap();
        let job = c.take("http://a.test/");
        assert!(job.entry.revisit.is_some());
        c.answer(job, 200, &[HTML], &body);
        assert_eq!(page_relevance(&c), 1, "after a changed revisit");
    }
    let verdict = c
        .store
        .doc(url("http://a.test/").id())
        .unwrap()
        .unwrap()
        .verdict;
    assert_eq!(verdict.verdict, model::Verdict::Relevance);
    c.audited();
}
