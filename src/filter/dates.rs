//! Dates as pages write them, read into `YYYY-MM-DD`: ISO and slashed
//! numeric forms, Chinese `2009年3月5日`, and English month names in
//! either order (`March 5, 2009`, `5 Mar 2009`). A day-first or
//! month-first all-numeric date (`05/03/2009`) is ambiguous and not read.

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// The first date in `s`, as `YYYY-MM-DD`.
pub fn find_date(s: &str) -> Option<String> {
    let tokens = tokens(s);
    (0..tokens.len()).find_map(|i| date_at(&tokens[i..]))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'a> {
    Num(u32, usize),
    Word(&'a str),
    /// `-`, `/`, `.`, `年`, `月`, `日`, `,`.
    Mark(char),
}

fn tokens(s: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_ascii_digit() {
            let digits = &s[i..run_end(&mut chars, i, |d| d.is_ascii_digit())];
            out.push(Token::Num(digits.parse().unwrap_or(u32::MAX), digits.len()));
        } else if c.is_ascii_alphabetic() {
            out.push(Token::Word(
                &s[i..run_end(&mut chars, i, |d| d.is_ascii_alphabetic())],
            ));
        } else if matches!(c, '-' | '/' | '.' | '年' | '月' | '日' | ',') {
            out.push(Token::Mark(c));
        } else if !c.is_whitespace() {
            out.push(Token::Mark(' '));
        }
    }
    out
}

/// Where the run of ASCII chars that `keep` starting at `start` ends,
/// the chars taken from `chars`.
fn run_end(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    start: usize,
    keep: fn(char) -> bool,
) -> usize {
    let mut end = start + 1;
    while let Some(&(j, d)) = chars.peek() {
        if !keep(d) {
            break;
        }
        end = j + d.len_utf8();
        chars.next();
    }
    end
}

fn month(word: &str) -> Option<u32> {
    let w = word.to_ascii_lowercase();
    if w.len() < 3 {
        return None;
    }
    let i = MONTHS.iter().position(|m| w.starts_with(m))?;
    // "March", "Mar", "Sept": a prefix of the full name, not "marble".
    let full = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ][i];
    full.starts_with(&w).then_some(i as u32 + 1)
}

fn ymd(y: u32, m: u32, d: u32) -> Option<String> {
    let ok = (1900..=2199).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d);
    ok.then(|| format!("{y:04}-{m:02}-{d:02}"))
}

fn date_at(t: &[Token<'_>]) -> Option<String> {
    use Token::*;
    match t {
        // 2009-03-05, 2009/3/5, 2009.03.05, 2009年3月5日
        [
            Num(y, 4),
            Mark(a),
            Num(m, 1..=2),
            Mark(b),
            Num(d, 1..=2),
            ..,
        ] if a == b && matches!(a, '-' | '/' | '.') => ymd(*y, *m, *d),
        [
            Num(y, 4),
            Mark('年'),
            Num(m, 1..=2),
            Mark('月'),
            Num(d, 1..=2),
            ..,
        ] => ymd(*y, *m, *d),
        // March 5, 2009 / Mar 5 2009
        [Word(w), Num(d, 1..=2), Mark(','), Num(y, 4), ..]
        | [Word(w), Num(d, 1..=2), Num(y, 4), ..] => ymd(*y, month(w)?, *d),
        // 5 March 2009 / 5 Mar, 2009
        [Num(d, 1..=2), Word(w), Num(y, 4), ..]
        | [Num(d, 1..=2), Word(w), Mark(','), Num(y, 4), ..] => ymd(*y, month(w)?, *d),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_forms_pages_write() {
        let cases = [
            ("Last modified: 2009-03-05 10:00", Some("2009-03-05")),
            ("2009-03-05T10:00:00Z", Some("2009-03-05")),
            ("posted 2009/3/5", Some("2009-03-05")),
            ("发布时间：2009年3月5日 10:20", Some("2009-03-05")),
            ("By Ann Lee, March 5, 2009", Some("2009-03-05")),
            ("updated Sept 30 2021", Some("2021-09-30")),
            ("5 Mar 2009", Some("2009-03-05")),
            ("05/03/2009", None),
            ("marble 5 2009", None),
            ("2009-13-05", None),
            ("call 555-1234", None),
            ("", None),
        ];
        for (s, want) in cases {
            assert_eq!(find_date(s).as_deref(), want, "{s}");
        }
    }
}
