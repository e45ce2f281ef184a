//! `hosts [top N [by pages|errors|queue]]`: hosts ranked by a count.

use serde_json::json;

use super::{Call, Command, Known, Run, Sub, no_detail, words};
use crate::schema::HostRecord;
use crate::schema::tables::Hosts;
use crate::shell::Ctx;
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::lookup::parse_n;
use crate::shell::lookup::unreadable;
use crate::shell::reply::{Kind, Reply, columns};

pub const COMMAND: Command = Command {
    name: "hosts",
    usage: "hosts [top N [by pages|errors|queue]]",
    summary: "hosts ranked by pages, errors or queue length",
    examples: &["hosts top 10 by errors"],
    arity: (0, Some(4)),
    subs: &[Sub {
        words: "top",
        writes: false,
    }],
    writes: false,
    complete,
    detail: no_detail,
    run: Run::Data(run),
};

/// A host's count that hosts can be ranked by.
type Count = fn(&HostRecord) -> u64;

/// What hosts can be ranked by, and the count each reads.
const RANKINGS: &[(&str, Count)] = &[
    ("pages", |h| h.fetched),
    ("errors", |h| h.errors),
    ("queue", |h| h.queued),
];

fn complete(_: &Known, args: &[&str]) -> Vec<String> {
    match args {
        ["top", _] => words(&["by"]),
        ["top", _, "by"] => RANKINGS.iter().map(|r| r.0.to_string()).collect(),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let (n, by) = match call.args[..] {
        [] => (20, "pages"),
        ["top", n] => (parse_n(n)?, "pages"),
        ["top", n, "by", by] => (parse_n(n)?, by),
        _ => return Err(ShellError::Usage),
    };
    let Some((_, key)) = RANKINGS.iter().find(|r| r.0 == by) else {
        bail!("hosts: cannot rank by {by:?}; use pages, errors or queue");
    };
    let mut hosts = Vec::new();
    let mut rows = sh.store.rows::<Hosts>(&[]);
    for row in rows.by_ref() {
        hosts.push(row?.1);
        if sh.interrupted() {
            bail!("interrupted");
        }
    }
    unreadable(rows.unreadable());
    hosts.sort_by_key(|h| std::cmp::Reverse(key(h)));
    hosts.truncate(n);
    let rows = hosts
        .iter()
        .map(|h| {
            vec![
                json!(h.fetched),
                json!(h.errors),
                json!(h.queued),
                json!(h.origin),
            ]
        })
        .collect();
    let c = columns(&[
        ("pages", Kind::Int),
        ("errors", Kind::Int),
        ("queued", Kind::Int),
        ("host", Kind::Text),
    ]);
    Ok(Reply::table(c, rows))
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn ranks_the_demo_hosts() {
        let mut t = TestShell::crawled(2);
        let out = t.ok("hosts top 2 by queue");
        assert_eq!(out.lines().count(), 3, "{out}");
        assert!(
            t.err("hosts top 2 by size")
                .contains("cannot rank by \"size\"")
        );
    }
}
