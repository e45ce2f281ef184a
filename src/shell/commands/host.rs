//! `host HOST`: one host's robots.txt, crawl-delay, next fetch and counts.

use serde_json::json;

use super::{Call, Command, Run, hosts, no_detail};
use crate::model::RobotsOutcome;
use crate::schema::HostRecord;
use crate::schema::tables::{HostRankRow, HostRanks};
use crate::shell::error::Result;
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "host",
    usage: "host HOST",
    summary: "one host: robots.txt rules, crawl-delay, next fetch, error streak",
    examples: &["host example.org"],
    arity: (1, Some(1)),
    subs: &[],
    writes: false,
    complete: hosts,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let (id, h) = sh.resolve_host(call.args[0])?;
    let (robots, rules) = robots(&h);
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
    let rank = sh.store.row::<HostRanks>(&id)?;
    if let (Some(r), Some(run)) = (&rank, sh.store.meta::<HostRankRow>()?) {
        t += &format!(
            "\nhost rank     {:.4e} ({:.2} × the mean; rank hosts of {})",
            r.rank,
            r.rank * run.nodes as f64,
            table::time(run.computed_ms)
        );
    }
    if !rules.trim().is_empty() {
        t += "\nrules:\n";
        for l in rules.lines().take(60) {
            t += &format!("  {l}\n");
        }
    }
    let j = json!({"host": h.origin, "robots": robots, "robots_txt": rules, "crawl_delay_ms": h.crawl_delay_ms,
        "crawl_delay_capped": h.crawl_delay_capped, "next_fetch_ms": h.next_fetch_ms, "error_streak": h.error_streak,
        "pages": h.fetched, "errors": h.errors, "queued": h.queued, "host_rank": rank.map(|r| r.rank)});
    Ok(Reply::record(t, j))
}

/// What became of the host's robots.txt, and its text.
fn robots(h: &HostRecord) -> (String, String) {
    let Some(r) = &h.robots else {
        return ("not fetched yet".to_string(), String::new());
    };
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
        RobotsOutcome::TooManyRedirects => "too many redirects: everything allowed".into(),
    };
    (
        format!("{what}; expires {}", table::time(r.expires_ms)),
        String::from_utf8_lossy(&r.body).into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn shows_a_crawled_host_by_name_or_url() {
        let mut t = TestShell::crawled(2);
        let seed = t.seed();
        let by_url = t.ok(&format!("host {seed}"));
        let name = seed.trim_start_matches("http://").trim_end_matches('/');
        assert_eq!(t.ok(&format!("host {name}")), by_url);
        assert!(by_url.contains("robots.txt    fetched (200)"), "{by_url}");
        assert!(t.err("host a.invalid").contains("is not in the db"));
    }
}
