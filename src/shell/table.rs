//! Aligned text tables for people; long cells are cut to fit the terminal.
//! Widths are display columns, so CJK text (two columns a character) lines up.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Renders rows under headers. With `width` > 0 the widest column is cut
/// (with `…`) until a line fits.
pub fn render(headers: &[&str], rows: &[Vec<String>], width: usize) -> String {
    let n = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.width()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            widths[i] = widths[i].max(c.width());
        }
    }
    if width > 0 {
        let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * (n.saturating_sub(1));
        while total(&widths) > width {
            let (i, w) = widths
                .iter()
                .enumerate()
                .max_by_key(|(_, w)| **w)
                .map(|(i, w)| (i, *w))
                .unwrap_or((0, 0));
            if w <= 8 {
                break;
            }
            widths[i] = w - 1;
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<String>, out: &mut String| {
        let mut parts = Vec::with_capacity(n);
        for (i, c) in cells.iter().enumerate().take(n) {
            let cut = cut(c, widths[i]);
            parts.push(if i + 1 == n {
                cut
            } else {
                pad(&cut, widths[i])
            });
        }
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(headers.iter().map(|h| h.to_string()).collect(), &mut out);
    for r in rows {
        line(r.clone(), &mut out);
    }
    out
}

/// `s` on one line, cut to `w` display columns with `…`.
pub fn cut(s: &str, w: usize) -> String {
    let s = s.replace(['\n', '\t'], " ");
    if s.width() <= w {
        return s;
    }
    let mut t = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > w {
            break;
        }
        t.push(c);
        used += cw;
    }
    t.push('…');
    t
}

/// `s` padded with spaces to `w` display columns.
pub fn pad(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(s.width())))
}

/// Columns of the terminal on stdout, if it is one.
pub fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    // SAFETY: TIOCGWINSZ fills a winsize struct for a terminal fd; we pass a
    // valid, zeroed one and read it only when the call succeeds.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(ws.ws_col as usize)
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in a short human unit.
pub fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// A stored time (ms since the epoch) as UTC `YYYY-MM-DD HH:MM:SS`.
pub fn time(ms: u64) -> String {
    if ms == 0 {
        return "-".into();
    }
    let t = crate::model::Utc::of_ms(ms);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_and_cut() {
        let t = render(&["a", "bb"], &[vec!["xxx".into(), "y".repeat(50)]], 20);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "a    bb");
        assert!(
            lines[1].starts_with("xxx  y")
                && lines[1].ends_with('…')
                && lines[1].chars().count() <= 20
        );
        assert_eq!(thousands(1234567), "1,234,567");
        let cjk = render(
            &["t", "u"],
            &[
                vec!["篮球".into(), "x".into()],
                vec!["ab".into(), "y".into()],
            ],
            0,
        );
        assert_eq!(cjk, "t     u\n篮球  x\nab    y\n");
        assert_eq!(cut("研究生论文", 7), "研究生…");
        assert_eq!(time(0), "-");
        assert_eq!(time(1_700_000_000_000), "2023-11-14 22:13:20");
    }
}
