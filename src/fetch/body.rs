//! Reading one response body under every limit: the total deadline (time
//! spent waiting for memory does not count against it), a minimum rate (a
//! tarpit is cut after a window, not at the deadline), the byte budget,
//! and the body cap on what it decodes to (a bomb is not read past it).

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Body as _;
use tokio::time::Instant;

use super::FetchError;
use super::budget::{FREE_BYTES, Ticket};
use super::encoding::{Decoder, PIECE};
use crate::model::FailReason;

/// What a body must keep to, besides its cap.
pub(super) struct BodyRules {
    /// Cap on the body, as received and decoded.
    pub cap: usize,
    /// When the fetch must be done (moved on by time spent waiting for
    /// memory).
    pub deadline: Instant,
    /// A body slower than `min_speed` bytes a second over each `window`
    /// is cut as `too-slow` (0: never).
    pub min_speed: u64,
    pub window: Duration,
    /// How long a body may wait for memory in all before it is given up
    /// for now (its URL is asked for again later, never failed for it).
    pub memory_patience: Duration,
    /// Keep a compressed body's bytes as received too (for WARC), counted
    /// with what they decode to.
    pub keep_raw: bool,
}

/// A body read to its end, its cap, or the end of what it decodes to.
pub(super) struct Body {
    pub bytes: Vec<u8>,
    /// Bytes received off the wire.
    pub wire_len: u64,
    pub truncated: bool,
    /// The body was read to its end (the connection may be used again).
    pub complete: bool,
    /// A compressed body as received, when asked for (a plain body is
    /// `bytes` as received).
    pub raw: Option<Vec<u8>>,
}

/// Reads `body`, undoing `encoding`, counting what it holds on `ticket`.
pub(super) async fn read_body(
    mut body: hyper::body::Incoming,
    encoding: &str,
    rules: &BodyRules,
    ticket: &mut Ticket,
) -> Result<Body, FetchError> {
    let mut decoder = Decoder::new(encoding, rules.cap);
    let mut deadline = rules.deadline;
    let mut rate = Rate::new(rules.min_speed, rules.window);
    let mut memory = MemoryWait::new(rules.memory_patience);
    let mut wire_len = 0u64;
    let mut raw = (rules.keep_raw && decoder.compressed()).then(Vec::new);
    // A plain body of known length starts in a buffer of that size (up to
    // the cap): grown by doubling, a page was copied ~log2(size) times and
    // touched fresh memory at each step (on rust-doc 64 % of the bytes are
    // in pages over 64 KiB). Past the bytes the budget leaves uncounted,
    // the length is counted first, as the bytes would be: a Content-Length
    // that lies holds budget it gives back at the end, not memory nobody
    // counted.
    if !decoder.compressed()
        && let Some(n) = body.size_hint().exact()
    {
        let n = usize::try_from(n).unwrap_or(usize::MAX).min(rules.cap);
        if n > FREE_BYTES {
            let waited = memory.grow(ticket, n).await?;
            deadline += waited;
            rate.pause(waited);
        }
        decoder.reserve(n);
    }
    let complete = loop {
        let wake = rate.next_check().min(deadline);
        let frame = match tokio::time::timeout_at(wake, body.frame()).await {
            Err(_) if Instant::now() >= deadline => {
                return Err(FetchError::new(
                    FailReason::Timeout,
                    "body not complete in time",
                ));
            }
            Err(_) => {
                rate.check(Instant::now())?;
                continue;
            }
            Ok(None) => break true,
            Ok(Some(Err(e))) => return Err(super::client::body_error(&e)),
            Ok(Some(Ok(f))) => f,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        wire_len += data.len() as u64;
        rate.add(data.len());
        let piece = if decoder.compressed() {
            PIECE
        } else {
            data.len().max(1)
        };
        for part in data.chunks(piece) {
            // Counted before it is kept, and what it decoded to after.
            let held = decoder.len() + raw.as_ref().map_or(0, Vec::len);
            let mut waited = memory.grow(ticket, held + part.len()).await?;
            if let Some(raw) = raw.as_mut().filter(|_| !decoder.done()) {
                raw.extend_from_slice(part);
            }
            decoder.feed(part)?;
            if decoder.compressed() {
                let held = decoder.len() + raw.as_ref().map_or(0, Vec::len);
                waited += memory.grow(ticket, held).await?;
            }
            deadline += waited;
            rate.pause(waited);
            if decoder.done() {
                break;
            }
        }
        if decoder.done() {
            break false;
        }
        rate.check(Instant::now())?;
    };
    let (bytes, truncated) = decoder.finish()?;
    ticket.settle(bytes.len() + raw.as_ref().map_or(0, Vec::len));
    Ok(Body {
        bytes,
        wire_len,
        truncated,
        complete,
        raw,
    })
}

/// The body's rate over windows of `window`: too slow when a whole
/// window brought less than `min_speed` × its length (as curl's
/// `--speed-limit` with `--speed-time`).
struct Rate {
    min_speed: u64,
    window: Duration,
    since: Instant,
    bytes: u64,
}

impl Rate {
    fn new(min_speed: u64, window: Duration) -> Rate {
        Rate {
            min_speed,
            window,
            since: Instant::now(),
            bytes: 0,
        }
    }

    fn add(&mut self, n: usize) {
        self.bytes += n as u64;
    }

    /// When the window ends (far off when there is no minimum).
    fn next_check(&self) -> Instant {
        if self.min_speed == 0 {
            return self.since + Duration::from_secs(86_400 * 365);
        }
        self.since + self.window
    }

    /// Time spent waiting for memory is not the server's slowness.
    fn pause(&mut self, waited: Duration) {
        self.since += waited;
    }

    /// At a window's end: too slow, or a new window.
    fn check(&mut self, now: Instant) -> Result<(), FetchError> {
        if self.min_speed == 0 || now < self.since + self.window {
            return Ok(());
        }
        let secs = (now - self.since).as_secs_f64();
        let want = self.min_speed as f64 * secs;
        if (self.bytes as f64) < want {
            return Err(FetchError::new(
                FailReason::TooSlow,
                format!(
                    "the body came at {:.0} bytes/s over {secs:.1} s, under fetch.min_speed ({} bytes/s)",
                    self.bytes as f64 / secs,
                    self.min_speed
                ),
            ));
        }
        self.since = now;
        self.bytes = 0;
        Ok(())
    }
}

/// The time a body has waited for memory, within its patience.
struct MemoryWait {
    patience: Duration,
    waited: Duration,
}

impl MemoryWait {
    fn new(patience: Duration) -> MemoryWait {
        MemoryWait {
            patience,
            waited: Duration::ZERO,
        }
    }

    /// Grows `ticket` to `total`; returns how long that waited. Past the
    /// patience the fetch is given up for now: its URL is queued again.
    async fn grow(&mut self, ticket: &mut Ticket, total: usize) -> Result<Duration, FetchError> {
        let start = Instant::now();
        let left = self.patience.saturating_sub(self.waited);
        let done = tokio::time::timeout(left, ticket.grow_to(total)).await;
        let waited = start.elapsed();
        self.waited += waited;
        match done {
            Ok(()) => Ok(waited),
            Err(_) => Err(FetchError::later(format!(
                "waited {:.0} s for memory (fetch.memory_budget spent): asked again later",
                self.waited.as_secs_f64()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use crate::fetch::{FREE_BYTES, FetchSettings, HttpClient, NetGuard};
    use crate::model::FailReason;

    /// A server on 127.0.0.1 answering every request with `body` bytes,
    /// the first `fast` at once and the rest `chunk` bytes every `every`.
    async fn serve(body: usize, fast: usize, (chunk, every): (usize, Duration)) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = s.read(&mut buf).await;
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {body}\r\n\r\n"
                    );
                    let _ = s.write_all(head.as_bytes()).await;
                    let _ = s.write_all(&vec![b'a'; fast]).await;
                    let mut sent = fast;
                    while sent < body {
                        tokio::time::sleep(every).await;
                        let n = chunk.min(body - sent);
                        if s.write_all(&vec![b'b'; n]).await.is_err() {
                            return;
                        }
                        sent += n;
                    }
                });
            }
        });
        format!("http://{addr}/")
    }

    fn client(min_speed: u64, window: Duration, timeout: Duration) -> HttpClient {
        let settings = FetchSettings {
            allow_private: true,
            total_timeout: timeout,
            min_speed,
            min_speed_window: window,
            memory_budget: 1 << 20,
            ..FetchSettings::default()
        };
        HttpClient::new(settings, NetGuard::default()).unwrap()
    }

    #[tokio::test]
    async fn a_tarpit_is_cut_after_the_window_not_the_timeout() {
        let tarpit = (1, Duration::from_millis(200));
        let url = serve(100_000, 10, tarpit).await;
        let c = client(1024, Duration::from_secs(1), Duration::from_secs(30));
        let started = std::time::Instant::now();
        let e = c.get(&url).await.unwrap_err();
        assert_eq!(e.reason, FailReason::TooSlow, "{e}");
        assert!(
            e.detail.contains("under fetch.min_speed (1024 bytes/s)"),
            "{e}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // A body as slow but done within the window is whole.
        let url = serve(20, 10, (1, Duration::from_millis(20))).await;
        assert_eq!(c.get(&url).await.unwrap().body.len(), 20);
        // No minimum: the timeout cuts it.
        let url = serve(100_000, 10, tarpit).await;
        let c = client(0, Duration::from_secs(1), Duration::from_secs(2));
        assert_eq!(c.get(&url).await.unwrap_err().reason, FailReason::Timeout);
    }

    #[tokio::test]
    async fn a_known_length_is_counted_before_its_bytes_and_given_back() {
        // 900 KiB announced, 10 KiB sent, then a byte a second: the body
        // is presized, so its length is counted at once (less the free
        // allowance), and all of it is given back when the fetch ends.
        let url = serve(900 << 10, 10 << 10, (1, Duration::from_secs(1))).await;
        let c = client(0, Duration::from_secs(1), Duration::from_secs(2));
        let budget = c.budget_for_tests().clone();
        let fetch = tokio::spawn(async move { c.get(&url).await });
        let mut counted = 0;
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            counted = budget.used();
            if counted > 0 {
                break;
            }
        }
        assert_eq!(counted, (900 << 10) - FREE_BYTES);
        let e = fetch.await.unwrap().unwrap_err();
        assert_eq!(e.reason, FailReason::Timeout, "{e}");
        assert_eq!(budget.used(), 0);
    }

    /// Takes the whole budget of `c` and its overdraft, as other bodies
    /// would, for `secs` seconds (for ever when None).
    async fn hold_budget(c: &HttpClient, secs: Option<f64>) -> tokio::task::JoinHandle<()> {
        let mut held = c.budget_for_tests().ticket(1);
        held.grow_to(FREE_BYTES + (1 << 20)).await;
        let mut reading = c.budget_for_tests().ticket(2);
        reading.grow_to(FREE_BYTES + 10).await;
        tokio::spawn(async move {
            match secs {
                Some(s) => tokio::time::sleep(Duration::from_secs_f64(s)).await,
                None => std::future::pending().await,
            }
            drop((held, reading));
        })
    }

    #[tokio::test]
    async fn a_robots_fetch_that_waited_for_memory_is_asked_again() {
        // 300 KiB at once; memory is free after 1.5 s, past the first
        // request's 1 s patience: the second is answered (it was recorded
        // as unreachable, which in the end drops the host's URLs).
        let url = serve(300 << 10, 300 << 10, (1, Duration::from_millis(1))).await;
        let c = client(1024, Duration::from_secs(1), Duration::from_secs(1));
        let holder = hold_budget(&c, Some(1.5)).await;
        let origin = url.trim_end_matches('/');
        let r = crate::fetch::robots::fetch_robots(&c, origin, |_| {}).await;
        assert!(
            matches!(
                r.outcome,
                crate::model::RobotsOutcome::Fetched { status: 200 }
            ),
            "{:?}",
            r.outcome
        );
        assert_eq!(r.body.len(), 300 << 10);
        holder.await.unwrap();
    }

    #[tokio::test]
    async fn waiting_for_memory_spends_no_deadline_and_ends_in_a_retry() {
        // 100 KiB at once, then 200 KiB over about three seconds.
        let url = serve(300 << 10, 100 << 10, (10 << 10, Duration::from_millis(150))).await;
        // Memory free after 1.5 s: the body is whole at ~3 s, past its
        // 2 s timeout, which the wait did not spend (it failed as a
        // timeout before).
        let c = client(1024, Duration::from_secs(1), Duration::from_secs(2));
        let holder = hold_budget(&c, Some(1.5)).await;
        let f = c.get(&url).await.unwrap();
        assert_eq!(f.body.len(), 300 << 10);
        holder.await.unwrap();
        // Waiting longer than the timeout in all: given up for now, to be
        // asked for again (not the URL's failure).
        let c = client(1024, Duration::from_secs(1), Duration::from_secs(1));
        let holder = hold_budget(&c, None).await;
        let e = c.get(&url).await.unwrap_err();
        assert!(e.later, "{e}");
        assert!(e.detail.contains("asked again later"), "{e}");
        holder.abort();
    }
}
