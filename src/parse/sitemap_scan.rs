//! The byte stream a sitemap is read from, a window at a time: gzip is
//! inflated as it is read and nothing holds the whole file, so a 50 KB
//! gzip that inflates to 50 MB costs a window of memory, not 50 MB (or
//! 150 MB once invalid bytes became U+FFFD, as a whole-file decode made
//! them). Tokens are found in bytes (XML's delimiters are ASCII); text
//! comes out in pieces that the reader keeps only where it needs them.

use std::io::Read;

/// The protocol's bound on one sitemap file's bytes (decompressed).
pub const MAX_BYTES: usize = 50 * 1024 * 1024;

/// Bytes read from the source at a time.
const BLOCK: usize = 64 << 10;
/// A tag longer than this is skipped to its `>` without being kept.
const MAX_TAG: usize = 64 << 10;

/// What the scanner meets: an element opening or closing (local name,
/// namespace prefix dropped), a piece of character data (raw bytes, to be
/// unescaped by who keeps it; CDATA's is literal), or anything else.
pub(super) enum Token<'a> {
    Open(&'a str),
    Close(&'a str),
    Text(&'a [u8]),
    CData(&'a [u8]),
    Other,
}

/// The uncompressed bytes of a sitemap body, read through a window.
pub(super) struct Stream<'a> {
    src: Box<dyn Read + 'a>,
    buf: Vec<u8>,
    pos: usize,
    /// Bytes read from the source so far.
    read: usize,
    eof: bool,
    /// What ended the stream early (broken gzip, the 50 MB bound).
    pub problem: Option<String>,
    gzip: bool,
    /// Inside a CDATA section, a comment, or a tag too long to keep.
    mode: Mode,
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Markup,
    CData,
    Skip(&'static [u8]),
}

impl<'a> Stream<'a> {
    /// `body` as received (after any Content-Encoding); gzip by its magic.
    pub fn new(body: &'a [u8]) -> Stream<'a> {
        let gzip = body.starts_with(&[0x1f, 0x8b]);
        let src: Box<dyn Read + 'a> = if gzip {
            Box::new(flate2::read::MultiGzDecoder::new(body))
        } else {
            Box::new(body)
        };
        Stream {
            src,
            buf: Vec::with_capacity(BLOCK),
            pos: 0,
            read: 0,
            eof: false,
            problem: None,
            gzip,
            mode: Mode::Markup,
        }
    }

    /// Bytes the window holds now (for the memory budget).
    pub fn window(&self) -> usize {
        self.buf.capacity()
    }

    /// Reads another block after what is unread; false at the end.
    fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let room = BLOCK.min(MAX_BYTES + 1 - self.read);
        let start = self.buf.len();
        self.buf.resize(start + room, 0);
        let n = loop {
            match self.src.read(&mut self.buf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.problem = Some(format!(
                        "gzip data broken after {} bytes: {}",
                        self.read,
                        clip(&e.to_string(), 100)
                    ));
                    break 0;
                }
            }
        };
        self.buf.truncate(start + n);
        self.read += n;
        if self.read > MAX_BYTES {
            self.buf.truncate(self.buf.len() - (self.read - MAX_BYTES));
            let how = if self.gzip { " uncompressed" } else { "" };
            self.problem = Some(format!(
                "over {} MB{how}: read up to there",
                MAX_BYTES >> 20
            ));
            self.eof = true;
        }
        if n == 0 {
            self.eof = true;
        }
        n > 0
    }

    /// The first byte that is not a byte-order mark or white space (None:
    /// the file has none).
    pub fn first_byte(&mut self) -> Option<u8> {
        // The first block is at least 3 bytes unless the file is shorter.
        while self.buf.len() < 3 && self.fill() {}
        if self.buf.starts_with(b"\xEF\xBB\xBF") {
            self.pos = 3;
        }
        loop {
            let rest = &self.buf[self.pos..];
            let space = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
            self.pos += space;
            if let Some(&b) = self.buf.get(self.pos) {
                return Some(b);
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// The next line's bytes, in pieces: `(piece, line_ends)`.
    pub fn line_piece(&mut self) -> Option<(&[u8], bool)> {
        if self.pos >= self.buf.len() && !self.fill() {
            return None;
        }
        let rest = &self.buf[self.pos..];
        match memchr::memchr(b'\n', rest) {
            Some(nl) => {
                self.pos += nl + 1;
                Some((&rest[..nl], true))
            }
            None => {
                self.pos = self.buf.len();
                Some((rest, false))
            }
        }
    }

    /// The next token, or an error naming where the file is cut short.
    pub fn token(&mut self) -> Option<Result<Token<'_>, String>> {
        loop {
            let was_eof = self.eof;
            let found = if self.pos >= self.buf.len() {
                Found::More
            } else {
                match self.mode {
                    Mode::CData => self.cdata(),
                    Mode::Skip(close) => self.skip_to(close),
                    Mode::Markup if self.buf[self.pos] != b'<' => self.text(),
                    Mode::Markup => self.markup(),
                }
            };
            match found {
                // The end just came: look again knowing it.
                Found::More if self.fill() || !was_eof => continue,
                Found::More if self.mode == Mode::Markup && self.pos >= self.buf.len() => {
                    return None;
                }
                Found::More => {
                    let e = self.cut_short();
                    self.pos = self.buf.len();
                    self.mode = Mode::Markup;
                    return Some(Err(e));
                }
                Found::Again => continue,
                Found::Text(a, b) => return Some(Ok(Token::Text(&self.buf[a..b]))),
                Found::CData(a, b) => return Some(Ok(Token::CData(&self.buf[a..b]))),
                Found::Tag(a, b) => return Some(Ok(tag(&self.buf[a..b]))),
                Found::Other => return Some(Ok(Token::Other)),
            }
        }
    }

    fn cut_short(&self) -> String {
        format!(
            "cut short: an unclosed tag at byte {}",
            self.read - (self.buf.len() - self.pos)
        )
    }

    /// Character data up to the next `<` or the window's end.
    fn text(&mut self) -> Found {
        let rest = &self.buf[self.pos..];
        let end = memchr::memchr(b'<', rest).unwrap_or(rest.len());
        let start = self.pos;
        self.pos += end;
        Found::Text(start, self.pos)
    }

    /// A piece of a CDATA section's content.
    fn cdata(&mut self) -> Found {
        let rest = &self.buf[self.pos..];
        let start = self.pos;
        if let Some(at) = memchr::memmem::find(rest, b"]]>") {
            self.pos += at + 3;
            self.mode = Mode::Markup;
            return Found::CData(start, start + at);
        }
        // Keep back what could be the start of `]]>`.
        let take = rest.len().saturating_sub(2);
        if take == 0 {
            return Found::More;
        }
        self.pos += take;
        Found::CData(start, self.pos)
    }

    /// Consumes up to and past `close`, across windows.
    fn skip_to(&mut self, close: &[u8]) -> Found {
        let rest = &self.buf[self.pos..];
        if let Some(at) = memchr::memmem::find(rest, close) {
            self.pos += at + close.len();
            self.mode = Mode::Markup;
            return Found::Other;
        }
        let keep = (close.len() - 1).min(rest.len());
        self.pos += rest.len() - keep;
        Found::More
    }

    /// At a `<`: a tag, a comment, CDATA or a declaration.
    fn markup(&mut self) -> Found {
        let rest = &self.buf[self.pos..];
        if rest.len() < 9 && !self.eof {
            return Found::More;
        }
        if rest.starts_with(b"<!--") {
            self.pos += 4;
            self.mode = Mode::Skip(b"-->");
            return Found::Again;
        }
        if rest.starts_with(b"<![CDATA[") {
            self.pos += 9;
            self.mode = Mode::CData;
            return Found::Again;
        }
        let Some(gt) = memchr::memchr(b'>', rest) else {
            if rest.len() > MAX_TAG {
                // Too long to be a sitemap's tag: skipped, never kept.
                self.mode = Mode::Skip(b">");
                return Found::Again;
            }
            return Found::More;
        };
        let start = self.pos;
        self.pos += gt + 1;
        match rest.get(1) {
            Some(b'?' | b'!') => Found::Other,
            _ => Found::Tag(start + 1, start + gt),
        }
    }
}

/// What the scanner found, as positions in its window (the token is made
/// from them once the window stops changing).
enum Found {
    /// The window must grow (or the file ended).
    More,
    /// The mode changed: look again.
    Again,
    Text(usize, usize),
    CData(usize, usize),
    /// A tag's inside, between `<` and `>`.
    Tag(usize, usize),
    Other,
}

/// A tag's inside (between `<` and `>`) as a token.
fn tag(inner: &[u8]) -> Token<'_> {
    let (closing, body) = match inner.strip_prefix(b"/") {
        Some(b) => (true, b),
        None => (false, inner),
    };
    let end = body
        .iter()
        .position(|&c| c.is_ascii_whitespace() || c == b'/')
        .unwrap_or(body.len());
    let name = &body[..end];
    let local = match memchr::memrchr(b':', name) {
        Some(c) => &name[c + 1..],
        None => name,
    };
    // A name that is not UTF-8 matches no sitemap element.
    let local = std::str::from_utf8(local).unwrap_or("\u{fffd}");
    match (closing, inner.ends_with(b"/")) {
        (true, _) => Token::Close(local),
        // `<loc/>`: empty, opened and closed.
        (false, true) => Token::Other,
        (false, false) => Token::Open(local),
    }
}

/// `s` cut to at most `n` bytes (on a char boundary), with `…` if cut.
pub(super) fn clip(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}
