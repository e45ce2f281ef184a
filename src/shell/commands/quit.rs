//! `quit` (also `exit` and Ctrl-D): leave the shell; a running crawl is
//! stopped cleanly when the shell is dropped.

use super::{Call, Command, Run, no_detail, nothing};
use crate::shell::Shell;
use crate::shell::error::Result;
use crate::shell::reply::Reply;

pub const COMMAND: Command = Command {
    name: "quit",
    usage: "quit",
    summary: "leave the shell (a running crawl is stopped cleanly); also exit and Ctrl-D",
    examples: &[],
    arity: (0, Some(0)),
    subs: &[],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Shell(run),
};

fn run(sh: &mut Shell, _: &Call) -> Result<Reply> {
    sh.quit = true;
    Ok(Reply::none())
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn quit_and_exit_end_the_shell() {
        for word in ["quit", "exit"] {
            let mut t = TestShell::new();
            assert!(!t.sh.wants_quit());
            t.ok(word);
            assert!(t.sh.wants_quit(), "{word}");
        }
    }
}
