//! A key of the settings table: its name, meaning and kind, and how it
//! reads and writes [`CrawlSettings`] in the kind's own type. The table
//! holds keys of many kinds as [`Setting`]s, which speak text.

use super::CrawlSettings;
use super::validate::{Bounds, Kind};

/// One setting, typed by its kind `K`.
pub struct Key<K: Kind> {
    pub(super) name: &'static str,
    pub(super) kind: K,
    pub(super) meaning: &'static str,
    pub(super) get: fn(&CrawlSettings) -> K::Value,
    pub(super) set: fn(&mut CrawlSettings, K::Value),
    /// Read when a crawl starts only: a running crawl keeps its value.
    pub(super) at_start: bool,
    pub(super) run: Run,
}

/// Whether a key's value goes into a run's record of its settings (the
/// ones that shape its result), and as what.
#[derive(Clone, Copy)]
pub enum Run {
    No,
    /// Under the key's name, as `get` shows it.
    Value,
    /// Under this name, with this text (a value with its parameters).
    As(&'static str, fn(&CrawlSettings) -> String),
}

impl<K: Kind> Key<K> {
    pub(super) const fn new(
        name: &'static str,
        kind: K,
        meaning: &'static str,
        get: fn(&CrawlSettings) -> K::Value,
        set: fn(&mut CrawlSettings, K::Value),
    ) -> Key<K> {
        Key {
            name,
            kind,
            meaning,
            get,
            set,
            at_start: false,
            run: Run::No,
        }
    }

    /// Only a crawl's start reads it.
    pub(super) const fn at_start(mut self) -> Self {
        self.at_start = true;
        self
    }

    /// Recorded in a run's settings as `get` shows it.
    pub(super) const fn run(mut self) -> Self {
        self.run = Run::Value;
        self
    }

    /// Recorded in a run's settings as `name`, with `show`'s text.
    pub(super) const fn run_as(
        mut self,
        name: &'static str,
        show: fn(&CrawlSettings) -> String,
    ) -> Self {
        self.run = Run::As(name, show);
        self
    }
}

/// A key of any kind, as the shell, the CLI and saved settings use it:
/// values in and out as text.
pub trait Setting: Sync {
    fn name(&self) -> &'static str;
    fn meaning(&self) -> &'static str;
    /// Read when a crawl starts only.
    fn at_start(&self) -> bool;
    /// What values the key takes, for help and errors.
    fn type_name(&self) -> String;
    /// Candidates for the key's value: its names, `none`, true/false.
    fn words(&self) -> Vec<String>;
    fn bounds(&self) -> Option<Bounds>;
    fn get(&self, s: &CrawlSettings) -> String;
    /// Validates `raw` and applies it to `s`; a one-line error naming the
    /// key and what it takes otherwise.
    fn set(&self, s: &mut CrawlSettings, raw: &str) -> Result<(), String>;
    /// The entry of a run's record of its settings, if the key has one.
    fn run_entry(&self, s: &CrawlSettings) -> Option<(&'static str, String)>;

    fn default_value(&self) -> String {
        self.get(&CrawlSettings::default())
    }
}

impl<K: Kind> Setting for Key<K> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn meaning(&self) -> &'static str {
        self.meaning
    }
    fn at_start(&self) -> bool {
        self.at_start
    }
    fn type_name(&self) -> String {
        self.kind.type_name()
    }
    fn words(&self) -> Vec<String> {
        self.kind.words()
    }
    fn bounds(&self) -> Option<Bounds> {
        self.kind.bounds()
    }
    fn get(&self, s: &CrawlSettings) -> String {
        self.kind.show(&(self.get)(s))
    }
    fn set(&self, s: &mut CrawlSettings, raw: &str) -> Result<(), String> {
        let v = (self.kind.parse(raw))
            .map_err(|why| format!("{}: {why}; expected {}", self.name, self.type_name()))?;
        (self.set)(s, v);
        Ok(())
    }
    fn run_entry(&self, s: &CrawlSettings) -> Option<(&'static str, String)> {
        match self.run {
            Run::No => None,
            Run::Value => Some((self.name, self.get(s))),
            Run::As(name, show) => Some((name, show(s))),
        }
    }
}

/// A table entry: `key!(name, kind, meaning, |s| get, |s, v| set)`,
/// then any of `at_start`, `run`, `run_as(name, |s| text)`.
macro_rules! key {
    ($name:expr, $kind:expr, $meaning:expr, |$s:ident| $get:expr, |$t:ident, $v:ident| $set:expr
        $(, $opt:ident $(($($arg:tt)*))?)* $(,)?) => {
        &$crate::settings::key::Key::new($name, $kind, $meaning, |$s| $get, |$t, $v| $set)
            $(.$opt($($($arg)*)?))*
    };
}
pub(super) use key;
