//! Text called content twice is content once.

use std::collections::HashSet;

use foldhash::fast::FixedState;

use crate::dom::Dom;
use crate::page_models::content::blocks::Blocks;

/// Text called content twice is content once: a run of consecutive blocks called content that
/// each repeat word for word a block called content before them is dropped when the run holds
/// at least [`REPEAT_RUN_WORDS`] words.
///
/// Pages carry a section twice for two layouts (Squarespace's shops render a product's
/// description for narrow and for wide screens, one copy hidden by a style sheet Stencil does
/// not read), print an article again below itself, or quote a post in full in a reply: a
/// reader reads it once, and a corpus wants it once. Short repeats stay, because they are how
/// reference pages are written (the same parameter note under many parameters, the same step
/// in every language's tab), and so does preformatted text (a tutorial may show a command
/// twice on purpose). Words are compared as the lexicon reads them (lower-cased, punctuation
/// aside).
pub(super) fn drop_repeats(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) {
    // Each kept block's words, folded in order into one hash.
    let mut fingerprint = vec![0u64; blocks.len()];
    let mut words = vec![0u32; blocks.len()];
    for &(b, hash) in &blocks.words {
        let b = b as usize;
        if calls[b] {
            fingerprint[b] =
                (fingerprint[b].rotate_left(23) ^ hash).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            words[b] += 1;
        }
    }
    // The kept blocks in order, each with whether it repeats an earlier kept block (the
    // ancestor walk only for repeats: a page's first copies are most of its blocks).
    let mut seen: HashSet<(u64, u32), FixedState> = HashSet::default();
    let kept: Vec<(usize, bool)> = (0..blocks.len())
        .filter(|&b| calls[b] && words[b] > 0)
        .map(|b| {
            let repeat = !seen.insert((fingerprint[b], words[b]));
            (
                b,
                repeat && !super::markup::preformatted(dom, blocks.owners[b] as usize),
            )
        })
        .collect();
    for run in kept.chunk_by(|x, y| x.1 == y.1) {
        let run_words: u32 = run.iter().map(|&(b, _)| words[b]).sum();
        if run[0].1 && run_words >= REPEAT_RUN_WORDS {
            for &(b, _) in run {
                calls[b] = false;
            }
        }
    }
}

/// See [`drop_repeats`]. Chosen held out between runs of 20, 40 and 80 words: shorter runs suit
/// WCXB's forums, longer ones its documentation, whose reference pages repeat a parameter's
/// notes under every endpoint that takes it (docs/evaluation.md).
pub const REPEAT_RUN_WORDS: u32 = 40;

#[cfg(test)]
mod tests {
    use crate::dom;
    use crate::dom::subtree::summarize;
    use crate::page_models::content::blocks;
    use crate::page_models::content::testing::calls_of;
    use crate::page_models::content::Rule;

    #[test]
    fn a_long_run_repeated_is_content_once() {
        let description = "Make each cup of tea or coffee feel special with a handmade mug, \
             wheel thrown in a matte speckled finish with a clear glazed interior.";
        let care = "Suitable for dishwashers and microwave ovens; avoid thermal shock from \
             rapid heating and cooling, and take care when stacking ceramics.";
        let page = format!(
            "<body><h1>White speckle mug</h1><div><p>{description}</p><p>{care}</p></div>\
             <div><p>{description}</p><p>{care}</p></div>\
             <h2>Under every endpoint</h2><p>The ID of the customer.</p><p>customer_id</p>\
             <p>The ID of the customer.</p><pre>{description} {care}</pre>\
             <pre>{description} {care}</pre></body>"
        );
        let dom = dom::parse(&page, 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 11);
        let p = vec![0.9; blocks.len()];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        // The second copy of the two paragraphs (a run of 45 words) goes; a short note
        // repeated under another heading, and preformatted text, stay.
        assert_eq!(
            calls,
            [true, true, true, false, false, true, true, true, true, true, true]
        );
    }
}
