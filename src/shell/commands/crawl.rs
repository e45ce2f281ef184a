//! `crawl start|pause|resume|stop|wait`: run the crawl in the background
//! of the shell, steer it, or wait for it.

use std::time::{Duration, Instant};

use super::{Call, Command, Run, Sub, no_detail, nothing};
use crate::crawl::{self, CrawlState};
use crate::settings;
use crate::shell::ctx::Running;
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "crawl",
    usage: "crawl start | pause | resume | stop | wait [--pages N] [--secs N]",
    summary: "run the crawl in the background, or wait for it",
    examples: &["crawl start", "crawl wait --secs 30", "crawl stop"],
    arity: (1, Some(5)),
    subs: &[
        Sub {
            words: "start",
            writes: true,
        },
        Sub {
            words: "pause",
            writes: true,
        },
        Sub {
            words: "resume",
            writes: true,
        },
        Sub {
            words: "stop",
            writes: true,
        },
        Sub {
            words: "wait",
            writes: false,
        },
    ],
    writes: true,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    match call.args[..] {
        ["start"] => start(sh),
        ["pause"] => {
            running(sh)?.pause();
            Ok(Reply::text(
                "crawl paused (fetches in flight finish; crawl resume goes on)",
            ))
        }
        ["resume"] => {
            running(sh)?.resume();
            Ok(Reply::text("crawl resumed"))
        }
        ["stop"] => {
            running(sh)?.stop();
            // Not `idle`: the snapshot may predate the stop.
            wait(sh, Until::default())?;
            Ok(Reply::none())
        }
        ["wait", ref opts @ ..] => {
            let mut until = Until {
                idle: true,
                ..Until::default()
            };
            let mut it = opts.iter();
            while let Some(o) = it.next() {
                let v = it.next().ok_or_else(|| format!("{o} needs a value"))?;
                match *o {
                    "--pages" => {
                        until.pages = Some(
                            v.parse::<u64>()
                                .map_err(|_| format!("--pages {v}: not a number"))?,
                        )
                    }
                    "--secs" => until.secs = Some(settings::parse_duration(v)?),
                    _ => bail!("unknown option {o}; use --pages N or --secs N"),
                }
            }
            if sh.crawl.is_none() {
                return Ok(Reply::text("no crawl is running"));
            }
            Ok(wait(sh, until)?.map_or_else(Reply::none, Reply::text))
        }
        _ => Err(ShellError::Usage),
    }
}

fn start(sh: &mut Ctx) -> Result<Reply> {
    if sh.crawl.is_some() {
        bail!("a crawl is already running (crawl stop ends it)");
    }
    let seeds = sh.store.seeds()?.urls;
    let queued = sh.store.counters()?.queued;
    if seeds.is_empty() && queued == 0 {
        bail!("nothing to crawl: add seeds first (seed add URL)");
    }
    let _guard = sh.rt.enter();
    let (handle, join) =
        crawl::start(sh.store.clone(), sh.settings.clone(), &seeds).map_err(|e| e.to_string())?;
    sh.crawl = Some(Running { handle, join });
    Ok(Reply::text(format!(
        "crawl started from {} seed(s); status shows progress, crawl wait waits",
        seeds.len()
    )))
}

fn running(sh: &Ctx) -> Result<&crawl::CrawlHandle> {
    sh.crawl
        .as_ref()
        .map(|r| &r.handle)
        .ok_or_else(|| "no crawl is running (crawl start)".into())
}

/// What ends a wait besides the crawl's end.
#[derive(Default)]
struct Until {
    /// The db holds this many fetched pages.
    pages: Option<u64>,
    secs: Option<Duration>,
    /// Nothing is queued or in flight but revisits: with revisits on a
    /// crawl never ends by itself.
    idle: bool,
}

/// Blocks until the crawl ends or `until` says; Ctrl-C ends the wait, not
/// the crawl. Returns a note when only revisits remain, or when the crawl
/// ended short of `--pages`.
fn wait(sh: &mut Ctx, until: Until) -> Result<Option<String>> {
    let start = Instant::now();
    while let Some(r) = &sh.crawl {
        if r.join.is_finished() {
            break;
        }
        let snap = r.handle.snapshot();
        let fetched = snap.counters.fetched;
        if until.pages.is_some_and(|p| fetched >= p)
            || until.secs.is_some_and(|s| start.elapsed() >= s)
        {
            sh.progress_done();
            return Ok(None);
        }
        if snap.state == CrawlState::Paused && until.pages.is_none() && until.secs.is_none() {
            bail!("the crawl is paused; crawl resume first, or wait with --secs");
        }
        if let Some(due) = snap.revisit_due.filter(|_| until.idle) {
            sh.progress_done();
            return Ok(Some(revisits_only(fetched, until.pages, due)));
        }
        if sh.interrupted() {
            sh.progress_done();
            bail!("interrupted (the crawl goes on)");
        }
        sh.progress(&format!(
            "waiting: {} fetched, {} queued, {} in flight, {:.0} pages/s",
            table::thousands(snap.counters.fetched),
            table::thousands(snap.counters.queued),
            snap.in_flight,
            snap.recent_rate
        ));
        std::thread::sleep(Duration::from_millis(50));
    }
    sh.progress_done();
    sh.reap();
    let Some(p) = until.pages else {
        return Ok(None);
    };
    let fetched = sh.store.counters()?.fetched;
    Ok((fetched < p).then(|| {
        format!(
            "the crawl ended with {} pages fetched, short of --pages {p}",
            table::thousands(fetched)
        )
    }))
}

impl Ctx {
    /// Waits for a crawl started from this shell to end: `trawl run` at
    /// the end of its file. With revisits on that is until Ctrl-C.
    pub(in crate::shell) fn wait_for_crawl_end(&mut self) -> Result<()> {
        wait(self, Until::default()).map(drop)
    }
}

/// The note of a wait that ends because only revisits remain.
fn revisits_only(fetched: u64, pages: Option<u64>, due: Instant) -> String {
    let next = crawl::wait_text(due.saturating_duration_since(Instant::now()));
    let short = match pages {
        Some(p) if fetched < p => format!(
            " ({} pages fetched, short of --pages {p})",
            table::thousands(fetched)
        ),
        _ => String::new(),
    };
    format!(
        "only revisits remain{short}: the next is due in {next}; the crawl goes on (crawl stop ends it)"
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn refuses_without_seeds_and_without_a_crawl() {
        let mut t = TestShell::new();
        assert!(t.err("crawl start").contains("add seeds first"));
        assert!(t.err("crawl pause").contains("no crawl is running"));
        assert_eq!(t.ok("crawl wait").trim(), "no crawl is running");
        assert!(
            t.err("crawl wait --hours 3")
                .contains("unknown option --hours")
        );
        assert!(
            t.err("crawl wait --pages")
                .contains("--pages needs a value")
        );
    }

    #[test]
    fn crawls_the_demo_web_to_the_end() {
        let mut t = TestShell::crawled(5);
        let out = t.ok("status");
        assert!(out.contains("fetched     32"), "{out}");
    }
}
