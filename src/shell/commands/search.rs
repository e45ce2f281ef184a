//! `search QUERY [--limit N]`: stored pages whose title or text has the
//! query's words, best first (BM25), each with a passage around the
//! match, from the index beside the db (`reindex search` builds it).

use std::time::Instant;

use super::page_scan::RowReader;
use super::{Call, Command, Run, nothing};
use crate::search::SearchIndex;
use crate::shell::error::{Result, bail};
use crate::shell::reply::{Column, Kind, Reply};
use crate::shell::{Ctx, rest_after_words, table};

pub const COMMAND: Command = Command {
    name: "search",
    usage: "search QUERY [--limit N]",
    summary: "pages whose title or text has the words, best first, with a passage (from the index `reindex search` builds)",
    examples: &[
        "search focused crawler",
        "search '\"focused crawler\" OR shark' --limit 5",
        "search 论文",
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

/// The query as typed (its quotes kept for phrases; one wrapped whole in
/// single quotes loses them) and the limit (`--limit N` anywhere).
fn query_and_limit(rest: &str) -> Result<(String, usize)> {
    let mut query = rest.trim().to_string();
    let mut limit = LIMIT;
    let flag = query
        .match_indices("--limit")
        .map(|(at, _)| at)
        .find(|&at| at == 0 || query[..at].ends_with(char::is_whitespace));
    if let Some(at) = flag {
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
    if query.len() >= 2 && query.starts_with('\'') && query.ends_with('\'') {
        query = query[1..query.len() - 1].to_string();
    }
    if query.trim().is_empty() {
        bail!("search what? usage: search QUERY [--limit N]");
    }
    Ok((query, limit))
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let (q, limit) = query_and_limit(&rest_after_words(call.line, 1).0)?;
    let started = Instant::now();
    let Some(index) = SearchIndex::open(sh.store.path()).map_err(|e| e.to_string())? else {
        bail!(
            "no search index for this db: `reindex search` builds one (until then `pages where text ~ 'word'` scans every page)"
        );
    };
    let query = index.parse(&q).map_err(|e| e.to_string())?;
    let (hits, matched) = index.search(&*query, limit).map_err(|e| e.to_string())?;
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
    let mut reply = Reply::table(columns, rows).note(format!(
        "({} of {} matching pages; {:.1} ms)",
        hits.len(),
        table::thousands(matched),
        started.elapsed().as_secs_f64() * 1e3
    ));
    let built = index.built().map_err(|e| e.to_string())?;
    let fetched = store.counters()?.fetched;
    if built.fetched != fetched {
        reply = reply.note(format!(
            "note: the index was built at {} fetches and the db has {} now; the crawl does not update it yet: `reindex search` brings it up to date",
            table::thousands(built.fetched),
            table::thousands(fetched)
        ));
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
        let mut t = TestShell::crawled(4);
        assert!(t.err("search price").contains("reindex search"));
        let all: u64 = t.ok("count pages").trim().parse().unwrap();
        let out = t.ok("reindex search");
        assert!(out.contains(&format!("indexed {all} pages")), "{out}");
        let scan = |t: &mut TestShell, w: &str| {
            urls(&t.ok(&format!(
                "pages where title ~ '{w}' or text ~ '{w}' --format jsonl"
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
    }
}
