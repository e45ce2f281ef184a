//! The seed library as CSV (RFC 4180: commas, double quotes around a cell
//! that holds a comma, quote or line break, `""` for a quote): `seed
//! export FILE` writes every field of [`SITE_FIELDS`] with a header row;
//! `seed import FILE` reads a file with a header naming a `url` column and
//! any settable fields — or, as before, a plain list of URLs.

use super::site_fields::{self, SITE_FIELDS, Values};
use crate::shell::Ctx;
use crate::shell::error::{Result, bail};

/// A CSV file's records, each with the line it starts on. A line whose
/// first character (past blanks) is `#` outside a quoted cell is a
/// comment; inside one it is the cell's text.
pub(super) fn parse(text: &str) -> std::result::Result<Vec<(usize, Vec<String>)>, String> {
    let mut records = Vec::new();
    let (mut record, mut cell) = (Vec::new(), String::new());
    let (mut line, mut start) = (1, 1);
    let mut quoted = false;
    // A spreadsheet's byte-order mark is not part of the first cell.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            // A line break in a cell is kept as '\n', whatever the file's.
            (true, '\r') if chars.peek() == Some(&'\n') => {}
            (true, c) => {
                line += usize::from(c == '\n');
                cell.push(c);
            }
            (false, '#') if record.is_empty() && cell.trim().is_empty() => {
                // To the line's end; its '\n' ends an empty record.
                cell.clear();
                while chars.next_if(|c| *c != '\n').is_some() {}
            }
            (false, '"') if cell.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut cell)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut cell));
                records.push((start, std::mem::take(&mut record)));
                line += 1;
                start = line;
            }
            (false, c) => cell.push(c),
        }
    }
    if quoted {
        return Err(format!("line {start}: a quoted cell is not closed"));
    }
    if !cell.is_empty() || !record.is_empty() {
        record.push(cell);
        records.push((start, record));
    }
    // Blank lines are no records.
    records.retain(|(_, r)| !(r.len() == 1 && r[0].trim().is_empty()));
    Ok(records)
}

/// A cell as CSV writes it.
fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

/// One seed site read from a CSV row: its URLs and (field, value) pairs.
#[derive(Debug)]
pub(super) struct Row {
    pub line: usize,
    pub urls: Vec<String>,
    pub values: Values,
}

/// The rows of a CSV file with a header; `ignored` names the columns the
/// crawl fills (an export's), which an import leaves alone.
#[derive(Debug)]
pub(super) struct Table {
    pub rows: Vec<Row>,
    pub ignored: Vec<&'static str>,
}

/// Reads a header and its rows; an unknown column or a file without a
/// `url` column is an error naming it.
pub(super) fn read_table(records: Vec<(usize, Vec<String>)>) -> std::result::Result<Table, String> {
    let mut it = records.into_iter();
    let Some((_, header)) = it.next() else {
        return Err("no header row".into());
    };
    let mut columns = Vec::new();
    let mut ignored = Vec::new();
    for name in &header {
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() {
            // A trailing comma: a column with no name holds nothing.
            columns.push("");
            continue;
        }
        let Some(f) = site_fields::find(&name) else {
            let known: Vec<&str> = SITE_FIELDS.iter().map(|f| f.name).collect();
            return Err(format!(
                "unknown column {name:?} (columns: {})",
                known.join(", ")
            ));
        };
        if f.write.is_none() && f.name != "url" {
            ignored.push(f.name);
        }
        columns.push(f.name);
    }
    let Some(url_col) = columns.iter().position(|c| *c == "url") else {
        return Err("no url column in the header".into());
    };
    let rows = it
        .map(|(line, cells)| Row {
            line,
            urls: cells
                .get(url_col)
                .map(|c| c.split_whitespace().map(String::from).collect())
                .unwrap_or_default(),
            values: columns
                .iter()
                .zip(cells)
                .filter(|(c, _)| site_fields::find(c).is_some_and(|f| f.write.is_some()))
                .map(|(c, v)| (*c, v))
                .collect(),
        })
        .collect();
    Ok(Table { rows, ignored })
}

impl Ctx {
    /// `seed export FILE`: the library with every field, written whole
    /// (to a temporary file renamed over FILE).
    pub(super) fn export_seeds(&self, file: &str) -> Result<usize> {
        let mut out = SITE_FIELDS
            .iter()
            .map(|f| f.name)
            .collect::<Vec<_>>()
            .join(",");
        out.push('\n');
        let sites = self.library()?;
        let nodes = self.rank_nodes()?;
        for site in &sites {
            let facts = self.site_facts(site, nodes)?;
            let row = facts.row(site);
            let cells: Vec<String> = SITE_FIELDS
                .iter()
                .map(|f| quote(&site_fields::cell(f, &row)))
                .collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        let tmp = format!("{file}.tmp");
        if let Err(e) = std::fs::write(&tmp, out).and_then(|()| std::fs::rename(&tmp, file)) {
            let _ = std::fs::remove_file(&tmp);
            bail!("cannot write {file}: {e}");
        }
        Ok(sites.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_cells_keep_commas_quotes_and_line_breaks() {
        let text = "url,notes\r\nhttp://a.org/,\"big, \"\"old\"\"\nsite\"\n\nhttp://b.org/,\n";
        let recs = parse(text).unwrap();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[1].1, vec!["http://a.org/", "big, \"old\"\nsite"]);
        assert_eq!(recs[2].0, 5);
        assert_eq!(recs[2].1, vec!["http://b.org/", ""]);
        assert_eq!(quote("big, \"old\""), "\"big, \"\"old\"\"\"");
        assert!(parse("url\n\"open").unwrap_err().contains("line 2"));
        let t = read_table(
            parse("\u{feff}URL,subject,rank,\nhttp://a.org/ http://a.org/x,cs,3\n").unwrap(),
        )
        .unwrap();
        assert_eq!(t.ignored, vec!["rank"]);
        assert_eq!(t.rows[0].urls.len(), 2);
        assert_eq!(t.rows[0].values, vec![("subject", "cs".to_string())]);
        assert!(
            read_table(parse("url,colour\n").unwrap())
                .unwrap_err()
                .contains("colour")
        );
        assert!(
            read_table(parse("subject\n").unwrap())
                .unwrap_err()
                .contains("no url")
        );
    }

    #[test]
    fn comments_are_lines_outside_quoted_cells_only() {
        let text = "# list\r\nurl,notes\r\n  # a comment, \"with a quote\r\n\
                    http://a.org/,\"first\r\n# not a comment\r\nlast\"\r\n\
                    http://b.org/,# a note\r\n";
        let recs = parse(text).unwrap();
        assert_eq!(recs.len(), 3, "{recs:?}");
        assert_eq!(recs[0], (2, vec!["url".to_string(), "notes".into()]));
        assert_eq!(recs[1].0, 4);
        assert_eq!(recs[1].1[1], "first\n# not a comment\nlast");
        assert_eq!(
            recs[2],
            (7, vec!["http://b.org/".into(), "# a note".into()])
        );
    }

    /// `seed import` blanked a `#` line inside a quoted cell.
    #[test]
    fn import_keeps_hash_lines_inside_quoted_cells() {
        let dir = tempfile::tempdir().unwrap();
        let (csv, out) = (dir.path().join("in.csv"), dir.path().join("out.csv"));
        std::fs::write(
            &csv,
            "# seeds\nurl,notes\nhttp://a.org/,\"see:\n# 1 the index\n# 2 the archive\"\n\
             # http://b.org/,skipped\nhttp://c.org/,x\n",
        )
        .unwrap();
        let mut t = super::super::test_shell::TestShell::new();
        let said = t.ok(&format!("seed import {}", csv.display()));
        assert!(said.contains("2 seed(s) added"), "{said}");
        t.ok(&format!("seed export {}", out.display()));
        let table = read_table(parse(&std::fs::read_to_string(&out).unwrap()).unwrap()).unwrap();
        let notes = table.rows[0].values.iter().find(|(f, _)| *f == "notes");
        assert_eq!(
            notes.map(|n| n.1.as_str()),
            Some("see:\n# 1 the index\n# 2 the archive")
        );
    }
}
