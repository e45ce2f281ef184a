//! How text becomes search terms: runs of letters and digits are words,
//! lowercased and stemmed (English); Chinese, Japanese and Korean, written
//! without spaces, become overlapping pairs of characters (a lone one
//! stays alone), so a query of two or more such characters is a phrase of
//! pairs and finds exactly the texts holding it. A word longer than
//! [`MAX_WORD`] bytes is left out (a page of one 100,000-letter word
//! indexes nothing rather than one huge term).

use std::str::CharIndices;

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// The analyzer's name in the index's tokenizer manager.
pub const ANALYZER: &str = "trawl";

/// Longest word indexed, in bytes (tantivy's `en_stem` takes 40).
pub const MAX_WORD: usize = 40;

/// The analyzer for titles and texts, at index and at query time.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(WordsAndPairs::default())
        .filter(RemoveLongFilter::limit(MAX_WORD))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Whether `c` is written in a script without spaces between words.
fn unspaced(c: char) -> bool {
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
    chars: std::iter::Peekable<CharIndices<'a>>,
    token: &'a mut Token,
    /// The unspaced character before the next one, when it began a pair.
    paired: bool,
}

impl Tokenizer for WordsAndPairs {
    type TokenStream<'a> = WordsAndPairsStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordsAndPairsStream<'a> {
        self.token.reset();
        WordsAndPairsStream {
            text,
            chars: text.char_indices().peekable(),
            token: &mut self.token,
            paired: false,
        }
    }
}

impl WordsAndPairsStream<'_> {
    fn emit(&mut self, from: usize, to: usize) -> bool {
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.text.push_str(&self.text[from..to]);
        true
    }
}

impl TokenStream for WordsAndPairsStream<'_> {
    fn advance(&mut self) -> bool {
        self.token.text.clear();
        self.token.position = self.token.position.wrapping_add(1);
        while let Some((from, c)) = self.chars.next() {
            if unspaced(c) {
                let after = from + c.len_utf8();
                match self.chars.peek() {
                    Some(&(_, next)) if unspaced(next) => {
                        self.paired = true;
                        return self.emit(from, after + next.len_utf8());
                    }
                    // The last of a run of two or more is in the pair before.
                    _ if std::mem::take(&mut self.paired) => continue,
                    _ => return self.emit(from, after),
                }
            }
            self.paired = false;
            if c.is_alphanumeric() {
                let mut to = from + c.len_utf8();
                while let Some(&(at, next)) = self.chars.peek() {
                    if !next.is_alphanumeric() || unspaced(next) {
                        break;
                    }
                    to = at + next.len_utf8();
                    self.chars.next();
                }
                return self.emit(from, to);
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

    #[test]
    fn huge_words_are_left_out_and_huge_texts_stream() {
        let word = "x".repeat(100_000);
        assert_eq!(terms(&format!("keep {word} this")), ["keep", "this"]);
        let many = "word ".repeat(1_000_000);
        assert_eq!(terms(&many).len(), 1_000_000);
    }
}
