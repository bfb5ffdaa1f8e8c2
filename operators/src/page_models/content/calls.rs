//! How the trees' probabilities become calls.
//!
//! A threshold of ½ is the best bet on a page the model reads as a story, one confident main
//! text; on a page it is half sure of throughout (a listing, a shop's category, a manual's
//! index) the blocks that maximize the page's expected token F1 are ([`expected_f1_calls`]).
//! [`Rule`] names the shipped way and the variants `stencil train-content` measures beside it on
//! the same held-out probabilities (docs/evaluation.md). What every call then goes through
//! (tables read whole, dialogs, reviews, comments and repeats dropped) is [`super::decide`]'s.

use crate::dom::subtree::Subtree;
use crate::dom::Dom;

use super::blocks::Blocks;

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
/// on every page cost news articles (dragnet) more precision than they bring. Held out over
/// three host partitions, the gate gains most on collections and listings, some on products,
/// and loses on no group; a gate at 0.9 or 0.98 does no better (docs/evaluation.md).
pub const CONFIDENT_BLOCK: f32 = 0.95;

/// What a rule calls content, and whether a page left without content was the rule's bet.
pub(super) struct RuleCalls {
    pub calls: Vec<bool>,
    /// The expected-F1 calls kept nothing because nothing is their best bet, not because
    /// nothing passed a threshold (a miss that [`super::decide`] makes up for).
    pub nothing_is_the_bet: bool,
}

/// The calls of `rule` alone, before the rules of [`super::decide`] that every call goes through.
pub(super) fn by_rule(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    probability: &[f32],
    threshold: f32,
    rule: Rule,
) -> RuleCalls {
    let takes_the_bet = match rule {
        Rule::ExpectedF1 => true,
        Rule::BlocksUnlessUnsure => {
            !probability.iter().any(|&p| p >= CONFIDENT_BLOCK)
                || unsure_page(blocks, probability, threshold)
        }
        Rule::RegionUnlessUnsure => unsure_page(blocks, probability, threshold),
        _ => false,
    };
    if takes_the_bet {
        let calls = expected_f1_calls(blocks, probability);
        return RuleCalls {
            nothing_is_the_bet: !calls.is_empty() && !calls.contains(&true),
            calls,
        };
    }
    let own: Vec<bool> = probability.iter().map(|&p| p >= threshold).collect();
    let calls = match rule {
        // `ExpectedF1` always takes the bet, and `BlocksUnlessUnsure` here is a sure page.
        Rule::Blocks | Rule::ExpectedF1 | Rule::BlocksUnlessUnsure => own,
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
    };
    RuleCalls {
        calls,
        nothing_is_the_bet: false,
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
///
/// Keeping nothing is a candidate too: it scores 1 when the page has no main content at all
/// and 0 otherwise, so it is worth the chance that no block is content, `Π (1 − p)`. That bet
/// wins only on a page of a few blocks none of which is likely, such as a script shell
/// whose only text is its footer, where the likeliest footer line would otherwise be kept.
pub fn expected_f1_calls(blocks: &Blocks, probability: &[f32]) -> Vec<bool> {
    let chars = |b: usize| f64::from(blocks.stats[b].chars.max(1));
    let expected: f64 = (0..probability.len())
        .map(|b| f64::from(probability[b]) * chars(b))
        .sum();
    let nothing_is_content: f64 = probability
        .iter()
        .map(|&p| 1.0 - f64::from(p.clamp(0.0, 1.0)))
        .product();
    let mut order: Vec<usize> = (0..probability.len()).collect();
    order.sort_by(|&a, &b| probability[b].total_cmp(&probability[a]).then(a.cmp(&b)));
    let (mut hits, mut kept, mut best, mut best_len) = (0f64, 0f64, nothing_is_content, 0);
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
/// about half are gold there, against few on news articles (docs/evaluation.md). Such a page
/// shows itself by many middling blocks and few confident ones, so that the threshold keeps
/// little of the content expected. The expected-F1 calls are the better bet on those pages
/// only: on every page they lower the threshold to half the page's expected F1, and on news
/// articles that costs more precision than it brings (docs/evaluation.md).
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
/// (a share of 0.4 or 0.6, or no floor, moves WCXB's macro F1 little; docs/evaluation.md).
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
    use crate::page_models::content::blocks;
    use crate::page_models::content::testing::calls_of;

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
        if kept == 0.0 {
            p.iter().map(|&p| 1.0 - f64::from(p)).product()
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
        let mut kept_nothing = 0;
        for draw in 0..300 {
            // Every other page is unlikely throughout, where keeping nothing can be best.
            let scale = if draw % 2 == 0 { 1.0 } else { 0.4 };
            let p: Vec<f32> = (0..n).map(|_| scale * rng.unit()).collect();
            let calls = expected_f1_calls(&blocks, &p);
            kept_nothing += usize::from(!calls.contains(&true));
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
        // Both kinds of answer are among the draws: keeping nothing is sometimes the best.
        assert!((1..300).contains(&kept_nothing), "{kept_nothing}");
    }

    #[test]
    fn a_shell_without_a_likely_block_keeps_nothing() {
        // A script shell: nothing but its footer, the likeliest line at 0.4.
        let dom = dom::parse(
            "<body><footer><p>Help center, disputes and reports</p><h3>Sites in other \
             languages</h3><p>Russian, Portuguese, Spanish, French</p></footer></body>",
            512,
        );
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 3);
        let p = [0.05, 0.4, 0.1];
        // Keeping the heading is worth 2·0.4·c/(c + Σ p·c), about 0.49 here; keeping nothing
        // the chance that no block is content, 0.95·0.6·0.9 ≈ 0.51.
        assert_eq!(
            calls_of(&dom, &sums, &blocks, &p, Rule::BlocksUnlessUnsure),
            [false; 3]
        );
        assert_eq!(
            calls_of(&dom, &sums, &blocks, &p, Rule::ExpectedF1),
            [false; 3]
        );
        // A threshold that keeps nothing is a miss, and the likeliest blocks are kept instead.
        assert_eq!(
            calls_of(&dom, &sums, &blocks, &p, Rule::Blocks),
            [false, true, false]
        );
        // Once a block is likelier than not, keeping it is the better bet.
        let p = [0.05, 0.6, 0.1];
        assert_eq!(
            calls_of(&dom, &sums, &blocks, &p, Rule::BlocksUnlessUnsure),
            [false, true, false]
        );
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
