//! The query shell: one grammar for the interactive REPL and for `.crawlrc`
//! batches. It reads RocksDB directly for queries and talks to a crawl
//! running in the same process through its [`CrawlHandle`].
//!
//! Every user error is a one-line [`ShellError`]; the shell goes on.

pub mod batch;
pub mod commands;
mod ctx;
pub mod error;
pub mod expr;
pub mod fields;
pub mod lifeline;
mod lookup;
mod plan;
pub mod render;
pub mod repl;
pub(crate) mod reply;
mod table;

pub use error::ShellError;
pub use table::terminal_width;

use error::{Result, bail};

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) use ctx::Ctx;
use render::{Format, Sink};

use crate::crawl::CrawlState;
use crate::store::Store;

/// The shell: a command context plus what only the shell itself keeps
/// (whether to quit, `source` nesting, `timing`).
pub struct Shell {
    ctx: Ctx,
    quit: bool,
    /// How deep in `source` files we are.
    source_depth: usize,
    /// `timing on`: each command's wall time is printed after it.
    timing: bool,
}

impl Shell {
    /// A shell over `store`, printing to `out` (notes beside data to
    /// stderr). Settings saved in the db with `set` are applied.
    pub fn new(
        store: Arc<Store>,
        rt: tokio::runtime::Handle,
        out: Box<dyn Write + Send>,
        width: usize,
    ) -> Shell {
        let sink = Sink::new(out, Box::new(std::io::stderr()), width);
        let (ctx, notes) = Ctx::new(store, rt, sink);
        let mut shell = Shell {
            ctx,
            quit: false,
            source_depth: 0,
            timing: false,
        };
        for n in notes {
            shell.say(&n);
        }
        shell
    }

    /// The flag Ctrl-C should set to interrupt the current command.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.ctx.interrupt.clone()
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.ctx.store
    }

    pub fn wants_quit(&self) -> bool {
        self.quit
    }

    fn say(&mut self, text: &str) {
        self.ctx.say(text);
    }

    /// Waits for a crawl started from this shell to end (for batches that
    /// start one and end without `crawl wait`); with revisits on it does
    /// not end by itself, so this waits until Ctrl-C.
    pub fn finish_crawl(&mut self) -> std::result::Result<(), String> {
        self.ctx.interrupt.store(false, Ordering::SeqCst);
        self.ctx.wait_for_crawl_end().map_err(|e| e.to_string())
    }

    /// The crawl's state for the prompt: `idle`, `running 1,234 p/s`, …
    pub fn state_label(&mut self) -> String {
        self.ctx.reap();
        let notices = self
            .ctx
            .crawl
            .as_ref()
            .map(|r| r.handle.take_notices())
            .unwrap_or_default();
        for n in notices {
            self.say(&format!("note: {n}"));
        }
        match &self.ctx.crawl {
            None => "idle".into(),
            Some(r) => {
                let s = r.handle.snapshot();
                match s.state {
                    CrawlState::Paused => "paused".into(),
                    CrawlState::Stopping => "stopping".into(),
                    _ => {
                        let run = &s.counters.run;
                        let harvest = match run.judged {
                            0 => String::new(),
                            n => format!(", harvest {:.2}", run.relevant as f64 / n as f64),
                        };
                        format!(
                            "running {} p/s{harvest}",
                            table::thousands(s.recent_rate.round() as u64)
                        )
                    }
                }
            }
        }
    }

    /// Runs one command line. Errors are one line, for the caller to show.
    pub fn execute(&mut self, line: &str) -> std::result::Result<(), String> {
        let done = self.run_line(line).map_err(|e| e.to_string());
        lifeline::tell_crawl(self.ctx.crawl.is_some());
        done
    }

    fn run_line(&mut self, line: &str) -> Result<()> {
        self.ctx.interrupt.store(false, Ordering::SeqCst);
        let started = std::time::Instant::now();
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        // `export`'s --format names its file's format.
        let file_format = line.split_whitespace().next() == Some("export");
        let (format, line) = take_format(line, file_format)?;
        // From here what the shell says goes where the format wants it.
        self.ctx.sink.format = format;
        let done = self.run_words(&line, started);
        self.ctx.sink.format = Format::Table;
        done
    }

    fn run_words(&mut self, line: &str, started: std::time::Instant) -> Result<()> {
        self.ctx.reap();
        self.ctx.store.catch_up()?;
        let words = split_words(line)?;
        let mut words = words.iter().map(String::as_str);
        let Some(name) = words.next() else {
            return Ok(());
        };
        let cmd = commands::find(name).ok_or_else(|| commands::unknown(name))?;
        let call = commands::Call {
            args: words.collect(),
            line,
        };
        if !cmd.fits(call.args.len()) {
            return Err(cmd.usage_error());
        }
        if cmd.writes(&call.args) && self.ctx.store.is_read_only() {
            bail!(
                "{name}: the database is attached read-only (--read-only); this command changes it"
            );
        }
        let reply = match cmd.run {
            commands::Run::Data(run) => run(&mut self.ctx, &call),
            commands::Run::Shell(run) => run(self, &call),
        };
        let reply = reply.map_err(|e| match e {
            ShellError::Usage => cmd.usage_error(),
            e => e,
        });
        // A stream cut by an error is closed, so JSON output stays JSON.
        if reply.is_err() && self.ctx.sink.streaming() {
            self.ctx.sink.end();
        }
        self.ctx.sink.reply(reply?);
        if self.timing && cmd.name != "timing" {
            let ms = started.elapsed().as_secs_f64() * 1e3;
            self.say(&format!("time: {ms:.1} ms"));
        }
        Ok(())
    }
}

/// The output format a line asks for, and the line without the words
/// that asked: `--json`, or `--format NAME`, as unquoted words anywhere
/// (`pages where title ~ "--json"` keeps its operand). The words are
/// blanked, not cut, so errors still point at the right column.
fn take_format(line: &str, file_format: bool) -> Result<(Format, String)> {
    let spans = word_spans(line)?;
    let mut format = Format::Table;
    let mut blank = Vec::new();
    let mut i = 0;
    while i < spans.len() {
        let (w, r, quoted) = &spans[i];
        match (w.as_str(), quoted) {
            ("--json", false) => {
                format = Format::Json;
                blank.push(r.clone());
            }
            ("--format", false) if !file_format => {
                let Some((name, r2, _)) = spans.get(i + 1) else {
                    bail!("--format needs a value: table, json, jsonl, csv or tsv");
                };
                format = Format::parse(name)?;
                blank.push(r.start..r2.end);
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    let mut out = line.to_string();
    for r in blank {
        out.replace_range(r.clone(), &" ".repeat(r.len()));
    }
    Ok((format, out.trim_end().to_string()))
}

/// Splits a command line into words; quotes group; inside quotes a
/// backslash escapes the next character, with `\n`, `\r`, `\t` and
/// `\xHH` (a byte below 0x80) standing for the control characters
/// [`quote`] writes that way.
pub fn split_words(line: &str) -> std::result::Result<Vec<String>, String> {
    Ok(word_spans(line)?.into_iter().map(|w| w.0).collect())
}

/// A word, the byte range it came from, and whether any of it was quoted.
type Span = (String, std::ops::Range<usize>, bool);

/// The words of a line as [`split_words`] reads them, with where each was.
fn word_spans(line: &str) -> std::result::Result<Vec<Span>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let mut start = 0;
    let mut quote: Option<char> = None;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if !in_word {
            start = at;
        }
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\\') => match chars.next().map(|c| c.1) {
                Some('n') => cur.push('\n'),
                Some('r') => cur.push('\r'),
                Some('t') => cur.push('\t'),
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).map(|c| c.1).collect();
                    let byte = u8::from_str_radix(&hex, 16)
                        .ok()
                        .filter(u8::is_ascii)
                        .ok_or_else(|| {
                            format!("bad escape \\x{hex}: expected two hex digits below 80")
                        })?;
                    cur.push(char::from(byte));
                }
                Some(other) => cur.push(other),
                None => {}
            },
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
                quoted = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push((std::mem::take(&mut cur), start..at, quoted));
                    in_word = false;
                    quoted = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err("unterminated quote".into());
    }
    if in_word {
        words.push((cur, start..line.len(), quoted));
    }
    Ok(words)
}

/// `v` as one word [`split_words`] reads back exactly: plain when it has
/// nothing special, else double-quoted with `\`, `"` and control
/// characters escaped (so a value can never spill onto a second line).
pub fn quote(v: &str) -> String {
    let plain = !v.is_empty()
        && !v
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '#' | '\\'));
    if plain {
        return v.to_string();
    }
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The text after the first `n` words (as [`split_words`] reads them, so
/// a quoted path with spaces is one), and its column offset in `line`.
pub(crate) fn rest_after_words(line: &str, n: usize) -> (String, usize) {
    if let Ok(spans) = word_spans(line)
        && let Some(end) = n.checked_sub(1).and_then(|i| spans.get(i)).map(|w| w.1.end)
    {
        return (line[end..].to_string(), line[..end].chars().count());
    }
    let mut idx = 0;
    for _ in 0..n {
        let s = &line[idx..];
        let start = s.len() - s.trim_start().len();
        let end = s[start..]
            .find(char::is_whitespace)
            .map_or(s.len(), |e| start + e);
        idx += end;
    }
    (line[idx..].to_string(), line[..idx].chars().count())
}
