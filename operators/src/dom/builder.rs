//! The tree builder [`super::parse`] uses: our tokenizer ([`super::tokenizer`]) feeding a stack
//! of open elements that writes the pre-order arena directly.
//!
//! Why not html5ever's own tree builder ([`super::reference`])? It builds a mutable linked tree
//! because the HTML standard moves nodes after creating them (foster parenting, the adoption
//! agency), and that tree must then be copied into the arena: building and copying cost more
//! than this builder does (docs/benchmarks.md). This builder never moves a node: every node is
//! appended to the arena once, in document order, as its token arrives.
//!
//! It follows the standard's tree-construction rules: the implied `html`, `head` and `body`;
//! which start tags close an open `p`, `li`, `dd`/`dt`, `option` or heading; end tags closing
//! what they match within the standard's scopes and being ignored otherwise; implied `tbody`
//! and `tr`, and tables closing what a new section, row or cell ends; raw text and RCDATA;
//! `svg` and `math` with their breakout tags, integration points and self-closing elements;
//! template contents dropped; quirks mode from the doctype; formatting elements (`b`, `font`,
//! `a`, ...) reopened after a block closed them. What it leaves out needs nodes moved, and
//! changes where text sits, not what text there is: misplaced content in a table stays where
//! it is instead of being moved before the table, and a formatting element (or a form) whose
//! end tag comes while a block opened inside it is still open leaves the stack but stays that
//! block's ancestor, where the adoption agency would move the block out of it.
//! `tests/tests/builders.rs` compares the two builders on every page of the shared corpora.
//!
//! The content of scripts and styles is not tokenized at all: after their start tag the builder
//! tells the tokenizer to read up to the end tag ([`super::raw_text`]), and the content comes
//! back as one text token.

use std::cell::RefCell;

use html5ever::{local_name, LocalName};

use super::tags::{
    bounds_scope, breaks_out_of_foreign_content, closes_an_open_p, ends_a_block, is_formatting,
    is_head_content, is_heading, is_html_integration_point, is_html_space, is_quirky, is_raw_text,
    is_special, is_table_part, is_table_structure, Ns,
};
use super::tokenizer::{
    raw_text_kind, Attribute, Content, Doctype, Tag, TagKind, Token, Tokenizer,
};
use super::{Dom, Element, Node, NodeKind, Span, NONE};

pub(super) fn parse(html: &str, max_depth: usize) -> Dom {
    let mut tree = Tree::for_html(max_depth);
    let mut tokens = Tokenizer::new(html);
    // Past the depth limit the rest of the input is left unread.
    while !tree.depth_limited {
        // The standard's "adjusted current node": in SVG or MathML, `<![CDATA[` is text.
        let foreign = tree.top().ns != Ns::Html;
        match tokens.next_token(foreign) {
            Token::Eof => break,
            Token::Tag => {
                let content = tree.tag(&tokens.tag);
                tokens.read_content_as(content);
            }
            Token::Text => {
                if tree.template_depth == 0 {
                    tree.characters(tokens.text());
                }
            }
            // A comment is a node between texts: the texts on either side stay apart.
            Token::Comment => tree.open_text = NONE,
            Token::Doctype => tree.doctype(&tokens.doctype),
        }
    }
    tree.parse_errors = tree.parse_errors.saturating_add(tokens.errors);
    tree.finish()
}

/// Where the document is: the standard's insertion modes before `<body>`; everything after is
/// `InBody`, with tables, selects and foreign content told apart by the open elements.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    BeforeHtml,
    BeforeHead,
    InHead,
    AfterHead,
    InBody,
}

/// An open element.
struct Frame {
    node: u32,
    tag: LocalName,
    ns: Ns,
    /// Text inside is invisible (see [`NodeKind::Text`]).
    hidden: bool,
    last_child: u32,
    /// The standard's "special" category: the generic end-tag rule does not close past it.
    special: bool,
    /// Bounds the default scope (and so the button, list-item and table scopes built on it).
    scope_boundary: bool,
    /// A foreign element whose content is HTML (`foreignObject`, an HTML `annotation-xml`).
    html_integration: bool,
    /// Off the standard's stack though still an ancestor of what is open above it: a form
    /// whose end tag came while elements opened inside it were still open.
    detached: bool,
    /// Index into [`Tree::counts`], for the tags whose presence on the stack is asked often.
    counted: Option<usize>,
    /// In the list of active formatting elements (or, for cells and the like, a marker there).
    formatting: Formatting,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Formatting {
    None,
    /// `b`, `font`, `a`, ...: reopened where a block closed them before their end tag.
    Element,
    /// A cell, caption, object, ...: formatting opened outside it is not reopened inside.
    Marker,
}

/// An entry of the standard's list of active formatting elements.
#[derive(Clone, Copy)]
enum Active {
    Marker,
    Element {
        /// The node (in the arena) last opened for it.
        node: u32,
        element: u32,
        open: bool,
    },
}

/// Tags counted on the stack, so that "is there an open `p`?" and the like cost nothing when
/// the answer is no, which is nearly always; without counts deep pages make these scans
/// quadratic.
const COUNTED_TAGS: usize = 10;
static COUNTED: [LocalName; COUNTED_TAGS] = [
    local_name!("p"),
    local_name!("li"),
    local_name!("dd"),
    local_name!("dt"),
    local_name!("button"),
    local_name!("a"),
    local_name!("form"),
    local_name!("select"),
    local_name!("nobr"),
    local_name!("ruby"),
];

#[derive(Clone, Copy)]
enum Scope {
    Default,
    Button,
    ListItem,
    Table,
}

struct Tree {
    dom: Dom,
    open: Vec<Frame>,
    mode: Mode,
    counts: [u32; COUNTED_TAGS],
    /// The standard's list of active formatting elements.
    active: Vec<Active>,
    /// The text node the next characters extend (the current node's last child), or NONE.
    open_text: u32,
    /// Drop a newline at the start of the next text (after `<pre>`, `<listing>`, `<textarea>`).
    skip_newline: bool,
    /// Nesting of `<template>` inside the one being skipped (0: not in a template).
    template_depth: u32,
    /// `<head>` once it has been closed, to reopen for head elements after it.
    closed_head: Option<Frame>,
    /// Whitespace between `</head>` and `<body>`: it belongs to `<html>` after the head,
    /// which in document order comes after anything the head is reopened for.
    pending_whitespace: String,
    quirks: bool,
    seen_doctype: bool,
    title_element: u32,
    parse_errors: u32,
    max_depth: usize,
    depth_limited: bool,
}

thread_local! {
    /// The arena a page is built in, kept from page to page: it grows to the largest page a
    /// thread has seen and is never given back, so building touches no fresh memory (which
    /// the kernel must zero first). Each page's [`Dom`] is an exact-size copy of it.
    static SCRATCH: RefCell<Dom> = RefCell::new(Dom::default());
}

impl Tree {
    fn for_html(max_depth: usize) -> Tree {
        let mut dom = SCRATCH.with(|scratch| std::mem::take(&mut *scratch.borrow_mut()));
        dom.nodes.clear();
        dom.elements.clear();
        dom.strings.clear();
        dom.classes.clear();
        dom.other_attributes.clear();
        dom.kept.clear();
        dom.nodes.push(Node::DOCUMENT);
        Tree {
            dom,
            open: vec![Frame {
                node: 0,
                tag: local_name!(""),
                ns: Ns::Html,
                hidden: false,
                last_child: NONE,
                special: true,
                scope_boundary: true,
                html_integration: false,
                detached: false,
                counted: None,
                formatting: Formatting::None,
            }],
            mode: Mode::BeforeHtml,
            counts: [0; COUNTED_TAGS],
            active: Vec::new(),
            open_text: NONE,
            skip_newline: false,
            template_depth: 0,
            closed_head: None,
            pending_whitespace: String::new(),
            // No doctype is quirks mode; a doctype before <html> decides otherwise.
            quirks: true,
            seen_doctype: false,
            title_element: NONE,
            parse_errors: 0,
            max_depth,
            depth_limited: false,
        }
    }

    fn finish(mut self) -> Dom {
        // The end of the input implies whatever of html, head and body has not been seen.
        while !self.depth_limited && self.mode != Mode::InBody {
            self.imply_next(&[]);
        }
        while self.open.len() > 1 {
            self.pop();
        }
        self.dom.nodes[0].end = self.dom.nodes.len() as u32;
        let mut scratch = self.dom;
        scratch.set_title(self.title_element);
        // Pages are kept until the job ends: each holds exactly what it uses.
        let dom = Dom {
            nodes: scratch.nodes.as_slice().into(),
            elements: scratch.elements.as_slice().into(),
            strings: scratch.strings.as_str().into(),
            classes: scratch.classes.as_slice().into(),
            other_attributes: scratch.other_attributes.as_slice().into(),
            kept: scratch.kept.as_slice().into(),
            title: scratch.title.take(),
            parse_errors: self.parse_errors,
            depth_limited: self.depth_limited,
        };
        SCRATCH.with(|cell| *cell.borrow_mut() = scratch);
        dom
    }

    /// A start or end tag; returns how the tokenizer is to read what follows.
    fn tag(&mut self, tag: &Tag<'_>) -> Content {
        self.skip_newline = false;
        if self.template_depth > 0 {
            return self.in_template(tag);
        }
        match tag.kind {
            TagKind::Start => self.start_tag(tag),
            TagKind::End => {
                self.end_tag(tag);
                Content::Markup
            }
        }
    }

    fn doctype(&mut self, doctype: &Doctype) {
        if self.mode == Mode::BeforeHtml && !self.seen_doctype {
            self.seen_doctype = true;
            self.quirks = is_quirky(doctype);
        }
    }

    // ----- the insertion modes before the body -------------------------------------------

    fn start_tag(&mut self, tag: &Tag<'_>) -> Content {
        loop {
            match self.mode {
                Mode::BeforeHtml | Mode::BeforeHead => {
                    let opens = if self.mode == Mode::BeforeHtml {
                        local_name!("html")
                    } else if tag.name == local_name!("html") {
                        return Content::Markup;
                    } else {
                        local_name!("head")
                    };
                    self.imply_next(attrs_if(tag, opens.clone()));
                    if tag.name == opens {
                        return Content::Markup;
                    }
                }
                Mode::InHead => {
                    if tag.name == local_name!("html") || tag.name == local_name!("head") {
                        return Content::Markup;
                    }
                    if is_head_content(&tag.name) {
                        return self.body_start_tag(tag);
                    }
                    self.close_head();
                }
                Mode::AfterHead => match tag.name {
                    local_name!("html") | local_name!("head") => return Content::Markup,
                    local_name!("body") | local_name!("frameset") => {
                        self.open_body(tag.name.clone(), &tag.attrs);
                        return Content::Markup;
                    }
                    // A noscript after the head starts the body.
                    _ if is_head_content(&tag.name)
                        && tag.name != local_name!("noscript")
                        && self.reopen_head() =>
                    {
                        self.mode = Mode::InHead;
                    }
                    _ => self.open_body(local_name!("body"), &[]),
                },
                Mode::InBody => return self.body_start_tag(tag),
            }
        }
    }

    fn end_tag(&mut self, tag: &Tag<'_>) {
        // In a raw-text element the tokenizer emits only the end tag that closes it.
        let top = self.top();
        if top.ns == Ns::Html && top.tag == tag.name && is_raw_text(&top.tag) {
            self.pop();
            return;
        }
        loop {
            let name = &tag.name;
            let implies = matches!(
                *name,
                local_name!("head") | local_name!("body") | local_name!("html") | local_name!("br")
            );
            match self.mode {
                Mode::InBody => return self.body_end_tag(tag),
                Mode::InHead if *name == local_name!("head") => return self.close_head(),
                Mode::AfterHead if *name == local_name!("head") => return,
                // Other end tags before the body are dropped, except these, which imply
                // what comes before them.
                _ if !implies => return,
                _ => self.imply_next(&[]),
            }
        }
    }

    fn characters(&mut self, text: &str) {
        let mut text = text;
        if std::mem::take(&mut self.skip_newline) {
            text = text.strip_prefix('\n').unwrap_or(text);
        }
        if is_raw_text(&self.top().tag) {
            // The content of a title, script or style, in the head as anywhere.
            self.insert_text(text);
            return;
        }
        loop {
            let rest = text.trim_start_matches(is_html_space);
            let space = &text[..text.len() - rest.len()];
            match self.mode {
                // Whitespace before the head is dropped, in the head it stays there, and
                // between head and body it belongs to html.
                Mode::BeforeHtml | Mode::BeforeHead => {}
                Mode::InHead => self.insert_text(space),
                Mode::AfterHead => self.pending_whitespace.push_str(space),
                Mode::InBody => {
                    if self.top().ns == Ns::Html {
                        self.reopen_formatting();
                    }
                    self.insert_text(text);
                    return;
                }
            }
            if rest.is_empty() {
                return;
            }
            text = rest;
            self.imply_next(&[]);
        }
    }

    /// The step the standard implies when the current mode before the body cannot take what
    /// arrived: open html, head or body (with `attrs`), or close the head.
    fn imply_next(&mut self, attrs: &[Attribute<'_>]) {
        match self.mode {
            Mode::BeforeHtml => {
                self.insert(local_name!("html"), Ns::Html, attrs, true);
                self.mode = Mode::BeforeHead;
            }
            Mode::BeforeHead => {
                self.insert(local_name!("head"), Ns::Html, attrs, true);
                self.mode = Mode::InHead;
            }
            Mode::InHead => self.close_head(),
            Mode::AfterHead => self.open_body(local_name!("body"), attrs),
            Mode::InBody => {}
        }
    }

    /// Closes the head, and a title or script in it left open by a missing end tag.
    fn close_head(&mut self) {
        if let Some(at) = (1..self.open.len()).rfind(|&at| self.open[at].tag == local_name!("head"))
        {
            self.pop_to_length(at + 1);
            let head = self.pop();
            self.closed_head = Some(head);
        }
        self.mode = Mode::AfterHead;
    }

    /// Puts the closed head back on the stack if nothing has been written since it closed.
    fn reopen_head(&mut self) -> bool {
        match self.closed_head.take() {
            Some(head) if self.top().last_child == head.node => {
                self.push_frame(head);
                true
            }
            _ => false,
        }
    }

    fn open_body(&mut self, tag: LocalName, attrs: &[Attribute<'_>]) {
        let whitespace = std::mem::take(&mut self.pending_whitespace);
        if !whitespace.is_empty() {
            self.insert_text(&whitespace);
        }
        self.insert(tag, Ns::Html, attrs, true);
        self.mode = Mode::InBody;
    }

    // ----- in the body ---------------------------------------------------------------------

    fn body_start_tag(&mut self, tag: &Tag<'_>) -> Content {
        let top = self.top();
        if !takes_html_start_tag(top, &tag.name) {
            if !breaks_out_of_foreign_content(tag) {
                let ns = Ns::opened_by(&tag.name).unwrap_or(top.ns);
                self.insert(tag.name.clone(), ns, &tag.attrs, !tag.self_closing);
                return Content::Markup;
            }
            while self.open.len() > 2 && !takes_html_start_tag(self.top(), &local_name!("p")) {
                self.pop();
            }
        }
        if self.top().tag == local_name!("colgroup")
            && !matches!(tag.name, local_name!("col") | local_name!("template"))
        {
            self.pop();
        }
        let name = &tag.name;
        let attrs = &tag.attrs[..];
        match *name {
            local_name!("html") | local_name!("body") | local_name!("head") => {}
            local_name!("frame") if self.top().tag == local_name!("frameset") => {
                self.insert_void(name, attrs)
            }
            local_name!("frameset") | local_name!("frame") => {}
            local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("param")
            | local_name!("source")
            | local_name!("track") => self.insert_void(name, attrs),
            local_name!("area")
            | local_name!("br")
            | local_name!("embed")
            | local_name!("img")
            | local_name!("keygen")
            | local_name!("wbr") => {
                self.reopen_formatting();
                self.insert_void(name, attrs);
            }
            local_name!("image") => {
                self.reopen_formatting();
                self.insert_void(&local_name!("img"), attrs);
            }
            local_name!("input") => {
                if self.in_scope_counted(&local_name!("select"), Scope::Default) {
                    self.pop_until(&local_name!("select"));
                }
                self.reopen_formatting();
                self.insert_void(name, attrs);
            }
            local_name!("hr") => {
                self.close_p_in_button_scope();
                if self.in_scope_counted(&local_name!("select"), Scope::Default) {
                    self.generate_implied_end_tags(None);
                }
                self.insert_void(name, attrs);
            }
            local_name!("xmp") | local_name!("plaintext") => {
                self.close_p_in_button_scope();
                if *name == local_name!("xmp") {
                    self.reopen_formatting();
                }
                self.insert(name.clone(), Ns::Html, attrs, true);
                return raw_text_kind(name);
            }
            local_name!("title")
            | local_name!("textarea")
            | local_name!("style")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("iframe")
            | local_name!("noembed")
            | local_name!("script") => {
                self.skip_newline = *name == local_name!("textarea");
                self.insert(name.clone(), Ns::Html, attrs, true);
                return raw_text_kind(name);
            }
            local_name!("template") => {
                self.insert(name.clone(), Ns::Html, attrs, true);
                self.template_depth = 1;
            }
            _ if closes_an_open_p(name) => {
                self.close_p_in_button_scope();
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            _ if is_heading(name) => {
                self.close_p_in_button_scope();
                if is_heading(&self.top().tag) {
                    self.pop();
                }
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            local_name!("pre") | local_name!("listing") => {
                self.close_p_in_button_scope();
                self.insert(name.clone(), Ns::Html, attrs, true);
                self.skip_newline = true;
            }
            local_name!("form") => {
                if self.count(name) == 0 {
                    self.close_p_in_button_scope();
                    // Between table rows a form stays empty: the rows cannot go into it.
                    let push = !is_table_structure(&self.top().tag);
                    self.insert(name.clone(), Ns::Html, attrs, push);
                }
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                self.close_list_item(name);
                self.close_p_in_button_scope();
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            local_name!("button") => {
                if self.in_scope_counted(name, Scope::Default) {
                    self.generate_implied_end_tags(None);
                    self.pop_until(name);
                }
                self.reopen_formatting();
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            local_name!("a") => {
                // Links do not nest: an open one ends where the next begins.
                if self.active_named(name).is_some() {
                    self.close_formatting(name);
                    self.forget_formatting(name);
                }
                self.reopen_formatting();
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            local_name!("nobr") => {
                self.reopen_formatting();
                if self.in_scope_counted(name, Scope::Default) {
                    self.close_formatting(name);
                    self.reopen_formatting();
                }
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            _ if is_formatting(name)
                || matches!(
                    *name,
                    local_name!("applet") | local_name!("marquee") | local_name!("object")
                ) =>
            {
                self.reopen_formatting();
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            local_name!("table") => {
                if !self.quirks {
                    self.close_p_in_button_scope();
                }
                if is_table_structure(&self.top().tag) {
                    self.pop_until(&local_name!("table"));
                }
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            local_name!("caption")
            | local_name!("colgroup")
            | local_name!("col")
            | local_name!("tbody")
            | local_name!("thead")
            | local_name!("tfoot")
            | local_name!("tr")
            | local_name!("td")
            | local_name!("th") => self.table_part(name, attrs),
            local_name!("select") => {
                if self.in_scope_counted(name, Scope::Default) {
                    self.pop_until(name);
                } else {
                    self.reopen_formatting();
                    self.insert(name.clone(), Ns::Html, attrs, true);
                }
            }
            local_name!("option") | local_name!("optgroup") => {
                if self.in_scope_counted(&local_name!("select"), Scope::Default) {
                    let except =
                        (*name == local_name!("option")).then_some(local_name!("optgroup"));
                    self.generate_implied_end_tags(except.as_ref());
                } else if self.top().tag == local_name!("option") {
                    self.pop();
                }
                self.reopen_formatting();
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            local_name!("rb") | local_name!("rtc") | local_name!("rp") | local_name!("rt") => {
                if self.in_scope_counted(&local_name!("ruby"), Scope::Default) {
                    let except = matches!(*name, local_name!("rp") | local_name!("rt"))
                        .then(|| local_name!("rtc"));
                    self.generate_implied_end_tags(except.as_ref());
                }
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
            _ if let Some(ns) = Ns::opened_by(name) => {
                self.reopen_formatting();
                self.insert(name.clone(), ns, attrs, !tag.self_closing)
            }
            _ => {
                self.reopen_formatting();
                self.insert(name.clone(), Ns::Html, attrs, true);
            }
        }
        Content::Markup
    }

    /// Start tags of table sections, rows, cells, captions and columns: each closes the table
    /// parts it cannot sit in (a cell the open cell, a row the open row and its cell, ...),
    /// then goes into the table part that holds it, implying the `tbody` and `tr` a table
    /// needs. Outside a table the standard ignores them.
    fn table_part(&mut self, name: &LocalName, attrs: &[Attribute<'_>]) {
        let is_cell = matches!(*name, local_name!("td") | local_name!("th"));
        let is_row = *name == local_name!("tr");
        // Every round closes at least one element, so this ends.
        while let Some(at) = self.nearest_table_part() {
            match self.open[at].tag {
                local_name!("table") => {
                    self.pop_to_length(at + 1);
                    if is_cell || is_row {
                        self.insert(local_name!("tbody"), Ns::Html, &[], true);
                    }
                    if is_cell {
                        self.insert(local_name!("tr"), Ns::Html, &[], true);
                    }
                    if *name == local_name!("col") {
                        self.insert(local_name!("colgroup"), Ns::Html, &[], true);
                    }
                    break;
                }
                local_name!("tbody") | local_name!("thead") | local_name!("tfoot")
                    if is_cell || is_row =>
                {
                    self.pop_to_length(at + 1);
                    if is_cell {
                        self.insert(local_name!("tr"), Ns::Html, &[], true);
                    }
                    break;
                }
                local_name!("tr") if is_cell => {
                    self.pop_to_length(at + 1);
                    break;
                }
                local_name!("colgroup") if *name == local_name!("col") => {
                    self.pop_to_length(at + 1);
                    break;
                }
                _ => {
                    self.pop_to(at);
                    continue;
                }
            }
        }
        if self.nearest_table_part().is_some() {
            let push = *name != local_name!("col");
            self.insert(name.clone(), Ns::Html, attrs, push);
        }
    }

    /// The nearest open table, section, row, cell, caption or colgroup, within the table.
    fn nearest_table_part(&self) -> Option<usize> {
        for at in (1..self.open.len()).rev() {
            let frame = &self.open[at];
            if frame.ns != Ns::Html || frame.detached {
                continue;
            }
            match frame.tag {
                _ if is_table_part(&frame.tag) => return Some(at),
                local_name!("html") | local_name!("template") => return None,
                _ => {}
            }
        }
        None
    }

    fn body_end_tag(&mut self, tag: &Tag<'_>) {
        let name = &tag.name;
        if self.top().ns != Ns::Html {
            // Foreign elements close by name; an HTML element reached first hands the tag to
            // the HTML rules.
            for at in (1..self.open.len()).rev() {
                let frame = &self.open[at];
                if frame.ns == Ns::Html {
                    break;
                }
                if frame.tag.eq_ignore_ascii_case(name) {
                    self.pop_to(at);
                    return;
                }
            }
        }
        match *name {
            local_name!("body") | local_name!("html") | local_name!("head") => {}
            _ if ends_a_block(name) => {
                if let Some(at) = self.find_in_scope(name, Scope::Default) {
                    self.generate_implied_end_tags(None);
                    self.pop_to(at);
                }
            }
            local_name!("form") => {
                if let Some(at) = self.find_in_scope(name, Scope::Default) {
                    self.generate_implied_end_tags(None);
                    self.take_off_stack(at);
                }
            }
            local_name!("p") => {
                if !self.in_scope_counted(name, Scope::Button) {
                    // A stray `</p>` is an empty paragraph.
                    self.insert(name.clone(), Ns::Html, &[], false);
                } else {
                    self.close_p_in_button_scope();
                }
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                let scope = if *name == local_name!("li") {
                    Scope::ListItem
                } else {
                    Scope::Default
                };
                if let Some(at) = self.find_in_scope(name, scope) {
                    self.generate_implied_end_tags(Some(name));
                    self.pop_to(at);
                }
            }
            _ if is_heading(name) => {
                let heading = self.find_where(Scope::Default, |f| is_heading(&f.tag));
                if let Some(at) = heading {
                    self.generate_implied_end_tags(None);
                    self.pop_to(at);
                }
            }
            local_name!("br") => {
                self.reopen_formatting();
                self.insert_void(name, &[]);
            }
            _ if is_formatting(name) => self.close_formatting(name),
            _ if is_table_part(name) => {
                if let Some(at) = self.find_in_scope(name, Scope::Table) {
                    self.pop_to(at);
                }
            }
            local_name!("option") => {
                if self.top().tag == local_name!("option") {
                    self.pop();
                }
            }
            local_name!("optgroup") => {
                let below = self.open.len().checked_sub(2).map(|i| &self.open[i].tag);
                if self.top().tag == local_name!("option")
                    && below == Some(&local_name!("optgroup"))
                {
                    self.pop();
                }
                if self.top().tag == local_name!("optgroup") {
                    self.pop();
                }
            }
            _ => self.close_by_generic_rule(name),
        }
    }

    /// The standard's rule for any other end tag: close the nearest open element of that
    /// name, unless a special element (a block, a table part, ...) comes first.
    fn close_by_generic_rule(&mut self, name: &LocalName) {
        for at in (1..self.open.len()).rev() {
            let frame = &self.open[at];
            if frame.detached {
                continue;
            }
            if frame.tag == *name && frame.ns == Ns::Html {
                self.generate_implied_end_tags(Some(name));
                self.pop_to(at);
                return;
            }
            if frame.special {
                return;
            }
        }
    }

    /// Inside a template, whose contents are dropped: follow its nesting and keep the
    /// tokenizer in step with raw-text elements, building nothing.
    fn in_template(&mut self, tag: &Tag<'_>) -> Content {
        match (tag.kind, &tag.name) {
            (TagKind::Start, &local_name!("template")) => self.template_depth += 1,
            (TagKind::End, &local_name!("template")) => {
                self.template_depth -= 1;
                if self.template_depth == 0 {
                    self.pop_until(&local_name!("template"));
                }
            }
            (TagKind::Start, name) => return raw_text_kind(name),
            _ => {}
        }
        Content::Markup
    }

    // ----- the stack of open elements ------------------------------------------------------

    fn top(&self) -> &Frame {
        // The document's frame is never popped.
        &self.open[self.open.len() - 1]
    }

    fn count(&self, name: &LocalName) -> u32 {
        COUNTED
            .iter()
            .position(|c| c == name)
            .map_or(u32::MAX, |i| self.counts[i])
    }

    fn in_scope_counted(&self, name: &LocalName, scope: Scope) -> bool {
        self.count(name) > 0 && self.find_in_scope(name, scope).is_some()
    }

    fn find_in_scope(&self, name: &LocalName, scope: Scope) -> Option<usize> {
        if self.count(name) == 0 {
            return None;
        }
        self.find_where(scope, |f| f.tag == *name && f.ns == Ns::Html)
    }

    /// The nearest open element `target` accepts, if no element bounding `scope` comes first.
    fn find_where(&self, scope: Scope, target: impl Fn(&Frame) -> bool) -> Option<usize> {
        for at in (1..self.open.len()).rev() {
            let frame = &self.open[at];
            if frame.detached {
                continue;
            }
            if target(frame) {
                return Some(at);
            }
            let bounds = match scope {
                Scope::Default => frame.scope_boundary,
                Scope::Button => frame.scope_boundary || frame.tag == local_name!("button"),
                Scope::ListItem => {
                    frame.scope_boundary
                        || (frame.ns == Ns::Html
                            && matches!(frame.tag, local_name!("ol") | local_name!("ul")))
                }
                Scope::Table => {
                    frame.ns == Ns::Html
                        && matches!(
                            frame.tag,
                            local_name!("html") | local_name!("table") | local_name!("template")
                        )
                }
            };
            if bounds {
                return None;
            }
        }
        None
    }

    fn close_p_in_button_scope(&mut self) {
        if let Some(at) = self.find_in_scope(&local_name!("p"), Scope::Button) {
            self.generate_implied_end_tags(Some(&local_name!("p")));
            self.pop_to(at);
        }
    }

    /// A new `li` closes the open `li` (a `dd` or `dt` the open `dd` or `dt`) unless a block
    /// other than `address`, `div` or `p` is in between.
    fn close_list_item(&mut self, name: &LocalName) {
        let item = *name == local_name!("li");
        let open = if item {
            self.count(name)
        } else {
            self.count(&local_name!("dd")) + self.count(&local_name!("dt"))
        };
        if open == 0 {
            return;
        }
        for at in (1..self.open.len()).rev() {
            let frame = &self.open[at];
            if frame.detached {
                continue;
            }
            let matches = if item {
                frame.tag == local_name!("li")
            } else {
                matches!(frame.tag, local_name!("dd") | local_name!("dt"))
            };
            if matches && frame.ns == Ns::Html {
                let closing = frame.tag.clone();
                self.generate_implied_end_tags(Some(&closing));
                self.pop_to(at);
                return;
            }
            if frame.special
                && !matches!(
                    frame.tag,
                    local_name!("address") | local_name!("div") | local_name!("p")
                )
            {
                return;
            }
        }
    }

    /// Pops the elements whose end tags the standard implies (`p`, `li`, `option`, ...),
    /// except `except`.
    fn generate_implied_end_tags(&mut self, except: Option<&LocalName>) {
        loop {
            let top = self.top();
            let implied = top.ns == Ns::Html
                && matches!(
                    top.tag,
                    local_name!("dd")
                        | local_name!("dt")
                        | local_name!("li")
                        | local_name!("optgroup")
                        | local_name!("option")
                        | local_name!("p")
                        | local_name!("rb")
                        | local_name!("rp")
                        | local_name!("rt")
                        | local_name!("rtc")
                );
            if !implied || except == Some(&top.tag) {
                return;
            }
            self.pop();
        }
    }

    fn pop_until(&mut self, name: &LocalName) {
        if let Some(at) = (1..self.open.len())
            .rev()
            .find(|&at| self.open[at].tag == *name && !self.open[at].detached)
        {
            self.pop_to(at);
        }
    }

    /// Pops the element at `at` and everything above it.
    fn pop_to(&mut self, at: usize) {
        self.pop_to_length(at);
    }

    fn pop_to_length(&mut self, length: usize) {
        while self.open.len() > length.max(1) {
            self.pop();
        }
    }

    fn pop(&mut self) -> Frame {
        let frame = self.pop_one();
        // A detached form ends with the last element opened inside it.
        while self.open.len() > 1 && self.top().detached {
            self.pop_one();
        }
        frame
    }

    fn pop_one(&mut self) -> Frame {
        let frame = self.open.pop().expect("the document frame is never popped");
        self.dom.nodes[frame.node as usize].end = self.dom.nodes.len() as u32;
        if let Some(i) = frame.counted {
            self.counts[i] -= 1;
        }
        match frame.formatting {
            Formatting::Element => self.mark_closed(frame.node),
            Formatting::Marker => self.clear_formatting_to_marker(),
            Formatting::None => {}
        }
        self.open_text = NONE;
        frame
    }

    /// A formatting element left the stack: it stays in the list, to be reopened.
    fn mark_closed(&mut self, closed: u32) {
        for entry in self.active.iter_mut().rev() {
            match entry {
                Active::Element { node, open, .. } if *node == closed => {
                    *open = false;
                    return;
                }
                Active::Marker => return,
                _ => {}
            }
        }
    }

    fn clear_formatting_to_marker(&mut self) {
        while let Some(entry) = self.active.pop() {
            if let Active::Marker = entry {
                return;
            }
        }
    }

    /// The active-list position of the last formatting element named `name` since the last
    /// marker.
    fn active_named(&self, name: &LocalName) -> Option<usize> {
        for (k, entry) in self.active.iter().enumerate().rev() {
            match *entry {
                Active::Marker => return None,
                Active::Element { element, .. } => {
                    if self.dom.elements[element as usize].tag == *name {
                        return Some(k);
                    }
                }
            }
        }
        None
    }

    /// The end tag of a formatting element (the standard's adoption agency, without moving
    /// nodes). If no block was opened inside the element since, the element closes. If one
    /// was, the standard moves that block out of it; here the element instead leaves the
    /// stack and stays the block's ancestor (as a form does), so the block and what follows
    /// in it stay where they are.
    fn close_formatting(&mut self, name: &LocalName) {
        let top = self.top();
        if top.tag == *name && top.ns == Ns::Html && top.formatting == Formatting::None {
            self.pop();
            return;
        }
        let Some(k) = self.active_named(name) else {
            self.close_by_generic_rule(name);
            return;
        };
        let Active::Element { node, open, .. } = self.active[k] else {
            return;
        };
        let Some(at) = open.then(|| self.stack_position(node)).flatten() else {
            self.active.remove(k);
            return;
        };
        if self
            .find_where(Scope::Default, |f| f.node == node)
            .is_none()
        {
            return;
        }
        self.active.remove(k);
        if self.open[at + 1..].iter().any(|f| f.special && !f.detached) {
            self.take_off_stack(at);
        } else {
            // Already off the active list: popping it must not look for it there.
            self.open[at].formatting = Formatting::None;
            self.pop_to(at);
        }
    }

    /// Takes the formatting element named `name` off the list, and off the stack if still
    /// there (leaving it an ancestor of what is open inside it).
    fn forget_formatting(&mut self, name: &LocalName) {
        let Some(k) = self.active_named(name) else {
            return;
        };
        if let Active::Element { node, .. } = self.active.remove(k) {
            if let Some(at) = self.stack_position(node) {
                self.take_off_stack(at);
            }
        }
    }

    /// Where `node` is on the stack of open elements, if it is there.
    fn stack_position(&self, node: u32) -> Option<usize> {
        (1..self.open.len()).rfind(|&at| self.open[at].node == node && !self.open[at].detached)
    }

    /// Takes the element at `at` off the standard's stack (and, if a formatting element, off
    /// the active list, which the caller has done). The current node is popped; an element
    /// below it stays open as the ancestor of what was opened inside it (detached), where the
    /// standard would move those nodes.
    fn take_off_stack(&mut self, at: usize) {
        self.open[at].formatting = Formatting::None;
        if at + 1 == self.open.len() {
            self.pop();
            return;
        }
        let frame = &mut self.open[at];
        frame.detached = true;
        if let Some(i) = frame.counted.take() {
            self.counts[i] -= 1;
        }
    }

    fn push_frame(&mut self, frame: Frame) {
        if let Some(i) = frame.counted {
            self.counts[i] += 1;
        }
        self.open_text = NONE;
        self.open.push(frame);
    }

    // ----- writing the arena ---------------------------------------------------------------

    /// Appends a node as the last child of the current node.
    fn append(&mut self, kind: NodeKind) -> u32 {
        let new = self.dom.nodes.len() as u32;
        let depth = self.open.len() as u32;
        let parent = self.open.len() - 1;
        let frame = &mut self.open[parent];
        if frame.last_child != NONE {
            self.dom.nodes[frame.last_child as usize].next_sibling = new;
        }
        frame.last_child = new;
        self.dom.nodes.push(Node {
            parent: frame.node,
            end: new + 1,
            next_sibling: NONE,
            depth,
            kind,
        });
        new
    }

    fn insert(&mut self, tag: LocalName, ns: Ns, attrs: &[Attribute<'_>], push: bool) {
        let element = self.dom.add_element(tag, attrs);
        let html_integration = is_html_integration_point(&element.tag, ns, attrs);
        if let Some(node) = self.insert_element(element, ns, html_integration, push) {
            if self.top().formatting == Formatting::Element {
                self.remember_formatting(node);
            }
        }
    }

    /// Appends an element to the current node and, with `push`, opens it. Returns the node
    /// if it was opened.
    fn insert_element(
        &mut self,
        element: Element,
        ns: Ns,
        html_integration: bool,
        push: bool,
    ) -> Option<u32> {
        let hidden = self.top().hidden || element.hides_content;
        let tag = element.tag.clone();
        self.dom.elements.push(element);
        let node = self.append(NodeKind::Element((self.dom.elements.len() - 1) as u32));
        self.open_text = NONE;
        if tag == local_name!("title") && self.title_element == NONE {
            self.title_element = node;
        }
        if self.open.len() > self.max_depth {
            // This node is one deeper than the limit: the parse stops with it.
            self.depth_limited = true;
            return None;
        }
        if push {
            let html = ns == Ns::Html;
            let formatting = match tag {
                _ if !html => Formatting::None,
                _ if is_formatting(&tag) => Formatting::Element,
                local_name!("td")
                | local_name!("th")
                | local_name!("caption")
                | local_name!("applet")
                | local_name!("marquee")
                | local_name!("object")
                | local_name!("template") => Formatting::Marker,
                _ => Formatting::None,
            };
            let frame = Frame {
                node,
                special: is_special(&tag, ns),
                scope_boundary: bounds_scope(&tag, ns),
                html_integration,
                detached: false,
                counted: if html {
                    COUNTED.iter().position(|c| *c == tag)
                } else {
                    None
                },
                formatting,
                tag,
                ns,
                hidden,
                last_child: NONE,
            };
            if formatting == Formatting::Marker {
                self.active.push(Active::Marker);
            }
            self.push_frame(frame);
            return Some(node);
        }
        None
    }

    /// Adds a just-opened formatting element to the active list. Like the standard (its
    /// "Noah's Ark" clause) it keeps at most three equal ones since the last marker, which
    /// also bounds what a page of unclosed `<font>` tags makes us reopen.
    fn remember_formatting(&mut self, node: u32) {
        let NodeKind::Element(element) = self.dom.nodes[node as usize].kind else {
            return;
        };
        let mut equal = Vec::new();
        for (k, entry) in self.active.iter().enumerate().rev() {
            match *entry {
                Active::Marker => break,
                Active::Element { element: other, .. } => {
                    if self.dom.same_element(other, element) {
                        equal.push(k);
                    }
                }
            }
        }
        if equal.len() >= 3 {
            if let Some(&earliest) = equal.last() {
                self.active.remove(earliest);
            }
        }
        self.active.push(Active::Element {
            node,
            element,
            open: true,
        });
    }

    /// Reopens the formatting elements a block closed before their end tags (the standard's
    /// "reconstruct the active formatting elements"): `<p><b>one</p><p>two` puts "two" in
    /// bold too. Reopening only appends nodes, so this needs no moves.
    fn reopen_formatting(&mut self) {
        let reopen_from = {
            let mut from = self.active.len();
            while from > 0 {
                match self.active[from - 1] {
                    Active::Element { open: false, .. } => from -= 1,
                    _ => break,
                }
            }
            from
        };
        if !is_table_structure(&self.top().tag) {
            for k in reopen_from..self.active.len() {
                let Active::Element { element, .. } = self.active[k] else {
                    continue;
                };
                let copy = self.dom.elements[element as usize].clone();
                let Some(node) = self.insert_element(copy, Ns::Html, false, true) else {
                    return;
                };
                let element = (self.dom.elements.len() - 1) as u32;
                self.active[k] = Active::Element {
                    node,
                    element,
                    open: true,
                };
            }
        }
    }

    fn insert_void(&mut self, tag: &LocalName, attrs: &[Attribute<'_>]) {
        self.insert(tag.clone(), Ns::Html, attrs, false);
    }

    fn insert_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.open_text != NONE {
            // Adjacent text becomes one node; its string is the last one written.
            self.dom.strings.push_str(text);
            if let NodeKind::Text { span, .. } = &mut self.dom.nodes[self.open_text as usize].kind {
                span.len += text.len() as u32;
            }
            return;
        }
        let span: Span = self.dom.add_string(text);
        let visible = !self.top().hidden;
        self.open_text = self.append(NodeKind::Text { span, visible });
        if self.open.len() > self.max_depth {
            self.depth_limited = true;
        }
    }
}

/// The tag's attributes if it is `name` (an `<html>` or `<head>` giving the element it
/// opens its attributes), none otherwise.
fn attrs_if<'t, 'a>(tag: &'t Tag<'a>, name: LocalName) -> &'t [Attribute<'a>] {
    if tag.name == name {
        &tag.attrs
    } else {
        &[]
    }
}

/// Whether a start tag under `top` follows the HTML rules: it does under HTML elements, HTML
/// integration points and, except for two MathML tags, MathML text integration points.
fn takes_html_start_tag(top: &Frame, tag: &LocalName) -> bool {
    match top.ns {
        Ns::Html => true,
        Ns::Svg => top.html_integration,
        Ns::MathMl => {
            top.html_integration
                || (matches!(
                    top.tag,
                    local_name!("mi")
                        | local_name!("mo")
                        | local_name!("mn")
                        | local_name!("ms")
                        | local_name!("mtext")
                ) && !matches!(*tag, local_name!("mglyph") | local_name!("malignmark")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_with_html5ever_tree_builder, Dom, NodeKind};

    /// The tree as `tag(children)`, text as its words in quotes, hidden text marked `~`.
    fn outline(dom: &Dom) -> String {
        let mut out = String::new();
        let mut open: Vec<usize> = Vec::new();
        for i in 1..dom.len() {
            while let Some(&last) = open.last() {
                if dom.subtree(last).contains(&i) {
                    break;
                }
                out.push(')');
                open.pop();
            }
            match dom.node(i).kind {
                NodeKind::Element(_) => {
                    out.push_str(dom.tag(i).map_or("?", |t| &**t));
                    out.push('(');
                    open.push(i);
                }
                NodeKind::Text { visible, .. } => {
                    let words: Vec<&str> = dom.text(i).unwrap_or("").split_whitespace().collect();
                    if !words.is_empty() {
                        let mark = if visible { "" } else { "~" };
                        out.push_str(&format!("{mark}'{}'", words.join(" ")));
                    }
                }
                NodeKind::Document => {}
            }
        }
        out.extend(open.iter().map(|_| ')'));
        out
    }

    fn ours(html: &str) -> String {
        outline(&super::parse(html, 4096))
    }

    /// Cases where our builder must build exactly the standard's tree.
    #[test]
    fn builds_the_standards_tree_where_no_node_has_to_move() {
        let cases = [
            "",
            "text only",
            "<!doctype html><title>T</title><p>a<p>b",
            "<html><head><meta charset=utf-8></head>\n<body><div>x</div></body></html>",
            "<ul><li>one<li>two</ul><dl><dt>t<dd>d<dt>u</dl>",
            "<p>para<div>block</div>",
            "<h1>a<h2>b</h2>",
            "<table><tr><td>1<td>2<tr><td>3</table>",
            "<table><thead><tr><th>h</thead><tbody><tr><td>x</tbody></table>",
            "<table><col><caption>c</caption><td>x</table>",
            "<table><tr><td><table><td>inner</table>outer</table>",
            "<script>if (a<b) document.write('<p>')</script><p>x",
            "<script><!-- document.write('<script>x</script>') --></script><p>after",
            "<script><!-- a </script><p>after",
            "<style>a</b></style><p>x</p><STYLE>b</Style >c",
            "<script>a\r\nb\0</script><noscript><p>x</noscript><iframe><b></iframe>",
            "<script>never closed <p>",
            "<textarea>\nkept</textarea><pre>\nline</pre>",
            "<template><p>dropped</p></template><p>kept",
            "<select><option>a<option>b<optgroup><option>c</select>after",
            "<svg><circle/><p>out</p>",
            "<math><mi><b>in</b></mi></math>",
            "<p><b>bold<p>still bold</b>plain",
            "<a href=1>one<a href=2>two</a>",
            "<b><i>x</b>y</i>z",
            "<div><form><div>x</form>y</div>z",
            "<title>unclosed",
            "</p>stray end<br></br>",
            "<head></head>\n<script>s</script><body>b",
            "<frameset><frame></frameset>",
            "<p><button>b<button>c</button></p>",
            "<ruby>a<rt>b<rp>c</ruby>",
            "<dl><dd>a<div><dd>b</div></dl>",
            // Quirks mode (no doctype, or a legacy one) keeps a table inside an open p.
            "<!doctype html><p>a<table><td>x</table>",
            "<p>a<table><td>x</table>",
            "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\"><p>a<table></table>",
            "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"x.dtd\"><p><table>",
        ];
        for html in cases {
            let standard = outline(&parse_with_html5ever_tree_builder(html, 4096));
            assert_eq!(ours(html), standard, "{html:?}");
        }
    }

    /// Where the standard moves nodes, ours keeps them in place with the same text.
    #[test]
    fn keeps_in_place_what_the_standard_would_move() {
        // Foster parenting: text and elements between table rows.
        assert_eq!(
            ours("<table><tr><td>1</td></tr>stray<tr><td>2</table>"),
            "html(head()body(table(tbody(tr(td('1'))'stray'tr(td('2'))))))"
        );
        // The adoption agency would move the div out of the bold element.
        assert_eq!(
            ours("<b>x<div>y</b>z</div>w"),
            "html(head()body(b('x'div('yz'))'w'))"
        );
    }

    #[test]
    fn a_parsed_page_holds_no_growth_slack() {
        // Kept pages are not shrunk later (`run` keeps them as parsed).
        let html = format!(
            "<ul class=a>{}</ul>",
            "<li id=x><a href=/y>item</a>".repeat(500)
        );
        let dom = super::parse(&html, 4096);
        assert_eq!(dom.nodes.capacity(), dom.nodes.len());
        assert_eq!(dom.elements.capacity(), dom.elements.len());
        assert_eq!(dom.strings.capacity(), dom.strings.len());
        assert_eq!(dom.classes.capacity(), dom.classes.len());
        assert_eq!(dom.other_attributes.capacity(), dom.other_attributes.len());
    }

    #[test]
    fn stops_at_the_depth_limit_and_says_so() {
        let html = format!("{}deep", "<div>".repeat(100));
        let dom = super::parse(&html, 50);
        assert!(dom.depth_limited());
        assert!(dom.max_depth() as usize > 50);
        assert!(dom.max_depth() as usize <= 52);
        let dom = super::parse(&html, 200);
        assert!(!dom.depth_limited());
        assert!(dom.visible_text(dom.len() - 1).is_some());
    }

    #[test]
    fn unclosed_formatting_is_reopened_at_most_three_times_alike() {
        // Thousands of unclosed <font> tags do not make each paragraph thousands deep.
        let html = format!("{}<p>a<p>b", "<font size=2>".repeat(5000));
        let dom = super::parse(&html, 100_000);
        let last = dom.len() - 1;
        assert_eq!(dom.visible_text(last), Some("b"));
        assert!(dom.node(last).depth < 5010, "{}", dom.node(last).depth);
    }
}
