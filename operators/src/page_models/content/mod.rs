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
pub mod comments;
pub mod containers;
pub mod facts;
pub mod features;
pub mod forest;
pub mod items;
pub mod lexicon;
pub mod reviews;

pub use blocks::{Blocks, NONE};
pub use features::Context;
pub use forest::ContentModel;

use std::collections::HashSet;

use foldhash::fast::FixedState;
use html5ever::local_name;

use crate::dom::subtree::Subtree;
use crate::dom::Dom;
use crate::page_models::names::{self, NameWords};

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
    let probability = probabilities(&blocks, context.site_inside, model.threshold, |wanted| {
        model.probabilities(&features::compute_for(dom, sums, &blocks, context, wanted))
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

/// A block of preformatted text (inside a `<pre>`) is content unless the trees put it under
/// this.
pub const PREFORMATTED_FLOOR: f32 = 0.1;

/// Preformatted text is content: code listings, shell sessions, logs, what documentation and
/// technical articles exist to show. Navigation, footers and notices are not set in `<pre>`.
/// The trees, which read prose well, give code middling probabilities (0.2–0.5 on
/// docs.python.org's listings: few sentence marks, words no lexicon knows); held out, this
/// rule raised WCXB's documentation pages from 0.908 to 0.915 macro F1 and moved no other
/// group by more than 0.001 (docs/evaluation.md).
fn keep_preformatted(dom: &Dom, blocks: &Blocks, probability: &[f32], calls: &mut [bool]) {
    for ((call, &owner), &p) in calls.iter_mut().zip(&blocks.owners).zip(probability) {
        if !*call && p >= PREFORMATTED_FLOOR {
            *call = preformatted(dom, owner as usize);
        }
    }
}

/// A data table whose blocks hold, weighted by characters, a mean probability of at least this
/// is content whole.
pub const DATA_TABLE_SHARE: f64 = 0.3;

/// A data table is read whole: a course's schedule, a standings table, a spec sheet, a price
/// comparison. The trees judge its cells one by one, and short cells ("Sep 11", "Topic",
/// "instructor notes, slides") sit at 0.1–0.5 beside a confident paragraph, so the threshold
/// kept a row's longest cell and dropped the rest (sitanchen.com's course page lost its whole
/// schedule). So when a table's blocks reach [`DATA_TABLE_SHARE`] on average, every block of
/// it is content, as the pooled items of a run are ([`items`]). A data table is a `<table>`
/// with a header cell (`<th>` or `<thead>`) and no table inside it: a layout table (a page
/// built of tables, its menus in cells) nests tables and rarely heads its columns; counting
/// tables without a header as well cost L3S-GN1's old table-built news pages 0.7 points.
/// Held out over three host partitions, 38–40 pages changed on each; macro F1 of WCXB's
/// collections +0.001 on each, documentation +0.003 on one, service and product pages +0.001
/// on one or two, no group lower (docs/evaluation.md, nineteenth session).
fn keep_data_tables(dom: &Dom, blocks: &Blocks, probability: &[f32], calls: &mut [bool]) {
    #[derive(Default)]
    struct Table {
        header: bool,
        nested: bool,
        /// Σ p·c and Σ c over the table's blocks.
        weighted: f64,
        chars: f64,
    }
    // One pass in document order (a parent before its children): each node's nearest
    // enclosing table, as an index into `tables`, and what each table holds.
    const NO_TABLE: u32 = u32::MAX;
    let mut table = vec![NO_TABLE; dom.len()];
    let mut tables: Vec<Table> = Vec::new();
    for i in 0..dom.len() {
        let outer = dom.parent(i).map_or(NO_TABLE, |p| table[p]);
        table[i] = outer;
        let Some(tag) = dom.tag(i) else { continue };
        match *tag {
            local_name!("table") => {
                if let Some(outer) = tables.get_mut(outer as usize) {
                    outer.nested = true;
                }
                table[i] = tables.len() as u32;
                tables.push(Table::default());
            }
            local_name!("th") | local_name!("thead") => {
                if let Some(outer) = tables.get_mut(outer as usize) {
                    outer.header = true;
                }
            }
            _ => {}
        }
    }
    if tables.is_empty() {
        return;
    }
    for ((&owner, stats), &p) in blocks.owners.iter().zip(&blocks.stats).zip(probability) {
        if let Some(t) = tables.get_mut(table[owner as usize] as usize) {
            let chars = f64::from(stats.chars.max(1));
            t.weighted += f64::from(p) * chars;
            t.chars += chars;
        }
    }
    // A table asked about here holds a block, so its characters are at least 1.
    for (call, &owner) in calls.iter_mut().zip(&blocks.owners) {
        *call |= tables
            .get(table[owner as usize] as usize)
            .is_some_and(|t| t.header && !t.nested && t.weighted >= DATA_TABLE_SHARE * t.chars);
    }
}

/// Whether a block's owner is a `<pre>` or inside one (a walk up: call it for few blocks).
fn preformatted(dom: &Dom, owner: usize) -> bool {
    dom.ancestors_or_self(owner)
        .any(|i| dom.tag(i).is_some_and(|t| *t == local_name!("pre")))
}

/// A modal dialog (`<dialog>`, or an element with `aria-modal="true"`) is an overlay the reader
/// must dismiss to reach the page: a privacy policy or size chart opened from a link, a
/// newsletter or cookie prompt, a sign-in box. Whatever it holds is not what the page exists
/// to deliver, however much it reads like prose (allbirds.com's 20,000-character privacy
/// policy, modal in its footer, was called content at 0.5–0.8).
fn drop_dialogs(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) {
    for (call, &owner) in calls.iter_mut().zip(&blocks.owners) {
        if *call {
            *call = !dom
                .ancestors_or_self(owner as usize)
                .any(|i| dom.is_modal(i));
        }
    }
}

/// A product's buyers' reviews are not the product page's content (WCXB's gold leaves them out,
/// as it leaves out a story's comments). The trees keep them (first-person prose, sweetwater's
/// at p ≈ 0.57); the page names them itself ([`reviews`]), in two ways:
///
/// - its JSON-LD lists them under the `Product`: a block that mostly repeats those reviews is
///   not content (held out, 5 product pages better and none worse, docs/evaluation.md);
/// - its JSON-LD declares the page is about one product, and the review widget's elements are
///   named for reviews: what lies inside them is not content (held out, 12 product pages
///   better, one worse, whose gold keeps an expert's review; docs/evaluation.md).
///
/// Returns whether the page declares one product (the facts rule reads it too).
fn drop_product_reviews(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) -> bool {
    let declared = reviews::declared(dom);
    if let Some(shingles) = reviews::shingles(&declared.bodies) {
        let shares = reviews::block_shares(blocks, &shingles);
        for (call, share) in calls.iter_mut().zip(shares) {
            if share >= REVIEW_SHARE {
                *call = false;
            }
        }
    }
    if declared.one_product && calls.contains(&true) {
        let in_review = dom.inside_marked(|i| {
            dom.id(i)
                .into_iter()
                .chain(dom.classes(i))
                .any(reviews::names_reviews)
        });
        for (call, &owner) in calls.iter_mut().zip(&blocks.owners) {
            *call &= !in_review[owner as usize];
        }
    }
    declared.one_product
}

/// Readers' comments under a story are not its content (dragnet's and L3S-GN1's gold leave
/// them out, as WCXB's article gold does), but a discussion's posts are ([`comments`]): on a
/// page that does not declare a discussion, a block in a comment thread is dropped when the
/// page keeps anything outside the comments, and a block in a lone element named for comments
/// when it keeps [`comments::MIN_OWN_CHARS`] characters outside them. Held out over three host
/// partitions: dragnet +0.6 to +0.8 points of macro F1, L3S-GN1 +0.3 to +0.4, WCXB articles
/// +0.1, forums −0.4 to +0.3 (docs/evaluation.md, eleventh session); threads under short
/// posts, twenty-fourth session. Comments a heading or an anchor so named introduces go as a
/// lone element's do: dragnet +0.4, L3S-GN1 +0.4 to +0.5, no page worse (twenty-eighth
/// session).
fn drop_comments(dom: &Dom, blocks: &Blocks, names: Option<&[NameWords]>, calls: &mut [bool]) {
    use comments::Region;
    // Most pages name no comments, or keep nothing in a comment section, and are done after
    // a pass over the names or the arena; the JSON-LD is read only when something would be
    // dropped.
    let names = names::given_or_of_page(dom, names);
    if !comments::any_named(dom, &names) {
        return;
    }
    let regions = comments::regions(dom, &names);
    let block_regions = comments::of_blocks(blocks, &regions);
    let mut own_chars = 0u32;
    let mut in_comments = false;
    for ((&call, &region), stats) in calls.iter().zip(&block_regions).zip(&blocks.stats) {
        if call {
            match region {
                Region::Outside => own_chars += stats.chars,
                Region::Lone | Region::Thread | Region::Introduced => in_comments = true,
            }
        }
    }
    if !in_comments || own_chars == 0 || comments::declares_discussion(dom) {
        return;
    }
    let lone_too = own_chars >= comments::MIN_OWN_CHARS;
    for (call, &region) in calls.iter_mut().zip(&block_regions) {
        match region {
            Region::Thread => *call = false,
            Region::Lone | Region::Introduced if lone_too => *call = false,
            _ => {}
        }
    }
}

/// A block at least this share of whose word triples a product's JSON-LD reviews hold is one
/// of those reviews.
pub const REVIEW_SHARE: f32 = 0.5;

/// Blocks inside a site-level template this long are scored all the same: a host-wide
/// notice or disclaimer that readers (and the gold) take for part of the article.
pub const PARAGRAPH_CHARS: u32 = 80;

/// How block probabilities become calls. `stencil train-content` measures them all on the
/// same held-out probabilities (docs/evaluation.md); `BlocksUnlessUnsure` is what ships.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Rule {
    /// Each block by its own probability.
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
    /// The blocks that maximize the page's expected token F1 ([`expected_f1_calls`]).
    ExpectedF1,
    /// `Blocks` on a page with a confident block ([`CONFIDENT_BLOCK`]), unless they keep less
    /// than half of what the model expects the page's content to be ([`unsure_page`]); on
    /// every other page `ExpectedF1`.
    #[default]
    BlocksUnlessUnsure,
    /// `Region`, unless the page is unsure ([`unsure_page`]): then `ExpectedF1`.
    RegionUnlessUnsure,
}

impl Rule {
    pub const ALL: [Rule; 8] = [
        Rule::Blocks,
        Rule::Smoothed,
        Rule::BlocksAndSmoothed,
        Rule::BlocksOrSmoothed,
        Rule::Region,
        Rule::ExpectedF1,
        Rule::BlocksUnlessUnsure,
        Rule::RegionUnlessUnsure,
    ];
}

/// The content calls of a page's blocks under `rule`, then the rules every call goes through:
/// data tables are read whole ([`keep_data_tables`]), a page left empty keeps its likeliest
/// blocks, a product page keeps its facts ([`facts::keep_facts`]), readers' comments are
/// dropped. Of `context` the site-level evidence and the names are read (each computed here
/// when `None`, as in [`Context`]).
pub fn decide(
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
    let mut calls = calls_by_rule(dom, sums, blocks, probability, threshold, rule);
    keep_data_tables(dom, blocks, probability, &mut calls);
    keep_preformatted(dom, blocks, probability, &mut calls);
    drop_dialogs(dom, blocks, &mut calls);
    let one_product = drop_product_reviews(dom, blocks, &mut calls);
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
    facts::keep_facts(dom, blocks, context.site_inside, one_product, &mut calls);
    // After the facts rule: a comment's "Posted by: …" line is no fact of the page.
    drop_comments(dom, blocks, context.names, &mut calls);
    drop_repeats(dom, blocks, &mut calls);
    calls
}

/// A page with a block this likely reads as one main text, a story, and is judged by the
/// threshold ([`Rule::BlocksUnlessUnsure`]); a page without one takes the expected-F1 calls.
///
/// The threshold of ½ is the best bet only on a page whose reachable F1 is near 1 (the best
/// threshold for F1 is half of it, [`expected_f1_calls`]). A listing, a shop's category page,
/// a product page or a documentation index is a page the model is half sure of throughout:
/// its items and paragraphs sit at 0.1–0.5 (the calibration table in docs/evaluation.md), a
/// few headings or an intro above ½ keep it from counting as unsure ([`unsure_page`]), and the
/// threshold drops the rest. Where a block is confident the page is read as a story, and the
/// lists beside it (related links, teasers) are judged by the threshold: the expected-F1 calls
/// on every page cost dragnet 0.1–0.5 points (docs/evaluation.md, thirteenth session). Held
/// out over three host partitions (twenty-ninth session): macro F1 +0.11 to +0.15 points
/// overall page by page, collections +0.9 to +1.2, listings +0.7 to +1.5, products +0.1 to
/// +0.9, service pages 0 to +0.3, dragnet 0 to +0.15; a gate at 0.9 or 0.98 did no better.
/// From the fifteenth session to the twenty-eighth only the blocks in runs of repeated items
/// took the bet there.
pub const CONFIDENT_BLOCK: f32 = 0.95;

/// Text called content twice is content once: a run of consecutive blocks called content that
/// each repeat word for word a block called content before them is dropped when the run holds
/// at least [`REPEAT_RUN_WORDS`] words.
///
/// Pages carry a section twice for two layouts (Squarespace's shops render a product's
/// description for narrow and for wide screens, one copy hidden by a style sheet Stencil does
/// not read), print an article again below itself, or quote a post in full in a reply: a
/// reader reads it once, and a corpus wants it once. Short repeats stay, because they are how
/// reference pages are written (the same parameter note under many parameters, the same step
/// in every language's tab), and so does preformatted text (a tutorial may show a command
/// twice on purpose). Words are compared as the lexicon reads them (lower-cased, punctuation
/// aside).
fn drop_repeats(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) {
    // Each kept block's words, folded in order into one hash.
    let mut fingerprint = vec![0u64; blocks.len()];
    let mut words = vec![0u32; blocks.len()];
    for &(b, hash) in &blocks.words {
        let b = b as usize;
        if calls[b] {
            fingerprint[b] =
                (fingerprint[b].rotate_left(23) ^ hash).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            words[b] += 1;
        }
    }
    // The kept blocks in order, each with whether it repeats an earlier kept block (the
    // ancestor walk only for repeats: a page's first copies are most of its blocks).
    let mut seen: HashSet<(u64, u32), FixedState> = HashSet::default();
    let kept: Vec<(usize, bool)> = (0..blocks.len())
        .filter(|&b| calls[b] && words[b] > 0)
        .map(|b| {
            let repeat = !seen.insert((fingerprint[b], words[b]));
            (b, repeat && !preformatted(dom, blocks.owners[b] as usize))
        })
        .collect();
    for run in kept.chunk_by(|x, y| x.1 == y.1) {
        let run_words: u32 = run.iter().map(|&(b, _)| words[b]).sum();
        if run[0].1 && run_words >= REPEAT_RUN_WORDS {
            for &(b, _) in run {
                calls[b] = false;
            }
        }
    }
}

/// See [`drop_repeats`]. Held out, runs of 20, 40 and 80 words or more gave WCXB's forums
/// 0.775, 0.773 and 0.771 and its documentation 0.915, 0.917 and 0.918 (0.918 without the
/// rule): reference pages repeat a parameter's notes under every endpoint that takes it.
pub const REPEAT_RUN_WORDS: u32 = 40;

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
        Rule::ExpectedF1 => expected_f1_calls(blocks, probability),
        Rule::BlocksUnlessUnsure => {
            let confident = probability.iter().any(|&p| p >= CONFIDENT_BLOCK);
            if confident && !unsure_page(blocks, probability, threshold) {
                own
            } else {
                expected_f1_calls(blocks, probability)
            }
        }
        Rule::RegionUnlessUnsure if unsure_page(blocks, probability, threshold) => {
            expected_f1_calls(blocks, probability)
        }
        Rule::Region | Rule::RegionUnlessUnsure => {
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

/// The set of blocks with the highest expected token F1 against the gold, taking each block's
/// probability at its word: the likeliest blocks first, as many as maximize
/// `2·Σ p·c (kept) / (Σ c (kept) + Σ p·c (all))`, with `c` a block's characters.
///
/// A fixed threshold of ½ is right only for a page whose expected F1 is near 1: the best
/// threshold for F1 is half the F1 the page can reach. Where the model is unsure of the whole
/// page (a listing whose hundred items each look 30% like content), a fixed threshold keeps
/// nothing, while these calls keep the items, because keeping them is the better bet.
pub fn expected_f1_calls(blocks: &Blocks, probability: &[f32]) -> Vec<bool> {
    let chars = |b: usize| f64::from(blocks.stats[b].chars.max(1));
    let expected: f64 = (0..probability.len())
        .map(|b| f64::from(probability[b]) * chars(b))
        .sum();
    let mut order: Vec<usize> = (0..probability.len()).collect();
    order.sort_by(|&a, &b| probability[b].total_cmp(&probability[a]).then(a.cmp(&b)));
    let (mut hits, mut kept, mut best, mut best_len) = (0f64, 0f64, 0f64, 0);
    for (k, &b) in order.iter().enumerate() {
        hits += f64::from(probability[b]) * chars(b);
        kept += chars(b);
        let f1 = 2.0 * hits / (kept + expected);
        if f1 > best {
            (best, best_len) = (f1, k + 1);
        }
    }
    let mut calls = vec![false; probability.len()];
    for &b in &order[..best_len] {
        calls[b] = true;
    }
    calls
}

/// Whether the blocks at `threshold` keep less than [`UNSURE_SHARE`] of the characters the
/// model expects to be content, `Σ p·c` over the blocks of p ≥ [`UNSURE_FLOOR`].
///
/// Held out, the model's probabilities are well calibrated on articles but far too low on
/// listings, collections and documentation pages: of the tokens of blocks it gives 0.1–0.2,
/// 40–49% are gold there, against 8% on news articles (docs/evaluation.md). Such a
/// page shows itself by many middling blocks and few confident ones, so that the threshold
/// keeps little of the content expected. The expected-F1 calls are the better bet on those
/// pages only: on every page they lower the threshold to half the page's expected F1, and on
/// news articles that costs more precision (dragnet: micro P 0.902 → 0.874) than it brings.
/// Blocks below the floor do not count, as the long tail of menus on a big page would
/// otherwise add up to a paragraph's worth of "expected" content.
pub fn unsure_page(blocks: &Blocks, probability: &[f32], threshold: f32) -> bool {
    let (mut kept, mut expected) = (0f64, 0f64);
    for (stats, &p) in blocks.stats.iter().zip(probability) {
        let chars = f64::from(stats.chars.max(1));
        if p >= threshold {
            kept += chars;
        }
        if p >= UNSURE_FLOOR {
            expected += f64::from(p) * chars;
        }
    }
    kept < UNSURE_SHARE * expected
}

/// See [`unsure_page`]; both chosen on the held-out probabilities of `stencil train-content`
/// (0.4 and 0.6, or no floor, move WCXB's macro F1 by 0.1 point).
pub const UNSURE_SHARE: f64 = 0.5;
pub const UNSURE_FLOOR: f32 = 0.1;

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

    /// [`decide`] at threshold ½, without site-level evidence, the names read from the page.
    fn calls_of(dom: &Dom, sums: &[Subtree], blocks: &Blocks, p: &[f32], rule: Rule) -> Vec<bool> {
        decide(dom, sums, blocks, p, 0.5, rule, Context::default())
    }

    /// The page's block count and its calls when the trees call every block content (p 0.9,
    /// each block by itself): what the rules after the trees take away.
    fn calls_when_all_sure(html: &str) -> (usize, Vec<bool>) {
        let dom = dom::parse(html, 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        let p = vec![0.9; blocks.len()];
        (
            blocks.len(),
            calls_of(&dom, &sums, &blocks, &p, Rule::Blocks),
        )
    }

    #[test]
    fn preformatted_blocks_are_content_unless_very_unlikely() {
        let dom = dom::parse(
            "<body><p>Install it with the command below, then run it.</p>\
             <pre>pip install stencil</pre>\
             <pre><div>for page in crawl:</div><div>    clean(page)</div></pre>\
             <pre>ascii banner</pre><p>Share this page</p></body>",
            512,
        );
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 6);
        let p = [0.9, 0.3, 0.2, 0.45, 0.05, 0.3];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        // The lines of a listing set in <div>s inside the <pre> count as well; a <pre> the
        // trees put under the floor, and a paragraph at 0.3, do not.
        assert_eq!(calls, [true, true, true, true, false, false]);
    }

    #[test]
    fn a_data_table_is_read_whole() {
        let dom = dom::parse(
            "<body><p>The course meets twice a week; the schedule below lists every lecture.</p>\
             <table><tr><th>Date</th><th>Topic</th></tr><tr><td>Sep 6</td><td>Mixtures</td></tr></table>\
             <table><tr><td>Menu one</td><td>Menu two</td></tr></table>\
             <table><tr><th>Layout</th></tr><tr><td><table><tr><td>Inner cell</td></tr></table></td></tr></table>\
             </body>",
            512,
        );
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 9);
        // The schedule's cells average 0.36 by characters: the whole table is content. The
        // table without a header cell and the one with a table inside it (a layout table) are
        // judged cell by cell, as is the inner table, which has no header of its own.
        let p = [0.9, 0.2, 0.3, 0.4, 0.45, 0.45, 0.45, 0.45, 0.45];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        let mut expected = [true, true, true, true, true, false, false, false, false];
        assert_eq!(calls, expected);
        // Under the mean share, the table's cells keep their own calls.
        let p = [0.9, 0.1, 0.1, 0.6, 0.2, 0.45, 0.45, 0.45, 0.45];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        expected[1..5].copy_from_slice(&[false, false, true, false]);
        assert_eq!(calls, expected);
    }

    #[test]
    fn a_long_run_repeated_is_content_once() {
        let description = "Make each cup of tea or coffee feel special with a handmade mug, \
             wheel thrown in a matte speckled finish with a clear glazed interior.";
        let care = "Suitable for dishwashers and microwave ovens; avoid thermal shock from \
             rapid heating and cooling, and take care when stacking ceramics.";
        let page = format!(
            "<body><h1>White speckle mug</h1><div><p>{description}</p><p>{care}</p></div>\
             <div><p>{description}</p><p>{care}</p></div>\
             <h2>Under every endpoint</h2><p>The ID of the customer.</p><p>customer_id</p>\
             <p>The ID of the customer.</p><pre>{description} {care}</pre>\
             <pre>{description} {care}</pre></body>"
        );
        let dom = dom::parse(&page, 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 11);
        let p = vec![0.9; blocks.len()];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        // The second copy of the two paragraphs (a run of 45 words) goes; a short note
        // repeated under another heading, and preformatted text, stay.
        assert_eq!(
            calls,
            [true, true, true, false, false, true, true, true, true, true, true]
        );
    }

    #[test]
    fn modal_dialogs_are_not_content() {
        let dom = dom::parse(
            "<body><p>The shoe is made of merino wool and is machine washable.</p>\
             <div id=modal-privacy aria-modal=true><div><p>We may collect personal data \
             through cookies.</p></div></div>\
             <dialog open><p>Sign up for our newsletter and save.</p></dialog>\
             <div aria-modal=' False'><p>A sheet that says it is not modal.</p></div>\
             <div class=modal-ish><p>A class alone is the trees' to judge.</p></div></body>",
            512,
        );
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 5);
        let p = [0.9, 0.8, 0.7, 0.6, 0.6];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        assert_eq!(calls, [true, false, false, true, true]);
    }

    #[test]
    fn a_products_reviews_named_in_its_json_ld_are_not_content() {
        let page = |kind: &str| {
            format!(
                "<head><script type=application/ld+json>{{\"@type\":\"{kind}\",\"review\":[\
                 {{\"reviewBody\":\"I love this mic so much, it sounds warm on my voice.\"}},\
                 {{\"reviewBody\":\"Broke after a week, sadly.\"}}]}}</script></head>\
                 <body><p>A dynamic microphone with a built-in preamp.</p>\
                 <p>I love this mic so much, it sounds warm on my voice.</p></body>"
            )
        };
        for (kind, expected) in [("Product", [true, false]), ("Article", [true, true])] {
            let (_, calls) = calls_when_all_sure(&page(kind));
            assert_eq!(calls, expected, "{kind}");
        }
    }

    #[test]
    fn reviews_named_by_a_shop_are_not_content_on_a_page_about_one_product() {
        let page = |script: &str| {
            format!(
                "<head><script type=application/ld+json>{script}</script></head><body>\
                 <div class=product-description><p>A dynamic microphone with a built-in \
                 preamp for quiet sources.</p></div>\
                 <div id=reviews><h2>Customer reviews</h2><div class='individual-review__review'>\
                 <p>I love this mic so much, it sounds warm on my voice.</p></div></div>\
                 <div class=testimonials-carousel><p>Best purchase of the year, says Lee.</p></div>\
                 <div class=preview-pane><p>See the microphone from every side.</p></div></body>"
            )
        };
        let product = r#"{"@context":"https://schema.org","@graph":[{"@type":"BreadcrumbList"},
            {"@type":"Product","name":"Mic"}]}"#;
        let group = r#"[{"@type":"ProductGroup","name":"Mic"},{"@type":"Organization"}]"#;
        let roundup = r#"[{"@type":"NewsArticle"},{"@type":"Product","name":"Mic"}]"#;
        let two = r#"[{"@type":"Product","name":"Mic"},{"@type":"Product","name":"Stand"}]"#;
        for (script, expected) in [
            (product, [true, false, false, false, true]),
            (group, [true, false, false, false, true]),
            // A roundup's or a category's review sections are its content.
            (roundup, [true; 5]),
            (two, [true; 5]),
            ("not json", [true; 5]),
        ] {
            let dom = dom::parse(&page(script), 512);
            let sums = summarize(&dom, "example.com");
            let blocks = blocks::blocks(&dom);
            assert_eq!(blocks.len(), 5);
            let calls = calls_of(&dom, &sums, &blocks, &[0.9; 5], Rule::Blocks);
            assert_eq!(calls, expected, "{script}");
        }
    }

    #[test]
    fn readers_comments_are_not_content_but_a_discussions_posts_are() {
        let story =
            "A council voted on Tuesday to rebuild the old bridge over the river. ".repeat(8);
        let reply = "About time they fixed it, I cross it every single day.";
        // A thread: a section named for comments holding comments so named.
        let thread =
            format!("<section id=comments><div class=comment-body><p>{reply}</p></div></section>");
        // A lone element so named, holding nothing else so named.
        let lone = format!("<div class=commentOnSelection><p>{reply}</p></div>");
        let page = |script: &str, story: &str, comments: &str| {
            format!(
                "<head><script type=application/ld+json>{script}</script></head><body>\
                 <article><h1>Bridge</h1><p>{story}</p></article>{comments}</body>"
            )
        };
        let news = r#"{"@type":"NewsArticle"}"#;
        let discussion = r#"{"@type":"DiscussionForumPosting"}"#;
        let caption = "Fixed at last.";
        for (script, story, comments, expected, why) in [
            (
                news,
                story.as_str(),
                &thread,
                [true, true, false],
                "a story's comments",
            ),
            (
                discussion,
                story.as_str(),
                &thread,
                [true; 3],
                "a discussion's replies",
            ),
            (
                news,
                caption,
                &thread,
                [true, true, false],
                "a photo's comments",
            ),
            (
                news,
                story.as_str(),
                &lone,
                [true, true, false],
                "a lone section beside a story",
            ),
            (
                news,
                caption,
                &lone,
                [true; 3],
                "a lone element so named beside a caption may be the post itself",
            ),
        ] {
            let (blocks, calls) = calls_when_all_sure(&page(script, story, comments));
            assert_eq!(blocks, 3);
            assert_eq!(calls, expected, "{why}");
        }
    }

    #[test]
    fn comments_a_heading_introduces_go_beside_a_story() {
        // Movable Type's comments: no element holds them, a heading named for them comes first.
        let page = |story: &str| {
            format!(
                "<body><div id=content><h1>Bridge</h1><p>{story}</p>\
                 <h2 id=comments>Comments</h2><p>About time they fixed it.</p>\
                 <p class=posted>Posted by: Ann at May 1, 2012 9:01 AM</p></div></body>"
            )
        };
        let story =
            "A council voted on Tuesday to rebuild the old bridge over the river. ".repeat(8);
        for (story, expected, why) in [
            (
                story.as_str(),
                [true, true, false, false, false],
                "beside a story",
            ),
            (
                "Fixed at last.",
                [true; 5],
                "beside a caption, the section may be the post",
            ),
        ] {
            let (blocks, calls) = calls_when_all_sure(&page(story));
            assert_eq!(blocks, 5);
            assert_eq!(calls, expected, "{why}");
        }
        // CTV in 2008: an anchor, then each comment as loose text beside the story's
        // paragraphs, so the comments' block is owned by the story's container.
        let (blocks, calls) = calls_when_all_sure(&format!(
            "<body><div><h1>Bridge</h1><p>{story}</p><hr><a name=commentSection></a>\
             <b>Ann</b><br>About time they fixed it.<br><hr><b>Bob</b><br>Agreed.</div></body>"
        ));
        assert_eq!(blocks, 3, "title, story, the comments' loose text");
        assert_eq!(calls, [true, true, false], "loose comments after an anchor");
        // A line of code whose text is all a highlighted code comment is no reader's comment.
        let (blocks, calls) = calls_when_all_sure(&format!(
            "<body><h1>Bridge</h1><p>{story}</p>\
             <pre><span class='token comment'>// count the spans</span></pre></body>"
        ));
        assert_eq!(blocks, 3);
        assert_eq!(calls, [true; 3], "a code comment");
    }

    #[test]
    fn rules_turn_probabilities_into_calls() {
        let dom = dom::parse(PAGE, 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 5, "nav, three paragraphs, footer");
        let p = [0.1, 0.9, 0.4, 0.95, 0.2];
        let decide = |rule| calls_of(&dom, &sums, &blocks, &p, rule);
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
        // A page the model is sure of is called by the threshold.
        assert!(!unsure_page(&blocks, &p, 0.5));
        assert_eq!(decide(Rule::BlocksUnlessUnsure), decide(Rule::Blocks));
        assert_eq!(decide(Rule::RegionUnlessUnsure), decide(Rule::Region));
    }

    /// The expected F1 of keeping `keep`, by the formula the calls maximize.
    fn expected_f1(chars: &[f64], p: &[f32], keep: &[bool]) -> f64 {
        let expected: f64 = chars.iter().zip(p).map(|(c, &p)| c * f64::from(p)).sum();
        let (mut hits, mut kept) = (0.0, 0.0);
        for ((c, &p), &k) in chars.iter().zip(p).zip(keep) {
            if k {
                hits += c * f64::from(p);
                kept += c;
            }
        }
        if kept + expected == 0.0 {
            0.0
        } else {
            2.0 * hits / (kept + expected)
        }
    }

    #[test]
    fn expected_f1_calls_are_the_best_subset() {
        let dom = dom::parse(PAGE, 512);
        let blocks = blocks::blocks(&dom);
        let chars: Vec<f64> = blocks
            .stats
            .iter()
            .map(|s| f64::from(s.chars.max(1)))
            .collect();
        let n = blocks.len();
        let mut rng = crate::synth::SplitMix(0xf1);
        for _ in 0..300 {
            let p: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
            let calls = expected_f1_calls(&blocks, &p);
            let best = (0..1u32 << n)
                .map(|mask| {
                    let keep: Vec<bool> = (0..n).map(|b| mask >> b & 1 == 1).collect();
                    expected_f1(&chars, &p, &keep)
                })
                .fold(0.0, f64::max);
            // Brute force over every subset finds nothing better than the likeliest first.
            assert!(
                (expected_f1(&chars, &p, &calls) - best).abs() < 1e-9,
                "{p:?}"
            );
        }
    }

    #[test]
    fn an_unsure_page_keeps_its_middling_blocks() {
        // A listing: five items the model finds 30% likely each, one confident short line.
        let items: String = (0..5)
            .map(|i| {
                format!("<li><a href=/{i}>Item number {i} of the list, with its blurb</a></li>")
            })
            .collect();
        let dom = dom::parse(
            &format!("<body><h1>All items</h1><ul>{items}</ul></body>"),
            512,
        );
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 6);
        let p = [0.9, 0.3, 0.3, 0.3, 0.3, 0.3];
        assert!(unsure_page(&blocks, &p, 0.5));
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::BlocksUnlessUnsure);
        assert_eq!(calls, [true; 6]);
        let region = calls_of(&dom, &sums, &blocks, &p, Rule::RegionUnlessUnsure);
        assert_eq!(region, calls);
        // The threshold alone keeps the heading only.
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        assert_eq!(calls, [true, false, false, false, false, false]);
        // Items the model finds unlikely stay out: the floor keeps them from the expectation.
        let p = [0.9, 0.08, 0.08, 0.08, 0.08, 0.08];
        assert!(!unsure_page(&blocks, &p, 0.5));
    }

    #[test]
    fn a_page_half_sure_throughout_takes_the_expected_f1_bet_unless_a_block_is_confident() {
        // A listing with a heading and an intro over the threshold: the page is not unsure, so
        // the threshold alone keeps those two. The items, at 0.4, are above half the F1 the
        // page can reach (about 0.7), so the expected-F1 calls take them; the footer line, at
        // 0.1, stays out.
        let items: String = (0..6)
            .map(|i| format!("<li class=card><a href=/{i}>Item {i}, a short blurb</a></li>"))
            .collect();
        let html = format!(
            "<body><h1>All items</h1><p>{}</p><ul>{items}</ul><div>Contact us</div></body>",
            "A long introduction to the items below, of the kind a category page opens with. "
                .repeat(4)
        );
        let dom = dom::parse(&html, 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 9, "heading, intro, six items, footer line");
        let mut p = vec![0.6, 0.6, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.1];
        assert!(!unsure_page(&blocks, &p, 0.5));
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::BlocksUnlessUnsure);
        let mut expected = [true; 9];
        expected[8] = false;
        assert_eq!(calls, expected);
        assert_eq!(calls, calls_of(&dom, &sums, &blocks, &p, Rule::ExpectedF1));
        assert_eq!(
            calls_of(&dom, &sums, &blocks, &p, Rule::Blocks),
            [true, true, false, false, false, false, false, false, false]
        );
        // With a confident block the page reads as a story, and its list as links beside it,
        // though the expected-F1 calls would still take them.
        p[0] = 0.97;
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::BlocksUnlessUnsure);
        assert_eq!(calls, calls_of(&dom, &sums, &blocks, &p, Rule::Blocks));
        assert_eq!(
            calls_of(&dom, &sums, &blocks, &p, Rule::ExpectedF1),
            expected
        );
    }
}
