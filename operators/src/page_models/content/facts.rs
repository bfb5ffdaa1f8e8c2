//! Facts a product page states are never removed.
//!
//! Users extract records from cleaned text: a book's author and ISBN, a product's size and
//! weight. The gold the content model learns from follows news conventions — a byline, a
//! "details" list are not the story — so the model drops them, and on SWDE's book pages
//! (`../shared/data/swde-books`) it dropped the author or the ISBN-13 on 89% of pages. What
//! must survive is narrow and recognizable, so it is a rule, not a label: on a product page —
//! one with a short block showing a price (`$12.99`; a price inside a long paragraph, as in
//! "a $12 million deal", does not count) — a block is kept when it is
//!
//! - a short *label: value* line (a colon within its first 40 characters, at most 100
//!   characters), or a short cell or definition (`<td>`, `<dd>`, `<dt>`, `<th>`, at most 80
//!   characters), in either case not mostly link text, or
//! - the product's name (the page's first `<h1>` outside the site's templates, else its first
//!   `<h2>`) and a heading among the three blocks after it (a book's "by Author" under its
//!   title, a product's subtitle),
//!
//! and it is not inside one of the host's site-level templates (a shop's "Shipping: free"
//! banner on every page is template, not a fact of this product).

use super::blocks::Blocks;
use crate::dom::Dom;

const MAX_PRICE_BLOCK_CHARS: u32 = 60;
const MAX_LINE_CHARS: u32 = 100;
const MAX_CELL_CHARS: u32 = 80;
const MAX_HEADING_CHARS: u32 = 160;
const LABEL_WITHIN: usize = 40;
const HEADINGS_AFTER_TITLE: usize = 3;

/// Marks the facts of a page with a price as content; returns how many blocks it added.
pub fn keep_facts(
    dom: &Dom,
    blocks: &Blocks,
    site_inside: Option<&[bool]>,
    calls: &mut [bool],
) -> usize {
    let product = blocks
        .stats
        .iter()
        .any(|s| s.prices > 0 && s.chars <= MAX_PRICE_BLOCK_CHARS);
    if !product {
        return 0;
    }
    let mut added = 0;
    let is_heading = |b: usize| {
        dom.tag(blocks.owners[b] as usize)
            .is_some_and(|t| matches!(&**t, "h1" | "h2" | "h3" | "h4" | "h5" | "h6"))
    };
    let templated = |b: usize| {
        site_inside.is_some_and(|inside| {
            inside
                .get(blocks.owners[b] as usize)
                .copied()
                .unwrap_or(false)
        })
    };
    // The product's name: the first h1 outside the site's templates, else the first h2.
    let tagged = |wanted: &str| {
        (0..blocks.len()).find(|&b| {
            !templated(b)
                && dom
                    .tag(blocks.owners[b] as usize)
                    .is_some_and(|t| &**t == wanted)
        })
    };
    let title = tagged("h1").or_else(|| tagged("h2"));
    if let Some(t) = title {
        if !calls[t] && blocks.stats[t].chars <= MAX_HEADING_CHARS {
            calls[t] = true;
            added += 1;
        }
    }
    let mut text = String::new();
    for (b, stats) in blocks.stats.iter().enumerate() {
        if calls[b] || stats.chars > MAX_HEADING_CHARS {
            continue;
        }
        if templated(b) {
            continue;
        }
        let owner = blocks.owners[b] as usize;
        let mostly_links = 2 * stats.anchor_chars > stats.chars;
        let tag = dom.tag(owner).map_or("", |t| &**t);
        let heading =
            is_heading(b) && title.is_some_and(|t| b > t && b <= t + HEADINGS_AFTER_TITLE);
        let cell = matches!(tag, "td" | "dd" | "dt" | "th")
            && stats.chars <= MAX_CELL_CHARS
            && !mostly_links;
        let fact = heading
            || cell
            || (stats.chars <= MAX_LINE_CHARS && !mostly_links && {
                block_text(dom, blocks, b, &mut text);
                text.chars().take(LABEL_WITHIN).any(|c| c == ':')
            });
        if fact {
            calls[b] = true;
            added += 1;
        }
    }
    added
}

/// The block's own text (its text nodes joined).
fn block_text(dom: &Dom, blocks: &Blocks, b: usize, out: &mut String) {
    out.clear();
    let owner = blocks.owners[b] as usize;
    for i in dom.subtree(owner) {
        if blocks.of_node[i] == b as u32 {
            out.push_str(dom.visible_text(i).unwrap_or(""));
            if out.len() > 4 * MAX_HEADING_CHARS as usize {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::page_models::content::blocks::blocks;

    #[test]
    fn a_product_pages_facts_are_kept_and_a_story_is_left_alone() {
        let product = dom::parse(
            "<body><h1>A Book</h1><h3>by <a href=/a>An Author</a></h3><p>Only $9.99 today</p>\
             <ul><li><b>ISBN-13</b>: 9780316125581</li><li>Pages: 192</li>\
             <li>A very long line of the description that is no fact at all, going on and on and \
             on about the story of the book and why readers love it so much, with more words.</li></ul>\
             <div>Free shipping: always</div></body>",
            512,
        );
        let product_blocks = blocks(&product);
        let mut calls = vec![false; product_blocks.len()];
        calls[0] = true;
        let site: Vec<bool> = (0..product.len())
            .map(|i| product.tag(i).is_some_and(|t| &**t == "div"))
            .collect();
        let added = keep_facts(&product, &product_blocks, Some(&site), &mut calls);
        assert_eq!(calls, [true, true, false, true, true, false, false]);
        assert_eq!(added, 3, "the byline, the ISBN and the page count");

        let story = dom::parse(
            "<body><h1>News</h1><h3>by A Reporter</h3><p>Time: noon</p>\
             <p>The deal, worth $12 million, was signed today by both of the companies.</p></body>",
            512,
        );
        let story_blocks = blocks(&story);
        let mut calls = vec![false; story_blocks.len()];
        calls[0] = true;
        assert_eq!(
            keep_facts(&story, &story_blocks, None, &mut calls),
            0,
            "a price in a paragraph makes no product page"
        );
    }
}
