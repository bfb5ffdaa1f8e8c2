//! Text no reader reads: strings of machine identifiers in the page's text.
//!
//! Some pages put identifiers in their markup as text and hide them with a style sheet: eBay
//! spells the "Sponsored" label of every card of its item carousels as single letters between
//! UUIDs (`S` `19aea247-2e76-4905-9b83-15a5a5664cfa` `G` `661bd3c3-…` `p` …), and the page's
//! style sheet moves the UUIDs off screen and hides the decoy letters. Stencil reads inline
//! styles, not style sheets (a style sheet's `display: none` hides expandable stories and
//! accordion panels the gold keeps about as often as menus, docs/evaluation.md), so the
//! label is about a thousand characters of hexadecimal here, and the trees, which have never
//! seen such a block, call it content about as often as not (docs/evaluation.md).
//!
//! A block made almost wholly of such identifiers is not content, whatever the trees say
//! (`drop_identifier_strings`).

use super::markup::preformatted;
use crate::dom::Dom;
use crate::page_models::content::blocks::{Blocks, NONE};

/// A hexadecimal run this long, with at least [`IDENTIFIER_HYPHENS`] hyphens, is an identifier
/// (a UUID is 36 characters with 4 hyphens).
const IDENTIFIER_CHARS: usize = 32;
const IDENTIFIER_HYPHENS: usize = 4;

/// Calls not content every block called content whose characters are at least three quarters
/// identifiers, in at least two identifiers, unless it is preformatted.
///
/// The test is narrow on purpose: UUID-shaped runs (hexadecimal with at least
/// [`IDENTIFIER_HYPHENS`] hyphens, [`IDENTIFIER_CHARS`] characters or more), at least two of
/// them, three quarters of the block's characters or more. A forum answer or a manual that
/// shows an identifier in a sentence or a command is well under that share (docs/evaluation.md),
/// and preformatted text is left alone.
pub(super) fn drop_identifier_strings(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) {
    // Only blocks called content that could be mostly identifiers are read: a UUID's
    // characters are about half digits, so such a block is at least a fifth digits. On most
    // pages no block is, and the rule costs one look at each block's counts.
    let candidate = |block: usize| {
        let stats = &blocks.stats[block];
        calls[block]
            && stats.chars as usize >= 2 * IDENTIFIER_CHARS
            && 5 * stats.digits >= stats.chars
    };
    if !(0..calls.len().min(blocks.len())).any(candidate) {
        return;
    }
    // Per candidate block: characters other than white space, identifier characters,
    // identifiers.
    let mut counts = vec![(0usize, 0usize, 0usize); blocks.len()];
    for (node, &block) in blocks.of_node.iter().enumerate() {
        if block == NONE || !candidate(block as usize) {
            continue;
        }
        let Some(text) = dom.visible_text(node) else {
            continue;
        };
        let (shown, id_chars, ids) = &mut counts[block as usize];
        *shown += text.chars().filter(|c| !c.is_whitespace()).count();
        for run in text.split(|c: char| !(c.is_ascii_hexdigit() || c == '-')) {
            if run.len() >= IDENTIFIER_CHARS && run.matches('-').count() >= IDENTIFIER_HYPHENS {
                *id_chars += run.len();
                *ids += 1;
            }
        }
    }
    for ((call, &(shown, id_chars, ids)), &owner) in
        calls.iter_mut().zip(&counts).zip(&blocks.owners)
    {
        if ids >= 2 && 4 * id_chars >= 3 * shown && *call && !preformatted(dom, owner as usize) {
            *call = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::page_models::content::testing::calls_when_all_sure;

    /// eBay's "Sponsored" label as its markup has it (three of its UUIDs; the page has about
    /// twenty per label).
    const LABEL: &str =
        "<div class=label><span>S</span><span>19aea247-2e76-4905-9b83-15a5a5664cfa</span>\
        <span>G</span><span>661bd3c3-576f-4713-baee-9dc0dd7c3568</span><span>p</span>\
        <span>2e2c3720-cfa9-41e9-9571-b179b489e15f</span></div>";

    const STORY: &str = "<p>The second edition adds three chapters on the river's floods, \
        and a new map of the delta drawn from the survey of last spring.</p>";

    #[test]
    fn a_label_spelled_with_identifiers_is_not_content() {
        let (n, calls) = calls_when_all_sure(&format!("<body>{STORY}{LABEL}</body>"));
        assert_eq!(n, 2);
        assert_eq!(calls, [true, false]);
    }

    #[test]
    fn identifiers_in_a_sentence_a_command_or_a_listing_stay() {
        let page = "<body><p>Take note of the UUID - eg. ba5b7f3a-54d2-4325-80e5-e7a159900d3f</p>\
            <p>sudo vi /media/fred/ba5b7f3a-54d2-4325-80e5-e7a159900d3f/etc/fstab and \
            /media/fred/0d48abc0-6602-4407-a05b-e5f87e8f229c/etc/hosts</p>\
            <pre>4e196aa4-0141-4601-8138-7aa33db0f577\ne9f6c8f0-fec9-4ae8-a8c6-cf8c8451d4f8</pre>\
            <p>19aea247-2e76-4905-9b83-15a5a5664cfa</p></body>";
        let (n, calls) = calls_when_all_sure(page);
        assert_eq!(n, 4);
        // A single identifier alone is kept too: two or more make a string of them.
        assert_eq!(calls, [true; 4]);
    }
}
