//! What a block's words say: a word's log-odds of standing in main content rather than in
//! boilerplate, learned from the gold, and each block's mean over its words.
//!
//! Kołcz & Yih (seed 001) judge blocks by their text as well as their structure. The trees see
//! a block's shape (length, links, punctuation, tags, classes) but not its words, and many of
//! the blocks they keep wrongly are told apart by words alone: a shop's reviews are written in
//! the first person ("I bought", "my"), legal notes and cookie notices in their own register
//! ("personal information", "may", "terms"), calls to action in a handful of verbs ("sign in",
//! "add to cart", "subscribe"). The lexicon turns that into one number per block, a feature
//! of the trees ([`super::features`]), which combine it with the page's kind and the block's
//! place. Fitting happens in `stencil train-content` ([`Lexicon::fit`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::blocks::Blocks;

/// A word's weight is clipped to ±this: one rare word must not outvote a sentence.
const CLIP: f32 = 4.0;

/// Word hash → log-odds of content.
///
/// Words are runs of alphanumeric characters and `_` (what `textf1.py`'s `\w+` finds),
/// lower-cased, hashed with xxh3 (`u64`: no collisions to speak of among the few tens of
/// thousands of words kept; [`super::words`]). A word not in the lexicon weighs 0, so a block
/// in an unseen language scores about 0: no evidence either way.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Lexicon {
    /// (word hash, weight), sorted by hash: the file form.
    words: Vec<(u64, f32)>,
    /// The lookup form ([`Lexicon::prepare`]): open addressing, linear probing, a power of two
    /// of slots, each `fingerprint << 8 | weight` in 32 bits (0: empty). Looking words up is
    /// most of the lexicon's cost: a general hash map of the 40,000 words (16 bytes a slot)
    /// takes a megabyte, and its loads, which miss the caches, would dominate the lexicon's
    /// time; these 4-byte slots take a quarter of that. The weight is kept to 8 bits (steps of
    /// `CLIP / 127`, 0.03) and the word to a 24-bit fingerprint beside its slot: two words would
    /// have to share both the fingerprint and the run of slots to be confused.
    #[serde(skip)]
    table: Vec<u32>,
}

impl PartialEq for Lexicon {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words
    }
}

impl Lexicon {
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Builds the lookup table after loading.
    pub fn prepare(&mut self) {
        if self.words.is_empty() {
            self.table = Vec::new();
            return;
        }
        let slots = (self.words.len() + self.words.len() / 2).next_power_of_two();
        let mask = slots - 1;
        self.table = vec![0; slots];
        for &(hash, weight) in &self.words {
            let mut slot = hash as usize & mask;
            while self.table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.table[slot] = fingerprint(hash) << 8 | u32::from(quantize(weight));
        }
    }

    /// A word's weight as the table holds it (what scoring and training both use).
    pub(crate) fn weight(&self, hash: u64) -> f32 {
        if self.table.is_empty() {
            return 0.0;
        }
        let mask = self.table.len() - 1;
        let wanted = fingerprint(hash);
        let mut slot = hash as usize & mask;
        loop {
            let entry = self.table[slot];
            if entry == 0 {
                return 0.0;
            }
            if entry >> 8 == wanted {
                return DEQUANTIZED[usize::from(entry as u8)];
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The mean weight of `words` (0 for none): a block's score from its [`block_words`].
    pub fn mean(&self, words: &[u64]) -> f32 {
        if words.is_empty() {
            return 0.0;
        }
        words.iter().map(|&w| self.weight(w)).sum::<f32>() / words.len() as f32
    }

    /// The mean weight of the words of every block (0 for a block without words; words too
    /// long to look up do not count).
    pub fn scores(&self, blocks: &Blocks) -> Vec<f32> {
        let mut sum = vec![0f32; blocks.len()];
        let mut count = vec![0u32; blocks.len()];
        // The words were hashed when the blocks were made ([`Blocks::words`]), so this is a
        // loop of lookups and nothing else: each is a load from a table too big for the L1
        // cache, and lookups placed between the byte loops of two words stall them (a large
        // share of the lexicon's time in `perf`); in a tight loop many are in flight at once.
        for &(b, hash) in &blocks.words {
            count[b as usize] += 1;
            sum[b as usize] += self.weight(hash);
        }
        sum.iter()
            .zip(&count)
            .map(|(&s, &c)| if c == 0 { 0.0 } else { s / c as f32 })
            .collect()
    }

    /// Fits a lexicon to labelled blocks: `(words of the block, content, weight)`, the words as
    /// [`block_words`] gives them. Each block spreads its weight over its words, so a long
    /// block counts as much as its weight says and no more. A word is kept when it occurs on
    /// at least `min_pages` distinct pages (`page` numbers the blocks' pages), so that no
    /// word learned from one page's text can stand for that page.
    ///
    /// `stencil train-content` fits out of fold: the score a training block's feature carries
    /// comes from a lexicon fitted without its host, or the trees would learn to trust scores
    /// that saw the block's own words.
    pub fn fit<'a>(
        blocks: impl IntoIterator<Item = (usize, &'a [u64], bool, f64)>,
        min_pages: u32,
    ) -> Lexicon {
        // word → (weight in content, weight in boilerplate, pages, last page seen)
        let mut counts: HashMap<u64, (f64, f64, u32, usize)> = HashMap::new();
        let (mut content, mut boilerplate) = (0f64, 0f64);
        for (page, words, is_content, weight) in blocks {
            if words.is_empty() {
                continue;
            }
            let share = weight / words.len() as f64;
            if is_content {
                content += weight;
            } else {
                boilerplate += weight;
            }
            for &word in words {
                let entry = counts.entry(word).or_insert((0.0, 0.0, 0, usize::MAX));
                if is_content {
                    entry.0 += share;
                } else {
                    entry.1 += share;
                }
                if entry.3 != page {
                    entry.2 += 1;
                    entry.3 = page;
                }
            }
        }
        // Additive smoothing: a word seen a little, or evenly, weighs about 0.
        let vocabulary = counts.len().max(1) as f64;
        let prior = (content + boilerplate) / vocabulary;
        let mut words: Vec<(u64, f32)> = counts
            .into_iter()
            .filter(|&(_, (_, _, pages, _))| pages >= min_pages)
            .map(|(word, (c, b, _, _))| {
                let odds = ((c + prior) / (content + prior * vocabulary)).ln()
                    - ((b + prior) / (boilerplate + prior * vocabulary)).ln();
                (word, (odds as f32).clamp(-CLIP, CLIP))
            })
            .collect();
        words.sort_unstable_by_key(|&(word, _)| word);
        let mut lexicon = Lexicon {
            words,
            table: Vec::new(),
        };
        lexicon.prepare();
        lexicon
    }
}

/// The top 24 bits of a word's hash, never 0 (0 marks an empty slot).
fn fingerprint(hash: u64) -> u32 {
    (hash >> 40) as u32 | 1
}

fn quantize(weight: f32) -> u8 {
    (weight.clamp(-CLIP, CLIP) / CLIP * 127.0).round() as i8 as u8
}

/// The weight a quantized byte stands for, computed for every byte in advance so that a lookup
/// multiplies and divides nothing.
const DEQUANTIZED: [f32; 256] = {
    let mut table = [0f32; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8 as i8) as f32 * CLIP / 127.0;
        byte += 1;
    }
    table
};

/// The hashed words of every block, for fitting: the words [`Lexicon::scores`] reads.
pub fn block_words(blocks: &Blocks) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new(); blocks.len()];
    for &(b, hash) in &blocks.words {
        out[b as usize].push(hash);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::page_models::content::blocks::blocks;
    use xxhash_rust::xxh3::xxh3_64;

    #[test]
    fn quantized_weights_round_trip_within_a_step() {
        for byte in 0..=255u8 {
            assert_eq!(
                DEQUANTIZED[usize::from(byte)],
                f32::from(byte as i8) * CLIP / 127.0
            );
        }
        for weight in [-CLIP, -1.3, 0.0, 0.01, 2.5, CLIP] {
            let back = DEQUANTIZED[usize::from(quantize(weight))];
            assert!(
                (back - weight).abs() <= CLIP / 254.0 + 1e-6,
                "{weight} → {back}"
            );
        }
    }

    #[test]
    fn the_lexicon_learns_which_words_mark_content() {
        let review =
            |page: usize| format!("<p>I bought this and my wife loves it, page {page}</p>");
        let story = |page: usize| format!("<p>The council voted on the budget, page {page}</p>");
        let mut examples = Vec::new();
        for page in 0..6 {
            let html = format!("<body>{}{}</body>", story(page), review(page));
            let dom = dom::parse(&html, 512);
            let b = blocks(&dom);
            examples.push(block_words(&b));
        }
        let labelled = examples.iter().enumerate().flat_map(|(page, words)| {
            [
                (page, words[0].as_slice(), true, 1.0),
                (page, words[1].as_slice(), false, 1.0),
            ]
        });
        let lexicon = Lexicon::fit(labelled, 3);
        // "page" and the digits occur in both kinds, the numbers on fewer than 3 pages.
        let weight = |w: &str| lexicon.weight(xxh3_64(w.as_bytes()));
        assert!(weight("council") > 0.5);
        assert!(weight("bought") < -0.5);
        assert!(weight("page").abs() < 0.3, "in both kinds alike");
        assert_eq!(weight("4"), 0.0, "seen on one page only");
        assert_eq!(weight("unseen"), 0.0);
        // Every word is found in the table with its weight, to the table's 8 bits.
        for &(hash, w) in &lexicon.words {
            assert!((lexicon.weight(hash) - w).abs() <= CLIP / 127.0 / 2.0 + 1e-6);
        }

        let dom = dom::parse(
            "<body><p>The council met.</p><p>I bought it.</p><p>Zzz qqq.</p></body>",
            512,
        );
        let scores = lexicon.scores(&blocks(&dom));
        assert!(scores[0] > 0.3 && scores[1] < -0.3, "{scores:?}");
        assert_eq!(scores[2], 0.0);

        // The file form round-trips.
        let json = serde_json::to_string(&lexicon).unwrap();
        let mut back: Lexicon = serde_json::from_str(&json).unwrap();
        back.prepare();
        assert_eq!(back, lexicon);
        assert_eq!(back.scores(&blocks(&dom)), scores);
        // Scoring a page and scoring its blocks' words agree (training uses the second).
        let by_words: Vec<f32> = block_words(&blocks(&dom))
            .iter()
            .map(|w| lexicon.mean(w))
            .collect();
        assert_eq!(by_words, scores);
    }
}
