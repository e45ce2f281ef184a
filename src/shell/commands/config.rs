//! `config [save FILE [--force]]`: every setting with value, default and
//! meaning; or the settings and seeds written as a `.crawlrc`.

use std::path::Path;

use serde_json::json;

use super::{Call, Command, Run, Sub, no_detail, nothing, site_fields};
use crate::settings::keys;
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::{Kind, Reply, columns};
use crate::shell::{Ctx, quote};

pub const COMMAND: Command = Command {
    name: "config",
    usage: "config | config save FILE [--force]",
    summary: "all settings with value, default and meaning; or write them as a .crawlrc (--force overwrites a file that is not one)",
    examples: &["config", "config save job.crawlrc"],
    arity: (0, Some(3)),
    subs: &[Sub {
        words: "save",
        writes: false,
    }],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

/// The first line of every file `config save` writes; a file that starts
/// otherwise is not overwritten without `--force`.
const CONFIG_HEADER: &str =
    "# trawl settings, written by `config save`; run with `source` or `trawl run`";

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    match call.args[..] {
        [] => Ok(list(sh)),
        ["save", file] | ["save", file, "--force"] | ["save", "--force", file] => {
            save(sh, file, call.args.contains(&"--force"))
        }
        _ => Err(ShellError::Usage),
    }
}

fn list(sh: &Ctx) -> Reply {
    let rows = keys()
        .map(|k| {
            vec![
                json!(k.name()),
                json!(k.get(&sh.settings)),
                json!(k.default_value()),
                json!(k.type_name()),
                json!(k.meaning()),
            ]
        })
        .collect();
    let t = Kind::Text;
    let columns = columns(&[
        ("key", t),
        ("value", t),
        ("default", t),
        ("type", t),
        ("meaning", t),
    ]);
    Reply::table(columns, rows)
}

fn save(sh: &Ctx, file: &str, force: bool) -> Result<Reply> {
    if !force
        && let Some(first) = first_line(Path::new(file))
        && first != CONFIG_HEADER
    {
        bail!(
            "{file} exists and is not a trawl config (its first line is not the `config save` header); pass --force to overwrite it"
        );
    }
    let mut text = format!("{CONFIG_HEADER}\n");
    for k in keys() {
        let v = k.get(&sh.settings);
        if v != k.default_value() {
            text.push_str(&format!("set {} {}\n", k.name(), quote(&v)));
        }
    }
    // A seed site's metadata and own settings ride on its `seed add`.
    for site in sh.library()? {
        let mut line = String::from("seed add");
        for u in &site.urls {
            line.push(' ');
            line.push_str(&quote(u));
        }
        for (name, v) in site_fields::given(&site.rec) {
            line.push_str(&format!(" --{} {}", name.replace('_', "-"), quote(&v)));
        }
        text.push_str(&line);
        text.push('\n');
    }
    std::fs::write(file, text).map_err(|e| format!("cannot write {file}: {e}"))?;
    Ok(Reply::text(format!("settings and seeds written to {file}")))
}

/// The first line of `path`, if it is a file that can be read.
fn first_line(path: &Path) -> Option<String> {
    use std::io::BufRead;
    let f = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    // A file that is not text has no header either.
    match std::io::BufReader::new(f).read_line(&mut line) {
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
        Err(_) => Some(String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn lists_keys_and_saves_a_file_it_can_read_back() {
        let mut t = TestShell::new();
        assert!(t.ok("config").contains("crawl.delay"));
        t.ok("set crawl.depth 4");
        t.ok("seed add http://a.org/");
        t.ok("seed add http://b.org/ http://b.org/x --subject \"solid state\" --max-pages 9 --delay 2s");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("job.crawlrc");
        t.ok(&format!("config save {}", f.display()));
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            text.contains("set crawl.depth 4\nseed add http://a.org/\nseed add http://b.org/ http://b.org/x --subject \"solid state\" --delay 2s --max-pages 9\n"),
            "{text}"
        );
        // Read back into a fresh db, the library is the same.
        let mut back = TestShell::new();
        back.ok(&format!("source {}", f.display()));
        let b = back.ok("seeds where subject = 'solid state' and max_pages = 9 and delay = '2s'");
        assert!(b.contains("http://b.org") && !b.contains("a.org"), "{b}");
        let other = dir.path().join("notes.txt");
        std::fs::write(&other, "my notes\n").unwrap();
        assert!(
            t.err(&format!("config save {}", other.display()))
                .contains("--force")
        );
        t.ok(&format!("config save {} --force", other.display()));
    }
}
