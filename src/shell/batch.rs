//! Running a file of shell commands: `# comments`, blank lines and `\`
//! line continuation; each command is echoed; the first failure stops the
//! run as `FILE:LINE: message` (or, with keep-going, is reported and skipped).

use std::path::Path;

use super::Shell;

/// Nesting limit for `source`, so a file that sources itself fails cleanly.
const MAX_DEPTH: usize = 16;

#[derive(Debug)]
pub struct BatchError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

/// The commands of a file with the line each starts on.
pub fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = strip_comment(raw).trim_end().to_string();
        let (start, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        if let Some(body) = line.strip_suffix('\\') {
            acc.push_str(body);
            acc.push(' ');
            pending = Some((start, acc));
            continue;
        }
        acc.push_str(&line);
        if !acc.trim().is_empty() {
            out.push((start, acc.trim().to_string()));
        }
    }
    if let Some((start, acc)) = pending
        && !acc.trim().is_empty()
    {
        out.push((start, acc.trim().to_string()));
    }
    out
}

/// Drops a `#` comment that starts a line or follows white space outside
/// quotes (inside them a backslash escapes the next character, as
/// `split_words` reads it).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut prev_space = true;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') if prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// Where a batch restarted by its supervisor goes on.
#[derive(Clone, Copy, Default)]
pub struct Resume {
    /// The line it was running when it died (earlier ones are done).
    pub line: usize,
    /// Its crawl was resumed: a `crawl start` on that line is done too.
    pub crawl_started: bool,
}

/// Runs `path` in `shell`. Returns how many commands failed (only ever
/// non-zero with `keep_going`, whose failures are printed as they happen).
pub fn run_file(shell: &mut Shell, path: &Path, keep_going: bool) -> Result<usize, BatchError> {
    run_file_from(shell, path, keep_going, Resume::default())
}

/// [`run_file`] from where `resume` says (the top-level file tells its
/// supervisor each line it starts).
pub fn run_file_from(
    shell: &mut Shell,
    path: &Path,
    keep_going: bool,
    resume: Resume,
) -> Result<usize, BatchError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| BatchError {
        file: file.clone(),
        line: 0,
        message: format!("cannot read: {e}"),
    })?;
    if shell.source_depth >= MAX_DEPTH {
        return Err(BatchError {
            file,
            line: 0,
            message: "sourced files nest too deeply (a file sources itself?)".into(),
        });
    }
    shell.source_depth += 1;
    let mut failures = 0;
    let mut result = Ok(());
    let top = shell.source_depth == 1;
    for (line, cmd) in logical_lines(&text) {
        let resumed_start = resume.crawl_started && line == resume.line && cmd == "crawl start";
        if line < resume.line || resumed_start {
            continue;
        }
        if top {
            super::lifeline::tell_line(line);
        }
        shell.say(&format!("> {cmd}"));
        if let Err(message) = shell.execute(&cmd) {
            let e = BatchError {
                file: file.clone(),
                line,
                message,
            };
            if keep_going {
                eprintln!("{e}");
                failures += 1;
            } else {
                result = Err(e);
                break;
            }
        }
        if shell.wants_quit() {
            break;
        }
    }
    shell.source_depth -= 1;
    result.map(|()| failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_backslash_quote_does_not_end_the_quote() {
        // Found by fuzzing: `config save` writes `"\" #"` for the value `" #`.
        let lines = logical_lines("set fetch.user_agent \"\\\" #\" # note\n");
        assert_eq!(lines[0].1, "set fetch.user_agent \"\\\" #\"");
    }

    #[test]
    fn comments_blanks_and_continuations() {
        let text = "# header\n\nset crawl.delay 0 # no wait\nseed add http://a.org/ \\\n   http://b.org/\nset fetch.user_agent \"x # y\"\n";
        let lines = logical_lines(text);
        assert_eq!(
            lines,
            vec![
                (3, "set crawl.delay 0".to_string()),
                (4, "seed add http://a.org/     http://b.org/".to_string()),
                (6, "set fetch.user_agent \"x # y\"".to_string()),
            ]
        );
    }
}
