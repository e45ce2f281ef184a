//! `runs [compare A B]`: the crawl runs recorded in `meta`, with settings,
//! links fetched, time and TLP; or two of them side by side.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::{Call, Command, Run, Sub, no_detail, nothing};
use crate::schema::RunRecord;
use crate::schema::tables::Runs;
use crate::shell::error::{Result, ShellError};
use crate::shell::lookup::unreadable;
use crate::shell::reply::{Kind, Reply, columns, hidden};
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "runs",
    usage: "runs | runs compare A B",
    summary: "crawl runs with settings, links fetched, time and TLP (seconds × links fetched); compare two side by side",
    examples: &["runs", "runs compare 1 3"],
    arity: (0, Some(3)),
    subs: &[Sub {
        words: "compare",
        writes: false,
    }],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let mut runs: Vec<RunRecord> = Vec::new();
    let mut rows = sh.store.rows::<Runs>(&[]);
    for row in rows.by_ref() {
        runs.push(row?.1);
    }
    unreadable(rows.unreadable());
    match call.args[..] {
        [] => Ok(list(&runs)),
        ["compare", a, b] => compare(&runs, a, b, sh.sink.width),
        _ => Err(ShellError::Usage),
    }
}

/// A run's value of setting `k` ("" when it did not record it).
fn setting(r: &RunRecord, k: &str) -> String {
    r.settings
        .iter()
        .find(|(key, _)| key == k)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// `part / whole` to 3 places, "-" when nothing was counted.
fn share(part: u64, whole: u64) -> String {
    ratio(part, whole).map_or("-".into(), |r| format!("{r:.3}"))
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn harvest(r: &RunRecord) -> String {
    share(r.relevant, r.judged)
}

fn recent_harvest(r: &RunRecord) -> String {
    share(r.recent_relevant, r.recent_judged)
}

fn recall(r: &RunRecord) -> String {
    share(r.targets_fetched, r.targets)
}

fn list(runs: &[RunRecord]) -> Reply {
    let rows = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let end = if r.ended_ms == 0 {
                "unfinished"
            } else if !r.stopped_by.is_empty() {
                "stop rule"
            } else if r.interrupted {
                "stopped"
            } else {
                "done"
            };
            vec![
                json!(i + 1),
                json!(r.started_ms),
                json!(r.elapsed_ms as f64 / 1000.0),
                json!(r.fetched),
                json!(r.tlp),
                json!(ratio(r.relevant, r.judged)),
                json!(ratio(r.targets_fetched, r.targets)),
                json!(setting(r, "filter.mode")),
                json!(setting(r, "crawl.depth")),
                json!(end),
                json!(r.ended_ms),
                json!(r.links),
                json!(r.judged),
                json!(r.relevant),
                json!(r.recent_judged),
                json!(r.recent_relevant),
                json!(r.targets),
                json!(r.targets_fetched),
                json!(r.stopped_by),
                json!(r.settings.iter().cloned().collect::<BTreeMap<_, _>>()),
            ]
        })
        .collect();
    let mut c = columns(&[
        ("run", Kind::Int),
        ("started_at", Kind::Time),
        ("elapsed_secs", Kind::Num),
        ("links_fetched", Kind::Int),
        ("tlp", Kind::Num),
        ("harvest", Kind::Ratio),
        ("recall", Kind::Ratio),
        ("filter.mode", Kind::Text),
        ("crawl.depth", Kind::Text),
        ("end", Kind::Text),
    ]);
    c.extend(hidden(&[
        ("ended_at", Kind::Time),
        ("links_found", Kind::Int),
        ("judged", Kind::Int),
        ("relevant", Kind::Int),
        ("recent_judged", Kind::Int),
        ("recent_relevant", Kind::Int),
        ("targets", Kind::Int),
        ("targets_fetched", Kind::Int),
        ("stopped_by", Kind::Text),
        ("settings", Kind::Text),
    ]));
    Reply::table(c, rows)
}

fn compare(runs: &[RunRecord], a: &str, b: &str, width: usize) -> Result<Reply> {
    let pick = |n: &str| {
        n.parse::<usize>()
            .ok()
            .filter(|i| *i >= 1 && *i <= runs.len())
            .map(|i| &runs[i - 1])
            .ok_or_else(|| format!("no run {n}; runs lists {} run(s)", runs.len()))
    };
    let (ra, rb) = (pick(a)?, pick(b)?);
    let secs = |r: &RunRecord| format!("{:.2}", r.elapsed_ms as f64 / 1000.0);
    let mut rows = vec![
        vec![
            "links fetched".into(),
            ra.fetched.to_string(),
            rb.fetched.to_string(),
        ],
        vec!["time (s)".into(), secs(ra), secs(rb)],
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
        vec!["harvest rate".into(), harvest(ra), harvest(rb)],
        vec![
            "harvest, last 1,000".into(),
            recent_harvest(ra),
            recent_harvest(rb),
        ],
        vec!["target recall".into(), recall(ra), recall(rb)],
        vec![
            "stopped by".into(),
            ra.stopped_by.clone(),
            rb.stopped_by.clone(),
        ],
    ];
    let mut seen = BTreeSet::new();
    for (k, _) in ra.settings.iter().chain(&rb.settings) {
        if seen.insert(k.clone()) {
            rows.push(vec![k.clone(), setting(ra, k), setting(rb, k)]);
        }
    }
    let h = table::render(
        &["", &format!("run {a}"), &format!("run {b}")],
        &rows,
        width,
    );
    let side = |r: &RunRecord| {
        json!({"fetched": r.fetched, "tlp": r.tlp, "elapsed_ms": r.elapsed_ms, "settings": r.settings,
            "harvest": ratio(r.relevant, r.judged), "recent_harvest": ratio(r.recent_relevant, r.recent_judged),
            "target_recall": ratio(r.targets_fetched, r.targets),
            "stopped_by": r.stopped_by})
    };
    let j = json!({"a": side(ra), "b": side(rb)});
    Ok(Reply::record(h, j))
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn a_finished_crawl_is_one_run() {
        let mut t = TestShell::crawled(2);
        let out = t.ok("runs");
        assert!(out.contains("done"), "{out}");
        assert!(t.ok("runs compare 1 1").contains("links fetched"));
        assert!(
            t.err("runs compare 1 2")
                .contains("no run 2; runs lists 1 run(s)")
        );
    }
}
