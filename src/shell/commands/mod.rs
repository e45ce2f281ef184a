//! The command table: one [`Command`] value per shell command, each in its
//! own file beside this one with its handler, argument completer and unit
//! test. Dispatch, `help`, completion, usage errors and the read-only check
//! all read this table and nothing else.

use super::error::{Result, ShellError};
use super::reply::Reply;
use super::{Ctx, Shell};

mod config;
mod count;
mod crawl;
mod discover;
mod disk;
mod domains;
mod export;
mod export_graph;
mod export_table;
mod export_text;
mod export_wacz;
mod frontier;
mod get;
mod help;
mod host;
mod hosts;
mod import;
mod learned;
mod links;
mod near;
mod page;
mod page_history;
mod page_scan;
mod pages;
mod quit;
mod rank;
mod rank_hosts;
mod recrawl;
mod refilter;
mod reindex;
mod runs;
mod search;
mod seed;
mod seed_csv;
mod seed_decide;
mod seeds;
mod set;
mod simulate;
mod site_fields;
mod source;
mod status;
mod targets;
mod text_plan;
mod timing;
mod why;
mod why_capped;

/// Every command, in the order `help` lists them.
pub static COMMANDS: &[&Command] = &[
    &help::COMMAND,
    &seed::COMMAND,
    &seeds::COMMAND,
    &set::COMMAND,
    &domains::COMMAND,
    &get::COMMAND,
    &config::COMMAND,
    &crawl::COMMAND,
    &status::COMMAND,
    &disk::COMMAND,
    &timing::COMMAND,
    &frontier::COMMAND,
    &hosts::COMMAND,
    &host::COMMAND,
    &page::COMMAND,
    &links::COMMAND,
    &pages::COMMAND,
    &count::COMMAND,
    &export::COMMAND,
    &import::COMMAND,
    &rank::COMMAND,
    &discover::COMMAND,
    &why::COMMAND,
    &runs::COMMAND,
    &learned::COMMAND,
    &near::COMMAND,
    &simulate::COMMAND,
    &targets::COMMAND,
    &refilter::COMMAND,
    &recrawl::COMMAND,
    &reindex::COMMAND,
    &search::COMMAND,
    &source::COMMAND,
    &quit::COMMAND,
];

pub struct Command {
    pub name: &'static str,
    pub usage: &'static str,
    pub summary: &'static str,
    pub examples: &'static [&'static str],
    /// Words after the name: at least, and at most (None: no limit).
    pub arity: (usize, Option<usize>),
    pub subs: &'static [Sub],
    /// Whether the command changes the db or the crawl when no entry of
    /// `subs` matches (refused on a read-only attach).
    pub writes: bool,
    /// Candidates for the next argument after `args` (sub-command words
    /// are offered from `subs` already).
    pub complete: fn(&Known, &[&str]) -> Vec<String>,
    /// What `help NAME` adds after the examples.
    pub detail: fn() -> String,
    pub run: Run,
}

/// A command's handler: most work on the command context; `source`,
/// `timing` and `quit` on the shell itself.
pub enum Run {
    Data(fn(&mut Ctx, &Call) -> Result<Reply>),
    Shell(fn(&mut Shell, &Call) -> Result<Reply>),
}

/// A sub-command: its words after the command name (`"key add"`) and
/// whether it changes the db or the crawl.
pub struct Sub {
    pub words: &'static str,
    pub writes: bool,
}

/// One call of a command.
pub struct Call<'a> {
    /// The words after the command's name, output flags taken out.
    pub args: Vec<&'a str>,
    /// The whole line as typed, output flags blanked (for commands that
    /// parse it themselves).
    pub line: &'a str,
}

/// What completion can offer besides the tables: the db's hosts and URLs.
#[derive(Default)]
pub struct Known {
    pub hosts: Vec<String>,
    pub urls: Vec<String>,
}

/// A completer for commands whose arguments are not from a list.
pub fn nothing(_: &Known, _: &[&str]) -> Vec<String> {
    Vec::new()
}

/// A `detail` for commands with nothing more to say.
pub fn no_detail() -> String {
    String::new()
}

/// Owned strings from a list of words.
pub fn words(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

pub fn find(name: &str) -> Option<&'static Command> {
    let name = if name == "exit" { "quit" } else { name };
    COMMANDS.iter().copied().find(|c| c.name == name)
}

/// One-line error for an unknown command, with the nearest name.
pub fn unknown(name: &str) -> ShellError {
    match crate::settings::nearest(name, COMMANDS.iter().map(|c| c.name)) {
        Some(n) => format!("unknown command {name:?}; did you mean {n}? (help lists commands)"),
        None => format!("unknown command {name:?}; help lists commands"),
    }
    .into()
}

impl Command {
    /// Whether `n` argument words fit the command.
    pub fn fits(&self, n: usize) -> bool {
        n >= self.arity.0 && self.arity.1.is_none_or(|max| n <= max)
    }

    /// The error for a call that does not fit.
    pub fn usage_error(&self) -> ShellError {
        ShellError::Msg(format!("usage: {}", self.usage))
    }

    /// Whether this call changes the db or the crawl: the longest
    /// sub-command its words start with decides, else the command.
    pub fn writes(&self, args: &[&str]) -> bool {
        self.subs
            .iter()
            .filter(|s| starts_with_words(args, s.words))
            .max_by_key(|s| s.words.len())
            .map_or(self.writes, |s| s.writes)
    }

    /// Candidates for the word after `args`.
    pub fn candidates(&self, known: &Known, args: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in self.subs {
            let w: Vec<&str> = s.words.split(' ').collect();
            if w.len() > args.len() && w[..args.len()] == *args {
                let next = w[args.len()].to_string();
                if !out.contains(&next) {
                    out.push(next);
                }
            }
        }
        out.extend((self.complete)(known, args));
        out
    }

    /// `help NAME`: usage, meaning, examples and detail.
    pub fn help(&self) -> String {
        let mut out = format!("{}\n  {}\n", self.usage, self.summary);
        if !self.examples.is_empty() {
            out.push_str("examples:\n");
            for e in self.examples {
                out.push_str(&format!("  {e}\n"));
            }
        }
        out.push_str(&(self.detail)());
        out
    }
}

fn starts_with_words(args: &[&str], words: &str) -> bool {
    let w: Vec<&str> = words.split(' ').collect();
    args.len() >= w.len() && args[..w.len()] == *w
}

impl Known {
    /// Candidates for the word after `words` (the words before the cursor).
    pub fn complete(&self, words: &[&str]) -> Vec<String> {
        complete(self, words)
    }
}

/// Candidates for the word after `words` (the words before the cursor).
pub fn complete(known: &Known, words: &[&str]) -> Vec<String> {
    match words {
        [] => {
            let mut v: Vec<String> = COMMANDS.iter().map(|c| c.name.to_string()).collect();
            v.push("exit".into());
            v
        }
        [name, args @ ..] => find(name)
            .map(|c| c.candidates(known, args))
            .unwrap_or_default(),
    }
}

/// Names of every command (the `help` completer).
pub fn names(_: &Known, args: &[&str]) -> Vec<String> {
    match args {
        [] => COMMANDS.iter().map(|c| c.name.to_string()).collect(),
        _ => Vec::new(),
    }
}

/// Known URLs as the first argument.
pub fn urls(known: &Known, args: &[&str]) -> Vec<String> {
    match args {
        [] => known.urls.clone(),
        _ => Vec::new(),
    }
}

/// Known hosts as the first argument.
pub fn hosts(known: &Known, args: &[&str]) -> Vec<String> {
    match args {
        [] => known.hosts.clone(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
pub(crate) mod test_shell;

#[cfg(test)]
mod tests {
    use super::test_shell::TestShell;
    use super::*;

    /// A call with the wrong number of words, or (for a command taking
    /// any number) a word no form of it takes.
    fn wrong_call(c: &Command) -> String {
        match c.arity {
            (min, _) if min > 0 => c.name.to_string(),
            (_, Some(max)) => format!("{}{}", c.name, " extra".repeat(max + 1)),
            _ => format!("{} zz", c.name),
        }
    }

    #[test]
    fn every_command_has_help_and_refuses_a_wrong_call_with_its_usage() {
        let mut sh = TestShell::new();
        for c in COMMANDS {
            let help = sh.ok(&format!("help {}", c.name));
            assert!(help.starts_with(c.usage), "help {}: {help}", c.name);
            assert!(c.usage.starts_with(c.name), "{}: usage names it", c.name);
            assert!(!c.summary.is_empty(), "{}", c.name);
            let call = wrong_call(c);
            let e = sh.err(&call);
            if c.name == "pages" || c.name == "seeds" {
                // An expression: its parser names the column.
                assert!(e.starts_with("column 7:"), "{call}: {e}");
            } else {
                assert_eq!(e, format!("usage: {}", c.usage), "{call}");
            }
        }
    }

    #[test]
    fn every_example_runs_through_dispatch() {
        // An example's command must exist, and its words must fit.
        for c in COMMANDS {
            for e in c.examples {
                let w: Vec<&str> = e.split_whitespace().collect();
                let ex = find(w[0]).unwrap_or_else(|| panic!("{e}: no command"));
                let args: Vec<&str> = w[1..].iter().copied().filter(|w| *w != "--json").collect();
                assert!(ex.fits(args.len()), "{e}: does not fit {}", ex.usage);
            }
        }
    }

    /// Rows of a `--format json` answer: its array, or the one object.
    fn json_rows(v: serde_json::Value) -> Vec<serde_json::Value> {
        match v {
            serde_json::Value::Array(rows) => rows,
            one => vec![one],
        }
    }

    /// Every read-only command's `--format jsonl`, `csv` and `tsv` give
    /// the rows its `--format json` gives: same columns, same values
    /// (CSV and TSV cells are the values' text).
    #[test]
    fn every_format_gives_the_rows_json_gives() {
        let mut t = TestShell::crawled(3);
        let seed = t.seed();
        let calls = [
            "status".to_string(),
            "hosts".into(),
            format!("links from {seed}"),
            format!("links to {seed}"),
            "pages where depth <= 1".into(),
            "pages where depth <= 1 order by pagerank desc limit 3".into(),
            "count pages where status = 200".into(),
            "frontier".into(),
            "frontier top 3".into(),
            "seeds".into(),
            "seed list".into(),
            "config".into(),
            "get crawl.delay".into(),
            "disk".into(),
            "runs".into(),
            "near-duplicates".into(),
            "domains".into(),
            format!("why {seed}"),
            format!("page {seed}"),
            format!("host {seed}"),
            "learned".into(),
            "help".into(),
        ];
        for call in calls {
            let text = t.ok(&format!("{call} --format json"));
            let json = json_rows(
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{call}: {e}: {text}")),
            );
            let jsonl: Vec<serde_json::Value> = t
                .ok(&format!("{call} --format jsonl"))
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{call}: {e}: {l}")))
                .collect();
            assert_eq!(jsonl, json, "{call}: jsonl");
            let csv = seed_csv::parse(&t.ok(&format!("{call} --format csv"))).unwrap();
            let tsv = t.ok(&format!("{call} --format tsv"));
            let tsv: Vec<Vec<&str>> = tsv.lines().map(|l| l.split('\t').collect()).collect();
            assert_eq!(csv.len(), json.len() + 1, "{call}: a header and a row each");
            for (i, row) in json.iter().enumerate() {
                let obj = row.as_object().unwrap_or_else(|| panic!("{call}: {row}"));
                let header = &csv[0].1;
                assert_eq!(header.len(), obj.len(), "{call}: {header:?}");
                for (c, name) in header.iter().enumerate() {
                    let (got, tsv_got) = (&csv[i + 1].1[c], tsv[i + 1][c]);
                    // A float read back from JSON text may print a digit
                    // shorter than it was written: numbers compare as numbers.
                    if let Some(n) = obj[name].as_f64() {
                        let close = |s: &str| {
                            s.parse::<f64>()
                                .is_ok_and(|x| (x - n).abs() <= 1e-12 * n.abs().max(1.0))
                        };
                        assert!(
                            close(got) && close(tsv_got),
                            "{call}: {name} {got} {tsv_got} {n}"
                        );
                        continue;
                    }
                    let want = crate::export::plain(&obj[name]);
                    assert_eq!(*got, want, "{call}: csv {name}");
                    let tsv_want = crate::export::tsv_cell(&obj[name]);
                    assert_eq!(tsv_got, tsv_want, "{call}: tsv {name}");
                }
            }
        }
        // No match is still a table: `[]`, or a header.
        assert_eq!(t.ok("pages where status = 999 --format json").trim(), "[]");
        let csv = t.ok("pages where status = 999 --format csv");
        assert!(csv.starts_with("status,depth,size,title,url,"), "{csv}");
        assert_eq!(t.ok("pages where status = 999 --format jsonl"), "");
        // Quoted, a flag's text is an operand.
        let e = t.ok("count pages where title ~ '--json'");
        assert_eq!(e.trim(), "0");
        assert!(t.err("hosts --format xml").contains("use table, json"));
    }

    #[test]
    fn sub_commands_say_whether_they_write() {
        let c = |n| find(n).unwrap();
        assert!(!c("seed").writes(&["list"]));
        assert!(c("seed").writes(&["add", "http://a.org/"]));
        assert!(!c("crawl").writes(&["wait"]));
        assert!(c("crawl").writes(&["start"]));
        assert!(!c("domains").writes(&[]));
        assert!(!c("domains").writes(&["key", "list"]));
        assert!(c("domains").writes(&["key", "add", "x"]));
        assert!(!c("status").writes(&[]));
    }

    #[test]
    fn completion_offers_names_subs_and_known_values() {
        let k = Known {
            hosts: vec!["a.org".into()],
            urls: vec!["http://a.org/".into()],
        };
        assert!(complete(&k, &[]).contains(&"exit".to_string()));
        assert_eq!(complete(&k, &["domains"]), vec!["key", "common"]);
        assert_eq!(
            complete(&k, &["domains", "key"]),
            vec!["add", "remove", "list"]
        );
        assert_eq!(complete(&k, &["frontier", "host"]), vec!["a.org"]);
        assert_eq!(complete(&k, &["why"]), vec!["http://a.org/"]);
    }
}
