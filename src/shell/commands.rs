//! The command table: names, sub-commands, usage, meaning and examples. Help,
//! completion, suggestions and the read-only check all come from here.

pub struct Command {
    pub name: &'static str,
    pub subs: &'static [&'static str],
    pub usage: &'static str,
    pub summary: &'static str,
    pub examples: &'static [&'static str],
    /// Changes the database or the crawl (refused on a read-only attach).
    pub writes: bool,
}

macro_rules! cmd {
    ($name:expr, [$($sub:expr),*], $usage:expr, $summary:expr, [$($ex:expr),*], $writes:expr) => {
        Command { name: $name, subs: &[$($sub),*], usage: $usage, summary: $summary, examples: &[$($ex),*], writes: $writes }
    };
}

pub static COMMANDS: &[Command] = &[
    cmd!(
        "help",
        [],
        "help [COMMAND]",
        "list commands, or explain one",
        ["help pages"],
        false
    ),
    cmd!(
        "seed",
        ["add", "list", "remove", "import"],
        "seed add URL... | seed list | seed remove URL | seed import FILE",
        "manage the seed list (a running crawl takes new seeds at once)",
        ["seed add https://example.org/", "seed import seeds.txt"],
        true
    ),
    cmd!(
        "set",
        [],
        "set KEY VALUE",
        "change a setting; a running crawl uses it at once",
        [
            "set crawl.delay 500ms",
            "set crawl.depth 3",
            "set crawl.scope domain"
        ],
        true
    ),
    cmd!(
        "domains",
        ["key", "common"],
        "domains | domains key add|remove|list [NAME...] | domains common add|remove|list [LABEL...]",
        "the key domains (document 000) derived from the seeds, and the common labels removed to find them",
        [
            "domains",
            "domains key add tsinghua",
            "domains common add edu"
        ],
        true
    ),
    cmd!(
        "get",
        [],
        "get KEY",
        "show one setting",
        ["get crawl.delay"],
        false
    ),
    cmd!(
        "config",
        ["save"],
        "config | config save FILE [--force]",
        "all settings with value, default and meaning; or write them as a .crawlrc (--force overwrites a file that is not one)",
        ["config", "config save job.crawlrc"],
        false
    ),
    cmd!(
        "crawl",
        ["start", "pause", "resume", "stop", "wait"],
        "crawl start | pause | resume | stop | wait [--pages N] [--secs N]",
        "run the crawl in the background, or wait for it",
        ["crawl start", "crawl wait --secs 30", "crawl stop"],
        true
    ),
    cmd!(
        "status",
        [],
        "status",
        "counts, rates, bytes, hosts, elapsed and TLP, live or after",
        ["status", "status --json"],
        false
    ),
    cmd!(
        "timing",
        ["on", "off"],
        "timing [on|off]",
        "print each command's wall time after it (like psql's \\timing)",
        ["timing on"],
        false
    ),
    cmd!(
        "frontier",
        ["top", "host"],
        "frontier | frontier top N | frontier host HOST",
        "what is queued",
        ["frontier", "frontier top 20", "frontier host example.org"],
        false
    ),
    cmd!(
        "hosts",
        ["top"],
        "hosts [top N [by pages|errors|queue]]",
        "hosts ranked by pages, errors or queue length",
        ["hosts top 10 by errors"],
        false
    ),
    cmd!(
        "host",
        [],
        "host HOST",
        "one host: robots.txt rules, crawl-delay, next fetch, error streak",
        ["host example.org"],
        false
    ),
    cmd!(
        "page",
        [],
        "page URL [--raw]",
        "a stored page: status, headers, title, text, links in and out; --raw prints the body",
        [
            "page https://example.org/",
            "page https://example.org/ --raw"
        ],
        false
    ),
    cmd!(
        "links",
        ["from", "to"],
        "links from URL | links to URL",
        "out-links with anchors, or in-links",
        ["links from https://example.org/"],
        false
    ),
    cmd!(
        "pages",
        ["where"],
        "pages [where EXPR] [order by FIELD [desc]] [limit N]",
        "pages matching an expression over url, host, status, depth, title, size, fetched_at, content_type, inlinks, outlinks, duplicate, …",
        [
            "pages where status >= 400 limit 20",
            "pages where title ~ '论文' and depth <= 2 order by size desc",
            "pages where fetched_at > 10m"
        ],
        false
    ),
    cmd!(
        "count",
        ["pages"],
        "count pages [where EXPR]",
        "how many pages match",
        ["count pages where duplicate"],
        false
    ),
    cmd!(
        "rank",
        ["pagerank"],
        "rank pagerank [top N] [--damping D] [--iterations N]",
        "PageRank over the stored link graph (fetched pages and every URL they link to), computed in memory; the N best (20)",
        ["rank pagerank", "rank pagerank top 50 --damping 0.9"],
        false
    ),
    cmd!(
        "why",
        [],
        "why URL",
        "why a URL was fetched, queued, skipped or never seen",
        ["why https://example.org/private/"],
        false
    ),
    cmd!(
        "runs",
        ["compare"],
        "runs | runs compare A B",
        "crawl runs with settings, links fetched, time and TLP (seconds × links fetched); compare two side by side",
        ["runs", "runs compare 1 3"],
        false
    ),
    cmd!(
        "refilter",
        [],
        "refilter [--dry-run]",
        "recompute every stored page's scores and verdicts with the current settings (no fetching); queue links of pages that now pass, drop queued URLs nothing passing links to",
        ["set topic.threshold 0.3", "refilter --dry-run", "refilter"],
        true
    ),
    cmd!(
        "reindex",
        [],
        "reindex",
        "build the page index `pages where` uses for status and host terms (needed once on a db from before schema 3)",
        ["reindex"],
        true
    ),
    cmd!(
        "source",
        [],
        "source FILE",
        "run the commands in FILE",
        ["source job.crawlrc"],
        false
    ),
    cmd!(
        "quit",
        [],
        "quit",
        "leave the shell (a running crawl is stopped cleanly); also exit and Ctrl-D",
        [],
        false
    ),
];

pub fn find(name: &str) -> Option<&'static Command> {
    let name = if name == "exit" { "quit" } else { name };
    COMMANDS.iter().find(|c| c.name == name)
}

/// One-line error for an unknown command, with the nearest name.
pub fn unknown(name: &str) -> String {
    match super::config::nearest(name, COMMANDS.iter().map(|c| c.name)) {
        Some(n) => format!("unknown command {name:?}; did you mean {n}? (help lists commands)"),
        None => format!("unknown command {name:?}; help lists commands"),
    }
}

pub fn help(topic: Option<&str>) -> Result<String, String> {
    match topic {
        None => {
            let mut out =
                String::from("commands (help COMMAND for more; add --json to a query for JSON):\n");
            for c in COMMANDS {
                out.push_str(&format!("  {:<10} {}\n", c.name, c.summary));
            }
            Ok(out)
        }
        Some(t) => {
            let c = find(t).ok_or_else(|| unknown(t))?;
            let mut out = format!("{}\n  {}\n", c.usage, c.summary);
            if !c.examples.is_empty() {
                out.push_str("examples:\n");
                for e in c.examples {
                    out.push_str(&format!("  {e}\n"));
                }
            }
            if c.name == "set" || c.name == "get" {
                out.push_str("keys: see `config`\n");
            }
            Ok(out)
        }
    }
}
