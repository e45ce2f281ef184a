//! `discover seeds`: co-link seed discovery (document 003). The hosts the
//! crawled pages link to that are not seed sites, ranked by how many
//! distinct crawled sites (registrable domains) and pages link to them,
//! with their host rank (`rank hosts`), the anchor texts most used for
//! them, and the private or loopback address a host resolves to (pages
//! link to `http://192.168.1.1/`; `seed accept` takes such a host only
//! with `--allow-private`); `--probe`
//! fetches each one's robots.txt and home page (see `crawl::probe`).
//! Hosts a person accepted or rejected (`seed accept`, `seed reject`) are
//! left out. The links are streamed from the `links` rows; a page's own
//! host is looked up only when it links to a candidate.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::json;

use super::rank::CHECK_EVERY;
use super::rank_hosts::origin_of;
use super::{Call, Command, Run, Sub, no_detail, words};
use crate::crawl::probe;
use crate::crawl::sites::SiteRules;
use crate::fetch::AddrClass;
use crate::graph::colinks::{Candidate, CoLinks, Pending};
use crate::model::{self, HostId, UrlId, now_ms};
use crate::schema::tables::{HostRankRow, HostRanks, Sites};
use crate::schema::{Decision, ProbeRecord, SiteRecord};
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "discover",
    usage: "discover seeds [--min-colinks N] [--min-sources N] [--limit N] [--probe]",
    summary: "hosts the crawled pages link to that are not seed sites, ranked by the distinct sites (registrable domains; --min-colinks, 2) and pages (--min-sources, 2) linking to them; --probe fetches their robots.txt and home page",
    examples: &[
        "discover seeds",
        "discover seeds --min-colinks 3 --limit 50 --probe",
    ],
    arity: (1, Some(8)),
    // --probe stores what it found, except on a read-only attach.
    subs: &[Sub {
        words: "seeds",
        writes: false,
    }],
    writes: false,
    complete: |_, args| match args {
        [] => words(&["seeds"]),
        _ => words(&["--min-colinks", "--min-sources", "--limit", "--probe"]),
    },
    detail: no_detail,
    run: Run::Data(run),
};

/// Pages whose own URL is looked up at once, at most (see `Pending`).
const RESOLVE: usize = 4096;

struct Options {
    /// Distinct crawled sites linking to a candidate, at least.
    min_sites: u32,
    /// Distinct pages linking to it, at least.
    min_pages: u64,
    limit: usize,
    probe: bool,
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let ["seeds", ref rest @ ..] = call.args[..] else {
        return Err(ShellError::Usage);
    };
    let o = options(rest)?;
    sh.discover_seeds(&o)
}

fn options(args: &[&str]) -> Result<Options> {
    let mut o = Options {
        min_sites: 2,
        min_pages: 2,
        limit: 20,
        probe: false,
    };
    let mut it = args.iter();
    while let Some(&flag) = it.next() {
        if flag == "--probe" {
            o.probe = true;
            continue;
        }
        let Some(&value) = it.next() else {
            bail!("{flag} needs a number");
        };
        let n: u64 = match value.parse() {
            Ok(n) if n >= 1 => n,
            _ => bail!("{flag} {value}: not a whole number of at least 1"),
        };
        match flag {
            "--min-colinks" => o.min_sites = n.min(u64::from(u32::MAX)) as u32,
            "--min-sources" => o.min_pages = n,
            "--limit" => o.limit = n.min(100_000) as usize,
            _ => bail!(
                "unknown flag {flag} (flags: --min-colinks N, --min-sources N, --limit N, --probe)"
            ),
        }
    }
    Ok(o)
}

/// What was read: the counts, the pages read and those whose links could
/// not be read.
struct Read {
    colinks: CoLinks,
    pages: u64,
    unreadable: u64,
}

impl Ctx {
    fn discover_seeds(&mut self, o: &Options) -> Result<Reply> {
        let started = Instant::now();
        let (rules, _) = SiteRules::load(&self.store)?;
        let mut records: HashMap<HostId, SiteRecord> = HashMap::new();
        for row in self.store.rows::<Sites>(&[]) {
            let (host, rec) = row?;
            records.insert(host, rec);
        }
        let left_out = |origin: &str| {
            let h = HostId::of(origin);
            rules.site(h).is_some()
                || records
                    .get(&h)
                    .is_some_and(|r| r.decision != Decision::Undecided)
        };
        let read = self.read_colinks(left_out)?;
        let mut found = read.colinks.candidates(o.min_sites, o.min_pages);
        let qualified = found.len();
        found.truncate(o.limit);
        let read_secs = started.elapsed().as_secs_f64();
        let addresses = self.addresses(&found)?;
        if o.probe && !found.is_empty() {
            self.probe_candidates(&found, &mut records)?;
        }
        let nodes = self.store.meta::<HostRankRow>()?.map(|r| r.nodes as f64);
        let mut rows = Vec::new();
        let mut listed = Vec::new();
        for (i, (c, addr)) in found.iter().zip(&addresses).enumerate() {
            let h = HostId::of(&c.origin);
            let rank = match (self.store.row::<HostRanks>(&h)?, nodes) {
                (Some(r), Some(n)) => Some(r.rank * n),
                _ => None,
            };
            let probed = records.get(&h).and_then(|r| r.probe.as_ref());
            let address = addr.map(|(ip, class)| (ip, class_name(class)));
            rows.push(row(i, c, address, rank, probed));
            listed.push(json!({"rank": i + 1, "host": c.origin, "sites": c.sites,
                "address": address.map(|(ip, what)| json!({"ip": ip.to_string(), "class": what})),
                "pages": c.pages, "links": c.links, "host_rank": rank,
                "anchors": c.anchors.iter().map(|(t, n)| json!({"text": t, "count": n})).collect::<Vec<_>>(),
                "probe": probed.map(probe_json)}));
        }
        let mut notes = if read.unreadable > 0 {
            format!("; {} pages' links could not be read", read.unreadable)
        } else {
            String::new()
        };
        let private = addresses.iter().flatten().count();
        if private > 0 {
            notes.push_str(&format!(
                "; {private} at a private, loopback or never-fetched address (seed accept takes a private one only with --allow-private)"
            ));
        }
        let head = format!(
            "{} candidate hosts linked from ≥ {} sites and ≥ {} pages (of {} hosts linked that are not seed sites or decided), from the links of {} pages in {read_secs:.2} s{notes}\n",
            table::thousands(qualified as u64),
            o.min_sites,
            o.min_pages,
            table::thousands(read.colinks.candidates_met() as u64),
            table::thousands(read.pages),
        );
        let json = json!({"candidates": qualified, "hosts_linked": read.colinks.candidates_met(),
            "pages_read": read.pages, "unreadable": read.unreadable, "read_secs": read_secs,
            "top": listed});
        if found.is_empty() {
            return Ok(Reply::record(head.trim_end().to_string(), json));
        }
        let header = [
            "#", "host", "address", "sites", "pages", "links", "rank", "robots", "home", "topic",
            "anchors",
        ];
        Ok(Reply::record(
            head + &table::render(&header, &rows, self.sink.width),
            json,
        ))
    }

    /// The co-link counts over every page's links. `left_out(origin)`:
    /// links to that host are not counted.
    fn read_colinks(&mut self, left_out: impl Fn(&str) -> bool) -> Result<Read> {
        let store = self.store.clone();
        let mut read = Read {
            colinks: CoLinks::default(),
            pages: 0,
            unreadable: 0,
        };
        // Pages with links to candidates, waiting for their own host.
        let mut pending: Pending<UrlId> = Pending::default();
        let mut failed: Option<ShellError> = None;
        store.each_page_links(|src, links| {
            if failed.is_some() {
                return;
            }
            read.pages += 1;
            let Ok(links) = links else {
                read.unreadable += 1;
                return;
            };
            let c = &mut read.colinks;
            let targets = links.iter().filter_map(|(_, l)| {
                let h = c.host(&origin_of(l.dst_url)?, &left_out);
                (!c.is_excluded(h)).then_some((h, l.anchor))
            });
            pending.push(src, targets);
            let full = pending.is_full(RESOLVE);
            if full && let Err(e) = resolve(self, &mut read, &mut pending, &left_out) {
                failed = Some(e);
                return;
            }
            if full || read.pages.is_multiple_of(CHECK_EVERY) {
                self.progress(&format!(
                    "discover seeds: reading the links of {} pages",
                    table::thousands(read.pages)
                ));
                if self.interrupted() {
                    failed = Some("discover seeds: interrupted".into());
                }
            }
        })?;
        self.progress_done();
        if let Some(e) = failed {
            return Err(e);
        }
        resolve(self, &mut read, &mut pending, &left_out)?;
        Ok(read)
    }

    /// The address of each of `found` that is not public (see
    /// `probe::non_public_addresses`).
    fn addresses(&self, found: &[Candidate]) -> Result<Vec<Option<(IpAddr, AddrClass)>>> {
        let hosts: Vec<String> = found
            .iter()
            .map(|c| model::parsed_host(&c.origin))
            .collect();
        let interrupt = self.interrupt.clone();
        let mut stopped = false;
        let resolve = self.settings.fetch.resolve.clone();
        let found = self
            .rt
            .clone()
            .block_on(probe::non_public_addresses(&resolve, &hosts, || {
                stopped |= interrupt.swap(false, Ordering::SeqCst);
                !stopped
            }));
        if stopped {
            bail!("discover seeds: interrupted");
        }
        Ok(found)
    }

    /// Probes `found` and keeps what it found in their records (stored,
    /// except on a read-only attach).
    fn probe_candidates(
        &mut self,
        found: &[Candidate],
        records: &mut HashMap<HostId, SiteRecord>,
    ) -> Result<()> {
        let origins: Vec<String> = found.iter().map(|c| c.origin.clone()).collect();
        let seeds = self.store.seeds()?;
        let interrupt = self.interrupt.clone();
        let total = origins.len();
        let probes = self
            .rt
            .clone()
            .block_on(probe::probe(&self.settings, &seeds, &origins, |done| {
                if self.progress_tty {
                    eprint!("\r\x1b[Kdiscover seeds: probed {done} of {total} hosts");
                }
                !interrupt.swap(false, Ordering::SeqCst)
            }))
            .map_err(|e| format!("discover seeds: cannot probe: {e}"))?;
        if self.progress_tty {
            eprint!("\r\x1b[K");
        }
        let mut b = self.store.batch();
        // A host not probed keeps what an earlier probe found.
        for (origin, p) in origins.iter().zip(probes) {
            let Some(p) = p else {
                continue;
            };
            let h = HostId::of(origin);
            let rec = records.entry(h).or_insert_with(|| SiteRecord {
                origin: origin.clone(),
                source: "co-link discovery".into(),
                added_ms: now_ms(),
                ..SiteRecord::default()
            });
            rec.probe = Some(p);
            b.put_row::<Sites>(&h, rec);
        }
        if !self.store.is_read_only() {
            b.write()?;
        }
        Ok(())
    }
}

/// Resolves the pending pages' own hosts and counts their links.
fn resolve(
    sh: &Ctx,
    read: &mut Read,
    pending: &mut Pending<UrlId>,
    left_out: &impl Fn(&str) -> bool,
) -> Result<()> {
    let urls = sh.store.urls_many(&pending.sources())?;
    for ((_, targets), url) in pending.pages().zip(urls) {
        let Some(src) = url.as_deref().and_then(origin_of) else {
            read.unreadable += 1;
            continue;
        };
        let s = read.colinks.host(&src, left_out);
        read.colinks.page(s, targets);
    }
    pending.clear();
    Ok(())
}

/// What an address that is not public is, for the address column.
fn class_name(class: AddrClass) -> &'static str {
    match class {
        AddrClass::Public => "public",
        AddrClass::Private(what) => what,
        AddrClass::Forbidden(what) => what,
    }
}

fn row(
    i: usize,
    c: &Candidate,
    address: Option<(IpAddr, &str)>,
    rank: Option<f64>,
    probed: Option<&ProbeRecord>,
) -> Vec<String> {
    let anchors: Vec<String> = c
        .anchors
        .iter()
        .take(3)
        .map(|(t, n)| format!("\"{t}\" {n}"))
        .collect();
    let dash = || "-".to_string();
    vec![
        (i + 1).to_string(),
        c.origin.clone(),
        address.map_or_else(dash, |(ip, what)| format!("{what} {ip}")),
        table::thousands(u64::from(c.sites)),
        table::thousands(c.pages),
        table::thousands(c.links),
        rank.map_or_else(dash, |r| format!("{r:.1}")),
        probed.map_or_else(dash, |p| p.robots.clone()),
        probed
            .and_then(|p| p.home)
            .map_or_else(dash, |s| s.to_string()),
        probed
            .and_then(|p| p.topic)
            .map_or_else(dash, |t| format!("{t:.2}")),
        anchors.join(", "),
    ]
}

fn probe_json(p: &ProbeRecord) -> serde_json::Value {
    json!({"checked_ms": p.checked_ms, "robots": p.robots, "home": p.home,
        "detail": p.detail, "title": p.title, "topic": p.topic})
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn bad_flags_are_named_and_an_empty_db_has_no_candidates() {
        let mut t = TestShell::new();
        assert!(
            t.err("discover seeds --limit 0")
                .contains("--limit 0: not a whole number of at least 1")
        );
        assert!(
            t.err("discover seeds --min-colinks")
                .contains("needs a number")
        );
        assert!(
            t.err("discover seeds --top 3")
                .contains("unknown flag --top")
        );
        assert!(t.err("discover hosts").starts_with("usage: discover seeds"));
        assert!(t.ok("discover seeds").starts_with("0 candidate hosts"));
        assert!(t.err("seed reject").starts_with("usage: seed add"));
        assert!(t.err("seed accept a.org b.org").contains("one host"));
    }
}
