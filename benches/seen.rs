//! Document 004's comparison of URL-seen structures, on URLs of the
//! benchmark web: the RocksDB `seen` CF alone; RocksDB behind trawl's
//! in-memory front (a Bloom filter over url ids); that plus the crawl's
//! bounded cache of settled URLs (what the crawl uses: two generations of
//! 64-bit fingerprints, at most ~19 MB); an
//! in-memory `HashSet<u128>` of url ids; and the document's character trie
//! (a "generalized list": first-child / next-sibling nodes, one per byte).
//!
//! Each structure, at each size N, answers three streams:
//! - insert: every page URL of an N-page web once, in crawl order (all new;
//!   the document's experiment, whose 2009 totals per 16,000 URLs were
//!   database 968 ms, list 15 ms, trie 0.8 ms);
//! - links: N URLs from the pages' links in crawl order, lookup-or-insert
//!   (mostly repeats: what a crawl asks);
//! - miss: URLs never inserted (up to 1,000,000), where the Bloom front's
//!   false positives show.
//!
//! Times include hashing the URL to its id where a structure keys by id.
//! RAM is the Rust heap the structure holds (a counting allocator): for the
//! RocksDB rows that is the front alone, since RocksDB's own memory is
//! capped (64 MB of memtables, 40 MB of block cache) whatever N is; the
//! process's RSS growth is printed to stderr as a cross-check.
//!
//! Run: `cargo bench --bench seen` (16,000 and 10,000,000 URLs, a few
//! minutes; TRAWL_SEEN_SIZES=16000,1000000 to choose). `cargo test
//! --release` runs it once at 16,000 and checks every structure agrees.

use std::alloc::{GlobalAlloc, Layout};
use std::collections::HashSet;
use std::hint::black_box;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use trawl::frontier::{SeenFront, SettledSet};
use trawl::model::SeenState;
use trawl::model::UrlId;
use trawl::schema::{CF_SEEN, SeenRecord};
use trawl::site::bench::BenchUrls;
use trawl::store::Store;

/// The trawl binary's allocator, counting the bytes it holds.
struct Counting;

static HELD: AtomicIsize = AtomicIsize::new(0);
static INNER: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        HELD.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { INNER.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        HELD.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { INNER.dealloc(p, l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        HELD.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { INNER.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        HELD.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        unsafe { INNER.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn heap() -> isize {
    HELD.load(Ordering::Relaxed)
}

fn rss() -> isize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: isize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// A URL-seen set.
trait SeenSet {
    /// Records `url`; true when it was not there before.
    fn insert(&mut self, url: &str) -> bool;
    /// Whether `url` was recorded (a Bloom filter may say yes wrongly).
    fn contains(&mut self, url: &str) -> bool;
    /// Makes pending writes durable (RocksDB); a no-op in memory.
    fn sync(&mut self) {}
    /// Bytes on disk, where there is a disk.
    fn disk_bytes(&self) -> Option<u64> {
        None
    }
    /// The front's answer alone, for its false-positive rate.
    fn front_contains(&self, _url: &str) -> Option<bool> {
        None
    }
}

/// Writes are grouped per page, as the crawl's one batch per page does.
const LINKS_PER_PAGE: usize = 20;

/// The `seen` CF of a trawl db, optionally behind the crawl's Bloom front
/// and its cache of settled URLs (what the crawl uses: both).
struct Rocks {
    store: Store,
    front: Option<SeenFront>,
    settled: Option<SettledSet>,
    pending: Vec<UrlId>,
    _dir: tempfile::TempDir,
}

impl Rocks {
    fn new(front_for: Option<usize>, settled: bool) -> Rocks {
        let dir = tempfile::tempdir().expect("temp dir");
        Rocks {
            store: Store::open(dir.path()).expect("open store"),
            // Sized as the engine sizes it for a db of n URLs.
            front: front_for.map(|n| SeenFront::with_capacity((n * 2).max(1 << 20))),
            settled: settled.then(SettledSet::default),
            pending: Vec::with_capacity(LINKS_PER_PAGE),
            _dir: dir,
        }
    }

    fn write_pending(&mut self) {
        let rec = SeenRecord {
            state: SeenState::Queued,
            depth: 1,
            parent: None,
            redirects: 0,
            updated_ms: 0,
            priority: Some(1 << 48),
            scores: None,
        };
        let mut b = self.store.batch();
        for id in self.pending.drain(..) {
            b.put(CF_SEEN, &id.to_bytes(), &rec);
        }
        b.write().expect("write batch");
    }

    fn known(&mut self, id: UrlId) -> bool {
        if self.pending.contains(&id) || self.settled.as_ref().is_some_and(|s| s.contains(id)) {
            return true;
        }
        if let Some(f) = &self.front
            && !f.may_contain(id)
        {
            return false;
        }
        let found = self.store.seen(id).expect("read seen").is_some();
        if found && let Some(s) = &mut self.settled {
            s.insert(id);
        }
        found
    }
}

impl SeenSet for Rocks {
    fn insert(&mut self, url: &str) -> bool {
        let id = UrlId::of(url);
        if self.known(id) {
            return false;
        }
        if let Some(f) = &mut self.front {
            f.insert(id);
        }
        if let Some(s) = &mut self.settled {
            s.insert(id);
        }
        self.pending.push(id);
        if self.pending.len() == LINKS_PER_PAGE {
            self.write_pending();
        }
        true
    }

    fn contains(&mut self, url: &str) -> bool {
        self.known(UrlId::of(url))
    }

    fn sync(&mut self) {
        self.write_pending();
    }

    fn disk_bytes(&self) -> Option<u64> {
        self.store.flush().expect("flush");
        Some(self.store.disk_bytes())
    }

    fn front_contains(&self, url: &str) -> Option<bool> {
        self.front.as_ref().map(|f| f.may_contain(UrlId::of(url)))
    }
}

/// Exact and in memory: 16 bytes of id per URL plus the table's slack.
#[derive(Default)]
struct IdSet(HashSet<u128>);

impl SeenSet for IdSet {
    fn insert(&mut self, url: &str) -> bool {
        self.0.insert(UrlId::of(url).0)
    }
    fn contains(&mut self, url: &str) -> bool {
        self.0.contains(&UrlId::of(url).0)
    }
}

/// Document 004's character trie as a generalized list: each node is one
/// byte with its first child and next sibling, so shared URL prefixes are
/// stored once.
struct CharTrie {
    nodes: Vec<TrieNode>,
}

struct TrieNode {
    first_child: u32,
    next_sibling: u32,
    byte: u8,
    end: bool,
}

impl CharTrie {
    fn new() -> CharTrie {
        CharTrie {
            nodes: vec![TrieNode {
                first_child: 0,
                next_sibling: 0,
                byte: 0,
                end: false,
            }],
        }
    }

    /// The child of `node` for `byte` (0: none; the root is never a child).
    fn child(&self, node: u32, byte: u8) -> u32 {
        let mut c = self.nodes[node as usize].first_child;
        while c != 0 && self.nodes[c as usize].byte != byte {
            c = self.nodes[c as usize].next_sibling;
        }
        c
    }

    fn find(&self, url: &str) -> Option<u32> {
        let mut node = 0;
        for &b in url.as_bytes() {
            node = self.child(node, b);
            if node == 0 {
                return None;
            }
        }
        Some(node)
    }
}

impl SeenSet for CharTrie {
    fn insert(&mut self, url: &str) -> bool {
        let mut node = 0u32;
        for &b in url.as_bytes() {
            let c = self.child(node, b);
            node = if c != 0 {
                c
            } else {
                let new = self.nodes.len() as u32;
                let parent = &mut self.nodes[node as usize];
                let sibling = parent.first_child;
                parent.first_child = new;
                self.nodes.push(TrieNode {
                    first_child: 0,
                    next_sibling: sibling,
                    byte: b,
                    end: false,
                });
                new
            };
        }
        let end = &mut self.nodes[node as usize].end;
        !std::mem::replace(end, true)
    }

    fn contains(&mut self, url: &str) -> bool {
        self.find(url).is_some_and(|n| self.nodes[n as usize].end)
    }
}

struct Streams {
    inserts: Vec<String>,
    links: Vec<String>,
    misses: Vec<String>,
}

impl Streams {
    fn new(n: usize) -> Streams {
        let web = BenchUrls::new(n, 4);
        // The same shapes of URL on hosts the web never links to.
        let other = BenchUrls::new(n.min(1_000_000), 4);
        Streams {
            inserts: web.pages().take(n).collect(),
            links: web.links().take(n).collect(),
            misses: other
                .pages()
                .map(|u| u.replacen("127.0.0.1", "127.0.0.2", 1))
                .collect(),
        }
    }
}

struct Row {
    name: &'static str,
    insert_ns: f64,
    links_ns: f64,
    miss_ns: f64,
    ram_per_url: f64,
    disk_per_url: Option<f64>,
    false_pos: Option<f64>,
    insert_total_ms: f64,
    /// What the structure answered, for the agreement check.
    answers: (usize, usize, usize),
}

fn ns_per(start: Instant, n: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / n.max(1) as f64
}

fn measure(name: &'static str, s: &Streams, make: impl FnOnce() -> Box<dyn SeenSet>) -> Row {
    let (heap0, rss0) = (heap(), rss());
    let mut set = make();
    let n = s.inserts.len();

    let t = Instant::now();
    let mut new = 0;
    for u in &s.inserts {
        new += set.insert(black_box(u)) as usize;
    }
    set.sync();
    let insert_ns = ns_per(t, n);
    let insert_total_ms = t.elapsed().as_secs_f64() * 1e3;

    let t = Instant::now();
    let mut link_new = 0;
    for u in &s.links {
        link_new += set.insert(black_box(u)) as usize;
    }
    set.sync();
    let links_ns = ns_per(t, s.links.len());

    let t = Instant::now();
    let mut present = 0;
    for u in &s.misses {
        present += set.contains(black_box(u)) as usize;
    }
    let miss_ns = ns_per(t, s.misses.len());

    let held = (heap() - heap0).max(0) as f64;
    let grown = (rss() - rss0).max(0) as f64;
    eprintln!("{name}: process RSS grew {:.1} MB", grown / 1e6);
    let urls = (new + link_new).max(1) as f64;
    let disk = set.disk_bytes();
    let front_fp = s
        .misses
        .iter()
        .filter_map(|u| set.front_contains(u))
        .filter(|&yes| yes)
        .count();
    let has_front = set.front_contains("http://x/").is_some();
    Row {
        name,
        insert_ns,
        links_ns,
        miss_ns,
        ram_per_url: if disk.is_some() {
            grown.max(held)
        } else {
            held
        } / urls,
        disk_per_url: disk.map(|d| d as f64 / urls),
        false_pos: has_front.then(|| front_fp as f64 / s.misses.len().max(1) as f64),
        insert_total_ms,
        answers: (new, link_new, present),
    }
}

fn report(n: usize, rows: &[Row]) {
    println!(
        "\n{n} URLs (insert: {n} page URLs; links: {n} link URLs, lookup-or-insert; miss: never-inserted URLs)"
    );
    println!(
        "{:<24} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11} {:>14}",
        "structure",
        "insert ns",
        "links ns",
        "miss ns",
        "RAM B/URL",
        "disk B/URL",
        "front f.p.",
        "insert total"
    );
    for r in rows {
        println!(
            "{:<24} {:>10.0} {:>10.0} {:>10.0} {:>11.1} {:>11} {:>11} {:>11.1} ms",
            r.name,
            r.insert_ns,
            r.links_ns,
            r.miss_ns,
            r.ram_per_url,
            r.disk_per_url
                .map_or("-".to_string(), |d| format!("{d:.1}")),
            r.false_pos
                .map_or("-".to_string(), |f| format!("{:.3}%", f * 100.0)),
            r.insert_total_ms,
        );
    }
    println!(
        "(RAM of the RocksDB rows is trawl's heap, i.e. the front; RocksDB itself holds at most 64 MB of memtables and 40 MB of block cache whatever N is)"
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let sizes: Vec<usize> = match std::env::var("TRAWL_SEEN_SIZES") {
        Ok(v) => v.split(',').filter_map(|s| s.trim().parse().ok()).collect(),
        Err(_) if full => vec![16_000, 10_000_000],
        Err(_) => vec![16_000],
    };
    println!(
        "document 004 (2009, Java, per 16,000 URLs): database 968 ms, list 15 ms, trie 0.8 ms"
    );
    for n in sizes {
        let streams = Streams::new(n);
        let rows = vec![
            measure("rocksdb seen CF", &streams, || {
                Box::new(Rocks::new(None, false))
            }),
            measure("rocksdb + bloom front", &streams, || {
                Box::new(Rocks::new(Some(n), false))
            }),
            measure("+ settled cache (crawl)", &streams, || {
                Box::new(Rocks::new(Some(n), true))
            }),
            measure("HashSet<u128> of ids", &streams, || {
                Box::new(IdSet::default())
            }),
            measure("char trie (gen. list)", &streams, || {
                Box::new(CharTrie::new())
            }),
        ];
        report(n, &rows);
        // Every structure is exact but the front alone: they must agree.
        let first = rows[0].answers;
        for r in &rows {
            assert_eq!(
                r.answers, first,
                "{} disagrees with {}",
                r.name, rows[0].name
            );
        }
        assert_eq!(first.0, n, "every page URL is new once");
        assert_eq!(first.2, 0, "no never-inserted URL is found");
    }
}
