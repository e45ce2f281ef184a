//! `status`: counts, rates, bytes, hosts, elapsed and TLP, from the running
//! crawl's snapshot or, idle, from the db's counters.

use std::collections::BTreeMap;

use serde_json::json;

use super::{Call, Command, no_detail, nothing};
use crate::shell::error::Result;
use crate::shell::reply::Reply;
use crate::shell::{Shell, table};

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
    run,
};

fn run(sh: &mut Shell, _: &Call) -> Result<Reply> {
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

/// ` (reason n, reason n)` after a total.
fn breakdown(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
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
