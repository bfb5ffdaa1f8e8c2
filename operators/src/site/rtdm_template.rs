//! A host's template from a few of its pages by restricted top-down mapping (RTDM-TD, Vieira et
//! al. 2006; seed 002 §5), and its cheap removal from every other page.
//!
//! A page is a tree labelled by tag names and texts ([`PageTree`]). Two pages share what
//! their least-cost mapping ([`crate::site::rtdm`]) maps to equal labels: the menus, headers
//! and footers copied onto both, down to the texts they repeat, and the skeleton above them.
//! That shared part is itself a tree ([`common_subtree`], the paper's ExtractSubTree). Any two
//! pages may share more than the site does (two articles of one section share the section's
//! menu), so [`find_template`] maps the common subtree against one more page at a time and
//! keeps the last one: the template. Removal finds the template in a page read in place
//! ([`crate::site::embedding`] with a [`PageTree`]): the page's blocks it pairs whole with
//! template nodes of equal labels are the template's on that page, as SiteLevel(θ) marks its
//! template blocks; a paired `<div>` whose text differs on this page is the template's
//! skeleton, not template content, and is no root.
//!
//! Texts are labelled by the content hashes SiteLevel(θ) counts ([`crate::dom::subtree`]):
//! whitespace collapsed and case folded, so that the same menu entry indented differently on
//! two pages is the same leaf, and whitespace-only or invisible text (scripts, styles, hidden
//! elements) all one empty label, so that a page's inline script does not keep its block from
//! being the template's. The same hashes are the subtrees' keys: two blocks with the same
//! content hash are identical to the mapping, which pairs them without looking inside, so that
//! removal reads little more of a page than the parts where it differs from the template.
//!
//! Pages are sampled by URL hash ([`crate::site::site_level::url_key`]), the same order
//! SiteLevel(θ) samples in, so the template does not depend on which worker read which page.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::dom::normalize::normalize_for_hash;
use crate::dom::subtree::Subtree;
use crate::dom::{Dom, NodeKind};
use crate::site::rtdm::{map, Labelled, Limits, TooLarge, Tree};

/// Seeds keeping element labels and text labels apart (a text "div" is no `<div>`).
const ELEMENT_SEED: u64 = 0xe1e7_0002;
const TEXT_SEED: u64 = 0x7e47_0002;

/// A parsed page as seed 002 maps it, read in place: every node of the DOM in the DOM's order
/// (node `i` of the tree is node `i` of `dom`), an element labelled by its tag name, a text by
/// its content hash, and every subtree keyed by its content hash.
#[derive(Clone, Copy)]
pub struct PageTree<'a> {
    dom: &'a Dom,
    sums: &'a [Subtree],
}

impl<'a> PageTree<'a> {
    /// `sums` is [`crate::dom::subtree::summarize`]'s for `dom`.
    pub fn new(dom: &'a Dom, sums: &'a [Subtree]) -> PageTree<'a> {
        debug_assert_eq!(dom.len(), sums.len());
        PageTree { dom, sums }
    }
}

impl Labelled for PageTree<'_> {
    fn len(&self) -> usize {
        self.dom.len().min(self.sums.len())
    }

    fn label(&self, node: u32) -> u64 {
        let i = node as usize;
        match self.dom.node(i).kind {
            NodeKind::Document => 0,
            NodeKind::Element(_) => element_label(self.dom, i),
            NodeKind::Text { .. } => self.sums[i].content_hash,
        }
    }

    fn key(&self, node: u32) -> u64 {
        self.sums[node as usize].content_hash
    }

    fn end(&self, node: u32) -> u32 {
        self.dom.node(node as usize).end
    }

    fn shows_text(&self, node: u32) -> bool {
        self.sums[node as usize].text_chars > 0
    }
}

fn element_label(dom: &Dom, i: usize) -> u64 {
    let tag = dom.tag(i).map_or("", |t| &**t);
    xxh3_64_with_seed(tag.as_bytes(), ELEMENT_SEED)
}

/// The page as [`PageTree`] reads it, copied into a [`Tree`]: a sample page, kept to find the
/// template from and sent between workers.
pub fn label_tree(dom: &Dom, sums: &[Subtree]) -> Tree {
    Tree::copy_of(&PageTree::new(dom, sums))
}

/// Every node of the DOM in the DOM's order, elements labelled by `element` (called with the
/// element's index) and texts by their normalized text, keyed by [`Tree::new`]: seed 004's
/// page ([`crate::site::etdm::label_tree_exact`]), whose elements' equality content hashes do
/// not follow.
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
    Ok(t1.restrict(&mapping.equal))
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::dom::parse;
    use crate::dom::subtree::summarize;
    use crate::site::embedding::embedded_roots;
    use crate::site::rtdm::covered_roots;

    const DEPTH: usize = 512;

    fn page(menu: &str, body: &str) -> String {
        format!(
            "<html><body><nav><a href=/>Home</a><a href=/news>{menu}</a></nav>\
             <main><h1>{body}</h1><p>{body} text</p></main>\
             <footer>© Example</footer></body></html>"
        )
    }

    /// A parsed page with its content hashes.
    pub(crate) struct Parsed {
        pub dom: Dom,
        pub sums: Vec<Subtree>,
    }

    impl Parsed {
        pub fn new(html: &str) -> Parsed {
            let dom = parse(html, DEPTH);
            let sums = summarize(&dom, "example.com");
            Parsed { dom, sums }
        }

        pub fn page(&self) -> PageTree<'_> {
            PageTree::new(&self.dom, &self.sums)
        }

        pub fn tree(&self) -> Tree {
            label_tree(&self.dom, &self.sums)
        }
    }

    /// The trimmed visible texts of the nodes `nodes` marks, in document order.
    pub(crate) fn text_of(dom: &Dom, nodes: &[bool]) -> Vec<String> {
        (0..dom.len())
            .filter(|&i| nodes[i])
            .filter_map(|i| dom.visible_text(i).map(|t| t.trim().to_string()))
            .collect()
    }

    /// The visible texts of the blocks `roots` roots, in document order.
    fn texts_under(dom: &Dom, roots: &[u32]) -> Vec<String> {
        let mut inside = vec![false; dom.len()];
        for &root in roots {
            inside[dom.subtree(root as usize)]
                .iter_mut()
                .for_each(|x| *x = true);
        }
        text_of(dom, &inside)
    }

    #[test]
    fn the_template_is_what_every_sample_page_shares() {
        // The first two pages share the "News" menu entry; the third does not, so it is
        // dropped from the template, as seed 002 argues for mapping more than two pages.
        let pages = [
            Parsed::new(&page("News", "One")),
            Parsed::new(&page("News", "Two")),
            Parsed::new(&page("Sport", "Three")),
        ];
        let two =
            find_template(pages[..2].iter().map(Parsed::tree), 10, Limits::default()).unwrap();
        let three = find_template(pages.iter().map(Parsed::tree), 10, Limits::default()).unwrap();
        assert_eq!((two.pages_used, three.pages_used), (2, 3));
        assert!(three.tree.len() < two.tree.len());

        let fourth = Parsed::new(&page("News", "Four"));
        let roots = covered_roots(&three.tree, &fourth.page(), Limits::default()).unwrap();
        assert_eq!(texts_under(&fourth.dom, &roots), ["Home", "© Example"]);
        // The removal's one pass finds the same blocks.
        let cells = Limits::default().max_cells;
        assert_eq!(
            embedded_roots(&three.tree, &fourth.page(), cells).unwrap(),
            roots
        );
        let roots = covered_roots(&two.tree, &fourth.page(), Limits::default()).unwrap();
        // The whole menu is one block of the two-page template.
        assert_eq!(
            texts_under(&fourth.dom, &roots),
            ["Home", "News", "© Example"]
        );
        assert_eq!(
            embedded_roots(&two.tree, &fourth.page(), cells).unwrap(),
            roots
        );
        let tag = |root: &u32| fourth.dom.tag(*root as usize).map(|t| t.to_string());
        assert!(roots.iter().any(|root| tag(root).as_deref() == Some("nav")));
    }

    #[test]
    fn the_sample_stops_at_max_pages() {
        let pages: Vec<Parsed> = (0..6)
            .map(|k| Parsed::new(&page("News", &format!("Page {k}"))))
            .collect();
        let template = find_template(pages.iter().map(Parsed::tree), 4, Limits::default()).unwrap();
        assert_eq!(template.pages_used, 4);
        assert!(find_template(pages[..1].iter().map(Parsed::tree), 4, Limits::default()).is_none());
    }

    #[test]
    fn a_page_in_place_maps_as_its_copy() {
        let pages: Vec<Parsed> = (0..4)
            .map(|k| Parsed::new(&page(&format!("Menu {}", k % 2), &format!("Page {k}"))))
            .collect();
        let template =
            find_template(pages[..3].iter().map(Parsed::tree), 4, Limits::default()).unwrap();
        let last = &pages[3];
        assert_eq!(
            covered_roots(&template.tree, &last.page(), Limits::default()),
            covered_roots(&template.tree, &last.tree(), Limits::default())
        );
    }

    #[test]
    fn text_labels_ignore_whitespace_case_and_invisible_text() {
        let a = Parsed::new("<p>Read   more</p>").tree();
        let b = Parsed::new("<p>\n  read more\n</p>").tree();
        assert_eq!(a, b);
        let c = Parsed::new("<p>Read less</p>").tree();
        assert_ne!(a, c);
        // A block whose inline script differs from page to page is still the same block.
        let one = Parsed::new("<div><p>Menu</p><script>var id = 1;</script></div><p>One</p>");
        let two = Parsed::new("<div><p>Menu</p><script>var id = 2;</script></div><p>Two</p>");
        let template = common_subtree(&one.tree(), &two.tree(), Limits::default()).unwrap();
        let roots = covered_roots(&template, &two.page(), Limits::default()).unwrap();
        assert_eq!(texts_under(&two.dom, &roots), ["Menu"]);
    }
}
