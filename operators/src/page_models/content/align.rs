//! Human gold text carried over to a page's blocks, and the token metric it is judged by.
//!
//! Gold main text comes as plain text (dragnet, cleanportaleval, WCXB; L3S-GN1's labelled text
//! nodes joined), not as nodes, so training labels are found by aligning it with the page:
//! a page token is *in the gold* when one of the three word trigrams that contain it (the
//! token with its two neighbours on either side, in reading order) is a trigram of the gold.
//! Trigrams, not single words, because the words of a menu ("home", "news", "sport") are in
//! most gold texts too; and not longer n-grams, because gold and page differ in small ways
//! (a word the gold's tool split differently, a figure's caption the gold leaves out) and a
//! short block needs its neighbours to be matched at all. A block's label is the share of its
//! tokens in the gold.
//!
//! The metric is `../shared/tools/textf1.py`'s: lower-cased `\w+` tokens, bag-of-words
//! precision and recall per page.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

use super::blocks::{Blocks, NONE};
use crate::dom::Dom;

/// A word character of [`tokens`].
pub fn is_word_char(c: char) -> bool {
    c == '_'
        || c.is_alphanumeric()
        || matches!(c,
            '\u{0300}'..='\u{036f}'
            | '\u{1ab0}'..='\u{1aff}'
            | '\u{1dc0}'..='\u{1dff}'
            | '\u{20d0}'..='\u{20ff}'
            | '\u{fe20}'..='\u{fe2f}')
}

/// Lower-cased word tokens, as `textf1.py` scores them (`re.findall(r"\w+", text.lower())`):
/// maximal runs of word characters, where a word character is `_`, anything
/// [`char::is_alphanumeric`] accepts, or a mark in the generic combining-diacritics blocks
/// (U+0300–036F, U+1AB0–1AFF, U+1DC0–1DFF, U+20D0–20FF, U+FE20–FE2F).
///
/// Differences from Python's `re` `\w` (Unicode 14 in Python 3.11), which is letters,
/// numbers and `_` only: we also count as word characters the combining marks that Rust
/// calls Alphabetic (most Indic vowel signs, Arabic harakat, Hebrew points; ~1,300 code
/// points), the five blocks above (so NFD `e` + U+0301 is one token, not `e`), circled
/// letters (Ⓐ) and letters newer than Unicode 14. Other marks (e.g. the Devanagari virama
/// U+094D) split words, in both. On text without combining marks the two agree.
pub fn tokens(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in lower.char_indices() {
        if is_word_char(c) {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            out.push(lower[s..i].to_string());
        }
    }
    if let Some(s) = start {
        out.push(lower[s..].to_string());
    }
    out
}

/// Bag-of-words agreement of an extracted text with a gold text, as `textf1.py` counts it:
/// both are multisets of [`tokens`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenOverlap {
    pub matched: u64,
    pub predicted: u64,
    pub gold: u64,
}

impl TokenOverlap {
    pub fn of(predicted: &str, gold: &str) -> TokenOverlap {
        let mut available: HashMap<String, u64> = HashMap::new();
        let mut count = TokenOverlap::default();
        for token in tokens(gold) {
            *available.entry(token).or_default() += 1;
            count.gold += 1;
        }
        for token in tokens(predicted) {
            count.predicted += 1;
            if let Some(left) = available.get_mut(&token).filter(|n| **n > 0) {
                *left -= 1;
                count.matched += 1;
            }
        }
        count
    }

    /// Token F1; by textf1.py's convention an empty gold scores 1 if the prediction is empty
    /// too, else 0.
    pub fn f1(&self) -> f64 {
        if self.gold == 0 {
            return if self.predicted == 0 { 1.0 } else { 0.0 };
        }
        2.0 * self.matched as f64 / (self.predicted + self.gold) as f64
    }

    pub fn precision(&self) -> f64 {
        if self.predicted == 0 {
            0.0
        } else {
            self.matched as f64 / self.predicted as f64
        }
    }

    pub fn recall(&self) -> f64 {
        if self.gold == 0 {
            0.0
        } else {
            self.matched as f64 / self.gold as f64
        }
    }

    pub fn add(&mut self, other: TokenOverlap) {
        self.matched += other.matched;
        self.predicted += other.predicted;
        self.gold += other.gold;
    }
}

/// How much of one block the gold holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockGold {
    pub tokens: u32,
    /// Tokens found in the gold (see the module docs).
    pub in_gold: u32,
}

impl BlockGold {
    /// The share of the block's tokens in the gold.
    pub fn share(&self) -> f32 {
        if self.tokens == 0 {
            0.0
        } else {
            self.in_gold as f32 / self.tokens as f32
        }
    }
}

fn trigram(a: u64, b: u64, c: u64) -> u64 {
    a.rotate_left(42) ^ b.rotate_left(21) ^ c
}

fn token_hashes(text: &str, out: &mut Vec<u64>) {
    for token in tokens(text) {
        out.push(xxh3_64(token.as_bytes()));
    }
}

/// The gold share of every block of a page.
pub fn block_gold(dom: &Dom, blocks: &Blocks, gold: &str) -> Vec<BlockGold> {
    let mut gold_tokens = Vec::new();
    token_hashes(gold, &mut gold_tokens);
    let mut page_tokens: Vec<u64> = Vec::new();
    let mut token_block: Vec<u32> = Vec::new();
    for i in 0..dom.len() {
        let block = blocks.of_node[i];
        if block == NONE {
            continue;
        }
        let before = page_tokens.len();
        token_hashes(dom.visible_text(i).unwrap_or(""), &mut page_tokens);
        token_block.resize(page_tokens.len(), block);
        debug_assert!(token_block.len() >= before);
    }
    let mut out = vec![BlockGold::default(); blocks.len()];
    let in_gold: Vec<bool> = if gold_tokens.len() < 3 || page_tokens.len() < 3 {
        let words: std::collections::HashSet<u64> = gold_tokens.iter().copied().collect();
        page_tokens.iter().map(|t| words.contains(t)).collect()
    } else {
        let grams: std::collections::HashSet<u64> = gold_tokens
            .windows(3)
            .map(|w| trigram(w[0], w[1], w[2]))
            .collect();
        let n = page_tokens.len();
        let mut hit = vec![false; n];
        for j in 0..n - 2 {
            let t = &page_tokens[j..j + 3];
            if grams.contains(&trigram(t[0], t[1], t[2])) {
                hit[j] = true;
                hit[j + 1] = true;
                hit[j + 2] = true;
            }
        }
        hit
    };
    for (&block, &hit) in token_block.iter().zip(&in_gold) {
        let b = &mut out[block as usize];
        b.tokens += 1;
        b.in_gold += u32::from(hit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::page_models::content::blocks::blocks;

    #[test]
    fn tokens_are_textf1s() {
        assert_eq!(tokens("Héllo, wörld_2 — 42!"), ["héllo", "wörld_2", "42"]);
        let o = TokenOverlap::of("a b b c", "b c c d");
        assert_eq!((o.matched, o.predicted, o.gold), (2, 4, 4));
        assert_eq!(o.f1(), 0.5);
        assert_eq!(TokenOverlap::of("", "").f1(), 1.0);
    }

    #[test]
    fn gold_text_labels_the_blocks_that_carry_it() {
        let dom = dom::parse(
            "<body><ul><li><a href=/>Home</a></li><li><a href=/news>News</a></li></ul>\
             <h1>Rain in Spain</h1><p>The rain in Spain stays mainly in the plain, they say.</p>\
             <p>Share this story</p><p>Home News and more from the plain</p></body>",
            512,
        );
        let blocks = blocks(&dom);
        let gold = "Rain in Spain\n\nThe rain in Spain stays mainly in the plain, they say.";
        let labels = block_gold(&dom, &blocks, gold);
        let shares: Vec<f32> = labels.iter().map(BlockGold::share).collect();
        assert_eq!(
            shares[0], 0.0,
            "Home: a gold word, but not in a gold trigram"
        );
        assert_eq!(shares[1], 0.0);
        assert_eq!(shares[2], 1.0, "the headline");
        assert_eq!(shares[3], 1.0, "the story");
        assert_eq!(shares[4], 0.0, "share this story");
        assert!(shares[5] < 0.5, "menu words in another order");
    }
}
