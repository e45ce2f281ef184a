//! The supervisor: `trawl crawl`, `trawl shell` and `trawl run` run their
//! work in a child process (this same program) and start it again when it
//! dies abnormally — an abort or a stack overflow in a library, an
//! out-of-memory kill, a panic out of `main` — so an unattended crawl goes
//! on. The crawl resumes as a rerun does (what was in flight is marked as
//! a crash suspect: a URL in flight at two deaths in a row is skipped), a
//! shell comes back with its crawl running, a batch goes on from the line
//! it was running. After `--max-restarts` deaths within [`WINDOW`] it
//! stops with one line saying why.
//!
//! Signals: SIGTERM and SIGHUP sent to the supervisor go to the child (a
//! child that ends by one is not restarted). A crawl child runs in its own
//! process group, so Ctrl-C reaches it once, through the supervisor; a
//! shell child stays in the terminal's group (it reads the terminal) and
//! gets Ctrl-C from it. A child dies with its supervisor (a `kill -9` of
//! the supervisor ends both, as it ended the single process before).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::BufRead;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::shell::lifeline::{FD_VAR, RESUME_CRAWL_VAR, RESUME_LINE_VAR};

/// The time over which deaths are counted against `--max-restarts`.
pub const WINDOW: Duration = Duration::from_secs(600);
/// The variable that makes a process the supervised child.
const CHILD_VAR: &str = "TRAWL_SUPERVISED";

/// What the supervised child runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Work {
    Crawl,
    Shell,
    Batch,
}

/// Whether this process is a supervisor's child (then it just works).
pub(super) fn is_child() -> bool {
    std::env::var_os(CHILD_VAR).is_some()
}

/// The child's pid, for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// A signal was passed on to the child: its end is not a death.
static FORWARDED: AtomicBool = AtomicBool::new(false);
/// A signal to pass on that came while no child ran (being started, or
/// between a death and its restart): passed on once one runs, and no
/// child is started again after it.
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        FORWARDED.store(true, Ordering::SeqCst);
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    } else {
        PENDING.store(sig, Ordering::SeqCst);
    }
}

extern "C" fn ignore(_: libc::c_int) {}

/// Installs `handler` for `sig` (a handler, not SIG_IGN: an exec resets it
/// for the child).
fn handle(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: a zeroed sigaction with a plain handler and an empty mask is
    // valid; the handlers only call async-signal-safe functions.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// What the child last told (a shell's crawl, a batch's line).
#[derive(Default, Clone, Copy)]
struct Told {
    crawl: bool,
    line: Option<usize>,
}

/// Runs this program's command in a child, restarting it after abnormal
/// deaths; returns the child's own exit.
pub(super) fn supervise(work: Work, max_restarts: u32) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return super::fail(anyhow::anyhow!(
                "cannot find this program to supervise it: {e}"
            ));
        }
    };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    handle(libc::SIGTERM, forward);
    handle(libc::SIGHUP, forward);
    handle(
        libc::SIGINT,
        if work == Work::Crawl { forward } else { ignore },
    );
    let tty = Terminal::save();
    let mut deaths: VecDeque<Instant> = VecDeque::new();
    let mut resume = Told::default();
    loop {
        let told = Arc::new(Mutex::new(resume));
        let restarted = !deaths.is_empty();
        let status = match run_child(&exe, &args, work, (resume, restarted), told.clone()) {
            Ok(s) => s,
            Err(e) => return super::fail(anyhow::anyhow!("cannot start the crawl process: {e}")),
        };
        tty.restore();
        let Some(death) = abnormal(&status) else {
            return exit_code(&status);
        };
        let asked = PENDING.load(Ordering::SeqCst);
        if asked != 0 {
            eprintln!(
                "trawl: the {} process died ({death}) as {} came; not restarted",
                work.name(),
                signal_name(asked)
            );
            return ExitCode::from(128 + asked as u8);
        }
        let now = Instant::now();
        deaths.push_back(now);
        while deaths.front().is_some_and(|t| now - *t > WINDOW) {
            deaths.pop_front();
        }
        let n = deaths.len() as u32;
        if n > max_restarts {
            eprintln!(
                "trawl: error: the {} process died {n} times in {} min (last {death}); stopped. Run the same command to resume (`why URL` names a page skipped as a crash loop)",
                work.name(),
                WINDOW.as_secs() / 60
            );
            return ExitCode::from(3);
        }
        resume = *told.lock().unwrap_or_else(|e| e.into_inner());
        eprintln!(
            "trawl: the {} process died ({death}); restarting it ({n} of {max_restarts} restarts in {} min){}",
            work.name(),
            WINDOW.as_secs() / 60,
            if resume.crawl || work == Work::Crawl {
                ", crawl resumed"
            } else {
                ""
            }
        );
    }
}

impl Work {
    fn name(self) -> &'static str {
        match self {
            Work::Crawl => "crawl",
            Work::Shell => "shell",
            Work::Batch => "batch",
        }
    }
}

/// Starts the child, collects what it tells, and waits for its end.
fn run_child(
    exe: &std::path::Path,
    args: &[OsString],
    work: Work,
    (resume, restarted): (Told, bool),
    told: Arc<Mutex<Told>>,
) -> std::io::Result<std::process::ExitStatus> {
    let (read, write) = pipe()?;
    let write_fd = write.as_raw_fd();
    let mut cmd = std::process::Command::new(exe);
    cmd.args(args)
        .env(CHILD_VAR, "1")
        .env(FD_VAR, write_fd.to_string())
        .env_remove(RESUME_CRAWL_VAR)
        .env_remove(RESUME_LINE_VAR);
    if restarted {
        cmd.env(RESUME_CRAWL_VAR, if resume.crawl { "1" } else { "0" });
    }
    if let Some(line) = resume.line {
        cmd.env(RESUME_LINE_VAR, line.to_string());
    }
    let own_group = work == Work::Crawl;
    // SAFETY: between fork and exec only async-signal-safe calls: prctl,
    // getppid, setpgid, fcntl.
    unsafe {
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(137); // the supervisor is gone already
            }
            if own_group {
                libc::setpgid(0, 0);
            }
            // The pipe's write end stays open across exec in the child.
            libc::fcntl(write_fd, libc::F_SETFD, 0);
            Ok(())
        });
    }
    FORWARDED.store(false, Ordering::SeqCst);
    let mut child = cmd.spawn()?;
    drop(write);
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let pending = PENDING.swap(0, Ordering::SeqCst);
    if pending != 0 {
        FORWARDED.store(true, Ordering::SeqCst);
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(child.id() as i32, pending) };
    }
    let reader = std::thread::spawn(move || {
        let mut pipe = std::io::BufReader::new(std::fs::File::from(read));
        let mut line = String::new();
        // Only whole lines count: a death cuts nothing but the last.
        while pipe.read_line(&mut line).is_ok_and(|n| n > 0) && line.ends_with('\n') {
            let mut t = told.lock().unwrap_or_else(|e| e.into_inner());
            match line.trim_end().split_once(' ') {
                Some(("crawl", v)) => t.crawl = v == "1",
                Some(("line", v)) => t.line = v.parse().ok(),
                _ => {}
            }
            line.clear();
        }
    });
    let status = child.wait();
    CHILD.store(0, Ordering::SeqCst);
    let _ = reader.join();
    status
}

/// A pipe whose ends close on exec (the child's end is kept open by hand).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned here only.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// How the child died, when that was not its own doing or ours: killed
/// by a signal nobody passed on to it, or a panic out of `main` (101).
fn abnormal(status: &std::process::ExitStatus) -> Option<String> {
    if let Some(sig) = status.signal() {
        // Passed on by us, or the terminal's Ctrl-C / Ctrl-\ (a shell's
        // child shares its process group): the user's, not a death.
        if FORWARDED.load(Ordering::SeqCst) || sig == libc::SIGINT || sig == libc::SIGQUIT {
            return None;
        }
        return Some(format!("killed by {}", signal_name(sig)));
    }
    (status.code() == Some(101)).then(|| "a panic".to_string())
}

fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGABRT => "SIGABRT (an abort or a stack overflow)".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGKILL => "SIGKILL (the out-of-memory killer?)".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGINT => "SIGINT".into(),
        n => format!("signal {n}"),
    }
}

/// The child's exit as this process's: its code, or 128 + its signal.
fn exit_code(status: &std::process::ExitStatus) -> ExitCode {
    match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(c.clamp(0, 255) as u8),
        (None, Some(sig)) => ExitCode::from((128 + sig).clamp(0, 255) as u8),
        _ => ExitCode::FAILURE,
    }
}

/// The terminal's modes before the child ran: a shell that dies while its
/// line editor holds the terminal in raw mode leaves it that way.
struct Terminal(Option<libc::termios>);

impl Terminal {
    fn save() -> Terminal {
        // SAFETY: tcgetattr fills the struct when fd 0 is a terminal.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            Terminal((libc::tcgetattr(0, &mut t) == 0).then_some(t))
        }
    }
    fn restore(&self) {
        if let Some(t) = &self.0 {
            // SAFETY: restores modes read from the same descriptor.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, t) };
        }
    }
}
