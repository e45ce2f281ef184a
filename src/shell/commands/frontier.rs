//! `frontier [top N | host HOST]`: what is queued, in the order the
//! frontier will hand it out.

use serde_json::json;

use super::{Call, Command, Known, Sub, no_detail};
use crate::schema::FrontierEntry;
use crate::schema::tables::Frontier;
use crate::shell::error::{Result, ShellError};
use crate::shell::lookup::parse_n;
use crate::shell::lookup::unreadable;
use crate::shell::reply::Reply;
use crate::shell::{Shell, table};

pub const COMMAND: Command = Command {
    name: "frontier",
    usage: "frontier | frontier top N | frontier host HOST",
    summary: "what is queued",
    examples: &["frontier", "frontier top 20", "frontier host example.org"],
    arity: (0, Some(2)),
    subs: &[
        Sub {
            words: "top",
            writes: false,
        },
        Sub {
            words: "host",
            writes: false,
        },
    ],
    writes: false,
    complete,
    detail: no_detail,
    run,
};

fn complete(known: &Known, args: &[&str]) -> Vec<String> {
    match args {
        ["host"] => known.hosts.clone(),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Shell, call: &Call) -> Result<Reply> {
    let (rows, title) = match call.args[..] {
        [] => {
            let q = match &sh.crawl {
                Some(r) => r.handle.snapshot().counters.queued,
                None => sh.store.counters()?.queued,
            };
            return Ok(Reply::with(
                format!("{} URLs queued", table::thousands(q)),
                json!({ "queued": q }),
            ));
        }
        ["top", n] => (rows(sh, &[], parse_n(n)?)?, "next in the frontier"),
        ["host", host] => {
            let (id, _) = sh.resolve_host(host)?;
            (rows(sh, &id.to_bytes(), 50)?, "queued for the host")
        }
        _ => return Err(ShellError::Usage),
    };
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|e| vec![e.depth.to_string(), e.attempts.to_string(), e.url.clone()])
        .collect();
    let j: Vec<_> = rows
        .iter()
        .map(|e| json!({"url": e.url, "depth": e.depth, "attempts": e.attempts}))
        .collect();
    let human = if rows.is_empty() {
        format!("nothing {title}")
    } else {
        table::render(&["depth", "tries", "url"], &table_rows, sh.width)
    };
    Ok(Reply::with(human, json!(j)))
}

/// The first `n` frontier rows under `prefix`.
fn rows(sh: &Shell, prefix: &[u8], n: usize) -> Result<Vec<FrontierEntry>> {
    let mut out = Vec::new();
    let mut rows = sh.store.rows::<Frontier>(prefix);
    for row in rows.by_ref().take(n) {
        out.push(row?.1);
    }
    unreadable(rows.unreadable());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn an_empty_frontier_and_an_unknown_host() {
        let mut t = TestShell::new();
        assert_eq!(t.ok("frontier").trim(), "0 URLs queued");
        assert_eq!(
            t.ok("frontier top 5").trim(),
            "nothing next in the frontier"
        );
        assert!(t.err("frontier top 0").contains("not a positive number"));
        assert!(
            t.err("frontier host nosuch.org")
                .contains("is not in the db")
        );
    }
}
