//! A site's template as a tree regular expression (seed 003), learned from a few of its pages,
//! and every page's nodes mapped to the template nodes they instantiate.
//!
//! A page is seen as its structure: elements labelled by tag name with their `id` and classes
//! (digits dropped, so that `post-17` and `post-18` are one name; two elements of one tag
//! whose names differ still match, for less), and texts all one label ([`TEXT`]); only what shows (an element with visible text or an image, a text that is not
//! blank) takes part, so a spacer or an inline script does not make two pages differ. What a
//! node shows is its *content feature*, kept beside the structure: a text's content hash, a
//! link's `href`, an image's `src` ([`page_tree`]).
//!
//! The template is a tree over [`Op`]s: an element or text as the pages have it, `*` (a run of
//! one or more siblings of a similar structure: list items, cards, comments, paragraphs), `?`
//! (a part some pages lack) and `|` (one of several structures at one place). [`learn`] starts
//! from the first page's structure (a run of alike siblings already a `*`) and generalizes it
//! over each next page: the template node's children and the page node's children are aligned
//! (a weighted longest common subsequence in which a `*` takes a run), and what is left over
//! becomes `?` (a template part the page lacks, or a page part the template lacks) or `|` (one
//! of each at the same place); a part matched twice or more in a row becomes a `*`. The learned
//! template is then matched against each sample page again ([`TreeRegex::matched`], the same
//! alignment with nothing added) to count its page support (PS): per template node, the pages
//! with a node mapped to it; per content feature at a template node, the pages that show it
//! there. Node support is PS over the sample size k, a feature's noise confidence its PS over
//! its node's (the seed's definitions); [`TreeRegex::noise_confidence`] gives it for a
//! template node and a feature, zero where the node's support is below [`MIN_NODE_SUPPORT`]
//! (the seed's 20%).
//!
//! Why not the mapping of seeds 002 and 004: a least-cost mapping pairs the i-th list item of
//! one page with the i-th of the other, and a template of what all pages share keeps neither a
//! list of another length nor an optional block; the expression keeps both, and says which
//! page nodes are items of one list, which [`crate::site::sections`] makes a section.
//!
//! Everything is a loop over explicit stacks (no recursion over trees), the alignment of two
//! child lists is bounded ([`MAX_ALIGN_CELLS`], beyond which it is greedy) and the template's
//! size is bounded ([`Bounds::max_nodes`]): a page that would grow it past the bound adds
//! nothing more, and the template says so ([`TreeRegex::truncated`]).

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::dom::subtree::Subtree;
use crate::dom::{Dom, NodeKind};
use crate::site::clusters::{self, path_hash};
use crate::site::rtdm::{Labelled, Tree, NONE};

/// The label of every text node: texts differ by content, not structure.
pub const TEXT: u64 = 1;

/// The label of the page's root (the document).
pub const ROOT: u64 = 0;

/// Sample pages a template is learned from, by default (the seed's evaluation learned from 15).
pub const DEFAULT_TEMPLATE_SAMPLE: u32 = 15;

/// Node support below which a template node's features say nothing (the seed's 20%).
pub const MIN_NODE_SUPPORT: f64 = 0.2;

/// Cells of one alignment of two child lists at most; a longer pair is aligned greedily.
pub const MAX_ALIGN_CELLS: usize = 1 << 20;

/// How far ahead the greedy alignment looks for a template item that fits a page child.
const GREEDY_LOOKAHEAD: usize = 8;

/// The operators' own labels, above every element label (whose high half is below 2³² − 1).
const STAR_LABEL: u64 = u64::MAX - 2;
const OPT_LABEL: u64 = u64::MAX - 1;
const ALT_LABEL: u64 = u64::MAX;

const ELEMENT_SEED: u64 = 0x7265_0003;
const FEATURE_SEED: u64 = 0xfea7_0003;

/// A node of a tree regular expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// An element (its label) or a text ([`TEXT`]), as pages have it.
    Node(u64),
    /// One or more of its one child, in a row.
    Star,
    /// Its one child, or nothing.
    Opt,
    /// One of its children (two or more).
    Alt,
}

impl Op {
    fn encode(self) -> u64 {
        match self {
            Op::Node(label) => label,
            Op::Star => STAR_LABEL,
            Op::Opt => OPT_LABEL,
            Op::Alt => ALT_LABEL,
        }
    }

    fn decode(code: u64) -> Op {
        match code {
            STAR_LABEL => Op::Star,
            OPT_LABEL => Op::Opt,
            ALT_LABEL => Op::Alt,
            label => Op::Node(label),
        }
    }
}

/// What bounds learning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Template nodes at most.
    pub max_nodes: usize,
    /// Content features kept per template node at most (those on the most pages).
    pub max_features: usize,
}

impl Default for Bounds {
    /// 20,000 nodes (a real page's visible structure has a few thousand) and 64 features a
    /// node (a menu entry has one; a place every page fills differently keeps none that count).
    fn default() -> Self {
        Bounds {
            max_nodes: 20_000,
            max_features: 64,
        }
    }
}

/// A page as the expression reads it ([`page_tree`]): its structure as a [`Tree`] whose labels
/// are [`TEXT`] or element labels and whose keys are content features (0 for none), and for
/// each of its nodes the DOM node it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexPage {
    pub tree: Tree,
    pub dom: Vec<u32>,
}

/// The visible structure of a page: the document, every element that shows text or an image,
/// every text that shows, in DOM order.
pub fn page_tree(dom: &Dom, sums: &[Subtree]) -> RegexPage {
    let mut labels = Vec::new();
    let mut ends = Vec::new();
    let mut keys = Vec::new();
    let mut nodes = Vec::new();
    // Open kept ancestors: (DOM end, index in the new tree).
    let mut open: Vec<(u32, usize)> = Vec::new();
    let mut i = 0usize;
    let n = dom.len().min(sums.len());
    let close = |open: &mut Vec<(u32, usize)>, ends: &mut Vec<u32>, upto: u32, len: usize| {
        while open.last().is_some_and(|&(end, _)| end <= upto) {
            if let Some((_, at)) = open.pop() {
                ends[at] = len as u32;
            }
        }
    };
    while i < n {
        close(&mut open, &mut ends, i as u32, labels.len());
        let node = dom.node(i);
        let end = (node.end as usize).clamp(i + 1, n);
        let shows = sums[i].text_chars > 0 || sums[i].images > 0;
        let (label, key) = match node.kind {
            NodeKind::Document => (ROOT, 0),
            NodeKind::Element(_) if shows => (element_label(dom, i), element_feature(dom, i)),
            NodeKind::Text { .. } if sums[i].text_chars > 0 => (TEXT, sums[i].content_hash),
            _ => {
                // Nothing of this subtree shows: skip it whole.
                i = end;
                continue;
            }
        };
        open.push((end as u32, labels.len()));
        labels.push(label);
        ends.push(0);
        keys.push(key);
        nodes.push(i as u32);
        i += 1;
    }
    close(&mut open, &mut ends, u32::MAX, labels.len());
    // A DOM's subtrees nest, so the kept nodes are a tree in preorder.
    let tree = Tree::from_parts((labels, ends, keys)).unwrap_or_default();
    let dom = match tree.is_empty() {
        true => Vec::new(),
        false => nodes,
    };
    RegexPage { tree, dom }
}

/// An element's label: its tag's hash in the high 32 bits ([`tag_of`]), its `id` and sorted
/// classes' (digits dropped) in the low 32. Two elements of one tag whose names differ (a
/// `<body>` whose classes name the page's category) can still be matched, for less.
fn element_label(dom: &Dom, i: usize) -> u64 {
    let tag = dom.tag(i).map_or("", |t| &**t);
    let mut bytes: Vec<u8> = Vec::with_capacity(32);
    if let Some(id) = dom.id(i) {
        bytes.extend(id.bytes().filter(|b| !b.is_ascii_digit()));
    }
    let mut classes: Vec<&str> = dom.classes(i).collect();
    classes.sort_unstable();
    for class in classes {
        bytes.push(b'.');
        bytes.extend(class.bytes().filter(|b| !b.is_ascii_digit()));
    }
    let high = xxh3_64_with_seed(tag.as_bytes(), ELEMENT_SEED) as u32;
    let high = u64::from(high.clamp(1, u32::MAX - 1));
    let low = u64::from(xxh3_64_with_seed(&bytes, ELEMENT_SEED) as u32);
    (high << 32) | low
}

/// The tag part of a label: an element's tag hash, or the label itself for a text or the
/// root (below 2³²).
pub fn tag_of(label: u64) -> u64 {
    match label >> 32 {
        0 => label,
        tag => tag << 32,
    }
}

/// A tree seen by its tags only ([`tag_of`]): what pages are grouped by and matched to a
/// template by ([`clusters::signature`]), so that names that vary between the pages of one
/// template do not split them.
pub struct Tags<T>(pub T);

impl<T: std::borrow::Borrow<Tree>> Labelled for Tags<T> {
    fn len(&self) -> usize {
        self.0.borrow().len()
    }

    fn label(&self, node: u32) -> u64 {
        tag_of(self.0.borrow().label(node))
    }

    fn key(&self, node: u32) -> u64 {
        self.0.borrow().key(node)
    }

    fn end(&self, node: u32) -> u32 {
        self.0.borrow().end(node)
    }
}

/// A link's `href` or an image's `src`, hashed; 0 for any other element.
fn element_feature(dom: &Dom, i: usize) -> u64 {
    let value = match dom.tag(i).map(|t| &**t) {
        Some("a") => dom.href(i),
        Some("img") => dom.src(i),
        _ => None,
    };
    value.map_or(0, |v| xxh3_64_with_seed(v.as_bytes(), FEATURE_SEED).max(1))
}

/// A learned template: the expression, its page support and its features' page support.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeRegex {
    /// Nodes in preorder: node 0 is the root (the document); children follow their parent.
    ops: Vec<Op>,
    /// Node `i`'s children are `kids[kid_start[i]..kid_start[i + 1]]`.
    kid_start: Vec<u32>,
    kids: Vec<u32>,
    /// Per node: sample pages with a node mapped to it.
    support: Vec<u32>,
    /// Per node: (feature, pages showing it there), sorted by feature.
    features: Vec<Vec<(u64, u32)>>,
    /// The sample size k.
    pages: u32,
    /// Whether a page would have grown the template past its bound.
    truncated: bool,
}

/// A template as it crosses workers ([`TreeRegex::to_parts`]): its operators, children
/// (start offsets and lists), support, (node, feature, pages) triples, k and whether truncated.
pub type RegexParts = (
    Vec<u64>,
    Vec<u32>,
    Vec<u32>,
    Vec<u32>,
    Vec<(u32, u64, u32)>,
    u32,
    bool,
);

/// Why parts are not a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadRegex;

/// A page matched against a template ([`TreeRegex::matched`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matched {
    /// Per node of the page tree: the template node (an [`Op::Node`]) it instantiates, or
    /// [`NONE`].
    pub image: Vec<u32>,
    /// Per node of the page tree: the `*` template node whose run it is an item of, or
    /// [`NONE`].
    pub star: Vec<u32>,
}

impl Matched {
    /// Whether every node of the page instantiates a template node.
    pub fn fits(&self) -> bool {
        self.image.iter().all(|&t| t != NONE)
    }

    /// The share of the page's nodes that instantiate a template node.
    pub fn coverage(&self) -> f64 {
        match self.image.len() {
            0 => 1.0,
            n => self.image.iter().filter(|&&t| t != NONE).count() as f64 / n as f64,
        }
    }
}

impl TreeRegex {
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn op(&self, node: u32) -> Op {
        self.ops[node as usize]
    }

    pub fn children(&self, node: u32) -> &[u32] {
        let (a, b) = (
            self.kid_start[node as usize] as usize,
            self.kid_start[node as usize + 1] as usize,
        );
        &self.kids[a..b]
    }

    /// A node's parent (none for the root), found by a scan of the children lists.
    pub fn parent(&self, node: u32) -> Option<u32> {
        (0..self.len() as u32).find(|&p| self.children(p).contains(&node))
    }

    /// Sample pages the template was learned from (k).
    pub fn pages(&self) -> u32 {
        self.pages
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Page support of a template node.
    pub fn support(&self, node: u32) -> u32 {
        self.support[node as usize]
    }

    /// Node support: page support over k.
    pub fn node_support(&self, node: u32) -> f64 {
        match self.pages {
            0 => 0.0,
            k => f64::from(self.support(node)) / f64::from(k),
        }
    }

    /// Page support of `feature` at a template node.
    pub fn feature_support(&self, node: u32, feature: u64) -> u32 {
        let features = &self.features[node as usize];
        features
            .binary_search_by_key(&feature, |&(f, _)| f)
            .map_or(0, |at| features[at].1)
    }

    /// A feature's noise confidence at a template node: its page support over the node's, if
    /// the node's support is at least [`MIN_NODE_SUPPORT`]; 0 otherwise or for no feature.
    pub fn noise_confidence(&self, node: u32, feature: u64) -> f64 {
        if node == NONE || feature == 0 || self.node_support(node) < MIN_NODE_SUPPORT {
            return 0.0;
        }
        match self.support(node) {
            0 => 0.0,
            s => f64::from(self.feature_support(node, feature)) / f64::from(s),
        }
    }

    /// The element paths ([`clusters::signature`] of [`Tags`]) of the template's nodes with
    /// children that at least half the sample pages have: what a page of this template has
    /// most of.
    pub fn signature(&self) -> Vec<u64> {
        let mut paths = Vec::new();
        // (template node, path of the nearest element above it).
        let mut todo: Vec<(u32, u64)> = vec![(0, 0)];
        while let Some((node, above)) = todo.pop() {
            let path = match self.op(node) {
                Op::Node(label) => {
                    let path = path_hash(above, tag_of(label));
                    let common = 2 * u64::from(self.support(node)) >= u64::from(self.pages);
                    if !self.children(node).is_empty() && common {
                        paths.push(path);
                    }
                    path
                }
                _ => above,
            };
            todo.extend(self.children(node).iter().map(|&k| (k, path)));
        }
        paths.sort_unstable();
        paths.dedup();
        paths
    }

    /// Counts of the operators: (`*`, `?`, `|`).
    pub fn operators(&self) -> (usize, usize, usize) {
        let count = |op: Op| self.ops.iter().filter(|&&o| o == op).count();
        (count(Op::Star), count(Op::Opt), count(Op::Alt))
    }

    /// The template as it crosses workers.
    pub fn to_parts(&self) -> RegexParts {
        let mut features = Vec::new();
        for (node, list) in self.features.iter().enumerate() {
            for &(feature, pages) in list {
                features.push((node as u32, feature, pages));
            }
        }
        (
            self.ops.iter().map(|op| op.encode()).collect(),
            self.kid_start.clone(),
            self.kids.clone(),
            self.support.clone(),
            features,
            self.pages,
            self.truncated,
        )
    }

    /// A template from [`TreeRegex::to_parts`], checked: a tree in preorder (every node but the
    /// root the child of exactly one node before it) of operators with the children they take.
    pub fn from_parts(parts: RegexParts) -> Result<TreeRegex, BadRegex> {
        let (ops, kid_start, kids, support, triples, pages, truncated) = parts;
        let n = ops.len();
        if n == 0 || kid_start.len() != n + 1 || support.len() != n || n >= NONE as usize {
            return Err(BadRegex);
        }
        if kid_start[0] != 0 || kid_start[n] as usize != kids.len() {
            return Err(BadRegex);
        }
        let mut parent = vec![NONE; n];
        let ops: Vec<Op> = ops.into_iter().map(Op::decode).collect();
        for node in 0..n {
            let (a, b) = (kid_start[node] as usize, kid_start[node + 1] as usize);
            if a > b || b > kids.len() {
                return Err(BadRegex);
            }
            let count = b - a;
            let fits = match ops[node] {
                Op::Node(_) => true,
                Op::Star | Op::Opt => count == 1,
                Op::Alt => count >= 2,
            };
            if !fits {
                return Err(BadRegex);
            }
            for &kid in &kids[a..b] {
                let k = kid as usize;
                if k <= node || k >= n || parent[k] != NONE {
                    return Err(BadRegex);
                }
                parent[k] = node as u32;
            }
        }
        if parent.iter().skip(1).any(|&p| p == NONE) || ops[0] != Op::Node(ROOT) {
            return Err(BadRegex);
        }
        let mut features = vec![Vec::new(); n];
        for (node, feature, count) in triples {
            features
                .get_mut(node as usize)
                .ok_or(BadRegex)?
                .push((feature, count));
        }
        for list in &mut features {
            list.sort_unstable();
            list.dedup_by_key(|(f, _)| *f);
        }
        Ok(TreeRegex {
            ops,
            kid_start,
            kids,
            support,
            features,
            pages,
            truncated,
        })
    }

    /// Maps `page`'s nodes to the template nodes they instantiate, top down: the root to the
    /// root, and under each mapped pair the page node's children aligned with the template
    /// node's ([`align`]); nothing is added to the template.
    pub fn matched(&self, page: &Tree) -> Matched {
        let view = Frozen(self);
        let mut image = vec![NONE; page.len()];
        let mut star = vec![NONE; page.len()];
        if !is_page(page) || self.is_empty() {
            return Matched { image, star };
        }
        let mut stack: Vec<(u32, u32)> = vec![(0, 0)];
        let mut kids = Vec::new();
        while let Some((t, p)) = stack.pop() {
            image[p as usize] = t;
            kids.clear();
            kids.extend(page.children(p));
            let items = self.children(t);
            for step in align(&view, items, page, &kids, false) {
                if let Step::Match(i, j) = step {
                    let (item, kid) = (items[i], kids[j]);
                    if let Some(node) = view.resolve(item, page.label(kid)) {
                        if let Some(s) = view.star_of(item) {
                            star[kid as usize] = s;
                        }
                        stack.push((node, kid));
                    }
                }
            }
        }
        Matched { image, star }
    }
}

/// A host's templates when its pages may follow several: the sample pages grouped by
/// structure ([`clusters::grouped`], groups of at least `min_group_pages`) and a template
/// learned from the first `template_sample` pages of each group, in the order of the groups'
/// first pages; with the pages of the group it was learned from.
pub fn learn_groups(
    samples: Vec<Tree>,
    groups: (u32, f64),
    template_sample: u32,
    bounds: Bounds,
) -> Vec<(TreeRegex, u32)> {
    let samples: Vec<Tags<Tree>> = samples.into_iter().map(Tags).collect();
    clusters::grouped(samples, groups)
        .into_iter()
        .filter_map(|pages| {
            let take = template_sample.max(1) as usize;
            let pages: Vec<&Tree> = pages.iter().take(take).map(|p| &p.0).collect();
            learn(&pages, bounds).map(|regex| (regex, pages.len() as u32))
        })
        .collect()
}

/// Whether a tree is a page as [`page_tree`] makes them (rooted at the document): what
/// learning takes; anything else is left out.
fn is_page(tree: &Tree) -> bool {
    !tree.is_empty() && tree.label(0) == ROOT
}

/// Learns a template from `pages` (the first is the starting structure) and counts its page
/// support over them. `None` for no page.
pub fn learn(pages: &[&Tree], bounds: Bounds) -> Option<TreeRegex> {
    let mut usable = pages.iter().filter(|p| is_page(p));
    let first = usable.next()?;
    let mut draft = Draft {
        nodes: Vec::new(),
        max_nodes: bounds.max_nodes.max(1),
        truncated: false,
    };
    // The first page's structure, its runs of alike siblings made `*`s (and generalized over
    // their items); then each next page.
    let mut stack = Vec::new();
    if draft.room_for(first.len()) {
        draft.copy(first, 0, &mut stack);
    } else {
        draft.add(Op::Node(ROOT), Vec::new());
    }
    draft.generalize(first, stack);
    for page in usable {
        draft.generalize(page, vec![(0, 0)]);
    }
    let mut regex = draft.freeze();
    regex.count_support(pages, bounds.max_features);
    Some(regex)
}

impl TreeRegex {
    /// Page support of every node and of every feature at it over `pages`.
    fn count_support(&mut self, pages: &[&Tree], max_features: usize) {
        let n = self.len();
        let mut support = vec![0u32; n];
        let mut counts: Vec<std::collections::HashMap<u64, u32>> = vec![Default::default(); n];
        let mut seen_node = vec![u32::MAX; n];
        let mut seen_features: std::collections::HashSet<(u32, u64)> = Default::default();
        let mut k = 0u32;
        for (number, page) in pages.iter().enumerate() {
            if !is_page(page) {
                continue;
            }
            k += 1;
            let matched = self.matched(page);
            seen_features.clear();
            for (p, &t) in matched.image.iter().enumerate() {
                if t == NONE {
                    continue;
                }
                if seen_node[t as usize] != number as u32 {
                    seen_node[t as usize] = number as u32;
                    support[t as usize] += 1;
                }
                let feature = page.key(p as u32);
                if feature != 0 && seen_features.insert((t, feature)) {
                    *counts[t as usize].entry(feature).or_default() += 1;
                }
            }
        }
        // An operator is on the pages its children are on.
        for node in (0..n).rev() {
            if let Op::Node(_) = self.ops[node] {
                continue;
            }
            let s = self
                .children(node as u32)
                .iter()
                .map(|&c| support[c as usize])
                .max()
                .unwrap_or(0);
            support[node] = s;
        }
        self.features = counts
            .into_iter()
            .map(|map| {
                // A feature on one page only says nothing of noise and is what a page's own
                // content is: kept are those on two pages or more, the most common first.
                let mut list: Vec<(u64, u32)> = map.into_iter().filter(|&(_, c)| c >= 2).collect();
                list.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                list.truncate(max_features);
                list.sort_unstable();
                list
            })
            .collect();
        self.support = support;
        self.pages = k;
    }
}

/// One step of an alignment of template items (`i`) with page children (`j`), in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Match(usize, usize),
    Item(usize),
    Kid(usize),
}

/// What the alignment reads of a template, learned or being learned.
trait Items {
    fn op(&self, node: u32) -> Op;
    fn kids(&self, node: u32) -> &[u32];

    /// The [`Op::Node`] under `item` (through `?`, `*` and `|`) that a page node labelled
    /// `label` instantiates.
    fn resolve(&self, item: u32, label: u64) -> Option<u32> {
        self.resolve_fit(item, label).map(|(node, _)| node)
    }

    /// [`Items::resolve`], and whether the node's label is the page node's (`true`) or only
    /// its tag ([`tag_of`]; an exact one is preferred).
    fn resolve_fit(&self, item: u32, label: u64) -> Option<(u32, bool)> {
        // The grammar nests at most `?` over `*` or `|`, `*` over a node, `|` over nodes.
        let fit = |l: u64| match l == label {
            true => Some(true),
            false => (tag_of(l) == tag_of(label) && label >> 32 != 0).then_some(false),
        };
        let mut at = item;
        for _ in 0..4 {
            match self.op(at) {
                Op::Node(l) => return fit(l).map(|exact| (at, exact)),
                Op::Star | Op::Opt => at = *self.kids(at).first()?,
                Op::Alt => {
                    let kids = self.kids(at);
                    let option = |exact: bool| {
                        kids.iter().copied().find(|&k| match self.op(k) {
                            Op::Node(l) => fit(l) == Some(exact),
                            _ => false,
                        })
                    };
                    return match option(true) {
                        Some(k) => Some((k, true)),
                        None => option(false).map(|k| (k, false)),
                    };
                }
            }
        }
        None
    }

    /// The `*` an item is or holds (`?` over `*`), whose run a matched page node is an item of.
    fn star_of(&self, item: u32) -> Option<u32> {
        match self.op(item) {
            Op::Star => Some(item),
            Op::Opt => self
                .kids(item)
                .first()
                .filter(|&&k| self.op(k) == Op::Star)
                .copied(),
            _ => None,
        }
    }

    /// Whether an item may take a run of page children: a `*` (or `?` over one), and while
    /// learning a plain node too (it then becomes a `*`).
    fn repeats(&self, item: u32, learning: bool) -> bool {
        match self.op(item) {
            Op::Star => true,
            Op::Node(_) => learning,
            Op::Opt => self
                .kids(item)
                .first()
                .is_some_and(|&k| self.repeats(k, learning) && self.op(k) != Op::Opt),
            Op::Alt => false,
        }
    }

    /// The node an item stands for when its children are compared: itself, or the first node
    /// under its operators.
    fn first_node(&self, item: u32) -> u32 {
        let mut at = item;
        for _ in 0..4 {
            match self.op(at) {
                Op::Node(_) => return at,
                _ => match self.kids(at).first() {
                    Some(&k) => at = k,
                    None => return at,
                },
            }
        }
        at
    }

    /// The labels of a node's children as alignment compares them: each item's first node's.
    fn child_labels(&self, node: u32, out: &mut Vec<u64>) {
        out.clear();
        for &kid in self.kids(node).iter().take(32) {
            if let Op::Node(label) = self.op(self.first_node(kid)) {
                out.push(label);
            }
        }
        out.sort_unstable();
        out.dedup();
    }
}

struct Frozen<'a>(&'a TreeRegex);

impl Items for Frozen<'_> {
    fn op(&self, node: u32) -> Op {
        self.0.op(node)
    }

    fn kids(&self, node: u32) -> &[u32] {
        self.0.children(node)
    }
}

/// Sorted, distinct labels of a page node's children (the first 32).
fn page_child_labels(page: &Tree, node: u32, out: &mut Vec<u64>) {
    out.clear();
    out.extend(page.children(node).take(32).map(|c| page.label(c)));
    out.sort_unstable();
    out.dedup();
}

/// Whether two sorted label sets are alike: Jaccard similarity ([`clusters::similarity`]) at
/// least ½ (two empty sets are).
fn alike(a: &[u64], b: &[u64]) -> bool {
    clusters::similarity(a, b) >= 0.5
}

/// Whether two page siblings are items of one list: the same label and alike children.
fn siblings_alike(page: &Tree, a: u32, b: u32, scratch: &mut (Vec<u64>, Vec<u64>)) -> bool {
    if page.label(a) != page.label(b) {
        return false;
    }
    page_child_labels(page, a, &mut scratch.0);
    page_child_labels(page, b, &mut scratch.1);
    alike(&scratch.0, &scratch.1)
}

/// Aligns template `items` with the page children `kids`: a weighted longest common
/// subsequence where an item matches a child it has a node of the child's label for (4, and 2
/// more when their children's labels are alike; of its tag only, 2 and 1), and an item that repeats takes a run of
/// children (each after the first for one less; while learning, only children alike to the
/// one before). Over [`MAX_ALIGN_CELLS`] cells, greedily in order.
fn align(tpl: &impl Items, items: &[u32], page: &Tree, kids: &[u32], learning: bool) -> Vec<Step> {
    let (m, n) = (items.len(), kids.len());
    let mut scratch = (Vec::new(), Vec::new());
    let mut item_labels: Vec<Vec<u64>> = Vec::with_capacity(m);
    for &item in items {
        let mut labels = Vec::new();
        tpl.child_labels(tpl.first_node(item), &mut labels);
        item_labels.push(labels);
    }
    let kid_labels: Vec<Vec<u64>> = kids
        .iter()
        .map(|&k| {
            let mut labels = Vec::new();
            page_child_labels(page, k, &mut labels);
            labels
        })
        .collect();
    let score = |i: usize, j: usize| -> i32 {
        let alike = || alike(&item_labels[i], &kid_labels[j]);
        match tpl.resolve_fit(items[i], page.label(kids[j])) {
            None => 0,
            Some((_, true)) => 4 + 2 * i32::from(alike()),
            Some((_, false)) => 2 + i32::from(alike()),
        }
    };
    // A run continues into child j when the item repeats and (learning) j is alike to j - 1.
    let mut run_ok: Vec<bool> = vec![false; n];
    for j in 1..n {
        run_ok[j] = !learning || siblings_alike(page, kids[j - 1], kids[j], &mut scratch);
    }
    let repeats: Vec<bool> = items.iter().map(|&t| tpl.repeats(t, learning)).collect();
    if m.saturating_mul(n) > MAX_ALIGN_CELLS {
        return greedy(m, n, &score, &repeats, &run_ok);
    }
    const NEG: i32 = i32::MIN / 4;
    let w = n + 1;
    // best[i][j]: items ..i with children ..j; last[i][j]: the same with item i - 1 matched to
    // child j - 1 (the end of its run).
    let mut best = vec![0i32; (m + 1) * w];
    let mut last = vec![NEG; (m + 1) * w];
    // How best was reached (0 item skipped, 1 child skipped, 2 match) and last (0 new run,
    // 1 run continued).
    let mut best_from = vec![0u8; (m + 1) * w];
    let mut last_from = vec![0u8; (m + 1) * w];
    best_from[1..=n].fill(1);
    for i in 1..=m {
        for j in 1..=n {
            let s = score(i - 1, j - 1);
            let at = i * w + j;
            if s > 0 {
                let start = best[(i - 1) * w + j - 1] + s;
                let more = if repeats[i - 1] && run_ok[j - 1] && last[at - 1] > NEG {
                    last[at - 1] + s - 1
                } else {
                    NEG
                };
                if more > start {
                    last[at] = more;
                    last_from[at] = 1;
                } else {
                    last[at] = start;
                }
            }
            let (mut b, mut from) = (best[(i - 1) * w + j], 0u8);
            if best[at - 1] > b {
                (b, from) = (best[at - 1], 1);
            }
            if last[at] > b {
                (b, from) = (last[at], 2);
            }
            best[at] = b;
            best_from[at] = from;
        }
    }
    let mut steps = Vec::with_capacity(m + n);
    let (mut i, mut j) = (m, n);
    let mut in_run = false;
    while i > 0 || j > 0 {
        let at = i * w + j;
        if in_run {
            steps.push(Step::Match(i - 1, j - 1));
            in_run = last_from[at] == 1;
            j -= 1;
            if !in_run {
                i -= 1;
            }
            continue;
        }
        if i == 0 {
            steps.push(Step::Kid(j - 1));
            j -= 1;
            continue;
        }
        match best_from[at] {
            2 if j > 0 => in_run = true,
            1 if j > 0 => {
                steps.push(Step::Kid(j - 1));
                j -= 1;
            }
            _ => {
                steps.push(Step::Item(i - 1));
                i -= 1;
            }
        }
    }
    steps.reverse();
    steps
}

/// The alignment of two long lists: each child matches the next fitting item within
/// [`GREEDY_LOOKAHEAD`] items, a repeating item taking every fitting child in a row.
fn greedy(
    m: usize,
    n: usize,
    score: &impl Fn(usize, usize) -> i32,
    repeats: &[bool],
    run_ok: &[bool],
) -> Vec<Step> {
    let mut steps = Vec::with_capacity(m + n);
    let mut i = 0usize; // the next item not passed
    let mut open: Option<usize> = None; // the item the last child matched
    for (j, &run_ok) in run_ok.iter().enumerate().take(n) {
        if let Some(t) = open {
            if repeats[t] && run_ok && score(t, j) > 0 {
                steps.push(Step::Match(t, j));
                continue;
            }
        }
        let found = (i..m.min(i + GREEDY_LOOKAHEAD)).find(|&t| score(t, j) > 0);
        match found {
            Some(t) => {
                steps.extend((i..t).map(Step::Item));
                steps.push(Step::Match(t, j));
                open = Some(t);
                i = t + 1;
            }
            None => {
                steps.push(Step::Kid(j));
                open = None;
            }
        }
    }
    steps.extend((i..m).map(Step::Item));
    steps
}

/// A template being learned: nodes with their children, appended as they are made (so a
/// node's parent may come after it; [`Draft::freeze`] puts them in preorder).
struct Draft {
    nodes: Vec<DraftNode>,
    max_nodes: usize,
    truncated: bool,
}

struct DraftNode {
    op: Op,
    kids: Vec<u32>,
}

impl Items for Draft {
    fn op(&self, node: u32) -> Op {
        self.nodes[node as usize].op
    }

    fn kids(&self, node: u32) -> &[u32] {
        &self.nodes[node as usize].kids
    }
}

impl Draft {
    fn add(&mut self, op: Op, kids: Vec<u32>) -> u32 {
        self.nodes.push(DraftNode { op, kids });
        (self.nodes.len() - 1) as u32
    }

    fn room_for(&mut self, nodes: usize) -> bool {
        let room = self.nodes.len() + nodes <= self.max_nodes;
        if !room {
            self.truncated = true;
        }
        room
    }

    /// Generalizes the template so that `page` matches it, from the (template node, page
    /// node) pairs on `stack`: `[(0, 0)]` for the whole page.
    fn generalize(&mut self, page: &Tree, mut stack: Vec<(u32, u32)>) {
        let mut kids: Vec<u32> = Vec::new();
        while let Some((t, p)) = stack.pop() {
            kids.clear();
            kids.extend(page.children(p));
            let items = self.nodes[t as usize].kids.clone();
            let steps = align(self, &items, page, &kids, true);
            let mut list: Vec<u32> = Vec::with_capacity(items.len());
            // The items and children left over since the last match.
            let mut lone: (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
            let mut at = 0usize;
            while at < steps.len() {
                match steps[at] {
                    Step::Item(i) => {
                        lone.0.push(i);
                        at += 1;
                    }
                    Step::Kid(j) => {
                        lone.1.push(j);
                        at += 1;
                    }
                    Step::Match(i, _) => {
                        let parts = (&items[..], &kids[..], page);
                        self.left_over(parts, &mut lone, &mut list, &mut stack);
                        // The run of children item i matched.
                        let mut run = Vec::new();
                        while let Some(&Step::Match(ii, j)) = steps.get(at) {
                            if ii != i {
                                break;
                            }
                            run.push(kids[j]);
                            at += 1;
                        }
                        let mut item = items[i];
                        if run.len() >= 2 && matches!(self.op(item), Op::Node(_)) {
                            item = self.add(Op::Star, vec![item]);
                        } else if run.len() >= 2 && self.op(item) == Op::Opt {
                            let inner = self.nodes[item as usize].kids[0];
                            if matches!(self.op(inner), Op::Node(_)) {
                                let star = self.add(Op::Star, vec![inner]);
                                self.nodes[item as usize].kids[0] = star;
                            }
                        }
                        for kid in run {
                            if let Some(node) = self.resolve(item, page.label(kid)) {
                                stack.push((node, kid));
                            }
                        }
                        list.push(item);
                    }
                }
            }
            let parts = (&items[..], &kids[..], page);
            self.left_over(parts, &mut lone, &mut list, &mut stack);
            self.nodes[t as usize].kids = list;
        }
    }

    /// Template items and page children between two matches: one of each is a `|`; otherwise
    /// each item becomes optional and each child a new optional part, after them.
    fn left_over(
        &mut self,
        (items, kids, page): (&[u32], &[u32], &Tree),
        (lone_items, lone_kids): &mut (Vec<usize>, Vec<usize>),
        list: &mut Vec<u32>,
        stack: &mut Vec<(u32, u32)>,
    ) {
        let (lone_items, lone_kids) = (std::mem::take(lone_items), std::mem::take(lone_kids));
        let (lone_items, lone_kids) = (&lone_items[..], &lone_kids[..]);
        if let ([i], [j]) = (lone_items, lone_kids) {
            let item = items[*i];
            let kid = kids[*j];
            let size = page.size(kid) as usize + 2;
            let target = match self.op(item) {
                Op::Opt => self.nodes[item as usize].kids[0],
                _ => item,
            };
            if matches!(self.op(target), Op::Node(_) | Op::Alt) && self.room_for(size) {
                let option = self.copy(page, kid, stack);
                let alt = match self.op(target) {
                    Op::Alt => {
                        self.nodes[target as usize].kids.push(option);
                        target
                    }
                    _ => self.add(Op::Alt, vec![target, option]),
                };
                if target == item {
                    list.push(alt);
                } else {
                    self.nodes[item as usize].kids[0] = alt;
                    list.push(item);
                }
                return;
            }
        }
        for &i in lone_items {
            let item = items[i];
            let item = match self.op(item) {
                Op::Opt => item,
                _ => self.add(Op::Opt, vec![item]),
            };
            list.push(item);
        }
        for &j in lone_kids {
            let kid = kids[j];
            if !self.room_for(page.size(kid) as usize + 1) {
                continue;
            }
            let part = self.copy(page, kid, stack);
            let opt = self.add(Op::Opt, vec![part]);
            list.push(opt);
        }
    }

    /// A copy of the page's subtree at `root` as template nodes, each run of alike siblings a
    /// `*` over the first of them; the others are left on `stack` to generalize it with.
    fn copy(&mut self, page: &Tree, root: u32, stack: &mut Vec<(u32, u32)>) -> u32 {
        let top = self.add(Op::Node(page.label(root)), Vec::new());
        let mut todo: Vec<(u32, u32)> = vec![(top, root)];
        let mut scratch = (Vec::new(), Vec::new());
        let mut kids = Vec::new();
        while let Some((t, p)) = todo.pop() {
            kids.clear();
            kids.extend(page.children(p));
            let mut list = Vec::new();
            let mut j = 0;
            while j < kids.len() {
                let first = kids[j];
                let node = self.add(Op::Node(page.label(first)), Vec::new());
                todo.push((node, first));
                let mut end = j + 1;
                while end < kids.len()
                    && siblings_alike(page, kids[end - 1], kids[end], &mut scratch)
                {
                    stack.push((node, kids[end]));
                    end += 1;
                }
                list.push(match end - j {
                    1 => node,
                    _ => self.add(Op::Star, vec![node]),
                });
                j = end;
            }
            self.nodes[t as usize].kids = list;
        }
        top
    }

    /// The template in preorder, support still to count.
    fn freeze(self) -> TreeRegex {
        let mut order: Vec<u32> = Vec::with_capacity(self.nodes.len());
        let mut todo = vec![0u32];
        while let Some(node) = todo.pop() {
            order.push(node);
            todo.extend(self.nodes[node as usize].kids.iter().rev());
        }
        let mut new_of = vec![NONE; self.nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            new_of[old as usize] = new as u32;
        }
        let mut ops = Vec::with_capacity(order.len());
        let mut kid_start = Vec::with_capacity(order.len() + 1);
        let mut kids = Vec::new();
        for &old in &order {
            let node = &self.nodes[old as usize];
            ops.push(node.op);
            kid_start.push(kids.len() as u32);
            kids.extend(node.kids.iter().map(|&k| new_of[k as usize]));
        }
        kid_start.push(kids.len() as u32);
        let n = ops.len();
        TreeRegex {
            ops,
            kid_start,
            kids,
            support: vec![0; n],
            features: vec![Vec::new(); n],
            pages: 0,
            truncated: self.truncated,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn page(html: &str) -> (Dom, Vec<Subtree>, RegexPage) {
        let dom = crate::dom::parse(html, 100_000);
        let sums = crate::dom::subtree::summarize(&dom, "example.com");
        let page = page_tree(&dom, &sums);
        (dom, sums, page)
    }

    fn learned(pages: &[String]) -> (TreeRegex, Vec<RegexPage>) {
        let parsed: Vec<RegexPage> = pages.iter().map(|h| page(h).2).collect();
        let trees: Vec<&Tree> = parsed.iter().map(|p| &p.tree).collect();
        (learn(&trees, Bounds::default()).expect("pages"), parsed)
    }

    fn shop(items: usize, banner: bool, footer: &str) -> String {
        let items: String = (0..items)
            .map(|i| format!("<li class=item-{i}><a href=/p{i}>Product {i}</a> <b>{i}.99</b></li>"))
            .collect();
        let banner = if banner {
            "<div class=banner><p>Sale today</p></div>"
        } else {
            ""
        };
        format!(
            "<html><body><div id=nav><a href=/>Home</a> <a href=/about>About</a></div>{banner}\
             <ul class=list>{items}</ul>{footer}</body></html>"
        )
    }

    const FOOT: &str = "<p id=foot>© Shop</p>";

    /// The template of shop pages of (items, banner, footer).
    fn shops(pages: &[(usize, bool, &str)]) -> (TreeRegex, Vec<RegexPage>) {
        let htmls: Vec<String> = pages.iter().map(|&(n, b, f)| shop(n, b, f)).collect();
        learned(&htmls)
    }

    #[test]
    fn repetition_is_a_star() {
        let (regex, pages) = shops(&[(2, false, FOOT), (5, false, FOOT), (1, false, FOOT)]);
        let (stars, _, _) = regex.operators();
        assert!(stars >= 1, "{regex:?}");
        // On every page the list's items are the items of one star (the menu's links of
        // another), as many as the page has.
        let mut list_star = None;
        for (p, items) in pages.iter().zip([2, 5, 1]) {
            let m = regex.matched(&p.tree);
            assert!(m.fits(), "coverage {}", m.coverage());
            let mut on: std::collections::BTreeMap<u32, usize> = Default::default();
            for &s in m.star.iter().filter(|&&s| s != NONE) {
                *on.entry(s).or_default() += 1;
            }
            let menu = *on.values().next().expect("the menu's star");
            assert_eq!(menu, 2, "{on:?}");
            let (&star, &count) = on.iter().nth(1).expect("the list's star");
            assert_eq!(count, items, "{on:?}");
            assert_eq!(*list_star.get_or_insert(star), star);
        }
    }

    #[test]
    fn a_missing_block_is_optional() {
        let (regex, pages) = shops(&[(2, true, FOOT), (2, false, FOOT), (2, true, FOOT)]);
        let (_, opts, _) = regex.operators();
        assert!(opts >= 1, "{regex:?}");
        assert!(pages.iter().all(|p| regex.matched(&p.tree).fits()));
        // The banner's node is on two of three pages; the nav on all.
        let m = regex.matched(&pages[0].tree);
        let supports: Vec<u32> = m.image.iter().map(|&t| regex.support(t)).collect();
        assert!(
            supports.contains(&2) && supports.contains(&3),
            "{supports:?}"
        );
    }

    #[test]
    fn alternatives_are_a_disjunction() {
        let table = "<table id=foot><tr><td>© Shop</td></tr></table>";
        let (regex, pages) = shops(&[(2, false, FOOT), (2, false, table), (2, false, FOOT)]);
        let (_, _, alts) = regex.operators();
        assert_eq!(alts, 1, "{regex:?}");
        assert!(pages.iter().all(|p| regex.matched(&p.tree).fits()));
    }

    #[test]
    fn a_page_of_another_site_does_not_match() {
        let (regex, _) = shops(&[(2, true, FOOT), (3, false, FOOT)]);
        let other = page(
            "<html><body><header class=top><h1>News</h1></header><main><article><p>Story.\
             </p></article></main></body></html>",
        )
        .2;
        let m = regex.matched(&other.tree);
        assert!(!m.fits());
        assert!(m.coverage() < 0.5, "{}", m.coverage());
    }

    #[test]
    fn noise_confidence_is_page_support_of_a_feature_over_its_node() {
        let pages: Vec<String> = (0..5)
            .map(|i| {
                format!(
                    "<html><body><div id=nav><a href=/>Home</a></div><div id=story><p>Story \
                     number {i} is new.</p></div></body></html>"
                )
            })
            .collect();
        let (regex, parsed) = learned(&pages);
        assert_eq!(regex.pages(), 5);
        let m = regex.matched(&parsed[0].tree);
        let mut menu = None;
        let mut story = None;
        for (p, &t) in m.image.iter().enumerate() {
            let key = parsed[0].tree.key(p as u32);
            if parsed[0].tree.label(p as u32) == TEXT {
                let nc = regex.noise_confidence(t, key);
                match menu {
                    None => menu = Some(nc),
                    Some(_) => story = Some(nc),
                }
            }
        }
        assert_eq!(menu, Some(1.0), "the menu's text is on every page");
        assert_eq!(story, Some(0.0), "the story's is on one");
    }

    #[test]
    fn parts_round_trip_and_bad_parts_are_refused() {
        let (regex, _) = learned(&[shop(2, true, ""), shop(4, false, "<p id=f>x</p>")]);
        let back = TreeRegex::from_parts(regex.to_parts()).expect("valid");
        assert_eq!(back, regex);
        let mut bad = regex.to_parts();
        bad.2[0] = 0; // the root its own child
        assert_eq!(TreeRegex::from_parts(bad), Err(BadRegex));
        let mut bad = regex.to_parts();
        bad.1.pop();
        assert_eq!(TreeRegex::from_parts(bad), Err(BadRegex));
    }

    /// Hostile pages: the template stays within its bound, and deep or wide pages are handled
    /// without recursion and within the alignment's bound.
    #[test]
    fn the_template_is_bounded() {
        let mut pages = Vec::new();
        for i in 0..6 {
            // Every page a different set of unlike blocks: each adds optional parts.
            // Class names of letters only: digits would make them one name.
            let name = |b: usize| -> String {
                let letters = [b % 26, b / 26 % 26, i];
                letters.iter().map(|&l| (b'a' + l as u8) as char).collect()
            };
            let blocks: String = (0..300)
                .map(|b| format!("<div class={}><span>{b}</span><em>x</em></div>", name(b)))
                .collect();
            pages.push(format!("<html><body>{blocks}</body></html>"));
        }
        let parsed: Vec<RegexPage> = pages.iter().map(|h| page(h).2).collect();
        let trees: Vec<&Tree> = parsed.iter().map(|p| &p.tree).collect();
        let bounds = Bounds {
            max_nodes: 40,
            max_features: 4,
        };
        let regex = learn(&trees, bounds).expect("pages");
        assert!(regex.len() <= 40, "{}", regex.len());
        assert!(regex.truncated());
        assert!(regex.features.iter().all(|f| f.len() <= 4));

        let depth = 20_000;
        let deep = format!(
            "<html><body>{}x{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let wide: String = format!(
            "<html><body>{}</body></html>",
            (0..5_000)
                .map(|i| format!("<p class=c{}>t{i}</p>", i % 7))
                .collect::<String>()
        );
        let parsed: Vec<RegexPage> = [deep, wide.clone(), wide]
            .iter()
            .map(|h| page(h).2)
            .collect();
        let trees: Vec<&Tree> = parsed.iter().map(|p| &p.tree).collect();
        let regex = learn(&trees, Bounds::default()).expect("pages");
        assert!(regex.len() <= Bounds::default().max_nodes);
        assert!(regex.matched(&parsed[1].tree).coverage() > 0.9);
    }
}
