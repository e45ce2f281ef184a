//! `simulate ORDER` and `simulate compare ORDER…`: replay crawl orders over
//! the stored crawl, with no network (see `crate::simulate`): the pages an
//! order would have fetched, in order, and how soon it finds the relevant
//! pages the stored crawl found.

use std::io::Write;
use std::time::Instant;

use serde_json::json;

use super::{Call, Command, Run, Sub, no_detail, nothing};
use crate::filter::Filters;
use crate::frontier::{Focus, Order, OrderSettings};
use crate::model::NamedEnum;
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::lookup::unreadable;
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};
use crate::simulate::{Replay, ReplayGraph, StoredFeatures, replay};

pub const COMMAND: Command = Command {
    name: "simulate",
    usage: "simulate ORDER [--pages N] [--focus hard|soft] [--csv FILE] | simulate compare ORDER... [same options]",
    summary: "replay crawl orders over the stored crawl (no network): what each would fetch, harvest rate and how soon it finds the relevant pages",
    examples: &[
        "simulate shark --pages 1000",
        "simulate compare bfs dfs shark importance learned --csv curves.csv",
    ],
    arity: (1, None),
    subs: &[Sub {
        words: "compare",
        writes: false,
    }],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

/// Shares of the relevant pages `compare` reports the pages needed for.
const REACH: [f64; 3] = [0.25, 0.5, 0.9];
/// Shares of the budget `compare` reports the harvest rate at.
const AT: [f64; 3] = [0.1, 0.5, 1.0];
/// Pages listed by a single replay.
const LISTED: usize = 20;

struct Options {
    orders: Vec<Order>,
    pages: Option<usize>,
    focus: Focus,
    csv: Option<String>,
}

fn options(args: &[&str]) -> Result<Options> {
    let usage = COMMAND.usage;
    let mut o = Options {
        orders: Vec::new(),
        pages: None,
        focus: Focus::Hard,
        csv: None,
    };
    let mut words = args.iter();
    while let Some(w) = words.next() {
        let mut value = || {
            words
                .next()
                .copied()
                .ok_or_else(|| ShellError::from(format!("{w} needs a value; usage: {usage}")))
        };
        match *w {
            "--pages" => {
                let v = value()?;
                o.pages = Some(
                    v.parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| format!("--pages {v}: expected a whole number ≥ 1"))?,
                )
            }
            "--focus" => {
                let v = value()?;
                o.focus = Focus::from_name(v)
                    .ok_or_else(|| format!("--focus {v}: expected hard or soft"))?
            }
            "--csv" => o.csv = Some(value()?.to_string()),
            name => o.orders.push(Order::from_name(name).ok_or_else(|| {
                format!(
                    "{name}: not an order; orders: {} (usage: {usage})",
                    <Order as NamedEnum>::names(", ")
                )
            })?),
        }
    }
    if o.orders.is_empty() {
        bail!("name an order to replay; usage: {usage}");
    }
    Ok(o)
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    match call.args[..] {
        ["compare", ref rest @ ..] => {
            let o = options(rest)?;
            sh.simulate_compare(&o)
        }
        ref args => {
            let o = options(args)?;
            if o.orders.len() > 1 {
                bail!("simulate replays one order; simulate compare takes several");
            }
            sh.simulate_one(&o)
        }
    }
}

impl Ctx {
    /// The stored crawl's graph, read with progress (Ctrl-C stops it).
    fn replay_graph(&mut self) -> Result<ReplayGraph> {
        let list = self.store.seeds()?;
        let seeds = list.urls.iter().chain(list.derived.iter().map(|d| &d.url));
        let filters = Filters::for_seeds(&self.settings.filter, seeds);
        let store = self.store.clone();
        let patterns = self.settings.order.patterns.clone();
        let g = ReplayGraph::read(&store, &filters, &patterns, |line| {
            self.progress(&format!("simulate: {line}"));
            !self.interrupted()
        })?;
        self.progress_done();
        let g = g.ok_or("simulate: interrupted")?;
        if g.seeds().is_empty() {
            bail!(
                "simulate: no seed of the db has a stored page; crawl first (seed list shows the seeds)"
            );
        }
        Ok(g)
    }

    fn order_of(&self, order: Order) -> OrderSettings {
        OrderSettings {
            order,
            ..self.settings.order.clone()
        }
    }

    fn simulate_one(&mut self, o: &Options) -> Result<Reply> {
        let started = Instant::now();
        let csv = o.csv.as_deref().map(CsvOut::create).transpose()?;
        let g = self.replay_graph()?;
        let budget = o.pages.unwrap_or(g.len());
        let order = o.orders[0];
        let store = self.store.clone();
        let mut source = StoredFeatures::new(&store);
        let r = replay(&g, &self.order_of(order), o.focus, budget, &mut source);
        unreadable(source.unreadable);
        let all = g.relevant();
        let reach: Vec<String> = REACH.iter().map(|s| reach_text(&r, *s, all)).collect();
        let mut h = format!(
            "replayed {} pages under {} ({} focus) over the stored crawl ({} pages, {} followable links): harvest {}; {} of the {} relevant pages found; 25 % / 50 % / 90 % of them after {} pages; {:.2} s\n",
            table::thousands(r.taken.len() as u64),
            order.name(),
            o.focus.name(),
            table::thousands(g.len() as u64),
            table::thousands(g.edges() as u64),
            rate_text(r.harvest_at(r.taken.len())),
            table::thousands(*r.relevant_so_far.last().unwrap_or(&0) as u64),
            table::thousands(all),
            reach.join(" / "),
            started.elapsed().as_secs_f64()
        );
        let ids: Vec<_> = r.taken.iter().take(LISTED).map(|n| g.id(*n)).collect();
        let urls = self.store.urls_many(&ids)?;
        let rows: Vec<Vec<String>> = r
            .taken
            .iter()
            .zip(urls)
            .enumerate()
            .map(|(i, (n, u))| {
                let p = g.page(*n);
                vec![
                    (i + 1).to_string(),
                    if p.relevant { "yes" } else { "" }.into(),
                    u.unwrap_or_default(),
                ]
            })
            .collect();
        h += &table::render(&["#", "relevant", "url"], &rows, self.sink.width);
        if let Some(out) = csv {
            h += &self.write_csv(out, &g, &[(order, &r)])?;
        }
        let j = json!({"order": order.name(), "focus": o.focus.name(), "pages": r.taken.len(),
            "stored_pages": g.len(), "relevant": all, "harvest": r.harvest_at(r.taken.len()),
            "pages_to": REACH.iter().map(|s| r.pages_to_reach(*s, all)).collect::<Vec<_>>(),
            "first": rows.iter().map(|c| c[2].clone()).collect::<Vec<_>>()});
        Ok(Reply::record(h, j))
    }

    fn simulate_compare(&mut self, o: &Options) -> Result<Reply> {
        let started = Instant::now();
        let csv = o.csv.as_deref().map(CsvOut::create).transpose()?;
        let g = self.replay_graph()?;
        let budget = o.pages.unwrap_or(g.len());
        let all = g.relevant();
        let store = self.store.clone();
        let mut source = StoredFeatures::new(&store);
        let replays: Vec<(Order, Replay)> = o
            .orders
            .iter()
            .map(|ord| {
                let order = self.order_of(*ord);
                (*ord, replay(&g, &order, o.focus, budget, &mut source))
            })
            .collect();
        unreadable(source.unreadable);
        let mut rows = Vec::new();
        let mut listed = Vec::new();
        for (ord, r) in &replays {
            let mut row = vec![ord.name().to_string()];
            row.extend(REACH.iter().map(|s| reach_text(r, *s, all)));
            let at = |share: f64| ((budget as f64 * share).ceil() as usize).max(1);
            row.extend(AT.iter().map(|s| rate_text(r.harvest_at(at(*s)))));
            rows.push(row);
            listed.push(json!({"order": ord.name(), "pages": r.taken.len(),
                "pages_to": REACH.iter().map(|s| r.pages_to_reach(*s, all)).collect::<Vec<_>>(),
                "harvest_at": AT.iter().map(|s| r.harvest_at(at(*s))).collect::<Vec<_>>()}));
        }
        let mut h = format!(
            "{} orders replayed over the stored crawl ({} pages, {} relevant, {} followable links), budget {} pages, {} focus; {:.2} s\n",
            replays.len(),
            table::thousands(g.len() as u64),
            table::thousands(all),
            table::thousands(g.edges() as u64),
            table::thousands(budget as u64),
            o.focus.name(),
            started.elapsed().as_secs_f64()
        );
        let header = [
            "order",
            "pages to 25%",
            "50%",
            "90%",
            "harvest at 10%",
            "50%",
            "100%",
        ];
        h += &table::render(&header, &rows, self.sink.width);
        if let Some(out) = csv {
            let pairs: Vec<(Order, &Replay)> = replays.iter().map(|(o, r)| (*o, r)).collect();
            h += &self.write_csv(out, &g, &pairs)?;
        }
        Ok(Reply::record(
            h,
            json!({"budget": budget, "relevant": all, "orders": listed}),
        ))
    }

    /// The curves as CSV: one row a step, and per order the page taken,
    /// whether it is relevant, the harvest rate and target recall so far.
    fn write_csv(
        &self,
        mut out: CsvOut,
        g: &ReplayGraph,
        replays: &[(Order, &Replay)],
    ) -> Result<String> {
        let targets = g.targets();
        let file = out.file.clone();
        let fail = |e: std::io::Error| format!("cannot write {file}: {e}");
        let w = &mut out.w;
        let mut head = vec!["step".to_string()];
        for (o, _) in replays {
            let n = o.name();
            head.extend([
                format!("{n}_url"),
                format!("{n}_relevant"),
                format!("{n}_harvest"),
                format!("{n}_recall"),
            ]);
        }
        writeln!(w, "{}", head.join(",")).map_err(fail)?;
        let steps = replays
            .iter()
            .map(|(_, r)| r.taken.len())
            .max()
            .unwrap_or(0);
        let urls: Vec<Vec<Option<String>>> = replays
            .iter()
            .map(|(_, r)| {
                let ids: Vec<_> = r.taken.iter().map(|n| g.id(*n)).collect();
                ids.chunks(4096)
                    .map(|c| self.store.urls_many(c))
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map(|v| v.concat())
            })
            .collect::<std::result::Result<_, _>>()?;
        for i in 0..steps {
            let mut row = vec![(i + 1).to_string()];
            for ((_, r), urls) in replays.iter().zip(&urls) {
                match r.taken.get(i) {
                    Some(n) => {
                        let recall =
                            (targets > 0).then(|| f64::from(r.targets_so_far[i]) / targets as f64);
                        row.extend([
                            csv_field(urls[i].as_deref().unwrap_or("")),
                            u8::from(g.page(*n).relevant).to_string(),
                            r.harvest_at(i + 1)
                                .map_or(String::new(), |h| format!("{h:.6}")),
                            recall.map_or(String::new(), |h| format!("{h:.6}")),
                        ]);
                    }
                    None => row.extend(std::iter::repeat_n(String::new(), 4)),
                }
            }
            writeln!(w, "{}", row.join(",")).map_err(fail)?;
        }
        out.commit()?;
        Ok(format!(
            "\ncurves written to {file} ({} steps)",
            table::thousands(steps as u64)
        ))
    }
}

/// `--csv FILE`, opened before the replay so that a path it cannot write
/// fails at once, not after minutes of work. It is written to `FILE.tmp`
/// and renamed over FILE when complete: a replay that fails or is
/// interrupted leaves FILE as it was.
struct CsvOut {
    file: String,
    tmp: String,
    w: std::io::BufWriter<std::fs::File>,
    done: bool,
}

impl CsvOut {
    fn create(file: &str) -> Result<CsvOut> {
        if std::path::Path::new(file).is_dir() {
            bail!("cannot write {file}: it is a directory");
        }
        let tmp = format!("{file}.tmp");
        let f = std::fs::File::create(&tmp).map_err(|e| format!("cannot write {file}: {e}"))?;
        Ok(CsvOut {
            file: file.to_string(),
            tmp,
            w: std::io::BufWriter::new(f),
            done: false,
        })
    }

    fn commit(mut self) -> Result<()> {
        let file = &self.file;
        (self.w.flush())
            .and_then(|()| std::fs::rename(&self.tmp, file))
            .map_err(|e| format!("cannot write {file}: {e}"))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for CsvOut {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn reach_text(r: &Replay, share: f64, all: u64) -> String {
    match r.pages_to_reach(share, all) {
        Some(n) => table::thousands(n as u64),
        None => "-".into(),
    }
}

fn rate_text(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.3}"))
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    /// `--csv` opened its file after the replay, which takes minutes on a
    /// large crawl: a path it cannot write failed only then.
    #[test]
    fn the_csv_file_is_opened_before_the_replay() {
        let mut t = TestShell::new();
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("no/such/dir/curves.csv");
        let e = t.err(&format!("simulate bfs --csv {}", bad.display()));
        assert!(
            e.starts_with(&format!("cannot write {}: ", bad.display())),
            "{e}"
        );
        let e = t.err(&format!(
            "simulate compare bfs dfs --csv {}",
            dir.path().display()
        ));
        assert!(e.ends_with("it is a directory"), "{e}");
        // A replay that fails leaves no file, not even its temporary one.
        let good = dir.path().join("curves.csv");
        let e = t.err(&format!("simulate bfs --csv {}", good.display()));
        assert!(e.contains("no seed of the db has a stored page"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_csv_file_is_complete_under_its_name() {
        let mut t = TestShell::crawled(3);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("curves.csv");
        std::fs::write(&file, "old").unwrap();
        let out = t.ok(&format!(
            "simulate compare bfs dfs --csv {}",
            file.display()
        ));
        assert!(out.contains("curves written to"), "{out}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("step,bfs_url,"), "{text}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["curves.csv"]);
    }
}
