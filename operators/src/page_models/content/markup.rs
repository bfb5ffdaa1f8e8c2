//! What the markup says outright, whatever the trees made of the text: preformatted text is
//! content, what a modal dialog holds is not.

use html5ever::local_name;

use super::blocks::Blocks;
use crate::dom::Dom;

/// A block of preformatted text (inside a `<pre>`) is content unless the trees put it under
/// this.
pub const PREFORMATTED_FLOOR: f32 = 0.1;

/// Preformatted text is content: code listings, shell sessions, logs, what documentation and
/// technical articles exist to show. Navigation, footers and notices are not set in `<pre>`.
/// The trees, which read prose well, give code middling probabilities (0.2–0.5 on
/// docs.python.org's listings: few sentence marks, words no lexicon knows); held out, this
/// rule raised WCXB's documentation pages from 0.908 to 0.915 macro F1 and moved no other
/// group by more than 0.001 (docs/evaluation.md).
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

/// A modal dialog (`<dialog>`, or an element with `aria-modal="true"`) is an overlay the reader
/// must dismiss to reach the page: a privacy policy or size chart opened from a link, a
/// newsletter or cookie prompt, a sign-in box. Whatever it holds is not what the page exists
/// to deliver, however much it reads like prose (allbirds.com's 20,000-character privacy
/// policy, modal in its footer, was called content at 0.5–0.8).
pub(super) fn drop_dialogs(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) {
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
    use crate::dom;
    use crate::dom::subtree::summarize;
    use crate::page_models::content::blocks;
    use crate::page_models::content::testing::calls_of;
    use crate::page_models::content::Rule;

    #[test]
    fn preformatted_blocks_are_content_unless_very_unlikely() {
        let dom = dom::parse(
            "<body><p>Install it with the command below, then run it.</p>\
             <pre>pip install stencil</pre>\
             <pre><div>for page in crawl:</div><div>    clean(page)</div></pre>\
             <pre>ascii banner</pre><p>Share this page</p></body>",
            512,
        );
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 6);
        let p = [0.9, 0.3, 0.2, 0.45, 0.05, 0.3];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        // The lines of a listing set in <div>s inside the <pre> count as well; a <pre> the
        // trees put under the floor, and a paragraph at 0.3, do not.
        assert_eq!(calls, [true, true, true, true, false, false]);
    }

    #[test]
    fn modal_dialogs_are_not_content() {
        let dom = dom::parse(
            "<body><p>The shoe is made of merino wool and is machine washable.</p>\
             <div id=modal-privacy aria-modal=true><div><p>We may collect personal data \
             through cookies.</p></div></div>\
             <dialog open><p>Sign up for our newsletter and save.</p></dialog>\
             <div aria-modal=' False'><p>A sheet that says it is not modal.</p></div>\
             <div class=modal-ish><p>A class alone is the trees' to judge.</p></div></body>",
            512,
        );
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 5);
        let p = [0.9, 0.8, 0.7, 0.6, 0.6];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        assert_eq!(calls, [true, false, false, true, true]);
    }
}
