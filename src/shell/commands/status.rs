//! `status`: counts, rates, bytes, hosts, elapsed and TLP, from the running
//! crawl's snapshot or, idle, from the db's counters.

use serde_json::json;

use super::{Call, Command, Run, no_detail, nothing, recrawl};
use crate::crawl::groups::{HostLoad, SiteGroups};
use crate::crawl::revisit::{FRESH_SAMPLE, estimate_freshness};
use crate::crawl::sites::SiteRules;
use crate::schema::tables::Runs;
use crate::schema::{Counted, Tally};
use crate::shell::error::Result;
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "status",
    usage: "status",
    summary: "counts, rates, bytes, hosts, elapsed and TLP, live or after",
    examples: &["status", "status --json"],
    arity: (0, Some(0)),
    subs: &[],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, _: &Call) -> Result<Reply> {
    let (state, snap) = match &sh.crawl {
        Some(r) => {
            let s = r.handle.snapshot();
            (format!("{:?}", s.state).to_lowercase(), Some(s))
        }
        None => ("idle".to_string(), None),
    };
    let c = match &snap {
        Some(s) => s.counters.clone(),
        None => sh.store.counters()?,
    };
    let failed: u64 = c.failed.total();
    let filtered: u64 = c.filtered.total();
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
    let n = table::thousands;
    let mut h = format!("state       {state}\n");
    h += &format!(
        "fetched     {} ({} this run)\n",
        n(c.fetched),
        n(run_fetched)
    );
    h += &format!("queued      {}\n", n(c.queued));
    h += &format!("failed      {}{}\n", n(failed), breakdown(&c.failed));
    h += &format!("filtered    {}{}\n", n(filtered), breakdown(&c.filtered));
    h += &format!("duplicates  {}\n", n(c.duplicates));
    let capped = snap.as_ref().map_or(0, |s| s.run_capped_links);
    if c.links_cut > 0 || capped > 0 {
        // The stored count is written with each batch: at least the run's.
        let this_run = match capped {
            0 => String::new(),
            _ => format!("{} this run, ", n(capped)),
        };
        h += &format!(
            "links cut   {this_run}{} in all, past crawl.max_outlinks ({}) or {} MiB of a page's links (not followed; why URL names the page)\n",
            n(c.links_cut.max(capped)),
            n(sh.settings.max_outlinks as u64),
            crate::parse::LINK_BYTES >> 20
        );
    }
    if c.near_duplicates > 0 || sh.settings.dedup.near {
        h += &format!(
            "near dups   {} ({} past their cluster's budget, links not followed)\n",
            n(c.near_duplicates),
            n(c.unexpanded)
        );
    }
    h += &format!("pages/s     {recent:.0} (last 10 s), {overall:.0} (this run)\n");
    h += &format!("bytes       {}\n", table::bytes(c.bytes));
    h += &format!("hosts       {active} active\n");
    h += &format!("elapsed     {elapsed:.1} s\n");
    h += &format!("TLP         {tlp:.1}");
    let focus = sh.focus_figures(snap.as_ref(), &c)?;
    h += &focus.lines();
    let groups = match &snap {
        Some(s) => s.groups,
        None => sh.site_groups()?.and_then(|(g, rules)| g.counts(&rules)),
    };
    if let Some(g) = &groups {
        h += &format!("\ngroups      {}", g.line());
    }
    let revisits = if sh.settings.recrawl.is_on() || c.due + c.revisits + c.revisits_queued > 0 {
        // A sample of the `visits` rows (`recrawl` reads them all).
        let f = estimate_freshness(&sh.store, crate::model::now_ms(), Some(FRESH_SAMPLE))?;
        let retimed = recrawl::retiming(sh)?;
        h += &format!("\n{}", recrawl::status_line(&c, &f, retimed));
        recrawl::status_json(&c, &f, retimed)
    } else {
        serde_json::Value::Null
    };
    let j = json!({
        "state": state, "fetched": c.fetched, "run_fetched": run_fetched, "queued": c.queued,
        "failed": c.failed, "filtered": c.filtered, "duplicates": c.duplicates, "links": c.links,
        "near_duplicates": c.near_duplicates, "unexpanded": c.unexpanded,
        "run_capped_links": capped, "links_cut": c.links_cut,
        "pages_per_sec_10s": recent, "pages_per_sec_run": overall, "bytes": c.bytes,
        "active_hosts": active, "elapsed_secs": elapsed, "tlp": tlp, "by_status": c.by_status,
        "focus": focus.json(), "groups": groups, "revisits": revisits,
    });
    Ok(Reply::record(h, j))
}

/// How well the crawl focuses: this run's harvest rate, over the last
/// 1,000 pages too, and target recall.
pub(super) struct FocusFigures {
    judged: u64,
    relevant: u64,
    recent: (u64, u64),
    targets: (u64, u64),
}

fn rate(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

impl FocusFigures {
    fn lines(&self) -> String {
        let n = table::thousands;
        let mut h = String::new();
        if let Some(r) = rate(self.relevant, self.judged) {
            let (rj, rr) = self.recent;
            h += &format!(
                "\nharvest     {r:.3} ({} relevant of {} judged this run); last {}: {:.3}",
                n(self.relevant),
                n(self.judged),
                n(rj),
                rate(rr, rj).unwrap_or(0.0)
            );
        }
        let (t, fetched) = self.targets;
        if let Some(r) = rate(fetched, t) {
            h += &format!(
                "\ntargets     {} of {} fetched (recall {r:.3})",
                n(fetched),
                n(t)
            );
        }
        h
    }

    fn json(&self) -> serde_json::Value {
        json!({"judged": self.judged, "relevant": self.relevant,
            "harvest": rate(self.relevant, self.judged),
            "recent_judged": self.recent.0, "recent_relevant": self.recent.1,
            "recent_harvest": rate(self.recent.1, self.recent.0),
            "targets": self.targets.0, "targets_fetched": self.targets.1,
            "target_recall": rate(self.targets.1, self.targets.0)})
    }
}

impl Ctx {
    /// The site groups as the db's rows leave them, when
    /// `crawl.site_batch` is set, with the library they group.
    pub(super) fn site_groups(&self) -> Result<Option<(SiteGroups, SiteRules)>> {
        if self.settings.site_batch == 0 {
            return Ok(None);
        }
        let (rules, _) = SiteRules::load(&self.store)?;
        let groups = SiteGroups::new(self.settings.site_batch, &rules, |h| {
            HostLoad::stored(&self.store, h)
        });
        Ok(Some((groups, rules)))
    }

    /// The running crawl's figures, or idle the last run's and the
    /// target list's now.
    fn focus_figures(
        &self,
        snap: Option<&crate::crawl::Snapshot>,
        c: &crate::schema::Counters,
    ) -> Result<FocusFigures> {
        if let Some(s) = snap {
            return Ok(FocusFigures {
                judged: c.run.judged,
                relevant: c.run.relevant,
                recent: s.recent_focus,
                targets: s.targets,
            });
        }
        let last = self
            .store
            .rows::<Runs>(&[])
            .last()
            .transpose()?
            .map(|r| r.1);
        let (targets, fetched) = self.store.targets_and_fetched()?;
        Ok(FocusFigures {
            judged: last.as_ref().map_or(0, |r| r.judged),
            relevant: last.as_ref().map_or(0, |r| r.relevant),
            recent: last.map_or((0, 0), |r| (r.recent_judged, r.recent_relevant)),
            targets: (targets.len() as u64, fetched),
        })
    }
}

/// ` (reason n, reason n)` after a total.
fn breakdown<K: Counted>(m: &Tally<K>) -> String {
    if m.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = m.by_name().map(|(k, v)| format!("{k} {v}")).collect();
    format!(" ({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn idle_counts_come_from_the_db() {
        let mut t = TestShell::new();
        let out = t.ok("status");
        assert!(
            out.starts_with("state       idle\nfetched     0 (0 this run)"),
            "{out}"
        );
        let j: serde_json::Value = serde_json::from_str(&t.ok("status --json")).unwrap();
        assert_eq!(j["queued"], 0);
        assert_eq!(t.err("status now"), "usage: status");
    }
}
