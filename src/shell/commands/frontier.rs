//! `frontier [top N | host HOST]`: what is queued, in the order the
//! frontier will hand it out, with each URL's scores; and a queued URL's
//! place for `why`.

use std::collections::{BinaryHeap, HashMap};

use serde_json::json;

use super::{Call, Command, Known, Run, Sub, no_detail};
use crate::frontier::OrderSettings;
use crate::frontier::order::{backlink_importance, scores_of};
use crate::model::{CanonicalUrl, HostId};
use crate::schema::tables::{Frontier, Hosts, OrderRow};
use crate::schema::{FrontierEntry, FrontierKey, FrontierScores};
use crate::shell::error::{Result, ShellError, bail};
use crate::shell::lookup::parse_n;
use crate::shell::lookup::unreadable;
use crate::shell::render::object;
use crate::shell::reply::{Kind, Reply, columns};
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "frontier",
    usage: "frontier | frontier top N | frontier host HOST",
    summary: "what is queued",
    examples: &["frontier", "frontier top 20", "frontier host example.org"],
    arity: (0, Some(2)),
    subs: &[
        Sub {
            words: "top",
            writes: false,
        },
        Sub {
            words: "host",
            writes: false,
        },
    ],
    writes: false,
    complete,
    detail: no_detail,
    run: Run::Data(run),
};

fn complete(known: &Known, args: &[&str]) -> Vec<String> {
    match args {
        ["host"] => known.hosts.clone(),
        _ => Vec::new(),
    }
}

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let (rows, stale, title) = match call.args[..] {
        [] => {
            let q = match &sh.crawl {
                Some(r) => r.handle.snapshot().counters.queued,
                None => sh.store.counters()?.queued,
            };
            return Ok(Reply::record(
                format!("{} URLs queued", table::thousands(q)),
                json!({ "queued": q }),
            ));
        }
        ["top", n] => {
            let (rows, stale) = sh.next_in_frontier(parse_n(n)?)?;
            (rows, stale, "next in the frontier")
        }
        ["host", host] => {
            let (id, _) = sh.resolve_host(host)?;
            (sh.host_queue(id, 50)?, 0, "queued for the host")
        }
        _ => return Err(ShellError::Usage),
    };
    let order = &sh.settings.order;
    let rows: Vec<_> = rows.iter().map(|r| r.values(order)).collect();
    let mut reply = Reply::table(columns(&COLUMNS), rows.clone());
    reply = match rows.is_empty() {
        true => reply.note(format!("nothing {title}")),
        false => reply.note(format!(
            "{title}, by {} (the order within each host){}",
            order.order.name(),
            if order.order.by_score() {
                ""
            } else {
                "; across hosts the politeness time decides"
            }
        )),
    };
    if stale > 0 {
        reply = reply.note(format!(
            "({stale} host{} not re-keyed to the order yet: shown by the scores they were queued with)",
            if stale == 1 { "" } else { "s" }
        ));
    }
    Ok(reply)
}

/// The columns of a queued URL: its score under the order set now, the
/// scores it was queued with (named as `pages where` names them).
const COLUMNS: [(&str, Kind); 10] = [
    ("score", Kind::Num),
    ("inherited", Kind::Num),
    ("anchor_score", Kind::Num),
    ("ib", Kind::Num),
    ("il", Kind::Num),
    ("model", Kind::Num),
    ("depth", Kind::Int),
    ("attempts", Kind::Int),
    ("tunnel", Kind::Bool),
    ("url", Kind::Text),
];

/// A queued URL with its scores and its priority under the shell's order.
pub(super) struct Ranked {
    pub key: FrontierKey,
    pub entry: FrontierEntry,
    pub scores: FrontierScores,
    /// Its priority under the order set now (lowest first).
    pub priority: u64,
}

impl Ranked {
    fn of(order: &OrderSettings, key: FrontierKey, entry: FrontierEntry) -> Ranked {
        let scores = scores_of(&key, &entry);
        Ranked {
            priority: order.priority(entry.depth, &scores),
            key,
            entry,
            scores,
        }
    }

    /// Its score under the order and the five it was queued with, as
    /// `why` writes them.
    fn cells(&self, order: &OrderSettings) -> [String; 6] {
        let s = &self.scores;
        let score = match order.order.by_score() {
            true => format!("{:.4}", order.score(s)),
            false => "-".into(),
        };
        [
            score,
            format!("{:.4}", s.inherited),
            format!("{:.4}", s.anchor),
            format!("{:.4}", backlink_importance(s.backlinks)),
            format!("{:.4}", s.url_shape),
            format!("{:.4}", s.model),
        ]
    }

    /// Its row under [`COLUMNS`].
    fn values(&self, order: &OrderSettings) -> Vec<serde_json::Value> {
        let s = &self.scores;
        vec![
            json!(order.order.by_score().then(|| order.score(s))),
            json!(s.inherited),
            json!(s.anchor),
            json!(backlink_importance(s.backlinks)),
            json!(s.url_shape),
            json!(s.model),
            json!(self.entry.depth),
            json!(self.entry.attempts),
            json!(s.tunnel),
            json!(self.entry.url),
        ]
    }

    pub(super) fn json(&self, order: &OrderSettings) -> serde_json::Value {
        serde_json::Value::Object(object(&columns(&COLUMNS), &self.values(order)))
    }
}

/// URLs counted ahead of one in its host's queue before `why` stops counting.
const AHEAD_CAP: u64 = 100_000;

impl Ctx {
    /// The `n` best queued URLs across hosts: each host's first `n` rows,
    /// merged by their priority under the order set now; and how many
    /// hosts are still keyed in an older order.
    fn next_in_frontier(&mut self, n: usize) -> Result<(Vec<Ranked>, u64)> {
        let stored = self.store.meta::<OrderRow>()?.unwrap_or_default();
        // Keys follow the shell's order only if the crawl last keyed them
        // in it (a `set` while no crawl runs re-keys nothing yet).
        let same_order = stored
            .fingerprint
            .starts_with(&self.settings.order.fingerprint());
        // The n best so far, the worst on top.
        let mut best: BinaryHeap<(u64, FrontierKey)> = BinaryHeap::new();
        let mut rows: HashMap<FrontierKey, Ranked> = HashMap::new();
        let mut stale = 0;
        let store = self.store.clone();
        let order = self.settings.order.clone();
        let mut hosts = store.rows::<Hosts>(&[]);
        for (i, host) in hosts.by_ref().enumerate() {
            if i % 1024 == 1023 {
                self.progress(&format!(
                    "frontier: {} hosts read",
                    table::thousands(i as u64 + 1)
                ));
                if self.interrupted() {
                    self.progress_done();
                    bail!("interrupted");
                }
            }
            let (id, h) = host?;
            if h.queued == 0 {
                continue;
            }
            let fresh = same_order && h.order_gen == stored.generation;
            stale += u64::from(!fresh);
            // Read lazily: a host keyed in the order stops at its first
            // row that cannot make the list.
            let mut queue = store.rows::<Frontier>(&id.to_bytes());
            for row in queue.by_ref().take(n) {
                let (k, e) = row?;
                let r = Ranked::of(&order, k, e);
                let worse =
                    best.len() == n && best.peek().is_some_and(|w| (r.priority, r.key) >= *w);
                // A host keyed in the order lists its best first: the
                // rest are worse still.
                if worse && fresh {
                    break;
                } else if worse {
                    continue;
                }
                best.push((r.priority, r.key));
                rows.insert(r.key, r);
                if best.len() > n
                    && let Some((_, worst)) = best.pop()
                {
                    rows.remove(&worst);
                }
            }
            unreadable(queue.unreadable());
        }
        self.progress_done();
        unreadable(hosts.unreadable());
        let mut out: Vec<Ranked> = best
            .into_sorted_vec()
            .into_iter()
            .filter_map(|(_, k)| rows.remove(&k))
            .collect();
        out.truncate(n);
        Ok((out, stale))
    }

    /// The first `n` rows of host `id`'s queue, in key order.
    fn host_queue(&self, id: HostId, n: usize) -> Result<Vec<Ranked>> {
        let order = &self.settings.order;
        let mut out = Vec::new();
        let mut rows = self.store.rows::<Frontier>(&id.to_bytes());
        for row in rows.by_ref().take(n) {
            let (k, e) = row?;
            out.push(Ranked::of(order, k, e));
        }
        unreadable(rows.unreadable());
        Ok(out)
    }

    /// Where a queued URL (its `seen` row says at which priority) waits:
    /// its scores and the URLs of its host ahead of it. None when its row
    /// is not where the `seen` row says (a db from before schema 13 that
    /// did not migrate, or the row moved since).
    pub(super) fn queue_place(
        &self,
        u: &CanonicalUrl,
        priority: Option<u64>,
    ) -> Result<Option<(String, serde_json::Value)>> {
        let Some(priority) = priority else {
            return Ok(None);
        };
        let key = FrontierKey {
            host: u.host_id(),
            priority,
            url: u.id(),
        };
        let Some(entry) = self.store.row::<Frontier>(&key)? else {
            return Ok(None);
        };
        let order = &self.settings.order;
        let r = Ranked::of(order, key, entry);
        let mut ahead = 0u64;
        for row in self.store.rows::<Frontier>(&key.host.to_bytes()) {
            if row?.0 >= key || ahead == AHEAD_CAP {
                break;
            }
            ahead += 1;
        }
        let ahead_text = match ahead {
            AHEAD_CAP => format!("more than {}", table::thousands(AHEAD_CAP)),
            n => table::thousands(n),
        };
        let c = r.cells(order);
        let score = match order.order.by_score() {
            true => format!("score {} under {}", c[0], order.order.name()),
            false => format!("taken {} by depth then discovery", order.order.name()),
        };
        let t = format!(
            "; {ahead_text} URLs of its host ahead of it; {score} (inherited {}, anchor {}, IB {}, IL {}, model {}){}",
            c[1],
            c[2],
            c[3],
            c[4],
            c[5],
            if r.scores.tunnel {
                ", behind the rest: found on a page the filters dropped (soft focus)"
            } else {
                ""
            }
        );
        let mut j = r.json(order);
        j["ahead_in_host"] = json!(ahead);
        Ok(Some((t, j)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_shell::TestShell;

    #[test]
    fn an_empty_frontier_and_an_unknown_host() {
        let mut t = TestShell::new();
        assert_eq!(t.ok("frontier").trim(), "0 URLs queued");
        assert_eq!(
            t.ok("frontier top 5").trim(),
            "nothing next in the frontier"
        );
        assert!(t.err("frontier top 0").contains("not a positive number"));
        assert!(
            t.err("frontier host nosuch.org")
                .contains("is not in the db")
        );
    }
}
