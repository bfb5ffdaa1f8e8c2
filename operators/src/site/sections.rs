//! A page cut into sections by its site's tree regular expression, each with an importance
//! (seed 003's second phase): the sections below [`DEFAULT_NOISE_THRESHOLD`] are noise, the
//! site's template on that page.
//!
//! The page is first matched against the template ([`TreeRegex::matched`]). Every page node an
//! uppermost `*` of the template takes (the items of one list: products, menu entries,
//! comments, an article's paragraphs) belongs to one section, so a list's items share one
//! importance. The rest is cut top down by the seed's three conditions, with Stencil's size
//! proxy (visible characters, an image as [`IMAGE_WEIGHT`]) in place of the rendered area, as
//! [`crate::smoothing::segmentation`] has it for seed 000's hidden nodes:
//!
//! - Cond1: the node's size is over [`AREA_SHARE`] of the page's;
//! - Cond2: one of its children has a sectioning tag (`div`, `table`, HTML5's sectioning
//!   elements) and meets Cond1;
//! - Cond3: one of its children separates sections (`hr`, `frameset`).
//!
//! A node meeting Cond1 and Cond2, or holding a list's items, is cut into its children; one
//! meeting Cond3 into the runs of children between its separators; any other is one section.
//! Consecutive inline children (texts, `b`, `em`, `a`, …) of a node being cut make one
//! section together.
//!
//! A section's noise confidence is the mean of its leaves' (texts and images), weighted by
//! size: a leaf's is its content feature's at the template node it instantiates
//! ([`TreeRegex::noise_confidence`]), for a text inside a link the larger of its text's and its
//! link's; a leaf that instantiates no template node has none. The importance is one minus it.

use crate::dom::subtree::Subtree;
use crate::dom::{Dom, NodeKind};
use crate::site::rtdm::{Labelled, NONE};
use crate::site::tree_regex::{Matched, RegexPage, TreeRegex};

/// Importance below which a section is noise (the seed's 25%).
pub const DEFAULT_NOISE_THRESHOLD: f32 = 0.25;

/// Cond1's share of the page's size (the seed's 15% of its area).
pub const AREA_SHARE: f32 = 0.15;

/// What an image weighs against a visible character, as the classifier's size proxy counts it
/// (`page_models::features::MEDIA_WEIGHT`).
pub const IMAGE_WEIGHT: f32 = 100.0;

/// One section of a page.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// The DOM nodes whose subtrees make it, siblings in document order.
    pub roots: Vec<u32>,
    /// 1 − its size-weighted noise confidence, in [0, 1].
    pub importance: f32,
    /// Its size proxy.
    pub size: f32,
    /// Whether it is a list's items (an uppermost `*`).
    pub list: bool,
}

impl Section {
    pub fn is_noise(&self, threshold: f32) -> bool {
        self.importance < threshold
    }
}

/// The sections of a page, in document order. `page` is [`crate::site::tree_regex::page_tree`]'s
/// for `dom`, `matched` the template's match of it.
pub fn sections(
    dom: &Dom,
    sums: &[Subtree],
    page: &RegexPage,
    matched: &Matched,
    regex: &TreeRegex,
) -> Vec<Section> {
    let n = dom.len().min(sums.len());
    if n == 0 {
        return Vec::new();
    }
    // The page-tree node of every DOM node that has one.
    let mut at = vec![NONE; n];
    for (p, &d) in page.dom.iter().enumerate() {
        if let Some(slot) = at.get_mut(d as usize) {
            *slot = p as u32;
        }
    }
    let tree = &page.tree;
    let confidence = |d: usize| -> f64 {
        let p = at[d];
        if p == NONE || p as usize >= matched.image.len() {
            return 0.0;
        }
        regex.noise_confidence(matched.image[p as usize], tree.key(p))
    };
    let size = |i: usize| sums[i].text_chars as f32 + IMAGE_WEIGHT * sums[i].images as f32;

    // Forward pass: each node's enclosing link, and whether it is inside a list's item.
    let mut link = vec![NONE; n];
    let mut inside_item = vec![false; n];
    let is_item = |d: usize| {
        let p = at[d];
        p != NONE && matched.star.get(p as usize).is_some_and(|&s| s != NONE)
    };
    // Prefix sums of leaf weight and weighted confidence in DOM order.
    let mut weight = vec![0f64; n + 1];
    let mut noise = vec![0f64; n + 1];
    for i in 0..n {
        if let Some(parent) = dom.parent(i) {
            link[i] = link[parent];
            inside_item[i] = inside_item[parent] || is_item(parent);
        }
        if dom.tag(i).is_some_and(|t| &**t == "a") {
            link[i] = i as u32;
        }
        let (w, c) = match dom.node(i).kind {
            NodeKind::Text { .. } if sums[i].text_chars > 0 => {
                let own = confidence(i);
                let linked = match link[i] {
                    NONE => 0.0,
                    a => confidence(a as usize),
                };
                (f64::from(sums[i].text_chars), own.max(linked))
            }
            NodeKind::Element(_) if dom.tag(i).is_some_and(|t| &**t == "img") => {
                (f64::from(IMAGE_WEIGHT), confidence(i))
            }
            _ => (0.0, 0.0),
        };
        weight[i + 1] = weight[i] + w;
        noise[i + 1] = noise[i] + w * c;
    }
    // Uppermost items, and the nodes above one.
    let top_item: Vec<bool> = (0..n).map(|i| is_item(i) && !inside_item[i]).collect();
    let mut item_below = vec![false; n];
    for i in (1..n).rev() {
        if let Some(parent) = dom.parent(i) {
            if item_below[i] || top_item[i] {
                item_below[parent] = true;
            }
        }
    }

    let page_size = size(0).max(1.0);
    let cond1 = |i: usize| size(i) / page_size > AREA_SHARE;
    let mut out: Vec<Section> = Vec::new();
    let mut emit = |roots: Vec<u32>, list: bool| {
        let (mut w, mut c, mut s) = (0f64, 0f64, 0f32);
        for &r in &roots {
            let (a, b) = (r as usize, (dom.node(r as usize).end as usize).min(n));
            w += weight[b] - weight[a];
            c += noise[b] - noise[a];
            s += size(r as usize);
        }
        let importance = if w > 0.0 { 1.0 - c / w } else { 1.0 };
        out.push(Section {
            roots,
            importance: importance.clamp(0.0, 1.0) as f32,
            size: s,
            list,
        });
    };
    let mut stack = vec![0usize];
    while let Some(node) = stack.pop() {
        let kids: Vec<usize> = dom
            .children(node)
            .filter(|&k| size(k) > 0.0 || separates(dom, k))
            .collect();
        let is_root = node == 0 || matches!(tag_of(dom, node), "html" | "body");
        let cut = item_below[node]
            || is_root
            || (cond1(node) && kids.iter().any(|&k| sectioning(dom, k) && cond1(k)));
        let separated = kids.iter().any(|&k| separates(dom, k));
        if !cut && !separated {
            emit(vec![node as u32], false);
            continue;
        }
        if !cut {
            // Cond3: the runs between separators.
            for run in kids.split(|&k| separates(dom, k)) {
                if !run.is_empty() {
                    emit(run.iter().map(|&k| k as u32).collect(), false);
                }
            }
            continue;
        }
        let mut j = 0;
        while j < kids.len() {
            let k = kids[j];
            if separates(dom, k) {
                j += 1;
            } else if top_item[k] {
                // A list's items: the run of this star's items.
                let star = matched.star[at[k] as usize];
                let mut run = vec![k as u32];
                j += 1;
                while j < kids.len()
                    && top_item[kids[j]]
                    && matched.star[at[kids[j]] as usize] == star
                {
                    run.push(kids[j] as u32);
                    j += 1;
                }
                emit(run, true);
            } else if inline(dom, k) && !item_below[k] {
                let mut run = vec![k as u32];
                j += 1;
                while j < kids.len()
                    && inline(dom, kids[j])
                    && !item_below[kids[j]]
                    && !top_item[kids[j]]
                {
                    run.push(kids[j] as u32);
                    j += 1;
                }
                emit(run, false);
            } else {
                stack.push(k);
                j += 1;
            }
        }
    }
    out.sort_by_key(|s| s.roots.first().copied().unwrap_or(0));
    out
}

/// The roots of a page's noise: the largest subtrees below `<body>` whose visible size lies
/// wholly in noise sections (importance below `threshold`), so that a menu whose entries are
/// the items of a list, or a footer cut into a paragraph and a run of links, is one block as
/// the other methods name it.
pub fn noise_roots(dom: &Dom, sums: &[Subtree], sections: &[Section], threshold: f32) -> Vec<u32> {
    let n = dom.len().min(sums.len());
    let size =
        |i: usize| sums[i].text_chars as f64 + f64::from(IMAGE_WEIGHT) * sums[i].images as f64;
    let mut noise = vec![false; n];
    for section in sections.iter().filter(|s| s.is_noise(threshold)) {
        for &root in &section.roots {
            if let Some(slot) = noise.get_mut(root as usize) {
                *slot = true;
            }
        }
    }
    // Bottom up: the size of each subtree that lies in noise.
    let mut covered = vec![0f64; n];
    for i in (0..n).rev() {
        if noise[i] {
            covered[i] = size(i);
        }
        if let Some(parent) = dom.parent(i) {
            if parent < n && !noise[parent] {
                covered[parent] += covered[i];
            }
        }
    }
    // Top down: the largest wholly covered subtrees, none above `<body>`'s children.
    let mut roots = Vec::new();
    let mut i = 0;
    while i < n {
        let whole = size(i) > 0.0 && covered[i] >= size(i);
        let above_body = matches!(dom.node(i).kind, NodeKind::Document)
            || matches!(tag_of(dom, i), "html" | "body");
        if whole && !above_body {
            roots.push(i as u32);
            i = (dom.node(i).end as usize).max(i + 1);
        } else {
            i += 1;
        }
    }
    roots
}

fn tag_of(dom: &Dom, i: usize) -> &str {
    dom.tag(i).map_or("", |t| &**t)
}

/// Cond2's sectioning tags.
fn sectioning(dom: &Dom, i: usize) -> bool {
    matches!(
        tag_of(dom, i),
        "div"
            | "table"
            | "tbody"
            | "tr"
            | "td"
            | "th"
            | "section"
            | "article"
            | "aside"
            | "nav"
            | "header"
            | "footer"
            | "main"
            | "form"
            | "center"
            | "body"
    )
}

/// Cond3's separators.
fn separates(dom: &Dom, i: usize) -> bool {
    matches!(tag_of(dom, i), "hr" | "frameset")
}

/// Texts and the elements that format text within a line.
fn inline(dom: &Dom, i: usize) -> bool {
    match dom.node(i).kind {
        NodeKind::Text { .. } => true,
        NodeKind::Element(_) => matches!(
            tag_of(dom, i),
            "a" | "b"
                | "strong"
                | "em"
                | "i"
                | "u"
                | "span"
                | "font"
                | "small"
                | "big"
                | "sub"
                | "sup"
                | "br"
                | "img"
                | "label"
                | "abbr"
                | "code"
                | "mark"
                | "time"
                | "cite"
                | "q"
                | "s"
                | "tt"
        ),
        NodeKind::Document => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::tree_regex::tests::page;
    use crate::site::tree_regex::{learn, Bounds};

    fn news(i: usize, related: usize) -> String {
        let related: String = (0..related)
            .map(|r| {
                format!(
                    "<li><a href=/r{}>Related story {}</a></li>",
                    (i + r) % 9,
                    (i + r) % 9
                )
            })
            .collect();
        format!(
            "<html><body><div id=top><a href=/>Home</a><a href=/world>World</a><a href=/sport>\
             Sport</a></div><div id=main><h1>Headline {i}</h1><p>First paragraph of story {i}, \
             which says what happened in some detail.</p><p>Second paragraph {i}, with more \
             about it than the first.</p></div><ul class=related>{related}</ul><hr><div \
             id=foot>© Example News, all rights reserved</div></body></html>"
        )
    }

    #[test]
    fn the_menu_and_footer_are_noise_and_the_story_is_not() {
        let pages: Vec<String> = (0..6).map(|i| news(i, 2 + i % 3)).collect();
        let parsed: Vec<_> = pages.iter().map(|h| page(h)).collect();
        let trees: Vec<_> = parsed.iter().map(|(_, _, p)| &p.tree).collect();
        let regex = learn(&trees, Bounds::default()).expect("pages");
        let (dom, sums, p) = page(&news(7, 3));
        let matched = regex.matched(&p.tree);
        let found = sections(&dom, &sums, &p, &matched, &regex);
        let text_of = |s: &Section| -> String {
            s.roots
                .iter()
                .map(|&r| crate::dom::text::sample(&dom, r as usize, 10_000))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let noise: Vec<String> = found
            .iter()
            .filter(|s| s.is_noise(DEFAULT_NOISE_THRESHOLD))
            .map(text_of)
            .collect();
        let kept: Vec<String> = found
            .iter()
            .filter(|s| !s.is_noise(DEFAULT_NOISE_THRESHOLD))
            .map(text_of)
            .collect();
        assert!(noise.iter().any(|t| t.contains("Home")), "{noise:?}");
        assert!(
            noise.iter().any(|t| t.contains("rights reserved")),
            "{noise:?}"
        );
        assert!(
            kept.iter().any(|t| t.contains("story 7")),
            "{kept:?} / {noise:?}"
        );
        // The menu's three links are one section (a list), whatever their texts.
        let menu = found
            .iter()
            .find(|s| text_of(s).contains("Home"))
            .expect("menu");
        assert!(menu.list && menu.roots.len() == 3, "{menu:?}");
        // Every visible character is in exactly one section.
        let total: f32 = found.iter().map(|s| s.size).sum();
        assert_eq!(total, sums[0].text_chars as f32);
    }

    #[test]
    fn a_deep_page_is_cut_without_recursion() {
        let depth = 20_000;
        let html = format!(
            "<html><body>{}x{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let (dom, sums, p) = page(&html);
        let regex = learn(&[&p.tree, &p.tree], Bounds::default()).expect("pages");
        let matched = regex.matched(&p.tree);
        let found = sections(&dom, &sums, &p, &matched, &regex);
        let total: f32 = found.iter().map(|s| s.size).sum();
        assert_eq!(total, 1.0);
    }
}
