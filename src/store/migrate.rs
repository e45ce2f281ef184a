//! Old formats in one place: when a db of an older schema version is
//! opened for writing, one step per version brings it to the current one.
//! Each step is recorded in `meta` (`migration:` ‖ version) and the schema
//! version is stamped after it, in its last batch, so a step a crash cuts
//! short runs again at the next open (every step is idempotent).
//!
//! Cheap conversions rewrite their rows here. What would rewrite the blob
//! files — link rows (schema 4, 5 and 7 layouts) and docs — keeps its old
//! layout, and `schema`'s decoders and `store::links`' views read it as
//! the current shape.

use std::time::Instant;

use super::{Batch, Result, Store, StoreError};
use crate::model::SeenState;
use crate::model::{HostId, now_ms};
use crate::schema::{
    CF_DOCS, CF_FRONTIER, CF_HOSTS, CF_META, CF_PAGES, CF_ROBOTS, CF_SEEN, CF_VERDICTS, DocView,
    FrontierKey, HostRecord, MigrationRecord, PageFactsRecord, PageRecord, SCHEMA_VERSION,
    VerdictRecord, Versioned, meta_keys,
};

/// One schema version's conversion.
struct Step {
    /// The version it brings the db to.
    to: u32,
    what: &'static str,
    /// Converts; returns the rows written and the rows it could not read
    /// (left as they are, and counted so the user hears of them). None:
    /// the version only added column families or appended fields.
    run: Option<fn(&Store) -> Result<Converted>>,
}

/// Every step, oldest first. Versions that only added column families or
/// appended fields need no rows rewritten.
static STEPS: &[Step] = &[
    Step {
        to: 2,
        what: "page verdicts copied from docs into the verdicts column family",
        run: Some(verdicts_out_of_docs),
    },
    Step {
        to: 3,
        what: "page index filled from pages",
        run: Some(fill_page_index),
    },
    Step {
        to: 4,
        what: "none (link records gained the target's URL; older ones read as they are)",
        run: None,
    },
    Step {
        to: 5,
        what: "none (one links row per page; older per-link rows read as they are)",
        run: None,
    },
    Step {
        to: 6,
        what: "robots.txt records moved out of host rows into the robots column family",
        run: Some(robots_out_of_hosts),
    },
    Step {
        to: 7,
        what: "none (new column families; appended fields read as defaults)",
        run: None,
    },
    Step {
        to: 8,
        what: "page verdicts rewritten with one-byte tags",
        run: Some(verdict_tags),
    },
    Step {
        to: 9,
        what: "none (new pages keep their text in the page frame; older docs keep theirs)",
        run: None,
    },
    Step {
        to: 10,
        what: "none (new page frames may use a zstd dictionary kept in meta; older frames have none)",
        run: None,
    },
    Step {
        to: 11,
        what: "none (new links rows leave out the targets' ids; older rows keep them)",
        run: None,
    },
    Step {
        to: 12,
        what: "none (frontier rows and host rows gain appended fields read as defaults: a version 1 frontier row was keyed breadth-first)",
        run: None,
    },
    Step {
        to: 13,
        what: "queued URLs' seen rows given their frontier priority",
        run: Some(seen_priorities),
    },
    Step {
        to: 14,
        what: "none (frontier and seen rows gain the learned order's score and link, read as none in older rows)",
        run: None,
    },
    Step {
        to: 15,
        what: "none (docs gain what denoising found, read as none in older rows)",
        run: None,
    },
    Step {
        to: 16,
        what: "none (docs gain a simhash and their nearest near-duplicate, read as none in older rows; new column families simhash and clusters)",
        run: None,
    },
    Step {
        to: 17,
        what: "none (new column family sites, the seed library; link limits gain the sites' depths, read as none in older rows)",
        run: None,
    },
    Step {
        to: 18,
        what: "none (seed site records gain a decision and a probe for co-link discovery, read as none in older rows)",
        run: None,
    },
    Step {
        to: 19,
        what: "none (new column families sitemaps and lastmods)",
        run: None,
    },
    Step {
        to: 20,
        what: "none (new column families visits and due for revisits; frontier rows gain a revisit's validators and the counters four revisit counts, read as none and 0 in older rows)",
        run: None,
    },
    Step {
        to: 21,
        what: "none (a failure reason too-slow for tarpits; a seed-site decision accepted with --allow-private; visits rows gain a text hash, a stored change rate and what decided the last revisit, meta/recrawl a retiming's progress, read as none in older rows; new column family cluster_sites for the per-site cluster budget; simhash rows gain their placing order, read as the oldest in older rows)",
        run: None,
    },
    Step {
        to: 22,
        what: "none (new column family capped: pages whose links past a cap were dropped; the counters gain links_cut, read as 0 in older values)",
        run: None,
    },
    Step {
        to: 23,
        what: "none (in-links are written by window as group rows beside the pair rows, which are read as they are; new column family inlink_pages)",
        run: None,
    },
    Step {
        to: 24,
        what: "none (new column family warc: where each page's latest fetch is archived)",
        run: None,
    },
    Step {
        to: 25,
        what: "page facts (the record without its body) filled from pages",
        run: Some(page_facts),
    },
    Step {
        to: 26,
        what: "none (new column family search_log: pages whose search document changed, for the search index beside the db; the counters gain search_seq, read as 0 in older values; an index built before is rebuilt by the next crawl or `reindex search`)",
        run: None,
    },
];

/// What a step did.
#[derive(Default)]
struct Converted {
    rows: u64,
    unreadable: u64,
}

/// Rows written per batch.
const CHUNK: usize = 4096;

/// Runs the steps from version `found` to the current one. Returns a line
/// per step that wrote rows, for the user.
pub(super) fn migrate(store: &Store, found: u32) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    // A step over a large db takes a while: on a terminal, say which runs.
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    for step in STEPS.iter().filter(|s| s.to > found) {
        let started = Instant::now();
        if tty && step.run.is_some() {
            eprint!(
                "\r\x1b[Ktrawl: converting the db to schema {}: {}…",
                step.to, step.what
            );
        }
        let Converted { rows, unreadable } = match step.run {
            Some(run) => run(store)?,
            None => Converted::default(),
        };
        if tty {
            eprint!("\r\x1b[K");
        }
        let rec = MigrationRecord {
            to: step.to,
            what: step.what.to_string(),
            rows,
            at_ms: now_ms(),
            elapsed_ms: started.elapsed().as_millis() as u64,
        };
        let mut b = store.batch();
        b.put(CF_META, &meta_keys::migration(step.to), &rec);
        b.put_raw(CF_META, meta_keys::SCHEMA_VERSION, &step.to.to_be_bytes());
        b.write()?;
        if rows > 0 || unreadable > 0 {
            let skipped = if unreadable > 0 {
                format!("; {unreadable} unreadable rows left as they are")
            } else {
                String::new()
            };
            notes.push(format!(
                "schema {} → {}: {} ({rows} rows, {:.1} s{skipped})",
                step.to - 1,
                step.to,
                step.what,
                started.elapsed().as_secs_f64()
            ));
        }
    }
    debug_assert!(STEPS.last().is_some_and(|s| s.to == SCHEMA_VERSION));
    Ok(notes)
}

/// What a conversion made of one row.
enum Row {
    Rewritten,
    Left,
    Unreadable,
}

/// Walks every row of `cf`, letting `convert` write the row's new form
/// into the batch; writes in batches of [`CHUNK`] rows.
fn rewrite(
    store: &Store,
    cf: &'static str,
    mut convert: impl FnMut(&mut Batch<'_>, &[u8], &[u8]) -> Result<Row>,
) -> Result<Converted> {
    let mut b = store.batch();
    let mut c = Converted::default();
    for row in store.scan(cf, &[]) {
        let (k, v) = row?;
        match convert(&mut b, &k, &v)? {
            Row::Rewritten => c.rows += 1,
            Row::Left => continue,
            Row::Unreadable => {
                c.unreadable += 1;
                continue;
            }
        }
        if c.rows.is_multiple_of(CHUNK as u64) {
            std::mem::replace(&mut b, store.batch()).write()?;
        }
    }
    b.write()?;
    Ok(c)
}

/// Schema 1 kept a page's verdict in its doc: each doc that carries one
/// and has no `verdicts` row gets one.
fn verdicts_out_of_docs(store: &Store) -> Result<Converted> {
    rewrite(store, CF_DOCS, |b, k, v| {
        let Ok(doc) = DocView::decode(v) else {
            return Ok(Row::Unreadable);
        };
        match doc.legacy_verdict {
            Some(verdict) if store.get_raw(CF_VERDICTS, k)?.is_none() => {
                b.put(CF_VERDICTS, k, &verdict);
                Ok(Row::Rewritten)
            }
            _ => Ok(Row::Left),
        }
    })
}

/// Schema 3 added `page_index`: filled once, unless it is complete.
fn fill_page_index(store: &Store) -> Result<Converted> {
    if store.page_index_complete()? {
        return Ok(Converted::default());
    }
    let (rows, _) = store.reindex_pages(&mut |_| true)?;
    Ok(Converted {
        rows,
        unreadable: 0,
    })
}

/// Schema 6 moved a host's robots.txt record (up to 500 KiB, rewritten
/// with every page of the host) into its own column family.
fn robots_out_of_hosts(store: &Store) -> Result<Converted> {
    rewrite(store, CF_HOSTS, |b, k, v| {
        let (Some(_), Ok(mut host)) = (HostId::from_slice(k), HostRecord::decode(v)) else {
            return Ok(Row::Unreadable);
        };
        let Some(robots) = host.robots.take() else {
            return Ok(Row::Left);
        };
        b.put(CF_ROBOTS, k, &robots);
        b.put(CF_HOSTS, k, &host);
        Ok(Row::Rewritten)
    })
}

/// Schema 8 stores a page's verdict as a tag: version 1 `verdicts` rows
/// (a name) are rewritten (a few bytes each).
fn verdict_tags(store: &Store) -> Result<Converted> {
    rewrite(store, CF_VERDICTS, |b, k, v| {
        if v.first() != Some(&1) {
            return Ok(Row::Left);
        }
        let Ok(rec) = VerdictRecord::decode(v) else {
            return Ok(Row::Unreadable);
        };
        b.put(CF_VERDICTS, k, &rec);
        Ok(Row::Rewritten)
    })
}

/// Schema 13's `seen` rows name a queued URL's frontier key (so a new
/// in-link can find the row): each queued row's `seen` row gets it.
fn seen_priorities(store: &Store) -> Result<Converted> {
    rewrite(store, CF_FRONTIER, |b, k, _| {
        let Some(key) = FrontierKey::from_key(k) else {
            return Ok(Row::Unreadable);
        };
        let mut seen = match store.seen(key.url) {
            Ok(Some(seen)) => seen,
            Ok(None) | Err(StoreError::Codec { .. }) => return Ok(Row::Unreadable),
            Err(e) => return Err(e),
        };
        if seen.state != SeenState::Queued || seen.priority == Some(key.priority) {
            return Ok(Row::Left);
        }
        seen.priority = Some(key.priority);
        b.put(CF_SEEN, &key.url.to_bytes(), &seen);
        Ok(Row::Rewritten)
    })
}

/// Schema 25 keeps each page's record without its body in `page_facts`:
/// one pass over the page records writes it (rewriting a row a crash
/// left written is harmless).
fn page_facts(store: &Store) -> Result<Converted> {
    rewrite(store, CF_PAGES, |b, k, v| {
        let (Some(id), Ok(page)) = (crate::model::UrlId::from_slice(k), PageRecord::decode(v))
        else {
            return Ok(Row::Unreadable);
        };
        b.put_row::<crate::schema::tables::PageFacts>(&id, &PageFactsRecord::of(&page));
        Ok(Row::Rewritten)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_per_version_in_order() {
        for (i, s) in STEPS.iter().enumerate() {
            assert_eq!(s.to, i as u32 + 2, "{}", s.what);
        }
        assert_eq!(STEPS.last().map(|s| s.to), Some(SCHEMA_VERSION));
    }
}
