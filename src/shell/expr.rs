//! The small language of `pages where EXPR [order by FIELD [desc]] [limit N]`:
//! comparisons of page fields with `= != < <= > >= ~` (contains), joined by
//! `and`, `or`, `not` and parentheses. Literals are numbers, quoted strings,
//! `true`/`false`, and durations (`10m`), which stand for milliseconds —
//! against `fetched_at` a duration means "that long ago".
//!
//! Errors name the column (1-based, in the whole command line) of the problem.

use super::fields::FIELDS;
pub use super::fields::{Type, Val};

#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Str(String),
    Num(f64),
    Bool(bool),
    /// Milliseconds.
    Dur(f64),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Cmp {
        field: &'static str,
        op: Op,
        lit: Lit,
    },
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    True,
}

/// A whole query: filter, order and limit.
#[derive(Clone, Debug)]
pub struct Query {
    pub filter: Expr,
    pub order: Option<(&'static str, bool)>,
    pub limit: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Num(f64),
    Dur(f64),
    Op(Op),
    LParen,
    RParen,
}

struct Lexed {
    toks: Vec<(Tok, usize)>,
    end: usize,
}

fn lex(src: &str, base: usize) -> Result<Lexed, String> {
    let chars: Vec<(usize, char)> = src.char_indices().collect();
    let col = |i: usize| {
        base + src[..chars.get(i).map_or(src.len(), |c| c.0)]
            .chars()
            .count()
            + 1
    };
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (_, c) = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let (tok, next) = match c {
            '(' => (Tok::LParen, i + 1),
            ')' => (Tok::RParen, i + 1),
            '=' => (Tok::Op(Op::Eq), i + 1),
            '~' => (Tok::Op(Op::Contains), i + 1),
            '!' | '<' | '>' => lex_comparison(&chars, i)
                .ok_or_else(|| format!("column {}: '!' must be followed by '='", col(start)))?,
            '"' | '\'' => lex_string(&chars, i)
                .ok_or_else(|| format!("column {}: unterminated string", col(start)))?,
            c if c.is_ascii_digit() || c == '-' || c == '.' => {
                let (tok, next) = lex_number(&chars, i);
                let tok = tok.map_err(|text| {
                    format!(
                        "column {}: {text:?} is not a number or duration",
                        col(start)
                    )
                })?;
                (tok, next)
            }
            c if c.is_alphanumeric() || c == '_' => {
                let end = scan(&chars, i, |_, c| {
                    c.is_alphanumeric() || c == '_' || c == '.'
                });
                (Tok::Word(chars[i..end].iter().map(|c| c.1).collect()), end)
            }
            other => return Err(format!("column {}: unexpected {other:?}", col(start))),
        };
        i = next;
        toks.push((tok, col(start)));
    }
    Ok(Lexed {
        toks,
        end: col(chars.len()),
    })
}

/// The index after the run of characters from `i` that `more` accepts.
fn scan(chars: &[(usize, char)], i: usize, more: impl Fn(usize, char) -> bool) -> usize {
    let mut j = i;
    while j < chars.len() && more(j, chars[j].1) {
        j += 1;
    }
    j
}

/// `!=`, `<`, `<=`, `>`, `>=` at `i`; None for a `!` alone.
fn lex_comparison(chars: &[(usize, char)], i: usize) -> Option<(Tok, usize)> {
    let c = chars[i].1;
    let eq = chars.get(i + 1).is_some_and(|c| c.1 == '=');
    let op = match (c, eq) {
        ('!', true) => Op::Ne,
        ('<', false) => Op::Lt,
        ('<', true) => Op::Le,
        ('>', false) => Op::Gt,
        ('>', true) => Op::Ge,
        _ => return None,
    };
    Some((Tok::Op(op), i + 1 + usize::from(eq)))
}

/// A string quoted with the character at `i`, a backslash escaping the
/// next character; None when it is not closed.
fn lex_string(chars: &[(usize, char)], i: usize) -> Option<(Tok, usize)> {
    let q = chars[i].1;
    let mut s = String::new();
    let mut j = i + 1;
    loop {
        match chars.get(j) {
            None => return None,
            Some((_, c)) if *c == q => break,
            Some((_, '\\')) if chars.get(j + 1).is_some() => {
                s.push(chars[j + 1].1);
                j += 1;
            }
            Some((_, ch)) => s.push(*ch),
        }
        j += 1;
    }
    Some((Tok::Str(s), j + 1))
}

/// A number or a duration (`10m`) at `i`; the text when it is neither.
fn lex_number(chars: &[(usize, char)], i: usize) -> (Result<Tok, String>, usize) {
    let end = scan(chars, i, |j, c| {
        c.is_ascii_alphanumeric() || c == '.' || (j == i && c == '-')
    });
    let text: String = chars[i..end].iter().map(|c| c.1).collect();
    let tok = if let Ok(n) = text.parse::<f64>() {
        Ok(Tok::Num(n))
    } else if let Ok(d) = crate::settings::parse_duration(&text) {
        Ok(Tok::Dur(d.as_secs_f64() * 1000.0))
    } else {
        Err(text)
    };
    (tok, end)
}

struct Parser<'f> {
    /// The fields a row has: name and type.
    fields: &'f [(&'static str, Type)],
    toks: Vec<(Tok, usize)>,
    pos: usize,
    end: usize,
    /// Parentheses and `not`s open around the current term.
    depth: usize,
    /// Comparisons and operators parsed so far.
    nodes: usize,
}

/// Nesting of parentheses and `not` at most: the parser, the evaluator and
/// the tree's drop all recurse once per level.
const MAX_NESTING: usize = 64;
/// Terms and operators in one expression at most (a chain of `or`s nests
/// one level per term when evaluated).
const MAX_NODES: usize = 1000;

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    fn col(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |t| t.1)
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w))
    }
    fn err<T>(&self, what: &str) -> Result<T, String> {
        let found = match self.peek() {
            None => "the end".to_string(),
            Some(Tok::Word(w)) => format!("{w:?}"),
            Some(Tok::Str(s)) => format!("string {s:?}"),
            Some(Tok::Num(n)) => format!("number {n}"),
            Some(Tok::Dur(_)) => "a duration".into(),
            Some(Tok::Op(_)) => "an operator".into(),
            Some(Tok::LParen) => "'('".into(),
            Some(Tok::RParen) => "')'".into(),
        };
        Err(format!(
            "column {}: expected {what}, found {found}",
            self.col()
        ))
    }

    /// Counts one more node, refusing an expression past [`MAX_NODES`].
    fn node(&mut self) -> Result<(), String> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(format!(
                "expression too long at column {}: at most {MAX_NODES} terms and operators",
                self.col()
            ));
        }
        Ok(())
    }
    /// Enters one more level of nesting, refusing past [`MAX_NESTING`].
    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!(
                "expression nested too deeply at column {}: at most {MAX_NESTING} levels of parentheses and not",
                self.col()
            ));
        }
        Ok(())
    }
    fn or(&mut self) -> Result<Expr, String> {
        let mut e = self.and()?;
        while self.is_word("or") {
            self.pos += 1;
            self.node()?;
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }
    fn and(&mut self) -> Result<Expr, String> {
        let mut e = self.not()?;
        while self.is_word("and") {
            self.pos += 1;
            self.node()?;
            e = Expr::And(Box::new(e), Box::new(self.not()?));
        }
        Ok(e)
    }
    fn not(&mut self) -> Result<Expr, String> {
        if self.is_word("not") {
            self.pos += 1;
            self.node()?;
            self.enter()?;
            let e = Expr::Not(Box::new(self.not()?));
            self.depth -= 1;
            return Ok(e);
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<Expr, String> {
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            self.enter()?;
            let e = self.or()?;
            if self.peek() != Some(&Tok::RParen) {
                return self.err("')'");
            }
            self.pos += 1;
            self.depth -= 1;
            return Ok(e);
        }
        self.node()?;
        let field_col = self.col();
        let (field, ty) = self.field()?;
        let op = match self.peek() {
            Some(Tok::Op(op)) => *op,
            // A bare boolean field is a test of itself: `where duplicate`.
            _ if ty == Type::Bool => {
                return Ok(Expr::Cmp {
                    field,
                    op: Op::Eq,
                    lit: Lit::Bool(true),
                });
            }
            _ => return self.err("an operator (= != < <= > >= ~)"),
        };
        self.pos += 1;
        let lit_col = self.col();
        let lit = match self.peek().cloned() {
            Some(Tok::Str(s)) => Lit::Str(s),
            Some(Tok::Num(n)) => Lit::Num(n),
            Some(Tok::Dur(d)) => Lit::Dur(d),
            Some(Tok::Word(w)) if w == "true" || w == "false" => Lit::Bool(w == "true"),
            Some(Tok::Word(w)) if ty == Type::Str => Lit::Str(w),
            _ => return self.err("a value"),
        };
        self.pos += 1;
        let ok = match (ty, &lit, op) {
            (Type::Str, Lit::Str(_), _) => true,
            (Type::Num, Lit::Num(_) | Lit::Dur(_), op) => op != Op::Contains,
            (Type::Bool, Lit::Bool(_), Op::Eq | Op::Ne) => true,
            _ => false,
        };
        if !ok {
            let t = match ty {
                Type::Str => "a string",
                Type::Num => "a number or duration (and no ~)",
                Type::Bool => "true or false with = or !=",
            };
            return Err(format!(
                "column {lit_col}: {field} (column {field_col}) takes {t}"
            ));
        }
        Ok(Expr::Cmp { field, op, lit })
    }
    fn field(&mut self) -> Result<(&'static str, Type), String> {
        let Some(Tok::Word(w)) = self.peek().cloned() else {
            return self.err("a field name");
        };
        let lower = w.to_ascii_lowercase();
        match self.fields.iter().find(|f| f.0 == lower) {
            Some(&(name, ty)) => {
                self.pos += 1;
                Ok((name, ty))
            }
            None => {
                let hint = crate::settings::nearest(&lower, self.fields.iter().map(|f| f.0))
                    .map(|n| format!("; did you mean {n}?"))
                    .unwrap_or_else(|| {
                        format!(
                            "; fields: {}",
                            self.fields
                                .iter()
                                .map(|f| f.0)
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    });
                Err(format!("column {}: unknown field {w:?}{hint}", self.col()))
            }
        }
    }
}

/// Parses `[where] EXPR [order by FIELD [asc|desc]] [limit N]`; `base` is
/// the column offset of `src` in the command line.
pub fn parse_query(src: &str, base: usize) -> Result<Query, String> {
    let fields: Vec<(&'static str, Type)> = FIELDS.iter().map(|f| (f.name, f.ty)).collect();
    parse_query_over(src, base, &fields)
}

/// [`parse_query`] over rows with other fields (`seeds where …`).
pub fn parse_query_over(
    src: &str,
    base: usize,
    fields: &[(&'static str, Type)],
) -> Result<Query, String> {
    let lexed = lex(src, base)?;
    let mut p = Parser {
        fields,
        toks: lexed.toks,
        pos: 0,
        end: lexed.end,
        depth: 0,
        nodes: 0,
    };
    let filter = if p.peek().is_none() || p.is_word("order") || p.is_word("limit") {
        Expr::True
    } else {
        if p.is_word("where") {
            p.pos += 1;
        }
        p.or()?
    };
    let mut order = None;
    if p.is_word("order") {
        p.pos += 1;
        if !p.is_word("by") {
            return p.err("'by'");
        }
        p.pos += 1;
        let (f, _) = p.field()?;
        let desc = if p.is_word("desc") || p.is_word("asc") {
            let d = p.is_word("desc");
            p.pos += 1;
            d
        } else {
            false
        };
        order = Some((f, desc));
    }
    let mut limit = None;
    if p.is_word("limit") {
        p.pos += 1;
        match p.peek() {
            Some(Tok::Num(n)) if *n >= 0.0 && n.fract() == 0.0 => limit = Some(*n as usize),
            _ => return p.err("a whole number"),
        }
        p.pos += 1;
    }
    if p.peek().is_some() {
        return p.err("and, or, order by, limit or the end");
    }
    Ok(Query {
        filter,
        order,
        limit,
    })
}

impl Expr {
    /// Whether the expression reads `field`.
    pub fn uses(&self, field: &str) -> bool {
        match self {
            Expr::Cmp { field: f, .. } => *f == field,
            Expr::And(a, b) | Expr::Or(a, b) => a.uses(field) || b.uses(field),
            Expr::Not(a) => a.uses(field),
            Expr::True => false,
        }
    }

    /// Whether every field the expression compares is in `fields`.
    pub fn uses_only(&self, fields: &[&str]) -> bool {
        match self {
            Expr::Cmp { field, .. } => fields.contains(field),
            Expr::And(a, b) | Expr::Or(a, b) => a.uses_only(fields) && b.uses_only(fields),
            Expr::Not(a) => a.uses_only(fields),
            Expr::True => true,
        }
    }

    /// Evaluates against a row; `get` gives a field's value, `now_ms` anchors
    /// durations compared with `fetched_at`.
    pub fn eval(&self, get: &dyn Fn(&str) -> Val, now_ms: f64) -> bool {
        match self {
            Expr::True => true,
            Expr::And(a, b) => a.eval(get, now_ms) && b.eval(get, now_ms),
            Expr::Or(a, b) => a.eval(get, now_ms) || b.eval(get, now_ms),
            Expr::Not(a) => !a.eval(get, now_ms),
            Expr::Cmp { field, op, lit } => {
                let v = get(field);
                let rhs = match lit {
                    Lit::Str(s) => Val::Str(s.clone()),
                    Lit::Num(n) => Val::Num(*n),
                    Lit::Bool(b) => Val::Bool(*b),
                    Lit::Dur(d) if *field == "fetched_at" => Val::Num(now_ms - d),
                    Lit::Dur(d) => Val::Num(*d),
                };
                compare(&v, *op, &rhs)
            }
        }
    }
}

fn compare(a: &Val, op: Op, b: &Val) -> bool {
    if let (Op::Contains, Val::Str(x), Val::Str(y)) = (op, a, b) {
        return x.to_lowercase().contains(&y.to_lowercase());
    }
    let Some(ord) = a.partial_cmp(b) else {
        return false;
    };
    match op {
        Op::Eq => ord.is_eq(),
        Op::Ne => !ord.is_eq(),
        Op::Lt => ord.is_lt(),
        Op::Le => ord.is_le(),
        Op::Gt => ord.is_gt(),
        Op::Ge => ord.is_ge(),
        Op::Contains => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_only_looks_at_every_term() {
        let f = |src| parse_query(src, 0).unwrap().filter;
        let light = ["status", "depth"];
        assert!(f("where status = 200 and not (depth > 2 or status < 300)").uses_only(&light));
        assert!(f("").uses_only(&light));
        assert!(!f("where status = 200 and (depth > 2 or title ~ 'x')").uses_only(&light));
        assert!(!f("where not size > 3").uses_only(&light));
    }

    fn row(field: &str) -> Val {
        match field {
            "status" => Val::Num(404.0),
            "title" => Val::Str("Graduate 论文 list".into()),
            "duplicate" => Val::Bool(false),
            "fetched_at" => Val::Num(1_000_000.0),
            _ => Val::Num(0.0),
        }
    }

    #[test]
    fn parses_and_evaluates() {
        let q = parse_query(
            "status >= 400 and (title ~ '论文' or not duplicate) order by depth desc limit 5",
            0,
        )
        .unwrap();
        assert!(q.filter.eval(&row, 0.0));
        assert_eq!(q.order, Some(("depth", true)));
        assert_eq!(q.limit, Some(5));
        let q = parse_query("where status != 404 or duplicate", 0).unwrap();
        assert!(!q.filter.eval(&row, 0.0));
        // fetched 1,000,000 ms after the epoch; "now" is 1,500,000: 10m ago is 900,000.
        assert!(
            parse_query("fetched_at > 10m", 0)
                .unwrap()
                .filter
                .eval(&row, 1_500_000.0)
        );
        assert!(parse_query("", 0).unwrap().filter == Expr::True);
    }

    #[test]
    fn nesting_and_length_are_bounded() {
        let deep = format!(
            "where {}status = 1{}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        let e = parse_query(&deep, 0).unwrap_err();
        assert!(e.contains("nested too deeply"), "{e}");
        let nots = format!("where {}duplicate", "not ".repeat(100_000));
        assert!(
            parse_query(&nots, 0)
                .unwrap_err()
                .contains("nested too deeply")
        );
        let long = format!("where {}", vec!["status = 1"; 100_000].join(" or "));
        assert!(parse_query(&long, 0).unwrap_err().contains("too long"));
        let ok = format!("where {}status = 1{}", "(".repeat(60), ")".repeat(60));
        assert!(parse_query(&ok, 0).is_ok());
    }

    #[test]
    fn errors_name_the_column() {
        let e = parse_query("status = = 3", 12).unwrap_err();
        assert!(e.starts_with("column 22:"), "{e}");
        let e = parse_query("stauts = 3", 0).unwrap_err();
        assert!(e.contains("did you mean status"), "{e}");
        let e = parse_query("status ~ 3", 0).unwrap_err();
        assert!(e.starts_with("column 10:"), "{e}");
        assert!(
            parse_query("title = 'open", 0)
                .unwrap_err()
                .contains("unterminated")
        );
        assert!(
            parse_query("status = 3 limit x", 0)
                .unwrap_err()
                .contains("whole number")
        );
    }
}
