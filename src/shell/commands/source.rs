//! `source FILE`: run the commands in a file, as a `.crawlrc` batch.

use std::path::Path;

use super::{Call, Command, Run, no_detail, nothing};
use crate::shell::error::Result;
use crate::shell::reply::Reply;
use crate::shell::{Shell, batch};

pub const COMMAND: Command = Command {
    name: "source",
    usage: "source FILE",
    summary: "run the commands in FILE",
    examples: &["source job.crawlrc"],
    arity: (1, Some(1)),
    subs: &[],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Shell(run),
};

fn run(sh: &mut Shell, call: &Call) -> Result<Reply> {
    batch::run_file(sh, Path::new(call.args[0]), false)?;
    Ok(Reply::none())
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn runs_a_file_and_names_the_failing_line() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("job.crawlrc");
        std::fs::write(&f, "set crawl.depth 2\n\nget nosuch.key\n").unwrap();
        let mut t = TestShell::new();
        let e = t.err(&format!("source {}", f.display()));
        assert!(e.contains("job.crawlrc:3:"), "{e}");
        t.take();
        assert_eq!(t.ok("get crawl.depth").trim(), "crawl.depth = 2");
    }
}
