//! URL normalization: the one canonical spelling of a URL that its id hashes.
//!
//! The `url` crate (WHATWG parsing) already lowercases scheme and host, maps
//! IDN hosts to punycode, drops default ports, resolves dot segments and
//! gives an empty path `/`. On top of that we drop the fragment, uppercase
//! percent-escapes and decode escapes of unreserved characters, so that
//! `/%7euser/%2f` and `/~user/%2F` are one URL.

use std::borrow::Cow;

use super::{HostId, UrlId};

/// URLs longer than this (after normalization) are dropped and counted.
pub const MAX_URL_BYTES: usize = 2048;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("not a valid URL: {0}")]
    Invalid(String),
    #[error("scheme {0}: is not crawled (only http and https)")]
    Scheme(String),
    #[error("URL is {0} bytes, over the {MAX_URL_BYTES}-byte limit")]
    TooLong(usize),
    #[error("URL has no host")]
    NoHost,
}

/// A normalized http(s) URL with its ids computed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalUrl {
    url: url::Url,
    id: UrlId,
}

impl CanonicalUrl {
    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }
    pub fn url(&self) -> &url::Url {
        &self.url
    }
    pub fn id(&self) -> UrlId {
        self.id
    }
    /// `scheme://host[:port]`: the unit of politeness and of robots.txt.
    pub fn host_key(&self) -> String {
        self.url.origin().ascii_serialization()
    }
    pub fn host_id(&self) -> HostId {
        HostId::of(&self.host_key())
    }
    pub fn host(&self) -> &str {
        self.url.host_str().unwrap_or("")
    }
    /// Path plus query, the part robots.txt rules match.
    pub fn path_and_query(&self) -> &str {
        &self.url[url::Position::BeforePath..url::Position::AfterQuery]
    }
}

impl std::fmt::Display for CanonicalUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.url.as_str())
    }
}

/// The host of a normalized URL string, without parsing it (for hot
/// loops over stored URLs); empty when there is none.
pub fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or("", |(_, r)| r);
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    // Credentials (`user:pass@`) come before the host.
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if let Some(v6) = host.strip_prefix('[') {
        return v6.split(']').next().unwrap_or("");
    }
    &host[..host.find(':').unwrap_or(host.len())]
}

/// The host of a stored URL as [`CanonicalUrl::host`] gives it (an IPv6
/// address in brackets, unlike [`host_of`]): what `pages where host`
/// compares and the page index keys by. Empty when there is none.
pub fn parsed_host(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default()
}

/// Parses and normalizes an absolute URL.
pub fn normalize(input: &str) -> Result<CanonicalUrl, UrlError> {
    let url =
        url::Url::parse(input.trim()).map_err(|e| UrlError::Invalid(format!("{input}: {e}")))?;
    from_url(url)
}

/// Resolves `href` against `base` and normalizes the result.
pub fn resolve(base: &url::Url, href: &str) -> Result<CanonicalUrl, UrlError> {
    resolve_encoded(base, href, None)
}

/// Encodes a query string's characters the way the linking document does.
pub type QueryEncoder<'a> = &'a dyn Fn(&str) -> std::borrow::Cow<'_, [u8]>;

/// [`resolve`] for a link in a document of a legacy charset: as browsers
/// do, the query's non-ASCII characters are percent-encoded in the
/// document's encoding (the path is always UTF-8).
pub fn resolve_encoded(
    base: &url::Url,
    href: &str,
    query: Option<QueryEncoder<'_>>,
) -> Result<CanonicalUrl, UrlError> {
    let url = url::Url::options()
        .base_url(Some(base))
        .encoding_override(query)
        .parse(href.trim())
        .map_err(|e| UrlError::Invalid(format!("{href}: {e}")))?;
    from_url(url)
}

fn from_url(mut url: url::Url) -> Result<CanonicalUrl, UrlError> {
    match url.scheme() {
        "http" | "https" => {}
        other => return Err(UrlError::Scheme(other.to_string())),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(UrlError::NoHost);
    }
    url.set_fragment(None);
    // Copied only when there is an escape to look at.
    if let Cow::Owned(path) = normalize_escapes(url.path())
        && path != url.path()
    {
        url.set_path(&path);
    }
    if let Some(Cow::Owned(q)) = url.query().map(normalize_escapes)
        && Some(q.as_str()) != url.query()
    {
        url.set_query(Some(&q));
    }
    let len = url.as_str().len();
    if len > MAX_URL_BYTES {
        return Err(UrlError::TooLong(len));
    }
    let id = UrlId::of(url.as_str());
    Ok(CanonicalUrl { url, id })
}

/// Uppercases `%xx` escapes and decodes those of unreserved characters
/// (RFC 3986 section 6.2.2.2).
fn normalize_escapes(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let (h, l) = (b[i + 1], b[i + 2]);
            if let (Some(hv), Some(lv)) = (hex(h), hex(l)) {
                let byte = hv << 4 | lv;
                let unreserved =
                    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~');
                if unreserved && !(byte.is_ascii_hexdigit() && ends_in_stray_percent(&out)) {
                    out.push(byte as char);
                } else {
                    out.push('%');
                    out.push(h.to_ascii_uppercase() as char);
                    out.push(l.to_ascii_uppercase() as char);
                }
                i += 3;
                continue;
            }
        }
        // Safe: we only split at ASCII bytes, so `s[i..]` starts on a char boundary.
        let ch = s[i..].chars().next().unwrap_or('\u{FFFD}');
        out.push(ch);
        i += ch.len_utf8();
    }
    Cow::Owned(out)
}

/// Whether `out` ends with a `%` that starts no escape (`%` or `%h`): a
/// hex digit decoded after it would make one (`%0%61` → `%0a`), and
/// normalizing again would change the URL.
fn ends_in_stray_percent(out: &str) -> bool {
    let b = out.as_bytes();
    match b {
        [.., b'%'] => true,
        [.., b'%', h] => h.is_ascii_hexdigit(),
        _ => false,
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        normalize(s).unwrap().as_str().to_string()
    }

    #[test]
    fn normalizes_case_port_fragment_dots_and_escapes() {
        assert_eq!(
            n("HTTP://Example.COM:80/a/./b/../c#frag"),
            "http://example.com/a/c"
        );
        assert_eq!(n("https://example.com:443"), "https://example.com/");
        assert_eq!(n("http://example.com:8080/"), "http://example.com:8080/");
        assert_eq!(
            n("http://example.com/%7euser/%2f%3a?q=%7e%2b"),
            "http://example.com/~user/%2F%3A?q=~%2B"
        );
        assert_eq!(n("http://example.com/a%2"), "http://example.com/a%2");
        // Found by fuzzing: decoding must not make a new escape.
        assert_eq!(n("http://h/?%0%61"), "http://h/?%0%61");
        assert_eq!(n("http://h/%%61%7e"), "http://h/%%61~");
        assert_eq!(n("http://bücher.example/"), "http://xn--bcher-kva.example/");
    }

    #[test]
    fn host_of_stored_urls() {
        assert_eq!(host_of("http://a.b.org:8080/x"), "a.b.org");
        assert_eq!(
            host_of("https://xn--bcher-kva.example/?q"),
            "xn--bcher-kva.example"
        );
        assert_eq!(host_of("http://[::1]:80/"), "::1");
        assert_eq!(host_of("nonsense"), "");
        // Found by fuzzing: credentials are not the host.
        assert_eq!(host_of("http://%20@a/"), "a");
        assert_eq!(host_of("http://u:p@h.org:81/x@y"), "h.org");
        for u in ["http://h.org", "https://sub.h.org:444/p?q#f"] {
            assert_eq!(host_of(u), normalize(u).unwrap().host());
        }
    }

    #[test]
    fn rejects_other_schemes_and_long_urls() {
        assert!(matches!(
            normalize("mailto:a@b.c"),
            Err(UrlError::Scheme(_))
        ));
        assert!(matches!(
            normalize("ftp://x.org/"),
            Err(UrlError::Scheme(_))
        ));
        assert!(matches!(normalize("not a url"), Err(UrlError::Invalid(_))));
        let long = format!("http://x.org/{}", "a".repeat(3000));
        assert!(matches!(normalize(&long), Err(UrlError::TooLong(_))));
    }

    #[test]
    fn resolve_relative_and_ids_are_stable() {
        let base = url::Url::parse("http://h.org/a/b.html").unwrap();
        assert_eq!(
            resolve(&base, "../c?x#y").unwrap().as_str(),
            "http://h.org/c?x"
        );
        assert_eq!(
            normalize("http://H.org/c?x").unwrap().id(),
            resolve(&base, "/c?x").unwrap().id()
        );
        assert_eq!(
            normalize("http://h.org:81/").unwrap().host_key(),
            "http://h.org:81"
        );
    }
}
