//! `recrawl uniform EVERY`, `recrawl change-rate [--min I] [--max I]`,
//! `recrawl off`, and `recrawl` alone for the policy and its figures: the
//! `recrawl.*` settings in one command (document 002's revisit policies).

use serde_json::json;

use super::{Call, Command, Known, Run, Sub, no_detail, words};
use crate::crawl::revisit::{Freshness, estimate_freshness};
use crate::schema::tables::RecrawlRow;
use crate::settings::{self, fmt_duration};
use crate::settings::{RecrawlMode, RecrawlSettings};
use crate::shell::error::{Result, ShellError};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "recrawl",
    usage: "recrawl [uniform EVERY | change-rate [--min I] [--max I] | off]",
    summary: "revisit fetched pages: every page after EVERY, or each after 1/λ of its estimated change rate within --min..--max; alone, the policy and what revisits found",
    examples: &[
        "recrawl uniform 1d",
        "recrawl change-rate --min 1h --max 30d",
        "recrawl off",
    ],
    arity: (0, None),
    subs: &[
        Sub {
            words: "uniform",
            writes: true,
        },
        Sub {
            words: "change-rate",
            writes: true,
        },
        Sub {
            words: "off",
            writes: true,
        },
    ],
    writes: false,
    complete,
    detail: no_detail,
    run: Run::Data(run),
};

fn complete(_: &Known, args: &[&str]) -> Vec<String> {
    match args {
        ["change-rate", ..] => words(&["--min", "--max"]),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let mut s = sh.settings.clone();
    let set = |s: &mut crate::settings::CrawlSettings, key: &str, raw: &str| {
        settings::find(key)
            .expect("a recrawl key")
            .set(s, raw)
            .map_err(ShellError::from)
    };
    match call.args[..] {
        [] => return show(sh),
        ["off"] => s.recrawl.mode = RecrawlMode::Off,
        ["uniform", every] => {
            set(&mut s, "recrawl.every", every)?;
            s.recrawl.mode = RecrawlMode::Uniform;
        }
        ["change-rate", ref flags @ ..] => {
            let mut rest = flags;
            while let [flag @ ("--min" | "--max"), value, tail @ ..] = rest {
                set(&mut s, &format!("recrawl.{}", &flag[2..]), value)?;
                rest = tail;
            }
            if !rest.is_empty() {
                return Err(ShellError::Usage);
            }
            if s.recrawl.min > s.recrawl.max {
                return Err(format!(
                    "recrawl change-rate: --min {} is longer than --max {}; give a --min no longer than the --max",
                    fmt_duration(s.recrawl.min),
                    fmt_duration(s.recrawl.max)
                )
                .into());
            }
            s.recrawl.mode = RecrawlMode::ChangeRate;
        }
        _ => return Err(ShellError::Usage),
    }
    let live = super::set::adopt(sh, s, false)?;
    let mut line = format!("recrawl {}{live}", policy(&sh.settings.recrawl));
    if sh.crawl.is_none() {
        for n in crate::crawl::retime_revisits(sh.store.clone(), sh.settings.clone())? {
            line += &format!("\n{n}");
        }
    }
    Ok(Reply::record(
        line,
        json!({ "recrawl": policy(&sh.settings.recrawl) }),
    ))
}

/// The policy in the words that set it.
pub fn policy(r: &RecrawlSettings) -> String {
    match r.mode {
        RecrawlMode::Off => "off".into(),
        RecrawlMode::Uniform => format!("uniform {}", fmt_duration(r.every)),
        RecrawlMode::ChangeRate => format!(
            "change-rate --min {} --max {}",
            fmt_duration(r.min),
            fmt_duration(r.max)
        ),
    }
}

/// The policy, and what the db's counters and every visits row say.
fn show(sh: &Ctx) -> Result<Reply> {
    let c = sh.store.counters()?;
    let f = estimate_freshness(&sh.store, crate::model::now_ms(), None)?;
    let retimed = retiming(sh)?;
    let t = format!(
        "recrawl     {}\n{}",
        policy(&sh.settings.recrawl),
        status_line(&c, &f, retimed)
    );
    Ok(Reply::record(
        t,
        json!({ "recrawl": policy(&sh.settings.recrawl), "revisits": status_json(&c, &f, retimed) }),
    ))
}

/// Pages timed so far by a retiming under way (None: none is).
pub fn retiming(sh: &Ctx) -> Result<Option<u64>> {
    let state = sh.store.meta::<RecrawlRow>()?.unwrap_or_default();
    Ok(state.next.map(|_| state.timed))
}

/// `status`'s revisits line: pages due, revisits done, freshness, and a
/// retiming under way.
pub fn status_line(c: &crate::schema::Counters, f: &Freshness, retimed: Option<u64>) -> String {
    let n = table::thousands;
    let fresh = match f.share() {
        Some(share) if f.sampled => format!(
            "; fresh ≈ {:.1}% (estimated from a sample of {} pages; recrawl reads them all)",
            share * 100.0,
            n(f.pages)
        ),
        Some(share) => format!(
            "; fresh ≈ {:.1}% of {} pages (estimated)",
            share * 100.0,
            n(f.pages)
        ),
        None => String::new(),
    };
    let retiming = match retimed {
        Some(t) => format!("; timing pages under the new policy: {} so far", n(t)),
        None => String::new(),
    };
    format!(
        "revisits    {} due (queued), {} scheduled; {} done, {} found changed{fresh}{retiming}",
        n(c.revisits_queued),
        n(c.due),
        n(c.revisits),
        n(c.revisits_changed)
    )
}

pub fn status_json(
    c: &crate::schema::Counters,
    f: &Freshness,
    retimed: Option<u64>,
) -> serde_json::Value {
    json!({
        "due": c.revisits_queued, "scheduled": c.due, "done": c.revisits,
        "changed": c.revisits_changed, "pages": f.pages, "fresh_share": f.share(),
        "fresh_sampled": f.sampled, "retimed": retimed,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn sets_the_policy_in_one_command() {
        let mut t = TestShell::new();
        assert_eq!(t.ok("recrawl uniform 6h").trim(), "recrawl uniform 6h");
        assert_eq!(t.ok("get recrawl.mode").trim(), "recrawl.mode = uniform");
        let out = t.ok("recrawl change-rate --min 30m --max 2d");
        assert_eq!(out.trim(), "recrawl change-rate --min 30m --max 2d");
        assert!(
            t.err("recrawl change-rate --min 3d --max 2d")
                .contains("--min 3d")
        );
        assert!(t.err("recrawl uniform soon").contains("recrawl.every"));
        assert!(
            t.err("recrawl change-rate --often 1h")
                .starts_with("usage:")
        );
        assert!(t.ok("recrawl").contains("revisits    0 due"));
        assert_eq!(t.ok("recrawl off").trim(), "recrawl off");
    }
}
