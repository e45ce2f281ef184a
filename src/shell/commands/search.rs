//! `search QUERY [--where EXPR] [--limit N]`: stored pages whose title or
//! text has the query's words, best first (BM25), each with a passage
//! around the match, from the index beside the db (the crawl keeps it
//! current; `reindex search` rebuilds it); `--where` checks a `pages
//! where` filter on the hits, best first.

use std::time::Instant;

use super::page_scan::{PageFilter, RowReader};
use super::{Call, Command, Run, nothing};
use crate::search::{LiveIndex, SearchIndex};
use crate::shell::error::{Result, bail};
use crate::shell::reply::{Column, Kind, Reply};
use crate::shell::{Ctx, rest_after_words, table};

pub const COMMAND: Command = Command {
    name: "search",
    usage: "search QUERY [--where EXPR] [--limit N]",
    summary: "pages whose title or text has the words, best first, with a passage, from the index the crawl keeps; --where filters the hits as pages where does",
    examples: &[
        "search focused crawler",
        "search '\"focused crawler\" OR shark' --limit 5",
        "search 论文",
        "search archive --where 'status = 200 and depth <= 2' --limit 5",
    ],
    arity: (1, None),
    subs: &[],
    writes: false,
    complete: nothing,
    detail: help,
    run: Run::Data(run),
};

/// Hits shown unless `--limit` says otherwise.
const LIMIT: usize = 20;

/// Bytes of a hit's passage (about 160 characters of English, 80 of
/// Chinese).
const PASSAGE: usize = 240;

fn help() -> String {
    format!(
        "The query: words (all must be there: English words match their other forms, \
         archive finds archived), \"a phrase\", OR, -word (not), title:word. Chinese, \
         Japanese and Korean are matched two characters at a time: a query of two or more \
         finds the texts holding it. Words over {} bytes are not indexed. Quote a phrase \
         in double quotes; a query with quotes of its own goes in single quotes.\n",
        crate::search::MAX_WORD
    )
}

/// What a `search` line asks for.
struct Options {
    /// The query as typed (its quotes kept for phrases; one wrapped whole
    /// in single quotes loses them).
    query: String,
    limit: usize,
    /// `--where EXPR`: a `pages where` filter on the hits.
    filter: Option<String>,
}

/// Where flag `name` stands in `s` as a word of its own.
fn flag_at(s: &str, name: &str) -> Option<usize> {
    s.match_indices(name).map(|(at, _)| at).find(|&at| {
        let after = s[at + name.len()..].chars().next();
        (at == 0 || s[..at].ends_with(char::is_whitespace)) && after.is_none_or(char::is_whitespace)
    })
}

/// The query, `--limit N` (anywhere) and `--where EXPR` (after the query,
/// to the end or to `--limit`).
fn options(rest: &str) -> Result<Options> {
    let mut query = rest.trim().to_string();
    let mut limit = LIMIT;
    if let Some(at) = flag_at(&query, "--limit") {
        let after = &query[at + "--limit".len()..];
        let n = after.split_whitespace().next().unwrap_or_default();
        limit = match n.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => bail!("--limit takes a number of pages (1 or more)"),
        };
        let end = after.find(n).map_or(after.len(), |i| i + n.len());
        query = format!("{} {}", &query[..at], &after[end..])
            .trim()
            .to_string();
    }
    let mut filter = None;
    if let Some(at) = flag_at(&query, "--where") {
        let mut expr = query[at + "--where".len()..].trim().to_string();
        // Quoted whole as one argument, or written as after `pages where`.
        let inner = expr
            .get(1..expr.len().saturating_sub(1))
            .unwrap_or_default();
        if expr.len() >= 2
            && expr.starts_with('\'')
            && expr.ends_with('\'')
            && !inner.contains('\'')
        {
            expr = inner.to_string();
        }
        if expr.is_empty() {
            bail!("--where takes a filter, as pages where does: --where 'status = 200'");
        }
        filter = Some(expr);
        query = query[..at].trim().to_string();
    }
    if query.len() >= 2 && query.starts_with('\'') && query.ends_with('\'') {
        query = query[1..query.len() - 1].to_string();
    }
    if query.trim().is_empty() {
        bail!("search what? usage: {}", COMMAND.usage);
    }
    Ok(Options {
        query,
        limit,
        filter,
    })
}

/// How many pages matched.
enum Matched {
    /// The query alone: every match counted.
    All(u64),
    /// With `--where`: the filter was checked on `checked` of the query's
    /// `of` matches (all of them when `whole`).
    Filtered { checked: u64, of: u64, whole: bool },
}

/// The best `limit` hits of `query` that pass `filter`: the query's hits
/// are taken best first, in windows that double, and checked one by one.
fn filtered(
    sh: &mut Ctx,
    index: &SearchIndex,
    query: &dyn tantivy::query::Query,
    filter: &str,
    limit: usize,
) -> Result<(Vec<crate::search::Hit>, Matched)> {
    let q = crate::shell::expr::parse_query(filter, 0)?;
    if q.order.is_some() || q.limit.is_some() {
        bail!("--where takes a filter only: hits come best first, --limit N says how many");
    }
    let store = sh.store.clone();
    let mut pages = PageFilter::new(&store, q.filter);
    let (mut kept, mut checked, mut window) = (Vec::new(), 0u64, limit.saturating_mul(4).max(256));
    loop {
        let (hits, of) = index
            .search_from(query, checked as usize, window)
            .map_err(|e| e.to_string())?;
        let empty = hits.is_empty();
        for h in hits {
            if sh.interrupted() {
                bail!("interrupted");
            }
            checked += 1;
            if pages.matches(h.id)? {
                kept.push(h);
                if kept.len() == limit {
                    let whole = checked == of;
                    return Ok((kept, Matched::Filtered { checked, of, whole }));
                }
            }
        }
        if empty || checked >= of {
            return Ok((
                kept,
                Matched::Filtered {
                    checked,
                    of,
                    whole: true,
                },
            ));
        }
        window = window.saturating_mul(2);
    }
}

/// The db's index, brought up to date from the db's log first when this
/// shell may write it and no crawl of its own does (after a `kill -9`, the
/// log holds what the index missed), and notes on how current it is.
fn current_index(sh: &mut Ctx) -> Result<(SearchIndex, Vec<String>)> {
    let open = |sh: &Ctx| -> Result<SearchIndex> {
        match SearchIndex::open(sh.store.path()).map_err(|e| e.to_string())? {
            Some(index) => Ok(index),
            None => bail!(
                "no search index for this db: `reindex search` builds one, and a crawl keeps it current (until then `pages where text ~ 'word'` scans every page)"
            ),
        }
    };
    let mut index = open(sh)?;
    let logged = sh.store.counters()?.search_seq;
    let mark = index.mark().map_err(|e| e.to_string())?;
    if !mark.followable() {
        let note = "note: the index was built by an older trawl and is not kept current: `reindex search` rebuilds it (so does the next crawl)";
        return Ok((index, vec![note.to_string()]));
    }
    let crawling = sh.crawl.as_ref().is_some_and(|r| !r.join.is_finished());
    let behind = logged.saturating_sub(mark.next_seq.unwrap_or_default());
    if behind == 0 {
        return Ok((index, Vec::new()));
    }
    if crawling || sh.store.is_read_only() {
        let who = match crawling && sh.settings.search_live {
            true => "the crawl takes them when it leaves a processor idle, and at its end",
            false => {
                "a crawl, or a search in a shell that can write the db and runs no crawl, takes them"
            }
        };
        let note = format!("note: the index lacks the last {behind} page changes ({who})");
        return Ok((index, vec![note]));
    }
    drop(index);
    let store = sh.store.clone();
    let taken = catch_up(sh, &store, behind)?;
    index = open(sh)?;
    let note = format!("note: the index took {taken} page changes it lacked first");
    Ok((index, vec![note]))
}

/// Every page `query` finds, by id (sorted): what `export text --search`
/// writes.
pub(super) fn all_pages(sh: &mut Ctx, query: &str) -> Result<Vec<crate::model::UrlId>> {
    let (index, _) = current_index(sh)?;
    let q = index.parse(query).map_err(|e| e.to_string())?;
    let (hits, _) = index
        .search(&*q, index.pages() as usize)
        .map_err(|e| e.to_string())?;
    let mut ids: Vec<_> = hits.into_iter().map(|h| h.id).collect();
    ids.sort_unstable();
    Ok(ids)
}

/// Takes the db's log into its index; returns the changes taken.
fn catch_up(sh: &mut Ctx, store: &crate::store::Store, behind: u64) -> Result<u64> {
    let Some(mut live) = LiveIndex::open(store).map_err(|e| e.to_string())? else {
        return Ok(0);
    };
    let mut taken = 0u64;
    loop {
        if sh.interrupted() {
            // Each commit stands: the next search goes on from it.
            bail!("interrupted; the index took {taken} of {behind} page changes");
        }
        let n = live.catch_up(store).map_err(|e| e.to_string())?;
        if n == 0 {
            live.trim(store).map_err(|e| e.to_string())?;
            return Ok(taken);
        }
        taken += n as u64;
        sh.progress(&format!(
            "search: the index takes {} of {} page changes",
            table::thousands(taken),
            table::thousands(behind)
        ));
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let opts = options(&rest_after_words(call.line, 1).0)?;
    let started = Instant::now();
    let (index, notes) = current_index(sh)?;
    let query = index.parse(&opts.query).map_err(|e| e.to_string())?;
    let (hits, matched) = match &opts.filter {
        None => {
            let (hits, n) = index
                .search(&*query, opts.limit)
                .map_err(|e| e.to_string())?;
            (hits, Matched::All(n))
        }
        Some(f) => filtered(sh, &index, &*query, f, opts.limit)?,
    };
    let passages = index
        .passages(&*query, PASSAGE)
        .map_err(|e| e.to_string())?;
    let store = sh.store.clone();
    let mut reader = RowReader::new(&store, false);
    let mut rows = Vec::with_capacity(hits.len());
    for h in &hits {
        let (title, text) = reader.title_and_text(h.id)?;
        let passage = passages.of(&text);
        rows.push(vec![
            serde_json::json!(h.score),
            serde_json::json!(h.url),
            serde_json::json!(title),
            serde_json::json!(passage),
        ]);
    }
    let columns = vec![
        Column::new("score", Kind::Num),
        Column::new("url", Kind::Text),
        Column::new("title", Kind::Text),
        Column::new("passage", Kind::Text),
    ];
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let n = table::thousands;
    let note = match matched {
        Matched::All(all) => format!("({} of {} matching pages; {ms:.1} ms)", hits.len(), n(all)),
        Matched::Filtered {
            checked,
            of,
            whole: true,
        } => format!(
            "({} matching pages: --where kept them of the {} the query matched, {} checked; {ms:.1} ms)",
            hits.len(),
            n(of),
            n(checked)
        ),
        Matched::Filtered { checked, of, .. } => format!(
            "(the best {} matching pages: --where kept them of the first {} of {} the query matched; {ms:.1} ms)",
            hits.len(),
            n(checked),
            n(of)
        ),
    };
    let mut reply = Reply::table(columns, rows).note(note);
    for n in notes {
        reply = reply.note(n);
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;
    use std::collections::BTreeSet;

    fn urls(jsonl: &str) -> BTreeSet<String> {
        jsonl
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["url"].as_str().unwrap().to_string()
            })
            .collect()
    }

    /// For words of the demo's English and Chinese vocabularies, phrases
    /// and boolean queries, the index finds exactly the pages the scan of
    /// titles and stored texts finds.
    #[test]
    fn hits_are_the_pages_the_scan_finds() {
        // The crawl kept the index: no rebuild first.
        let mut t = TestShell::crawled(4);
        let all: u64 = t.ok("count pages").trim().parse().unwrap();
        let every = t.ok("search 'status:[0 TO 999]' --limit 100000 --format jsonl");
        assert_eq!(urls(&every).len() as u64, all);
        // `not not` keeps the search index out: this is the scan.
        let scan = |t: &mut TestShell, w: &str| {
            urls(&t.ok(&format!(
                "pages where not not (title ~ '{w}' or text ~ '{w}') --format jsonl"
            )))
        };
        let search = |t: &mut TestShell, q: &str| {
            urls(&t.ok(&format!("search {q} --limit 100000 --format jsonl")))
        };
        let mut found = 0;
        for w in [
            "price",
            "shipping",
            "garden",
            "论文",
            "运动员",
            "今天",
            "体育",
            "zzqx",
        ] {
            let want = scan(&mut t, w);
            assert_eq!(search(&mut t, w), want, "{w}");
            found += want.len();
        }
        assert!(found > 0);
        // Another form of a word finds the same pages.
        assert_eq!(search(&mut t, "prices"), scan(&mut t, "price"));
        let (price, garden) = (scan(&mut t, "price"), scan(&mut t, "garden"));
        let either: BTreeSet<_> = price.union(&garden).cloned().collect();
        assert_eq!(search(&mut t, "'price OR garden'"), either);
        let both: BTreeSet<_> = price.intersection(&garden).cloned().collect();
        assert_eq!(search(&mut t, "price garden"), both);
        let only: BTreeSet<_> = price.difference(&garden).cloned().collect();
        assert_eq!(search(&mut t, "'price -garden'"), only);
        // A phrase in double quotes stays a phrase; a limit past the
        // pages is the pages.
        let phrase = search(&mut t, "\"price garden\"");
        assert!(phrase.is_subset(&both), "{phrase:?}");
        let huge = t.ok("search price --limit 18446744073709551615 --format jsonl");
        assert_eq!(urls(&huge), price);
        // The passage marks the match; a bad query or limit says so.
        let table = t.ok("search 论文 --limit 2");
        assert!(table.contains("**论文**"), "{table}");
        assert!(
            t.err("search 'price AND ('")
                .contains("cannot read the query")
        );
        assert!(t.err("search price --limit 0").contains("--limit"));
        // --where filters the hits as pages where does, best first.
        let deep = t.ok(
            "search price --where 'depth >= 1 and url ~ \"/p/\"' --limit 100000 --format jsonl",
        );
        let want = urls(&t.ok(
            "pages where depth >= 1 and url ~ '/p/' and not not (title ~ price or text ~ price) --format jsonl",
        ));
        assert!(!want.is_empty());
        assert_eq!(urls(&deep), want);
        let scores: Vec<f64> = deep
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["score"]
                    .as_f64()
                    .unwrap()
            })
            .collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
        let two = t.ok("search price --where depth >= 1 --limit 2 --format jsonl");
        assert_eq!(urls(&two).len(), 2);
        assert!(
            t.err("search price --where")
                .contains("--where takes a filter")
        );
        assert!(
            t.err("search price --where 'depth = 1 order by depth'")
                .contains("filter only")
        );
        // export text --search writes the pages the search finds.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("found.jsonl");
        t.ok(&format!(
            "export text {} --search 'price OR garden' --where depth >= 1",
            path.display()
        ));
        let exported = urls(&std::fs::read_to_string(&path).unwrap());
        let want = urls(
            &t.ok("search 'price OR garden' --where depth >= 1 --limit 100000 --format jsonl"),
        );
        assert!(!want.is_empty());
        assert_eq!(exported, want);
        let err = t.err(&format!("export pages {} --search price", path.display()));
        assert!(err.contains("--search applies to export text"), "{err}");
        // A rebuild finds the same.
        let out = t.ok("reindex search");
        assert!(out.contains(&format!("indexed {all} pages")), "{out}");
        assert_eq!(search(&mut t, "price"), price);
    }

    /// A refilter's new verdicts and a re-denoising's new texts reach the
    /// index (taken from the db's log when a search finds it behind).
    #[test]
    fn refilters_reach_the_index() {
        let mut t = TestShell::crawled(4);
        let found = |t: &mut TestShell, search: &str, scan: &str| {
            let hits = urls(&t.ok(&format!("search {search} --limit 100000 --format jsonl")));
            let want = urls(&t.ok(&format!("pages where {scan} --format jsonl")));
            assert_eq!(hits, want, "{search}");
            hits.len()
        };
        let kept = found(&mut t, "verdict:keep", "verdict = keep");
        t.ok("set filter.mode relevance");
        t.ok("set relevance.keywords zzzz");
        t.ok("refilter");
        found(&mut t, "verdict:keep", "verdict = keep");
        let off = found(
            &mut t,
            "'-verdict:keep status:[0 TO 999]'",
            "verdict != keep",
        );
        assert!(kept > 0 && off > 0, "{kept} {off}");
        let words = ["home", "first", "price", "论文"];
        let before: Vec<usize> = words
            .iter()
            .map(|w| found(&mut t, w, &format!("title ~ '{w}' or text ~ '{w}'")))
            .collect();
        t.ok("set denoise.enabled true");
        t.ok("refilter --denoise");
        let after: Vec<usize> = words
            .iter()
            .map(|w| found(&mut t, w, &format!("title ~ '{w}' or text ~ '{w}'")))
            .collect();
        // Denoising took the navigation words out of the texts.
        assert!(after[0] < before[0], "{before:?} {after:?}");
    }
}
