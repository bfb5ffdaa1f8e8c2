//! Kołcz & Yih's candidate blocks (seed 001, §4.1): visual-block elements with enough text,
//! each fingerprinted by its text, so that one block counts once per page whatever its markup.
//! SiteLevel(θ) counts these fingerprints when `--labels kolcz` asks for them
//! ([`crate::site::site_level`]), and [`crate::site::labels::kolcz`] labels a page's blocks.

use xxhash_rust::xxh3::xxh3_64;

use crate::dom::text::PageText;
use crate::dom::Dom;

/// The elements Kołcz & Yih take as visual blocks (§4.1).
pub const BLOCK_TAGS: &[&str] = &[
    "blockquote",
    "dd",
    "div",
    "dl",
    "dt",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "ol",
    "pre",
    "small",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];
/// A candidate block shows at least this many characters of normalized text...
pub const KOLCZ_MIN_CHARS: usize = 40;
/// ... made of at least this many distinct words.
pub const KOLCZ_MIN_WORDS: usize = 3;

/// A candidate block of [`kolcz_blocks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub node: usize,
    /// Hash of the block's normalized text: blocks with different markup but the same text are
    /// the same block (the paper's MD5 of the text).
    pub fingerprint: u64,
}

/// The page's candidate blocks in document order. A block nested in a block with the same
/// text (a `div` wrapping one `div`) is the same block and is left out ("duplicates were also
/// ignored").
pub fn kolcz_blocks(dom: &Dom, text: &PageText) -> Vec<Block> {
    let mut blocks = Vec::new();
    // The fingerprint of each node's nearest enclosing block, to spot nested duplicates.
    let mut enclosing = vec![0u64; dom.len()];
    for i in 0..dom.len() {
        let inherited = dom.parent(i).map_or(0, |p| enclosing[p]);
        enclosing[i] = inherited;
        let Some(tag) = dom.tag(i) else { continue };
        if !BLOCK_TAGS.contains(&&**tag) {
            continue;
        }
        let block_text = text.of(dom, i);
        if block_text.chars().count() < KOLCZ_MIN_CHARS || !has_distinct_words(block_text) {
            continue;
        }
        let fingerprint = xxh3_64(block_text.as_bytes()).max(1);
        enclosing[i] = fingerprint;
        if fingerprint != inherited {
            blocks.push(Block {
                node: i,
                fingerprint,
            });
        }
    }
    blocks
}

fn has_distinct_words(text: &str) -> bool {
    let mut seen: Vec<&str> = Vec::with_capacity(KOLCZ_MIN_WORDS);
    for word in text.split(' ') {
        if !seen.contains(&word) {
            seen.push(word);
            if seen.len() >= KOLCZ_MIN_WORDS {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(dom: &Dom, id: &str) -> usize {
        (0..dom.len()).find(|&i| dom.id(i) == Some(id)).unwrap()
    }

    #[test]
    fn kolcz_blocks_need_forty_chars_and_three_words() {
        let dom = crate::dom::parse(
            "<body><div id=a><div id=b>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</div>\
             <ul id=c><li id=d>one two three four five six seven eight nine</li></ul></div>\
             <span id=e>one two three four five six seven eight nine ten</span></body>",
            64,
        );
        let blocks = kolcz_blocks(&dom, &PageText::new(&dom));
        let nodes: Vec<usize> = blocks.iter().map(|b| b.node).collect();
        // b has one word; ul c and li d have the same text (d is a duplicate of c); span is no
        // block tag.
        assert_eq!(nodes, vec![find(&dom, "a"), find(&dom, "c")]);
    }
}
