//! A page's template by exact top-down mapping against the pages its menu links to (Alarte's
//! thesis, seed 004 §1.3 and chapter 3).
//!
//! Seed 004 starts from one *key page* and a few pages that share its menu (a complete
//! subdigraph of the site's link graph: [`crate::site::menu_graph`]). A node of the key page
//! is template when an exact top-down mapping (ETDM, Definition 1.3.4) maps it into at least
//! `t` of those pages (§3.1, Algorithm 3); the template is the key page restricted to those
//! nodes. An ETDM maps only equal nodes, each under the image of its parent, so a node can
//! only be shared when the whole path above it is: a menu copied into a different column of
//! another page is not shared, and neither is what sits under a `<div>` that became a
//! `<table>` (RTDM would map that pair as a replacement: [`crate::site::rtdm`]).
//!
//! Nodes are equal when their labels are ([`label_tree_exact`]: tag and id for an element,
//! normalized text for a text), and the largest ETDM under that equality is taken
//! ([`crate::site::rtdm::map_exact`]).
//!
//! Removal finds the template in any page of the host labelled the same way, in the one pass
//! RTDM-TD's removal makes ([`crate::site::embedding`]: it pairs equal labels only, as the
//! exact mapping does); the page's blocks it pairs whole are template there. The thesis marks
//! the key page only, so this step is ours.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::dom::Dom;
use crate::site::rtdm::{map_exact, Labelled, Limits, TooLarge, Tree, NONE};
use crate::site::rtdm_template::label_tree_with;

/// Keeps these element labels apart from [`crate::site::rtdm_template::label_tree`]'s.
const ELEMENT_SEED: u64 = 0xe1e7_0004;

/// The page as seed 004 compares it: every node of the DOM in the DOM's order (node `i` of the
/// tree is node `i` of `dom`). An element's label is its tag and its id, if it has one (an
/// empty id is an id); a text's label is its normalized text.
///
/// Node equality follows the thesis's attributes (Definition 3.2.1: tag, id, classes,
/// attribute names) where its equality probability (Definition 3.2.2) is certain: different
/// tags are different nodes, and the same tag with the same id is the same node. Between the
/// two it weighs classes, attribute names, child counts and positions with weights fitted on
/// its benchmark and maps greedily by best pair (Definition 3.3.1), which the text does not
/// let us reproduce. Compared exactly, classes cut the mapping at the top on real sites:
/// `<body class="news disable-wide-advert">` against `<body class="news">` on bbc.co.uk, a
/// WordPress body's `postid-N`, a menu's `active` item. So classes and other attribute names
/// are left out of the label; a menu item and a paragraph still differ by their texts, which
/// compare by their normalized text as in [`crate::site::rtdm_template::label_tree`]. With
/// classes and attribute names compared exactly as well, ETDM removes less of the multi-page
/// real hosts' non-gold text, and nothing at all on bbc.co.uk's key page and complete
/// subdigraph (docs/evaluation.md).
pub fn label_tree_exact(dom: &Dom) -> Tree {
    let mut key: Vec<u8> = Vec::new();
    label_tree_with(dom, |i| {
        key.clear();
        let tag = dom.tag(i).map_or("", |t| &**t);
        // Length-prefixed, with a marker for the id, so that no two tag-and-id pairs read
        // the same.
        key.extend_from_slice(&(tag.len() as u64).to_le_bytes());
        key.extend_from_slice(tag.as_bytes());
        if let Some(id) = dom.id(i) {
            key.push(1);
            key.extend_from_slice(id.as_bytes());
        }
        xxh3_64_with_seed(&key, ELEMENT_SEED)
    })
}

/// A key page's template and what finding it took.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EtdmTemplate {
    /// The key page restricted to its template nodes (empty when none is).
    pub tree: Tree,
    /// For each node of the key page, in how many of the pages used an ETDM maps it.
    pub counts: Vec<u32>,
    /// For each node of the key page, whether it is template (`counts` ≥ the threshold).
    pub in_template: Vec<bool>,
    /// Pages of the complete subdigraph the key page was mapped onto.
    pub pages_used: u32,
    /// Pages left out because mapping them passed [`Limits`].
    pub pages_too_large: u32,
}

/// Seed 004's template extraction (§3.1 and Algorithm 3) with threshold `t`: the nodes of
/// `key` that a largest exact top-down mapping maps into at least `t` of `cs_pages` (the
/// pages of the key page's complete subdigraph, labelled as `key` is). Each page is mapped
/// from the whole key page, not from the template so far, so that `t` below the number of
/// pages keeps a node a few pages skipped (the thesis's reason for `t`). A page whose
/// mapping passes `limits` is skipped and counted. `t = 0` is taken as 1: a node no page
/// shares is no template. With fewer than `t` pages used the template is empty.
///
/// A mapped node's parent is mapped too, so a node's count is at most its parent's and the
/// template is closed under parents: a tree, as [`Tree::restrict`] needs.
pub fn template_of_key_page(key: &Tree, cs_pages: &[Tree], t: u32, limits: Limits) -> EtdmTemplate {
    let t = t.max(1);
    let mut counts = vec![0u32; key.len()];
    let (mut pages_used, mut pages_too_large) = (0, 0);
    for page in cs_pages {
        match map_exact(key, page, limits) {
            Ok(mapping) => {
                pages_used += 1;
                for (count, &image) in counts.iter_mut().zip(&mapping.image) {
                    *count += u32::from(image != NONE);
                }
            }
            Err(TooLarge { .. }) => pages_too_large += 1,
        }
    }
    let in_template: Vec<bool> = counts.iter().map(|&c| c >= t).collect();
    EtdmTemplate {
        tree: key.restrict(&in_template),
        counts,
        in_template,
        pages_used,
        pages_too_large,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse;
    use crate::site::embedding::embedded_roots;
    use crate::site::rtdm::covered_roots_exact;
    use crate::site::rtdm::tests::parse as tree;
    use crate::site::rtdm_template::tests::text_of;
    use crate::xorshift;

    const DEPTH: usize = 512;

    fn page(menu: &[&str], body: &str) -> String {
        let items: String = menu
            .iter()
            .map(|m| format!("<li class=\"item\"><a href=\"/{m}\">{m}</a></li>"))
            .collect();
        format!(
            "<html><body><ul id=\"menu\" class=\"nav top\">{items}</ul>\
             <div class=\"content\"><h1>{body}</h1><p>{body} text</p></div>\
             <footer>© Example</footer></body></html>"
        )
    }

    #[test]
    fn a_node_is_template_when_t_pages_share_it() {
        let key = parse(&page(&["news", "sport", "tv"], "Key"), DEPTH);
        let cs = [
            page(&["news", "sport", "tv"], "One"),
            page(&["news", "sport"], "Two"),
            page(&["news", "weather"], "Three"),
        ];
        let cs: Vec<Tree> = cs
            .iter()
            .map(|p| label_tree_exact(&parse(p, DEPTH)))
            .collect();
        let key_tree = label_tree_exact(&key);
        let at = |t| {
            let template = template_of_key_page(&key_tree, &cs, t, Limits::default());
            assert_eq!((template.pages_used, template.pages_too_large), (3, 0));
            text_of(&key, &template.in_template)
        };
        // Every page has a second menu entry, so "sport"'s entry is template skeleton at
        // t = 3; its text is on two pages, "tv"'s on one.
        assert_eq!(at(3), ["news", "© Example"]);
        assert_eq!(at(2), ["news", "sport", "© Example"]);
        assert_eq!(at(1), ["news", "sport", "tv", "© Example"]);
        assert!(at(4).is_empty());
        assert_eq!(at(0), at(1));
    }

    #[test]
    fn removal_finds_the_template_in_another_page() {
        let pages: Vec<Dom> = [
            page(&["news", "sport"], "Key"),
            page(&["news", "sport"], "One"),
            page(&["news", "sport"], "Two"),
        ]
        .iter()
        .map(|p| parse(p, DEPTH))
        .collect();
        let trees: Vec<Tree> = pages.iter().map(label_tree_exact).collect();
        let template = template_of_key_page(&trees[0], &trees[1..], 2, Limits::default());
        let other = parse(&page(&["news", "sport"], "Four"), DEPTH);
        let other_tree = label_tree_exact(&other);
        let roots =
            embedded_roots(&template.tree, &other_tree, Limits::default().max_cells).unwrap();
        // The least-cost exact mapping finds the same blocks.
        assert_eq!(
            covered_roots_exact(&template.tree, &other_tree, Limits::default()).unwrap(),
            roots
        );
        let mut inside = vec![false; other.len()];
        for &root in &roots {
            inside[other.subtree(root as usize)]
                .iter_mut()
                .for_each(|x| *x = true);
        }
        assert_eq!(text_of(&other, &inside), ["news", "sport", "© Example"]);
        // The page's own heading and paragraph are content: their skeleton is mapped, but
        // no template block.
        let h1 = (0..other.len())
            .find(|&i| other.tag(i).is_some_and(|t| &**t == "h1"))
            .unwrap();
        assert!(!inside[h1] && !inside[h1 + 1]);
    }

    #[test]
    fn tags_and_ids_make_elements_differ() {
        let label = |html: &str| {
            let dom = parse(html, DEPTH);
            let div = (0..dom.len())
                .find(|&i| {
                    dom.tag(i)
                        .is_some_and(|t| matches!(&**t, "div" | "span" | "p"))
                })
                .unwrap();
            label_tree_exact(&dom).label(div as u32)
        };
        let base = label("<div class=\"x y\" data-k=1>t</div>");
        // Classes and other attributes are page state as often as template: they do not count.
        assert_eq!(base, label("<div class=\"news active\">t</div>"));
        assert_eq!(base, label("<div>t</div>"));
        assert_ne!(base, label("<span class=\"x y\" data-k=1>t</span>"));
        // The same tag and id are the same node (Definition 3.2.2's certain case).
        let with_id = label("<div id=a class=\"x y\" data-k=1>t</div>");
        assert_ne!(base, with_id);
        assert_eq!(with_id, label("<div id=a class=\"z\">t</div>"));
        assert_ne!(with_id, label("<div id=b class=\"x y\" data-k=1>t</div>"));
        assert_ne!(with_id, label("<p id=a class=\"x y\" data-k=1>t</p>"));
        // An empty id is still an id attribute.
        assert_ne!(label("<div id=\"\">t</div>"), label("<div>t</div>"));
        assert_ne!(label("<div id=\"\">t</div>"), with_id);
        // Texts compare as `label_tree` compares them.
        let a = label_tree_exact(&parse("<p>Read   more</p>", DEPTH));
        let b = label_tree_exact(&parse("<p>\n read MORE</p>", DEPTH));
        assert_eq!(a, b);
    }

    #[test]
    fn the_template_is_closed_under_parents() {
        let mut state = 0x0dd_ba11_cafe_f00d;
        for round in 0..500 {
            let alphabet = 2 + round % 3;
            let key = random_tree(&mut state, 12, alphabet);
            let pages: Vec<Tree> = (0..1 + round % 4)
                .map(|_| random_tree(&mut state, 12, alphabet))
                .collect();
            let t = 1 + (round as u32) % 3;
            let template = template_of_key_page(&key, &pages, t, Limits::default());
            for node in 0..key.len() as u32 {
                for child in key.children(node) {
                    assert!(
                        template.counts[child as usize] <= template.counts[node as usize],
                        "round {round}"
                    );
                    assert!(
                        !template.in_template[child as usize]
                            || template.in_template[node as usize],
                        "round {round}"
                    );
                }
            }
            let kept = template.in_template.iter().filter(|&&k| k).count();
            assert_eq!(template.tree.len(), kept);
        }
    }

    /// A random tree with node 0 always labelled 0, as a page's document node is.
    fn random_tree(state: &mut u64, max_nodes: u64, alphabet: u64) -> Tree {
        let n = 1 + (xorshift(state) % max_nodes) as u32;
        let mut depth_path = vec![0u32];
        let mut ends = vec![n; n as usize];
        let mut labels = vec![0u64];
        for i in 1..n {
            let keep = 1 + (xorshift(state) % depth_path.len() as u64) as usize;
            for &closed in &depth_path[keep..] {
                ends[closed as usize] = i;
            }
            depth_path.truncate(keep);
            depth_path.push(i);
            labels.push(1 + xorshift(state) % alphabet);
        }
        Tree::new(labels, ends).unwrap()
    }

    #[test]
    fn pages_too_large_are_skipped_and_counted() {
        let key = tree("r(a b c d)");
        // Nothing in common but the root: the whole 5 × 9 matrix.
        let wide = tree("r(e f g h i j k l)");
        let small = tree("r(a)");
        let template = template_of_key_page(&key, &[wide, small], 1, Limits { max_cells: 12 });
        assert_eq!((template.pages_used, template.pages_too_large), (1, 1));
        assert_eq!(template.tree.parts().0, tree("r(a)").parts().0);
        assert_eq!(template.counts, [1, 1, 0, 0, 0]);
    }
}
