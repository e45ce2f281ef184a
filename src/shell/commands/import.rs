//! `import warc FILE…`: WARC files another crawler wrote (or trawl),
//! loaded as pages with their docs, links and verdicts, as if this crawl
//! had fetched them.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Call, Command, Known, Run, no_detail};
use crate::crawl::{self, ImportProgress, ImportReport};
use crate::shell::error::{Result, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "import",
    usage: "import warc FILE...",
    summary: "load the response and revisit records of WARC or WARC.gz files (Heritrix, wget --warc-file, Browsertrix, trawl) as pages, as if fetched at their WARC-Date; other records are counted and skipped, a malformed one is reported with its offset and skipped",
    examples: &[
        "import warc crawl.warc.gz",
        "import warc heritrix-00000.warc.gz heritrix-00001.warc.gz",
    ],
    arity: (2, None),
    subs: &[],
    writes: true,
    complete,
    detail: no_detail,
    run: Run::Data(run),
};

fn complete(_: &Known, args: &[&str]) -> Vec<String> {
    match args {
        [] => vec!["warc".into()],
        _ => Vec::new(),
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    if call.args[0] != "warc" {
        bail!(
            "import: {:?} is not a format; import warc FILE...",
            call.args[0]
        );
    }
    if sh.crawl.is_some() {
        bail!(
            "a crawl is running; crawl stop first (import writes pages and the frontier), then crawl start"
        );
    }
    let files: Vec<PathBuf> = call.args[1..].iter().map(PathBuf::from).collect();
    for f in &files {
        if !f.is_file() {
            bail!(
                "{} is not a file; give import warc the WARC files to read",
                f.display()
            );
        }
    }
    let interrupt = sh.interrupt.clone();
    let tty = sh.progress_tty;
    let mut last = Instant::now();
    let mut progress = |p: &ImportProgress| {
        if tty && last.elapsed() >= Duration::from_millis(200) {
            last = Instant::now();
            let what = match p.pass {
                1 => "finding hosts".to_string(),
                _ => format!("{} pages stored", table::thousands(p.stored)),
            };
            eprint!(
                "\r\x1b[Kimport: {} of {} read, {what}",
                table::bytes(p.bytes),
                table::bytes(p.total)
            );
        }
        !interrupt.swap(false, Ordering::SeqCst)
    };
    let r = crawl::import_warc(sh.store.clone(), sh.settings.clone(), &files, &mut progress)
        .map_err(|e| e.to_string())?;
    if tty {
        eprint!("\r\x1b[K");
    }
    let reply = report(&r);
    if r.interrupted {
        sh.sink.reply(reply);
        bail!("interrupted (the pages stored so far stay; importing the files again skips them)");
    }
    Ok(reply)
}

/// Records read, pages stored, what was skipped and why, the malformed.
fn report(r: &ImportReport) -> Reply {
    let secs = r.elapsed.as_secs_f64();
    let skipped: u64 = r.skipped.values().sum();
    let mut t = format!(
        "import{}: {} file(s), {} records in {secs:.2} s: {} pages stored, {} skipped, {} malformed",
        if r.interrupted { " interrupted" } else { "" },
        r.files,
        table::thousands(r.records),
        table::thousands(r.stored),
        table::thousands(skipped),
        table::thousands(r.malformed),
    );
    if r.failed > 0 {
        t += &format!(
            "\n  stored as failed {}: a body that does not decode as its Content-Encoding says (`why URL` tells)",
            table::thousands(r.failed)
        );
    }
    for (why, n) in &r.skipped {
        t += &format!("\n  skipped {}: {why}", table::thousands(*n));
    }
    for m in &r.malformed_shown {
        t += &format!("\n  malformed: {m}");
    }
    let unshown = r.malformed - r.malformed_shown.len() as u64;
    if unshown > 0 {
        t += &format!("\n  ... and {} more malformed", table::thousands(unshown));
    }
    if r.hosts_added > 0 {
        t += &format!(
            "\n{} host(s) brought into scope (seeds derived via import; `seed list` lists them)",
            table::thousands(r.hosts_added)
        );
    }
    for n in &r.notices {
        t += &format!("\nnote: {n}");
    }
    let j = json!({
        "files": r.files, "records": r.records, "stored": r.stored, "failed": r.failed, "skipped": r.skipped,
        "malformed": r.malformed, "malformed_shown": r.malformed_shown,
        "hosts_added": r.hosts_added, "interrupted": r.interrupted, "seconds": secs,
        "notices": r.notices,
    });
    Reply::record(t, j)
}
