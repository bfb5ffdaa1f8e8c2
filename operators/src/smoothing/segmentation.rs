//! A page's segmentation into template and content sections, and its cleaned text (seed 000,
//! §4 and §5.3).
//!
//! The classifier scores every element on its own, so its scores are noisy: a menu item that looks
//! like prose, a paragraph with three links. [`segment`] turns them into a consistent segmentation
//! with [`crate::smoothing::isotonic::smooth`], set up as the paper's §5.3 says:
//!
//! - **Hidden nodes.** Elements whose size proxy ([`crate::page_models::features`]' `area`: visible
//!   characters plus weighted media) is below [`Params::hidden_area`] are neither smoothed nor
//!   sections: each is folded into its nearest smoothed ancestor, which then weighs as
//!   itself plus the k hidden elements folded into it (weight k + 1). The default, 50, is the
//!   classifier's smallest size bucket, our stand-in for the paper's 2,000 px². Elements the
//!   reader cannot see (inside `head`, `script`, `style`, `hidden`…) add no weight: a renderer,
//!   which the paper measured with, gives them no box.
//! - **Penalties.** γ(i) = c · A / A(i) by default ([`Penalty::Area`], c = 0.01 as the paper
//!   settled on): starting a section is cheap for big nodes and dear for small ones, so small
//!   nodes do not become sections of their own and sections are easier to start near the
//!   root. The paper's other forms are there to measure against.
//! - **The root** of the smoothing tree is the root element (`<html>`); it is always smoothed
//!   and always a section.
//!
//! Every DOM node then takes the smoothed score of its nearest smoothed ancestor (itself if
//! smoothed), so text nodes and hidden elements follow their section. The smoothed scores
//! never decrease from a parent to its children, so dropping every node scored ≥ τ
//! ([`cleaned_text`]) drops whole subtrees and never keeps a node inside a dropped one.

use std::str::FromStr;

use crate::dom::{markdown, text, Dom};
use crate::smoothing::isotonic::{self, Options, NO_PARENT};

/// How γ(i) depends on the node (seed 000, §5.3, penalty functions (1)–(3)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Penalty {
    /// c · A / A(i): the page's area over the node's (the paper's final choice).
    Area,
    /// c · N / N(i): the page's element count over the node's subtree's.
    Nodes,
    /// c · A(parent) / A(i): hard to split a child that fills most of its parent.
    ParentArea,
    /// c for every node.
    Constant,
}

impl Penalty {
    pub const ALL: [Penalty; 4] = [
        Penalty::Area,
        Penalty::Nodes,
        Penalty::ParentArea,
        Penalty::Constant,
    ];

    /// The name `--penalty` takes.
    pub fn name(self) -> &'static str {
        match self {
            Penalty::Area => "area",
            Penalty::Nodes => "nodes",
            Penalty::ParentArea => "parent-area",
            Penalty::Constant => "constant",
        }
    }
}

impl std::fmt::Display for Penalty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Penalty {
    type Err = String;
    fn from_str(s: &str) -> Result<Penalty, String> {
        Penalty::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Penalty::ALL.iter().map(|p| p.name()).collect();
                format!("unknown penalty {s:?} (one of {})", names.join(", "))
            })
    }
}

/// How a page is smoothed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The constant c in γ(i).
    pub c: f32,
    pub penalty: Penalty,
    /// Elements with a size proxy below this are hidden (folded into their parent).
    pub hidden_area: f32,
    /// See [`isotonic::Options::max_levels`].
    pub max_levels: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            c: 0.01,
            penalty: Penalty::Area,
            hidden_area: 50.0,
            max_levels: Options::default().max_levels,
        }
    }
}

/// Default τ: a node smoothed to at least this is template.
pub const DEFAULT_THRESHOLD: f32 = 0.5;

/// A page's segmentation.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Segmentation {
    /// The smoothed score of every DOM node: its own if smoothed, else its nearest smoothed
    /// ancestor's (nodes outside the root element take the root's).
    pub smoothed: Vec<f32>,
    /// Whether a DOM node is a node of the smoothing problem (the root element and every
    /// element not hidden).
    pub smoothed_node: Vec<bool>,
    /// The sections: DOM nodes where the smoothed score is defined (ŷ ≠ ⊥), in document
    /// order. The first is the root element.
    pub sections: Vec<u32>,
    /// c(y) of the smoothing.
    pub cost: f64,
    /// Candidate levels (K) and whether the scores were quantized to get there.
    pub levels: usize,
    pub quantized: bool,
}

impl Segmentation {
    /// Nodes smoothed (the size of the smoothing problem).
    pub fn smoothed_nodes(&self) -> usize {
        self.smoothed_node.iter().filter(|&&v| v).count()
    }

    /// Whether DOM node `i` starts a section.
    pub fn is_section(&self, i: usize) -> bool {
        self.sections.binary_search(&(i as u32)).is_ok()
    }
}

/// Smooths a page's classifier scores and segments it.
///
/// `scores[i]` is the classifier's score of node `i` (`None` for non-elements; a score that
/// is not finite counts as 0.5, no opinion); `area[i]` is the size proxy of
/// [`crate::page_models::features::PageFeatures::area`].
pub fn segment(dom: &Dom, scores: &[Option<f32>], area: &[f32], params: &Params) -> Segmentation {
    let n = dom.len();
    let Some(root) = (0..n).find(|&i| dom.element(i).is_some()) else {
        return Segmentation {
            smoothed: vec![0.0; n],
            smoothed_node: vec![false; n],
            ..Segmentation::default()
        };
    };
    let root_end = dom.node(root).end as usize;

    // One pass in document order decides which elements are smoothed, numbers them (parents
    // before children, as the solver requires), links each to its smoothed parent, and folds
    // every hidden element into its nearest smoothed ancestor (`owner`).
    let mut smoothed_node = vec![false; n];
    let mut owner = vec![root as u32; n];
    let mut unseen = vec![false; n];
    let mut compact = vec![NO_PARENT; n];
    let mut nodes: Vec<usize> = Vec::new();
    let mut parent: Vec<u32> = Vec::new();
    let mut weight: Vec<f32> = Vec::new();
    let mut subtree_elements: Vec<u32> = Vec::new();
    for i in root..root_end {
        let dom_parent = dom.parent(i).filter(|&p| p >= root);
        let element = dom.element(i);
        unseen[i] =
            element.is_some_and(|e| e.hides_content) || dom_parent.is_some_and(|p| unseen[p]);
        let smoothed = i == root
            || (element.is_some()
                && dom_parent.is_some_and(|p| smoothed_node[p])
                && area[i] >= params.hidden_area);
        smoothed_node[i] = smoothed;
        if smoothed {
            owner[i] = i as u32;
            compact[i] = nodes.len() as u32;
            nodes.push(i);
            parent.push(dom_parent.map_or(NO_PARENT, |p| compact[owner[p] as usize]));
            weight.push(1.0);
            subtree_elements.push(0);
        } else {
            owner[i] = dom_parent.map_or(root as u32, |p| owner[p]);
        }
        if element.is_some() && !unseen[i] {
            let o = compact[owner[i] as usize] as usize;
            if !smoothed {
                weight[o] += 1.0;
            }
            subtree_elements[o] += 1;
        }
    }
    let m = nodes.len();
    for k in (1..m).rev() {
        subtree_elements[parent[k] as usize] += subtree_elements[k];
    }
    let x: Vec<f32> = nodes
        .iter()
        .map(|&i| match scores.get(i).copied().flatten() {
            Some(s) if s.is_finite() => s.clamp(0.0, 1.0),
            _ => 0.5,
        })
        .collect();
    let penalty = penalties(&nodes, &parent, area, &subtree_elements, params);

    let options = Options {
        max_levels: params.max_levels,
    };
    let solved = match isotonic::smooth(&parent, &x, &weight, &penalty, options) {
        Ok(solved) => solved,
        // Unreachable by construction (document order, finite values); a page must still get
        // an answer, so fall back to the unsmoothed scores as one section per element.
        Err(_) => isotonic::Smoothed {
            section: vec![true; m],
            cost: f64::NAN,
            levels: m,
            quantized: false,
            peak_cost_vectors: 0,
            back_pointer_runs: 0,
            y: x.clone(),
        },
    };

    let root_score = solved.y.first().copied().unwrap_or(0.0);
    let mut smoothed = vec![root_score; n];
    for i in root..root_end {
        smoothed[i] = solved.y[compact[owner[i] as usize] as usize];
    }
    let sections = nodes
        .iter()
        .zip(&solved.section)
        .filter(|(_, &s)| s)
        .map(|(&i, _)| i as u32)
        .collect();
    Segmentation {
        smoothed,
        smoothed_node,
        sections,
        cost: solved.cost,
        levels: solved.levels,
        quantized: solved.quantized,
    }
}

/// γ(i) for each smoothed node (`nodes` in document order, `parent` in compact numbering).
fn penalties(
    nodes: &[usize],
    parent: &[u32],
    area: &[f32],
    subtree_elements: &[u32],
    params: &Params,
) -> Vec<f32> {
    let c = f64::from(params.c.max(0.0));
    let page_area = nodes.first().map_or(0.0, |&r| f64::from(area[r]));
    let page_elements = subtree_elements.first().map_or(0.0, |&e| f64::from(e));
    // Smoothed nodes other than the root have an area ≥ hidden_area; a ratio with a zero or
    // missing denominator (an empty root, hidden_area set to 0) counts as 1.
    let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 1.0 };
    (0..nodes.len())
        .map(|k| {
            let own_area = f64::from(area[nodes[k]]);
            let factor = match params.penalty {
                Penalty::Area => ratio(page_area, own_area),
                Penalty::Nodes => ratio(page_elements, f64::from(subtree_elements[k])),
                Penalty::ParentArea => match parent[k] {
                    NO_PARENT => 1.0,
                    p => ratio(f64::from(area[nodes[p as usize]]), own_area),
                },
                Penalty::Constant => 1.0,
            };
            let gamma = (c * factor) as f32;
            if gamma.is_finite() {
                gamma
            } else {
                f32::MAX
            }
        })
        .collect()
}

/// The paper's Basic, for comparison with smoothing: every node keeps its own classifier score,
/// and a node without one (text, or an element the classifier does not score) takes its
/// nearest scored ancestor's (0 where there is none). Fed to [`cleaned_text`], an element
/// scored ≥ τ goes with its subtree.
pub fn unsmoothed(dom: &Dom, scores: &[Option<f32>]) -> Vec<f32> {
    let mut values = vec![0.0f32; dom.len()];
    for i in 0..dom.len().min(scores.len()) {
        values[i] = match scores[i] {
            Some(score) => score,
            None => dom.parent(i).map_or(0.0, |p| values[p]),
        };
    }
    values
}

/// The calls cleaning makes: each node's smoothed score, except inside a hidden element (one
/// too small to be a node of the smoothing problem) whose own classifier score is at least
/// `confident`: that element and its subtree take the higher of the two.
///
/// Why: smoothing folds a hidden element into its section, so a share bar, an "Advertisement"
/// label or a "Print this page" link inside an article is judged by the article's score,
/// whatever its own. The paper hides such elements because a reader cannot see them (its
/// threshold is an area in pixels); ours is a size proxy, and these small blocks are visible
/// boilerplate. Only a confident score overrides the section, so the smoothing's protection
/// of small content (a byline, a price) against one noisy score stays for everything else.
/// One pass in document order with a stack of the raised ancestors: linear at any depth.
pub fn with_confident_hidden(
    dom: &Dom,
    segmentation: &Segmentation,
    scores: &[Option<f32>],
    confident: f32,
) -> Vec<f32> {
    let mut calls = segmentation.smoothed.clone();
    // (end of the raised subtree, its value); values increase towards the top.
    let mut raised: Vec<(usize, f32)> = Vec::new();
    for (i, call) in calls.iter_mut().enumerate() {
        while raised.last().is_some_and(|&(end, _)| end <= i) {
            raised.pop();
        }
        let inherited = raised.last().map(|&(_, value)| value);
        let own = match (segmentation.smoothed_node.get(i), scores.get(i)) {
            (Some(false), Some(&Some(score))) if score >= confident => Some(score),
            _ => None,
        };
        let value = match (inherited, own) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let Some(value) = value else { continue };
        *call = call.max(value);
        if inherited.is_none_or(|a| value > a) {
            raised.push((dom.subtree(i).end, value));
        }
    }
    calls
}

/// The visible text of the nodes smoothed below `threshold` (τ), as a reader sees it
/// ([`text::readable`]): an element smoothed at or above it goes with its subtree.
pub fn cleaned_text(dom: &Dom, smoothed: &[f32], threshold: f32) -> String {
    text::readable(dom, 0..dom.len(), |i| smoothed[i] >= threshold, usize::MAX)
}

/// [`cleaned_text`] as Markdown ([`crate::dom::markdown`]): the same words, every image left
/// in the cleaned part kept (with `options.images`).
pub fn cleaned_markdown(
    dom: &Dom,
    smoothed: &[f32],
    threshold: f32,
    options: markdown::Options,
) -> String {
    let dropped = |i: usize| smoothed[i] >= threshold;
    markdown::markdown(dom, 0..dom.len(), dropped, |_| true, options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;

    fn page(html: &str) -> Dom {
        dom::parse(html, 4096)
    }

    fn element(dom: &Dom, tag: &str, nth: usize) -> usize {
        (0..dom.len())
            .filter(|&i| dom.tag(i).is_some_and(|t| &**t == tag))
            .nth(nth)
            .expect("element present")
    }

    /// `score(i)` for every element i, `None` for the other nodes (what the classifier gives).
    fn element_scores(dom: &Dom, score: impl Fn(usize) -> f32) -> Vec<Option<f32>> {
        (0..dom.len())
            .map(|i| dom.element(i).map(|_| score(i)))
            .collect()
    }

    /// Area = visible characters below each node (the size proxy without media).
    fn char_area(dom: &Dom) -> Vec<f32> {
        let mut area = vec![0.0f32; dom.len()];
        for i in (0..dom.len()).rev() {
            if let Some(t) = dom.visible_text(i) {
                area[i] += t.chars().count() as f32;
            }
            if let Some(p) = dom.parent(i) {
                area[p] += area[i];
            }
        }
        area
    }

    const ARTICLE: &str = "<html><body>\
        <nav><a href=/>Home page of the newspaper</a> <a href=/w>World news and analysis from everywhere</a></nav>\
        <article><p>The first paragraph of the story tells what happened in some detail.</p>\
        <p>The second paragraph of the story goes on with quotes from the people there.</p>\
        </article><footer><p>Copyright notice and the address of the publishing company</p>\
        </footer></body></html>";

    #[test]
    fn noisy_scores_become_template_and_content_sections() {
        let dom = page(ARTICLE);
        let area = char_area(&dom);
        let (nav, article, footer) = (
            element(&dom, "nav", 0),
            element(&dom, "article", 0),
            element(&dom, "footer", 0),
        );
        // The classifier is unsure about the second paragraph (0.55) and about one menu
        // link (0.4): smoothing should side with their sections.
        let mut scores: Vec<Option<f32>> = element_scores(&dom, |_| 0.3);
        let set_elements = |scores: &mut Vec<Option<f32>>, root: usize, value: f32| {
            let end = dom.node(root).end as usize;
            for (i, score) in scores.iter_mut().enumerate().take(end).skip(root) {
                if dom.element(i).is_some() {
                    *score = Some(value);
                }
            }
        };
        set_elements(&mut scores, nav, 0.9);
        scores[element(&dom, "a", 1)] = Some(0.4);
        set_elements(&mut scores, footer, 0.8);
        scores[article] = Some(0.2);
        scores[element(&dom, "p", 0)] = Some(0.1);
        scores[element(&dom, "p", 1)] = Some(0.55);
        // The page is tiny, so A / A(i) is small: a larger c than the default stands in for
        // the penalties a real page's paragraph gets.
        let params = Params {
            c: 0.2,
            ..Params::default()
        };
        let seg = segment(&dom, &scores, &area, &params);
        assert!(seg.smoothed[nav] >= 0.5 && seg.smoothed[footer] >= 0.5);
        assert!(seg.smoothed[element(&dom, "a", 1)] >= 0.5);
        assert!(seg.smoothed[element(&dom, "p", 1)] < 0.5);
        assert!(seg.is_section(nav) && seg.is_section(footer));
        assert!(!seg.is_section(element(&dom, "p", 1)));
        assert_eq!(seg.sections[0] as usize, element(&dom, "html", 0));
        let text = cleaned_text(&dom, &seg.smoothed, DEFAULT_THRESHOLD);
        assert_eq!(
            text,
            "The first paragraph of the story tells what happened in some detail.\n\
             The second paragraph of the story goes on with quotes from the people there."
        );
    }

    #[test]
    fn small_elements_are_hidden_and_weigh_on_their_parent() {
        // A list of ten short links, each below the hidden area: hidden, they are neither
        // scored nor smoothed, and the list weighs as 21 nodes (itself, ten li, ten a) at its
        // own score.
        let items: String = (0..10)
            .map(|k| format!("<li><a href=/{k}>s{k}</a></li>"))
            .collect();
        let dom = page(&format!(
            "<html><body><ul>{items}</ul><p>{}</p></body></html>",
            "word ".repeat(40)
        ));
        let area = char_area(&dom);
        let (ul, link) = (element(&dom, "ul", 0), element(&dom, "a", 3));
        let mut scores: Vec<Option<f32>> = element_scores(&dom, |_| 0.9);
        scores[ul] = Some(0.2);
        scores[link] = Some(0.0);
        let params = |c| Params {
            c,
            hidden_area: 5.0,
            ..Params::default()
        };
        let seg = segment(&dom, &scores, &area, &params(0.01));
        assert!(
            seg.smoothed_node[ul]
                && !seg.smoothed_node[link]
                && !seg.smoothed_node[element(&dom, "li", 0)]
        );
        assert_eq!(seg.smoothed_nodes(), 4, "html, body, ul, p");
        assert_eq!(seg.smoothed[link], seg.smoothed[ul]);
        assert_eq!(seg.smoothed[ul], 0.2);
        assert!(!seg.sections.contains(&(link as u32)));
        // Forced into one section, the page takes the weighted median: the list's 0.2 (weight
        // 21) against html, body and p at 0.9 (weight 1 each).
        let seg = segment(&dom, &scores, &area, &params(1000.0));
        assert_eq!(seg.sections.len(), 1);
        assert_eq!(seg.smoothed[element(&dom, "p", 0)], 0.2);
        assert_eq!(cleaned_text(&dom, &seg.smoothed, 0.5).lines().count(), 11);
    }

    #[test]
    fn a_confident_hidden_element_leaves_the_cleaned_text_with_its_subtree() {
        let dom = page(&format!(
            "<html><body><article><p>{}</p><div><small>Advertisement</small></div><p>{}</p>\
             <span>by Ann</span></article></body></html>",
            "word ".repeat(40),
            "more ".repeat(40)
        ));
        let area = char_area(&dom);
        let (ad, small, byline) = (
            element(&dom, "div", 0),
            element(&dom, "small", 0),
            element(&dom, "span", 0),
        );
        let mut scores: Vec<Option<f32>> = element_scores(&dom, |_| 0.1);
        scores[ad] = Some(0.95);
        scores[byline] = Some(0.6);
        let params = Params {
            hidden_area: 20.0,
            ..Params::default()
        };
        let seg = segment(&dom, &scores, &area, &params);
        assert!(!seg.smoothed_node[ad] && !seg.smoothed_node[byline]);
        assert!(
            seg.smoothed[ad] < 0.5,
            "smoothing folds the ad into the article"
        );
        assert!(cleaned_text(&dom, &seg.smoothed, 0.5).contains("Advertisement"));
        let calls = with_confident_hidden(&dom, &seg, &scores, 0.8);
        assert_eq!(
            (calls[ad], calls[small]),
            (0.95, 0.95),
            "the subtree goes along"
        );
        assert_eq!(calls[byline], seg.smoothed[byline], "0.6 is not confident");
        let text = cleaned_text(&dom, &calls, 0.5);
        assert!(
            !text.contains("Advertisement") && text.contains("by Ann"),
            "{text}"
        );
        // Nothing else moves.
        let outside = |(i, _): &(usize, _)| !dom.subtree(ad).contains(i);
        for (i, (call, smoothed)) in calls.iter().zip(&seg.smoothed).enumerate().filter(outside) {
            assert_eq!(call, smoothed, "node {i}");
        }
    }

    #[test]
    fn confident_hidden_elements_nested_deep_each_take_the_highest_score_above_them() {
        let depth = 20_000;
        let html = format!(
            "<html><body>{}x{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let dom = dom::parse(&html, 50_000);
        let area = char_area(&dom);
        // Scores rise and fall with depth, so a node's call is the highest confident score on
        // its path, not its own.
        let score_at = |i: usize| 0.85 + 0.1 * ((i % 1000) as f32 / 1000.0);
        let scores: Vec<Option<f32>> = element_scores(&dom, score_at);
        let seg = segment(&dom, &scores, &area, &Params::default());
        let calls = with_confident_hidden(&dom, &seg, &scores, 0.9);
        let mut highest = f32::MIN;
        for i in 0..dom.len() {
            if !seg.smoothed_node[i] {
                if let Some(score) = scores[i].filter(|&s| s >= 0.9) {
                    highest = highest.max(score);
                }
            }
            if highest > f32::MIN {
                assert_eq!(calls[i], seg.smoothed[i].max(highest), "node {i}");
            }
        }
        assert!(highest > 0.94, "the chain is deep and hidden: {highest}");
    }

    #[test]
    fn invisible_elements_add_no_weight() {
        // html (0.9) holds body (0.1, with a hidden paragraph: weight 2). Thirty scripts in
        // head would outweigh body if they counted; they are not rendered, so they do not.
        let scripts = "<script>var a;</script>".repeat(30);
        let dom = page(&format!(
            "<html><head>{scripts}</head><body><p>short</p>{}</body></html>",
            "visible words ".repeat(10)
        ));
        let area = char_area(&dom);
        let mut scores: Vec<Option<f32>> = element_scores(&dom, |_| 0.9);
        scores[element(&dom, "body", 0)] = Some(0.1);
        let seg = segment(&dom, &scores, &area, &Params::default());
        assert_eq!(seg.smoothed_nodes(), 2, "html and body");
        assert_eq!(seg.smoothed[element(&dom, "html", 0)], 0.1);
    }

    #[test]
    fn penalty_forms_follow_the_paper() {
        let dom = page(ARTICLE);
        let area = char_area(&dom);
        let scores: Vec<Option<f32>> = element_scores(&dom, |_| 0.5);
        for penalty in Penalty::ALL {
            let name = penalty.name();
            assert_eq!(name.parse::<Penalty>(), Ok(penalty));
            assert_eq!(penalty.to_string(), name);
            let seg = segment(
                &dom,
                &scores,
                &area,
                &Params {
                    penalty,
                    ..Params::default()
                },
            );
            assert_eq!(
                seg.sections.len(),
                1,
                "{name}: equal scores make one section"
            );
        }
        assert!("pixels".parse::<Penalty>().is_err());
        // Direct check of γ = c · A / A(i) on the smoothed nodes.
        let nodes = [0usize, 1, 2];
        let parent = [NO_PARENT, 0, 0];
        let area = [1000.0, 500.0, 100.0];
        let elements = [30, 10, 5];
        let p = |penalty| {
            penalties(
                &nodes,
                &parent,
                &area,
                &elements,
                &Params {
                    c: 0.01,
                    penalty,
                    ..Params::default()
                },
            )
        };
        let close =
            |got: Vec<f32>, want: [f32; 3]| got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-6);
        assert!(close(p(Penalty::Area), [0.01, 0.02, 0.1]));
        assert!(close(p(Penalty::Nodes), [0.01, 0.03, 0.06]));
        assert!(close(p(Penalty::ParentArea), [0.01, 0.02, 0.1]));
        assert!(close(p(Penalty::Constant), [0.01; 3]));
    }

    #[test]
    fn cleaned_text_keeps_blocks_as_lines_and_inline_text_together() {
        let dom = page(
            "<html><body><h1>Head<b>line</b></h1><div>one <span>two</span>\n three<br>four\
             <div class=ad>buy</div>five</div><ul><li>a</li><li>b</li></ul></body></html>",
        );
        let ad = element(&dom, "div", 1);
        let mut smoothed = vec![0.1f32; dom.len()];
        for s in &mut smoothed[ad..dom.node(ad).end as usize] {
            *s = 0.9;
        }
        assert_eq!(
            cleaned_text(&dom, &smoothed, 0.5),
            "Headline\none two three\nfour\nfive\na\nb"
        );
        assert_eq!(cleaned_text(&dom, &vec![0.9; dom.len()], 0.5), "");
        assert_eq!(
            cleaned_text(&dom, &vec![0.9; dom.len()], 1.0),
            "Headline\none two three\nfour\nbuy\nfive\na\nb"
        );
    }

    #[test]
    fn text_only_screen_readers_read_leaves_the_cleaned_text() {
        let dom = page(
            "<p>Now <span class=\"price a-offscreen\">$19.99</span><span aria-hidden=true>$19.99</span> \
             <a href=/x>Docs<span class=\"govuk-visually-hidden\"> (opens in a new window)</span></a> \
             <span class=clipped>Brand New</span><span class=\"sr-onlyish clippedtext\">kept</span></p>",
        );
        assert_eq!(
            cleaned_text(&dom, &vec![0.1; dom.len()], 0.5),
            "Now $19.99 Docs kept"
        );
        // Still visible text to the features the models were fitted on.
        let visible: String = (0..dom.len()).filter_map(|i| dom.visible_text(i)).collect();
        assert!(visible.contains("(opens in a new window)"));
    }

    #[test]
    fn side_by_side_elements_are_read_as_separate_words() {
        let text = |html: &str| {
            let dom = page(html);
            cleaned_text(&dom, &vec![0.1; dom.len()], 0.5)
        };
        // A spec table's name and value cells, a card's brand and model, numbered steps.
        assert_eq!(
            text("<p><span>Publisher</span><span>Houghton Mifflin</span></p>"),
            "Publisher Houghton Mifflin"
        );
        assert_eq!(text("<p><b>Brooks</b>Launch 10</p>"), "Brooks Launch 10");
        assert_eq!(text("<p><i>2</i><i>Master</i></p>"), "2 Master");
        assert_eq!(text("<p><b>Pack</b><b>12</b></p>"), "Pack 12");
        // What a browser glues stays glued: one element's text, a capital after a capital or
        // a mark, lower case after anything, and sub- and superscripts.
        assert_eq!(text("<p>Price<!-- -->Total</p>"), "PriceTotal");
        assert_eq!(text("<p><b>NASA</b>Goddard</p>"), "NASAGoddard");
        assert_eq!(
            text("<p><b>W</b>ord and <b>e.g.</b>Foo</p>"),
            "Word and e.g.Foo"
        );
        assert_eq!(text("<p><b>Head</b>line</p>"), "Headline");
        assert_eq!(
            text("<p>N<sub>2</sub>O and 21<sup>ST</sup></p>"),
            "N2O and 21ST"
        );
        assert_eq!(text("<p>Rust<sup><a>1</a></sup> is</p>"), "Rust1 is");
        // A line break in between needs no space.
        assert_eq!(text("<div><p>one</p>Two</div>"), "one\nTwo");
    }

    #[test]
    fn empty_and_degenerate_pages() {
        let dom = page("");
        let seg = segment(
            &dom,
            &vec![None; dom.len()],
            &vec![0.0; dom.len()],
            &Params::default(),
        );
        assert_eq!(seg.sections.len(), 1);
        assert_eq!(cleaned_text(&dom, &seg.smoothed, 0.5), "");
        // Scores that are not finite count as no opinion.
        let dom = page("<p>x</p>");
        let scores = vec![Some(f32::NAN); dom.len()];
        let seg = segment(&dom, &scores, &vec![0.0; dom.len()], &Params::default());
        assert!(seg.smoothed.iter().all(|&s| s == 0.5));
    }

    #[test]
    fn a_page_nested_to_the_depth_limit_smooths_and_cleans() {
        // 100,000 unclosed <div>s, each with enough text to be smoothed: the parser stops at
        // its depth limit, and every smoothed node is a link of one long chain.
        let html =
            "<div>a paragraph long enough to be smoothed as a node of its own ".repeat(100_000);
        let dom = page(&html);
        assert!(dom.depth_limited());
        let area = char_area(&dom);
        let scores: Vec<Option<f32>> = element_scores(&dom, |i| if i % 3 == 0 { 0.9 } else { 0.2 });
        let seg = segment(&dom, &scores, &area, &Params::default());
        assert!(seg.smoothed_nodes() > 1_000);
        let text = cleaned_text(&dom, &seg.smoothed, DEFAULT_THRESHOLD);
        assert!(text.len() > 1_000);
    }

    #[test]
    fn a_100_000_element_page_smooths() {
        // 20,000 blocks of 4 elements each plus nesting: wide and deep enough to matter.
        let mut html = String::from("<html><body>");
        for k in 0..20_000 {
            html.push_str(&format!(
                "<div><p>paragraph number {k} of the generated page, long enough to be seen</p><a href=/{k}>l</a></div>"
            ));
            if k % 100 == 0 {
                html.push_str("<section>");
            }
        }
        html.push_str("</body></html>");
        let dom = page(&html);
        assert!(dom.len() > 100_000);
        let area = char_area(&dom);
        let scores: Vec<Option<f32>> =
            element_scores(&dom, |i| ((i * 7919) % 1000) as f32 / 1000.0);
        let seg = segment(&dom, &scores, &area, &Params::default());
        assert!(seg.quantized && seg.levels <= 256);
        for i in 1..dom.len() {
            if let Some(p) = dom.parent(i) {
                assert!(seg.smoothed[p] <= seg.smoothed[i]);
            }
        }
    }

    #[test]
    fn unsmoothed_scores_pass_down_to_unscored_nodes() {
        let dom = crate::dom::parse("<body><div><p>a</p></div><p>b</p></body>", 512);
        let scores: Vec<Option<f32>> = (0..dom.len())
            .map(|i| match dom.tag(i).map(|t| &**t) {
                Some("div") => Some(0.9),
                Some("p") => Some(0.2),
                _ => None,
            })
            .collect();
        let values = unsmoothed(&dom, &scores);
        for (i, &value) in values.iter().enumerate() {
            match (dom.tag(i).map(|t| &**t), dom.text(i)) {
                (Some("div"), _) => assert_eq!(value, 0.9),
                (Some("p"), _) => assert_eq!(value, 0.2),
                (None, Some(_)) => assert_eq!(value, 0.2, "text takes its p's score"),
                _ => {}
            }
        }
        // The div goes with its subtree, whatever its paragraph's own score.
        assert_eq!(cleaned_text(&dom, &values, 0.5), "b");
    }
}
