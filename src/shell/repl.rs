//! The interactive loop: rustyline with history kept beside the db, tab
//! completion from the command and key tables and the db's hosts and URLs,
//! and a prompt that shows the crawl's state. With stdin not a terminal,
//! lines are read plainly and every command runs (errors go to stderr).

use std::borrow::Cow;
use std::io::{BufRead, IsTerminal};
use std::path::Path;

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};

use super::Shell;
use super::commands::Known;
use crate::schema::tables::Hosts;

/// URLs offered for completion at most (read once, at start).
const MAX_URLS: usize = 20_000;

struct ShellHelper {
    known: Known,
}

impl ShellHelper {
    fn load(shell: &Shell) -> ShellHelper {
        let store = shell.store();
        let hosts = store
            .rows::<Hosts>(&[])
            .filter_map(|r| r.ok())
            .map(|(_, h)| {
                h.origin
                    .split_once("://")
                    .map_or(h.origin.clone(), |(_, rest)| rest.to_string())
            })
            .collect();
        let urls = store
            .all_urls()
            .take(MAX_URLS)
            .filter_map(|r| r.ok())
            .collect();
        ShellHelper {
            known: Known { hosts, urls },
        }
    }
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &before[start..];
        let words: Vec<&str> = before[..start].split_whitespace().collect();
        let mut out: Vec<Pair> = self
            .known
            .complete(&words)
            .into_iter()
            .filter(|c| c.starts_with(word))
            .take(200)
            .map(|c| Pair {
                display: c.clone(),
                replacement: c,
            })
            .collect();
        out.sort_by(|a, b| a.display.cmp(&b.display));
        Ok((start, out))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}
impl Highlighter for ShellHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}
impl Validator for ShellHelper {}
impl Helper for ShellHelper {}

/// Runs commands from the terminal (or from piped stdin) until quit or EOF.
/// Reads commands until `quit` or end of input; `history` is the file
/// line history is kept in (none: not kept).
pub fn run(shell: &mut Shell, history: Option<&Path>) {
    if !std::io::stdin().is_terminal() {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if let Err(e) = shell.execute(&line) {
                eprintln!("error: {e}");
            }
            if shell.wants_quit() {
                break;
            }
        }
        return;
    }
    let mut ed: Editor<ShellHelper, rustyline::history::DefaultHistory> = match Editor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return;
        }
    };
    ed.set_helper(Some(ShellHelper::load(shell)));
    if let Some(h) = history {
        let _ = ed.load_history(h);
    }
    loop {
        let prompt = format!("trawl[{}]> ", shell.state_label());
        match ed.readline(&prompt) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = ed.add_history_entry(line.as_str());
                }
                if let Err(e) = shell.execute(&line) {
                    eprintln!("error: {e}");
                }
                if shell.wants_quit() {
                    break;
                }
            }
            // Ctrl-C at the prompt clears the line; the crawl goes on.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    if let Some(h) = history
        && let Err(e) = ed.save_history(h)
    {
        eprintln!("note: history not saved: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(h: &ShellHelper, line: &str) -> Vec<String> {
        let hist = rustyline::history::DefaultHistory::new();
        let ctx = Context::new(&hist);
        h.complete(line, line.len(), &ctx)
            .unwrap()
            .1
            .into_iter()
            .map(|p| p.replacement)
            .collect()
    }

    #[test]
    fn completes_commands_subcommands_keys_values_hosts_and_urls() {
        let h = ShellHelper {
            known: Known {
                hosts: vec!["example.org".into(), "other.net:8080".into()],
                urls: vec![
                    "http://example.org/a".into(),
                    "http://example.org/b".into(),
                    "http://z.org/".into(),
                ],
            },
        };
        assert_eq!(complete(&h, "sta"), vec!["status"]);
        assert_eq!(complete(&h, "crawl s"), vec!["start", "stop"]);
        assert_eq!(
            complete(&h, "set crawl.de"),
            vec!["crawl.delay", "crawl.depth"]
        );
        assert_eq!(complete(&h, "set crawl.scope d"), vec!["domain"]);
        assert_eq!(complete(&h, "host ex"), vec!["example.org"]);
        assert_eq!(
            complete(&h, "page http://example.org/"),
            vec!["http://example.org/a", "http://example.org/b"]
        );
        assert_eq!(complete(&h, "hosts top 5 by e"), vec!["errors"]);
        assert!(complete(&h, "help pa").contains(&"pages".to_string()));
    }
}
