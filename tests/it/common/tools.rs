//! The archive tools the WARC tests run (warcio, cdxj-indexer, pywb,
//! wacz), from the venv `scripts/python-tools.sh` installs; a test that
//! needs one fails with how to get it, never skips.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The venv: `TRAWL_VENV`, or where `scripts/python-tools.sh` puts it.
fn venv() -> PathBuf {
    match std::env::var_os("TRAWL_VENV") {
        Some(v) => PathBuf::from(v),
        None => {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/trawl-venv")
        }
    }
}

/// The venv's command `name`.
pub fn tool(name: &str) -> Command {
    let path = venv().join("bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: run scripts/test, which installs the archive tools (scripts/python-tools.sh)",
        path.display()
    );
    Command::new(path)
}

/// Runs `cmd`; its stdout, or a panic with its stderr.
pub fn stdout_of(mut cmd: Command) -> String {
    let out = cmd.output().expect("run tool");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// `warcio check` accepts `file` (every record's digests verified).
pub fn warcio_check(file: &Path) {
    let mut cmd = tool("warcio");
    cmd.arg("check").arg("-v").arg(file);
    let out = stdout_of(cmd);
    assert!(
        !out.contains("digest fail") && !out.contains("invalid"),
        "{out}"
    );
}

/// `warcio index` of `file`: one JSON object a record.
pub fn warcio_index(file: &Path) -> Vec<serde_json::Value> {
    let mut cmd = tool("warcio");
    cmd.args([
        "index",
        "-f",
        "warc-type,warc-target-uri,http:status,offset,length",
    ])
    .arg(file);
    stdout_of(cmd)
        .lines()
        .map(|l| serde_json::from_str(l).expect("warcio index JSON"))
        .collect()
}

/// `cdxj-indexer`'s lines for `file`, sorted.
pub fn cdxj_indexer(file: &Path) -> Vec<String> {
    let mut cmd = tool("cdxj-indexer");
    cmd.arg(file);
    let mut lines: Vec<String> = stdout_of(cmd)
        .lines()
        .filter(|l| !l.starts_with('!'))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}
