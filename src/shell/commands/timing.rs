//! `timing [on|off]`: print each command's wall time after it (psql's
//! `\timing`).

use super::{Call, Command, Run, no_detail, nothing};
use crate::shell::Shell;
use crate::shell::error::{Result, ShellError};
use crate::shell::reply::Reply;

pub const COMMAND: Command = Command {
    name: "timing",
    usage: "timing [on|off]",
    summary: "print each command's wall time after it (like psql's \\timing)",
    examples: &["timing on"],
    arity: (0, Some(1)),
    subs: &[
        super::Sub {
            words: "on",
            writes: false,
        },
        super::Sub {
            words: "off",
            writes: false,
        },
    ],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Shell(run),
};

fn run(sh: &mut Shell, call: &Call) -> Result<Reply> {
    sh.timing = match call.args[..] {
        ["on"] => true,
        ["off"] => false,
        [] => !sh.timing,
        _ => return Err(ShellError::Usage),
    };
    Ok(Reply::text(format!(
        "timing {}",
        if sh.timing { "on" } else { "off" }
    )))
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn toggles_and_times_the_next_command() {
        let mut t = TestShell::new();
        assert_eq!(t.ok("timing on").trim(), "timing on");
        assert!(t.ok("status").contains("time: "));
        assert_eq!(t.ok("timing").trim(), "timing off");
        assert!(!t.ok("status").contains("time: "));
        assert_eq!(t.err("timing maybe"), "usage: timing [on|off]");
    }
}
