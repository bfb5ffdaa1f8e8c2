//! What the markup says outright, whatever the trees made of the text: preformatted text is
//! content, and so is a heading that links to itself above content; what a modal dialog holds
//! is not.

use html5ever::local_name;

use crate::dom::{is_heading, Dom};
use crate::page_models::content::blocks::Blocks;

/// A block of preformatted text (inside a `<pre>`) is content unless the trees put it under
/// this.
pub const PREFORMATTED_FLOOR: f32 = 0.1;

/// Preformatted text is content: code listings, terminal transcripts, logs, what documentation
/// and technical articles exist to show. Navigation, footers and notices are not set in `<pre>`.
/// The trees, which read prose well, give code middling probabilities (docs.python.org's
/// listings: few sentence marks, words no lexicon knows); held out, this rule raises the macro
/// F1 of WCXB's documentation pages and barely moves any other group (docs/evaluation.md).
pub(super) fn keep_preformatted(
    dom: &Dom,
    blocks: &Blocks,
    probability: &[f32],
    calls: &mut [bool],
) {
    for ((call, &owner), &p) in calls.iter_mut().zip(&blocks.owners).zip(probability) {
        if !*call && p >= PREFORMATTED_FLOOR {
            *call = preformatted(dom, owner as usize);
        }
    }
}

/// Whether a block's owner is a `<pre>` or inside one (a walk up: call it for few blocks).
pub(super) fn preformatted(dom: &Dom, owner: usize) -> bool {
    dom.ancestors_or_self(owner)
        .any(|i| dom.tag(i).is_some_and(|t| *t == local_name!("pre")))
}

/// A heading whose text is all a link to a place on the page itself (`<h2><a
/// href="#instance_methods">Instance methods</a></h2>`) is content when the block after it is:
/// it names the section it heads. Documentation sites such as MDN make every section heading
/// its own permalink, so to the trees it reads as a short line of link text, and on a host
/// with statistics the same section names recur on every page, inside the site-level
/// template; the trees drop MDN's "Instance properties", "Examples" and "Browser
/// compatibility". A link elsewhere is a teaser or a menu (a related story's headline), and a
/// heading that heads nothing kept is a sidebar's or a table of contents': keeping every
/// self-linked heading, whatever follows, costs the news sets F1. Held out, the rule gains on
/// MDN's reference pages and costs no page more than a trifle (docs/evaluation.md).
pub(super) fn keep_anchored_headings(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) {
    for b in 0..calls.len().saturating_sub(1) {
        if calls[b] || !calls[b + 1] {
            continue;
        }
        let owner = blocks.owners[b] as usize;
        // The cheap tests first: the owner's size, then its few text nodes' climbs, and only
        // then the owner's ancestors for a heading.
        if dom.subtree(owner).len() <= HEADING_NODES
            && all_text_links_to_page(dom, blocks, b as u32)
            && dom
                .ancestors_or_self(owner)
                .any(|i| dom.tag(i).is_some_and(is_heading))
        {
            calls[b] = true;
        }
    }
}

/// A block whose owner holds more nodes than this is read as no permalinked heading: such a
/// heading is a link and a few inline elements, and the bound keeps a malformed page (an
/// unclosed `<h1>` around the rest of it) from being read once per block.
pub const HEADING_NODES: usize = 64;

/// Whether every text node of block `b` is inside a link to a fragment of the page (`#name`;
/// a bare `#` or a `#!` route is a script's link, not a place) below the block's owner: a link
/// around a whole heading (`<a href="#top"><h4>Back to top</h4></a>`) is a jump, not the
/// heading's permalink.
fn all_text_links_to_page(dom: &Dom, blocks: &Blocks, b: u32) -> bool {
    let owner = blocks.owners[b as usize] as usize;
    let to_page = |i: usize| {
        dom.tag(i).is_some_and(|t| *t == local_name!("a"))
            && dom.href(i).is_some_and(|h| {
                h.strip_prefix('#')
                    .is_some_and(|name| !name.is_empty() && !name.starts_with('!'))
            })
    };
    let links_to_page = |n: usize| {
        dom.ancestors_or_self(n)
            .take_while(|&i| i != owner)
            .any(to_page)
    };
    dom.subtree(owner)
        .filter(|&n| blocks.of_node[n] == b)
        .all(links_to_page)
}

/// A modal dialog (`<dialog>`, or an element with `aria-modal="true"`) is an overlay the reader
/// must dismiss to reach the page: a privacy policy or size chart opened from a link, a
/// newsletter or cookie prompt, a sign-in box. Whatever it holds is not what the page exists
/// to deliver, however much it reads like prose (allbirds.com's 20,000-character privacy
/// policy, modal in its footer, reads to the trees as content).
pub(crate) fn drop_dialogs(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) {
    for (call, &owner) in calls.iter_mut().zip(&blocks.owners) {
        if *call {
            *call = !dom
                .ancestors_or_self(owner as usize)
                .any(|i| dom.is_modal(i));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::page_models::content::testing::calls_when_trees_say;

    #[test]
    fn preformatted_blocks_are_content_unless_very_unlikely() {
        let (count, calls) = calls_when_trees_say(
            "<body><p>Install it with the command below, then run it.</p>\
             <pre>pip install stencil</pre>\
             <pre><div>for page in crawl:</div><div>    clean(page)</div></pre>\
             <pre>ascii banner</pre><p>Share this page</p></body>",
            &[0.9, 0.3, 0.2, 0.45, 0.05, 0.3],
        );
        assert_eq!(count, 6);
        // The lines of a listing set in <div>s inside the <pre> count as well; a <pre> the
        // trees put under the floor, and a paragraph at 0.3, do not.
        assert_eq!(calls, [true, true, true, true, false, false]);
    }

    #[test]
    fn a_heading_that_links_to_itself_heads_the_content_after_it() {
        let (count, calls) = calls_when_trees_say(
            "<body><h2><a href='#methods'>Instance methods</a></h2>\
             <p>WebSocket.close() closes the connection.</p>\
             <h2><a href='/news/rates'>Rates held again</a></h2><p>The bank kept its rate.</p>\
             <h3 id=see><a href='#see'>See</a> <a href='#also'>also</a></h3>\
             <p>Writing WebSocket client applications.</p>\
             <div><a href='#top'><h4>Back to top</h4></a></div><p>Footer notes.</p>\
             <h2><a href='#'>Open the panel</a></h2><p>Panel text.</p>\
             <h2><a href='#related'>Related</a></h2><p>Another story.</p>\
             <h2><a href='#mixed'>Events</a> and more</h2><p>Listen to these events.</p></body>",
            &[
                0.1, 0.9, 0.1, 0.9, 0.1, 0.9, 0.1, 0.9, 0.1, 0.9, 0.1, 0.2, 0.1, 0.9,
            ],
        );
        assert_eq!(count, 14);
        // Kept: the two self-linked headings above content, one of them in two links. Not: a
        // link to another page, a link around a whole heading (a jump, not a permalink), a bare
        // `#`, a heading above text not kept, and a heading only partly linked.
        assert_eq!(
            calls,
            [
                true, true, false, true, true, true, false, true, false, true, false, false, false,
                true
            ]
        );
    }

    #[test]
    fn modal_dialogs_are_not_content() {
        let (count, calls) = calls_when_trees_say(
            "<body><p>The shoe is made of merino wool and is machine washable.</p>\
             <div id=modal-privacy aria-modal=true><div><p>We may collect personal data \
             through cookies.</p></div></div>\
             <dialog open><p>Sign up for our newsletter and save.</p></dialog>\
             <div aria-modal=' False'><p>A sheet that says it is not modal.</p></div>\
             <div class=modal-ish><p>A class alone is the trees' to judge.</p></div></body>",
            &[0.9, 0.8, 0.7, 0.6, 0.6],
        );
        assert_eq!(count, 5);
        assert_eq!(calls, [true, false, false, true, true]);
    }
}
