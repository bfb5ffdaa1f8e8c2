//! The rules that read the page's own markup after the trees' calls ([`super::calls`]): what
//! the markup says outright, whatever the trees made of the text. Each rule is a module named
//! for what it reads; `apply` runs them in their order.

pub mod bare;
pub mod comments;
pub mod details;
pub mod facts;
pub mod headlines;
pub mod identifiers;
pub mod markup;
pub mod repeats;
pub mod reviews;
pub mod tables;

use super::blocks::Blocks;
use super::features::Context;
use crate::dom::subtree::Subtree;
use crate::dom::Dom;

/// Every rule over `calls`, in this order: data tables are read whole ([`tables`]),
/// preformatted text and a heading that links to itself above content are kept and modal
/// dialogs dropped ([`markup`]), as are strings of machine identifiers ([`identifiers`]), a
/// product's buyers' reviews are dropped ([`reviews`]), a page left empty keeps its likeliest
/// blocks (unless keeping nothing was the expected-F1 calls' bet, `nothing_is_the_bet`:
/// [`super::calls::expected_f1_calls`]), a product page keeps its facts ([`facts`]), a details
/// group is kept whole or dropped whole ([`details`]), readers' comments are dropped
/// ([`comments`]), text called content twice is kept once ([`repeats`]), and a list of linked
/// headlines under its own heading after the story is dropped whole ([`headlines`]). A bare page is read by none of them ([`bare`],
/// [`super::decide`]). `probability` is the trees' probabilities pooled over repeated items.
pub(super) fn apply(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    probability: &[f32],
    context: Context<'_>,
    nothing_is_the_bet: bool,
    calls: &mut [bool],
) {
    tables::keep_data_tables(dom, blocks, probability, calls);
    markup::keep_preformatted(dom, blocks, probability, calls);
    markup::keep_anchored_headings(dom, blocks, calls);
    markup::drop_dialogs(dom, blocks, calls);
    identifiers::drop_identifier_strings(dom, blocks, calls);
    let one_product = reviews::drop_product_reviews(dom, blocks, calls);
    // A page with no block called content is almost always a miss, not a page without
    // content: keep its likeliest blocks (within half the best probability) instead, unless
    // keeping nothing was the expected-F1 calls' bet.
    if !calls.contains(&true) && !nothing_is_the_bet {
        let best = probability.iter().copied().fold(0.0f32, f32::max);
        if best >= EMPTY_PAGE_FLOOR {
            for (call, &p) in calls.iter_mut().zip(probability) {
                *call = p >= best / 2.0;
            }
        }
    }
    facts::keep_facts(dom, sums, blocks, context.site_inside, one_product, calls);
    details::keep_details_whole(dom, blocks, calls);
    // After the facts rule: a comment's "Posted by: …" line is no fact of the page.
    comments::drop_comments(dom, blocks, context.names, context.url, calls);
    repeats::drop_repeats(dom, blocks, calls);
    headlines::drop_headline_lists(dom, blocks, context.siblings, calls);
}

/// Whether a block's owner is a heading or one of the two elements nearest inside one (`<h2>
/// <a><span>…`).
fn in_heading(dom: &Dom, owner: usize) -> bool {
    dom.ancestors_or_self(owner)
        .take(3)
        .any(|i| dom.tag(i).is_some_and(crate::dom::is_heading))
}

/// Below this best block probability a page stays empty (nothing on it looks like content).
pub const EMPTY_PAGE_FLOOR: f32 = 0.05;
