//! Which `page_index` rows can answer a `pages where` filter: a top-level
//! `and` term `status OP N` or `host = "…"` bounds the candidates to one key
//! range. The query still evaluates the whole filter on every candidate.

use super::expr::{Expr, Lit, Op};
use super::fields::{self, Index};
use crate::schema::page_index;

/// The `page_index` rows holding every page the filter can match.
#[derive(Debug, PartialEq)]
pub enum IndexScan {
    /// Keys starting with this prefix.
    Prefix(Vec<u8>),
    /// Keys `from <= key < to`.
    Range(Vec<u8>, Vec<u8>),
    /// The pages a search of the full-text index found, by id (sorted).
    Pages(Vec<crate::model::UrlId>),
}

/// The narrowest index scan found in the filter's `and` terms, if any.
pub fn index_scan(e: &Expr) -> Option<IndexScan> {
    match e {
        // Host equality picks one host; prefer it to a status range.
        Expr::And(a, b) => match (index_scan(a), index_scan(b)) {
            (Some(p @ IndexScan::Prefix(_)), _) | (_, Some(p @ IndexScan::Prefix(_))) => Some(p),
            (a, b) => a.or(b),
        },
        Expr::Cmp { field, op, lit } => match (index_of(field)?, op, lit) {
            (Index::Host, Op::Eq, Lit::Str(h)) => {
                Some(IndexScan::Prefix(page_index::host_prefix(h)))
            }
            (Index::Status, op, Lit::Num(n)) if n.is_finite() => status_range(*op, *n),
            _ => None,
        },
        _ => None,
    }
}

/// The index that can answer terms on `field`, from the fields table.
fn index_of(field: &str) -> Option<Index> {
    fields::find(field)?.index
}

/// The statuses `status OP n` can match, as one key range.
fn status_range(op: Op, n: f64) -> Option<IndexScan> {
    // Statuses with lo <= s < hi, in u32 so the bounds cannot wrap.
    let clamp = |x: f64| x.clamp(0.0, 65_536.0) as u32;
    let (lo, hi) = match op {
        Op::Eq if n.fract() == 0.0 => (clamp(n), clamp(n + 1.0)),
        Op::Eq => (0, 0),
        Op::Ge => (clamp(n.ceil()), 65_536),
        Op::Gt => (clamp(n.floor() + 1.0), 65_536),
        Op::Le => (0, clamp(n.floor() + 1.0)),
        Op::Lt => (0, clamp(n.ceil())),
        Op::Ne | Op::Contains => return None,
    };
    let (from, to) = page_index::status_range(lo, hi);
    Some(IndexScan::Range(from, to))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::expr::parse_query;

    fn scan(src: &str) -> Option<IndexScan> {
        index_scan(&parse_query(src, 0).unwrap().filter)
    }

    #[test]
    fn status_terms_become_key_ranges() {
        let r = |lo, hi| {
            let (f, t) = page_index::status_range(lo, hi);
            Some(IndexScan::Range(f, t))
        };
        assert_eq!(scan("where status = 404"), r(404, 405));
        assert_eq!(scan("where status >= 400 and depth < 3"), r(400, 65_536));
        assert_eq!(scan("where status > 399.5"), r(400, 65_536));
        assert_eq!(scan("where status < 300"), r(0, 300));
        assert_eq!(scan("where status <= 299"), r(0, 300));
        assert_eq!(scan("where status = 200.5"), r(0, 0));
        assert_eq!(scan("where status != 200"), None);
        assert_eq!(scan("where status = 404 or depth = 1"), None);
        assert_eq!(scan("where not status = 404"), None);
        assert_eq!(scan("where title ~ 'x'"), None);
    }

    #[test]
    fn host_equality_is_preferred() {
        let host = Some(IndexScan::Prefix(page_index::host_prefix("a.example")));
        assert_eq!(scan("where host = 'a.example'"), host);
        assert_eq!(scan("where status >= 200 and host = 'a.example'"), host);
        assert_eq!(scan("where host ~ 'a.example'"), None);
    }
}
