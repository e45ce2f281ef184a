//! How text becomes search terms: runs of letters and digits are words,
//! lowercased and stemmed (English); Chinese, Japanese and Korean, written
//! without spaces, become overlapping pairs of characters (a lone one
//! stays alone), so a query of two or more such characters is a phrase of
//! pairs and finds exactly the texts holding it (a break between tokens
//! leaves a gap in their positions, so no phrase spans punctuation). A word
//! longer than [`MAX_WORD`] bytes is left out (a page of one 100,000-letter
//! word indexes nothing rather than one huge term).

use std::cell::RefCell;
use std::collections::HashMap;

use tantivy::Index;
use tantivy::tokenizer::{
    RemoveLongFilter, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};

/// The analyzer's name in the index's tokenizer manager.
pub const ANALYZER: &str = "trawl";

/// The analyzer of the words fields, which `text ~` and `title ~` are
/// answered from: the same words and pairs, folded ([`fold`]) but not
/// stemmed, and a word over [`MAX_WORD`] bytes kept as [`LONG_WORD`].
pub const WORDS_ANALYZER: &str = "trawl_words";

/// The term every word over [`MAX_WORD`] bytes becomes in the words
/// fields: a control character, which no token holds. A page that has one
/// is a candidate of every substring test.
pub const LONG_WORD: &str = "\u{1}";

/// Longest word indexed, in bytes (tantivy's `en_stem` takes 40).
pub const MAX_WORD: usize = 40;

/// The analyzer for titles and texts, at index and at query time.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(WordsAndPairs::default())
        // It keeps tokens shorter than its limit.
        .filter(RemoveLongFilter::limit(MAX_WORD + 1))
        .filter(LowerStem)
        .build()
}

/// The analyzer of the words fields (see [`WORDS_ANALYZER`]).
pub fn words_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(WordsAndPairs::default())
        .filter(Fold)
        .build()
}

/// Registers both analyzers with `index` (they are not saved in it).
pub fn register(index: &Index) {
    index.tokenizers().register(ANALYZER, analyzer());
    index
        .tokenizers()
        .register(WORDS_ANALYZER, words_analyzer());
}

/// `s` lowercased as `str::to_lowercase` does (what `~` compares), with
/// the final sigma as σ: a token lowered on its own cannot tell whether
/// its Σ ends a word, and that is the one mapping that depends on it.
pub fn fold(s: &str) -> String {
    let lower = s.to_lowercase();
    match lower.contains('ς') {
        true => lower.replace('ς', "σ"),
        false => lower,
    }
}

/// Folds each token as [`fold`] does, character by character; a word over
/// [`MAX_WORD`] bytes becomes [`LONG_WORD`].
#[derive(Clone)]
pub struct Fold;

impl TokenFilter for Fold {
    type Tokenizer<T: Tokenizer> = FoldFilter<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> FoldFilter<T> {
        FoldFilter(inner)
    }
}

#[derive(Clone)]
pub struct FoldFilter<T>(T);

impl<T: Tokenizer> Tokenizer for FoldFilter<T> {
    type TokenStream<'a> = FoldStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        FoldStream(self.0.token_stream(text))
    }
}

pub struct FoldStream<T>(T);

impl<T: TokenStream> TokenStream for FoldStream<T> {
    fn advance(&mut self) -> bool {
        if !self.0.advance() {
            return false;
        }
        let text = &mut self.0.token_mut().text;
        if text.len() > MAX_WORD {
            text.clear();
            text.push_str(LONG_WORD);
        } else if text.is_ascii() {
            text.make_ascii_lowercase();
        } else if !is_pair(text) {
            *text = text
                .chars()
                .flat_map(char::to_lowercase)
                .map(|c| if c == 'ς' { 'σ' } else { c })
                .collect();
        }
        true
    }

    fn token(&self) -> &Token {
        self.0.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.0.token_mut()
    }
}

/// Words whose stems a thread keeps (a few MB): in a crawl's pages most
/// words are ones seen before.
const STEMS_KEPT: usize = 65_536;

thread_local! {
    static STEMS: RefCell<StemCache> = RefCell::new(StemCache {
        stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
        stems: HashMap::default(),
    });
}

/// English stems of lowercased words, remembered: stemming was a third
/// of the indexing's CPU (perf, `reindex search` of the 50,000-page bench
/// db), nearly all of it spent on words stemmed before.
struct StemCache {
    stemmer: frostem::Stemmer,
    /// foldhash: SipHash was a tenth of the cache's time; seeded at
    /// random, so pages cannot be written to collide.
    stems: HashMap<Box<str>, Box<str>, foldhash::fast::RandomState>,
}

impl StemCache {
    fn stem(&mut self, word: &mut String) {
        if let Some(stem) = self.stems.get(word.as_str()) {
            word.clear();
            word.push_str(stem);
            return;
        }
        let stem: Box<str> = self.stemmer.stem(word).into();
        if self.stems.len() >= STEMS_KEPT {
            self.stems.clear();
        }
        self.stems.insert(word.as_str().into(), stem.clone());
        word.clear();
        word.push_str(&stem);
    }
}

/// Lowercases each token (character by character, as tantivy's
/// `LowerCaser`) and stems it (English, as its `Stemmer`), from
/// [`StemCache`].
#[derive(Clone)]
pub struct LowerStem;

impl TokenFilter for LowerStem {
    type Tokenizer<T: Tokenizer> = LowerStemFilter<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> LowerStemFilter<T> {
        LowerStemFilter(inner)
    }
}

#[derive(Clone)]
pub struct LowerStemFilter<T>(T);

impl<T: Tokenizer> Tokenizer for LowerStemFilter<T> {
    type TokenStream<'a> = LowerStemStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        LowerStemStream(self.0.token_stream(text))
    }
}

pub struct LowerStemStream<T>(T);

impl<T: TokenStream> TokenStream for LowerStemStream<T> {
    fn advance(&mut self) -> bool {
        if !self.0.advance() {
            return false;
        }
        let text = &mut self.0.token_mut().text;
        if text.is_ascii() {
            text.make_ascii_lowercase();
        } else if is_pair(text) {
            return true;
        } else {
            *text = text.chars().flat_map(char::to_lowercase).collect();
        }
        // English leaves a word under three letters as it is.
        if text.len() >= 3 {
            STEMS.with(|c| c.borrow_mut().stem(text));
        }
        true
    }

    fn token(&self) -> &Token {
        self.0.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.0.token_mut()
    }
}

/// Whether a token is a pair (or a lone one) of unspaced characters,
/// which have no case and no stem.
fn is_pair(token: &str) -> bool {
    token.chars().next().is_some_and(unspaced)
}

/// Whether `c` is written in a script without spaces between words.
pub fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F) // CJK Extensions B–F, Compatibility Supplement
}

/// See the module: words, and pairs of unspaced characters.
#[derive(Clone, Default)]
pub struct WordsAndPairs {
    token: Token,
}

pub struct WordsAndPairsStream<'a> {
    text: &'a str,
    /// The byte the next character starts at.
    at: usize,
    token: &'a mut Token,
    /// The unspaced character before the next one, when it began a pair.
    paired: bool,
    /// A break was passed since the last token (its position gap is given).
    gap: bool,
}

impl Tokenizer for WordsAndPairs {
    type TokenStream<'a> = WordsAndPairsStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordsAndPairsStream<'a> {
        self.token.reset();
        WordsAndPairsStream {
            text,
            at: 0,
            token: &mut self.token,
            paired: false,
            gap: false,
        }
    }
}

/// What a character is to the tokenizer.
#[derive(PartialEq)]
enum Class {
    Break,
    Letter,
    Unspaced,
}

impl WordsAndPairsStream<'_> {
    fn emit(&mut self, from: usize, to: usize) -> bool {
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.text.push_str(&self.text[from..to]);
        true
    }

    /// The character at byte `at` (there must be one), its length and
    /// class; ASCII without decoding, as most text is.
    fn char_at(&self, at: usize) -> (usize, Class) {
        let b = self.text.as_bytes()[at];
        if b.is_ascii() {
            let class = match b.is_ascii_alphanumeric() {
                true => Class::Letter,
                false => Class::Break,
            };
            return (1, class);
        }
        let c = self.text[at..].chars().next().unwrap_or(' ');
        let class = if unspaced(c) {
            Class::Unspaced
        } else if c.is_alphanumeric() {
            Class::Letter
        } else {
            Class::Break
        };
        (c.len_utf8(), class)
    }
}

impl TokenStream for WordsAndPairsStream<'_> {
    fn advance(&mut self) -> bool {
        self.token.text.clear();
        self.token.position = self.token.position.wrapping_add(1);
        let len = self.text.len();
        while self.at < len {
            let from = self.at;
            let (width, class) = self.char_at(from);
            self.at += width;
            match class {
                Class::Break => {
                    // The next token is not adjacent to the last.
                    if self.token.position != 0 && !std::mem::replace(&mut self.gap, true) {
                        self.token.position = self.token.position.wrapping_add(1);
                    }
                    self.paired = false;
                }
                Class::Unspaced => {
                    self.gap = false;
                    let after = self.at;
                    match (after < len).then(|| self.char_at(after)) {
                        Some((next, Class::Unspaced)) => {
                            self.paired = true;
                            return self.emit(from, after + next);
                        }
                        // The last of a run of two or more is in the pair before.
                        _ if std::mem::take(&mut self.paired) => {}
                        _ => return self.emit(from, after),
                    }
                }
                Class::Letter => {
                    self.gap = false;
                    self.paired = false;
                    while self.at < len {
                        match self.char_at(self.at) {
                            (w, Class::Letter) => self.at += w,
                            _ => break,
                        }
                    }
                    return self.emit(from, self.at);
                }
            }
        }
        false
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        let mut a = analyzer();
        let mut s = a.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = s.next() {
            out.push(t.text.clone());
        }
        out
    }

    /// The cached filter gives what tantivy's lowercaser and stemmer give,
    /// the first time and from the cache.
    #[test]
    fn cached_stems_are_tantivys() {
        use tantivy::tokenizer::{Language, LowerCaser, Stemmer};
        let text = "Archives ARCHIVED running Runs ΣΟΦΟΣ Straße naïve İstanbul \
                    generously 論文 crawlers' Crawling HTTP/2 caféS a Is ys ÉT 東京タワー2025年 \
                    한국어x ὈΔΥΣΣΕΎΣ";
        let mut theirs = TextAnalyzer::builder(WordsAndPairs::default())
            .filter(RemoveLongFilter::limit(MAX_WORD + 1))
            .filter(LowerCaser)
            .filter(Stemmer::new(Language::English))
            .build();
        let mut want = Vec::new();
        let mut stream = theirs.token_stream(text);
        while let Some(t) = stream.next() {
            want.push(t.text.clone());
        }
        assert_eq!(terms(text), want);
        assert_eq!(terms(text), want);
    }

    #[test]
    fn words_are_stemmed_and_unspaced_scripts_paired() {
        assert_eq!(terms("Archives, archived!"), ["archiv", "archiv"]);
        assert_eq!(terms("论文 今天好"), ["论文", "今天", "天好"]);
        assert_eq!(terms("a论b"), ["a", "论", "b"]);
        assert_eq!(
            terms("東京タワー2025年"),
            ["東京", "京タ", "タワ", "ワー", "2025", "年"]
        );
        assert_eq!(terms("한국어"), ["한국", "국어"]);
    }

    fn positions(text: &str) -> Vec<(String, usize)> {
        let mut a = analyzer();
        let mut s = a.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = s.next() {
            out.push((t.text.clone(), t.position));
        }
        out
    }

    /// Adjacent tokens are one position apart, tokens across a break
    /// two: `运动员` (a phrase of 运动, 动员) is not found in `运动，动员`.
    #[test]
    fn a_break_leaves_a_gap_in_positions() {
        let p = |t: &str, n| (t.to_string(), n);
        assert_eq!(positions("运动员"), [p("运动", 0), p("动员", 1)]);
        assert_eq!(positions("运动，动员"), [p("运动", 0), p("动员", 2)]);
        assert_eq!(positions("a b,, c"), [p("a", 0), p("b", 2), p("c", 4)]);
        assert_eq!(positions(" 论文x"), [p("论文", 0), p("x", 1)]);
        assert_eq!(terms(&"y".repeat(MAX_WORD)).len(), 1);
        assert!(terms(&"y".repeat(MAX_WORD + 1)).is_empty());
    }

    #[test]
    fn huge_words_are_left_out_and_huge_texts_stream() {
        let word = "x".repeat(100_000);
        assert_eq!(terms(&format!("keep {word} this")), ["keep", "this"]);
        let many = "word ".repeat(1_000_000);
        assert_eq!(terms(&many).len(), 1_000_000);
    }

    /// The tokens, offsets and positions of a plain char-by-char reading
    /// of the rules (the tokenizer reads bytes), on random mixtures of
    /// ASCII, accented, unspaced and break characters.
    #[test]
    fn the_byte_reader_tokenizes_as_the_rules_say() {
        fn reference(text: &str) -> Vec<(String, usize, usize)> {
            let chars: Vec<(usize, char)> = text.char_indices().collect();
            let letter = |c: char| c.is_alphanumeric() && !unspaced(c);
            let (mut out, mut pos, mut gap, mut paired) = (Vec::new(), 0usize, false, false);
            let push = |from: usize, to: usize, pos: &mut usize, out: &mut Vec<_>| {
                out.push((text[from..to].to_string(), from, *pos));
                *pos += 1;
            };
            let mut i = 0;
            while i < chars.len() {
                let (from, c) = chars[i];
                let end = |j: usize| chars.get(j).map_or(text.len(), |x| x.0);
                if unspaced(c) {
                    gap = false;
                    match chars.get(i + 1) {
                        Some(&(_, n)) if unspaced(n) => {
                            paired = true;
                            push(from, end(i + 2), &mut pos, &mut out);
                        }
                        _ if std::mem::take(&mut paired) => {}
                        _ => push(from, end(i + 1), &mut pos, &mut out),
                    }
                    i += 1;
                } else if letter(c) {
                    (gap, paired) = (false, false);
                    let mut j = i + 1;
                    while j < chars.len() && letter(chars[j].1) {
                        j += 1;
                    }
                    push(from, end(j), &mut pos, &mut out);
                    i = j;
                } else {
                    if !out.is_empty() && !std::mem::replace(&mut gap, true) {
                        pos += 1;
                    }
                    paired = false;
                    i += 1;
                }
            }
            out
        }
        let alphabet = [
            'a', 'Z', '7', ' ', ',', 'é', 'ß', 'Σ', '论', '文', 'ー', '한', '\u{307}', '—', '𠀀',
        ];
        let mut seed = 0x2545_f491_u64;
        for _ in 0..3_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (seed >> 59) as usize;
            let text: String = (0..len)
                .map(|k| alphabet[((seed >> (k * 3 % 50)) % alphabet.len() as u64) as usize])
                .collect();
            let mut w = WordsAndPairs::default();
            let mut stream = w.token_stream(&text);
            let mut got = Vec::new();
            while let Some(t) = stream.next() {
                got.push((t.text.clone(), t.offset_from, t.position));
            }
            assert_eq!(got, reference(&text), "{text:?}");
        }
    }
}
