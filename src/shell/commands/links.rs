//! `links from URL | links to URL`: a page's out-links with anchors and
//! verdicts, or the pages linking to it.

use serde_json::json;

use super::{Call, Command, Known, Run, Sub, no_detail};
use crate::schema::LinkRecord;
use crate::shell::Ctx;
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::{Column, Kind, Reply, columns, hidden};

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
    run: Run::Data(run),
};

fn complete(known: &Known, args: &[&str]) -> Vec<String> {
    match args {
        [_] => known.urls.clone(),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
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
        let rows = links.iter().map(|(t, l)| link_row(t, l)).collect();
        Ok(Reply::table(link_columns(), rows))
    } else {
        let links = sh.links_to(u.id(), usize::MAX)?;
        let rows = links.into_iter().map(|t| vec![json!(t)]).collect();
        Ok(Reply::table(vec![Column::new("from", Kind::Text)], rows))
    }
}

/// The columns of an out-link: what the table shows, then its context.
pub(super) fn link_columns() -> Vec<Column> {
    let t = Kind::Text;
    let mut c = columns(&[("anchor", t), ("link_type", t), ("verdict", t), ("url", t)]);
    c.extend(hidden(&[
        ("before", t),
        ("after", t),
        ("nofollow", Kind::Bool),
        ("verdict_detail", t),
    ]));
    c
}

/// A link type's name (empty when not known).
pub(super) fn link_type_name(t: Option<crate::model::LinkType>) -> &'static str {
    t.map_or("", |t| t.name())
}

/// An out-link to `url` under [`link_columns`].
pub(super) fn link_row(url: &str, l: &LinkRecord) -> Vec<serde_json::Value> {
    vec![
        json!(l.anchor),
        json!(super::page::type_name(l)),
        json!(l.verdict.name()),
        json!(url),
        json!(l.before),
        json!(l.after),
        json!(l.nofollow),
        json!(l.verdict_detail),
    ]
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
