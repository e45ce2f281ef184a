//! `disk`: bytes on disk per table (SST and blob files) and rows, from
//! RocksDB's own accounting, so a user sees where the footprint goes.

use serde_json::json;

use super::{Call, Command, Run, no_detail, nothing};
use crate::shell::error::Result;
use crate::shell::reply::{Kind, Reply, columns};
use crate::shell::{Ctx, table};

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
    run: Run::Data(run),
};

const HEADERS: [(&str, Kind); 5] = [
    ("table", Kind::Text),
    ("sst", Kind::Bytes),
    ("blob", Kind::Bytes),
    ("memtable", Kind::Bytes),
    ("rows", Kind::Int),
];

fn run(sh: &mut Ctx, _: &Call) -> Result<Reply> {
    let usage = sh.store.disk_usage();
    let total: u64 = usage.iter().map(|u| u.sst + u.blob).sum();
    let unflushed: u64 = usage.iter().map(|u| u.memtable).sum();
    let wire = sh.store.counters()?.bytes;
    let rows = usage
        .iter()
        .filter(|u| u.sst + u.blob + u.memtable > 0)
        .map(|u| {
            vec![
                json!(u.table),
                json!(u.sst),
                json!(u.blob),
                json!(u.memtable),
                json!(u.rows),
            ]
        })
        .collect();
    let mut h = format!("total {} on disk", table::bytes(total));
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
    Ok(Reply::table(columns(&HEADERS), rows).note(h))
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
        let rows = j.as_array().unwrap();
        let field = |r: &serde_json::Value, f: &str| r[f].as_u64().unwrap();
        let stored: u64 = rows
            .iter()
            .map(|r| field(r, "sst") + field(r, "blob") + field(r, "memtable"))
            .sum();
        assert!(stored > 0, "{j}");
        assert_eq!(t.err("disk now"), "usage: disk");
    }
}
