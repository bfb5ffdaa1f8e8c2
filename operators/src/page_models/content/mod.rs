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
//! calls ([`decide`]: the probabilities become calls in [`calls`], and each rule that reads the
//! page's markup after them lives in the module named for what it reads).

pub mod align;
pub mod blocks;
pub mod calls;
pub mod containers;
pub mod features;
pub mod forest;
pub mod items;
pub mod kind;
pub mod lexicon;
pub mod rules;
pub mod tree;
pub mod words;

pub use blocks::{Blocks, NONE};
pub use calls::Rule;
pub use features::Context;
pub use forest::ContentModel;

use crate::dom::subtree::Subtree;
use crate::dom::{markdown, Dom};

/// The content model's calls on one page.
#[derive(Clone, Debug, Default)]
pub struct Judgement {
    pub blocks: Blocks,
    /// The trees' probability that each block is main content, as they gave it (the calls
    /// read it pooled over repeated items: [`items::pool`]).
    pub probability: Vec<f32>,
    /// The calls ([`decide`]): what `cleaned_text` keeps.
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

    /// [`Judgement::cleaned_text`] as Markdown ([`crate::dom::markdown`]): the same words.
    pub fn cleaned_markdown(&self, dom: &Dom, options: markdown::Options) -> String {
        cleaned_markdown(dom, &self.blocks, &self.content, options)
    }
}

/// [`cleaned_text`] as Markdown: the same words, with their structure. An image is kept (with
/// `options.images`) when the nearest block around it keeps words: the model judges text, and
/// a figure goes with the text it stands in.
pub fn cleaned_markdown(
    dom: &Dom,
    blocks: &Blocks,
    content: &[bool],
    options: markdown::Options,
) -> String {
    let dropped = |i: usize| {
        let block = blocks.of_node[i];
        block != NONE && !content[block as usize]
    };
    let keeps_words = if options.images {
        // Bottom-up: whether each node's subtree holds a kept text node.
        let mut keeps = vec![false; dom.len()];
        for i in (0..dom.len()).rev() {
            if dom.visible_text(i).is_some_and(|t| !t.trim().is_empty()) && !dropped(i) {
                keeps[i] = true;
            }
            if keeps[i] {
                if let Some(parent) = dom.parent(i) {
                    keeps[parent] = true;
                }
            }
        }
        keeps
    } else {
        Vec::new()
    };
    let keep_image = |i: usize| {
        dom.ancestors_or_self(i)
            .skip(1)
            .take(256)
            .find(|&a| crate::dom::text::breaks_line(dom, a))
            .is_some_and(|block| keeps_words[block])
    };
    markdown::markdown(dom, 0..dom.len(), dropped, keep_image, options)
}

/// The text of the blocks of `blocks` called content, one line per block: the page as a reader
/// sees it ([`crate::dom::text::readable`]) without the text nodes of blocks not called
/// content. Only text nodes are dropped (`of_node` names no element), so every element stays
/// open and the line breaks of the page's blocks stay where they were.
pub fn cleaned_text(dom: &Dom, blocks: &Blocks, content: &[bool]) -> String {
    let dropped = |i: usize| {
        let block = blocks.of_node[i];
        block != NONE && !content[block as usize]
    };
    crate::dom::text::readable(dom, 0..dom.len(), dropped, usize::MAX)
}

/// Judges every block of a page.
pub fn judge(dom: &Dom, sums: &[Subtree], context: Context<'_>, model: &ContentModel) -> Judgement {
    let blocks = blocks::blocks(dom);
    let lexical = (!model.lexicon.is_empty()).then(|| model.lexicon.scores(&blocks));
    let containers =
        (!model.containers.is_empty()).then(|| containers::scores(dom, &blocks, &model.containers));
    let siblings = items::Siblings::given_or_of_page(dom, context.siblings);
    let context = Context {
        lexical: lexical.as_deref(),
        containers: containers.as_deref(),
        siblings: Some(&siblings),
        ..context
    };
    let mut kind = None;
    let probability = probabilities(&blocks, context.site_inside, model.threshold, |wanted| {
        let mut rows = features::compute_for(dom, sums, &blocks, context, wanted);
        (model.kinds).set(&blocks, wanted, &mut rows, context.url, &mut kind);
        model.probabilities(&rows)
    });
    let content = decide(
        dom,
        sums,
        &blocks,
        &probability,
        model.threshold,
        Rule::default(),
        context,
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
/// gets probability 0. That spares scoring a large share of a crawl's blocks, of which the
/// trees would call almost none content (docs/benchmarks.md). Template blocks of
/// [`PARAGRAPH_CHARS`] or more are scored all the same (skipping them too costs held-out macro
/// F1 on L3S-GN1; docs/evaluation.md), and when no block outside the templates is content, all
/// blocks are scored: the page may repeat another page of the host (a duplicate under a second
/// URL, whose content SiteLevel then calls template too).
pub fn probabilities(
    blocks: &Blocks,
    site_inside: Option<&[bool]>,
    threshold: f32,
    mut score: impl FnMut(&[bool]) -> Vec<f32>,
) -> Vec<f32> {
    let everything = || vec![true; blocks.len()];
    if site_inside.is_none() {
        return score(&everything());
    }
    let outside = scored_first(blocks, site_inside);
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

/// The blocks [`probabilities`] scores first: on a host with statistics those outside the
/// site-level templates and the long ones inside; else every block.
pub fn scored_first(blocks: &Blocks, site_inside: Option<&[bool]>) -> Vec<bool> {
    let Some(inside) = site_inside else {
        return vec![true; blocks.len()];
    };
    (blocks.owners.iter().zip(&blocks.stats))
        .map(|(&o, stats)| {
            !inside.get(o as usize).copied().unwrap_or(false) || stats.chars >= PARAGRAPH_CHARS
        })
        .collect()
}

/// Blocks inside a site-level template this long are scored all the same: a host-wide
/// notice or disclaimer that readers (and the gold) take for part of the article.
pub const PARAGRAPH_CHARS: u32 = 80;

/// The content calls of a page's blocks: the trees' probabilities, pooled over repeated items
/// ([`items::pool`]), become calls under `rule` ([`calls`]), and then every call goes through
/// the rules that read the page itself (`rules::apply`). Of `context` the URL, the site-level
/// evidence, the names and the alike siblings are read (the last two computed here when
/// `None`, as in [`Context`]).
///
/// A bare page ([`rules::bare`]) is one unit, content whole but for a dialog, and goes through
/// none of that.
pub fn decide(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    probability: &[f32],
    threshold: f32,
    rule: Rule,
    context: Context<'_>,
) -> Vec<bool> {
    if rules::bare::is_bare(dom, blocks, context.site_inside) {
        let mut calls = vec![true; blocks.len()];
        rules::markup::drop_dialogs(dom, blocks, &mut calls);
        return calls;
    }
    decide_parts(dom, sums, blocks, probability, threshold, rule, context)
}

/// [`decide`] on a page that is not bare: the parts the page is made of told apart.
pub(crate) fn decide_parts(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    probability: &[f32],
    threshold: f32,
    rule: Rule,
    context: Context<'_>,
) -> Vec<bool> {
    // Before any call: the rules below read the pooled probabilities as the trees' own.
    let siblings = items::Siblings::given_or_of_page(dom, context.siblings);
    let probability = &items::pool(dom, &siblings, blocks, probability);
    let calls::RuleCalls {
        mut calls,
        nothing_is_the_bet,
    } = calls::by_rule(dom, sums, blocks, probability, threshold, rule);
    // The rules read the same alike siblings (the headline lists' items).
    let context = Context {
        siblings: Some(&siblings),
        ..context
    };
    rules::apply(
        dom,
        sums,
        blocks,
        probability,
        context,
        nothing_is_the_bet,
        &mut calls,
    );
    calls
}

/// What the rules' tests share: [`decide`] as the rules see it.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::dom;
    use crate::dom::subtree::summarize;

    /// [`decide`] at threshold ½, without site-level evidence, the names read from the page, on
    /// a page read as one with parts to tell apart: the rules' test pages are bare ones
    /// ([`rules::bare`]), a tag or two standing for a whole page.
    pub(crate) fn calls_of(
        dom: &Dom,
        sums: &[Subtree],
        blocks: &Blocks,
        p: &[f32],
        rule: Rule,
    ) -> Vec<bool> {
        decide_parts(dom, sums, blocks, p, 0.5, rule, Context::default())
    }

    /// The page's block count and its calls when the trees call every block content (p 0.9,
    /// each block by itself): what the rules after the trees take away.
    pub(crate) fn calls_when_all_sure(html: &str) -> (usize, Vec<bool>) {
        calls_given(html, |count| vec![0.9; count])
    }

    /// The page's block count and its calls when the trees give its blocks probabilities `p`
    /// (each block by itself): what the rules after the trees add and take away.
    pub(crate) fn calls_when_trees_say(html: &str, p: &[f32]) -> (usize, Vec<bool>) {
        calls_given(html, |_| p.to_vec())
    }

    /// [`calls_when_trees_say`] through [`decide`] itself, which reads a bare page whole.
    pub(crate) fn decided_when_trees_say(html: &str, p: &[f32]) -> (usize, Vec<bool>) {
        let (dom, sums, blocks) = page(html);
        let calls = decide(
            &dom,
            &sums,
            &blocks,
            p,
            0.5,
            Rule::Blocks,
            Context::default(),
        );
        (blocks.len(), calls)
    }

    /// The page's block count and its calls under `Rule::Blocks`, the trees' probabilities made
    /// from the block count.
    fn calls_given(
        html: &str,
        probabilities: impl FnOnce(usize) -> Vec<f32>,
    ) -> (usize, Vec<bool>) {
        let (dom, sums, blocks) = page(html);
        let p = probabilities(blocks.len());
        (
            blocks.len(),
            calls_of(&dom, &sums, &blocks, &p, Rule::Blocks),
        )
    }

    fn page(html: &str) -> (Dom, Vec<Subtree>, Blocks) {
        let dom = dom::parse(html, 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        (dom, sums, blocks)
    }
}
