//! A directed graph as GraphML, GEXF 1.3 (Gephi's schema), an edge list
//! CSV or Graphviz DOT, written as it is walked: nodes first, then edges
//! (both XML formats allow that order), under `NAME.partial` until whole.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Col, ColType, Partial};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GraphFormat {
    Graphml,
    Gexf,
    EdgesCsv,
    Dot,
}

impl GraphFormat {
    /// The format named, else the one the extension says.
    pub fn of(path: &Path, named: Option<&str>) -> Result<GraphFormat, String> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match named.or(ext.as_deref()) {
            Some("graphml") => Ok(GraphFormat::Graphml),
            Some("gexf") => Ok(GraphFormat::Gexf),
            Some("edges-csv" | "csv") => Ok(GraphFormat::EdgesCsv),
            Some("dot" | "gv") => Ok(GraphFormat::Dot),
            Some(f) if named.is_some() => Err(format!(
                "--format {f:?} is not a graph format; use graphml, gexf, edges-csv or dot"
            )),
            _ => Err(format!(
                "{}: say the graph's format with --format graphml|gexf|edges-csv|dot (or end the name .graphml, .gexf, .csv or .dot)",
                path.display()
            )),
        }
    }
}

/// What a finished graph file holds.
pub struct GraphWritten {
    pub path: PathBuf,
    pub nodes: u64,
    pub edges: u64,
    pub bytes: u64,
}

pub struct GraphFile {
    partial: Partial,
    out: BufWriter<File>,
    format: GraphFormat,
    attrs: Vec<Col>,
    nodes: u64,
    edges: u64,
    in_edges: bool,
}

impl GraphFile {
    /// Starts a graph whose nodes carry `attrs` (plus a label).
    pub fn create(path: &Path, format: GraphFormat, attrs: Vec<Col>) -> Result<GraphFile, String> {
        let (partial, file) = Partial::create(path)?;
        let mut g = GraphFile {
            partial,
            out: BufWriter::with_capacity(1 << 20, file),
            format,
            attrs,
            nodes: 0,
            edges: 0,
            in_edges: false,
        };
        let head = g.head();
        g.write(&head)?;
        Ok(g)
    }

    fn head(&self) -> String {
        match self.format {
            GraphFormat::Graphml => {
                let mut h = String::from(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n",
                );
                h +=
                    "  <key id=\"label\" for=\"node\" attr.name=\"label\" attr.type=\"string\"/>\n";
                for (i, a) in self.attrs.iter().enumerate() {
                    h += &format!(
                        "  <key id=\"d{i}\" for=\"node\" attr.name=\"{}\" attr.type=\"{}\"/>\n",
                        xml(&a.name),
                        xml_type(a.ty)
                    );
                }
                h +=
                    "  <key id=\"weight\" for=\"edge\" attr.name=\"weight\" attr.type=\"long\"/>\n";
                h += "  <graph id=\"trawl\" edgedefault=\"directed\">\n";
                h
            }
            GraphFormat::Gexf => {
                let mut h = String::from(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gexf xmlns=\"http://gexf.net/1.3\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://gexf.net/1.3 http://gexf.net/1.3/gexf.xsd\" version=\"1.3\">\n",
                );
                h += &format!(
                    "  <meta><creator>trawl {}</creator></meta>\n",
                    env!("CARGO_PKG_VERSION")
                );
                h += "  <graph defaultedgetype=\"directed\" mode=\"static\">\n";
                h += "    <attributes class=\"node\" mode=\"static\">\n";
                for (i, a) in self.attrs.iter().enumerate() {
                    h += &format!(
                        "      <attribute id=\"{i}\" title=\"{}\" type=\"{}\"/>\n",
                        xml(&a.name),
                        xml_type(a.ty)
                    );
                }
                h += "    </attributes>\n    <nodes>\n";
                h
            }
            GraphFormat::EdgesCsv => "source,target,weight\r\n".into(),
            GraphFormat::Dot => "digraph trawl {\n".into(),
        }
    }

    /// A node; `attrs` in the order given at creation (null: left out).
    pub fn node(&mut self, id: &str, label: &str, attrs: &[Value]) -> Result<(), String> {
        assert!(!self.in_edges, "nodes come before edges");
        self.nodes += 1;
        let line = match self.format {
            GraphFormat::Graphml => {
                let mut l = format!(
                    "    <node id=\"{}\"><data key=\"label\">{}</data>",
                    xml(id),
                    xml(label)
                );
                for (i, v) in attrs.iter().enumerate().filter(|(_, v)| !v.is_null()) {
                    l += &format!("<data key=\"d{i}\">{}</data>", xml(&super::plain(v)));
                }
                l + "</node>\n"
            }
            GraphFormat::Gexf => {
                let mut values = String::new();
                for (i, v) in attrs.iter().enumerate().filter(|(_, v)| !v.is_null()) {
                    values += &format!(
                        "<attvalue for=\"{i}\" value=\"{}\"/>",
                        xml(&super::plain(v))
                    );
                }
                // The schema wants at least one value in an <attvalues>.
                if !values.is_empty() {
                    values = format!("<attvalues>{values}</attvalues>");
                }
                format!(
                    "      <node id=\"{}\" label=\"{}\">{values}</node>\n",
                    xml(id),
                    xml(label)
                )
            }
            GraphFormat::EdgesCsv => return Ok(()),
            GraphFormat::Dot => format!("  {} [label={}];\n", dot(id), dot(label)),
        };
        self.write(&line)
    }

    /// An edge of `weight` links from `source` to `target`.
    pub fn edge(&mut self, source: &str, target: &str, weight: u64) -> Result<(), String> {
        if !self.in_edges {
            self.in_edges = true;
            if self.format == GraphFormat::Gexf {
                self.write("    </nodes>\n    <edges>\n")?;
            }
        }
        let id = self.edges;
        self.edges += 1;
        let line = match self.format {
            GraphFormat::Graphml => format!(
                "    <edge source=\"{}\" target=\"{}\"><data key=\"weight\">{weight}</data></edge>\n",
                xml(source),
                xml(target)
            ),
            GraphFormat::Gexf => format!(
                "      <edge id=\"{id}\" source=\"{}\" target=\"{}\" weight=\"{weight}\"/>\n",
                xml(source),
                xml(target)
            ),
            GraphFormat::EdgesCsv => format!(
                "{},{},{weight}\r\n",
                super::csv_cell(&Value::from(source)),
                super::csv_cell(&Value::from(target))
            ),
            GraphFormat::Dot => {
                format!("  {} -> {} [weight={weight}];\n", dot(source), dot(target))
            }
        };
        self.write(&line)
    }

    /// Closes the document and gives the file its name.
    pub fn finish(mut self) -> Result<GraphWritten, String> {
        let tail = match self.format {
            GraphFormat::Graphml => "  </graph>\n</graphml>\n",
            GraphFormat::Gexf if self.in_edges => "    </edges>\n  </graph>\n</gexf>\n",
            GraphFormat::Gexf => "    </nodes>\n    <edges>\n    </edges>\n  </graph>\n</gexf>\n",
            GraphFormat::EdgesCsv => "",
            GraphFormat::Dot => "}\n",
        };
        self.write(tail)?;
        let file = self
            .out
            .into_inner()
            .map_err(|e| self.partial.error(e.into_error()))?;
        let path = self.partial.path().to_path_buf();
        let bytes = self.partial.commit(file)?;
        Ok(GraphWritten {
            bytes,
            path,
            nodes: self.nodes,
            edges: self.edges,
        })
    }

    fn write(&mut self, s: &str) -> Result<(), String> {
        self.out
            .write_all(s.as_bytes())
            .map_err(|e| self.partial.error(e))
    }
}

/// A column's type as GraphML and GEXF both name it.
fn xml_type(t: ColType) -> &'static str {
    match t {
        ColType::Int => "long",
        ColType::Float => "double",
        ColType::Bool => "boolean",
        ColType::Text => "string",
    }
}

/// `s` as XML text or attribute value: markup escaped, and the characters
/// XML 1.0 cannot hold at all (most control characters) left out.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push_str(&format!("&#{};", c as u32)),
            c if (c as u32) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => {}
            c => out.push(c),
        }
    }
    out
}

/// `s` as a DOT quoted string.
fn dot(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn xml_text_is_escaped_and_stripped_of_what_xml_cannot_hold() {
        assert_eq!(
            xml("a<b>&\"c'\u{1}\td"),
            "a&lt;b&gt;&amp;&quot;c&apos;&#9;d"
        );
        assert_eq!(dot("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
        assert!(GraphFormat::of(Path::new("g.txt"), None).is_err());
        assert_eq!(
            GraphFormat::of(Path::new("g.GEXF"), None).unwrap(),
            GraphFormat::Gexf
        );
        assert!(
            GraphFormat::of(Path::new("g"), Some("svg"))
                .unwrap_err()
                .contains("graphml")
        );
    }

    #[test]
    fn a_graph_without_edges_is_still_a_whole_document() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.gexf");
        let attrs = vec![Col {
            name: "status".into(),
            ty: ColType::Int,
        }];
        let mut g = GraphFile::create(&p, GraphFormat::Gexf, attrs).unwrap();
        g.node("n1", "<home>", &[json!(200)]).unwrap();
        let w = g.finish().unwrap();
        assert_eq!((w.nodes, w.edges), (1, 0));
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("label=\"&lt;home&gt;\"") && text.ends_with("</gexf>\n"));
    }
}
