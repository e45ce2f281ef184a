//! Commands that change things: seeds, settings, and the crawl itself.

use std::time::{Duration, Instant};

use super::{Reply, Running, Shell, config, table};
use crate::crawl::{self, CrawlState};
use crate::model;
use crate::schema::{CF_META, SeedList, meta_keys};

impl Shell {
    pub(super) fn cmd_seed(&mut self, args: &[&str]) -> Result<Reply, String> {
        let mut list = self.store.seeds().map_err(|e| e.to_string())?;
        match args {
            ["list"] => {
                let mut rows: Vec<Vec<String>> = list
                    .urls
                    .iter()
                    .map(|u| vec![u.clone(), "given".into()])
                    .collect();
                let mut json: Vec<serde_json::Value> = list
                    .urls
                    .iter()
                    .map(|u| serde_json::json!({"url": u, "via": "given"}))
                    .collect();
                // Hosts the crawl took in because a seed redirected there.
                for d in &list.derived {
                    let what = match d.via.as_str() {
                        "robots" => format!("in scope: {}'s robots.txt redirects here", d.from),
                        _ => format!("{} redirects here", d.from),
                    };
                    rows.push(vec![d.url.clone(), what]);
                    json.push(serde_json::json!({"url": d.url, "via": d.via, "from": d.from}));
                }
                Ok(Reply::with(
                    table::render(&["seed", "from"], &rows, self.width),
                    serde_json::json!(json),
                ))
            }
            ["add", urls @ ..] if !urls.is_empty() => self.add_seeds(&mut list, urls),
            ["import", file] => {
                let text = std::fs::read_to_string(file)
                    .map_err(|e| format!("cannot read {file}: {e}"))?;
                let urls: Vec<&str> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .collect();
                if urls.is_empty() {
                    return Err(format!("{file}: no URLs in it"));
                }
                // A line the crawler refuses is reported and skipped.
                let (good, bad): (Vec<&str>, Vec<&str>) =
                    urls.iter().partition(|u| model::normalize(u).is_ok());
                if good.is_empty() {
                    return Err(format!(
                        "{file}: no usable URL in it ({} refused, e.g. {})",
                        bad.len(),
                        model::normalize(bad[0])
                            .err()
                            .map(|e| e.to_string())
                            .unwrap_or_default()
                    ));
                }
                let mut reply = self.add_seeds(&mut list, &good)?;
                for b in &bad {
                    let why = model::normalize(b)
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_default();
                    reply.human.push_str(&format!("\nskipped: {why}"));
                }
                Ok(reply)
            }
            ["remove", url] => {
                let norm = model::normalize(url).map_err(|e| e.to_string())?;
                let before = list.urls.len();
                list.urls.retain(|u| u != norm.as_str());
                if list.urls.len() == before {
                    return Err(format!("{url} is not a seed (seed list shows them)"));
                }
                self.write_seeds(&list)?;
                Ok(Reply::text(format!(
                    "removed {norm} from the seeds (URLs already queued stay queued)"
                )))
            }
            _ => Err(
                "usage: seed add URL... | seed list | seed remove URL | seed import FILE".into(),
            ),
        }
    }

    fn add_seeds(&mut self, list: &mut SeedList, urls: &[&str]) -> Result<Reply, String> {
        // Validate all first: a bad URL adds nothing.
        let norm = urls
            .iter()
            .map(|u| model::normalize(u).map_err(|e| format!("bad seed: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut added = 0;
        for n in &norm {
            if !list.urls.iter().any(|u| u == n.as_str()) {
                list.urls.push(n.as_str().to_string());
                added += 1;
            }
        }
        self.write_seeds(list)?;
        let live = match &self.crawl {
            Some(r) => {
                r.handle
                    .add_seeds(norm.iter().map(|n| n.as_str().to_string()).collect());
                " (queued in the running crawl)"
            }
            None => "",
        };
        Ok(Reply::text(format!(
            "{added} seed(s) added, {} in all{live}",
            list.urls.len()
        )))
    }

    fn write_seeds(&self, list: &SeedList) -> Result<(), String> {
        let mut b = self.store.batch();
        b.put(CF_META, meta_keys::SEEDS, list);
        b.write().map_err(|e| e.to_string())
    }

    pub(super) fn cmd_set(&mut self, args: &[&str]) -> Result<Reply, String> {
        let [name, value @ ..] = args else {
            return Err("usage: set KEY VALUE (config lists keys)".into());
        };
        if value.is_empty() {
            return Err(format!("usage: set {name} VALUE"));
        }
        let key = find_key(name)?;
        let mut s = self.settings.clone();
        key.set(&mut s, &value.join(" "))?;
        self.settings = s;
        self.persist_settings()?;
        let live = match &self.crawl {
            Some(r) => {
                r.handle.set_settings(self.settings.clone());
                " (applied to the running crawl)"
            }
            None => "",
        };
        Ok(Reply::text(format!(
            "{} = {}{live}",
            key.name,
            key.get(&self.settings)
        )))
    }

    pub(super) fn cmd_domains(&mut self, args: &[&str]) -> Result<Reply, String> {
        let usage = "usage: domains | domains key add|remove|list [NAME...] | domains common add|remove|list [LABEL...]";
        let mut s = self.settings.clone();
        let f = &mut s.filter;
        match args {
            [] | ["key", "list"] | ["common", "list"] => {
                let seeds = self.store.seeds().map_err(|e| e.to_string())?.urls;
                let hosts: Vec<String> = seeds
                    .iter()
                    .filter_map(|u| model::normalize(u).ok())
                    .map(|u| u.host().to_string())
                    .collect();
                let built = crate::filter::Filters::new(f, hosts.iter().map(String::as_str));
                let keys = built.domain.keys().join(" ");
                let common = f.common_domains.join(" ");
                let text = match args {
                    ["key", ..] => keys.clone(),
                    ["common", ..] => common.clone(),
                    _ => format!("key domains     {keys}\ncommon domains  {common}"),
                };
                return Ok(Reply::with(
                    text,
                    serde_json::json!({"key": built.domain.keys(), "common": f.common_domains}),
                ));
            }
            ["key", "add", names @ ..] if !names.is_empty() => {
                for n in names {
                    let n = n.to_ascii_lowercase().replace('-', "");
                    f.removed_keys.retain(|k| *k != n);
                    if !f.extra_keys.contains(&n) {
                        f.extra_keys.push(n);
                    }
                }
            }
            ["key", "remove", names @ ..] if !names.is_empty() => {
                for n in names {
                    let n = n.to_ascii_lowercase();
                    f.extra_keys.retain(|k| *k != n);
                    if !f.removed_keys.contains(&n) {
                        f.removed_keys.push(n);
                    }
                }
            }
            ["common", "add", labels @ ..] if !labels.is_empty() => {
                for l in labels {
                    let l = l.to_ascii_lowercase();
                    if !f.common_domains.contains(&l) {
                        f.common_domains.push(l);
                    }
                }
            }
            ["common", "remove", labels @ ..] if !labels.is_empty() => {
                let before = f.common_domains.len();
                f.common_domains
                    .retain(|c| !labels.iter().any(|l| l.eq_ignore_ascii_case(c)));
                if f.common_domains.len() == before {
                    return Err(format!("none of {} is a common domain", labels.join(" ")));
                }
            }
            _ => return Err(usage.into()),
        }
        self.settings = s;
        self.persist_settings()?;
        if let Some(r) = &self.crawl {
            r.handle.set_settings(self.settings.clone());
        }
        self.cmd_domains(&[])
    }

    pub(super) fn cmd_get(&mut self, args: &[&str]) -> Result<Reply, String> {
        let [name] = args else {
            return Err("usage: get KEY".into());
        };
        let key = find_key(name)?;
        let v = key.get(&self.settings);
        Ok(Reply::with(
            format!("{} = {v}", key.name),
            serde_json::json!({ "key": key.name, "value": v }),
        ))
    }

    pub(super) fn cmd_config(&mut self, args: &[&str]) -> Result<Reply, String> {
        match args {
            [] => {
                let rows: Vec<Vec<String>> = config::KEYS
                    .iter()
                    .map(|k| {
                        vec![
                            k.name.into(),
                            k.get(&self.settings),
                            k.default_value(),
                            k.meaning.into(),
                        ]
                    })
                    .collect();
                let json: Vec<_> = config::KEYS
                    .iter()
                    .map(|k| serde_json::json!({"key": k.name, "value": k.get(&self.settings), "default": k.default_value(), "type": k.type_name(), "meaning": k.meaning}))
                    .collect();
                Ok(Reply::with(
                    table::render(&["key", "value", "default", "meaning"], &rows, self.width),
                    serde_json::json!(json),
                ))
            }
            ["save", file] | ["save", file, "--force"] | ["save", "--force", file] => {
                let force = args.contains(&"--force");
                let path = std::path::Path::new(file);
                if !force
                    && let Some(first) = first_line(path)
                    && first != CONFIG_HEADER
                {
                    return Err(format!(
                        "{file} exists and is not a trawl config (its first line is not the `config save` header); pass --force to overwrite it"
                    ));
                }
                let mut text = format!("{CONFIG_HEADER}\n");
                for k in config::KEYS {
                    let v = k.get(&self.settings);
                    if v != k.default_value() {
                        text.push_str(&format!("set {} {}\n", k.name, super::quote(&v)));
                    }
                }
                for s in self.store.seeds().map_err(|e| e.to_string())?.urls {
                    text.push_str(&format!("seed add {}\n", super::quote(&s)));
                }
                std::fs::write(file, text).map_err(|e| format!("cannot write {file}: {e}"))?;
                Ok(Reply::text(format!("settings and seeds written to {file}")))
            }
            _ => Err("usage: config | config save FILE [--force]".into()),
        }
    }

    pub(super) fn cmd_crawl(&mut self, args: &[&str]) -> Result<Reply, String> {
        match args {
            ["start"] => {
                if self.crawl.is_some() {
                    return Err("a crawl is already running (crawl stop ends it)".into());
                }
                let seeds = self.store.seeds().map_err(|e| e.to_string())?.urls;
                let queued = self.store.counters().map_err(|e| e.to_string())?.queued;
                if seeds.is_empty() && queued == 0 {
                    return Err("nothing to crawl: add seeds first (seed add URL)".into());
                }
                let _guard = self.rt.enter();
                let (handle, join) =
                    crawl::start(self.store.clone(), self.settings.clone(), &seeds)
                        .map_err(|e| e.to_string())?;
                self.crawl = Some(Running { handle, join });
                Ok(Reply::text(format!(
                    "crawl started from {} seed(s); status shows progress, crawl wait waits",
                    seeds.len()
                )))
            }
            ["pause"] => {
                self.running()?.pause();
                Ok(Reply::text(
                    "crawl paused (fetches in flight finish; crawl resume goes on)".into(),
                ))
            }
            ["resume"] => {
                self.running()?.resume();
                Ok(Reply::text("crawl resumed".into()))
            }
            ["stop"] => {
                self.running()?.stop();
                self.wait(None, None)?;
                Ok(Reply::none())
            }
            ["wait", opts @ ..] => {
                let (mut pages, mut secs) = (None, None);
                let mut it = opts.iter();
                while let Some(o) = it.next() {
                    let v = it.next().ok_or_else(|| format!("{o} needs a value"))?;
                    match *o {
                        "--pages" => {
                            pages = Some(
                                v.parse::<u64>()
                                    .map_err(|_| format!("--pages {v}: not a number"))?,
                            )
                        }
                        "--secs" => secs = Some(config::parse_duration(v)?),
                        _ => return Err(format!("unknown option {o}; use --pages N or --secs N")),
                    }
                }
                if self.crawl.is_none() {
                    return Ok(Reply::text("no crawl is running".into()));
                }
                self.wait(pages, secs)?;
                Ok(Reply::none())
            }
            _ => Err(
                "usage: crawl start | pause | resume | stop | wait [--pages N] [--secs N]".into(),
            ),
        }
    }

    pub(super) fn cmd_reindex(&mut self, args: &[&str]) -> Result<Reply, String> {
        if !args.is_empty() {
            return Err("usage: reindex".into());
        }
        let total = self.store.counters().map_err(|e| e.to_string())?.fetched;
        let started = Instant::now();
        let interrupt = self.interrupt.clone();
        let tty = self.progress_tty;
        let (n, complete) = self
            .store
            .reindex_pages(&mut |done| {
                if tty {
                    eprint!(
                        "\r\x1b[Kreindex: {} of {} pages",
                        table::thousands(done),
                        table::thousands(total)
                    );
                }
                !interrupt.swap(false, std::sync::atomic::Ordering::SeqCst)
            })
            .map_err(|e| e.to_string())?;
        if tty {
            eprint!("\r\x1b[K");
        }
        if !complete {
            return Err(format!(
                "interrupted after {} pages; the index stays incomplete and queries scan until reindex finishes",
                table::thousands(n)
            ));
        }
        Ok(Reply::with(
            format!(
                "indexed {} pages in {:.1} s",
                table::thousands(n),
                started.elapsed().as_secs_f64()
            ),
            serde_json::json!({ "pages": n }),
        ))
    }

    pub(super) fn cmd_refilter(&mut self, args: &[&str]) -> Result<Reply, String> {
        let dry_run = match args {
            [] => false,
            ["--dry-run"] => true,
            _ => return Err("usage: refilter [--dry-run]".into()),
        };
        if self.crawl.is_some() {
            return Err("a crawl is running; crawl stop first (refilter rewrites verdicts and the frontier), then crawl start".into());
        }
        let interrupt = self.interrupt.clone();
        let tty = self.progress_tty;
        let mut last = Instant::now();
        let mut progress = |done: u64, total: u64| {
            if tty && last.elapsed() >= Duration::from_millis(200) {
                last = Instant::now();
                eprint!(
                    "\r\x1b[Krefilter: {} of {} pages",
                    table::thousands(done),
                    table::thousands(total)
                );
            }
            !interrupt.swap(false, std::sync::atomic::Ordering::SeqCst)
        };
        let r = crawl::refilter(
            self.store.clone(),
            self.settings.clone(),
            dry_run,
            &mut progress,
        )
        .map_err(|e| e.to_string())?;
        if tty {
            eprint!("\r\x1b[K");
        }
        let secs = r.elapsed.as_secs_f64();
        let mut t = format!(
            "refilter{}{}: {} pages in {secs:.2} s ({:.0} pages/s)\n",
            if r.dry_run {
                " (dry run, nothing written)"
            } else {
                ""
            },
            if r.interrupted { " interrupted" } else { "" },
            table::thousands(r.pages),
            r.pages as f64 / secs.max(1e-9)
        );
        let verdicts: std::collections::BTreeSet<&String> =
            r.before.keys().chain(r.after.keys()).collect();
        let rows: Vec<Vec<String>> = verdicts
            .iter()
            .map(|v| {
                vec![
                    v.to_string(),
                    r.before.get(*v).copied().unwrap_or(0).to_string(),
                    r.after.get(*v).copied().unwrap_or(0).to_string(),
                ]
            })
            .collect();
        t += &table::render(&["verdict", "before", "after"], &rows, self.width);
        t += &format!("{} page(s) changed verdict", r.changed);
        for (u, a, b) in &r.sample {
            t += &format!("\n  {a} → {b}  {u}");
        }
        t += &format!(
            "\nlinks re-judged {}, URLs queued {}, dropped from the frontier {}",
            r.links_changed, r.enqueued, r.dropped
        );
        let j = serde_json::json!({
            "dry_run": r.dry_run, "interrupted": r.interrupted, "pages": r.pages, "seconds": secs,
            "before": r.before, "after": r.after, "changed": r.changed,
            "sample": r.sample.iter().map(|(u, a, b)| serde_json::json!({"url": u, "before": a, "after": b})).collect::<Vec<_>>(),
            "links_changed": r.links_changed, "enqueued": r.enqueued, "dropped": r.dropped,
        });
        if r.interrupted {
            self.say(&t);
            return Err("interrupted (pages done so far keep their new verdicts)".into());
        }
        Ok(Reply::with(t, j))
    }

    fn running(&self) -> Result<&crawl::CrawlHandle, String> {
        self.crawl
            .as_ref()
            .map(|r| &r.handle)
            .ok_or_else(|| "no crawl is running (crawl start)".into())
    }

    /// Blocks until the crawl ends, the db holds `pages` fetched pages, or
    /// `secs` pass; Ctrl-C ends the wait, not the crawl.
    fn wait(&mut self, pages: Option<u64>, secs: Option<Duration>) -> Result<(), String> {
        let start = Instant::now();
        while let Some(r) = &self.crawl {
            if r.join.is_finished() {
                break;
            }
            let snap = r.handle.snapshot();
            if pages.is_some_and(|p| snap.counters.fetched >= p)
                || secs.is_some_and(|s| start.elapsed() >= s)
            {
                return Ok(());
            }
            if snap.state == CrawlState::Paused && pages.is_none() && secs.is_none() {
                return Err("the crawl is paused; crawl resume first, or wait with --secs".into());
            }
            if self.interrupted() {
                self.progress_done();
                return Err("interrupted (the crawl goes on)".into());
            }
            self.progress(&format!(
                "waiting: {} fetched, {} queued, {} in flight, {:.0} pages/s",
                table::thousands(snap.counters.fetched),
                table::thousands(snap.counters.queued),
                snap.in_flight,
                snap.recent_rate
            ));
            std::thread::sleep(Duration::from_millis(50));
        }
        self.progress_done();
        self.reap();
        Ok(())
    }
}

fn find_key(name: &str) -> Result<&'static config::Key, String> {
    config::find(name).ok_or_else(|| {
        match config::nearest(name, config::KEYS.iter().map(|k| k.name)) {
            Some(n) => format!("unknown setting {name:?}; did you mean {n}?"),
            None => format!("unknown setting {name:?}; config lists them"),
        }
    })
}

/// The first line of every file `config save` writes; a file that starts
/// otherwise is not overwritten without `--force`.
const CONFIG_HEADER: &str =
    "# trawl settings, written by `config save`; run with `source` or `trawl run`";

/// The first line of `path`, if it is a file that can be read.
fn first_line(path: &std::path::Path) -> Option<String> {
    use std::io::BufRead;
    let f = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    // A file that is not text has no header either.
    match std::io::BufReader::new(f).read_line(&mut line) {
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
        Err(_) => Some(String::new()),
    }
}
