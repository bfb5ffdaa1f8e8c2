//! html5ever's tree builder writing into our arena.
//!
//! The tree builder moves nodes around after creating them (foster parenting, the adoption
//! agency, `reparent_children`), so while parsing we keep a mutable linked tree (parent, first
//! and last child, siblings, all `u32`). When parsing ends it is compacted into the pre-order
//! [`Dom`], dropping comments, doctype and template contents, and the strings we keep are
//! copied into one buffer.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};

use html5ever::interface::{ElemName, ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::{local_name, ns, Attribute, LocalName, Namespace, ParseOpts, QualName};

use super::arena::{keeps_value, Slot};
use super::{tokenizer, Dom, Node, NodeKind, NONE};

/// Input is fed to the parser in pieces this large so the depth limit is checked between
/// them; small enough that the work done past the limit stays bounded.
const FEED_BYTES: usize = 16 << 10;

pub(super) fn parse(html: &str, max_depth: usize) -> Dom {
    let mut parser =
        html5ever::parse_document(Builder::for_bytes(html.len()), ParseOpts::default());
    let mut rest = html;
    let mut depth_limited = false;
    while !rest.is_empty() {
        let mut end = rest.len().min(FEED_BYTES);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        parser.process(StrTendril::from_slice(&rest[..end]));
        rest = &rest[end..];
        if parser.tokenizer.sink.sink.max_depth.get() as usize > max_depth {
            depth_limited = !rest.is_empty();
            break;
        }
    }
    let builder = parser.finish();
    let mut dom = builder.compact();
    dom.depth_limited = depth_limited;
    dom
}

enum Data {
    Document,
    Element {
        name: QualName,
        attrs: Vec<Attribute>,
        template_contents: u32,
        mathml_annotation_xml_integration_point: bool,
    },
    Text(StrTendril),
    /// Comments, processing instructions, template contents: kept while parsing, dropped after.
    Other,
}

struct BuildNode {
    data: Data,
    parent: u32,
    first_child: u32,
    last_child: u32,
    prev: u32,
    next: u32,
    /// Depth when last attached; only the depth guard reads it, so depths left stale by
    /// moving a subtree do no harm.
    depth: u32,
}

impl BuildNode {
    fn new(data: Data) -> Self {
        BuildNode {
            data,
            parent: NONE,
            first_child: NONE,
            last_child: NONE,
            prev: NONE,
            next: NONE,
            depth: 0,
        }
    }
}

struct Builder {
    nodes: RefCell<Vec<BuildNode>>,
    max_depth: Cell<u32>,
    parse_errors: Cell<u32>,
}

/// Crawled HTML averages about one node per 40 bytes; reserving for one per 32 makes
/// growing the build tree (a copy of all of it each time) rare.
const BYTES_PER_NODE: usize = 32;

impl Builder {
    /// A builder for a document of `bytes` bytes.
    fn for_bytes(bytes: usize) -> Self {
        let mut nodes = Vec::with_capacity(bytes / BYTES_PER_NODE + 16);
        nodes.push(BuildNode::new(Data::Document));
        Builder {
            nodes: RefCell::new(nodes),
            max_depth: Cell::new(0),
            parse_errors: Cell::new(0),
        }
    }
}

/// An element's name, owned: html5ever asks for names while it may also be asking us to
/// mutate the tree, so we cannot hand out a borrow of the arena. Cloning an atom of a known
/// tag is a copy.
#[derive(Debug)]
pub struct Name {
    ns: Namespace,
    local: LocalName,
}

impl ElemName for Name {
    fn ns(&self) -> &Namespace {
        &self.ns
    }
    fn local_name(&self) -> &LocalName {
        &self.local
    }
}

impl Builder {
    fn push(&self, data: Data) -> u32 {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(BuildNode::new(data));
        (nodes.len() - 1) as u32
    }

    fn note_depth(&self, child: u32, parent: u32) {
        let mut nodes = self.nodes.borrow_mut();
        let depth = nodes[parent as usize].depth + 1;
        nodes[child as usize].depth = depth;
        if depth > self.max_depth.get() {
            self.max_depth.set(depth);
        }
    }

    fn append_child(&self, parent: u32, child: u32) {
        let last = self.nodes.borrow()[parent as usize].last_child;
        self.link(child, parent, last, NONE);
    }

    fn insert_before(&self, sibling: u32, node: u32) {
        let (parent, prev) = {
            let nodes = self.nodes.borrow();
            (nodes[sibling as usize].parent, nodes[sibling as usize].prev)
        };
        self.link(node, parent, prev, sibling);
    }

    /// Links `node` into `parent`'s children between `prev` and `next` ([`NONE`]: the first
    /// or the last child).
    fn link(&self, node: u32, parent: u32, prev: u32, next: u32) {
        {
            let mut nodes = self.nodes.borrow_mut();
            nodes[node as usize].parent = parent;
            nodes[node as usize].prev = prev;
            nodes[node as usize].next = next;
            if prev == NONE {
                nodes[parent as usize].first_child = node;
            } else {
                nodes[prev as usize].next = node;
            }
            if next == NONE {
                nodes[parent as usize].last_child = node;
            } else {
                nodes[next as usize].prev = node;
            }
        }
        self.note_depth(node, parent);
    }

    fn detach(&self, node: u32) {
        let mut nodes = self.nodes.borrow_mut();
        let BuildNode {
            parent, prev, next, ..
        } = nodes[node as usize];
        if parent == NONE {
            return;
        }
        if prev == NONE {
            nodes[parent as usize].first_child = next;
        } else {
            nodes[prev as usize].next = next;
        }
        if next == NONE {
            nodes[parent as usize].last_child = prev;
        } else {
            nodes[next as usize].prev = prev;
        }
        let n = &mut nodes[node as usize];
        n.parent = NONE;
        n.prev = NONE;
        n.next = NONE;
    }

    /// Appends text to `node` if it is a text node; says whether it was.
    fn extend_text(&self, node: u32, text: &StrTendril) -> bool {
        if node == NONE {
            return false;
        }
        match &mut self.nodes.borrow_mut()[node as usize].data {
            Data::Text(existing) => {
                existing.push_tendril(text);
                true
            }
            _ => false,
        }
    }

    /// Turns the linked build tree into the pre-order arena.
    fn compact(self) -> Dom {
        let nodes = self.nodes.into_inner();
        // Sized once from a count over the build tree (an upper bound: it includes comments
        // and detached nodes) rather than grown by doubling: every page is kept until the job
        // ends, so growth slack would be held — and paid for in fresh pages — for all of them.
        let size = ArenaSize::of(&nodes);
        let mut dom = Dom {
            nodes: Vec::with_capacity(size.nodes),
            elements: Vec::with_capacity(size.elements),
            strings: String::with_capacity(size.string_bytes),
            classes: Vec::with_capacity(size.classes),
            other_attributes: Vec::with_capacity(size.other_attributes),
            kept: Vec::with_capacity(size.kept),
            parse_errors: self.parse_errors.get(),
            ..Dom::default()
        };

        struct Open {
            old: u32,
            new: u32,
            last_child: u32,
            hidden: bool,
        }
        dom.nodes.push(Node::DOCUMENT);
        let mut open = vec![Open {
            old: 0,
            new: 0,
            last_child: NONE,
            hidden: false,
        }];
        let mut title_element = NONE;
        let mut next = nodes[0].first_child;
        loop {
            if next == NONE {
                let Some(done) = open.pop() else { break };
                dom.nodes[done.new as usize].end = dom.nodes.len() as u32;
                if open.is_empty() {
                    break;
                }
                next = nodes[done.old as usize].next;
                continue;
            }
            let old = next;
            let source = &nodes[old as usize];
            let Some(frame) = open.last_mut() else { break };
            let new = dom.nodes.len() as u32;
            let (kind, hides) = match &source.data {
                Data::Element { name, attrs, .. } => {
                    let attrs: Vec<tokenizer::Attribute<'_>> = attrs
                        .iter()
                        .map(|a| tokenizer::Attribute {
                            name: a.name.local.clone(),
                            value: std::borrow::Cow::Borrowed(&a.value),
                        })
                        .collect();
                    let element = dom.add_element(name.local.clone(), &attrs);
                    let hides = element.hides_content;
                    if element.tag == local_name!("title") && title_element == NONE {
                        title_element = new;
                    }
                    dom.elements.push(element);
                    (NodeKind::Element((dom.elements.len() - 1) as u32), hides)
                }
                Data::Text(text) => {
                    let span = dom.add_string(text);
                    (
                        NodeKind::Text {
                            span,
                            visible: !frame.hidden,
                        },
                        false,
                    )
                }
                Data::Document | Data::Other => {
                    next = source.next;
                    continue;
                }
            };
            if frame.last_child != NONE {
                dom.nodes[frame.last_child as usize].next_sibling = new;
            }
            frame.last_child = new;
            let hidden = frame.hidden || hides;
            dom.nodes.push(Node {
                parent: frame.new,
                end: new + 1,
                next_sibling: NONE,
                depth: open.len() as u32,
                kind,
            });
            if matches!(source.data, Data::Element { .. }) && source.first_child != NONE {
                open.push(Open {
                    old,
                    new,
                    last_child: NONE,
                    hidden,
                });
                next = source.first_child;
            } else {
                next = source.next;
            }
        }
        dom.set_title(title_element);
        dom
    }
}

/// Capacities for a [`Dom`] compacted from a build tree: upper bounds on what it will hold.
struct ArenaSize {
    nodes: usize,
    elements: usize,
    string_bytes: usize,
    classes: usize,
    other_attributes: usize,
    kept: usize,
}

impl ArenaSize {
    fn of(nodes: &[BuildNode]) -> ArenaSize {
        let mut size = ArenaSize {
            nodes: nodes.len(),
            elements: 0,
            string_bytes: 0,
            classes: 0,
            other_attributes: 0,
            kept: 0,
        };
        for node in nodes {
            match &node.data {
                Data::Element { name, attrs, .. } => {
                    size.elements += 1;
                    for attr in attrs {
                        match Slot::of(&attr.name.local) {
                            Slot::NameOnly => {
                                size.other_attributes += 1;
                                if keeps_value(&name.local, &attr.name.local) {
                                    size.kept += 1;
                                    size.string_bytes += attr.value.len();
                                }
                            }
                            Slot::Classes => {
                                size.string_bytes += attr.value.len();
                                size.classes += attr.value.split_ascii_whitespace().count();
                            }
                            Slot::Id | Slot::Href | Slot::Src | Slot::Alt => {
                                size.string_bytes += attr.value.len()
                            }
                        }
                    }
                }
                Data::Text(text) => size.string_bytes += text.len(),
                Data::Document | Data::Other => {}
            }
        }
        size
    }
}

impl TreeSink for Builder {
    type Handle = u32;
    type Output = Self;
    type ElemName<'a> = Name;

    fn finish(self) -> Self {
        self
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {
        self.parse_errors
            .set(self.parse_errors.get().saturating_add(1));
    }

    fn get_document(&self) -> u32 {
        0
    }

    fn elem_name<'a>(&'a self, target: &'a u32) -> Name {
        match &self.nodes.borrow()[*target as usize].data {
            Data::Element { name, .. } => Name {
                ns: name.ns.clone(),
                local: name.local.clone(),
            },
            // html5ever never asks for the name of a non-element; answer harmlessly if it does.
            _ => Name {
                ns: ns!(),
                local: local_name!(""),
            },
        }
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> u32 {
        let template_contents = if flags.template {
            self.push(Data::Other)
        } else {
            NONE
        };
        self.push(Data::Element {
            name,
            attrs,
            template_contents,
            mathml_annotation_xml_integration_point: flags.mathml_annotation_xml_integration_point,
        })
    }

    fn create_comment(&self, _text: StrTendril) -> u32 {
        self.push(Data::Other)
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> u32 {
        self.push(Data::Other)
    }

    fn append(&self, parent: &u32, child: NodeOrText<u32>) {
        match child {
            NodeOrText::AppendNode(node) => self.append_child(*parent, node),
            NodeOrText::AppendText(text) => {
                let last = self.nodes.borrow()[*parent as usize].last_child;
                if !self.extend_text(last, &text) {
                    let node = self.push(Data::Text(text));
                    self.append_child(*parent, node);
                }
            }
        }
    }

    fn append_based_on_parent_node(
        &self,
        element: &u32,
        prev_element: &u32,
        child: NodeOrText<u32>,
    ) {
        let has_parent = self.nodes.borrow()[*element as usize].parent != NONE;
        if has_parent {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }

    fn append_doctype_to_document(&self, _: StrTendril, _: StrTendril, _: StrTendril) {}

    fn get_template_contents(&self, target: &u32) -> u32 {
        let existing = match &self.nodes.borrow()[*target as usize].data {
            Data::Element {
                template_contents, ..
            } => *template_contents,
            _ => NONE,
        };
        if existing != NONE {
            return existing;
        }
        let contents = self.push(Data::Other);
        if let Data::Element {
            template_contents, ..
        } = &mut self.nodes.borrow_mut()[*target as usize].data
        {
            *template_contents = contents;
        }
        contents
    }

    fn same_node(&self, x: &u32, y: &u32) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &u32, new_node: NodeOrText<u32>) {
        if self.nodes.borrow()[*sibling as usize].parent == NONE {
            return;
        }
        match new_node {
            NodeOrText::AppendNode(node) => {
                self.detach(node);
                self.insert_before(*sibling, node);
            }
            NodeOrText::AppendText(text) => {
                let prev = self.nodes.borrow()[*sibling as usize].prev;
                if !self.extend_text(prev, &text) {
                    let node = self.push(Data::Text(text));
                    self.insert_before(*sibling, node);
                }
            }
        }
    }

    fn add_attrs_if_missing(&self, target: &u32, new_attrs: Vec<Attribute>) {
        if let Data::Element { attrs, .. } = &mut self.nodes.borrow_mut()[*target as usize].data {
            for attr in new_attrs {
                if !attrs.iter().any(|a| a.name == attr.name) {
                    attrs.push(attr);
                }
            }
        }
    }

    fn remove_from_parent(&self, target: &u32) {
        self.detach(*target);
    }

    fn reparent_children(&self, node: &u32, new_parent: &u32) {
        loop {
            let child = self.nodes.borrow()[*node as usize].first_child;
            if child == NONE {
                break;
            }
            self.detach(child);
            self.append_child(*new_parent, child);
        }
    }

    fn is_mathml_annotation_xml_integration_point(&self, handle: &u32) -> bool {
        matches!(
            self.nodes.borrow()[*handle as usize].data,
            Data::Element {
                mathml_annotation_xml_integration_point: true,
                ..
            }
        )
    }
}
