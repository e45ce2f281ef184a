//! `get KEY`: one setting's value.

use super::{Call, Command, Known, Run};
use crate::settings;
use crate::shell::Ctx;
use crate::shell::error::Result;
use crate::shell::reply::Reply;

pub const COMMAND: Command = Command {
    name: "get",
    usage: "get KEY",
    summary: "show one setting",
    examples: &["get crawl.delay"],
    arity: (1, Some(1)),
    subs: &[],
    writes: false,
    complete,
    detail: super::set::keys_note,
    run: Run::Data(run),
};

fn complete(k: &Known, args: &[&str]) -> Vec<String> {
    match args {
        [] => super::set::complete(k, args),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let key = settings::find_or_suggest(call.args[0])?;
    let v = key.get(&sh.settings);
    Ok(Reply::record(
        format!("{} = {v}", key.name()),
        serde_json::json!({ "key": key.name(), "value": v }),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn shows_a_default_and_names_an_unknown_key() {
        let mut t = TestShell::new();
        assert_eq!(t.ok("get crawl.per_host").trim(), "crawl.per_host = 1");
        assert!(t.ok("get crawl.delay --json").contains("\"value\": \"1s\""));
        assert!(t.err("get crawl.dlay").contains("did you mean crawl.delay"));
    }
}
