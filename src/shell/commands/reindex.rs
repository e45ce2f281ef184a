//! `reindex`: rebuild the page index `pages where` uses for status and
//! host terms. Opening a db from before schema 3 builds it (a migration
//! step); the command stays for an index a user wants rebuilt.
//! `reindex search`: build the full-text index `search` reads.

use std::time::Instant;

use super::{Call, Command, Run, Sub, no_detail};
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "reindex",
    usage: "reindex [search]",
    summary: "rebuild the page index `pages where` uses for status and host terms (opening a db from before schema 3 builds it); reindex search: build the full-text index `search` reads",
    examples: &["reindex", "reindex search"],
    arity: (0, Some(1)),
    subs: &[Sub {
        words: "search",
        writes: true,
    }],
    writes: true,
    complete: |_, args| match args {
        [] | [_] => vec!["search".to_string()],
        _ => Vec::new(),
    },
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    match call.args.as_slice() {
        [] => page_index(sh),
        ["search"] => sh.reporting(search_index),
        _ => Err(ShellError::Usage),
    }
}

fn page_index(sh: &mut Ctx) -> Result<Reply> {
    let total = sh.store.counters()?.fetched;
    let started = Instant::now();
    let interrupt = sh.interrupt.clone();
    let tty = sh.progress_tty;
    let (n, complete) = sh.store.reindex_pages(&mut |done| {
        if tty {
            eprint!(
                "\r\x1b[Kreindex: {} of {} pages",
                table::thousands(done),
                table::thousands(total)
            );
        }
        !interrupt.swap(false, std::sync::atomic::Ordering::SeqCst)
    })?;
    if tty {
        eprint!("\r\x1b[K");
    }
    if !complete {
        bail!(
            "interrupted after {} pages; the index stays incomplete and queries scan until reindex finishes",
            table::thousands(n)
        );
    }
    Ok(Reply::record(
        format!(
            "indexed {} pages in {:.1} s",
            table::thousands(n),
            started.elapsed().as_secs_f64()
        ),
        serde_json::json!({ "pages": n }),
    ))
}

/// Every stored page into a new search index, which replaces the old one
/// when it is whole (Ctrl-C leaves the old one).
fn search_index(sh: &mut Ctx) -> Result<Reply> {
    if sh.crawl.as_ref().is_some_and(|r| !r.join.is_finished()) {
        bail!(
            "a crawl is running and keeps the search index current; to rebuild it, crawl stop first"
        );
    }
    let total = sh.store.counters()?.fetched;
    let started = Instant::now();
    let store = sh.store.clone();
    let mut interrupted = false;
    let built = crate::search::rebuild(&store, &mut |done| {
        if sh.interrupted() {
            interrupted = true;
            return false;
        }
        sh.progress(&format!(
            "reindex search: {} of {} pages",
            table::thousands(done),
            table::thousands(total)
        ));
        true
    })
    .map_err(|e| e.to_string())?;
    let Some(n) = built.filter(|_| !interrupted) else {
        bail!("interrupted; the search index is as it was");
    };
    let bytes = crate::search::bytes(store.path());
    Ok(Reply::record(
        format!(
            "indexed {} pages for search in {:.1} s ({} on disk)",
            table::thousands(n),
            started.elapsed().as_secs_f64(),
            table::bytes(bytes)
        ),
        serde_json::json!({ "pages": n, "bytes": bytes }),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn indexes_every_stored_page() {
        let mut t = TestShell::crawled(3);
        let fetched: u64 = t.ok("count pages").trim().parse().unwrap();
        assert!(
            t.ok("reindex")
                .contains(&format!("indexed {fetched} pages"))
        );
        assert_eq!(
            t.ok("count pages where status = 200").trim(),
            t.ok("count pages where status >= 200 and status < 300")
                .trim()
        );
    }
}
