//! `crawl start|pause|resume|stop|wait`: run the crawl in the background
//! of the shell, steer it, or wait for it.

use std::time::{Duration, Instant};

use super::{Call, Command, Sub, no_detail, nothing};
use crate::crawl::{self, CrawlState};
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Running, Shell, config, table};

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
    run,
};

fn run(sh: &mut Shell, call: &Call) -> Result<Reply> {
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
            wait(sh, None, None)?;
            Ok(Reply::none())
        }
        ["wait", ref opts @ ..] => {
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
                    _ => bail!("unknown option {o}; use --pages N or --secs N"),
                }
            }
            if sh.crawl.is_none() {
                return Ok(Reply::text("no crawl is running"));
            }
            wait(sh, pages, secs)?;
            Ok(Reply::none())
        }
        _ => Err(ShellError::Usage),
    }
}

fn start(sh: &mut Shell) -> Result<Reply> {
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

fn running(sh: &Shell) -> Result<&crawl::CrawlHandle> {
    sh.crawl
        .as_ref()
        .map(|r| &r.handle)
        .ok_or_else(|| "no crawl is running (crawl start)".into())
}

/// Blocks until the crawl ends, the db holds `pages` fetched pages, or
/// `secs` pass; Ctrl-C ends the wait, not the crawl.
fn wait(sh: &mut Shell, pages: Option<u64>, secs: Option<Duration>) -> Result<()> {
    let start = Instant::now();
    while let Some(r) = &sh.crawl {
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
            bail!("the crawl is paused; crawl resume first, or wait with --secs");
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
    Ok(())
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
