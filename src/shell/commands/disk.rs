//! `disk`: bytes on disk per table (SST and blob files) and rows, from
//! RocksDB's own accounting, so a user sees where the footprint goes.

use serde_json::json;

use super::{Call, Command, no_detail, nothing};
use crate::shell::error::Result;
use crate::shell::reply::Reply;
use crate::shell::{Shell, table};

pub const COMMAND: Command = Command {
    name: "disk",
    usage: "disk",
    summary: "bytes on disk per table (SST and blob files) and estimated rows",
    examples: &["disk", "disk --json"],
    arity: (0, Some(0)),
    subs: &[],
    writes: false,
    complete: nothing,
    detail: no_detail,
    run,
};

const HEADERS: [&str; 5] = ["table", "sst", "blob", "memtable", "rows"];

fn run(sh: &mut Shell, _: &Call) -> Result<Reply> {
    let usage = sh.store.disk_usage();
    let total: u64 = usage.iter().map(|u| u.sst + u.blob).sum();
    let unflushed: u64 = usage.iter().map(|u| u.memtable).sum();
    let wire = sh.store.counters()?.bytes;
    let mut cells = Vec::new();
    let mut rows = Vec::new();
    for u in usage.iter().filter(|u| u.sst + u.blob + u.memtable > 0) {
        cells.push(vec![
            u.table.to_string(),
            table::bytes(u.sst),
            table::bytes(u.blob),
            table::bytes(u.memtable),
            table::thousands(u.rows),
        ]);
        rows.push(json!({"table": u.table, "sst": u.sst, "blob": u.blob,
            "memtable": u.memtable, "rows": u.rows}));
    }
    let mut h = table::render(&HEADERS, &cells, sh.width);
    h += &format!("total {} on disk", table::bytes(total));
    if wire > 0 {
        h += &format!(
            " ({:.2} × the {} fetched on the wire)",
            total as f64 / wire as f64,
            table::bytes(wire)
        );
    }
    if unflushed > 0 {
        h += &format!(", {} in memtables", table::bytes(unflushed));
    }
    let j = json!({"tables": rows, "total": total, "memtables": unflushed, "wire": wire});
    Ok(Reply::with(h, j))
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn lists_the_tables_a_crawl_wrote() {
        let mut t = TestShell::crawled(200);
        let out = t.ok("disk");
        assert!(out.starts_with("table"), "{out}");
        for table in ["pages", "docs", "links", "seen"] {
            assert!(out.contains(&format!("\n{table} ")), "{table}: {out}");
        }
        let j: serde_json::Value = serde_json::from_str(&t.ok("disk --json")).unwrap();
        let stored = j["total"].as_u64().unwrap() + j["memtables"].as_u64().unwrap();
        assert!(stored > 0, "{j}");
        assert!(j["wire"].as_u64().unwrap() > 0, "{j}");
        assert_eq!(t.err("disk now"), "usage: disk");
    }
}
