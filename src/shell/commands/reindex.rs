//! `reindex`: rebuild the page index `pages where` uses for status and
//! host terms. Opening a db from before schema 3 builds it (a migration
//! step); the command stays for an index a user wants rebuilt.

use std::time::Instant;

use super::{Call, Command, Run, no_detail, nothing};
use crate::shell::error::{Result, bail};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "reindex",
    usage: "reindex",
    summary: "rebuild the page index `pages where` uses for status and host terms (opening a db from before schema 3 builds it)",
    examples: &["reindex"],
    arity: (0, Some(0)),
    subs: &[],
    writes: true,
    complete: nothing,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, _: &Call) -> Result<Reply> {
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
