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
//! Node equality is the thesis's attributes (Definition 3.2.1: tag, id, classes, attribute
//! names) compared exactly ([`label_tree_exact`]). Its probabilistic equality (Definition
//! 3.2.2, weights fitted on its benchmark, positions among siblings, a greedy best-pair
//! mapping, Definition 3.3.1) cannot be reproduced from the text, so we take exact equality
//! of (tag, id, sorted classes, sorted attribute names) and the largest ETDM under it
//! ([`crate::site::rtdm::map_exact`]). Texts compare by their normalized text, as in
//! [`crate::site::rtdm_template::label_tree`], so that a menu entry is template and an
//! article's paragraph is not.
//!
//! Removal maps the template onto any page of the host ([`template_nodes_exact`]); the page's
//! nodes it maps are template there.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::dom::Dom;
use crate::site::rtdm::{map_exact, Limits, TooLarge, Tree, NONE};
use crate::site::rtdm_template::label_tree_with;

/// Keeps these element labels apart from [`crate::site::rtdm_template::label_tree`]'s.
const ELEMENT_SEED: u64 = 0xe1e7_0004;

/// The page as seed 004 compares it: every node of the DOM in the DOM's order (node `i` of the
/// tree is node `i` of `dom`). An element's label is its tag, id, set of classes and set of
/// attribute names (Definition 3.2.1's attributes without the child index, which the mapping
/// accounts for by keeping sibling order); a text's label is its normalized text.
pub fn label_tree_exact(dom: &Dom) -> Tree {
    let mut key: Vec<u8> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    label_tree_with(dom, |i| {
        key.clear();
        // Length-prefixed fields, so that no two different attribute sets read the same.
        let field = |key: &mut Vec<u8>, bytes: &[u8]| {
            key.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            key.extend_from_slice(bytes);
        };
        field(&mut key, dom.tag(i).map_or("", |t| &**t).as_bytes());
        match dom.id(i) {
            Some(id) => {
                key.push(1);
                field(&mut key, id.as_bytes());
            }
            None => key.push(0),
        }
        // Classes are a set: order and repeats in the attribute do not make another node.
        names.clear();
        names.extend(dom.classes(i));
        names.sort_unstable();
        names.dedup();
        key.extend_from_slice(&(names.len() as u64).to_le_bytes());
        for name in &names {
            field(&mut key, name.as_bytes());
        }
        // The attribute names other than id and class: the arena keeps href, src and alt
        // apart from the rest.
        names.clear();
        names.extend(dom.other_attributes(i).iter().map(|n| &**n));
        if let Some(element) = dom.element(i) {
            for (present, name) in [
                (element.href.is_some(), "href"),
                (element.src.is_some(), "src"),
                (element.alt.is_some(), "alt"),
            ] {
                if present {
                    names.push(name);
                }
            }
        }
        names.sort_unstable();
        names.dedup();
        key.extend_from_slice(&(names.len() as u64).to_le_bytes());
        for name in &names {
            field(&mut key, name.as_bytes());
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

/// The removal pass: for every node of `page`, whether a largest exact top-down mapping of
/// `template` onto `page` maps a template node to it (seed 004's template applied to another
/// page of the site; the thesis marks the key page only, so this step is ours).
pub fn template_nodes_exact(
    template: &Tree,
    page: &Tree,
    limits: Limits,
) -> Result<Vec<bool>, TooLarge> {
    let mut covered = vec![false; page.len()];
    let mapping = map_exact(template, page, limits)?;
    for &b in &mapping.image {
        if b != NONE {
            covered[b as usize] = true;
        }
    }
    Ok(covered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse;
    use crate::site::rtdm::tests::parse as tree;
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

    fn texts(dom: &Dom, nodes: &[bool]) -> Vec<String> {
        (0..dom.len())
            .filter(|&i| nodes[i])
            .filter_map(|i| dom.visible_text(i).map(|t| t.trim().to_string()))
            .collect()
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
            texts(&key, &template.in_template)
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
    fn removal_maps_the_template_onto_another_page() {
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
        let covered =
            template_nodes_exact(&template.tree, &label_tree_exact(&other), Limits::default())
                .unwrap();
        assert_eq!(texts(&other, &covered), ["news", "sport", "© Example"]);
        // The page's own heading and paragraph are content, their skeleton template.
        let h1 = (0..other.len())
            .find(|&i| other.tag(i).is_some_and(|t| &**t == "h1"))
            .unwrap();
        assert!(covered[h1]);
        assert!(!covered[h1 + 1]);
    }

    #[test]
    fn attributes_make_elements_differ() {
        let label = |html: &str| {
            let dom = parse(html, DEPTH);
            let div = (0..dom.len())
                .find(|&i| dom.tag(i).is_some_and(|t| &**t == "div"))
                .unwrap();
            label_tree_exact(&dom).label(div as u32)
        };
        let base = label("<div id=a class=\"x y\" data-k=1>t</div>");
        // Classes and attribute names are sets; attribute values other than id's do not count.
        assert_eq!(base, label("<div class=\"y x x\" data-k=2 id=a>t</div>"));
        assert_ne!(base, label("<div id=b class=\"x y\" data-k=1>t</div>"));
        assert_ne!(base, label("<div class=\"x y\" data-k=1>t</div>"));
        assert_ne!(base, label("<div id=a class=\"x\" data-k=1>t</div>"));
        assert_ne!(base, label("<div id=a class=\"x y\">t</div>"));
        assert_ne!(
            base,
            label("<div id=a class=\"x y\" data-k=1 href=/>t</div>")
        );
        assert_ne!(base, label("<div id=\"\" class=\"x y\" data-k=1>t</div>"));
        // An empty id is still an id attribute.
        assert_ne!(label("<div id=\"\">t</div>"), label("<div>t</div>"));
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
        let wide = tree("r(a b c d e f g h)");
        let small = tree("r(a)");
        let template = template_of_key_page(&key, &[wide, small], 1, Limits { max_cells: 12 });
        assert_eq!((template.pages_used, template.pages_too_large), (1, 1));
        assert_eq!(template.tree, tree("r(a)"));
        assert_eq!(template.counts, [1, 1, 0, 0, 0]);
    }
}
