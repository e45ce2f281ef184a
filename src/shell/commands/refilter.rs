//! `refilter [--dry-run] [--denoise]`: judge every stored page and link
//! again under the current settings, without fetching (with `--denoise`,
//! denoising each HTML page again from its stored body first); print what
//! changed.

use std::time::{Duration, Instant};

use super::{Call, Command, Run, no_detail, nothing};
use crate::crawl::{self, RefilterReport};
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "refilter",
    usage: "refilter [--dry-run] [--denoise]",
    summary: "recompute every stored page's scores and verdicts with the current settings (no fetching); queue links of pages that now pass, drop queued URLs nothing passing links to; --denoise denoises the stored pages again first",
    examples: &[
        "set topic.threshold 0.3",
        "refilter --dry-run",
        "refilter",
        "set denoise.ad_words 6",
        "refilter --denoise",
    ],
    arity: (0, Some(2)),
    subs: &[],
    writes: true,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let mut run = crawl::RefilterRun::default();
    for arg in &call.args {
        match *arg {
            "--dry-run" if !run.dry_run => run.dry_run = true,
            "--denoise" if !run.denoise => run.denoise = true,
            _ => return Err(ShellError::Usage),
        }
    }
    if sh.crawl.is_some() {
        bail!(
            "a crawl is running; crawl stop first (refilter rewrites verdicts and the frontier), then crawl start"
        );
    }
    let interrupt = sh.interrupt.clone();
    let tty = sh.progress_tty;
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
    let r = crawl::refilter(sh.store.clone(), sh.settings.clone(), run, &mut progress)
        .map_err(|e| e.to_string())?;
    if tty {
        eprint!("\r\x1b[K");
    }
    let reply = report(&r, sh.sink.width);
    if r.interrupted {
        sh.sink.reply(reply);
        bail!("interrupted (pages done so far keep their new verdicts)");
    }
    Ok(reply)
}

/// The verdicts before and after, the pages that changed and the links and
/// frontier rows that moved.
fn report(r: &RefilterReport, width: usize) -> Reply {
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
    t += &table::render(&["verdict", "before", "after"], &rows, width);
    t += &format!("{} page(s) changed verdict", r.changed);
    for (u, a, b) in &r.sample {
        t += &format!("\n  {a} → {b}  {u}");
    }
    t += &format!(
        "\nlinks re-judged {}, URLs queued {}, dropped from the frontier {}",
        r.links_changed, r.enqueued, r.dropped
    );
    if r.unreadable_links > 0 {
        t += &format!(
            "\n{} links rows could not be read and were left as they are",
            r.unreadable_links
        );
    }
    if let Some(d) = &r.denoise {
        t += &format!(
            "\ndenoised again: {} changed, {} as they were",
            d.changed, d.same
        );
        if d.text_differs > 0 {
            t += &format!(
                "\n{} page(s) left as they were: their body parses to other text than was stored (an older trawl's parser); refetch them to denoise them",
                d.text_differs
            );
        }
        if d.no_body > 0 {
            t += &format!("\n{} page(s) have no readable stored body", d.no_body);
        }
    }
    for n in &r.notices {
        t += &format!("\nnote: {n}");
    }
    let j = serde_json::json!({
        "dry_run": r.dry_run, "interrupted": r.interrupted, "pages": r.pages, "seconds": secs,
        "before": r.before, "after": r.after, "changed": r.changed,
        "sample": r.sample.iter().map(|(u, a, b)| serde_json::json!({"url": u, "before": a, "after": b})).collect::<Vec<_>>(),
        "links_changed": r.links_changed, "enqueued": r.enqueued, "dropped": r.dropped,
        "unreadable_links": r.unreadable_links, "notices": r.notices,
        "denoise": r.denoise.as_ref().map(|d| serde_json::json!({
            "changed": d.changed, "same": d.same, "text_differs": d.text_differs, "no_body": d.no_body,
        })),
    });
    Reply::record(t, j)
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn a_dry_run_changes_nothing() {
        let mut t = TestShell::crawled(3);
        t.ok("set filter.mode domain+topic");
        t.ok("set topic.keywords zzzz");
        let out = t.ok("refilter --dry-run");
        assert!(out.contains("dry run, nothing written"), "{out}");
        assert!(t.ok("count pages where verdict = 'keep'").trim() != "0");
        assert_eq!(
            t.err("refilter now"),
            "usage: refilter [--dry-run] [--denoise]"
        );
        assert_eq!(
            t.err("refilter --denoise"),
            "refilter --denoise needs denoising on: set denoise.enabled true first"
        );
    }
}
