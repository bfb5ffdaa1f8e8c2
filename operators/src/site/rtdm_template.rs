//! A host's template from a few of its pages by restricted top-down mapping (RTDM-TD, Vieira et
//! al. 2006; seed 002 §5), and its cheap removal from every other page.
//!
//! A page is a tree labelled by tag names and texts ([`label_tree`]). Two pages share what
//! their least-cost mapping ([`crate::site::rtdm`]) maps to equal labels: the menus, headers
//! and footers copied onto both, down to the texts they repeat, and the skeleton above them.
//! That shared part is itself a tree ([`common_subtree`], the paper's ExtractSubTree). Any two
//! pages may share more than the site does (two articles of one section share the section's
//! menu), so [`find_template`] maps the common subtree against one more page at a time and
//! keeps the last one: the template. Removal maps a page against the template
//! ([`template_nodes`]); its nodes mapped to equal labels are the template's on that page.
//!
//! Pages are sampled by URL hash ([`crate::site::site_level::url_key`]), the same order
//! SiteLevel(θ) samples in, so the template does not depend on which worker read which page.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::dom::normalize::normalize_for_hash;
use crate::dom::{Dom, NodeKind};
use crate::site::rtdm::{map, Limits, TooLarge, Tree, NONE};

/// Seeds keeping element labels and text labels apart (a text "div" is no `<div>`).
const ELEMENT_SEED: u64 = 0xe1e7_0002;
const TEXT_SEED: u64 = 0x7e47_0002;

/// The page as seed 002 maps it: every node of the DOM, in the DOM's order (node `i` of the
/// tree is node `i` of `dom`), labelled by its tag name, or, for text, by its text as
/// SiteLevel's hashes read it (whitespace collapsed, case folded), so that the same menu entry
/// indented differently on two pages is the same leaf.
pub fn label_tree(dom: &Dom) -> Tree {
    label_tree_with(dom, |i| {
        let tag = dom.tag(i).map_or("", |t| &**t);
        xxh3_64_with_seed(tag.as_bytes(), ELEMENT_SEED)
    })
}

/// [`label_tree`] with elements labelled by `element` (called with the element's index):
/// methods differ in what makes two elements equal, not in the tree or in how texts compare.
pub(crate) fn label_tree_with(dom: &Dom, mut element: impl FnMut(usize) -> u64) -> Tree {
    let mut scratch = Vec::new();
    let mut labels = Vec::with_capacity(dom.len());
    let mut ends = Vec::with_capacity(dom.len());
    for (i, node) in dom.nodes().iter().enumerate() {
        labels.push(match node.kind {
            NodeKind::Document => 0,
            NodeKind::Element(_) => element(i),
            NodeKind::Text { .. } => {
                normalize_for_hash(dom.text(i).unwrap_or(""), &mut scratch);
                xxh3_64_with_seed(&scratch, TEXT_SEED)
            }
        });
        ends.push(node.end);
    }
    // The DOM's arena is a preorder by construction; an empty page is an empty tree.
    Tree::new(labels, ends).unwrap_or_default()
}

/// What `t1` shares with `t2`: the nodes of `t1` a least-cost restricted top-down mapping maps
/// to equal labels, as a tree (seed 002's ExtractSubTree, with retrieveTemplate).
pub fn common_subtree(t1: &Tree, t2: &Tree, limits: Limits) -> Result<Tree, TooLarge> {
    let mapping = map(t1, t2, limits)?;
    Ok(t1.restrict(&mapping.equal_in_first(t1, t2)))
}

/// Sample pages FindTemplate maps by default. Seed 002's Figure 7 reaches F ≥ 0.95 with fewer
/// than 25 pages on 9 of its 10 sites; each page costs one mapping, once per host.
pub const DEFAULT_SAMPLE_PAGES: u32 = 25;

/// A host's template and what finding it took.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Template {
    pub tree: Tree,
    /// Sample pages the template was mapped against (the first included).
    pub pages_used: u32,
    /// Sample pages left out because mapping them passed [`Limits`].
    pub pages_too_large: u32,
}

/// Seed 002's FindTemplate over `samples` in the order given (the caller's sample order): the
/// common subtree of the first two, then of that and each next page, up to `max_pages` pages
/// used. A page whose mapping passes `limits` is skipped (and counted). `None` when fewer
/// than two pages could be used: one page alone has no template.
pub fn find_template(
    samples: impl IntoIterator<Item = Tree>,
    max_pages: u32,
    limits: Limits,
) -> Option<Template> {
    let mut found: Option<Template> = None;
    let mut too_large = 0;
    for page in samples {
        let Some(template) = found.as_mut() else {
            found = Some(Template {
                tree: page,
                pages_used: 1,
                pages_too_large: 0,
            });
            continue;
        };
        if template.pages_used >= max_pages {
            break;
        }
        match common_subtree(&template.tree, &page, limits) {
            Ok(shared) => {
                template.tree = shared;
                template.pages_used += 1;
            }
            Err(TooLarge { .. }) => too_large += 1,
        }
    }
    let mut template = found.filter(|t| t.pages_used >= 2)?;
    template.pages_too_large = too_large;
    Some(template)
}

/// The removal pass: for every node of `page`, whether the template covers it (it is mapped
/// from a template node with the same label).
pub fn template_nodes(template: &Tree, page: &Tree, limits: Limits) -> Result<Vec<bool>, TooLarge> {
    let mut covered = vec![false; page.len()];
    let mapping = map(template, page, limits)?;
    for (a, &b) in mapping.image.iter().enumerate() {
        if b != NONE && template.label(a as u32) == page.label(b) {
            covered[b as usize] = true;
        }
    }
    Ok(covered)
}

/// The page's template roots from its covered nodes: the highest nodes whose whole subtree the
/// template covers, as SiteLevel(θ) marks its template blocks. A covered `<div>` whose text
/// differs on this page is the template's skeleton, not template content, and is no root.
pub fn covered_roots(page: &Tree, covered: &[bool]) -> Vec<bool> {
    // Bottom-up: a subtree is wholly covered when its root and all its children's are.
    let mut whole = covered.to_vec();
    for node in (0..page.len() as u32).rev() {
        if whole[node as usize] {
            whole[node as usize] = page.children(node).all(|c| whole[c as usize]);
        }
    }
    // Top-down: a root is wholly covered with no wholly covered ancestor.
    let mut roots = vec![false; page.len()];
    let mut inside = vec![false; page.len()];
    for node in 0..page.len() as u32 {
        let n = node as usize;
        if whole[n] && !inside[n] {
            roots[n] = true;
        }
        if whole[n] || inside[n] {
            for c in page.children(node) {
                inside[c as usize] = true;
            }
        }
    }
    roots
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::dom::parse;
    use crate::site::rtdm::tests::parse as tree;

    const DEPTH: usize = 512;

    fn page(menu: &str, body: &str) -> String {
        format!(
            "<html><body><nav><a href=/>Home</a><a href=/news>{menu}</a></nav>\
             <main><h1>{body}</h1><p>{body} text</p></main>\
             <footer>© Example</footer></body></html>"
        )
    }

    /// The trimmed visible texts of the nodes `nodes` marks, in document order.
    pub(crate) fn text_of(dom: &Dom, nodes: &[bool]) -> Vec<String> {
        (0..dom.len())
            .filter(|&i| nodes[i])
            .filter_map(|i| dom.visible_text(i).map(|t| t.trim().to_string()))
            .collect()
    }

    #[test]
    fn the_template_is_what_every_sample_page_shares() {
        // The first two pages share the "News" menu entry; the third does not, so it is
        // dropped from the template, as seed 002 argues for mapping more than two pages.
        let pages = [
            page("News", "One"),
            page("News", "Two"),
            page("Sport", "Three"),
        ];
        let doms: Vec<Dom> = pages.iter().map(|p| parse(p, DEPTH)).collect();
        let two = find_template(doms[..2].iter().map(label_tree), 10, Limits::default()).unwrap();
        let three = find_template(doms.iter().map(label_tree), 10, Limits::default()).unwrap();
        assert_eq!((two.pages_used, three.pages_used), (2, 3));
        assert!(three.tree.len() < two.tree.len());

        let fourth = parse(&page("News", "Four"), DEPTH);
        let covered = template_nodes(&three.tree, &label_tree(&fourth), Limits::default()).unwrap();
        assert_eq!(text_of(&fourth, &covered), ["Home", "© Example"]);
        let covered = template_nodes(&two.tree, &label_tree(&fourth), Limits::default()).unwrap();
        assert_eq!(text_of(&fourth, &covered), ["Home", "News", "© Example"]);
    }

    #[test]
    fn the_sample_stops_at_max_pages() {
        let doms: Vec<Dom> = (0..6)
            .map(|k| parse(&page("News", &format!("Page {k}")), DEPTH))
            .collect();
        let template = find_template(doms.iter().map(label_tree), 4, Limits::default()).unwrap();
        assert_eq!(template.pages_used, 4);
        assert!(find_template(doms[..1].iter().map(label_tree), 4, Limits::default()).is_none());
    }

    #[test]
    fn roots_are_the_highest_wholly_covered_nodes() {
        //            0 r  1 a  2 x  3 b  4 y  5 z
        let t = tree("r(a(x) b(y z))");
        let covered = [true, true, true, true, true, false];
        assert_eq!(
            covered_roots(&t, &covered),
            [false, true, false, false, true, false]
        );
    }

    #[test]
    fn text_labels_ignore_whitespace_and_case() {
        let a = label_tree(&parse("<p>Read   more</p>", DEPTH));
        let b = label_tree(&parse("<p>\n  read more\n</p>", DEPTH));
        assert_eq!(a, b);
        let c = label_tree(&parse("<p>Read less</p>", DEPTH));
        assert_ne!(a, c);
    }
}
