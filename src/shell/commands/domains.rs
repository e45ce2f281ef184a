//! `domains`: the key domains (document 000) derived from the seeds, and
//! the common labels removed to find them; both can be edited.

use super::{Call, Command, Run, Sub, no_detail, nothing};
use crate::model;
use crate::shell::Ctx;
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;

pub const COMMAND: Command = Command {
    name: "domains",
    usage: "domains | domains key add|remove|list [NAME...] | domains common add|remove|list [LABEL...]",
    summary: "the key domains (document 000) derived from the seeds, and the common labels removed to find them",
    examples: &[
        "domains",
        "domains key add tsinghua",
        "domains common add edu",
    ],
    arity: (0, None),
    subs: &[
        Sub {
            words: "key add",
            writes: true,
        },
        Sub {
            words: "key remove",
            writes: true,
        },
        Sub {
            words: "key list",
            writes: false,
        },
        Sub {
            words: "common add",
            writes: true,
        },
        Sub {
            words: "common remove",
            writes: true,
        },
        Sub {
            words: "common list",
            writes: false,
        },
    ],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let mut s = sh.settings.clone();
    let f = &mut s.filter;
    match call.args[..] {
        [] | ["key", "list"] | ["common", "list"] => return show(sh, &call.args),
        ["key", "add", ref names @ ..] if !names.is_empty() => {
            for n in names {
                let n = n.to_ascii_lowercase().replace('-', "");
                f.removed_keys.retain(|k| *k != n);
                if !f.extra_keys.contains(&n) {
                    f.extra_keys.push(n);
                }
            }
        }
        ["key", "remove", ref names @ ..] if !names.is_empty() => {
            for n in names {
                let n = n.to_ascii_lowercase();
                f.extra_keys.retain(|k| *k != n);
                if !f.removed_keys.contains(&n) {
                    f.removed_keys.push(n);
                }
            }
        }
        ["common", "add", ref labels @ ..] if !labels.is_empty() => {
            for l in labels {
                let l = l.to_ascii_lowercase();
                if !f.common_domains.contains(&l) {
                    f.common_domains.push(l);
                }
            }
        }
        ["common", "remove", ref labels @ ..] if !labels.is_empty() => {
            let before = f.common_domains.len();
            f.common_domains
                .retain(|c| !labels.iter().any(|l| l.eq_ignore_ascii_case(c)));
            if f.common_domains.len() == before {
                bail!("none of {} is a common domain", labels.join(" "));
            }
        }
        _ => return Err(ShellError::Usage),
    }
    sh.settings = s;
    sh.persist_settings()?;
    if let Some(r) = &sh.crawl {
        r.handle.set_settings(sh.settings.clone());
    }
    show(sh, &[])
}

/// Both lists, or the one `args` names.
fn show(sh: &Ctx, args: &[&str]) -> Result<Reply> {
    let f = &sh.settings.filter;
    let seeds = sh.store.seeds()?.urls;
    let hosts: Vec<String> = seeds
        .iter()
        .filter_map(|u| model::normalize(u).ok())
        .map(|u| u.host().to_string())
        .collect();
    let built = crate::filter::Filters::new(f, hosts.iter().map(String::as_str));
    let keys = built.domain.keys().join(" ");
    let common = f.common_domains.join(" ");
    let text = match args {
        ["key", ..] => keys,
        ["common", ..] => common,
        _ => format!("key domains     {keys}\ncommon domains  {common}"),
    };
    Ok(Reply::record(
        text,
        serde_json::json!({"key": built.domain.keys(), "common": f.common_domains}),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn keys_come_from_seeds_and_can_be_edited() {
        let mut t = TestShell::new();
        t.ok("seed add http://www.tsinghua.edu.cn/");
        assert_eq!(t.ok("domains key list").trim(), "tsinghua");
        assert!(t.ok("domains key add pku").contains("tsinghua pku"));
        assert!(!t.ok("domains key remove tsinghua").contains("tsinghua"));
        assert!(
            t.err("domains common remove nosuch")
                .contains("none of nosuch is a common domain")
        );
        assert!(t.err("domains key").starts_with("usage: domains"));
    }
}
