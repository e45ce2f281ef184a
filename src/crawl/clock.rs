//! The crawl's clock: the wall time when the crawl started plus tokio's
//! monotonic time since. Every politeness delay, back-off, robots.txt
//! expiry and stored time of a crawl reads it, so it never jumps with the
//! system clock, and a test can run a crawl on tokio's paused time
//! (`#[tokio::test(start_paused = true)]`) instead of sleeping.

use crate::model;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    wall0_ms: u64,
    mono0: tokio::time::Instant,
    /// Stopped at `wall0_ms` (an import's: a page stored at its archived
    /// time exactly, however long storing it takes).
    stopped: bool,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            wall0_ms: model::now_ms(),
            mono0: tokio::time::Instant::now(),
            stopped: false,
        }
    }

    /// A clock stopped at `wall_ms`: an import's, set to each page's
    /// archived fetch time (a running one stored a page a millisecond
    /// late when the machine was slow).
    pub fn at(wall_ms: u64) -> Clock {
        Clock {
            wall0_ms: wall_ms,
            mono0: tokio::time::Instant::now(),
            stopped: true,
        }
    }

    /// Milliseconds since the Unix epoch, on this clock.
    pub fn now_ms(&self) -> u64 {
        match self.stopped {
            true => self.wall0_ms,
            false => self.wall0_ms + self.mono0.elapsed().as_millis() as u64,
        }
    }

    /// The tokio instant of `at_ms` on this clock (now, if it has passed).
    pub fn instant_of(&self, at_ms: u64) -> tokio::time::Instant {
        let now = self.now_ms();
        tokio::time::Instant::now() + std::time::Duration::from_millis(at_ms.saturating_sub(now))
    }
}
