//! `set KEY VALUE`: change a setting from the settings table; it is saved
//! in the db and a running crawl uses it at once.

use super::{Call, Command, Known, Run};
use crate::settings;
use crate::settings::CrawlSettings;
use crate::shell::Ctx;
use crate::shell::error::Result;
use crate::shell::reply::Reply;

pub const COMMAND: Command = Command {
    name: "set",
    usage: "set KEY VALUE",
    summary: "change a setting; a running crawl uses it at once",
    examples: &[
        "set crawl.delay 500ms",
        "set crawl.depth 3",
        "set crawl.scope domain",
    ],
    arity: (2, None),
    subs: &[],
    writes: true,
    complete,
    detail: keys_note,
    run: Run::Data(run),
};

/// `help set` and `help get` point at the settings table.
pub fn keys_note() -> String {
    "keys: see `config`\n".into()
}

/// Key names, then the key's values.
pub fn complete(_: &Known, args: &[&str]) -> Vec<String> {
    match args {
        [] => settings::keys().map(|k| k.name().to_string()).collect(),
        [key] => settings::value_words(key),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let key = settings::find_or_suggest(call.args[0])?;
    let mut s = sh.settings.clone();
    key.set(&mut s, &call.args[1..].join(" "))?;
    let live = adopt(sh, s, key.at_start())?;
    Ok(Reply::text(format!(
        "{} = {}{live}",
        key.name(),
        key.get(&sh.settings)
    )))
}

/// Makes `s` the shell's settings, saved in the db and handed to a
/// running crawl (unless `at_start`); returns what the reply adds.
pub(super) fn adopt(sh: &mut Ctx, s: CrawlSettings, at_start: bool) -> Result<&'static str> {
    sh.settings = s;
    sh.persist_settings()?;
    Ok(match &sh.crawl {
        Some(_) if at_start => " (from the next crawl; the running one keeps its value)",
        Some(r) => {
            r.handle.set_settings(sh.settings.clone());
            " (applied to the running crawl)"
        }
        None => "",
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn sets_checks_and_keeps_a_setting() {
        let mut t = TestShell::new();
        assert_eq!(t.ok("set crawl.delay 250ms").trim(), "crawl.delay = 250ms");
        assert!(
            t.err("set crawl.dept 3")
                .contains("did you mean crawl.depth")
        );
        assert!(
            t.err("set crawl.concurrency 0")
                .contains("crawl.concurrency")
        );
        assert_eq!(t.err("set crawl.delay"), "usage: set KEY VALUE");
        assert_eq!(t.ok("get crawl.delay").trim(), "crawl.delay = 250ms");
    }

    /// A NaN weight became priority 0, the head of every queue, and made
    /// the relevance filter keep nothing, silently.
    #[test]
    fn refuses_numbers_that_are_not_finite_or_out_of_range() {
        let mut t = TestShell::new();
        for (line, range) in [
            ("set relevance.keywords research:NaN", "0..1000000"),
            ("set relevance.keywords research:inf, paper:2", "0..1000000"),
            ("set relevance.keywords research:-inf", "0..1000000"),
            ("set relevance.keywords research:2e6", "0..1000000"),
            ("set relevance.threshold NaN", "0..1"),
            ("set topic.gain inf", "0..1000"),
            ("set shark.delta -inf", "0..0.99"),
            ("set denoise.nav_words 1e999", "0..1000"),
        ] {
            let key = line.split(' ').nth(1).unwrap();
            let e = t.err(line);
            assert!(
                e.starts_with(&format!("{key}: ")) && e.contains(range) && !e.contains('\n'),
                "{line}: {e}"
            );
        }
        t.ok("set relevance.keywords research:2.5, paper");
        assert_eq!(
            t.ok("get relevance.keywords").trim(),
            "relevance.keywords = research:2.5,paper:1"
        );
    }
}
