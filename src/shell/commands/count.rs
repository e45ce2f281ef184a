//! `count pages [where EXPR]`: how many pages match (the `pages` query,
//! counting only).

use super::pages::{Output, complete, query};
use super::{Call, Command, Run, Sub};
use crate::shell::error::{Result, ShellError};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, fields, rest_after_words};

pub const COMMAND: Command = Command {
    name: "count",
    usage: "count pages [where EXPR]",
    summary: "how many pages match",
    examples: &["count pages where duplicate"],
    arity: (1, None),
    subs: &[Sub {
        words: "pages",
        writes: false,
    }],
    writes: false,
    complete: |k, args| complete(k, args.get(1..).unwrap_or_default()),
    detail: fields::help,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    if call.args[0] != "pages" {
        return Err(ShellError::Usage);
    }
    let (rest, base) = rest_after_words(call.line, 2);
    query(sh, &rest, base, Output::Count)
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn counts_with_and_without_the_index() {
        let mut t = TestShell::crawled(3);
        let ok: u64 = t
            .ok("count pages where status = 200")
            .trim()
            .parse()
            .unwrap();
        let all: u64 = t.ok("count pages").trim().parse().unwrap();
        let not_ok: u64 = t
            .ok("count pages where not status = 200")
            .trim()
            .parse()
            .unwrap();
        assert_eq!(ok + not_ok, all);
        assert_eq!(t.err("count hosts"), "usage: count pages [where EXPR]");
    }
}
