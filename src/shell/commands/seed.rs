//! `seed add|list|remove|import`: the seed list, kept in `meta`; a running
//! crawl takes new seeds at once.

use super::{Call, Command, Sub, no_detail, urls};
use crate::model;
use crate::schema::SeedList;
use crate::schema::tables::SeedsRow;
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Shell, table};

pub const COMMAND: Command = Command {
    name: "seed",
    usage: "seed add URL... | seed list | seed remove URL | seed import FILE",
    summary: "manage the seed list (a running crawl takes new seeds at once)",
    examples: &["seed add https://example.org/", "seed import seeds.txt"],
    arity: (1, None),
    subs: &[
        Sub {
            words: "add",
            writes: true,
        },
        Sub {
            words: "list",
            writes: false,
        },
        Sub {
            words: "remove",
            writes: true,
        },
        Sub {
            words: "import",
            writes: true,
        },
    ],
    writes: true,
    complete,
    detail: no_detail,
    run,
};

fn complete(known: &super::Known, args: &[&str]) -> Vec<String> {
    match args {
        ["remove"] => urls(known, &[]),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Shell, call: &Call) -> Result<Reply> {
    let mut list = sh.store.seeds()?;
    match call.args[..] {
        ["list"] => Ok(list_seeds(sh, &list)),
        ["add", ref urls @ ..] if !urls.is_empty() => add(sh, &mut list, urls),
        ["import", file] => import(sh, &mut list, file),
        ["remove", url] => {
            let norm = model::normalize(url).map_err(|e| e.to_string())?;
            let before = list.urls.len();
            list.urls.retain(|u| u != norm.as_str());
            if list.urls.len() == before {
                bail!("{url} is not a seed (seed list shows them)");
            }
            write(sh, &list)?;
            Ok(Reply::text(format!(
                "removed {norm} from the seeds (URLs already queued stay queued)"
            )))
        }
        _ => Err(ShellError::Usage),
    }
}

fn list_seeds(sh: &Shell, list: &SeedList) -> Reply {
    let mut rows: Vec<Vec<String>> = list
        .urls
        .iter()
        .map(|u| vec![u.clone(), "given".into()])
        .collect();
    let mut json: Vec<serde_json::Value> = list
        .urls
        .iter()
        .map(|u| serde_json::json!({"url": u, "via": "given"}))
        .collect();
    // Hosts the crawl took in because a seed redirected there.
    for d in &list.derived {
        let what = match d.via.as_str() {
            "robots" => format!("in scope: {}'s robots.txt redirects here", d.from),
            _ => format!("{} redirects here", d.from),
        };
        rows.push(vec![d.url.clone(), what]);
        json.push(serde_json::json!({"url": d.url, "via": d.via, "from": d.from}));
    }
    Reply::with(
        table::render(&["seed", "from"], &rows, sh.width),
        serde_json::json!(json),
    )
}

/// `seed import FILE`: one URL a line; `#` comments and blank lines are
/// skipped, and so (with a note) is a line the crawler refuses.
fn import(sh: &mut Shell, list: &mut SeedList, file: &str) -> Result<Reply> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if lines.is_empty() {
        bail!("{file}: no URLs in it");
    }
    let refusal = |u: &str| model::normalize(u).err().map(|e| e.to_string());
    let (good, bad): (Vec<&str>, Vec<&str>) = lines.iter().partition(|u| refusal(u).is_none());
    if good.is_empty() {
        bail!(
            "{file}: no usable URL in it ({} refused, e.g. {})",
            bad.len(),
            refusal(bad[0]).unwrap_or_default()
        );
    }
    let mut reply = add(sh, list, &good)?;
    for b in &bad {
        let why = refusal(b).unwrap_or_default();
        reply.human.push_str(&format!("\nskipped: {why}"));
    }
    Ok(reply)
}

fn add(sh: &mut Shell, list: &mut SeedList, urls: &[&str]) -> Result<Reply> {
    // Validate all first: a bad URL adds nothing.
    let norm = urls
        .iter()
        .map(|u| model::normalize(u).map_err(|e| format!("bad seed: {e}")))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut added = 0;
    for n in &norm {
        if !list.urls.iter().any(|u| u == n.as_str()) {
            list.urls.push(n.as_str().to_string());
            added += 1;
        }
    }
    write(sh, list)?;
    let live = match &sh.crawl {
        Some(r) => {
            r.handle
                .add_seeds(norm.iter().map(|n| n.as_str().to_string()).collect());
            " (queued in the running crawl)"
        }
        None => "",
    };
    Ok(Reply::text(format!(
        "{added} seed(s) added, {} in all{live}",
        list.urls.len()
    )))
}

fn write(sh: &Shell, list: &SeedList) -> Result<()> {
    let mut b = sh.store.batch();
    b.put_meta::<SeedsRow>(list);
    Ok(b.write()?)
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn add_list_remove_and_import() {
        let mut t = TestShell::new();
        assert!(
            t.ok("seed add http://a.org/ http://b.org/")
                .contains("2 seed(s) added")
        );
        assert!(
            t.err("seed add http://c.org/ ftp://x/")
                .contains("bad seed")
        );
        let list = t.ok("seed list");
        assert!(
            list.contains("http://a.org/") && !list.contains("c.org"),
            "{list}"
        );
        assert!(t.ok("seed remove http://a.org/").contains("removed"));
        assert!(t.err("seed remove http://a.org/").contains("is not a seed"));
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("seeds.txt");
        std::fs::write(&f, "# mine\nhttp://d.org/\nnot a url\n").unwrap();
        let out = t.ok(&format!("seed import {}", f.display()));
        assert!(
            out.contains("1 seed(s) added, 2 in all") && out.contains("skipped"),
            "{out}"
        );
        assert_eq!(
            t.err("seed drop"),
            "usage: seed add URL... | seed list | seed remove URL | seed import FILE"
        );
    }
}
