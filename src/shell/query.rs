//! Read-only queries over the database (and the running crawl's snapshot).

use serde_json::json;

use super::expr::{self, Val};
use super::plan;
use super::{Reply, Shell, err, table};
use crate::model::{self, HostId, UrlId, now_ms};
use crate::schema::{
    CF_FRONTIER, CF_HOSTS, CF_INLINKS, CF_META, CF_PAGE_INDEX, CF_PAGES, DocRecord, FrontierEntry,
    FrontierKey, HostRecord, LinkKey, LinkRecord, PageRecord, RobotsOutcome, RunRecord, SeenState,
    Versioned, meta_keys, page_index,
};
use crate::store::{self, Store, StoreError};

impl Shell {
    pub(super) fn cmd_status(&mut self) -> Result<Reply, String> {
        let (state, snap) = match &self.crawl {
            Some(r) => {
                let s = r.handle.snapshot();
                (format!("{:?}", s.state).to_lowercase(), Some(s))
            }
            None => ("idle".to_string(), None),
        };
        let c = match &snap {
            Some(s) => s.counters.clone(),
            None => self.store.counters().map_err(err)?,
        };
        let failed: u64 = c.failed.values().sum();
        let filtered: u64 = c.filtered.values().sum();
        let (recent, overall, elapsed, run_fetched, active) =
            snap.as_ref().map_or((0.0, 0.0, 0.0, 0, 0), |s| {
                let e = s.elapsed.as_secs_f64();
                (
                    s.recent_rate,
                    s.run_fetched as f64 / e.max(1e-9),
                    e,
                    s.run_fetched,
                    s.active_hosts,
                )
            });
        let tlp = elapsed * run_fetched as f64;
        let mut h = format!("state       {state}\n");
        h += &format!(
            "fetched     {} ({} this run)\n",
            table::thousands(c.fetched),
            table::thousands(run_fetched)
        );
        h += &format!("queued      {}\n", table::thousands(c.queued));
        h += &format!(
            "failed      {}{}\n",
            table::thousands(failed),
            breakdown(&c.failed)
        );
        h += &format!(
            "filtered    {}{}\n",
            table::thousands(filtered),
            breakdown(&c.filtered)
        );
        h += &format!("duplicates  {}\n", table::thousands(c.duplicates));
        h += &format!("pages/s     {recent:.0} (last 10 s), {overall:.0} (this run)\n");
        h += &format!("bytes       {}\n", table::bytes(c.bytes));
        h += &format!("hosts       {active} active\n");
        h += &format!("elapsed     {elapsed:.1} s\n");
        h += &format!("TLP         {tlp:.1}");
        let j = json!({
            "state": state, "fetched": c.fetched, "run_fetched": run_fetched, "queued": c.queued,
            "failed": c.failed, "filtered": c.filtered, "duplicates": c.duplicates, "links": c.links,
            "pages_per_sec_10s": recent, "pages_per_sec_run": overall, "bytes": c.bytes,
            "active_hosts": active, "elapsed_secs": elapsed, "tlp": tlp, "by_status": c.by_status,
        });
        Ok(Reply::with(h, j))
    }

    pub(super) fn cmd_runs(&mut self, args: &[&str]) -> Result<Reply, String> {
        let mut runs: Vec<RunRecord> = Vec::new();
        for row in self.store.scan(CF_META, meta_keys::RUN_PREFIX) {
            let (_, v) = row.map_err(err)?;
            if let Ok(r) = RunRecord::decode(&v) {
                runs.push(r);
            }
        }
        let setting = |r: &RunRecord, k: &str| {
            r.settings
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        match args {
            [] => {
                let rows: Vec<Vec<String>> = runs
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        vec![
                            (i + 1).to_string(),
                            table::time(r.started_ms),
                            format!("{:.2}", r.elapsed_ms as f64 / 1000.0),
                            r.fetched.to_string(),
                            format!("{:.1}", r.tlp),
                            setting(r, "filter.mode"),
                            setting(r, "crawl.depth"),
                            if r.ended_ms == 0 {
                                "unfinished".into()
                            } else if r.interrupted {
                                "stopped".into()
                            } else {
                                "done".into()
                            },
                        ]
                    })
                    .collect();
                let j: Vec<_> = runs.iter().enumerate().map(|(i, r)| json!({"run": i + 1, "started_ms": r.started_ms, "ended_ms": r.ended_ms,
                    "elapsed_secs": r.elapsed_ms as f64 / 1000.0, "links_fetched": r.fetched, "links_found": r.links, "tlp": r.tlp,
                    "interrupted": r.interrupted, "settings": r.settings.iter().cloned().collect::<std::collections::BTreeMap<_, _>>()})).collect();
                let h = table::render(
                    &[
                        "run",
                        "started",
                        "secs",
                        "links fetched",
                        "TLP",
                        "mode",
                        "depth",
                        "end",
                    ],
                    &rows,
                    self.width,
                );
                Ok(Reply::with(h, json!(j)))
            }
            ["compare", a, b] => {
                let pick = |n: &str| {
                    n.parse::<usize>()
                        .ok()
                        .filter(|i| *i >= 1 && *i <= runs.len())
                        .map(|i| &runs[i - 1])
                        .ok_or_else(|| format!("no run {n}; runs lists {} run(s)", runs.len()))
                };
                let (ra, rb) = (pick(a)?, pick(b)?);
                let mut rows = vec![
                    vec![
                        "links fetched".into(),
                        ra.fetched.to_string(),
                        rb.fetched.to_string(),
                    ],
                    vec![
                        "time (s)".into(),
                        format!("{:.2}", ra.elapsed_ms as f64 / 1000.0),
                        format!("{:.2}", rb.elapsed_ms as f64 / 1000.0),
                    ],
                    vec![
                        "TLP".into(),
                        format!("{:.1}", ra.tlp),
                        format!("{:.1}", rb.tlp),
                    ],
                    vec![
                        "links found".into(),
                        ra.links.to_string(),
                        rb.links.to_string(),
                    ],
                ];
                let mut keys: Vec<&String> = ra
                    .settings
                    .iter()
                    .chain(&rb.settings)
                    .map(|(k, _)| k)
                    .collect();
                keys.dedup();
                let mut seen = std::collections::BTreeSet::new();
                for k in keys {
                    if seen.insert(k.clone()) {
                        rows.push(vec![k.clone(), setting(ra, k), setting(rb, k)]);
                    }
                }
                let h = table::render(
                    &["", &format!("run {a}"), &format!("run {b}")],
                    &rows,
                    self.width,
                );
                let j = json!({"a": {"fetched": ra.fetched, "tlp": ra.tlp, "elapsed_ms": ra.elapsed_ms, "settings": ra.settings},
                    "b": {"fetched": rb.fetched, "tlp": rb.tlp, "elapsed_ms": rb.elapsed_ms, "settings": rb.settings}});
                Ok(Reply::with(h, j))
            }
            _ => Err("usage: runs | runs compare A B".into()),
        }
    }

    pub(super) fn cmd_frontier(&mut self, args: &[&str]) -> Result<Reply, String> {
        let (rows, title): (Vec<(FrontierKey, FrontierEntry)>, &str) = match args {
            [] => {
                let q = match &self.crawl {
                    Some(r) => r.handle.snapshot().counters.queued,
                    None => self.store.counters().map_err(err)?.queued,
                };
                return Ok(Reply::with(
                    format!("{} URLs queued", table::thousands(q)),
                    json!({ "queued": q }),
                ));
            }
            ["top", n] => (
                self.frontier_rows(&[], parse_n(n)?)?,
                "next in the frontier",
            ),
            ["host", host] => {
                let (id, _) = self.resolve_host(host)?;
                (
                    self.frontier_rows(&id.to_bytes(), 50)?,
                    "queued for the host",
                )
            }
            _ => return Err("usage: frontier | frontier top N | frontier host HOST".into()),
        };
        let table_rows: Vec<Vec<String>> = rows
            .iter()
            .map(|(_, e)| vec![e.depth.to_string(), e.attempts.to_string(), e.url.clone()])
            .collect();
        let j: Vec<_> = rows
            .iter()
            .map(|(_, e)| json!({"url": e.url, "depth": e.depth, "attempts": e.attempts}))
            .collect();
        let human = if rows.is_empty() {
            format!("nothing {title}")
        } else {
            table::render(&["depth", "tries", "url"], &table_rows, self.width)
        };
        Ok(Reply::with(human, json!(j)))
    }

    fn frontier_rows(
        &self,
        prefix: &[u8],
        n: usize,
    ) -> Result<Vec<(FrontierKey, FrontierEntry)>, String> {
        let mut out = Vec::new();
        for row in self.store.scan(CF_FRONTIER, prefix).take(n) {
            let (k, v) = row.map_err(err)?;
            if let (Some(k), Ok(e)) = (FrontierKey::from_key(&k), FrontierEntry::decode(&v)) {
                out.push((k, e));
            }
        }
        Ok(out)
    }

    /// A host given as `example.org`, `example.org:8080` or a URL.
    fn resolve_host(&self, host: &str) -> Result<(HostId, HostRecord), String> {
        let candidates: Vec<String> = if host.contains("://") {
            vec![host.to_string()]
        } else {
            vec![format!("http://{host}/"), format!("https://{host}/")]
        };
        for c in candidates {
            if let Ok(u) = model::normalize(&c)
                && let Some(rec) = self.store.host(u.host_id()).map_err(err)?
            {
                return Ok((u.host_id(), rec));
            }
        }
        Err(format!("host {host} is not in the db (hosts lists them)"))
    }

    pub(super) fn cmd_hosts(&mut self, args: &[&str]) -> Result<Reply, String> {
        let (n, by) = match args {
            [] => (20, "pages"),
            ["top", n] => (parse_n(n)?, "pages"),
            ["top", n, "by", by] => (parse_n(n)?, *by),
            _ => return Err("usage: hosts [top N [by pages|errors|queue]]".into()),
        };
        let key: fn(&HostRecord) -> u64 = match by {
            "pages" => |h| h.fetched,
            "errors" => |h| h.errors,
            "queue" => |h| h.queued,
            other => {
                return Err(format!(
                    "hosts: cannot rank by {other:?}; use pages, errors or queue"
                ));
            }
        };
        let mut hosts = Vec::new();
        for row in self.store.scan(CF_HOSTS, &[]) {
            let (_, v) = row.map_err(err)?;
            if let Ok(h) = HostRecord::decode(&v) {
                hosts.push(h);
            }
            if self.interrupted() {
                return Err("interrupted".into());
            }
        }
        hosts.sort_by_key(|h| std::cmp::Reverse(key(h)));
        hosts.truncate(n);
        let rows: Vec<Vec<String>> = hosts
            .iter()
            .map(|h| {
                vec![
                    h.fetched.to_string(),
                    h.errors.to_string(),
                    h.queued.to_string(),
                    h.origin.clone(),
                ]
            })
            .collect();
        let j: Vec<_> = hosts.iter().map(|h| json!({"host": h.origin, "pages": h.fetched, "errors": h.errors, "queued": h.queued})).collect();
        Ok(Reply::with(
            table::render(&["pages", "errors", "queued", "host"], &rows, self.width),
            json!(j),
        ))
    }

    pub(super) fn cmd_host(&mut self, args: &[&str]) -> Result<Reply, String> {
        let [host] = args else {
            return Err("usage: host HOST".into());
        };
        let (_, h) = self.resolve_host(host)?;
        let (robots, rules) = match &h.robots {
            None => ("not fetched yet".to_string(), String::new()),
            Some(r) => {
                let what = match &r.outcome {
                    RobotsOutcome::Fetched { status } => {
                        format!("fetched ({status}) {}", table::time(r.fetched_ms))
                    }
                    RobotsOutcome::Unavailable { status } => {
                        format!("{status}: no robots.txt, everything allowed")
                    }
                    RobotsOutcome::Unreachable { detail } => format!(
                        "unreachable ({detail}), {} failure(s): nothing allowed",
                        r.failures
                    ),
                    RobotsOutcome::TooManyRedirects => {
                        "too many redirects: everything allowed".into()
                    }
                };
                (
                    format!("{what}; expires {}", table::time(r.expires_ms)),
                    String::from_utf8_lossy(&r.body).into_owned(),
                )
            }
        };
        let delay = match h.crawl_delay_ms {
            Some(ms) => format!(
                "{ms} ms{}",
                if h.crawl_delay_capped {
                    " (capped)"
                } else {
                    ""
                }
            ),
            None => "none".into(),
        };
        let mut t = format!(
            "host          {}\nrobots.txt    {robots}\ncrawl-delay   {delay}\n",
            h.origin
        );
        t += &format!(
            "next fetch    {}\nerror streak  {}\npages         {}\nerrors        {}\nqueued        {}",
            table::time(h.next_fetch_ms),
            h.error_streak,
            h.fetched,
            h.errors,
            h.queued
        );
        if !rules.trim().is_empty() {
            t += "\nrules:\n";
            for l in rules.lines().take(60) {
                t += &format!("  {l}\n");
            }
        }
        let j = json!({"host": h.origin, "robots": robots, "robots_txt": rules, "crawl_delay_ms": h.crawl_delay_ms,
            "crawl_delay_capped": h.crawl_delay_capped, "next_fetch_ms": h.next_fetch_ms, "error_streak": h.error_streak,
            "pages": h.fetched, "errors": h.errors, "queued": h.queued});
        Ok(Reply::with(t, j))
    }

    pub(super) fn url_arg(&self, url: &str) -> Result<model::CanonicalUrl, String> {
        model::normalize(url).map_err(err)
    }

    pub(super) fn cmd_page(&mut self, args: &[&str]) -> Result<Reply, String> {
        let (url, raw) = match args {
            [u] => (*u, false),
            [u, "--raw"] | ["--raw", u] => (*u, true),
            _ => return Err("usage: page URL [--raw]".into()),
        };
        let u = self.url_arg(url)?;
        let page = self
            .store
            .page(u.id())
            .map_err(err)?
            .ok_or_else(|| format!("{u} has no stored page (why {u} says why)"))?;
        let body = zstd::decode_all(&page.body_zstd[..])
            .map_err(|e| format!("stored body unreadable: {e}"))?;
        if raw {
            let ct = Some(page.content_type.as_str()).filter(|c| !c.is_empty());
            let text = if crate::parse::is_html(&page.content_type)
                || page.content_type.starts_with("text/")
            {
                crate::parse::decode(&body, ct).text
            } else {
                String::from_utf8_lossy(&body).into_owned()
            };
            return Ok(Reply::with(
                text.clone(),
                json!({ "url": page.url, "body": text }),
            ));
        }
        let doc = self.store.doc(u.id()).map_err(err)?;
        let outs = self.links_from(u.id(), 20)?;
        let ins = self.links_to(u.id(), 20)?;
        let d = doc.clone().unwrap_or_default();
        let excerpt: String = d.text.chars().take(400).collect();
        let mut t = format!(
            "url           {}\nstatus        {} {}\n",
            page.url, page.status, page.http_version
        );
        t += &format!(
            "fetched       {} in {} ms, depth {}\n",
            table::time(page.fetched_ms),
            page.elapsed_ms,
            page.depth
        );
        t += &format!(
            "type          {}\nsize          {}{}\n",
            page.content_type,
            table::bytes(page.body_len),
            if page.truncated {
                " (truncated at the cap)"
            } else {
                ""
            }
        );
        if let Some(r) = &page.redirect_to {
            t += &format!("redirects to  {r}\n");
        }
        if doc.is_some() {
            t += &format!(
                "title         {}\ncharset       {} (from {})\n",
                d.title, d.charset, d.charset_source
            );
            if let Some(c) = &d.canonical {
                t += &format!("canonical     {c}\n");
            }
            if let Some(dup) = d.duplicate_of {
                t += &format!(
                    "duplicate of  {}\n",
                    self.store.url(UrlId(dup)).map_err(err)?.unwrap_or_default()
                );
            }
            if !d.verdict.is_empty() {
                t += &format!(
                    "verdict       {}{}\n",
                    d.verdict,
                    if d.verdict_detail.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", d.verdict_detail)
                    }
                );
            }
            if let Some(ts) = d.topic_score {
                t += &format!("topic score   {ts:.4}\n");
            }
            if let Some(r) = d.relevance {
                t += &format!("relevance     {r:.4}\n");
            }
            if d.noindex || d.nofollow {
                t += &format!(
                    "meta robots   {}{}\n",
                    if d.noindex { "noindex " } else { "" },
                    if d.nofollow { "nofollow" } else { "" }
                );
            }
        }
        t += "headers:\n";
        for (k, v) in &page.headers {
            t += &format!("  {k}: {v}\n");
        }
        if !excerpt.is_empty() {
            t += &format!("text:\n  {}\n", excerpt.replace('\n', "\n  "));
        }
        t += &format!("out-links ({}):\n", d.outlinks);
        for (url, l) in &outs {
            t += &format!("  {url}  [{}] {} {}\n", l.anchor, l.link_type, l.verdict);
        }
        t += &format!("in-links (first {}):\n", ins.len());
        for url in &ins {
            t += &format!("  {url}\n");
        }
        let j = json!({
            "url": page.url, "status": page.status, "http_version": page.http_version, "fetched_ms": page.fetched_ms,
            "depth": page.depth, "content_type": page.content_type, "size": page.body_len, "truncated": page.truncated,
            "redirect_to": page.redirect_to, "headers": page.headers, "title": d.title, "charset": d.charset,
            "text": d.text, "canonical": d.canonical, "noindex": d.noindex, "nofollow": d.nofollow,
            "verdict": d.verdict, "verdict_detail": d.verdict_detail, "topic_score": d.topic_score, "relevance": d.relevance,
            "duplicate_of": d.duplicate_of.map(|x| format!("{:032x}", x)),
            "outlinks": outs.iter().map(|(u, l)| json!({"url": u, "anchor": l.anchor, "before": l.before, "after": l.after, "nofollow": l.nofollow, "link_type": l.link_type, "verdict": l.verdict, "verdict_detail": l.verdict_detail})).collect::<Vec<_>>(),
            "inlinks": ins,
        });
        Ok(Reply::with(t.trim_end().to_string(), j))
    }

    fn links_from(&self, id: UrlId, n: usize) -> Result<Vec<(String, LinkRecord)>, String> {
        let links = self.store.links_from(id, n).map_err(err)?;
        // Rows before link version 4 lack the target's URL: one MultiGet
        // of `urls` for those.
        let missing: Vec<UrlId> = links
            .iter()
            .filter(|(_, l)| l.dst_url.is_empty())
            .map(|(id, _)| *id)
            .collect();
        let mut looked_up = self.urls_of(&missing)?.into_iter();
        Ok(links
            .into_iter()
            .map(|(_, mut l)| {
                let url = if l.dst_url.is_empty() {
                    looked_up.next().unwrap_or_default()
                } else {
                    std::mem::take(&mut l.dst_url)
                };
                (url, l)
            })
            .collect())
    }

    fn links_to(&self, id: UrlId, n: usize) -> Result<Vec<String>, String> {
        let mut ids = Vec::new();
        for row in self.store.scan(CF_INLINKS, &id.to_bytes()).take(n) {
            let (k, _) = row.map_err(err)?;
            if let Some(k) = LinkKey::from_key(&k) {
                ids.push(k.second);
            }
        }
        self.urls_of(&ids)
    }

    /// The URLs of `ids`, in order; an id without a `urls` row shows as hex.
    fn urls_of(&self, ids: &[UrlId]) -> Result<Vec<String>, String> {
        let urls = self.store.urls_many(ids).map_err(err)?;
        Ok(urls
            .into_iter()
            .zip(ids)
            .map(|(u, id)| u.unwrap_or_else(|| id.to_string()))
            .collect())
    }

    pub(super) fn cmd_links(&mut self, args: &[&str]) -> Result<Reply, String> {
        let (dir, url) = match args {
            ["from", u] => (true, *u),
            ["to", u] => (false, *u),
            _ => return Err("usage: links from URL | links to URL".into()),
        };
        let u = self.url_arg(url)?;
        if self.store.seen(u.id()).map_err(err)?.is_none() {
            return Err(format!("{u} is not in the db"));
        }
        if dir {
            let links = self.links_from(u.id(), usize::MAX)?;
            let rows: Vec<Vec<String>> = links
                .iter()
                .map(|(t, l)| {
                    vec![
                        l.anchor.clone(),
                        l.link_type.clone(),
                        l.verdict.clone(),
                        t.clone(),
                    ]
                })
                .collect();
            let j: Vec<_> = links
                .iter()
                .map(|(t, l)| json!({"url": t, "anchor": l.anchor, "before": l.before, "after": l.after, "nofollow": l.nofollow,
                    "link_type": l.link_type, "verdict": l.verdict, "verdict_detail": l.verdict_detail}))
                .collect();
            Ok(Reply::with(
                table::render(&["anchor", "type", "verdict", "url"], &rows, self.width),
                json!(j),
            ))
        } else {
            let links = self.links_to(u.id(), usize::MAX)?;
            let rows: Vec<Vec<String>> = links.iter().map(|t| vec![t.clone()]).collect();
            Ok(Reply::with(
                table::render(&["linked from"], &rows, self.width),
                json!(links),
            ))
        }
    }

    pub(super) fn cmd_pages(
        &mut self,
        src: &str,
        base: usize,
        count_only: bool,
        json_out: bool,
    ) -> Result<Reply, String> {
        let q = expr::parse_query(src, base)?;
        let needs_inlinks = q.filter.uses("inlinks") || q.order.is_some_and(|o| o.0 == "inlinks");
        let now = now_ms() as f64;
        let mut matched: Vec<(PageRecord, DocRecord, u64)> = Vec::new();
        let mut count = 0u64;
        // Without an order, rows stream and the scan stops at the limit.
        let early_stop = q.order.is_none().then_some(q.limit).flatten();
        let stream = !json_out && !count_only && q.order.is_none();
        let total = self.store.counters().map_err(err)?.fetched;
        let indexed = self
            .store
            .get_raw(CF_META, meta_keys::PAGE_INDEX_COMPLETE)
            .map_err(err)?
            .is_some();
        let plan = if indexed {
            plan::index_scan(&q.filter)
        } else {
            None
        };
        // A count over index candidates whose filter reads only what the
        // `seen` row (status, depth) and the `urls` row (url, host) hold is
        // checked there: small rows instead of the page's record and text
        // in blob files (`count pages where status = 200` over 1,000,004
        // pages took 255 s that way).
        let light = count_only && plan.is_some() && q.filter.uses_only(&LIGHT_FIELDS);
        let store = self.store.clone();
        // Candidate pages: every page, or the rows of one index range.
        let candidates: Box<dyn Iterator<Item = Result<Candidate, String>>> = match &plan {
            None => Box::new(store.scan(CF_PAGES, &[]).map(|r| {
                let (k, v) = r.map_err(err)?;
                let id = UrlId::from_slice(&k).unwrap_or(UrlId(0));
                Ok(Candidate::Read(id, PageRecord::decode(&v).ok()))
            })),
            Some(plan::IndexScan::Prefix(p)) => Box::new(
                store
                    .scan(CF_PAGE_INDEX, p)
                    .map(|r| indexed_page(&store, r, light)),
            ),
            Some(plan::IndexScan::Range(from, to)) => Box::new(
                store
                    .scan_range(CF_PAGE_INDEX, from, Some(to))
                    .map(|r| indexed_page(&store, r, light)),
            ),
        };
        // A refetch that changed a page's status leaves it two index rows.
        let mut yielded = std::collections::HashSet::new();
        let mut scanned = 0u64;
        for row in candidates {
            if self.interrupted() {
                self.progress_done();
                return Err("interrupted".into());
            }
            scanned += 1;
            if scanned.is_multiple_of(1024) {
                let what = if plan.is_some() {
                    format!("checking index candidates: {}", table::thousands(scanned))
                } else {
                    format!(
                        "scanning pages: {} of {}",
                        table::thousands(scanned),
                        table::thousands(total)
                    )
                };
                self.progress(&format!("{what}, {count} match"));
            }
            let (id, page) = match row? {
                Candidate::Read(id, page) => (id, Some(page)),
                Candidate::Unread(id) => (id, None),
            };
            if plan.is_some() && !yielded.insert(id) {
                continue;
            }
            let page = match page {
                Some(page) => page,
                None => match self.light_match(&q.filter, id, now)? {
                    Some(keep) => {
                        count += u64::from(keep);
                        continue;
                    }
                    None => self.store.page(id).map_err(err)?,
                },
            };
            let Some(page) = page else {
                continue;
            };
            let doc = self.store.doc(id).map_err(err)?.unwrap_or_default();
            let inlinks = if needs_inlinks {
                self.store.scan(CF_INLINKS, &id.to_bytes()).count() as u64
            } else {
                0
            };
            let keep = q.filter.eval(&|f| field(&page, &doc, inlinks, now, f), now);
            if keep {
                count += 1;
                if stream {
                    // Unordered human output streams each row as it is found.
                    if count == 1 {
                        self.progress_done();
                        self.say(&stream_row(
                            &["status", "depth", "size", "title", "url"].map(String::from),
                        ));
                    }
                    self.progress_done();
                    self.say(&stream_row(&page_cells(&page, &doc)));
                    if q.limit.is_some_and(|l| count >= l as u64) {
                        break;
                    }
                    continue;
                }
                if !count_only {
                    matched.push((page, doc, inlinks));
                }
                if early_stop.is_some_and(|l| matched.len() >= l) && !count_only {
                    break;
                }
            }
        }
        self.progress_done();
        // Like EXPLAIN: say when the page index narrowed the scan.
        let via = match plan {
            Some(_) => format!(
                "; {} candidate{} from the page index",
                table::thousands(scanned),
                if scanned == 1 { "" } else { "s" }
            ),
            None => String::new(),
        };
        if stream {
            let t = format!("({count} page{}{via})", if count == 1 { "" } else { "s" });
            return Ok(Reply::text(t));
        }
        if count_only {
            return Ok(Reply::with(count.to_string(), json!({ "count": count })));
        }
        if let Some((f, desc)) = q.order {
            matched.sort_by(|a, b| {
                let (x, y) = (
                    field(&a.0, &a.1, a.2, now, f),
                    field(&b.0, &b.1, b.2, now, f),
                );
                let o = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
                if desc { o.reverse() } else { o }
            });
        }
        if let Some(l) = q.limit {
            matched.truncate(l);
        }
        let rows: Vec<Vec<String>> = matched
            .iter()
            .map(|(p, d, _)| page_cells(p, d).to_vec())
            .collect();
        let j: Vec<_> = matched
            .iter()
            .map(|(p, d, i)| json!({"url": p.url, "status": p.status, "depth": p.depth, "size": p.body_len, "title": d.title,
                "content_type": p.content_type, "fetched_ms": p.fetched_ms, "outlinks": d.outlinks, "inlinks": i,
                "duplicate": d.duplicate_of.is_some()}))
            .collect();
        let mut human = table::render(
            &["status", "depth", "size", "title", "url"],
            &rows,
            self.width,
        );
        human += &format!(
            "({} page{}{via})",
            matched.len(),
            if matched.len() == 1 { "" } else { "s" }
        );
        Ok(Reply::with(human, json!(j)))
    }
}

/// A page `pages where` considers.
enum Candidate {
    /// With its record as read (None: no longer stored, or unreadable).
    Read(UrlId, Option<PageRecord>),
    /// Left unread for a light count.
    Unread(UrlId),
}

/// Fields a light count reads from the `seen` and `urls` rows.
const LIGHT_FIELDS: [&str; 4] = ["status", "depth", "url", "host"];

/// The page an index row points at; read unless `light`.
fn indexed_page(
    store: &Store,
    row: Result<store::Row, StoreError>,
    light: bool,
) -> Result<Candidate, String> {
    let (k, _) = row.map_err(err)?;
    let id = page_index::url_id(&k).ok_or("a page_index key is malformed; run reindex")?;
    if light {
        return Ok(Candidate::Unread(id));
    }
    Ok(Candidate::Read(id, store.page(id).map_err(err)?))
}

impl Shell {
    /// Whether page `id` matches a filter over LIGHT_FIELDS, from its `seen`
    /// row (written in the same batch as the page, with the same status and
    /// depth) and `urls` row; None when those rows do not say (the page's
    /// record decides).
    fn light_match(
        &self,
        filter: &expr::Expr,
        id: UrlId,
        now: f64,
    ) -> Result<Option<bool>, String> {
        let Some(seen) = self.store.seen(id).map_err(err)? else {
            return Ok(None);
        };
        let SeenState::Fetched { status } = seen.state else {
            return Ok(None);
        };
        let url = if filter.uses("url") || filter.uses("host") {
            match self.store.url(id).map_err(err)? {
                Some(u) => u,
                None => return Ok(None),
            }
        } else {
            String::new()
        };
        let get = |f: &str| match f {
            "status" => Val::Num(f64::from(status)),
            "depth" => Val::Num(f64::from(seen.depth)),
            "url" => Val::Str(url.clone()),
            "host" => Val::Str(model::parsed_host(&url)),
            _ => Val::Bool(false),
        };
        Ok(Some(filter.eval(&get, now)))
    }
}

/// The human columns of a page row: status, depth, size, title, url.
fn page_cells(p: &PageRecord, d: &DocRecord) -> [String; 5] {
    [
        p.status.to_string(),
        p.depth.to_string(),
        table::bytes(p.body_len),
        d.title.clone(),
        p.url.clone(),
    ]
}

/// A page row in fixed-width columns, so rows can print as they are found.
fn stream_row(c: &[String; 5]) -> String {
    let title = table::pad(&table::cut(&c[3], 30), 30);
    format!("{:<6}  {:<5}  {:<9}  {title}  {}", c[0], c[1], c[2], c[4])
}

/// A page field's value for the expression language.
fn field(p: &PageRecord, d: &DocRecord, inlinks: u64, now: f64, name: &str) -> Val {
    match name {
        "url" => Val::Str(p.url.clone()),
        "host" => Val::Str(model::parsed_host(&p.url)),
        "title" => Val::Str(d.title.clone()),
        "content_type" => Val::Str(p.content_type.clone()),
        "charset" => Val::Str(d.charset.clone()),
        "status" => Val::Num(f64::from(p.status)),
        "depth" => Val::Num(f64::from(p.depth)),
        "size" => Val::Num(p.body_len as f64),
        "inlinks" => Val::Num(inlinks as f64),
        "outlinks" => Val::Num(f64::from(d.outlinks)),
        "fetched_at" => Val::Num(p.fetched_ms as f64),
        "age" => Val::Num(now - p.fetched_ms as f64),
        "duplicate" => Val::Bool(d.duplicate_of.is_some()),
        "truncated" => Val::Bool(p.truncated),
        "noindex" => Val::Bool(d.noindex),
        // A score that was not computed compares false with everything.
        "topic_score" => Val::Num(d.topic_score.unwrap_or(f64::NAN)),
        "relevance" => Val::Num(d.relevance.unwrap_or(f64::NAN)),
        "verdict" => Val::Str(d.verdict.clone()),
        _ => Val::Bool(false),
    }
}

fn parse_n(n: &str) -> Result<usize, String> {
    n.parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{n:?} is not a positive number"))
}

fn breakdown(m: &std::collections::BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return String::new();
    }
    format!(
        " ({})",
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
