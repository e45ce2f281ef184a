//! `text ~ 'p'` and `title ~ 'p'` answered from the index: the terms of the
//! words fields every text holding `p` (ignoring case) must have, as a
//! query whose hits are a superset of the pages that hold it; the caller
//! checks each hit as the scan does. The words fields hold a page's
//! tokens folded ([`fold`]), unstemmed, so each run of letters and digits
//! in `p` is a whole token, or a prefix, a suffix or a part of one,
//! according to what stands beside it in `p`; each run of Chinese,
//! Japanese or Korean characters is a series of pairs (one character
//! alone: a token, or a pair that begins or ends with it). Pages the index
//! does not hold whole (a word over [`MAX_WORD`] bytes, a text cut at the
//! index's limit or not read) are hits of every such query.

use tantivy::Term;
use tantivy::query::{BooleanQuery, Occur, Query, RegexQuery, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};

use super::tokens::{LONG_WORD, MAX_WORD, fold, unspaced};

/// What a term of the words field must be.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Exact(String),
    Prefix(String),
    Suffix(String),
    Infix(String),
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Word,
    Unspaced,
    Break,
}

fn kind(c: char) -> Kind {
    if unspaced(c) {
        Kind::Unspaced
    } else if c.is_alphanumeric() {
        Kind::Word
    } else {
        Kind::Break
    }
}

/// The terms a text holding `pattern` must have, None when the pattern
/// names none (no letter or digit) or holds a character outside letters,
/// digits and ASCII whose folding a token may not follow (the combining
/// dot `İ` lowers to is no break inside a word, as it is in a pattern).
pub fn parts(pattern: &str) -> Option<Vec<Part>> {
    let p = fold(pattern);
    if p.chars().any(|c| kind(c) == Kind::Break && !c.is_ascii()) {
        return None;
    }
    let mut runs: Vec<(Kind, String)> = Vec::new();
    for c in p.chars() {
        match runs.last_mut() {
            Some((k, run)) if *k == kind(c) => run.push(c),
            _ => runs.push((kind(c), c.to_string())),
        }
    }
    let last = runs.len().saturating_sub(1);
    let mut parts = Vec::new();
    for (i, (k, run)) in runs.iter().enumerate() {
        // Anything before (after) the run in the pattern is a token
        // boundary in the text: a break, or a change of script.
        let (closed_left, closed_right) = (i > 0, i < last);
        match k {
            Kind::Break => {}
            Kind::Word if run.len() > MAX_WORD => parts.push(Part::Exact(LONG_WORD.into())),
            Kind::Word => parts.push(bounded(run, closed_left, closed_right)),
            Kind::Unspaced => {
                let chars: Vec<char> = run.chars().collect();
                match chars.len() {
                    1 => parts.push(bounded(run, closed_left, closed_right)),
                    _ => parts.extend(chars.windows(2).map(|w| Part::Exact(w.iter().collect()))),
                }
            }
        }
    }
    (!parts.is_empty()).then_some(parts)
}

/// A token that is `run`, or begins, ends or holds it where the pattern
/// leaves that side open.
fn bounded(run: &str, closed_left: bool, closed_right: bool) -> Part {
    let run = run.to_string();
    match (closed_left, closed_right) {
        (true, true) => Part::Exact(run),
        (true, false) => Part::Prefix(run),
        (false, true) => Part::Suffix(run),
        (false, false) => Part::Infix(run),
    }
}

/// The query of terms of `field` that `parts` asks for, all of them. The
/// runs hold letters, digits and CJK characters only: nothing in them
/// needs escaping in a regular expression.
pub fn query(field: Field, parts: &[Part]) -> Option<Box<dyn Query>> {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for part in parts {
        let q: Box<dyn Query> = match part {
            Part::Exact(t) => Box::new(TermQuery::new(
                Term::from_field_text(field, t),
                IndexRecordOption::Basic,
            )),
            Part::Prefix(t) => Box::new(RegexQuery::from_pattern(&format!("{t}.*"), field).ok()?),
            Part::Suffix(t) => Box::new(RegexQuery::from_pattern(&format!(".*{t}"), field).ok()?),
            Part::Infix(t) => Box::new(RegexQuery::from_pattern(&format!(".*{t}.*"), field).ok()?),
        };
        clauses.push((Occur::Must, q));
    }
    Some(Box::new(BooleanQuery::new(clauses)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Part::*;

    fn s(t: &str) -> String {
        t.to_string()
    }

    #[test]
    fn runs_become_whole_or_partial_tokens() {
        assert_eq!(parts("ric"), Some(vec![Infix(s("ric"))]));
        assert_eq!(
            parts("Price Garden"),
            Some(vec![Suffix(s("price")), Prefix(s("garden"))])
        );
        assert_eq!(
            parts("a big-deal b"),
            Some(vec![
                Suffix(s("a")),
                Exact(s("big")),
                Exact(s("deal")),
                Prefix(s("b"))
            ])
        );
        assert_eq!(
            parts("研究生x"),
            Some(vec![Exact(s("研究")), Exact(s("究生")), Prefix(s("x"))])
        );
        assert_eq!(parts("论"), Some(vec![Infix(s("论"))]));
        assert_eq!(parts("x论"), Some(vec![Suffix(s("x")), Prefix(s("论"))]));
        assert_eq!(
            parts("2025年"),
            Some(vec![Suffix(s("2025")), Prefix(s("年"))])
        );
        // Σ ends a word in the pattern, not in the token: both fold to σ.
        assert_eq!(parts("ΟΔΟΣ"), Some(vec![Infix(s("οδοσ"))]));
        assert_eq!(parts(&"y".repeat(41)), Some(vec![Exact(s(LONG_WORD))]));
        assert_eq!(parts(" .-"), None);
        assert_eq!(parts(""), None);
        assert_eq!(parts("İstanbul"), None);
        assert_eq!(parts("a\u{2014}b"), None);
    }
}
