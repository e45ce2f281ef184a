//! The pass before the scanner (tl's grammar, see `scan.rs`) sees a page:
//! raw-text elements whose content must not become markup, comments it
//! would misread, and tag names in one case.

use std::borrow::Cow;

/// Stands for `<` inside `<title>` and `<textarea>` while tl parses the
/// page (an ASCII control byte, so offsets and UTF-8 validity hold).
pub(super) const RCDATA_LT: u8 = 0x01;

/// Text with [`RCDATA_LT`] turned back into `<`.
pub(super) fn unmask_rcdata(s: &str) -> Cow<'_, str> {
    if s.as_bytes().contains(&RCDATA_LT) {
        Cow::Owned(s.replace(RCDATA_LT as char, "<"))
    } else {
        Cow::Borrowed(s)
    }
}

/// Blanks the contents of `<script>` and `<style>` so that markup inside
/// JavaScript strings cannot create elements (tl has no raw-text elements),
/// masks the `<`s inside `<title>` and `<textarea>` (text, not markup),
/// and lower-cases tag names: tl closes an element only on a closing tag of
/// the same case, so `<SCRIPT>…</script>` left the script open and the rest
/// of the page, links and all, inside it. Walks the `<`s with memchr and
/// copies the page only when something changes.
pub(super) fn mask_raw_text(html: &str) -> Cow<'_, str> {
    let bytes = html.as_bytes();
    let at = |p: usize, name: &[u8]| {
        bytes
            .get(p..p + name.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(name))
    };
    let mut out: Option<Vec<u8>> = None;
    let mut from = 0;
    while let Some(p) = memchr::memchr(b'<', &bytes[from..]).map(|p| from + p) {
        if bytes[p + 1..].starts_with(b"!--") {
            from = mask_comment(bytes, p, &mut out);
            continue;
        }
        let name_start = p + 1 + usize::from(bytes.get(p + 1) == Some(&b'/'));
        let name_len = bytes[name_start.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let name = name_start..name_start + name_len;
        if bytes[name.clone()].iter().any(u8::is_ascii_uppercase) {
            out.get_or_insert_with(|| bytes.to_vec())[name.clone()].make_ascii_lowercase();
        }
        let opening = bytes.get(p + 1) != Some(&b'/');
        let (close, blank): (&[u8], bool) = if at(p + 1, b"script") {
            (b"/script", true)
        } else if at(p + 1, b"style") {
            (b"/style", true)
        } else if opening && bytes[name.clone()].eq_ignore_ascii_case(b"title") {
            (b"/title", false)
        } else if opening && bytes[name.clone()].eq_ignore_ascii_case(b"textarea") {
            (b"/textarea", false)
        } else {
            from = name.end.max(p + 1);
            continue;
        };
        let Some(gt) = memchr::memchr(b'>', &bytes[p..]) else {
            break;
        };
        let body_start = p + gt + 1;
        let body_end = memchr::memchr_iter(b'<', &bytes[body_start..])
            .map(|e| body_start + e)
            .find(|&e| {
                at(e + 1, close)
                    && (blank
                        || !bytes
                            .get(e + 1 + close.len())
                            .is_some_and(u8::is_ascii_alphanumeric))
            })
            .unwrap_or(bytes.len());
        let body = body_start..body_end;
        if blank {
            // Every byte becomes an ASCII space (and names stay ASCII), so
            // the result stays valid UTF-8 and keeps every offset.
            out.get_or_insert_with(|| bytes.to_vec())[body].fill(b' ');
        } else if memchr::memchr(b'<', &bytes[body.clone()]).is_some() {
            // Title and textarea hold text (entities still count): a `<`
            // there starts no tag, so it is masked and the walk restores it.
            let buf = out.get_or_insert_with(|| bytes.to_vec());
            for b in &mut buf[body] {
                if *b == b'<' {
                    *b = RCDATA_LT;
                }
            }
        }
        from = body_end;
    }
    match out {
        // SAFETY: `buf` is a copy of a `&str` in which only ASCII bytes were
        // lower-cased or replaced by other ASCII bytes (spaces, RCDATA_LT),
        // and ranges were filled with ASCII spaces or ASCII markup; each
        // range starts after a '>' or at a '<' and ends at a '<', after a
        // '>' or at the end, so on char boundaries. The result is valid UTF-8 without re-checking every
        // byte of the page (most real pages have a script).
        Some(buf) => {
            debug_assert!(std::str::from_utf8(&buf).is_ok());
            Cow::Owned(unsafe { String::from_utf8_unchecked(buf) })
        }
        None => Cow::Borrowed(html),
    }
}

/// Where the comment opened at `p` (`<!--`) ends, as HTML parses it: at
/// the first `-->` or `--!>` after the opening, `<!-->` and `<!--->`
/// closing at once; at the end of the page when unclosed.
fn comment_end(bytes: &[u8], p: usize) -> usize {
    let inner = p + 4;
    if bytes.get(inner) == Some(&b'>') {
        return inner + 1;
    }
    if bytes[inner.min(bytes.len())..].starts_with(b"->") {
        return inner + 2;
    }
    let mut from = inner;
    while let Some(q) = memchr::memmem::find(&bytes[from..], b"--").map(|q| from + q) {
        match &bytes[q + 2..] {
            [b'>', ..] => return q + 3,
            [b'!', b'>', ..] => return q + 4,
            _ => from = q + 1,
        }
    }
    bytes.len()
}

/// The comment opened at `p`, rewritten in `out` when tl would end it
/// elsewhere than HTML does; returns where the comment ends (nothing
/// inside a comment is a tag: `<!-- <script> -->`).
fn mask_comment(bytes: &[u8], p: usize, out: &mut Option<Vec<u8>>) -> usize {
    let end = comment_end(bytes, p);
    if !tl_ends_at(bytes, p, end) {
        // Same length, all ASCII: a comment or an empty element tl reads
        // as ending where the HTML parser ends it.
        let buf = out.get_or_insert_with(|| bytes.to_vec());
        fill_comment(&mut buf[p..end]);
    }
    end
}

/// Whether tl ends the same comment at `end`. It steps over a `--` not
/// followed by `>` and one byte more, so `<!---->`, `<!-- x --->` and
/// `--!>` run on to a later `-->`, taking the page with them. It never
/// ends one sooner than HTML, so the scan stops at `end` (a page of a
/// million `<!---->` stays linear); an unclosed comment runs to the end
/// of the page in both.
fn tl_ends_at(bytes: &[u8], p: usize, end: usize) -> bool {
    if end == bytes.len() {
        return true;
    }
    let mut i = p + 2;
    while i < end {
        if bytes[i..end].starts_with(b"--") {
            i += 2;
            if bytes.get(i) == Some(&b'>') {
                return i + 1 == end;
            }
        }
        i += 1;
    }
    false
}

/// Rewrites a comment's bytes (`span`, 6 bytes or more) as markup of the
/// same length that tl ends where the comment ends: `<!--   -->`, or an
/// empty element where no comment fits (`<x></x>`, `<x  />`).
fn fill_comment(span: &mut [u8]) {
    match span.len() {
        ..=5 => {}
        6 => span.copy_from_slice(b"<x  />"),
        7 => span.copy_from_slice(b"<x></x>"),
        n => {
            span[..4].copy_from_slice(b"<!--");
            span[4..n - 3].fill(b' ');
            span[n - 3..].copy_from_slice(b"-->");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Comments tl would run past the end of: each is rewritten so that
    /// the text after it is parsed (it was lost, with every link).
    #[test]
    fn comments_end_where_html_ends_them() {
        for (html, masked) in [
            ("a<!---->b", "a<x></x>b"),
            ("a<!--->b", "a<x  />b"),
            ("a<!-- x --->b", "a<!--    -->b"),
            ("a<!-- x --!>b", "a<!--    -->b"),
            ("a<!-- <SCRIPT> -- --->b<P>", "a<!--              -->b<p>"),
        ] {
            assert_eq!(mask_raw_text(html), masked, "{html}");
        }
        for fine in [
            "a<!-->b",
            "a<!-- x -->b",
            "a<!-- a -- b -->b",
            "a<!-- open",
            "<!--",
        ] {
            assert_eq!(mask_raw_text(fine), Cow::Borrowed(fine));
        }
        // A script inside a comment is no script: what follows is kept.
        assert_eq!(
            mask_raw_text("<!-- <script> -->x</script>"),
            Cow::Borrowed("<!-- <script> -->x</script>")
        );
        let page = "<p>one<!---->two</p><p>three<!-- x --->four</p><p>five</p>";
        let p = crate::parse::parse_html(
            page,
            &url::Url::parse("http://h.org/").unwrap(),
            encoding_rs::UTF_8,
            "trawl",
            10,
        );
        assert_eq!(p.text, "onetwo\nthreefour\nfive");
        // A million broken comments: each rewritten, in one linear pass.
        let many = "<!---->".repeat(1_000_000) + "<p>end</p>";
        let masked = mask_raw_text(&many);
        assert!(masked.starts_with("<x></x><x></x>") && masked.ends_with("<p>end</p>"));
    }

    #[test]
    fn script_and_style_bodies_are_masked_and_tag_names_lowered() {
        assert_eq!(
            mask_raw_text(
                "<SCRIPT a=1>'<a>'</ScRiPt><P>x</p><sTyle>é</STYLE><scriptx>y</scriptx>é"
            ),
            "<script a=1>     </script><p>x</p><style>  </style><scriptx> </scriptx>é"
        );
        assert_eq!(mask_raw_text("<p>é</p>"), Cow::Borrowed("<p>é</p>"));
        assert_eq!(
            mask_raw_text("<!DOCTYPE html><a HREF=X>"),
            Cow::Borrowed("<!DOCTYPE html><a HREF=X>")
        );
        assert_eq!(mask_raw_text("a <"), Cow::Borrowed("a <"));
        assert_eq!(mask_raw_text("<DIV/>"), "<div/>");
        let unclosed = "'<a>' never closed";
        assert_eq!(
            mask_raw_text(&format!("<p><script>{unclosed}")),
            format!("<p><script>{}", " ".repeat(unclosed.len()))
        );
        // tl closes an element only on a closing tag of the same case.
        let p = crate::parse::parse_html(
            "<SCRIPT type=x>a='<a href=/js1>'</script><p>one <b>two</b>\t three</P>\
             <style>p{} <a href=/css></STYLE><Style>x</stYle><A href=/ok>k</a>\
             <script>'<a href=/js2>' never closed",
            &url::Url::parse("http://h.org/dir/page.html").unwrap(),
            encoding_rs::UTF_8,
            "trawl",
            crate::parse::DEFAULT_MAX_LINKS,
        );
        let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(urls, vec!["http://h.org/ok"]);
        assert_eq!(p.text, "one two three\nk");
    }
}
