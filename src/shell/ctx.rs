//! What a command works with: the store, the settings, the crawl running
//! in this process, the output sink and the interrupt flag. Commands get
//! this, not the shell; only `source`, `timing` and `quit` act on the
//! shell itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::Result;
use super::render::Sink;
use crate::crawl::{CrawlHandle, Summary};
use crate::schema::ConfigEntries;
use crate::schema::tables::ConfigRow;
use crate::settings::CrawlSettings;
use crate::store::Store;

/// A crawl started from this shell.
pub(super) struct Running {
    pub(super) handle: CrawlHandle,
    pub(super) join:
        tokio::task::JoinHandle<std::result::Result<Summary, crate::crawl::CrawlError>>,
}

pub struct Ctx {
    pub(super) store: Arc<Store>,
    pub(super) rt: tokio::runtime::Handle,
    pub(super) settings: CrawlSettings,
    pub(super) crawl: Option<Running>,
    /// Set by Ctrl-C; long commands check it and stop.
    pub(super) interrupt: Arc<AtomicBool>,
    pub(super) sink: Sink,
    pub(super) progress_tty: bool,
    /// Off a terminal, long work (an export) still reports: a plain line
    /// on stderr every `PLAIN_EVERY`.
    pub(super) plain_progress: bool,
    last_progress: Option<std::time::Instant>,
}

/// How often plain progress lines are written.
const PLAIN_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

impl Ctx {
    /// A context over `store` with the settings saved in it, and notes
    /// about saved settings it could not apply.
    pub(super) fn new(
        store: Arc<Store>,
        rt: tokio::runtime::Handle,
        sink: Sink,
    ) -> (Ctx, Vec<String>) {
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
        let ctx = Ctx {
            store,
            rt,
            settings,
            crawl: None,
            interrupt: Arc::new(AtomicBool::new(false)),
            sink,
            progress_tty: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            plain_progress: false,
            last_progress: None,
        };
        (ctx, notes)
    }

    /// A line for people, kept out of machine output.
    pub(super) fn say(&mut self, text: &str) {
        self.sink.say(text);
    }

    /// A progress line on stderr, redrawn at most every 200 ms on a
    /// terminal; elsewhere none, or with `plain_progress` a line every
    /// 10 s.
    pub(super) fn progress(&mut self, line: &str) {
        let every = match (self.progress_tty, self.plain_progress) {
            (true, _) => std::time::Duration::from_millis(200),
            (false, true) => PLAIN_EVERY,
            (false, false) => return,
        };
        let now = std::time::Instant::now();
        match self.last_progress {
            // The first plain line waits a period: short work prints none.
            None if !self.progress_tty => {
                self.last_progress = Some(now);
                return;
            }
            Some(t) if now - t < every => return,
            _ => {}
        }
        self.last_progress = Some(now);
        match self.progress_tty {
            true => eprint!("\r\x1b[K{line}"),
            false => eprintln!("{line}"),
        }
    }

    pub(super) fn progress_done(&mut self) {
        if self.last_progress.take().is_some() && self.progress_tty {
            eprint!("\r\x1b[K");
        }
    }

    /// Runs long work that reports its progress off a terminal too (a
    /// plain line every 10 s), clearing the progress line after.
    pub(super) fn reporting<T>(&mut self, work: impl FnOnce(&mut Ctx) -> T) -> T {
        self.plain_progress = true;
        let done = work(self);
        self.plain_progress = false;
        self.progress_done();
        done
    }

    pub(super) fn interrupted(&self) -> bool {
        self.interrupt.swap(false, Ordering::SeqCst)
    }

    /// Collects a finished crawl and reports how it ended.
    pub(super) fn reap(&mut self) {
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

    /// Saves the settings that differ from the defaults into the db.
    pub(super) fn persist_settings(&self) -> Result<()> {
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

impl Drop for Ctx {
    fn drop(&mut self) {
        if let Some(r) = self.crawl.take() {
            r.handle.stop();
            let _ = self.rt.block_on(r.join);
        }
    }
}
