//! The `trawl` command line: flag parsing, progress on stderr, the final
//! summary on stdout. Errors end here as one line and a non-zero exit.

mod flags;
mod run;
mod shell;
mod supervise;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};

use crate::crawl::{self};
use crate::settings;
use crate::settings::{CrawlSettings, Scope};
use crate::site::bench::BenchWeb;
use crate::site::demo::Demo;
use crate::store::Store;

#[derive(Parser)]
#[command(
    name = "trawl",
    version,
    about = "A focused web crawler whose whole state lives in one RocksDB database"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Crawl from seeds into a database (rerun the same command to resume).
    Crawl(CrawlArgs),
    /// Serve the built-in demo web on 127.0.0.1 and crawl it (offline).
    Demo(DemoArgs),
    /// Query and steer a crawl interactively (runs ./.crawlrc first).
    Shell(ShellArgs),
    /// Run a file of shell commands as a batch.
    Run(RunArgs),
    /// Document 000's experiment on a built-in web: each seed site crawled
    /// with filters none, domain and domain+topic; links fetched, time, TLP.
    TlpExperiment(TlpArgs),
    /// Serve the benchmark web on 127.0.0.1 until interrupted; prints each
    /// host's front page URL (the seeds) on stdout.
    BenchWeb(BenchWebArgs),
}

#[derive(Args)]
struct BenchWebArgs {
    /// Pages over all hosts.
    #[arg(long, default_value_t = 100_000)]
    pages: usize,
    /// Virtual hosts, one port each.
    #[arg(long, default_value_t = 4)]
    hosts: usize,
    /// First port (the hosts take consecutive ones); default: free ports.
    #[arg(long)]
    port: Option<u16>,
    /// Pad each host's robots.txt with comment lines to this many bytes.
    #[arg(long, default_value_t = 0)]
    robots_bytes: usize,
}

#[derive(Args)]
struct TlpArgs {
    /// Pages per host of the synthetic web (14 hosts).
    #[arg(long, default_value_t = 300)]
    pages: usize,
    /// Levels crawled from each seed (the paper: 4).
    #[arg(long, default_value_t = 4)]
    depth: u16,
}

#[derive(Args)]
pub(crate) struct ShellArgs {
    /// Database directory (created if missing).
    #[arg(default_value = "trawl.db")]
    db: PathBuf,
    /// Attach to a database another trawl process is writing, read-only.
    #[arg(long)]
    read_only: bool,
    /// Command files to run after ./.crawlrc, before the prompt.
    #[arg(long = "rc")]
    rc: Vec<PathBuf>,
    #[command(flatten)]
    supervise: SuperviseArgs,
}

#[derive(Args)]
pub(crate) struct SuperviseArgs {
    /// Restart the process after this many abnormal deaths (an abort, a
    /// stack overflow, an out-of-memory kill) within 10 minutes, then stop;
    /// 0 runs it unsupervised.
    #[arg(long, default_value_t = 5, value_name = "N")]
    max_restarts: u32,
}

#[derive(Args)]
pub(crate) struct RunArgs {
    /// The command file.
    file: PathBuf,
    /// Database directory (created if missing).
    #[arg(long, default_value = "trawl.db")]
    db: PathBuf,
    /// Go on after a failing command (the exit code still reports it).
    #[arg(long)]
    keep_going: bool,
    #[command(flatten)]
    supervise: SuperviseArgs,
}

#[derive(Args)]
struct CrawlArgs {
    /// Database directory (created if missing).
    #[arg(long)]
    db: PathBuf,
    /// Start URL; repeat the flag or list several. Optional when resuming.
    #[arg(long = "seed", num_args = 1..)]
    seeds: Vec<String>,
    #[command(flatten)]
    opts: CrawlOpts,
    #[command(flatten)]
    supervise: SuperviseArgs,
}

#[derive(Args)]
struct CrawlOpts {
    /// The flags that set a setting (flags.rs lists them).
    #[command(flatten)]
    flags: flags::SettingFlags,
    /// Answer HOST with ADDR instead of DNS (repeatable), e.g. www.example.org:127.0.0.1;
    /// `*.example.org:ADDR` answers every name under example.org, `*:ADDR` every name.
    #[arg(long = "resolve", value_name = "HOST:ADDR")]
    resolve: Vec<String>,
    /// Any shell setting, as KEY=VALUE (repeatable): `--set net.allow_private=true`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

#[derive(Args)]
struct DemoArgs {
    /// Database directory; a previous demo database there is replaced.
    #[arg(long, default_value = "trawl-demo.db")]
    db: PathBuf,
    /// Pages per demo host (there are four hosts).
    #[arg(long, default_value_t = 800)]
    pages: usize,
}

impl CrawlOpts {
    /// The settings the flags ask for, each checked by the same typed,
    /// range-checked table as the shell's `set`.
    fn settings(&self) -> anyhow::Result<CrawlSettings> {
        let mut s = CrawlSettings::default();
        self.flags.apply(&mut s).map_err(anyhow::Error::msg)?;
        for kv in &self.set {
            let (key, value) = kv
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--set {kv:?}: expected KEY=VALUE"))?;
            let k = settings::find(key.trim()).ok_or_else(|| {
                anyhow::anyhow!(
                    "--set {kv:?}: unknown setting {key:?} (trawl shell's `config` lists them)"
                )
            })?;
            k.set(&mut s, value.trim())
                .map_err(|e| anyhow::anyhow!("--set {kv:?}: {e}"))?;
        }
        s.fetch.resolve = (self.resolve.iter())
            .map(|r| parse_resolve(r).map_err(|e| anyhow::anyhow!("--resolve {e}")))
            .collect::<anyhow::Result<_>>()?;
        Ok(s)
    }
}

/// `HOST:ADDR` for `--resolve` (ADDR may be IPv6: split at the first colon).
fn parse_resolve(s: &str) -> Result<(String, std::net::IpAddr), String> {
    let (host, addr) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: expected HOST:ADDR"))?;
    let ip = addr
        .trim_matches(['[', ']'])
        .parse()
        .map_err(|_| format!("{addr:?} is not an IP address"))?;
    if host.is_empty() {
        return Err(format!("{s:?}: no host"));
    }
    let wild = host.strip_prefix("*.").unwrap_or(host);
    if host != "*" && (wild.contains('*') || wild.is_empty()) {
        return Err(format!(
            "{host:?}: a wildcard is `*.DOMAIN` (every name under DOMAIN) or `*` (every name)"
        ));
    }
    Ok((host.to_ascii_lowercase(), ip))
}

impl Command {
    /// The work a supervisor restarts, with its restart limit (none for
    /// what cannot crawl, or when asked to run unsupervised).
    fn supervised(&self) -> Option<(supervise::Work, u32)> {
        let (work, max) = match self {
            Command::Crawl(a) => (supervise::Work::Crawl, a.supervise.max_restarts),
            Command::Shell(a) if !a.read_only => (supervise::Work::Shell, a.supervise.max_restarts),
            Command::Run(a) => (supervise::Work::Batch, a.supervise.max_restarts),
            _ => return None,
        };
        (max > 0 && !supervise::is_child()).then_some((work, max))
    }
}

/// Opens the db to write. A db still locked for a moment by the process
/// before (a supervisor's child killed with it ends a few ms after) is
/// waited for briefly.
fn open_store(path: &Path) -> anyhow::Result<Store> {
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        match Store::open(path) {
            Err(crate::store::StoreError::Locked(_)) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            r => return Ok(r?),
        }
    }
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some((work, max_restarts)) = cli.command.supervised() {
        return supervise::supervise(work, max_restarts);
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(anyhow::anyhow!("cannot start the runtime: {e}")),
    };
    let result = match cli.command {
        Command::Crawl(a) => rt.block_on(cmd_crawl(a)),
        Command::Demo(a) => rt.block_on(cmd_demo(a)),
        Command::Shell(a) => shell::cmd_shell(a, &rt),
        Command::Run(a) => shell::cmd_run(a, &rt),
        Command::TlpExperiment(a) => rt.block_on(cmd_tlp(a)),
        Command::BenchWeb(a) => rt.block_on(cmd_bench_web(a)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

fn fail(e: anyhow::Error) -> ExitCode {
    let msg = e
        .chain()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    eprintln!("trawl: error: {msg}");
    ExitCode::FAILURE
}

async fn cmd_crawl(a: CrawlArgs) -> anyhow::Result<()> {
    let settings = a.opts.settings()?;
    let store = Arc::new(open_store(&a.db)?);
    note_migrations(&store);
    // A seed the crawler refuses is reported and skipped; the rest crawl.
    let (mut seeds, mut refused) = (Vec::new(), Vec::new());
    for s in &a.seeds {
        match crate::model::normalize(s) {
            Ok(u) => seeds.push(u.as_str().to_string()),
            Err(e) => refused.push(format!("{}: {e}", shorten(s))),
        }
    }
    let stored = store.seeds()?.urls;
    if seeds.is_empty() && stored.is_empty() && store.counters()?.queued == 0 {
        match refused.len() {
            0 => bail!("no seeds: pass --seed URL (only a resumed crawl may omit it)"),
            1 => bail!("bad seed {}", refused[0]),
            n => bail!("no usable seed: all {n} refused, e.g. {}", refused[0]),
        }
    }
    for r in &refused {
        eprintln!("trawl: skipped bad seed {r}");
    }
    let summary = run::run(store.clone(), settings, &seeds).await?;
    run::print_summary(&summary, &store);
    Ok(())
}

/// Tells the user what opening an older db converted.
fn note_migrations(store: &Store) {
    for n in store.migrations() {
        eprintln!("trawl: note: {n}");
    }
}

/// A URL cut for a one-line message (a refused seed may be 16 KB long).
fn shorten(s: &str) -> String {
    if s.len() <= 120 {
        return s.to_string();
    }
    let mut end = 100;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

async fn cmd_demo(a: DemoArgs) -> anyhow::Result<()> {
    replace_demo_db(&a.db)?;
    let demo = Demo::start(a.pages)
        .await
        .context("cannot start the demo servers")?;
    let store = Arc::new(Store::open(&a.db)?);
    mark_demo_db(&store)?;
    eprintln!(
        "demo: serving {} hosts × {} pages on {}; crawling into {}",
        demo.servers.len(),
        demo.pages_per_host,
        demo.servers
            .iter()
            .map(|s| s.addr().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        a.db.display()
    );
    let settings = CrawlSettings {
        delay: Duration::ZERO,
        per_host: 4,
        concurrency: 32,
        ..CrawlSettings::default()
    };
    let summary = run::run(store.clone(), settings, &demo.seeds()).await?;
    run::print_summary(&summary, &store);
    drop(demo);
    Ok(())
}

async fn cmd_bench_web(a: BenchWebArgs) -> anyhow::Result<()> {
    if a.pages == 0 || a.hosts == 0 || a.hosts > 64 {
        bail!("--pages must be at least 1 and --hosts between 1 and 64");
    }
    if a.robots_bytes > 500 << 10 {
        bail!("--robots-bytes is at most 512000 (crawlers read 500 KiB of robots.txt)");
    }
    let web = BenchWeb::start_with_robots(a.pages, a.hosts, a.port, a.robots_bytes)
        .await
        .context("cannot start the bench web (is the port free?)")?;
    eprintln!(
        "bench-web: {} pages over {} hosts; Ctrl-C stops",
        web.pages,
        web.servers.len()
    );
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for s in web.seeds() {
            writeln!(out, "{s}")?;
        }
        out.flush()?;
    }
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    drop(web);
    Ok(())
}

async fn cmd_tlp(a: TlpArgs) -> anyhow::Result<()> {
    use crate::filter::Mode;
    use crate::site::experiment::ExperimentWeb;
    let web = ExperimentWeb::start(a.pages)
        .await
        .context("cannot start the experiment web")?;
    let loopback: std::net::IpAddr = [127, 0, 0, 1].into();
    let resolve: Vec<(String, std::net::IpAddr)> = ExperimentWeb::hosts()
        .map(|h| (h.to_string(), loopback))
        .collect();
    eprintln!(
        "TLP experiment: 14 hosts × {} pages on 127.0.0.1:{}, depth {}, preset B topic filter",
        web.pages_per_host,
        web.port(),
        a.depth
    );
    println!(
        "{:<20} {:<14} {:>14} {:>9} {:>12} {:>8}",
        "seed site", "filter", "links fetched", "time (s)", "TLP", "links"
    );
    for seed in web.seeds() {
        let mut unfiltered = None;
        for mode in [Mode::None, Mode::Domain, Mode::DomainTopic] {
            let dir = std::env::temp_dir().join(format!(
                "trawl-tlp-{}-{}",
                std::process::id(),
                crate::model::now_ms()
            ));
            let store = Arc::new(Store::open(&dir)?);
            let mut s = CrawlSettings {
                scope: Scope::Any,
                max_depth: Some(a.depth),
                delay: Duration::ZERO,
                concurrency: 16,
                per_host: 4,
                ..CrawlSettings::default()
            };
            s.filter.mode = mode;
            s.fetch.resolve = resolve.clone();
            // Its hosts stand in for public ones on the loopback.
            s.fetch.allow_private = true;
            let (_handle, join) = crawl::start(store, s, std::slice::from_ref(&seed))?;
            let sum = join.await.context("the crawl task failed")??;
            let _ = std::fs::remove_dir_all(&dir);
            let base = *unfiltered.get_or_insert(sum.run_fetched);
            let change = if mode == Mode::None {
                String::new()
            } else {
                format!(
                    "{:+.0}%",
                    (sum.run_fetched as f64 / base.max(1) as f64 - 1.0) * 100.0
                )
            };
            let host = seed
                .trim_start_matches("http://")
                .split(':')
                .next()
                .unwrap_or("");
            println!(
                "{:<20} {:<14} {:>14} {:>9.3} {:>12.1} {:>8}",
                host,
                mode.name(),
                sum.run_fetched,
                sum.elapsed.as_secs_f64(),
                sum.tlp(),
                change
            );
        }
    }
    Ok(())
}

/// The demo's ports change every run, so an old demo db is of no use; any
/// other database at `path` is left alone.
fn replace_demo_db(path: &Path) -> anyhow::Result<()> {
    let empty = std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none());
    if !path.exists() || empty {
        return Ok(());
    }
    // Opening proves it is a trawl db (and not locked) before we delete it.
    let store = Store::open(path)?;
    let ours = store.is_demo()?;
    drop(store);
    if !ours {
        bail!(
            "{} holds a trawl database that `trawl demo` did not create; pass another --db, or remove it yourself if it is an old demo",
            path.display()
        );
    }
    // Its contents, not the directory: it may be `.` or a mount point.
    let remove = || -> std::io::Result<()> {
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(entry.path())?;
            } else {
                std::fs::remove_file(entry.path())?;
            }
        }
        Ok(())
    };
    remove().with_context(|| format!("cannot remove the old demo db {}", path.display()))
}

/// Marks a database as one `trawl demo` made (and may replace).
fn mark_demo_db(store: &Store) -> anyhow::Result<()> {
    let mut b = store.batch();
    b.mark_demo();
    Ok(b.write()?)
}
