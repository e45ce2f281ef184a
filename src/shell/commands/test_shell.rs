//! A shell over a real RocksDB in a temp dir, for the commands' unit tests;
//! `crawled` first crawls the demo web served on 127.0.0.1.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::shell::Shell;
use crate::site::demo::Demo;
use crate::store::Store;

pub struct TestShell {
    // Dropped in this order: the shell stops its crawl on the runtime.
    pub sh: Shell,
    pub demo: Option<Demo>,
    rt: tokio::runtime::Runtime,
    out: Arc<Mutex<Vec<u8>>>,
    _dir: tempfile::TempDir,
}

/// Output written to a shared buffer (the shell's, and a sink's in tests).
pub(crate) struct Out(pub(crate) Arc<Mutex<Vec<u8>>>);

impl Write for Out {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("output lock").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl TestShell {
    /// A shell over an empty db.
    pub fn new() -> TestShell {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Arc::new(Store::open(&dir.path().join("db")).expect("open db"));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let out = Arc::new(Mutex::new(Vec::new()));
        let sh = Shell::new(store, rt.handle().clone(), Box::new(Out(out.clone())), 0);
        TestShell {
            sh,
            demo: None,
            rt,
            out,
            _dir: dir,
        }
    }

    /// A shell over a finished crawl of the demo web (`pages` a host).
    pub fn crawled(pages: usize) -> TestShell {
        let mut t = TestShell::new();
        let demo = t.rt.block_on(Demo::start(pages)).expect("demo web");
        t.ok("set crawl.delay 0");
        for s in demo.seeds() {
            t.ok(&format!("seed add {s}"));
        }
        t.demo = Some(demo);
        t.ok("crawl start");
        t.ok("crawl wait");
        t.take();
        t
    }

    /// The demo web's first seed.
    pub fn seed(&self) -> String {
        self.demo.as_ref().expect("a crawled shell").seeds()[0].clone()
    }

    /// Runs `line`, which must succeed; returns what it printed.
    pub fn ok(&mut self, line: &str) -> String {
        if let Err(e) = self.sh.execute(line) {
            panic!("{line}: {e}");
        }
        self.take()
    }

    /// Runs `line`, which must fail; returns the error line.
    pub fn err(&mut self, line: &str) -> String {
        match self.sh.execute(line) {
            Ok(()) => panic!("{line} succeeded: {}", self.take()),
            Err(e) => e.to_string(),
        }
    }

    /// What was printed since the last take.
    pub fn take(&mut self) -> String {
        let bytes = std::mem::take(&mut *self.out.lock().expect("output lock"));
        String::from_utf8(bytes).expect("utf-8 output")
    }
}
