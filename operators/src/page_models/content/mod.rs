//! The main-content model: the second question Stencil asks of every page.
//!
//! The template model (`crate::page_models::features`, `crate::page_models::model`, smoothed by
//! `crate::smoothing::segmentation`) answers the paper's question, *is this node part of the site's
//! template?*, and its answers feed `template_*_fraction`, `segments` and `site_templates`. Much of
//! what a reader does not want is no template at all: a "related stories" gallery, a byline, a
//! comment thread, a share row differ from page to page. This model answers *is this what the page
//! exists to deliver?*, one text block at a time ([`blocks`]), from features that see each block's
//! context ([`features`]), with trees fitted to human gold ([`align`] carries the gold over to
//! blocks; `stencil train-content` fits; [`forest`] evaluates). `cleaned_text` is built from its
//! calls.

pub mod align;
pub mod blocks;
pub mod facts;
pub mod features;
pub mod forest;

pub use blocks::{Blocks, NONE};
pub use features::Context;
pub use forest::ContentModel;

use crate::dom::subtree::Subtree;
use crate::dom::Dom;

/// The content model's calls on one page.
#[derive(Clone, Debug, Default)]
pub struct Judgement {
    pub blocks: Blocks,
    /// The probability that each block is main content.
    pub probability: Vec<f32>,
    /// The calls: probability at least the model's threshold.
    pub content: Vec<bool>,
}

impl Judgement {
    /// Visible characters of the blocks called content.
    pub fn main_content_chars(&self) -> u64 {
        self.sum_over_content(|s| s.chars)
    }

    /// Characters inside links in the blocks called content.
    pub fn main_content_anchor_chars(&self) -> u64 {
        self.sum_over_content(|s| s.anchor_chars)
    }

    fn sum_over_content(&self, measure: impl Fn(&blocks::BlockStats) -> u32) -> u64 {
        self.blocks
            .stats
            .iter()
            .zip(&self.content)
            .filter(|(_, &c)| c)
            .map(|(s, _)| u64::from(measure(s)))
            .sum()
    }

    /// The text of the blocks called content, one line per block.
    pub fn cleaned_text(&self, dom: &Dom) -> String {
        cleaned_text(dom, &self.blocks, &self.content)
    }
}

/// The text of the blocks of `blocks` called content, one line per block:
/// `segmentation::cleaned_text` with every text node of a block not called content marked 1 and
/// every other node 0, so every element stays open and the line breaks of the page's blocks
/// stay where they were.
pub fn cleaned_text(dom: &Dom, blocks: &Blocks, content: &[bool]) -> String {
    let marks: Vec<f32> = blocks
        .of_node
        .iter()
        .map(|&b| f32::from(u8::from(b != NONE && !content[b as usize])))
        .collect();
    crate::smoothing::segmentation::cleaned_text(dom, &marks, 0.5)
}

/// Judges every block of a page.
pub fn judge(dom: &Dom, sums: &[Subtree], context: Context<'_>, model: &ContentModel) -> Judgement {
    let blocks = blocks::blocks(dom);
    let probability = probabilities(&blocks, context.site_inside, model.threshold, |wanted| {
        model.probabilities(&features::compute_for(dom, sums, &blocks, context, wanted))
    });
    let content = decide(
        dom,
        sums,
        &blocks,
        &probability,
        model.threshold,
        Rule::Blocks,
        context.site_inside,
    );
    Judgement {
        blocks,
        probability,
        content,
    }
}

/// The probability of every block, given `score`, which computes the probabilities of the
/// blocks it is handed (marked `true`, returned in block order).
///
/// A short block inside one of the host's site-level templates is not content (the template
/// view and the content view agree there), so on a host with statistics it is not scored: it
/// gets probability 0. On the benchmark corpus 46% of all blocks are inside templates, and the
/// trees called 0.2% of them content. Template blocks of [`PARAGRAPH_CHARS`] or more are scored
/// all the same (skipping them too cost 0.3 points of held-out macro F1 on L3S-GN1), and when
/// no block outside the templates is content, all blocks are scored: the page may repeat
/// another page of the host (a duplicate under a second URL, whose content SiteLevel then calls
/// template too).
pub fn probabilities(
    blocks: &Blocks,
    site_inside: Option<&[bool]>,
    threshold: f32,
    mut score: impl FnMut(&[bool]) -> Vec<f32>,
) -> Vec<f32> {
    let everything = || vec![true; blocks.len()];
    let Some(inside) = site_inside else {
        return score(&everything());
    };
    let outside: Vec<bool> = blocks
        .owners
        .iter()
        .zip(&blocks.stats)
        .map(|(&o, stats)| {
            !inside.get(o as usize).copied().unwrap_or(false) || stats.chars >= PARAGRAPH_CHARS
        })
        .collect();
    let scored = score(&outside);
    let mut probability = vec![0f32; blocks.len()];
    let mut scored = scored.into_iter();
    for (p, _) in probability.iter_mut().zip(&outside).filter(|(_, &o)| o) {
        *p = scored.next().unwrap_or(0.0);
    }
    if probability.iter().any(|&p| p >= threshold) || outside.iter().all(|&o| o) {
        probability
    } else {
        score(&everything())
    }
}

/// Blocks inside a site-level template this long are scored all the same: a host-wide
/// notice or disclaimer that readers (and the gold) take for part of the article.
pub const PARAGRAPH_CHARS: u32 = 80;

/// How block probabilities become calls. `stencil train-content` measures them all on the
/// same held-out probabilities (docs/evaluation.md); `Blocks` is what ships.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Rule {
    /// Each block by its own probability.
    #[default]
    Blocks,
    /// The tree isotonic regression of seed 000 §4 over the elements (each element scored by
    /// the character-weighted mean of 1 − p over the blocks below it, smoothed with the
    /// template model's parameters): a block is content when its owner is smoothed below ½.
    Smoothed,
    /// Content by its own probability and by smoothing (smoothing only removes).
    BlocksAndSmoothed,
    /// Content by either (smoothing only restores).
    BlocksOrSmoothed,
    /// One contiguous main region: from the first to the last confident block (p ≥ 0.8),
    /// blocks of p ≥ 0.3 are content; outside it, blocks of p ≥ 0.5.
    Region,
}

impl Rule {
    pub const ALL: [Rule; 5] = [
        Rule::Blocks,
        Rule::Smoothed,
        Rule::BlocksAndSmoothed,
        Rule::BlocksOrSmoothed,
        Rule::Region,
    ];
}

/// The content calls of a page's blocks under `rule`, then the rules every call goes through:
/// a page left empty keeps its likeliest blocks, and a product page keeps its facts
/// ([`facts::keep_facts`]; `site_inside` as in [`Context`]).
pub fn decide(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    probability: &[f32],
    threshold: f32,
    rule: Rule,
    site_inside: Option<&[bool]>,
) -> Vec<bool> {
    let mut calls = calls_by_rule(dom, sums, blocks, probability, threshold, rule);
    // A page with no block called content is almost always a miss, not a page without
    // content: keep its likeliest blocks (within half the best probability) instead.
    if !calls.contains(&true) {
        let best = probability.iter().copied().fold(0.0f32, f32::max);
        if best >= EMPTY_PAGE_FLOOR {
            for (call, &p) in calls.iter_mut().zip(probability) {
                *call = p >= best / 2.0;
            }
        }
    }
    facts::keep_facts(dom, blocks, site_inside, &mut calls);
    calls
}

/// Below this best block probability a page stays empty (nothing on it looks like content).
pub const EMPTY_PAGE_FLOOR: f32 = 0.05;

fn calls_by_rule(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    probability: &[f32],
    threshold: f32,
    rule: Rule,
) -> Vec<bool> {
    let own: Vec<bool> = probability.iter().map(|&p| p >= threshold).collect();
    match rule {
        Rule::Blocks => own,
        Rule::Region => {
            let first = probability.iter().position(|&p| p >= 0.8);
            let last = probability.iter().rposition(|&p| p >= 0.8);
            match (first, last) {
                (Some(first), Some(last)) => probability
                    .iter()
                    .enumerate()
                    .map(|(b, &p)| {
                        if (first..=last).contains(&b) {
                            p >= 0.3
                        } else {
                            p >= threshold
                        }
                    })
                    .collect(),
                _ => own,
            }
        }
        Rule::Smoothed | Rule::BlocksAndSmoothed | Rule::BlocksOrSmoothed => {
            let smoothed = smoothed_owner_scores(dom, sums, blocks, probability);
            own.iter()
                .zip(&smoothed)
                .map(|(&own, &y)| {
                    let by_smoothing = y < 0.5;
                    match rule {
                        Rule::Smoothed => by_smoothing,
                        Rule::BlocksAndSmoothed => own && by_smoothing,
                        _ => own || by_smoothing,
                    }
                })
                .collect()
        }
    }
}

/// The smoothed boilerplate score (1 − content) of every block's owner.
fn smoothed_owner_scores(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    probability: &[f32],
) -> Vec<f32> {
    let n = dom.len();
    let mut weighted = vec![0f32; n];
    let mut chars = vec![0f32; n];
    for (b, stats) in blocks.stats.iter().enumerate() {
        let owner = blocks.owners[b] as usize;
        let c = stats.chars.max(1) as f32;
        weighted[owner] += (1.0 - probability[b]) * c;
        chars[owner] += c;
    }
    for i in (1..n).rev() {
        if let Some(p) = dom.parent(i) {
            weighted[p] += weighted[i];
            chars[p] += chars[i];
        }
    }
    let scores: Vec<Option<f32>> = (0..n)
        .map(|i| (dom.element(i).is_some() && chars[i] > 0.0).then(|| weighted[i] / chars[i]))
        .collect();
    let area: Vec<f32> = sums.iter().map(|s| s.text_chars as f32).collect();
    let segmentation =
        crate::smoothing::segmentation::segment(dom, &scores, &area, &Default::default());
    blocks
        .owners
        .iter()
        .map(|&o| segmentation.smoothed[o as usize])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::dom::subtree::summarize;

    const PAGE: &str =
        "<body><nav><a href=/>Home page</a> <a href=/a>About us, our people and our work</a> \
        <a href=/c>Contact us</a></nav>\
        <article><p>The first long paragraph of the story tells what happened in the town.</p>\
        <p>A short aside, maybe content.</p>\
        <p>The second long paragraph of the story goes on with quotes from people there.</p>\
        </article><footer>Copyright notice of the publisher, all rights reserved.</footer></body>";

    #[test]
    fn rules_turn_probabilities_into_calls() {
        let dom = dom::parse(PAGE, 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 5, "nav, three paragraphs, footer");
        let p = [0.1, 0.9, 0.4, 0.95, 0.2];
        let decide = |rule| decide(&dom, &sums, &blocks, &p, 0.5, rule, None);
        assert_eq!(decide(Rule::Blocks), [false, true, false, true, false]);
        // The aside lies between two confident blocks and is likely enough.
        assert_eq!(decide(Rule::Region), [false, true, true, true, false]);
        // Smoothing keeps the article whole: the aside is restored, nothing else changes. (A
        // block too small to be smoothed takes its section's score: a short menu inside the
        // body would be restored too.)
        assert_eq!(
            decide(Rule::BlocksOrSmoothed),
            [false, true, true, true, false]
        );
        assert_eq!(decide(Rule::BlocksAndSmoothed), decide(Rule::Blocks));
    }
}
