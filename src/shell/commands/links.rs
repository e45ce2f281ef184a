//! `links from URL | links to URL`: a page's out-links with anchors and
//! verdicts, or the pages linking to it.

use serde_json::json;

use super::{Call, Command, Known, Sub, no_detail};
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Shell, table};

pub const COMMAND: Command = Command {
    name: "links",
    usage: "links from URL | links to URL",
    summary: "out-links with anchors, or in-links",
    examples: &["links from https://example.org/"],
    arity: (2, Some(2)),
    subs: &[
        Sub {
            words: "from",
            writes: false,
        },
        Sub {
            words: "to",
            writes: false,
        },
    ],
    writes: false,
    complete,
    detail: no_detail,
    run,
};

fn complete(known: &Known, args: &[&str]) -> Vec<String> {
    match args {
        [_] => known.urls.clone(),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Shell, call: &Call) -> Result<Reply> {
    let (from, url) = match call.args[..] {
        ["from", u] => (true, u),
        ["to", u] => (false, u),
        _ => return Err(ShellError::Usage),
    };
    let u = sh.url_arg(url)?;
    if sh.store.seen(u.id())?.is_none() {
        bail!("{u} is not in the db");
    }
    if from {
        let links = sh.links_from(u.id(), usize::MAX)?;
        let rows: Vec<Vec<String>> = links
            .iter()
            .map(|(t, l)| {
                vec![
                    l.anchor.clone(),
                    super::page::type_name(l).to_string(),
                    l.verdict.name().to_string(),
                    t.clone(),
                ]
            })
            .collect();
        let j: Vec<_> = links
            .iter()
            .map(|(t, l)| super::page::link_json(t, l))
            .collect();
        Ok(Reply::with(
            table::render(&["anchor", "type", "verdict", "url"], &rows, sh.width),
            json!(j),
        ))
    } else {
        let links = sh.links_to(u.id(), usize::MAX)?;
        let rows: Vec<Vec<String>> = links.iter().map(|t| vec![t.clone()]).collect();
        Ok(Reply::with(
            table::render(&["linked from"], &rows, sh.width),
            json!(links),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn out_links_lead_back_as_in_links() {
        let mut t = TestShell::crawled(2);
        let seed = t.seed();
        let from = t.ok(&format!("links from {seed}"));
        assert!(from.lines().count() > 1, "{from}");
        assert!(
            t.err("links from http://a.invalid/")
                .contains("is not in the db")
        );
        assert_eq!(
            t.err(&format!("links at {seed}")),
            "usage: links from URL | links to URL"
        );
    }
}
