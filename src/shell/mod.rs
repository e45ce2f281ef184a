//! The query shell: one grammar for the interactive REPL and for `.crawlrc`
//! batches. It reads RocksDB directly for queries and talks to a crawl
//! running in the same process through its [`CrawlHandle`].
//!
//! Every user error is a one-line [`ShellError`]; the shell goes on.

pub mod batch;
pub mod commands;
pub mod error;
pub mod expr;
pub mod fields;
pub mod lifeline;
mod lookup;
mod plan;
pub mod repl;
pub(crate) mod reply;
mod table;

pub use error::ShellError;
pub use table::terminal_width;

use error::{Result, bail};

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::crawl::{CrawlHandle, CrawlState, Summary};
use crate::schema::ConfigEntries;
use crate::schema::tables::ConfigRow;
use crate::settings::CrawlSettings;
use crate::store::Store;

/// A crawl started from this shell.
struct Running {
    handle: CrawlHandle,
    join: tokio::task::JoinHandle<std::result::Result<Summary, crate::crawl::CrawlError>>,
}

pub struct Shell {
    store: Arc<Store>,
    rt: tokio::runtime::Handle,
    settings: CrawlSettings,
    crawl: Option<Running>,
    /// Set by Ctrl-C; long commands check it and stop.
    interrupt: Arc<AtomicBool>,
    out: Box<dyn Write + Send>,
    /// Terminal width for tables; 0 means no truncation.
    width: usize,
    quit: bool,
    /// How deep in `source` files we are.
    source_depth: usize,
    progress_tty: bool,
    last_progress: Option<std::time::Instant>,
    /// `timing on`: each command's wall time is printed after it.
    timing: bool,
}

impl Shell {
    /// A shell over `store`, printing to `out`. Settings saved in the db
    /// with `set` are applied.
    pub fn new(
        store: Arc<Store>,
        rt: tokio::runtime::Handle,
        out: Box<dyn Write + Send>,
        width: usize,
    ) -> Shell {
        let mut settings = CrawlSettings::default();
        let mut notes = Vec::new();
        let saved = match store.meta::<ConfigRow>() {
            Ok(saved) => saved,
            Err(e) => {
                notes.push(format!(
                    "note: saved settings unreadable ({e}); using the defaults (set saves them again)"
                ));
                None
            }
        };
        if let Some(cfg) = saved {
            for (k, v) in cfg.entries {
                match crate::settings::find(&k).map(|key| key.set(&mut settings, &v)) {
                    Some(Ok(())) => {}
                    Some(Err(e)) => notes.push(format!("note: saved setting ignored: {e}")),
                    None => notes.push(format!(
                        "note: saved setting {k} is unknown to this trawl; ignored"
                    )),
                }
            }
        }
        let mut shell = Shell {
            store,
            rt,
            settings,
            crawl: None,
            interrupt: Arc::new(AtomicBool::new(false)),
            out,
            width,
            quit: false,
            source_depth: 0,
            progress_tty: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            last_progress: None,
            timing: false,
        };
        for n in notes {
            shell.say(&n);
        }
        shell
    }

    /// The flag Ctrl-C should set to interrupt the current command.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn wants_quit(&self) -> bool {
        self.quit
    }

    fn say(&mut self, text: &str) {
        let _ = writeln!(self.out, "{}", text.trim_end_matches('\n'));
        let _ = self.out.flush();
    }

    /// A progress line on stderr, redrawn at most every 200 ms; only on a
    /// terminal, so pipes and files get none of it.
    fn progress(&mut self, line: &str) {
        if !self.progress_tty
            || self
                .last_progress
                .is_some_and(|t| t.elapsed() < std::time::Duration::from_millis(200))
        {
            return;
        }
        self.last_progress = Some(std::time::Instant::now());
        eprint!("\r\x1b[K{line}");
    }

    fn progress_done(&mut self) {
        if self.last_progress.take().is_some() {
            eprint!("\r\x1b[K");
        }
    }

    fn interrupted(&self) -> bool {
        self.interrupt.swap(false, Ordering::SeqCst)
    }

    /// Waits for a crawl started from this shell to end (for batches that
    /// start one and end without `crawl wait`); with revisits on it does
    /// not end by itself, so this waits until Ctrl-C.
    pub fn finish_crawl(&mut self) -> std::result::Result<(), String> {
        self.interrupt.store(false, Ordering::SeqCst);
        self.wait_for_crawl_end().map_err(|e| e.to_string())
    }

    /// The crawl's state for the prompt: `idle`, `running 1,234 p/s`, …
    pub fn state_label(&mut self) -> String {
        self.reap();
        let notices = self
            .crawl
            .as_ref()
            .map(|r| r.handle.take_notices())
            .unwrap_or_default();
        for n in notices {
            self.say(&format!("note: {n}"));
        }
        match &self.crawl {
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

    /// Collects a finished crawl and reports how it ended.
    fn reap(&mut self) {
        if self.crawl.as_ref().is_some_and(|r| r.join.is_finished()) {
            let r = self.crawl.take().expect("checked above");
            for n in r.handle.take_notices() {
                self.say(&format!("note: {n}"));
            }
            match self.rt.block_on(r.join) {
                Ok(Ok(s)) => self.say(&format!(
                    "crawl {}: {} pages fetched, {} links found in {:.1} s, TLP {:.1}",
                    if s.interrupted { "stopped" } else { "finished" },
                    s.run_fetched,
                    s.run_links,
                    s.elapsed.as_secs_f64(),
                    s.tlp()
                )),
                Ok(Err(e)) => self.say(&format!("crawl failed: {e}")),
                Err(e) => self.say(&format!("crawl task failed: {e}")),
            }
        }
    }

    /// Runs one command line. Errors are one line, for the caller to show.
    pub fn execute(&mut self, line: &str) -> std::result::Result<(), String> {
        let done = self.run_line(line).map_err(|e| e.to_string());
        lifeline::tell_crawl(self.crawl.is_some());
        done
    }

    fn run_line(&mut self, line: &str) -> Result<()> {
        self.interrupt.store(false, Ordering::SeqCst);
        let started = std::time::Instant::now();
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        self.reap();
        self.store.catch_up()?;
        let words = split_words(line)?;
        let json = words.iter().any(|w| w == "--json");
        let mut words = words.iter().map(String::as_str).filter(|w| *w != "--json");
        let Some(name) = words.next() else {
            return Ok(());
        };
        let cmd = commands::find(name).ok_or_else(|| commands::unknown(name))?;
        let call = commands::Call {
            args: words.collect(),
            line,
            json,
        };
        if !cmd.fits(call.args.len()) {
            return Err(cmd.usage_error());
        }
        if cmd.writes(&call.args) && self.store.is_read_only() {
            bail!(
                "{name}: the database is attached read-only (--read-only); this command changes it"
            );
        }
        let reply = (cmd.run)(self, &call).map_err(|e| match e {
            ShellError::Usage => cmd.usage_error(),
            e => e,
        })?;
        let text = if json {
            serde_json::to_string_pretty(&reply.json).unwrap_or_default()
        } else {
            reply.human
        };
        if !text.is_empty() {
            self.say(&text);
        }
        if self.timing && cmd.name != "timing" {
            let ms = started.elapsed().as_secs_f64() * 1e3;
            self.say(&format!("time: {ms:.1} ms"));
        }
        Ok(())
    }

    /// Saves the settings that differ from the defaults into the db.
    fn persist_settings(&self) -> Result<()> {
        let defaults = CrawlSettings::default();
        let entries = crate::settings::keys()
            .filter(|k| k.get(&self.settings) != k.get(&defaults))
            .map(|k| (k.name().to_string(), k.get(&self.settings)))
            .collect();
        let mut b = self.store.batch();
        b.put_meta::<ConfigRow>(&ConfigEntries { entries });
        Ok(b.write()?)
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        if let Some(r) = self.crawl.take() {
            r.handle.stop();
            let _ = self.rt.block_on(r.join);
        }
    }
}

/// Splits a command line into words; quotes group; inside quotes a
/// backslash escapes the next character, with `\n`, `\r`, `\t` and
/// `\xHH` (a byte below 0x80) standing for the control characters
/// [`quote`] writes that way.
pub fn split_words(line: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\\') => match chars.next() {
                Some('n') => cur.push('\n'),
                Some('r') => cur.push('\r'),
                Some('t') => cur.push('\t'),
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).collect();
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
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
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
        words.push(cur);
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

/// The text after the first `n` words, and its column offset in `line`.
pub(crate) fn rest_after_words(line: &str, n: usize) -> (String, usize) {
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
