//! The zstd dictionary a crawl compresses page frames with: the one the db
//! holds, or one trained from the first pages' bodies. Pages of one site
//! share their markup, so a dictionary trained on 400 of them compresses
//! the rest 1.33× better (2.43× against 1.83× on the bench site). Training
//! runs once per db, on a side thread (0.1 s for 4 MiB of pages); the
//! dictionary is stored before any frame uses it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::handle::Shared;
use crate::schema::dictionary::Dictionary;
use crate::store::{Store, StoreError};

/// Bodies smaller than this teach the dictionary little.
const MIN_SAMPLE: usize = 256;
/// Larger bodies are left out, so that a few huge pages neither hold much
/// memory nor make the dictionary theirs.
const MAX_SAMPLE: usize = 256 * 1024;
/// Training starts once the samples hold this much, whatever their number:
/// about 40 times the dictionary (400 pages of the bench site are 4.8 MB).
/// It bounds the memory gathering holds and the training's time: on
/// rust-doc's pages, 12 MiB trained 2.6 times as long as 4 MiB for frames
/// no smaller (11.02× against 11.16× at level 2).
const MAX_SAMPLE_BYTES: usize = 4 << 20;
/// zstd's fastCover trainer refuses fewer than 5 samples.
const MIN_SAMPLES: usize = 8;

/// Bodies gathered for training.
#[derive(Default)]
struct Samples {
    bodies: Vec<Vec<u8>>,
    bytes: usize,
}

/// Shared by the fetch tasks: they read the dictionary for every page and
/// offer bodies while it is being gathered.
pub struct PageDictionary {
    ready: OnceLock<Dictionary>,
    /// Samples still wanted (false once training started, or when off).
    gathering: AtomicBool,
    want: usize,
    samples: Mutex<Samples>,
    /// The training thread, joined when the crawl ends.
    trainer: Mutex<Option<std::thread::JoinHandle<()>>>,
    store: Arc<Store>,
    /// Where a failed training is told (the crawl's notices).
    shared: Arc<Shared>,
}

impl PageDictionary {
    /// With `want` 0, none. Else the db's dictionary if it has one, or one
    /// to be trained on the next `want` HTML bodies (at least 8; fewer if
    /// they reach 4 MiB). Samples are not kept across runs: a db whose
    /// runs each fetch fewer gets no dictionary.
    pub(super) fn open(
        store: Arc<Store>,
        want: usize,
        shared: Arc<Shared>,
    ) -> Result<Arc<PageDictionary>, StoreError> {
        // Trawl trains one per db; should there be several, the newest
        // frames name theirs and any of them serves new pages.
        let held = match want {
            0 => None,
            _ => store.dictionaries()?.into_iter().next(),
        };
        let ready = OnceLock::new();
        let gathering = held.is_none() && want > 0;
        if let Some(d) = held {
            let _ = ready.set(d);
        }
        Ok(Arc::new(PageDictionary {
            ready,
            gathering: AtomicBool::new(gathering),
            want: want.max(MIN_SAMPLES),
            samples: Mutex::new(Samples::default()),
            trainer: Mutex::new(None),
            store,
            shared,
        }))
    }

    /// The dictionary to compress with now.
    pub fn current(&self) -> Option<&Dictionary> {
        self.ready.get()
    }

    /// A fetched body that may become a training sample (HTML, 2xx).
    pub fn offer(self: &Arc<Self>, body: &[u8]) {
        if !self.gathering.load(Ordering::Relaxed)
            || !(MIN_SAMPLE..=MAX_SAMPLE).contains(&body.len())
        {
            return;
        }
        let mut samples = self.samples.lock().unwrap_or_else(|e| e.into_inner());
        if !self.gathering.load(Ordering::Relaxed) {
            return;
        }
        samples.bodies.push(body.to_vec());
        samples.bytes += body.len();
        if samples.bodies.len() < self.want && samples.bytes < MAX_SAMPLE_BYTES {
            return;
        }
        if samples.bodies.len() < MIN_SAMPLES {
            return; // a few huge pages: more are needed
        }
        self.gathering.store(false, Ordering::Relaxed);
        let taken = std::mem::take(&mut samples.bodies);
        samples.bytes = 0;
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("trawl-dictionary".into())
            .spawn(move || me.train(&taken));
        match spawned {
            Ok(t) => *self.trainer.lock().unwrap_or_else(|e| e.into_inner()) = Some(t),
            Err(e) => self.shared.notice(format!(
                "pages are stored without a zstd dictionary: no thread to train one ({e})"
            )),
        }
    }

    /// Ends the gathering and waits for a training under way (under a
    /// second), so that a run that gathered its samples keeps its
    /// dictionary and no thread writes to the db after the crawl ended.
    pub(super) fn finish(&self) {
        {
            // Under the lock: an offer racing this one sees it closed.
            let mut samples = self.samples.lock().unwrap_or_else(|e| e.into_inner());
            self.gathering.store(false, Ordering::Relaxed);
            *samples = Samples::default();
        }
        let trainer = self
            .trainer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(t) = trainer {
            let _ = t.join();
        }
    }

    fn train(&self, samples: &[Vec<u8>]) {
        let trained = Dictionary::train(samples).map_err(|e| e.to_string());
        let stored = trained.and_then(|d| {
            self.store.put_dictionary(&d).map_err(|e| e.to_string())?;
            Ok(d)
        });
        match stored {
            // Frames name it only from here on, after it is in the db.
            Ok(d) => {
                let _ = self.ready.set(d);
            }
            Err(e) => self.shared.notice(format!(
                "pages are stored without a zstd dictionary: training on {} pages failed ({e}); the next run tries again",
                samples.len()
            )),
        }
    }
}
