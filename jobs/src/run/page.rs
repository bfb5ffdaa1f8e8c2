//! The page-level half of `stencil run`, `apply` and `clean`: classifier scores, the optional
//! site-level prior, smoothing into sections, the template fractions and the cleaned text of
//! one parsed page, and the rows of `pages` and `segments` made from them.

use std::borrow::Cow;
use std::sync::Arc;

use stencil_operators::dom::subtree::Subtree;
use stencil_operators::dom::{markdown, metadata, Dom};
use stencil_operators::fractions::{self, Fractions};
use stencil_operators::page_models::content::{self, ContentModel, Context};
use stencil_operators::page_models::features;
use stencil_operators::site::sections::{Section, DEFAULT_NOISE_THRESHOLD};
use stencil_operators::site::site_level::site_of;
use stencil_operators::smoothing::segmentation::{self, Segmentation};

use super::store::PageMeta;
use crate::crash::enter;
use crate::score::Scorer;
use crate::tables::{NodeId, PageRow, SegmentRow};

/// What the page-level stages make of one page.
pub struct Analysis {
    pub scores: Vec<Option<f32>>,
    pub segmentation: Segmentation,
    /// Smoothed ≥ τ, for every node.
    pub template: Vec<bool>,
    pub fractions: Fractions,
    /// Visible characters of the blocks the main-content model kept, and of their links.
    pub main_content_chars: u64,
    pub main_content_anchor_chars: u64,
    pub cleaned_text: String,
    /// `cleaned_text` as Markdown, when asked for.
    pub cleaned_markdown: Option<String>,
    /// The main-content model's blocks and calls (what `stencil show` colours as content).
    pub judgement: content::Judgement,
    /// The classifier's features and the class and id names both models read.
    pub computed: features::Computed,
}

/// What `cleaned_text` is made from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CleanedFrom {
    /// The main-content model's blocks (the default).
    #[default]
    Content,
    /// Everything the template model leaves, without the main-content model.
    Template,
}

/// How a page's scores become template calls, besides the smoothing parameters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Smooth + site: on hosts with site-level statistics, each score is blended with the
    /// site-level call before smoothing, x' = (1 − w)·x + w·s with s = 1 inside a site-level
    /// template and 0 outside (w = 0: off).
    pub site_weight: f32,
    /// The paper's Basic: no smoothing, each element judged by its own score (for
    /// comparison; no sections).
    pub basic: bool,
    /// Hidden elements (too small to be smoothed) scored at least this are template with
    /// their subtree, whatever their section (`segmentation::with_confident_hidden`).
    pub hidden_threshold: Option<f32>,
    pub cleaned_from: CleanedFrom,
    /// Whether to write `cleaned_text` as Markdown too, and what it holds.
    pub markdown: Option<markdown::Options>,
}

/// Scores, smooths and cleans one page. `site_inside` marks the nodes inside the host's
/// site-level templates (when the host has statistics), for `options.site_weight` (the
/// "Smooth + site" variant measured in docs/evaluation.md). `url` names the page to the stage
/// markers of contained work (`crate::crash::enter`). `computed` is the page's features when an
/// earlier stage has them (`stencil run`'s labels, for a sampled page).
pub fn analyse(
    (dom, sums): (&Dom, &[Subtree]),
    scorer: &Scorer,
    content_model: &ContentModel,
    site_inside: Option<&[bool]>,
    options: Options,
    url: &str,
    computed: Option<features::Computed>,
) -> Analysis {
    let weight = options.site_weight;
    enter("features", url);
    // Both models read what the class and id names say: looked up once.
    let computed = computed.unwrap_or_else(|| features::Computed::of(dom, sums));
    let (names, page_features) = (&computed.names, &computed.features);
    enter("scoring", url);
    let mut scores = scorer.model.score_page(dom, page_features);
    if let (Some(inside), true) = (site_inside, weight > 0.0) {
        for (score, &inside) in scores.iter_mut().zip(inside) {
            if let Some(score) = score {
                *score = (1.0 - weight) * *score + weight * f32::from(u8::from(inside));
            }
        }
    }
    let smoothing = &scorer.smoothing;
    enter("smoothing", url);
    let segmentation = if options.basic {
        Segmentation {
            smoothed: segmentation::unsmoothed(dom, &scores),
            smoothed_node: vec![false; dom.len()],
            ..Segmentation::default()
        }
    } else {
        segmentation::segment(dom, &scores, &page_features.area, &smoothing.params)
    };
    // The calls behind `template`, the fractions and the cleaned text; `segments` keeps the
    // smoothed scores themselves.
    let calls: Cow<'_, [f32]> = match options.hidden_threshold {
        Some(confident) if !options.basic => Cow::Owned(segmentation::with_confident_hidden(
            dom,
            &segmentation,
            &scores,
            confident,
        )),
        _ => Cow::Borrowed(&segmentation.smoothed),
    };
    let template: Vec<bool> = calls.iter().map(|&y| y >= smoothing.threshold).collect();
    enter("content", url);
    let context = Context {
        url,
        site_inside,
        lexical: None,
        containers: None,
        names: Some(names),
        siblings: None,
    };
    let judgement = content::judge(dom, sums, context, content_model);
    enter("cleaned text", url);
    let cleaned_text = match options.cleaned_from {
        CleanedFrom::Content => judgement.cleaned_text(dom),
        CleanedFrom::Template => segmentation::cleaned_text(dom, &calls, smoothing.threshold),
    };
    enter("markdown", url);
    let cleaned_markdown = options.markdown.map(|md| match options.cleaned_from {
        CleanedFrom::Content => judgement.cleaned_markdown(dom, md),
        CleanedFrom::Template => {
            segmentation::cleaned_markdown(dom, &calls, smoothing.threshold, md)
        }
    });
    Analysis {
        fractions: fractions::of(dom, sums, &template),
        main_content_chars: judgement.main_content_chars(),
        main_content_anchor_chars: judgement.main_content_anchor_chars(),
        cleaned_text,
        cleaned_markdown,
        scores,
        segmentation,
        template,
        judgement,
        computed,
    }
}

/// The `segments` rows of one page: one per section.
pub fn segment_rows(
    url: &Arc<str>,
    host: &Arc<str>,
    dom: &Dom,
    sums: &[Subtree],
    analysis: &Analysis,
) -> Vec<SegmentRow> {
    analysis
        .segmentation
        .sections
        .iter()
        .map(|&node| {
            let node = node as usize;
            SegmentRow {
                id: NodeId::new(url, host, dom, node, dom.path(node)),
                score: analysis.scores[node],
                smoothed: analysis.segmentation.smoothed[node],
                text_chars: sums[node].text_chars,
                template: analysis.template[node],
                importance: None,
                siblings: 1,
            }
        })
        .collect()
}

/// The `segments` rows of a page of a tree-regex host: seed 003's sections, each named by its
/// first node, with its importance; template when noise (importance below 0.25).
pub fn section_rows(
    url: &Arc<str>,
    host: &Arc<str>,
    (dom, sums): (&Dom, &[Subtree]),
    analysis: &Analysis,
    sections: &[Section],
) -> Vec<SegmentRow> {
    sections
        .iter()
        .filter_map(|section| {
            let node = *section.roots.first()? as usize;
            Some(SegmentRow {
                id: NodeId::new(url, host, dom, node, dom.path(node)),
                score: analysis.scores[node],
                smoothed: analysis.segmentation.smoothed[node],
                text_chars: section
                    .roots
                    .iter()
                    .map(|&r| sums[r as usize].text_chars)
                    .sum(),
                template: section.is_noise(DEFAULT_NOISE_THRESHOLD),
                importance: Some(section.importance),
                siblings: section.roots.len() as u32,
            })
        })
        .collect()
}

/// The `pages` row of one page. `site` are its site-level fractions, `None` when the host has
/// no site-level statistics.
pub fn page_row(
    meta: PageMeta,
    warc_file: Arc<str>,
    dom: &Dom,
    sums: &[Subtree],
    analysis: Analysis,
    site: Option<Fractions>,
) -> PageRow {
    let total = sums.first().copied().unwrap_or_default();
    let page = analysis.fractions;
    let site = site.unwrap_or_default();
    let url = meta.url;
    PageRow {
        host: site_of(&meta.host).to_string(),
        warc_file,
        warc_offset: meta.offset,
        record_id: meta.record_id,
        fetch_date: meta.fetch_date,
        http_status: meta.http_status,
        charset: meta.charset,
        truncated: meta.truncated,
        html_bytes: meta.html_bytes,
        dom_nodes: dom.len() as u32,
        text_chars: total.text_chars,
        words: total.words,
        links: total.links,
        title: dom
            .title()
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" ")),
        segments: analysis.segmentation.sections.len() as u32,
        content_fractions: [
            share(analysis.main_content_chars, total.text_chars.into()),
            share(
                analysis.main_content_anchor_chars,
                total.anchor_text_chars.into(),
            ),
        ],
        main_content_chars: analysis.main_content_chars,
        fractions: [
            page.text,
            page.anchor_text,
            page.links,
            page.html,
            site.text,
            site.links,
            site.html,
        ],
        metadata: metadata::of_page(dom, &url),
        lang_detected: metadata::detected_language(&analysis.cleaned_text),
        cleaned_text: analysis.cleaned_text,
        cleaned_markdown: analysis.cleaned_markdown,
        url,
    }
}

fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| (part as f64 / whole as f64).min(1.0))
}

/// A page's fractions as the bits `hosts` averages (see `site::dataflow::HostFact`).
pub fn fraction_bits(row: &PageRow) -> [Option<u64>; 7] {
    row.fractions.map(|f| f.map(f64::to_bits))
}
