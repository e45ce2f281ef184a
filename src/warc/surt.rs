//! SURT keys as pywb's `cdxj-indexer` writes them (the `surt` package's
//! default canonicalizer: Google's, then the Internet Archive's): host
//! reversed with commas and without `www.`, a default port dropped, path
//! and query lower-cased and escaped once, the query's arguments sorted,
//! session ids (`jsessionid`, `phpsessid`, `sid`, `cfid`/`cftoken`)
//! dropped. A URL that does not parse keys as itself, lower-cased.

/// The SURT key of `url`.
pub fn surt(url: &str) -> String {
    let Ok(u) = url::Url::parse(url.trim()) else {
        return url.to_ascii_lowercase();
    };
    let Some(host) = u.host_str() else {
        return url.to_ascii_lowercase();
    };
    let host = escape_once(&unescape(host.as_bytes())).to_ascii_lowercase();
    let host = host.replace("..", ".");
    let host = host.trim_matches('.');
    let host = strip_www(host);
    let mut key = host.rsplit('.').collect::<Vec<_>>().join(",");
    if let Some(port) = u.port() {
        key += &format!(":{port}");
    }
    key.push(')');
    let path = normalize_path(&unescape(u.path().as_bytes()));
    let mut path = escape_once(&path).to_ascii_lowercase();
    if path.len() > 1 && path.ends_with('/') {
        path.pop();
    }
    key += &path;
    if let Some(q) = u.query() {
        let q = escape_once(&unescape(q.as_bytes()));
        let q = strip_session_ids(&q).to_ascii_lowercase();
        if !q.is_empty() {
            key.push('?');
            key += &sort_query(&q);
        }
    }
    key
}

/// `www.`, `www2.` and the like, dropped from the front of a host.
fn strip_www(host: &str) -> &str {
    let Some(rest) = host.strip_prefix("www") else {
        return host;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[digits..].strip_prefix('.').unwrap_or(host)
}

/// Percent-escapes undone until none is left (each pass shortens it).
fn unescape(bytes: &[u8]) -> Vec<u8> {
    let mut cur = bytes.to_vec();
    loop {
        let next: Vec<u8> = percent_encoding::percent_decode(&cur).collect();
        if next == cur {
            return cur;
        }
        cur = next;
    }
}

/// Escapes what Python's `quote` would with the canonicalizer's safe set:
/// controls, space, `#`, `%`, DEL and every byte past ASCII.
fn escape_once(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b > 0x20 && b < 0x7f && b != b'#' && b != b'%' {
            out.push(b as char);
        } else {
            out += &format!("%{b:02X}");
        }
    }
    out
}

/// `.` and `..` segments resolved and empty segments dropped (a trailing
/// slash kept), as the Google canonicalizer does.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for p in path.split(|&b| b == b'/').skip(1) {
        match p {
            b"." => {}
            b".." => {
                if kept.pop().is_none() {
                    kept.push(p);
                }
            }
            _ => kept.push(p),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, rest)) = kept.split_last() {
        for p in rest.iter().filter(|p| !p.is_empty()) {
            out.extend_from_slice(p);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

/// The query's arguments in order of (name, value), a bare name before
/// the same name with a value.
fn sort_query(q: &str) -> String {
    let mut args: Vec<(&str, Option<&str>)> = q
        .split('&')
        .map(|a| match a.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (a, None),
        })
        .collect();
    args.sort();
    let parts: Vec<String> = args
        .iter()
        .map(|(k, v)| match v {
            Some(v) => format!("{k}={v}"),
            None => k.to_string(),
        })
        .collect();
    parts.join("&")
}

/// The query without the session ids the IA canonicalizer removes.
fn strip_session_ids(q: &str) -> String {
    let mut q = q.to_string();
    for name in ["jsessionid=", "phpsessid=", "sid="] {
        q = strip_id(&q, name, |v| {
            v.len() == 32 && v.bytes().all(|b| b.is_ascii_alphanumeric())
        });
    }
    strip_cf(&q)
}

/// The last `name` whose value `ok` accepts, cut with the `&` after it.
fn strip_id(q: &str, name: &str, ok: impl Fn(&str) -> bool) -> String {
    let lower = q.to_ascii_lowercase();
    let mut at = lower.len();
    while let Some(i) = lower[..at].rfind(name) {
        let start = i + name.len();
        let end = q[start..].find('&').map_or(q.len(), |e| start + e);
        if ok(&q[start..end]) {
            let after = q.get(end + 1..).unwrap_or("");
            return format!("{}{after}", &q[..i]);
        }
        at = i;
    }
    q.to_string()
}

/// `cfid=…&cftoken=…` dropped.
fn strip_cf(q: &str) -> String {
    let lower = q.to_ascii_lowercase();
    let Some(i) = lower.rfind("cfid=") else {
        return q.to_string();
    };
    let Some(amp) = q[i..].find('&').map(|a| i + a) else {
        return q.to_string();
    };
    if !lower[amp + 1..].starts_with("cftoken=") || amp == i + 5 {
        return q.to_string();
    }
    let tok = amp + 1 + "cftoken=".len();
    let end = q[tok..].find('&').map_or(q.len(), |e| tok + e);
    if end == tok {
        return q.to_string();
    }
    format!("{}{}", &q[..i], q.get(end + 1..).unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::surt;

    /// Each pair as the `surt` package (0.3.1) keys it.
    #[test]
    fn keys_match_the_surt_package() {
        for (url, key) in [
            (
                "http://127.0.0.1:8080/a/B/?z=1&a=2",
                "1,0,0,127:8080)/a/b?a=2&z=1",
            ),
            ("http://www.Example.com/", "com,example)/"),
            ("http://example.com:80/x/./y/../z%7e?", "com,example)/x/z~"),
            ("https://www2.ex.com/%41b c#f", "com,ex)/ab%20c"),
            ("http://ex.com/a//b/", "com,ex)/a/b"),
            ("http://ex.com/?b&a=", "com,ex)/?a=&b"),
            ("http://ex.com/caf%C3%A9", "com,ex)/caf%c3%a9"),
        ] {
            assert_eq!(surt(url), key, "{url}");
        }
    }
}
