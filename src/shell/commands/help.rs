//! `help [COMMAND]`: the command list, or one command's usage, meaning,
//! examples and detail, all from the command table.

use super::{COMMANDS, Call, Command, Run, find, names, no_detail, unknown};
use crate::shell::Ctx;
use crate::shell::error::Result;
use crate::shell::reply::Reply;

pub const COMMAND: Command = Command {
    name: "help",
    usage: "help [COMMAND]",
    summary: "list commands, or explain one",
    examples: &["help pages"],
    arity: (0, Some(1)),
    subs: &[],
    writes: false,
    complete: names,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(_: &mut Ctx, call: &Call) -> Result<Reply> {
    match call.args[..] {
        [] => {
            let mut out = String::from(
                "commands (help COMMAND for more; --format table|json|jsonl|csv|tsv, or --json, on any command; on export it names the file's format):\n",
            );
            for c in COMMANDS {
                out.push_str(&format!("  {:<10} {}\n", c.name, c.summary));
            }
            Ok(Reply::text(out))
        }
        [topic] => Ok(Reply::text(
            find(topic).ok_or_else(|| unknown(topic))?.help(),
        )),
        _ => Err(crate::shell::ShellError::Usage),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn lists_every_command_and_explains_one() {
        let mut t = TestShell::new();
        let list = t.ok("help");
        for c in super::COMMANDS {
            assert!(list.contains(c.name), "{}", c.name);
        }
        let one = t.ok("help count");
        assert!(one.starts_with("count pages [where EXPR]"), "{one}");
        assert!(t.err("help nosuch").contains("unknown command"));
    }
}
