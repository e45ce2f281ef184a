//! `seed add|set|list|remove|import|export`: the seed-site library (the
//! seed URLs in `meta`, each seed site's record in `sites`); a running
//! crawl takes new seeds and new site settings at once.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::seed_csv::Row;
use super::seeds::Site;
use super::site_fields::{self, Values, writable};
use super::{Call, Command, Run, Sub, urls};
use crate::model::{self, CanonicalUrl, HostId, now_ms};
use crate::schema::tables::{SeedsRow, Sites};
use crate::schema::{Decision, SeedList, SiteRecord};
use crate::shell::error::{Result, ShellError, bail};
use serde_json::json;

use crate::shell::Ctx;
use crate::shell::reply::{Column, Kind, Reply, columns, hidden};

pub const COMMAND: Command = Command {
    name: "seed",
    usage: "seed add URL... [--FIELD VALUE]... | seed set HOST FIELD VALUE | seed list | seed remove URL | seed import FILE | seed export FILE | seed accept HOST [--allow-private] [--FIELD VALUE]... | seed reject HOST",
    summary: "manage the seed-site library (a running crawl takes new seeds and site settings at once)",
    examples: &[
        "seed add https://example.org/ --subject physics --source 'DMOZ' --depth 2",
        "seed set example.org filter domain",
        "seed set example.org max_pages none",
        "seed import seeds.csv",
        "seed export seeds.csv",
        "seed accept www.found.org --subject physics",
        "seed reject ads.example.com",
    ],
    arity: (1, None),
    subs: &[
        Sub {
            words: "add",
            writes: true,
        },
        Sub {
            words: "set",
            writes: true,
        },
        Sub {
            words: "list",
            writes: false,
        },
        Sub {
            words: "remove",
            writes: true,
        },
        Sub {
            words: "import",
            writes: true,
        },
        Sub {
            words: "export",
            writes: false,
        },
        Sub {
            words: "accept",
            writes: true,
        },
        Sub {
            words: "reject",
            writes: true,
        },
    ],
    writes: true,
    complete,
    detail,
    run: Run::Data(run),
};

fn detail() -> String {
    let fields: Vec<String> = writable()
        .map(|f| format!("  {:<10} {}", f.name, f.meaning))
        .collect();
    format!(
        "Fields a person sets (seed add --FIELD VALUE, seed set HOST FIELD VALUE, CSV columns; none clears a setting):\n{}\n\
         A site's own settings replace the crawl's on its host and the hosts its seeds redirect to:\n\
         its pages are judged, delayed, budgeted and queued by them, and the links found on its pages\n\
         are judged by its filter and depth. seeds shows the library; why shows the settings that decided.",
        fields.join("\n")
    )
}

fn complete(known: &super::Known, args: &[&str]) -> Vec<String> {
    match args {
        ["remove"] => urls(known, &[]),
        ["set"] => known.hosts.clone(),
        ["set", _] => writable().map(|f| f.name.to_string()).collect(),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    match call.args[..] {
        ["list"] => Ok(list_seeds(&sh.store.seeds()?)),
        ["add", ref rest @ ..] if !rest.is_empty() => {
            let (urls, values) = add_args(rest)?;
            let entry = Admission {
                urls: normalized(&urls)?,
                values,
                decision: None,
            };
            sh.admit(vec![entry])
        }
        ["set", host, field, value] => sh.set_site(host, field, value),
        ["import", file] => sh.import_seeds(file),
        ["export", file] => {
            let n = sh.export_seeds(file)?;
            Ok(Reply::text(format!("{n} seed site(s) written to {file}")))
        }
        ["remove", url] => sh.remove_seed(url),
        ["accept", ref rest @ ..] => {
            let allow_private = rest.contains(&"--allow-private");
            let rest: Vec<&str> = (rest.iter().copied())
                .filter(|a| *a != "--allow-private")
                .collect();
            match add_args(&rest)? {
                (hosts, values) if hosts.len() == 1 => {
                    sh.accept_site(hosts[0], values, allow_private)
                }
                _ => bail!(
                    "seed accept takes one host, then --allow-private and --FIELD VALUE flags"
                ),
            }
        }
        ["reject", host] => sh.reject_site(host),
        _ => Err(ShellError::Usage),
    }
}

/// Seed URLs and the fields to write on their sites.
pub(super) struct Admission {
    pub urls: Vec<CanonicalUrl>,
    pub values: Values,
    /// A candidate's acceptance (`seed accept`), recorded on its site.
    pub decision: Option<Decision>,
}

/// `URL... --FIELD VALUE...`: the URLs and the flags, each flag a
/// settable field (`--max-pages` for `max_pages`), checked.
fn add_args<'a>(args: &[&'a str]) -> Result<(Vec<&'a str>, Values)> {
    let (mut urls, mut values) = (Vec::new(), Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let Some(flag) = a.strip_prefix("--") else {
            urls.push(*a);
            continue;
        };
        let name = flag.replace('-', "_");
        let Some(f) = writable().find(|f| f.name == name) else {
            let flags: Vec<String> = writable()
                .map(|f| format!("--{}", f.name.replace('_', "-")))
                .collect();
            bail!("unknown flag {a} (flags: {})", flags.join(" "));
        };
        let Some(v) = it.next() else {
            bail!("{a} needs a value");
        };
        site_fields::write(&mut SiteRecord::default(), f.name, v)?;
        values.push((f.name, v.to_string()));
    }
    if urls.is_empty() {
        return Err(ShellError::Usage);
    }
    Ok((urls, values))
}

/// Every URL normalized, or the first refusal (a bad URL adds nothing).
fn normalized(urls: &[&str]) -> Result<Vec<CanonicalUrl>> {
    Ok(urls
        .iter()
        .map(|u| model::normalize(u).map_err(|e| format!("bad seed: {e}")))
        .collect::<std::result::Result<Vec<_>, _>>()?)
}

/// Whether a field is one of a site's own crawl settings.
fn is_setting(field: &str) -> bool {
    matches!(field, "depth" | "filter" | "delay" | "max_pages" | "order")
}

impl Ctx {
    /// Adds seeds and writes the fields given for their sites, in one
    /// batch; a running crawl queues the seeds and takes the settings.
    pub(super) fn admit(&mut self, entries: Vec<Admission>) -> Result<Reply> {
        let mut list = self.store.seeds()?;
        let mut records: HashMap<HostId, SiteRecord> = HashMap::new();
        let (mut added, mut settings) = (0, false);
        for e in &entries {
            for u in &e.urls {
                if !list.urls.iter().any(|s| s == u.as_str()) {
                    list.urls.push(u.as_str().to_string());
                    added += 1;
                }
                let host = u.host_id();
                let rec = match records.entry(host) {
                    Entry::Occupied(e) => e.into_mut(),
                    Entry::Vacant(e) => {
                        let stored = self.store.row::<Sites>(&host)?;
                        e.insert(stored.unwrap_or_else(|| SiteRecord {
                            origin: u.host_key(),
                            added_ms: now_ms(),
                            ..SiteRecord::default()
                        }))
                    }
                };
                if rec.decision == Decision::Rejected {
                    // Added by hand: the rejection is undone.
                    rec.decision = Decision::Undecided;
                    rec.added_ms = now_ms();
                }
                for (field, value) in &e.values {
                    site_fields::write(rec, field, value)?;
                    settings |= is_setting(field);
                }
                if let Some(d) = e.decision {
                    rec.decision = d;
                    rec.decided_ms = now_ms();
                }
            }
        }
        let mut b = self.store.batch();
        b.put_meta::<SeedsRow>(&list);
        for (host, rec) in &records {
            b.put_row::<Sites>(host, rec);
        }
        b.write()?;
        let live = match &self.crawl {
            Some(r) => {
                let urls = entries.iter().flat_map(|e| &e.urls);
                r.handle
                    .add_seeds(urls.map(|u| u.as_str().to_string()).collect());
                if settings {
                    r.handle.sites_changed();
                }
                " (queued in the running crawl)"
            }
            None => "",
        };
        Ok(Reply::text(format!(
            "{added} seed(s) added, {} in all{live}",
            list.urls.len()
        )))
    }

    /// `seed set HOST FIELD VALUE`.
    fn set_site(&mut self, host: &str, field: &str, value: &str) -> Result<Reply> {
        let mut site = self.find_site(host)?;
        let before = field_text(&site, field);
        site_fields::write(&mut site.rec, field, value)?;
        let mut b = self.store.batch();
        b.put_row::<Sites>(&site.host, &site.rec);
        b.write()?;
        let after = field_text(&site, field);
        let live = match &self.crawl {
            Some(r) if is_setting(field) => {
                r.handle.sites_changed();
                "; the running crawl obeys it now"
            }
            _ => "",
        };
        let shown = |v: String| if v.is_empty() { "none".to_string() } else { v };
        Ok(Reply::text(format!(
            "{}: {field} {} (was {}){live}",
            site.rec.origin,
            shown(after),
            shown(before)
        )))
    }

    /// The seed site `host` names: its origin, its host name, or a URL on
    /// one of its hosts.
    pub(super) fn find_site(&self, host: &str) -> Result<Site> {
        let wanted: Vec<HostId> = if host.contains("://") {
            model::normalize(host)
                .map(|u| u.host_id())
                .into_iter()
                .collect()
        } else {
            ["http", "https"]
                .iter()
                .filter_map(|s| model::normalize(&format!("{s}://{host}/")).ok())
                .map(|u| u.host_id())
                .collect()
        };
        let found = self
            .library()?
            .into_iter()
            .find(|s| s.hosts.iter().any(|h| wanted.contains(h)));
        found.ok_or_else(|| format!("{host} is not a seed site (seeds lists them)").into())
    }

    /// `seed remove URL`; the site's record goes with its last seed URL.
    fn remove_seed(&mut self, url: &str) -> Result<Reply> {
        let mut list = self.store.seeds()?;
        let norm = model::normalize(url).map_err(|e| e.to_string())?;
        let before = list.urls.len();
        list.urls.retain(|u| u != norm.as_str());
        if list.urls.len() == before {
            bail!("{url} is not a seed (seed list shows them)");
        }
        let host = norm.host_id();
        let last = !list
            .urls
            .iter()
            .any(|u| model::normalize(u).is_ok_and(|u| u.host_id() == host));
        let mut b = self.store.batch();
        b.put_meta::<SeedsRow>(&list);
        if last {
            b.delete_row::<Sites>(&host);
        }
        b.write()?;
        if let Some(r) = &self.crawl
            && last
        {
            r.handle.sites_changed();
        }
        Ok(Reply::text(format!(
            "removed {norm} from the seeds (URLs already queued stay queued)"
        )))
    }

    /// `seed import FILE`: a CSV with a header naming a `url` column, or
    /// one URL a line. `#` comments and blank lines are skipped, and so
    /// (with a note) is a row the crawler refuses.
    fn import_seeds(&mut self, file: &str) -> Result<Reply> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'));
        let Some(first) = first else {
            bail!("{file}: no URLs in it");
        };
        let csv =
            !first.contains("://") && first.contains(',') || first.eq_ignore_ascii_case("url");
        let (rows, ignored) = if csv {
            // It skips comments outside quoted cells only.
            let records = super::seed_csv::parse(&text).map_err(|e| format!("{file}: {e}"))?;
            let t = super::seed_csv::read_table(records).map_err(|e| format!("{file}: {e}"))?;
            (t.rows, t.ignored)
        } else {
            let rows = text
                .lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.trim()))
                .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
                .map(|(line, l)| Row {
                    line,
                    urls: vec![l.to_string()],
                    values: Vec::new(),
                })
                .collect();
            (rows, Vec::new())
        };
        let (entries, skipped) = checked_rows(rows);
        if entries.is_empty() {
            let why = skipped.first().cloned().unwrap_or_else(|| "no rows".into());
            bail!(
                "{file}: no usable seed in it ({} refused, e.g. {why})",
                skipped.len()
            );
        }
        let mut reply = self.admit(entries)?;
        for s in &skipped {
            reply = reply.note(format!("skipped: {s}"));
        }
        if !ignored.is_empty() {
            reply = reply.note(format!(
                "ignored columns the crawl fills: {}",
                ignored.join(", ")
            ));
        }
        Ok(reply)
    }
}

/// Rows as entries, and a note for each row refused (its line and why).
fn checked_rows(rows: Vec<Row>) -> (Vec<Admission>, Vec<String>) {
    let (mut entries, mut skipped) = (Vec::new(), Vec::new());
    for Row { line, urls, values } in rows {
        if urls.is_empty() {
            skipped.push(format!("line {line}: no URL"));
            continue;
        }
        let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
        let checked = normalized(&refs).and_then(|u| {
            let mut scratch = SiteRecord::default();
            for (f, v) in &values {
                site_fields::write(&mut scratch, f, v)?;
            }
            Ok(u)
        });
        match checked {
            Ok(urls) => entries.push(Admission {
                urls,
                values,
                decision: None,
            }),
            Err(e) => skipped.push(format!("line {line}: {e}")),
        }
    }
    (entries, skipped)
}

/// A field's text on a site, for `seed set`'s reply.
fn field_text(site: &Site, field: &str) -> String {
    let row = super::site_fields::SiteRow::of_record(&site.rec, &site.urls);
    site_fields::find(field).map_or(String::new(), |f| site_fields::cell(f, &row))
}

fn list_seeds(list: &SeedList) -> Reply {
    let mut rows: Vec<Vec<serde_json::Value>> = list
        .urls
        .iter()
        .map(|u| vec![json!(u), json!("given"), json!(""), json!("given")])
        .collect();
    // Hosts the crawl took in because a seed redirected there.
    for d in &list.derived {
        let what = match d.via.as_str() {
            "robots" => format!("in scope: {}'s robots.txt redirects here", d.from),
            "import" => format!("in scope: its pages were imported from {}", d.from),
            _ => format!("{} redirects here", d.from),
        };
        rows.push(vec![json!(d.url), json!(d.via), json!(d.from), json!(what)]);
    }
    let t = Kind::Text;
    let mut c = columns(&[("url", t)]);
    c.extend(hidden(&[("via", t), ("from", t)]));
    c.push(Column::new("why", t));
    Reply::table(c, rows)
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn add_list_remove_and_import() {
        let mut t = TestShell::new();
        assert!(
            t.ok("seed add http://a.org/ http://b.org/")
                .contains("2 seed(s) added")
        );
        assert!(
            t.err("seed add http://c.org/ ftp://x/")
                .contains("bad seed")
        );
        let list = t.ok("seed list");
        assert!(
            list.contains("http://a.org/") && !list.contains("c.org"),
            "{list}"
        );
        assert!(t.ok("seed remove http://a.org/").contains("removed"));
        assert!(t.err("seed remove http://a.org/").contains("is not a seed"));
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("seeds.txt");
        std::fs::write(&f, "# mine\nhttp://d.org/\nnot a url\n").unwrap();
        let out = t.ok(&format!("seed import {}", f.display()));
        assert!(
            out.contains("1 seed(s) added, 2 in all") && out.contains("skipped"),
            "{out}"
        );
        assert!(
            t.err("seed drop")
                .starts_with("usage: seed add URL... [--FIELD VALUE]...")
        );
    }

    #[test]
    fn flags_and_set_write_the_site_and_bad_values_add_nothing() {
        let mut t = TestShell::new();
        let e = t.err("seed add http://a.org/ --depth deep");
        assert!(e.contains("depth: \"deep\" is not a whole number"), "{e}");
        assert!(
            t.err("seed add http://a.org/ --colour red")
                .contains("unknown flag --colour")
        );
        assert!(
            t.err("seed add http://a.org/ --depth")
                .contains("--depth needs a value")
        );
        assert!(t.ok("seeds").contains("no seed sites"));
        t.ok("seed add http://a.org/ http://a.org/x --subject cs --max-pages 9");
        let out = t.ok("seed set a.org filter domain");
        assert_eq!(out.trim(), "http://a.org: filter domain (was none)");
        assert!(
            t.ok("seed set http://a.org/y depth 2")
                .contains("depth 2 (was none)")
        );
        let e = t.err("seed set b.org depth 2");
        assert_eq!(e, "b.org is not a seed site (seeds lists them)");
        let table = t.ok("seeds where max_pages = 9");
        assert!(
            table.contains("http://a.org") && table.contains("depth 2, filter domain, max_pages 9"),
            "{table}"
        );
        assert!(t.err("seeds where colour = 1").contains("unknown field"));
        // The site's record goes with its last seed URL.
        t.ok("seed remove http://a.org/");
        assert!(t.ok("seeds").contains("cs"));
        t.ok("seed remove http://a.org/x");
        t.ok("seed add http://a.org/");
        assert!(!t.ok("seeds").contains("cs"));
    }

    #[test]
    fn csv_export_then_import_gives_the_same_library() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("in.csv");
        std::fs::write(
            &csv,
            "# from the group's list\nurl,subject,notes,depth,filter,rank\n\
             http://a.org/,physics,\"big, \"\"old\"\" site\",2,domain,0.5\n\
             http://b.org/ http://b.org/p,maths,,,,\n\
             ftp://c.org/,x,,,,\n\
             http://d.org/,x,,deep,,\n",
        )
        .unwrap();
        let mut t = TestShell::new();
        let out = t.ok(&format!("seed import {}", csv.display()));
        assert!(out.contains("3 seed(s) added, 3 in all"), "{out}");
        assert!(out.contains("skipped: line 5: bad seed"), "{out}");
        assert!(out.contains("skipped: line 6: depth:"), "{out}");
        assert!(
            out.contains("ignored columns the crawl fills: rank"),
            "{out}"
        );
        let (one, two) = (dir.path().join("one.csv"), dir.path().join("two.csv"));
        assert!(
            t.ok(&format!("seed export {}", one.display()))
                .contains("2 seed site(s)")
        );
        let mut fresh = TestShell::new();
        fresh.ok(&format!("seed import {}", one.display()));
        fresh.ok(&format!("seed export {}", two.display()));
        // Every column a person sets comes back the same.
        let settable = |p: &std::path::Path| {
            let text = std::fs::read_to_string(p).unwrap();
            let recs = super::super::seed_csv::parse(&text).unwrap();
            let t = super::super::seed_csv::read_table(recs).unwrap();
            t.rows
                .into_iter()
                .map(|r| (r.urls, r.values))
                .collect::<Vec<_>>()
        };
        let a = settable(&one);
        assert_eq!(a, settable(&two));
        let notes = a[0].1.iter().find(|(f, _)| *f == "notes");
        assert_eq!(notes.unwrap().1, "big, \"old\" site");
        assert_eq!(a[1].0, vec!["http://b.org/", "http://b.org/p"]);
        assert!(
            t.err("seed import /no/such.csv")
                .contains("cannot read /no/such.csv")
        );
    }
}
