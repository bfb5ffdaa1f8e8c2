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
//! - a short *label: value* line (at most 100 characters, a label's colon within the first 40:
//!   one followed by white space, not a time's "7:28" or a URL's), whose label is not link
//!   text and which is not mostly link text unless it links to at most three things ("Author:
//!   <a>…</a>", "Publisher: <a>…</a>"; a row of tags or share buttons links to more), or
//! - a short cell or definition (`<td>`, `<dd>`, `<dt>`, `<th>`, at most 80 characters), not
//!   mostly link text, or
//! - the product's name (the page's first `<h1>` outside the site's templates, else the first
//!   block that opens like the page's `<title>`, else the first `<h2>`), and among the three
//!   blocks after it a heading or a byline ("by <a>Author</a>", in whatever element: a book's
//!   author under its title, a product's maker),
//!
//! and it is not inside one of the host's site-level templates (a shop's "Shipping: free"
//! banner on every page is template, not a fact of this product).
//!
//! The rule was first written for the one SWDE site we have, where the author sits in an `<h3>`
//! and every detail has a colon. Those pages rewritten as other shops write them (the author
//! in a `<div>` or a `<span>`, as "Author: <a>…</a>", the title in a `<div>`; the end-to-end
//! test `swde_values_survive_as_other_shops_write_them`) kept title, author and ISBN-13 on
//! 31–74% of pages before the name, byline and linked-value parts were added, and on
//! 98.5–100% after (docs/evaluation.md, ninth session). A details list without colons
//! (`<span>ISBN-13</span> <span>978…</span>`) is not recognized: rows of a short label element
//! and a value also describe sidebars and filter lists ("James Fallows 7:28 PM ET", "Coffee
//! (24)"), and keeping them cost more than it saved on the dev pages.

use super::blocks::Blocks;
use crate::dom::Dom;

const MAX_PRICE_BLOCK_CHARS: u32 = 60;
const MAX_LINE_CHARS: u32 = 100;
const MAX_CELL_CHARS: u32 = 80;
const MAX_HEADING_CHARS: u32 = 160;
const LABEL_WITHIN: usize = 40;
/// A label's value may be a link or a few ("Author: <a>A</a>; <a>B</a>"), not a row of them.
const MAX_VALUE_LINKS: u32 = 3;
const BLOCKS_AFTER_TITLE: usize = 3;
/// Words of the page's `<title>` a block must open with to be taken for the product's name.
const TITLE_WORDS: usize = 2;

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
    let mut text = String::new();
    let tagged = |wanted: &str| {
        (0..blocks.len()).find(|&b| {
            !templated(b)
                && dom
                    .tag(blocks.owners[b] as usize)
                    .is_some_and(|t| &**t == wanted)
        })
    };
    let title = tagged("h1")
        .or_else(|| opens_title(dom, blocks, &templated, &mut text))
        .or_else(|| tagged("h2"));
    if let Some(t) = title {
        if !calls[t] && blocks.stats[t].chars <= MAX_HEADING_CHARS {
            calls[t] = true;
            added += 1;
        }
    }
    for (b, stats) in blocks.stats.iter().enumerate() {
        if calls[b] || stats.chars > MAX_HEADING_CHARS || templated(b) {
            continue;
        }
        let owner = blocks.owners[b] as usize;
        let mostly_links = 2 * stats.anchor_chars > stats.chars;
        let tag = dom.tag(owner).map_or("", |t| &**t);
        let after_title = title.is_some_and(|t| b > t && b <= t + BLOCKS_AFTER_TITLE);
        let cell = matches!(tag, "td" | "dd" | "dt" | "th")
            && stats.chars <= MAX_CELL_CHARS
            && !mostly_links;
        let fact = (after_title && is_heading(b)) || cell || {
            let colon = block_text(dom, blocks, b, &mut text);
            (after_title && is_byline(&text))
                || (stats.chars <= MAX_LINE_CHARS
                    && colon.is_some_and(|(at, in_link)| {
                        at < LABEL_WITHIN
                            && !in_link
                            && (!mostly_links || stats.links <= MAX_VALUE_LINKS)
                    }))
        };
        if fact {
            calls[b] = true;
            added += 1;
        }
    }
    added
}

/// The first block outside the site's templates, at most a heading long and not mostly link
/// text, that opens like the page's `<title>`: their first [`TITLE_WORDS`] words agree, or
/// every word of the block is in the title and its first word is the title's. A shop names its
/// product in both, and either may add to the name: the title the author, a format or the
/// shop's name ("Bullet by Laurell K. Hamilton (Hardcover): booksamillion.com"), the block a
/// subtitle ("Football Champ : A Football Genius Novel").
fn opens_title(
    dom: &Dom,
    blocks: &Blocks,
    templated: &impl Fn(usize) -> bool,
    text: &mut String,
) -> Option<usize> {
    let title: Vec<String> = words(dom.title()?).collect();
    let first = title.first()?;
    let opening = &title[..title.len().min(TITLE_WORDS)];
    (0..blocks.len()).find(|&b| {
        let stats = &blocks.stats[b];
        if templated(b) || stats.chars > MAX_HEADING_CHARS || 2 * stats.anchor_chars > stats.chars {
            return false;
        }
        block_text(dom, blocks, b, text);
        let mut block = words(text).peekable();
        if block.peek() != Some(first) {
            return false;
        }
        let block: Vec<String> = block.collect();
        let agreeing = block
            .iter()
            .zip(opening)
            .take_while(|(b, t)| b == t)
            .count();
        agreeing == opening.len() || block.iter().all(|w| title.contains(w))
    })
}

/// Lower-cased runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Where a colon ends a label: followed by white space or by the end of its text node
/// ("ISBN-13: 978…", "<b>Author:</b>"), unlike a time's or a URL's ("7:28 PM", "https://").
fn label_colon(text: &str) -> Option<usize> {
    text.match_indices(':').map(|(at, _)| at).find(|&at| {
        text[at + 1..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
    })
}

/// A line naming who made the product: "by Stephenie Meyer", "By: Shure".
fn is_byline(text: &str) -> bool {
    let text = text.trim_start().as_bytes();
    text.len() > 3 && text[..2].eq_ignore_ascii_case(b"by") && matches!(text[2], b' ' | b':')
}

/// The block's own text (its text nodes joined), and its first label colon ([`label_colon`]):
/// its offset in characters and whether it is link text (a label is not a link).
fn block_text(dom: &Dom, blocks: &Blocks, b: usize, out: &mut String) -> Option<(usize, bool)> {
    out.clear();
    let owner = blocks.owners[b] as usize;
    let mut colon = None;
    let mut chars = 0;
    for i in dom.subtree(owner) {
        if blocks.of_node[i] == b as u32 {
            let text = dom.visible_text(i).unwrap_or("");
            if colon.is_none() {
                if let Some(at) = label_colon(text) {
                    colon = Some((chars + text[..at].chars().count(), blocks.in_link[i]));
                }
                chars += text.chars().count();
            }
            out.push_str(text);
            if out.len() > 4 * MAX_HEADING_CHARS as usize {
                break;
            }
        }
    }
    colon
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

    /// Each block's text, and whether `keep_facts` keeps it on a page where nothing else is content.
    fn facts_of(html: &str) -> Vec<(String, bool)> {
        let page = dom::parse(html, 512);
        let page_blocks = blocks(&page);
        let mut calls = vec![false; page_blocks.len()];
        keep_facts(&page, &page_blocks, None, &mut calls);
        let mut text = String::new();
        (0..page_blocks.len())
            .map(|b| {
                block_text(&page, &page_blocks, b, &mut text);
                (text.trim().to_string(), calls[b])
            })
            .collect()
    }

    #[test]
    fn a_byline_under_the_name_is_kept_in_any_element() {
        let facts = facts_of(
            "<body><h1>A Book</h1><div class=author>by <a href=/a>An Author</a></div>\
             <p>$9.99</p><p>Buy now</p><div>by <a href=/b>Another Book's Author</a></div></body>",
        );
        assert_eq!(
            facts,
            [
                ("A Book".to_string(), true),
                ("by An Author".to_string(), true),
                ("$9.99".to_string(), false),
                ("Buy now".to_string(), false),
                ("by Another Book's Author".to_string(), false),
            ],
            "the byline right under the name, not one further down"
        );
    }

    #[test]
    fn a_label_may_have_a_linked_value_but_a_row_of_links_is_no_fact() {
        let facts = facts_of(
            "<body><h1>A Book</h1><p>$9.99</p>\
             <div>Author: <a href=/a>An Author</a></div>\
             <div><a href=/s>Sale: 50% off everything</a></div>\
             <div>Share: <a href=/f>Facebook</a> <a href=/t>Twitter</a> <a href=/p>Pinterest</a> \
             <a href=/m>Email</a></div>\
             <div><a href=/j>James Fallows</a> 7:28 PM</div></body>",
        );
        let kept: Vec<&str> = facts
            .iter()
            .filter(|(_, kept)| *kept)
            .map(|(text, _)| text.as_str())
            .collect();
        assert_eq!(kept, ["A Book", "Author: An Author"]);
    }

    #[test]
    fn without_h1_the_name_is_the_block_that_opens_like_the_title() {
        let facts = facts_of(
            "<head><title>Football Champ by Tim Green (Paperback): shop.example</title></head>\
             <body><div>Welcome to our shop</div>\
             <div class=name>Football Champ : A Football Genius Novel</div>\
             <div>by <a href=/a>Tim Green</a></div><p>$6.99</p><p>In stock</p>\
             <p>Ships tomorrow</p><h2>Customers also bought</h2></body>",
        );
        let kept: Vec<&str> = facts
            .iter()
            .filter(|(_, kept)| *kept)
            .map(|(text, _)| text.as_str())
            .collect();
        assert_eq!(
            kept,
            ["Football Champ : A Football Genius Novel", "by Tim Green"]
        );
        let one_word = facts_of(
            "<head><title>Bullet by Laurell K. Hamilton (Hardcover)</title></head>\
             <body><div>Bullets and more</div><div>Bullet (Hardcover)</div><p>$6.99</p></body>",
        );
        assert_eq!(one_word[1], ("Bullet (Hardcover)".to_string(), true));
        assert!(!one_word[0].1, "its first word is not the title's");
    }

    #[test]
    fn a_label_colon_is_followed_by_a_space_or_ends_the_text() {
        assert_eq!(label_colon("ISBN-13: 978"), Some(7));
        assert_eq!(label_colon("Author:"), Some(6));
        assert_eq!(label_colon("at 7:28 PM, see: this"), Some(15));
        assert_eq!(label_colon("7:28 PM"), None);
        assert_eq!(label_colon("https://example.com"), None);
        assert!(is_byline("  by Stephenie Meyer"));
        assert!(is_byline("By: Shure"));
        assert!(!is_byline("Bygone days"));
        assert!(!is_byline("by"));
    }
}
