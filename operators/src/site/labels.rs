//! Training labels from site-level templates: which DOM nodes a classifier may learn from as
//! *template* and as *non-template*.
//!
//! Two schemes, from the two seeds that do this:
//! - [`paper`] (Chakrabarti, Kumar & Punera 2007, §5.1; seed 000): every element of the body is
//!   labelled; it is a template when at least 85% of its HTML lies inside site-level template
//!   subtrees. The bar is high on purpose: calling content "template" costs more than the
//!   reverse.
//! - [`kolcz`] (Kołcz & Yih 2006, §4.1; seed 001): only confident blocks are labelled.
//!   Candidate blocks are visual-block elements with enough text, fingerprinted by their text;
//!   a block is a template at ≥ θ of the host's pages, a non-template when it is on one page
//!   only, and ignored in between. Of the non-templates only the top-most block whose
//!   sub-blocks are all unique is kept, which curbs the imbalance between the classes.

use crate::dom::subtree::Subtree;
use crate::dom::Dom;
use crate::site::blocks::Block;
use crate::site::site_level::HostModel;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    Template,
    NonTemplate,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Template => "template",
            Label::NonTemplate => "non_template",
        }
    }
}

/// The labelling schemes, selectable with `--labels`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    Paper,
    Kolcz,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Paper => "paper",
            Scheme::Kolcz => "kolcz",
        }
    }

    /// The site-level fingerprints the scheme counts.
    pub fn fingerprints(self) -> crate::site::site_level::Fingerprints {
        match self {
            Scheme::Paper => crate::site::site_level::Fingerprints::Subtrees,
            Scheme::Kolcz => crate::site::site_level::Fingerprints::TextBlocks,
        }
    }
}

/// The share of a node's HTML that must lie inside templates for the paper's *template* label.
pub const PAPER_TEMPLATE_SHARE: f64 = 0.85;

/// The `<body>` element, if the page has one (html5ever always makes one for HTML input).
pub fn body(dom: &Dom) -> Option<usize> {
    (0..dom.len()).find(|&i| dom.tag(i).is_some_and(|t| &**t == "body"))
}

/// Paper labels (§5.1) for the elements of the body, given where template subtrees start
/// ([`crate::site::site_level::template_roots`]); other nodes get `None`.
pub fn paper(dom: &Dom, sums: &[Subtree], roots: &[Option<u64>]) -> Vec<Option<Label>> {
    let mut labels = vec![None; dom.len()];
    let Some(body) = body(dom) else {
        return labels;
    };
    // HTML bytes of each node that lie inside template subtrees, bottom-up: children come
    // after their parent in pre-order, so a reverse loop sees every child first.
    let mut inside_bytes = vec![0u64; dom.len()];
    for i in dom.subtree(body).rev() {
        let own = if roots[i].is_some() {
            u64::from(sums[i].html_bytes)
        } else {
            inside_bytes[i]
        };
        inside_bytes[i] = own;
        if i != body {
            if let Some(parent) = dom.parent(i) {
                inside_bytes[parent] += own;
            }
        }
        if dom.element(i).is_some() {
            let html = u64::from(sums[i].html_bytes).max(1);
            labels[i] = Some(if own as f64 >= PAPER_TEMPLATE_SHARE * html as f64 {
                Label::Template
            } else {
                Label::NonTemplate
            });
        }
    }
    labels
}

/// Kołcz & Yih labels (§4.1) of a page in the host's sample (uniqueness is only known there):
/// template blocks, and the top-most unique blocks whose sub-blocks are all unique.
pub fn kolcz(dom: &Dom, blocks: &[Block], model: &HostModel) -> Vec<Option<Label>> {
    let mut labels = vec![None; dom.len()];
    if !model.labelled {
        return labels;
    }
    let mut fingerprint_at = vec![0u64; dom.len()];
    for block in blocks {
        fingerprint_at[block.node] = block.fingerprint;
    }
    // Bottom-up: does the subtree hold a block seen on more than one page?
    let mut holds_repeated = vec![false; dom.len()];
    for i in (0..dom.len()).rev() {
        let fingerprint = fingerprint_at[i];
        if fingerprint != 0 && !model.is_unique(fingerprint) {
            holds_repeated[i] = true;
        }
        if holds_repeated[i] {
            if let Some(parent) = dom.parent(i) {
                holds_repeated[parent] = true;
            }
        }
    }
    // Top-down: a unique block is kept only when no enclosing block was already kept.
    let mut under_kept = vec![false; dom.len()];
    for i in 0..dom.len() {
        let inherited = dom.parent(i).is_some_and(|p| under_kept[p]);
        under_kept[i] = inherited;
        let fingerprint = fingerprint_at[i];
        if fingerprint == 0 {
            continue;
        }
        if model.is_template(fingerprint) {
            labels[i] = Some(Label::Template);
        } else if !holds_repeated[i] && !inherited {
            labels[i] = Some(Label::NonTemplate);
            under_kept[i] = true;
        }
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::text::PageText;
    use crate::site::blocks::kolcz_blocks;
    use crate::site::site_level::{
        fingerprints, learn, url_key, Fingerprints, PageFingerprints, Params,
    };

    fn find(dom: &Dom, id: &str) -> usize {
        (0..dom.len()).find(|&i| dom.id(i) == Some(id)).unwrap()
    }

    #[test]
    fn paper_labels_follow_the_85_percent_rule() {
        let template = "Template text that is long. ".repeat(10);
        let dom = crate::dom::parse(
            &format!(
                "<body><div id=outer><div id=t>{template}</div><p id=c>x</p></div>\
                 <div id=mixed><div id=t2>{template}</div><p>Article with many words in it, \
                 enough to weigh more than fifteen percent of the html of the node</p></div></body>"
            ),
            64,
        );
        let sums = crate::dom::subtree::summarize(&dom, "h");
        let mut roots = vec![None; dom.len()];
        roots[find(&dom, "t")] = Some(1);
        roots[find(&dom, "t2")] = Some(1);
        let labels = paper(&dom, &sums, &roots);
        assert_eq!(labels[find(&dom, "t")], Some(Label::Template));
        // <p id=c>x</p> and outer's own tags are ~40 of ~340 bytes: over 85% lies in the template.
        assert_eq!(labels[find(&dom, "outer")], Some(Label::Template));
        assert_eq!(labels[find(&dom, "c")], Some(Label::NonTemplate));
        assert_eq!(labels[find(&dom, "mixed")], Some(Label::NonTemplate));
        assert_eq!(labels[body(&dom).unwrap()], Some(Label::NonTemplate));
        assert_eq!(labels[0], None, "only the body is labelled");
    }

    #[test]
    fn kolcz_keeps_templates_and_top_most_unique_blocks() {
        // Digits fold away in fingerprints: pages differ by a word.
        let names = [
            "ann", "bob", "cid", "dan", "eve", "fay", "gus", "hal", "ida", "jo",
        ];
        let page = |i: usize| {
            let i = names[i];
            format!(
                "<body><div id=nav>Home page, world news, sport results and the weather</div>\
                 <div id=main><div id=p1>Story {i} begins with a long first paragraph of text</div>\
                 <div id=p2>Story {i} goes on with a second paragraph, also long enough</div></div>\
                 <div id=mixed><div id=nav2>Subscribe to our newsletter for daily updates</div>\
                 <div id=p3>Story {i} has a third paragraph sitting next to the signup</div></div></body>"
            )
        };
        let doms: Vec<Dom> = (0..10).map(|i| crate::dom::parse(&page(i), 64)).collect();
        let pages = doms.iter().enumerate().map(|(i, dom)| PageFingerprints {
            host: "h".into(),
            url_key: url_key(&i.to_string()),
            fingerprints: fingerprints(
                dom,
                &crate::dom::subtree::summarize(dom, "h"),
                Fingerprints::TextBlocks,
            ),
        });
        let model = &learn(pages, &Params::default(), Fingerprints::TextBlocks)["h"];
        let dom = &doms[3];
        let labels = kolcz(dom, &kolcz_blocks(dom, &PageText::new(dom)), model);
        assert_eq!(labels[find(dom, "nav")], Some(Label::Template));
        assert_eq!(labels[find(dom, "nav2")], Some(Label::Template));
        assert_eq!(labels[find(dom, "main")], Some(Label::NonTemplate));
        assert_eq!(labels[find(dom, "p1")], None, "only the top-most is kept");
        assert_eq!(labels[find(dom, "mixed")], None, "holds a template");
        assert_eq!(labels[find(dom, "p3")], Some(Label::NonTemplate));
    }
}
