//! `page URL [--raw|--text|--noise|--history|--warc]`: a stored page —
//! status, headers, title, text, scores, links out and in; `--raw` prints
//! the body as fetched (decoded to text), `--text` its text (denoised when
//! it was), `--noise` the lines each denoising rule removed, `--history`
//! its visits and past versions, `--warc` where its latest fetch is
//! archived.

use serde_json::json;

use super::{Call, Command, Run, no_detail, page_history, urls};
use crate::filter::denoise::{clean_text, noise_of, removed};
use crate::frontier::order::backlink_importance;
use crate::model::UrlId;
use crate::schema::tables::{Clusters, RankRow, Ranks, Visits, Warc};
use crate::schema::{DocRecord, LinkRecord, PageDoc, PageRecord};
use crate::shell::error::{Result, ShellError};
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "page",
    usage: "page URL [--raw|--text|--noise|--history|--warc]",
    summary: "a stored page: status, headers, title, text, links in and out; --raw prints the body, --text the (denoised) text, --noise what denoising removed, --history its visits and past versions, --warc the WARC file and offset of its record",
    examples: &[
        "page https://example.org/",
        "page https://example.org/ --raw",
        "page https://example.org/ --noise",
        "page https://example.org/ --history",
        "page https://example.org/ --warc",
    ],
    arity: (1, Some(2)),
    subs: &[],
    writes: false,
    complete: urls,
    detail: no_detail,
    run: Run::Data(run),
};

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let (url, view) = match call.args[..] {
        [u] => (u, None),
        [
            u,
            flag @ ("--raw" | "--text" | "--noise" | "--history" | "--warc"),
        ]
        | [
            flag @ ("--raw" | "--text" | "--noise" | "--history" | "--warc"),
            u,
        ] => (u, Some(flag)),
        _ => return Err(ShellError::Usage),
    };
    let u = sh.url_arg(url)?;
    if view == Some("--warc") {
        return warc_view(sh, &u);
    }
    if view == Some("--history") {
        return page_history::history_view(sh, &u);
    }
    if let Some(flag @ ("--text" | "--noise")) = view {
        return text_view(sh, &u, flag == "--noise");
    }
    let raw = view == Some("--raw");
    let page = sh
        .store
        .page(u.id())?
        .ok_or_else(|| format!("{u} has no stored page (why {u} says why)"))?;
    let body = page
        .body()
        .map_err(|e| format!("stored body unreadable: {e}"))?;
    if raw {
        let ct = Some(page.content_type.as_str()).filter(|c| !c.is_empty());
        let text = if crate::parse::is_html(&page.content_type)
            || page.content_type.starts_with("text/")
        {
            crate::parse::decode(&body, ct).text
        } else {
            String::from_utf8_lossy(&body).into_owned()
        };
        return Ok(Reply::record(
            text.clone(),
            json!({ "url": page.url, "body": text }),
        ));
    }
    let doc = sh.store.doc_with_text(u.id())?;
    let outs = sh.links_from(u.id(), 20)?;
    let ins = sh.links_to(u.id(), 20)?;
    let duplicate_of = match doc.as_ref().and_then(|d| d.doc.duplicate_of) {
        Some(dup) => Some(sh.store.url(UrlId(dup))?.unwrap_or_default()),
        None => None,
    };
    let near = match doc.as_ref().and_then(|d| d.doc.near) {
        Some(n) => Some((sh.store.url(UrlId(n.of))?.unwrap_or_default(), n)),
        None => None,
    };
    let mut t = head(&page);
    if let Some(d) = &doc {
        t += &doc_lines(d, duplicate_of.as_deref());
    }
    if let Some((u, n)) = &near {
        let cluster = sh.store.row::<Clusters>(&UrlId(n.cluster))?;
        t += &format!(
            "near dup of   {u} ({} bits apart; cluster of {} pages)\n",
            n.distance,
            cluster.map_or(1, |c| c.pages)
        );
    }
    let visits = sh.store.row::<Visits>(&u.id())?;
    if let Some(v) = &visits {
        t += &page_history::visit_line(v);
    }
    let (lines, scores) = score_lines(sh, u.id())?;
    t += &lines;
    let d = doc.unwrap_or_default();
    t += &tail(&page, &d.doc, &outs, &ins);
    let mut j = page_json(&page, &d, &outs, &ins);
    j["ranking"] = scores;
    j["visits"] = json!(visits.map(|v| json!({
        "visits": v.visits, "changes": v.changes, "last_visit_ms": v.last_ms, "due_ms": v.due_ms,
    })));
    j["simhash"] = json!(d.doc.simhash.map(|h| format!("{h:016x}")));
    j["near_duplicate_of"] = json!(near.map(|(u, n)| json!({"url": u, "distance": n.distance})));
    Ok(Reply::record(t.trim_end().to_string(), j))
}

/// `--warc`: the file, offset and length of the page's latest record.
fn warc_view(sh: &Ctx, u: &crate::model::CanonicalUrl) -> Result<Reply> {
    let Some(row) = sh.store.row::<Warc>(&u.id())? else {
        let why = match sh.store.page(u.id())? {
            Some(_) => {
                "was fetched without warc.dir set (export warc writes a stored crawl as WARC)"
            }
            None => "has no stored page",
        };
        return Err(format!("{u} has no WARC record: it {why}").into());
    };
    let date = crate::model::Utc::of_ms(row.date_ms).iso_millis();
    let mut t = format!(
        "file     {}\noffset   {}\nlength   {}\nrecord   {}\ndate     {date}\ndigest   {}\n",
        row.file,
        row.offset,
        row.length,
        if row.refers_to.is_some() {
            "revisit"
        } else {
            "response"
        },
        row.digest
    );
    if let Some((uri, ms)) = &row.refers_to {
        let when = crate::model::Utc::of_ms(*ms).iso_millis();
        t += &format!("refers   {uri} at {when}\n");
    }
    let j = json!({
        "url": u.as_str(), "file": row.file, "offset": row.offset, "length": row.length,
        "record": if row.refers_to.is_some() { "revisit" } else { "response" },
        "date": date, "digest": row.digest,
        "refers_to": row.refers_to.as_ref().map(|(uri, ms)| json!({"url": uri, "date_ms": ms})),
    });
    Ok(Reply::record(t.trim_end().to_string(), j))
}

/// `--text`: the page's text, denoised when it was; `--noise`: the lines
/// each rule removed.
fn text_view(sh: &Ctx, u: &crate::model::CanonicalUrl, noise: bool) -> Result<Reply> {
    let doc = sh
        .store
        .doc_with_text(u.id())?
        .ok_or_else(|| format!("{u} has no stored text (page {u} shows what is stored)"))?
        .doc;
    let Some(d) = &doc.denoise else {
        if noise {
            return Err(format!(
                "{u} was not denoised (set denoise.enabled true, then refetch it or refilter --denoise)"
            )
            .into());
        }
        return Ok(Reply::record(
            doc.text.clone(),
            json!({"url": u.as_str(), "denoised": false, "text": doc.text}),
        ));
    };
    if noise {
        let removed = removed(&doc.text, noise_of(&d.noise));
        let text = removed
            .iter()
            .map(|(rule, line)| format!("{:<10}  {line}", rule.name()))
            .collect::<Vec<_>>()
            .join("\n");
        let json: Vec<_> = removed
            .iter()
            .map(|(rule, line)| json!({"rule": rule.name(), "removed": line}))
            .collect();
        let text = if text.is_empty() {
            "denoising removed nothing".to_string()
        } else {
            text
        };
        return Ok(Reply::record(
            text,
            json!({"url": u.as_str(), "noise": json}),
        ));
    }
    let clean = clean_text(&doc.text, noise_of(&d.noise));
    Ok(Reply::record(
        clean.clone(),
        json!({"url": u.as_str(), "denoised": true, "title": d.title, "author": d.author, "date": d.date, "text": clean}),
    ))
}

/// Its PageRank as last stored, and the frontier scores it was queued with.
fn score_lines(sh: &Ctx, id: UrlId) -> Result<(String, serde_json::Value)> {
    let mut t = String::new();
    let rank = sh.store.row::<Ranks>(&id)?;
    let run = sh.store.meta::<RankRow>()?;
    if let (Some(r), Some(run)) = (&rank, &run) {
        t += &format!(
            "pagerank      {:.4e} ({:.2} × the mean; rank pagerank of {})\n",
            r.pagerank,
            r.pagerank * run.nodes as f64,
            table::time(run.computed_ms)
        );
    }
    let scores = sh.store.seen(id)?.and_then(|s| s.scores);
    if let Some(s) = &scores {
        t += &format!(
            "queued with   inherited {:.4}, anchor {:.4}, IB {:.4}, IL {:.4}, model {:.4}\n",
            s.inherited,
            s.anchor,
            backlink_importance(s.backlinks),
            s.url_shape,
            s.model
        );
    }
    let j = json!({"pagerank": rank.map(|r| r.pagerank), "scores": scores});
    Ok((t, j))
}

/// URL, status, fetch, type, size and redirect.
fn head(page: &PageRecord) -> String {
    let mut t = format!(
        "url           {}\nstatus        {} {}\n",
        page.url, page.status, page.http_version
    );
    t += &format!(
        "fetched       {} in {} ms, depth {}\n",
        table::time(page.fetched_ms),
        page.elapsed_ms,
        page.depth
    );
    let cut = if page.truncated {
        " (truncated at the cap)"
    } else {
        ""
    };
    t += &format!(
        "type          {}\nsize          {}{cut}\n",
        page.content_type,
        table::bytes(page.body_len),
    );
    if let Some(r) = &page.redirect_to {
        t += &format!("redirects to  {r}\n");
    }
    t
}

/// What parsing and the filters made of it.
fn doc_lines(pd: &PageDoc, duplicate_of: Option<&str>) -> String {
    let (d, v) = (&pd.doc, &pd.verdict);
    let mut t = format!(
        "title         {}\ncharset       {} (from {})\n",
        d.title, d.charset, d.charset_source
    );
    if let Some(c) = &d.canonical {
        t += &format!("canonical     {c}\n");
    }
    if let Some(dup) = duplicate_of {
        t += &format!("duplicate of  {dup}\n");
    }
    if let Some(h) = d.simhash {
        t += &format!("simhash       {h:016x}\n");
    }
    let detail = if v.verdict_detail.is_empty() {
        String::new()
    } else {
        format!(" ({})", v.verdict_detail)
    };
    t += &format!("verdict       {}{detail}\n", v.verdict.name());
    if let Some(ts) = v.topic_score {
        t += &format!("topic score   {ts:.4}\n");
    }
    if let Some(r) = v.relevance {
        t += &format!("relevance     {r:.4}\n");
    }
    if let Some(dn) = &d.denoise {
        t += &format!("denoised      title {:?}", dn.title);
        if let Some(a) = &dn.author {
            t += &format!(", author {a:?}");
        }
        if let Some(date) = &dn.date {
            t += &format!(", date {date}");
        }
        t += &format!(", {} noise lines (page URL --noise)\n", dn.noise.len());
    }
    if d.noindex || d.nofollow {
        t += &format!(
            "meta robots   {}{}\n",
            if d.noindex { "noindex " } else { "" },
            if d.nofollow { "nofollow" } else { "" }
        );
    }
    t
}

/// Headers, a text excerpt and the links.
fn tail(page: &PageRecord, d: &DocRecord, outs: &[(String, LinkRecord)], ins: &[String]) -> String {
    let mut t = String::from("headers:\n");
    for (k, v) in &page.headers {
        t += &format!("  {k}: {v}\n");
    }
    let excerpt: String = d.text.chars().take(400).collect();
    if !excerpt.is_empty() {
        t += &format!("text:\n  {}\n", excerpt.replace('\n', "\n  "));
    }
    t += &format!("out-links ({}):\n", d.outlinks);
    for (url, l) in outs {
        t += &format!(
            "  {url}  [{}] {} {}\n",
            l.anchor,
            type_name(l),
            l.verdict.name()
        );
    }
    t += &format!("in-links (first {}):\n", ins.len());
    for url in ins {
        t += &format!("  {url}\n");
    }
    t
}

/// A link's type as the shell shows it ("" when not recorded).
pub fn type_name(l: &LinkRecord) -> &'static str {
    super::links::link_type_name(l.link_type)
}

/// One out-link as JSON (shared with `links from`).
pub fn link_json(url: &str, l: &LinkRecord) -> serde_json::Value {
    let row = super::links::link_row(url, l);
    serde_json::Value::Object(crate::shell::render::object(
        &super::links::link_columns(),
        &row,
    ))
}

fn page_json(
    page: &PageRecord,
    pd: &PageDoc,
    outs: &[(String, LinkRecord)],
    ins: &[String],
) -> serde_json::Value {
    let (d, v) = (&pd.doc, &pd.verdict);
    json!({
        "url": page.url, "status": page.status, "http_version": page.http_version, "fetched_at": page.fetched_ms,
        "depth": page.depth, "content_type": page.content_type, "size": page.body_len, "truncated": page.truncated,
        "redirect_to": page.redirect_to, "headers": page.headers, "title": d.title, "charset": d.charset,
        "text": d.text, "canonical": d.canonical, "noindex": d.noindex, "nofollow": d.nofollow,
        "verdict": v.verdict.name(), "verdict_detail": v.verdict_detail, "topic_score": v.topic_score, "relevance": v.relevance,
        "duplicate_of": d.duplicate_of.map(|x| format!("{:032x}", x)),
        "denoised": d.denoise.as_ref().map(|dn| json!({"title": dn.title, "author": dn.author, "date": dn.date, "noise_lines": dn.noise.len()})),
        "outlinks": d.outlinks, "links_out": outs.iter().map(|(u, l)| link_json(u, l)).collect::<Vec<_>>(),
        "links_in": ins,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn shows_a_page_and_its_raw_body() {
        let mut t = TestShell::crawled(2);
        let seed = t.seed();
        let out = t.ok(&format!("page {seed}"));
        assert!(
            out.starts_with(&format!("url           {seed}\nstatus        200")),
            "{out}"
        );
        assert!(out.contains("out-links ("), "{out}");
        assert!(t.ok(&format!("page {seed} --raw")).contains("<html"));
        let gone = format!("{seed}nosuch");
        assert!(
            t.err(&format!("page {gone}"))
                .contains("has no stored page")
        );
    }
}
