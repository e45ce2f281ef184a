//! `targets [import FILE | clear]`: URLs the user knows to be relevant.
//! Target recall — the share of them fetched — shows in `status`, the
//! prompt's run records and `runs compare`, as the harvest rate does.

use serde_json::json;

use super::{Call, Command, Run, Sub, no_detail, nothing};
use crate::model;
use crate::schema::TargetRecord;
use crate::schema::tables::Targets;
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "targets",
    usage: "targets | targets import FILE | targets clear",
    summary: "known-relevant URLs, for target recall (the share of them fetched)",
    examples: &["targets import relevant.txt", "targets"],
    arity: (0, Some(2)),
    subs: &[
        Sub {
            words: "import",
            writes: true,
        },
        Sub {
            words: "clear",
            writes: true,
        },
    ],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

/// Rows written per batch.
const BATCH: usize = 4096;

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    match call.args[..] {
        [] => sh.targets_summary(""),
        ["import", file] => sh.import_targets(file),
        ["clear"] => sh.clear_targets(),
        _ => Err(ShellError::Usage),
    }
}

impl Ctx {
    fn targets_summary(&self, before: &str) -> Result<Reply> {
        let (targets, fetched) = self.store.targets_and_fetched()?;
        let n = targets.len() as u64;
        let recall = (n > 0).then(|| fetched as f64 / n as f64);
        let text = match recall {
            None => "no targets (targets import FILE loads a list of relevant URLs)".into(),
            Some(r) => format!(
                "{} targets, {} fetched (recall {r:.3})",
                table::thousands(n),
                table::thousands(fetched)
            ),
        };
        Ok(Reply::record(
            format!("{before}{text}"),
            json!({"targets": n, "fetched": fetched, "recall": recall}),
        ))
    }

    /// Adds the URLs of `file` (one a line; blank lines and `#` comments
    /// skipped) to the target list; a line that is not a URL is named and
    /// skipped.
    fn import_targets(&mut self, file: &str) -> Result<Reply> {
        let text = std::fs::read_to_string(file).map_err(|e| {
            format!("cannot read {file}: {e} (targets import takes a file of URLs, one a line)")
        })?;
        let store = self.store.clone();
        let mut b = store.batch();
        let (mut added, mut skipped) = (0usize, Vec::new());
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match model::normalize(line) {
                Ok(u) => {
                    let rec = TargetRecord {
                        url: u.as_str().to_string(),
                    };
                    b.put_row::<Targets>(&u.id(), &rec);
                    added += 1;
                    if added.is_multiple_of(BATCH) {
                        std::mem::replace(&mut b, store.batch()).write()?;
                    }
                }
                Err(e) => skipped.push(format!("{file}:{}: {e}", i + 1)),
            }
        }
        if added == 0 {
            bail!(
                "{file}: no URL in it{}",
                skipped
                    .first()
                    .map_or(String::new(), |s| format!(" (first refused: {s})"))
            );
        }
        b.write()?;
        self.tell_crawl();
        let mut head = format!("imported {} URLs\n", table::thousands(added as u64));
        for s in skipped.iter().take(5) {
            head += &format!("skipped: {s}\n");
        }
        if skipped.len() > 5 {
            head += &format!("skipped {} more lines\n", skipped.len() - 5);
        }
        self.targets_summary(&head)
    }

    fn clear_targets(&mut self) -> Result<Reply> {
        let store = self.store.clone();
        let mut b = store.batch();
        let mut n = 0u64;
        for row in store.rows::<Targets>(&[]) {
            b.delete_row::<Targets>(&row?.0);
            n += 1;
        }
        b.write()?;
        self.tell_crawl();
        Ok(Reply::record(
            format!("removed {} targets", table::thousands(n)),
            json!({"removed": n}),
        ))
    }

    /// A crawl running here reloads what it reads from the db at a
    /// settings change (the target list, a new ranking).
    pub(super) fn tell_crawl(&self) {
        if let Some(run) = &self.crawl {
            run.handle.set_settings(run.handle.settings());
        }
    }
}
