//! `page URL --history`: a page's visits under `recrawl` and its versions
//! (the stored one, and those revisits found replaced), and the `visits`
//! line of `page URL` and `why URL`.

use serde_json::json;

use crate::crawl::revisit::rate_of;
use crate::model::CanonicalUrl;
use crate::schema::Compared;
use crate::schema::tables::Visits;
use crate::schema::{PastVersion, VisitRecord};
use crate::shell::Ctx;
use crate::shell::error::Result;
use crate::shell::reply::Reply;
use crate::shell::table;

const DAY_MS: f64 = 86_400_000.0;

/// `page`'s line of a page's visits.
pub fn visit_line(v: &VisitRecord) -> String {
    format!("visits        {}\n", visit_summary(v))
}

/// Visits, changes, estimated rate and the next revisit.
pub fn visit_summary(v: &VisitRecord) -> String {
    let rate = match rate_of(v) {
        Some(r) => format!("change rate ≈ {:.3}/day", r * DAY_MS),
        None if !v.recent.is_empty() => "no change seen".to_string(),
        None => "not revisited yet".to_string(),
    };
    let next = match (v.queued, v.due_ms) {
        (true, _) => "queued for a revisit now".to_string(),
        (false, 0) => "no revisit due (recrawl off)".to_string(),
        (false, at) => format!("due {}", table::time(at)),
    };
    let missed = match v.failures {
        0 => String::new(),
        n => format!(", {n} missed (last: {})", v.last_error),
    };
    format!(
        "{} ({} found it changed{missed}), last {}{}; {rate}; {next}",
        v.visits,
        v.changes,
        table::time(v.last_ms),
        last_comparison(v)
    )
}

/// What the last revisit with a response found, and by what.
fn last_comparison(v: &VisitRecord) -> String {
    let changed = v.recent.last().is_some_and(|i| i.changed);
    let by = match (v.compared, changed) {
        (Compared::Nothing, _) => return String::new(),
        (Compared::NotModified, _) => "answered 304 Not Modified",
        (Compared::Status, _) => "another status or redirect",
        (Compared::Md5, true) => "another body (MD5; no text hash stored to compare)",
        (Compared::Md5, false) => "the same body (MD5)",
        (Compared::Text, true) => "another title or text (text hash)",
        (Compared::Text, false) => "the same title and text (text hash), the body differing",
        (Compared::Simhash, _) => "a text within dedup.distance of the stored one (simhash)",
    };
    let found = if changed { "changed" } else { "unchanged" };
    format!(" ({found}: {by})")
}

/// `--history`: the visits line, then each version, oldest first.
pub fn history_view(sh: &Ctx, u: &CanonicalUrl) -> Result<Reply> {
    let page = sh
        .store
        .page(u.id())?
        .ok_or_else(|| format!("{u} has no stored page (why {u} says why)"))?;
    let Some(v) = sh.store.row::<Visits>(&u.id())? else {
        return Err(format!(
            "{u} has no visits recorded: revisits were off when it was fetched (recrawl uniform EVERY or recrawl change-rate turns them on)"
        )
        .into());
    };
    let mut t = format!("url           {u}\n{}", visit_line(&v));
    t += "versions      oldest first: fetched, replaced, status, md5\n";
    for p in &v.history {
        t += &version_line(p, &table::time(p.replaced_ms));
    }
    let stored = PastVersion {
        md5: page.md5,
        status: page.status,
        fetched_ms: page.fetched_ms,
        replaced_ms: 0,
    };
    t += &version_line(&stored, "(stored)");
    let version = |p: &PastVersion| {
        json!({
            "md5": hex(&p.md5), "status": p.status,
            "fetched_at": p.fetched_ms, "replaced_ms": p.replaced_ms,
        })
    };
    let j = json!({
        "url": u.as_str(), "visits": v.visits, "changes": v.changes, "missed": v.failures,
        "last_visit_ms": v.last_ms, "due_ms": v.due_ms, "queued": v.queued,
        "change_rate_per_day": rate_of(&v).map(|r| r * DAY_MS),
        "history": v.history.iter().map(version).collect::<Vec<_>>(),
        "stored": version(&stored),
    });
    Ok(Reply::record(t.trim_end().to_string(), j))
}

fn version_line(p: &PastVersion, until: &str) -> String {
    format!(
        "  {} → {until}  {}  {}\n",
        table::time(p.fetched_ms),
        p.status,
        hex(&p.md5)
    )
}

fn hex(md5: &[u8; 16]) -> String {
    md5.iter().map(|b| format!("{b:02x}")).collect()
}
