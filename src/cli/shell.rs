//! `trawl shell` and `trawl run`: opening the db (read-only when it cannot
//! be written), which rc files run, and where line history goes.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};

use super::{RunArgs, ShellArgs};
use crate::shell::{Shell, batch, lifeline, repl};
use crate::store::{Store, StoreError};

/// Opens the db for the shell: read-write, or as a catching-up secondary
/// whose scratch files live in a private temp dir removed on exit.
struct ShellDb {
    store: Arc<Store>,
    _scratch: Option<tempfile::TempDir>,
}

impl ShellDb {
    fn open(db: &Path, read_only: bool) -> anyhow::Result<ShellDb> {
        if !read_only {
            match super::open_store(db).map_err(|e| e.downcast::<StoreError>()) {
                Ok(store) => {
                    super::note_migrations(&store);
                    return Ok(ShellDb {
                        store: Arc::new(store),
                        _scratch: None,
                    });
                }
                // A db the user may read but not write: queries still work.
                Err(Ok(StoreError::NotWritable(_, why))) => eprintln!(
                    "note: {} is not writable ({why}); opened read-only: queries work, commands that change it are refused",
                    db.display()
                ),
                Err(Ok(e)) => return Err(e.into()),
                Err(Err(e)) => return Err(e),
            }
        }
        let scratch = tempfile::Builder::new()
            .prefix("trawl-secondary-")
            .tempdir()
            .context("cannot create a scratch directory for the read-only attach")?;
        let store = Store::open_secondary(db, scratch.path())?;
        Ok(ShellDb {
            store: Arc::new(store),
            _scratch: Some(scratch),
        })
    }

    /// Where line history is kept: beside a db this shell may write, in the
    /// user's state directory for one it only reads (never written into
    /// another process's or user's db directory).
    fn history(&self, db: &Path) -> Option<PathBuf> {
        if !self.store.is_read_only() {
            return Some(db.join("trawl_history"));
        }
        let state = std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/state")))?;
        let dir = state.join("trawl");
        std::fs::create_dir_all(&dir).ok()?;
        Some(dir.join("history"))
    }
}

/// Whether `./.crawlrc` may run unasked: only when it is a file of the
/// user's own that nobody else can write (it can start crawls and write
/// files); otherwise says why it is skipped.
fn trusted_crawlrc(path: &Path) -> Result<bool, String> {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::metadata(path) else {
        return Ok(false);
    };
    if !m.is_file() {
        return Ok(false);
    }
    // SAFETY: getuid cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    if m.uid() != uid {
        return Err(format!(
            "./.crawlrc skipped: it belongs to another user (uid {}); run it with --rc .crawlrc if you trust it",
            m.uid()
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(
            "./.crawlrc skipped: others can write it (chmod go-w .crawlrc to let it run)".into(),
        );
    }
    Ok(true)
}

fn new_shell(store: Arc<Store>, rt: &tokio::runtime::Runtime) -> Shell {
    let tty = std::io::stdout().is_terminal();
    let width = if tty {
        crate::shell::terminal_width().unwrap_or(120)
    } else {
        0
    };
    let shell = Shell::new(
        store,
        rt.handle().clone(),
        Box::new(std::io::stdout()),
        width,
    );
    // Ctrl-C interrupts the current command, never the process or the crawl.
    let flag = shell.interrupt_flag();
    rt.spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    });
    shell
}

pub(super) fn cmd_shell(a: ShellArgs, rt: &tokio::runtime::Runtime) -> anyhow::Result<()> {
    let db = ShellDb::open(&a.db, a.read_only)?;
    let mut shell = new_shell(db.store.clone(), rt);
    let resume = lifeline::resume();
    let mut rcs: Vec<PathBuf> = Vec::new();
    match trusted_crawlrc(Path::new(".crawlrc")) {
        // A restarted shell ran its rc files before (what they set is in
        // the db).
        _ if resume.is_some() => {}
        Ok(true) => rcs.push(".crawlrc".into()),
        Ok(false) => {}
        Err(note) => eprintln!("note: {note}"),
    }
    rcs.extend(a.rc.iter().filter(|_| resume.is_none()).cloned());
    for rc in rcs {
        if let Err(e) = batch::run_file(&mut shell, &rc, false) {
            eprintln!("error: {e}");
        }
    }
    if resume.is_some_and(|r| r.crawl)
        && let Err(e) = shell.execute("crawl start")
    {
        eprintln!("error: resuming the crawl: {e}");
    }
    if !shell.wants_quit() {
        repl::run(&mut shell, db.history(&a.db).as_deref());
    }
    drop(shell);
    Ok(())
}

pub(super) fn cmd_run(a: RunArgs, rt: &tokio::runtime::Runtime) -> anyhow::Result<()> {
    let store = Arc::new(super::open_store(&a.db)?);
    super::note_migrations(&store);
    let mut shell = new_shell(store, rt);
    // A batch restarted by its supervisor goes on where it died, its crawl
    // resumed (a `crawl start` on that line is the crawl resumed).
    let resume = lifeline::resume();
    let resume_crawl = resume.is_some_and(|r| r.crawl);
    if resume_crawl {
        shell
            .execute("crawl start")
            .map_err(|e| anyhow::anyhow!("resuming the crawl: {e}"))?;
    }
    let from = batch::Resume {
        line: resume.and_then(|r| r.line).unwrap_or(0),
        crawl_started: resume_crawl,
    };
    let failures = batch::run_file_from(&mut shell, &a.file, a.keep_going, from)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // A crawl the batch started and did not wait for runs to its end.
    shell.finish_crawl().map_err(|e| anyhow::anyhow!("{e}"))?;
    drop(shell);
    if failures > 0 {
        bail!("{failures} command(s) failed in {}", a.file.display());
    }
    Ok(())
}
