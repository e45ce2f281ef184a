//! A supervised shell's line to its supervisor (`trawl shell` and `trawl
//! run` run the shell in a child process, see `cli::supervise`): whether a
//! crawl runs and which line of a batch is being run, so that a process
//! that dies (an abort, a stack overflow, an out-of-memory kill) is
//! started again with its crawl resumed and its batch going on from there.
//! Without a supervisor every call is a no-op.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// The environment variable that hands a child the pipe's file descriptor.
pub const FD_VAR: &str = "TRAWL_SUPERVISOR_FD";
/// Set in a restarted child: `1` when its crawl was running (start it
/// again), `0` when not.
pub const RESUME_CRAWL_VAR: &str = "TRAWL_RESUME_CRAWL";
/// Set in a restarted batch: the line it was running when it died.
pub const RESUME_LINE_VAR: &str = "TRAWL_RESUME_LINE";

struct Link {
    pipe: std::fs::File,
    /// The crawl state last told (told again only when it changes).
    crawl: Option<bool>,
}

fn link() -> Option<&'static Mutex<Link>> {
    static LINK: OnceLock<Option<Mutex<Link>>> = OnceLock::new();
    LINK.get_or_init(|| {
        let fd: i32 = std::env::var(FD_VAR).ok()?.parse().ok()?;
        // The fd must be an open pipe the supervisor made for this process.
        // SAFETY: fcntl only queries the descriptor.
        if fd < 3 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            return None;
        }
        use std::os::fd::FromRawFd;
        // SAFETY: the descriptor is open, inherited for this purpose, and
        // owned by nothing else in this process.
        let pipe = unsafe { std::fs::File::from_raw_fd(fd) };
        Some(Mutex::new(Link { pipe, crawl: None }))
    })
    .as_ref()
}

/// One message in one write (a pipe writes up to 4 KiB whole), so a
/// death cannot leave half of one.
fn send(pipe: &mut std::fs::File, msg: &str) {
    let _ = pipe.write_all(msg.as_bytes());
}

/// Tells the supervisor whether a crawl runs now.
pub fn tell_crawl(running: bool) {
    if let Some(l) = link()
        && let Ok(mut l) = l.lock()
        && l.crawl != Some(running)
    {
        l.crawl = Some(running);
        send(&mut l.pipe, &format!("crawl {}\n", u8::from(running)));
    }
}

/// Tells the supervisor which line of the batch starts now.
pub fn tell_line(line: usize) {
    if let Some(l) = link()
        && let Ok(mut l) = l.lock()
    {
        send(&mut l.pipe, &format!("line {line}\n"));
    }
}

/// What a restarted child is to resume: its crawl, and the batch line
/// (None: this is no restart).
pub fn resume() -> Option<Resume> {
    let crawl = std::env::var_os(RESUME_CRAWL_VAR)?;
    let line = std::env::var(RESUME_LINE_VAR)
        .ok()
        .and_then(|v| v.parse().ok());
    Some(Resume {
        crawl: crawl == "1",
        line,
    })
}

/// What a restarted child resumes.
#[derive(Clone, Copy, Debug)]
pub struct Resume {
    pub crawl: bool,
    pub line: Option<usize>,
}
