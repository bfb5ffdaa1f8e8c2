//! A compact, `Send` DOM: flat vectors and `u32` indices, no `Rc`, no pointers.
//!
//! Nodes are stored in document (pre-)order, so the subtree of node `i` is the index range
//! `i..node(i).end` and every child has a larger index than its parent. Bottom-up passes are a
//! reverse loop over the nodes and top-down passes a forward loop: nothing here or downstream
//! needs recursion, which matters because crawled pages nest tens of thousands deep.
//!
//! The way in is [`parse`]: our tokenizer ([`tokenizer`]) driving our own tree builder
//! ([`builder`]), which writes the arena directly. [`parse_with_html5ever_tree_builder`] runs
//! html5ever's tokenizer and full tree builder instead ([`reference`]); it is the standard's
//! reference, kept to compare the two (`tests/tests/builders.rs`) and to measure the difference
//! (`stencil bench`).
//!
//! Both show a page as a browser that runs scripts does before running any (no `<noscript>`,
//! no hidden elements), except a script shell whose page is inside a noscript or a hidden
//! wrapper, and a page streamed in hidden parts: `dom/shell.rs` and `dom/streaming.rs` show
//! those as a reader sees them.
//!
//! Every later stage reads the arena through three submodules, so that none walks a subtree
//! again: [`subtree`] hashes every subtree and sums what later stages count, bottom-up in one
//! pass, over the text [`normalize`] defines; [`text`] lays the visible text out as one stream
//! in which any subtree's text is a slice.

mod arena;
mod builder;
mod codec;
mod raw_text;
mod reference;
mod shell;
mod streaming;
mod tags;
mod tokenizer;

pub mod markdown;
pub mod metadata;
pub mod normalize;
pub mod subtree;
pub mod text;

pub(crate) use tags::{heading_rank, is_heading};

pub use codec::DecodeError;

use std::ops::Range;

pub use html5ever::LocalName;

/// [`Dom::paths`] keeps at most this many bytes of a path.
pub const MAX_PATH_BYTES: usize = 512;

/// No node (no parent, no next sibling).
pub const NONE: u32 = u32::MAX;

/// A byte range in the DOM's string storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Document,
    /// Index into the element table.
    Element(u32),
    /// Text and whether it is visible: not inside script, style, noscript, template, head,
    /// or an element hidden by the `hidden` attribute or an inline `display:none` (a tab
    /// panel's are visible: see `Dom::add_element`).
    Text {
        span: Span,
        visible: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    pub parent: u32,
    /// One past the last node of this subtree.
    pub end: u32,
    pub next_sibling: u32,
    pub depth: u32,
    pub kind: NodeKind,
}

impl Node {
    /// The root every arena starts with; its `end` is set when the page is built.
    pub(crate) const DOCUMENT: Node = Node {
        parent: NONE,
        end: 1,
        next_sibling: NONE,
        depth: 0,
        kind: NodeKind::Document,
    };
}

/// What we keep of an element: the attributes later stages use, the names of the others, and
/// the size of them all (for the HTML byte count).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    pub tag: LocalName,
    pub id: Option<Span>,
    /// Range into the DOM's class-token table.
    pub classes: Range<u32>,
    /// Range into the DOM's table of other attribute names.
    pub other_attributes: Range<u32>,
    /// Range into the DOM's table of kept attribute values: those of the other attributes
    /// that say what the page is (`arena::keeps_value`: a `<meta>`'s name and content, a
    /// `<link>`'s rel, `<html lang>`, a script's type, a `<time>`'s datetime, microdata),
    /// which [`metadata`] reads.
    pub kept: Range<u32>,
    pub href: Option<Span>,
    pub src: Option<Span>,
    pub alt: Option<Span>,
    /// An `<a>`'s `name`: HTML 4's name for a place on the page to link to (`#comments`),
    /// which `id` took over. Kept for the comments rule (`page_models::content::rules::comments`):
    /// older blogs and news sites mark where their comments start with `<a name="comments">`.
    pub anchor: Option<Span>,
    /// Bytes the attributes take when serialized (` name="value"` each).
    pub attribute_bytes: u32,
    /// This element hides its content (script, style, `hidden`, `display:none`, ...).
    pub hides_content: bool,
    /// A modal dialog: a `<dialog>`, or an element with `aria-modal="true"` (an overlay the
    /// reader dismisses to reach the page).
    pub modal: bool,
    /// Text only screen readers read (`tags::is_screen_reader_only`): in the DOM's visible
    /// text, as the features were fitted on it, but left out of the cleaned text.
    pub screen_reader_only: bool,
}

/// A parsed page.
#[derive(Clone, Debug, Default)]
pub struct Dom {
    nodes: Vec<Node>,
    elements: Vec<Element>,
    strings: String,
    classes: Vec<Span>,
    other_attributes: Vec<LocalName>,
    kept: Vec<(LocalName, Span)>,
    title: Option<Span>,
    parse_errors: u32,
    depth_limited: bool,
}

/// Parses an HTML document. Parsing stops once the open-element depth passes `max_depth`
/// (see [`crate::reading::warc::Limits::max_dom_depth`]); [`Dom::depth_limited`] then says so.
/// The arena's vectors hold exactly what the page uses, no growth slack, so a `Dom` can be
/// kept as it is.
///
/// A script shell whose page is inside a `<noscript>`, or inside an element hidden until its
/// scripts run, is shown as a reader sees it (`dom/shell.rs`), and so is a page streamed in
/// hidden parts that scripts move into place (`dom/streaming.rs`).
pub fn parse(html: &str, max_depth: usize) -> Dom {
    parse_as_read(html, max_depth, builder::parse)
}

/// Builds the arena with `build`, then shows the page as a reader sees it: a script shell's
/// noscript unwrapped and parsed again, streamed parts moved into place, a hidden page shown.
/// The steps are the same whichever tree builder runs them.
fn parse_as_read(html: &str, max_depth: usize, build: fn(&str, usize) -> Dom) -> Dom {
    let dom = build(html, max_depth);
    let mut dom = match shell::unwrapped(&dom, html, |fragment| build(fragment, max_depth)) {
        Some(unwrapped) => build(&unwrapped, max_depth),
        None => dom,
    };
    streaming::place_streamed_segments(&mut dom);
    shell::reveal_hidden_page(&mut dom);
    dom
}

/// Tokenizes a page as [`parse`] does and drops the tokens; returns how many there were. What
/// `stencil bench` reports as the parse-only floor: no tree, no arena.
pub fn tokenize(html: &str) -> usize {
    tokenizer::count_tokens(html)
}

/// Parses like [`parse`] with html5ever's complete tree builder, which follows the HTML
/// standard to the letter (foster parenting, the adoption agency) and costs more for it
/// (docs/benchmarks.md).
pub fn parse_with_html5ever_tree_builder(html: &str, max_depth: usize) -> Dom {
    parse_as_read(html, max_depth, reference::parse)
}

/// Iterates a node's children in document order.
pub struct Children<'a> {
    dom: &'a Dom,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.next == NONE {
            return None;
        }
        let current = self.next as usize;
        self.next = self.dom.nodes[current].next_sibling;
        Some(current)
    }
}

impl Dom {
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, i: usize) -> &Node {
        &self.nodes[i]
    }

    pub fn parent(&self, i: usize) -> Option<usize> {
        let parent = self.nodes[i].parent;
        (parent != NONE).then_some(parent as usize)
    }

    /// The siblings after node `i`, in document order.
    pub fn next_siblings(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let next = |node: usize| {
            let next = self.nodes[node].next_sibling;
            (next != NONE).then_some(next as usize)
        };
        std::iter::successors(next(i), move |&node| next(node))
    }

    /// Node `i`, then its parent, and so on up to the root (a walk, not recursion).
    pub fn ancestors_or_self(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(i), |&node| self.parent(node))
    }

    /// Whether each node is, or is inside, a node that `marks`: one pass in document order (a
    /// parent comes before its children) instead of a walk up from every node.
    pub fn inside_marked(&self, marks: impl Fn(usize) -> bool) -> Vec<bool> {
        let mut inside = vec![false; self.len()];
        for i in 0..self.len() {
            inside[i] = self.parent(i).is_some_and(|p| inside[p]) || marks(i);
        }
        inside
    }

    /// Whether each node is one of `roots` (node indices; any past the end are ignored) or
    /// inside one: each root's subtree is a range of the arena, so no walk is needed.
    pub fn inside_subtrees(&self, roots: &[u32]) -> Vec<bool> {
        let mut inside = vec![false; self.len()];
        for &root in roots {
            let root = root as usize;
            if root < self.len() && !inside[root] {
                inside[self.subtree(root)].fill(true);
            }
        }
        inside
    }

    pub fn children(&self, i: usize) -> Children<'_> {
        let first = if self.nodes[i].end as usize > i + 1 {
            (i + 1) as u32
        } else {
            NONE
        };
        Children {
            dom: self,
            next: first,
        }
    }

    /// The indices of `i` and all its descendants.
    pub fn subtree(&self, i: usize) -> Range<usize> {
        i..self.nodes[i].end as usize
    }

    pub fn element(&self, i: usize) -> Option<&Element> {
        match self.nodes[i].kind {
            NodeKind::Element(e) => Some(&self.elements[e as usize]),
            _ => None,
        }
    }

    pub fn tag(&self, i: usize) -> Option<&LocalName> {
        self.element(i).map(|e| &e.tag)
    }

    /// The raw text of a text node.
    pub fn text(&self, i: usize) -> Option<&str> {
        match self.nodes[i].kind {
            NodeKind::Text { span, .. } => Some(self.str(span)),
            _ => None,
        }
    }

    /// The text of a text node the reader can see.
    pub fn visible_text(&self, i: usize) -> Option<&str> {
        match self.nodes[i].kind {
            NodeKind::Text {
                span,
                visible: true,
            } => Some(self.str(span)),
            _ => None,
        }
    }

    pub fn str(&self, span: Span) -> &str {
        let start = span.start as usize;
        &self.strings[start..start + span.len as usize]
    }

    fn attr(&self, i: usize, pick: impl Fn(&Element) -> Option<Span>) -> Option<&str> {
        self.element(i).and_then(pick).map(|span| self.str(span))
    }

    pub fn id(&self, i: usize) -> Option<&str> {
        self.attr(i, |e| e.id)
    }

    pub fn href(&self, i: usize) -> Option<&str> {
        self.attr(i, |e| e.href)
    }

    pub fn src(&self, i: usize) -> Option<&str> {
        self.attr(i, |e| e.src)
    }

    pub fn anchor(&self, i: usize) -> Option<&str> {
        self.attr(i, |e| e.anchor)
    }

    pub fn alt(&self, i: usize) -> Option<&str> {
        self.attr(i, |e| e.alt)
    }

    pub fn classes(&self, i: usize) -> impl Iterator<Item = &str> + '_ {
        let range = self.element(i).map_or(0..0, |e| e.classes.clone());
        self.classes[range.start as usize..range.end as usize]
            .iter()
            .map(|&span| self.str(span))
    }

    /// Whether node `i` is a modal dialog ([`Element::modal`]).
    pub fn is_modal(&self, i: usize) -> bool {
        self.element(i).is_some_and(|e| e.modal)
    }

    /// Names of the attributes other than id, class, href, src and alt.
    pub fn other_attributes(&self, i: usize) -> &[LocalName] {
        let range = self.element(i).map_or(0..0, |e| e.other_attributes.clone());
        &self.other_attributes[range.start as usize..range.end as usize]
    }

    /// The value of attribute `name` of node `i`, for the attributes whose values the arena
    /// keeps beyond id, class, href, src and alt ([`Element::kept`]); None for any other.
    pub fn kept_attribute(&self, i: usize, name: &str) -> Option<&str> {
        let range = self.element(i).map_or(0..0, |e| e.kept.clone());
        self.kept[range.start as usize..range.end as usize]
            .iter()
            .find(|(kept, _)| &**kept == name)
            .map(|&(_, span)| self.str(span))
    }

    /// The text of the first `<title>`.
    pub fn title(&self) -> Option<&str> {
        self.title.map(|span| self.str(span))
    }

    /// How many parse errors the tokenizer and tree builder counted (a measure of how broken
    /// the markup is; our tokenizer counts the standard's errors where markup is malformed,
    /// not every one of them, so the figure is not html5ever's).
    pub fn parse_errors(&self) -> u32 {
        self.parse_errors
    }

    /// True when parsing stopped at the depth limit, so the page's tail is missing.
    pub fn depth_limited(&self) -> bool {
        self.depth_limited
    }

    pub fn max_depth(&self) -> u32 {
        self.nodes.iter().map(|n| n.depth).max().unwrap_or(0)
    }

    /// A readable path from `<html>` down to node `i`, e.g. `html>body>div#header>ul.nav`:
    /// tag, `#id` if any, and the first class. For people reading tables, not for identity.
    pub fn path(&self, i: usize) -> String {
        let mut steps = Vec::new();
        let mut at = Some(i);
        while let Some(node) = at {
            if let Some(step) = self.step(node) {
                steps.push(step);
            }
            at = self.parent(node);
        }
        steps.reverse();
        steps.join(">")
    }

    /// [`Dom::path`] of every node in one top-down pass. A path longer than
    /// [`MAX_PATH_BYTES`] keeps its end behind `…>`: on pages nested thousands deep, whole
    /// paths would take memory quadratic in the depth.
    pub fn paths(&self) -> Vec<String> {
        self.paths_where(|_| true)
    }

    /// [`Dom::paths`] of the nodes `wanted` accepts and of their ancestors (a path is built
    /// from its parent's); the other paths are left empty.
    pub fn paths_where(&self, wanted: impl Fn(usize) -> bool) -> Vec<String> {
        let mut needed: Vec<bool> = (0..self.len()).map(&wanted).collect();
        for i in (0..self.len()).rev() {
            if needed[i] {
                if let Some(parent) = self.parent(i) {
                    needed[parent] = true;
                }
            }
        }
        let mut paths: Vec<String> = Vec::with_capacity(self.len());
        for (i, &needed) in needed.iter().enumerate() {
            if !needed {
                paths.push(String::new());
                continue;
            }
            let parent = self.parent(i).map_or("", |p| paths[p].as_str());
            let mut path = String::with_capacity(parent.len() + 16);
            path.push_str(parent);
            if let Some(step) = self.step(i) {
                if !path.is_empty() {
                    path.push('>');
                }
                path.push_str(&step);
            }
            if path.len() > MAX_PATH_BYTES {
                // Ids and classes may be any text: cut on a character boundary.
                let mut cut = path.len() - MAX_PATH_BYTES;
                while !path.is_char_boundary(cut) {
                    cut += 1;
                }
                let keep_from = path[cut..].find('>').map_or(cut, |at| cut + at + 1);
                path = format!("…>{}", &path[keep_from..]);
            }
            paths.push(path);
        }
        paths
    }

    fn step(&self, node: usize) -> Option<String> {
        if let Some(tag) = self.tag(node) {
            let mut step = tag.to_string();
            if let Some(id) = self.id(node).filter(|id| !id.is_empty()) {
                step.push('#');
                step.push_str(id);
            }
            if let Some(class) = self.classes(node).next() {
                step.push('.');
                step.push_str(class);
            }
            Some(step)
        } else if self.text(node).is_some() {
            Some("#text".to_string())
        } else {
            None
        }
    }
}
