//! Streamed server rendering: a page whose parts arrive after the page's end, hidden, and are
//! moved into place by a script.
//!
//! React's streaming renderer (Next.js's app router, Remix, and anything else on React 18 or
//! later) sends the page's shell first, with a placeholder where a suspended part goes: a
//! `<template id="B:4">` (a boundary, after the fallback's opening comment) or a
//! `<template id="P:5">` (a segment). When the part is ready it is sent at the end of the
//! body as `<div hidden id="S:4">…</div>`, with a one-line script, `$RC("B:4","S:4")` or
//! `$RS("S:5","P:5")`, that moves the div's children to the placeholder. A reader sees them
//! there; a parser that runs no scripts sees a skeleton where the product or article should
//! be, and the whole of it hidden after the footer. A product page of wayfair.com in WCXB's dev
//! split holds its whole description, details and dimensions in 52 hidden segments; pages of
//! fool.com, huel.com, bestbuy.com and render.com there are streamed alike.
//!
//! [`place_streamed_segments`] does what those scripts do, on the arena: each hidden `S:` div
//! whose placeholder is on the page goes to its placeholder's place, children only, and its
//! text becomes visible where its new ancestors let it be. What is not done: the fallback a
//! boundary shows until its part arrives (a skeleton, a spinner) stays, since the arena keeps no
//! comments to say where it ends; fallbacks are nearly always without text.

use std::collections::HashMap;

use html5ever::local_name;

use super::{Dom, Element, Node, NodeKind, NONE};

/// At most this many segments a page are placed, the first in document order; the others stay
/// hidden. Streamed pages have tens (59 at most on WCXB's dev split); the check for segments
/// that would land inside themselves costs up to the cube of the count, which the bound keeps
/// under 2·10⁷ steps on a hostile page.
const MAX_SEGMENTS: usize = 256;

/// Moves each hidden streamed segment (`<div hidden id="S:x">`) to its placeholder
/// (`<template id="B:x">` or `<template id="P:x">`), as React's `$RC`/`$RS` scripts do.
pub(super) fn place_streamed_segments(dom: &mut Dom) {
    let plan = plan(dom);
    if plan.is_empty() {
        return;
    }
    rebuild(dom, &plan);
}

/// Placeholder node → segment node, for every segment that can go to its placeholder.
///
/// The pairs are read from the ids (`S:x` goes to `B:x`, else `P:x`), not from the scripts:
/// every `$RC`/`$RS` call on the streamed pages of WCXB's dev split pairs equal suffixes, and
/// some of those pages were saved without their scripts.
fn plan(dom: &Dom) -> HashMap<usize, usize> {
    // Nearly every page has no streamed part: one look down the element table, without the
    // nodes, says so (hidden elements are rare, and the flag is checked first).
    if !dom.elements.iter().any(|e| segment_id(dom, e).is_some()) {
        return HashMap::new();
    }
    let mut segments: Vec<(usize, &str, &str)> = Vec::new();
    let mut placeholders: HashMap<(&str, u8, &str), usize> = HashMap::new();
    for i in 0..dom.len() {
        let Some(element) = dom.element(i) else {
            continue;
        };
        if let Some((prefix, suffix)) = segment_id(dom, element) {
            if segments.len() < MAX_SEGMENTS {
                segments.push((i, prefix, suffix));
            }
        } else if element.tag == local_name!("template") {
            if let Some((prefix, kind @ (b'B' | b'P'), suffix)) =
                element.id.and_then(|id| streaming_id(dom.str(id)))
            {
                placeholders.entry((prefix, kind, suffix)).or_insert(i);
            }
        }
    }
    if segments.is_empty() {
        return HashMap::new();
    }
    // The segment each node is in (the innermost), for the cycle check.
    let mut segment_of = vec![NONE; dom.len()];
    for (k, &(node, _, _)) in segments.iter().enumerate() {
        segment_of[node] = k as u32;
    }
    for i in 1..dom.len() {
        if segment_of[i] == NONE {
            if let Some(parent) = dom.parent(i) {
                segment_of[i] = segment_of[parent];
            }
        }
    }
    let mut target: Vec<Option<usize>> = segments
        .iter()
        .map(|&(_, prefix, suffix)| {
            placeholders
                .get(&(prefix, b'B', suffix))
                .or_else(|| placeholders.get(&(prefix, b'P', suffix)))
                .copied()
        })
        .collect();
    // A segment whose placeholder ends up inside the segment itself (directly, or through
    // other moved segments) cannot move: it stays where it is, hidden. Dropping one move can
    // change where others end up, so check again until nothing changes.
    loop {
        let mut changed = false;
        for k in 0..segments.len() {
            if target[k].is_some() && lands_inside_itself(dom, k, &segments, &target, &segment_of) {
                target[k] = None;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    segments
        .iter()
        .zip(target)
        .filter_map(|(&(node, _, _), to)| to.map(|placeholder| (placeholder, node)))
        .collect()
}

/// Whether segment `k`, moved to its placeholder, would be inside itself.
fn lands_inside_itself(
    dom: &Dom,
    k: usize,
    segments: &[(usize, &str, &str)],
    target: &[Option<usize>],
    segment_of: &[u32],
) -> bool {
    // Where the content lands: the placeholder's place. It is inside whatever segment holds
    // that place, wherever that segment itself goes, and so on outwards.
    let mut at = match target[k] {
        Some(placeholder) => placeholder,
        None => return false,
    };
    for _ in 0..=segments.len() {
        let holder = segment_of[at];
        if holder == NONE {
            return false;
        }
        let holder = holder as usize;
        if holder == k {
            return true;
        }
        at = match target[holder] {
            Some(placeholder) => placeholder,
            // A segment that stays put is where it is: go on from outside it.
            None => match dom.parent(segments[holder].0) {
                Some(outside) => outside,
                None => return false,
            },
        };
    }
    true
}

/// The prefix and suffix of a streamed segment's id, when `element` is one: a hidden `<div>`
/// whose id is `S:x`.
fn segment_id<'d>(dom: &'d Dom, element: &Element) -> Option<(&'d str, &'d str)> {
    if !element.hides_content || element.tag != local_name!("div") {
        return None;
    }
    match streaming_id(dom.str(element.id?))? {
        (prefix, b'S', suffix) => Some((prefix, suffix)),
        _ => None,
    }
}

/// `prefix`, kind letter and suffix of a streaming id: `S:4`, `B:4`, `P:1a`, or the same
/// behind an identifier prefix (React's `identifierPrefix`).
fn streaming_id(id: &str) -> Option<(&str, u8, &str)> {
    let colon = id.rfind(':')?;
    let suffix = &id[colon + 1..];
    if colon == 0 || suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let kind = id.as_bytes()[colon - 1];
    matches!(kind, b'S' | b'B' | b'P').then(|| (&id[..colon - 1], kind, suffix))
}

/// The arena again, in the new document order: each placeholder replaced by its segment's
/// children, each moved segment gone from where it was.
fn rebuild(dom: &mut Dom, plan: &HashMap<usize, usize>) {
    let moved: std::collections::HashSet<usize> = plan.values().copied().collect();
    let old = std::mem::take(&mut dom.nodes);
    let mut nodes: Vec<Node> = Vec::with_capacity(old.len());
    // Whether each new node hides what is under it, and whether it came from a segment.
    let mut hidden: Vec<bool> = Vec::with_capacity(old.len());
    let first_child = |i: usize| (old[i].end as usize > i + 1).then_some(i + 1);

    struct Frame {
        /// The next old node of this sibling run.
        next: Option<usize>,
        /// The new node the run's nodes are children of.
        parent: usize,
        /// This run is the parent's own children (not a segment's, spliced in): its end is
        /// the parent's end.
        closes_parent: bool,
        /// The run is a moved segment's children: their text's visibility is recomputed.
        spliced: bool,
    }
    nodes.push(Node {
        end: 0,
        next_sibling: NONE,
        ..old[0]
    });
    hidden.push(false);
    let mut stack = vec![Frame {
        next: first_child(0),
        parent: 0,
        closes_parent: true,
        spliced: false,
    }];
    while let Some(frame) = stack.last_mut() {
        let Some(at) = frame.next else {
            let done = stack.pop().expect("the frame just looked at");
            if done.closes_parent {
                nodes[done.parent].end = nodes.len() as u32;
            }
            continue;
        };
        frame.next = (old[at].next_sibling != NONE).then_some(old[at].next_sibling as usize);
        let (parent, spliced) = (frame.parent, frame.spliced);
        if moved.contains(&at) {
            continue;
        }
        if let Some(&segment) = plan.get(&at) {
            stack.push(Frame {
                next: first_child(segment),
                parent,
                closes_parent: false,
                spliced: true,
            });
            continue;
        }
        let new = nodes.len();
        let mut node = Node {
            parent: parent as u32,
            end: new as u32 + 1,
            next_sibling: NONE,
            depth: nodes[parent].depth + 1,
            kind: old[at].kind,
        };
        let hides = match node.kind {
            NodeKind::Element(e) => dom.elements[e as usize].hides_content,
            _ => false,
        };
        if let NodeKind::Text { visible, .. } = &mut node.kind {
            if spliced {
                *visible = !hidden[parent];
            }
        }
        nodes.push(node);
        hidden.push(hidden[parent] || hides);
        if let Some(child) = first_child(at) {
            stack.push(Frame {
                next: Some(child),
                parent: new,
                closes_parent: true,
                spliced,
            });
        }
    }
    // Sibling links, from the parents.
    let mut last_child = vec![NONE; nodes.len()];
    for i in 1..nodes.len() {
        let parent = nodes[i].parent as usize;
        if last_child[parent] != NONE {
            nodes[last_child[parent] as usize].next_sibling = i as u32;
        }
        last_child[parent] = i as u32;
    }
    nodes.shrink_to_fit();
    dom.nodes = nodes;
}

#[cfg(test)]
mod tests {
    use crate::dom::{parse, parse_with_html5ever_tree_builder, Dom, NONE};

    fn visible(dom: &Dom) -> String {
        (0..dom.len())
            .filter_map(|i| dom.visible_text(i))
            .collect::<Vec<_>>()
            .join("|")
    }

    /// The arena's invariants: pre-order ranges, sibling links and depths agree with parents.
    fn assert_sound(dom: &Dom) {
        for i in 1..dom.len() {
            let node = dom.node(i);
            let parent = node.parent as usize;
            assert!(parent < i && i < dom.node(parent).end as usize, "node {i}");
            assert_eq!(node.depth, dom.node(parent).depth + 1, "node {i}");
            assert!(node.end as usize > i && node.end <= dom.node(parent).end);
            if node.next_sibling != NONE {
                assert_eq!(node.next_sibling, node.end, "node {i}");
                assert_eq!(dom.node(node.next_sibling as usize).parent, node.parent);
            } else {
                assert_eq!(node.end, dom.node(parent).end, "last child {i}");
            }
        }
        assert_eq!(dom.node(0).end as usize, dom.len());
    }

    fn both(html: &str) -> [Dom; 2] {
        let doms = [
            parse(html, 512),
            parse_with_html5ever_tree_builder(html, 512),
        ];
        for dom in &doms {
            assert_sound(dom);
        }
        doms
    }

    #[test]
    fn a_streamed_part_is_shown_at_its_placeholder() {
        let page = "<body><header>Menu</header><main><template id=\"B:0\"></template>\
            <div class=skeleton></div></main><footer>Foot</footer>\
            <div hidden id=\"S:0\"><article><h1>Title</h1><p>Story</p>\
            <div hidden>Still hidden</div></article></div>\
            <script>$RC(\"B:0\",\"S:0\")</script></body>";
        for dom in both(page) {
            assert_eq!(visible(&dom), "Menu|Title|Story|Foot");
            let story = (0..dom.len())
                .find(|&i| dom.text(i) == Some("Story"))
                .expect("the story");
            let inside_main = dom
                .ancestors_or_self(story)
                .any(|a| dom.tag(a).is_some_and(|t| &**t == "main"));
            assert!(inside_main, "{}", dom.path(story));
        }
    }

    #[test]
    fn segments_inside_segments_are_placed_too() {
        // React sends a part's own suspended parts as `P:` placeholders filled by later divs.
        let page = "<body><div id=app><template id=\"P:1\"></template></div>\
            <div hidden id=\"S:1\"><section><p>Outer</p><template id=\"P:2\"></template>\
            <p>After</p></section></div>\
            <div hidden id=\"S:2\"><p>Inner</p></div><p>Tail</p></body>";
        for dom in both(page) {
            assert_eq!(visible(&dom), "Outer|Inner|After|Tail");
        }
    }

    #[test]
    fn what_cannot_be_placed_stays_hidden() {
        // A part whose placeholder is inside itself, directly or through another part, a part
        // without a placeholder, a hidden element whose id only looks alike.
        let page = "<body><p>Shown</p>\
            <div hidden id=\"S:1\"><template id=\"P:1\"></template><p>Loop</p></div>\
            <div hidden id=\"S:2\"><template id=\"P:3\"></template><p>Two</p></div>\
            <div hidden id=\"S:3\"><template id=\"P:2\"></template><p>Three</p></div>\
            <div hidden id=\"S:9\"><p>Orphan</p></div>\
            <div hidden id=\"S:menu\"><p>Menu</p></div><template id=\"P:9x\"></template>\
            </body>";
        for dom in both(page) {
            assert_eq!(visible(&dom), "Shown");
            assert!((0..dom.len()).any(|i| dom.text(i) == Some("Loop")));
            assert!((0..dom.len()).any(|i| dom.text(i) == Some("Three")));
        }
        // Placed inside something hidden, a part stays hidden.
        let page = "<body><p>Shown</p><div style='display:none'><template id=\"B:0\"></template>\
            </div><div hidden id=\"S:0\"><p>Part</p></div></body>";
        for dom in both(page) {
            assert_eq!(visible(&dom), "Shown");
        }
    }

    #[test]
    fn many_segments_stay_cheap() {
        // Each segment holds the next one's placeholder: a chain as deep as it is long, and
        // more segments than are placed.
        let n = 2000;
        let mut page = String::from("<body><template id=\"P:0\"></template>");
        for k in 0..n {
            page.push_str(&format!(
                "<div hidden id=\"S:{k:x}\"><p>Part {k}</p><template id=\"P:{:x}\"></template></div>",
                k + 1
            ));
        }
        for dom in both(&page) {
            let shown = visible(&dom);
            assert!(shown.starts_with("Part 0|Part 1|"), "{}", &shown[..40]);
            assert_eq!(shown.matches("Part").count(), super::MAX_SEGMENTS);
        }
    }

    #[test]
    fn a_page_without_streamed_parts_is_untouched() {
        let page = "<body><div hidden id=\"S:0\"><p>Hidden</p></div><p>Shown</p></body>";
        for dom in both(page) {
            assert_eq!(visible(&dom), "Shown");
        }
    }
}
