//! Facts a product page states are never removed.
//!
//! Users extract records from cleaned text: a book's author and ISBN, a product's size and
//! weight. The gold the content model learns from follows news conventions — a byline, a
//! "details" list are not the story — so the model drops them: on SWDE's book pages
//! (`../shared/data/swde-books`), left to itself, it drops the author or the ISBN-13 on most
//! pages (docs/evaluation.md). What must survive is narrow and recognizable, so it is a rule,
//! not a label: on a product page [`keep_facts`] keeps the product's name and byline, *label:
//! value* lines, details lists and short cells and definitions, unless they are the host's
//! site-level template or the fields of repeated item cards.
//!
//! SWDE's one book site sets the author in an `<h3>` and every detail with a colon. Other shops
//! set the author in a `<div>` or a `<span>` or as "Author: <a>…</a>", the title in a `<div>`,
//! and the details as lines of one `<p>`, as labels and values in sibling elements, or as rows
//! without colons; each part of the rule is there for one of those forms, and the end-to-end
//! test `swde_values_survive_as_other_shops_write_them` rewrites SWDE's pages in all of them
//! (docs/evaluation.md).

use std::cell::OnceCell;

use crate::dom::subtree::Subtree;
use crate::dom::{Dom, NodeKind};
use crate::page_models::content::blocks::{visible_chars, Blocks, NONE};
use html5ever::local_name;

const MAX_PRICE_BLOCK_CHARS: u32 = 60;
pub(super) const MAX_LINE_CHARS: u32 = 100;
pub(super) const MAX_CELL_CHARS: u32 = 80;
/// At most this many elements may wrap a cell's text for it to be read as the cell's.
const WRAPPERS: usize = 2;
const MAX_HEADING_CHARS: u32 = 160;
/// A block of several *label: value* lines (`<p>ISBN: …<br>Publisher: …<br>…</p>`) up to this
/// long is a details list.
pub(super) const MAX_DETAILS_CHARS: u32 = 1000;
const LABEL_WITHIN: usize = 40;
/// A label's value may be a link or a few ("Author: <a>A</a>; <a>B</a>"), not a row of them.
pub(super) const MAX_VALUE_LINKS: u32 = 3;
const BLOCKS_AFTER_TITLE: usize = 3;
/// On a page declaring one product, a label that opens this many short blocks is a field of
/// repeated item cards (a carousel's "Sold By:", a currency switcher's "USD:" under every
/// product), not a fact of the product: its own details name each thing once. (A size chart's
/// rows, "XS - XL:" under weight, length and fit, recur up to three times.)
const REPEATED_LABEL: usize = 4;
/// Words of the page's `<title>` a block must open with to be taken for the product's name.
const TITLE_WORDS: usize = 2;

/// Marks the facts of a page with a price as content; returns how many blocks it added.
/// `one_product`: the page's JSON-LD declares it is about one product
/// ([`super::reviews::Declared::one_product`]).
///
/// A product page is one with a short block showing a price (`$12.99`; a price inside a long
/// paragraph, as in "a $12 million deal", does not count). On it a block is kept when it is
///
/// - a short *label: value* line (at most 100 characters, a label's colon within the first 40:
///   one followed by white space, not a time's "7:28" or a URL's), whose label is not link
///   text and which is not mostly link text unless it links to at most three things ("Author:
///   <a>…</a>", "Publisher: <a>…</a>"; a row of tags or share buttons links to more), or
/// - a details list set as lines of one block (`<p>ISBN: …<br>Publisher: …</p>`, at most
///   1,000 characters, not mostly link text): at least two lines, and at least half of them,
///   are such *label: value* lines, or
/// - the value right after a label alone on its line (`<div>ISBN-13:</div><div>978…</div>`,
///   the value at most 100 characters and linking to at most three things), with its label
///   even when the label, the same on every page, is a site-level template, or
/// - a short cell or definition (`<td>`, `<dd>`, `<dt>`, `<th>`, at most 80 characters), not
///   mostly link text; a `<dt>`, `<dd>` or `<th>` also when an element or two of its own wrap
///   its text (`<dt><div>Weight</div></dt>`), or
/// - a row of a details list set without colons, a label and its value in two elements and
///   no other text (`<li><span>ISBN-13</span> <span>978…</span></li>`, `<tr><td><div>Weight
///   </div></td><td><div>2 lb</div></td></tr>`): three or more such rows under one parent, no
///   two with the same label, the label a few words and no link, the value a line long and
///   not mostly link text, no form control in the row, or
/// - the product's name (the page's first `<h1>` outside the site's templates, else the first
///   block that opens like the page's `<title>`, else the first `<h2>`), and among the three
///   blocks after it a heading or a byline ("by <a>Author</a>", in whatever element: a book's
///   author under its title, a product's maker),
///
/// and, but for such a label, it is not inside one of the host's site-level templates (a
/// shop's "Shipping: free" banner on every page is template, not a fact of this product).
///
/// On a page whose JSON-LD declares one product, a short *label: value* line whose label opens
/// four or more of the page's short blocks is not kept for it: that is a field of repeated item
/// cards — "Sold By:" under every product of a carousel, a currency switcher's "USD:", "GBP:"
/// under each price (goshopia.com's cards hold about as many such lines as its gold has words)
/// — while a product's own details name each thing once. Only there: on a collection, a roundup
/// article or an API reference the same repeated labels are mostly gold.
pub fn keep_facts(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    site_inside: Option<&[bool]>,
    one_product: bool,
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
            .is_some_and(crate::dom::is_heading)
    };
    let templated = |b: usize| in_template(site_inside, blocks.owners[b] as usize);
    // Built on first use: many pages with a price need no block's text.
    let texts = OnceCell::new();
    let texts = || texts.get_or_init(|| BlockTexts::of(dom, blocks));
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
        .or_else(|| opens_title(dom, blocks, texts(), &templated, &mut text))
        .or_else(|| tagged("h2"));
    if let Some(t) = title {
        if !calls[t] && blocks.stats[t].chars <= MAX_HEADING_CHARS {
            calls[t] = true;
            added += 1;
        }
    }
    // Built only on a page declaring one product: labels that recur there are item cards'.
    let repeated_labels = if one_product {
        repeated_labels(blocks, texts(), &mut text)
    } else {
        Vec::new()
    };
    let repeated = |text: &str| {
        !repeated_labels.is_empty()
            && label_of(text).is_some_and(|l| repeated_labels.binary_search(&l).is_ok())
    };
    // Whether the block before is a label alone on its line ("ISBN-13:"): shops that set a
    // label and its value in two elements side by side make them two blocks.
    let mut label_before = false;
    let label_alone = |read: &Read, text: &str| {
        read.lines == 1 && read.labels == 1 && text.trim_end().ends_with(':')
    };
    for (b, stats) in blocks.stats.iter().enumerate() {
        let value_of_label = std::mem::take(&mut label_before);
        if stats.chars > MAX_DETAILS_CHARS {
            continue;
        }
        let may_be_label_alone = stats.stops > 0 && stats.chars as usize <= LABEL_WITHIN;
        // A label the same on every page of the host is a site-level template, but still the
        // label of the value after it.
        if calls[b] || templated(b) {
            label_before = may_be_label_alone && label_alone(&texts().read(b, &mut text), &text);
            continue;
        }
        let owner = blocks.owners[b] as usize;
        let mostly_links = 2 * stats.anchor_chars > stats.chars;
        let tag = dom.tag(owner).map_or("", |t| &**t);
        let after_title = title.is_some_and(|t| b > t && b <= t + BLOCKS_AFTER_TITLE);
        let cell = stats.chars <= MAX_CELL_CHARS
            && !mostly_links
            && (matches!(tag, "td" | "dd" | "dt" | "th") || wrapped_in_cell(dom, blocks, b));
        // A label's value may be a link or a few, not a row of them.
        let few_links = !mostly_links || stats.links <= MAX_VALUE_LINKS;
        let value = value_of_label && stats.chars <= MAX_LINE_CHARS && few_links;
        // Only a block with a stop mark can hold a label's colon: most blocks are not read.
        let may_be_byline = after_title && stats.chars <= MAX_HEADING_CHARS;
        let may_have_labels = stats.stops > 0 && (stats.chars <= MAX_LINE_CHARS || !mostly_links);
        let fact = (may_be_byline && is_heading(b))
            || cell
            || value
            || ((may_be_byline || may_have_labels) && {
                let read = texts().read(b, &mut text);
                label_before = may_be_label_alone && label_alone(&read, &text);
                (may_be_byline && is_byline(&text))
                    || (stats.chars <= MAX_LINE_CHARS
                        && read.labels >= 1
                        && few_links
                        && !repeated(&text))
                    || (read.labels >= 2 && 2 * read.labels >= read.lines && !mostly_links)
            });
        if fact {
            calls[b] = true;
            added += 1;
            if value && !calls[b - 1] {
                calls[b - 1] = true;
                added += 1;
            }
        }
    }
    added += keep_label_value_rows(dom, sums, blocks, site_inside, calls);
    added
}

/// Rows of a details list set without colons: at least this many under one parent.
const MIN_ROWS: usize = 3;
/// A label without a colon is a name, not a phrase: "ISBN-13", "Overall Weight".
const MAX_LABEL_WORDS: u32 = 5;

/// A row of a details list set without a colon: an element holding a label and its value in
/// two elements of their own and no other text.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    parent: usize,
    row: usize,
    label: usize,
    value: usize,
}

/// Element `row` as a [`Row`] (`<li><span>ISBN-13</span> <span>978…</span></li>`,
/// `<tr><td><div>Weight</div></td><td><div>2 lb</div></td></tr>`), if it is one: its label is
/// short, a few words and no link; its value is a line long, not mostly link text and links
/// to at most three things; and it holds no form control. A related-stories list ("23 Mar
/// 2012 | <a>headline</a>"), a menu of links with their blurbs and a shop's filters ("Keying
/// Type | ☐ Keyed Alike") are made of rows of two elements too. A linked value is lost here
/// (an author set as "Author | <a>…</a>" survives only as the byline under the title or with
/// a colon): allowing one when the label has no digit keeps menus' groups ("Learn | <a>Blog
/// </a>") on the dev pages (docs/evaluation.md).
fn row_of(dom: &Dom, sums: &[Subtree], row: usize) -> Option<Row> {
    let mut parts = [0usize; 2];
    let mut count = 0;
    for child in dom.children(row) {
        match dom.node(child).kind {
            // Text of the row's own, beside the two elements: not a label and a value alone.
            NodeKind::Text { visible: true, .. }
                if dom
                    .visible_text(child)
                    .is_some_and(|t| !t.trim().is_empty()) =>
            {
                return None;
            }
            NodeKind::Element(_) if sums[child].text_chars > 0 => {
                if count == parts.len() {
                    return None;
                }
                parts[count] = child;
                count += 1;
            }
            _ => {}
        }
    }
    let [label, value] = parts;
    let (label_sums, value_sums) = (&sums[label], &sums[value]);
    let shaped = count == parts.len()
        && label_sums.text_chars as usize <= LABEL_WITHIN
        && label_sums.words <= MAX_LABEL_WORDS
        && label_sums.anchor_text_chars == 0
        && value_sums.text_chars <= MAX_LINE_CHARS
        && value_sums.links <= MAX_VALUE_LINKS
        && 2 * value_sums.anchor_text_chars <= value_sums.text_chars;
    let form = || {
        dom.subtree(row).any(|i| {
            dom.tag(i).is_some_and(|t| {
                matches!(
                    *t,
                    local_name!("input")
                        | local_name!("select")
                        | local_name!("textarea")
                        | local_name!("button")
                        | local_name!("label")
                )
            })
        })
    };
    (shaped && !form()).then_some(Row {
        parent: dom.parent(row)?,
        row,
        label,
        value,
    })
}

/// Keeps the blocks of details lists set without colons: at least [`MIN_ROWS`] [`Row`]s under
/// one parent, no two with the same label (item cards repeat theirs: "Price", "Price", …),
/// each row whose value is outside the site's templates (its label may be one). Returns how
/// many blocks it added. Narrowed so ([`row_of`]), the rows keep the ISBN-13 of SWDE's pages
/// set this way and leave the dev pages' held-out macro F1 about where it is
/// (docs/evaluation.md).
fn keep_label_value_rows(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    site_inside: Option<&[bool]>,
    calls: &mut [bool],
) -> usize {
    let mut rows: Vec<Row> = (0..dom.len())
        .filter(|&i| dom.element(i).is_some())
        .filter_map(|i| row_of(dom, sums, i))
        .collect();
    // By parent, then in document order.
    rows.sort_unstable();
    let mut added = 0;
    for list in rows.chunk_by(|a, b| a.parent == b.parent) {
        if list.len() < MIN_ROWS || labels_repeat(dom, list) {
            continue;
        }
        for row in list
            .iter()
            .filter(|row| !in_template(site_inside, row.value))
        {
            // The row's own blocks: not one that holds the row inside a longer text.
            let within = dom.subtree(row.row);
            for i in within.clone() {
                let b = blocks.of_node[i];
                if b != NONE
                    && within.contains(&(blocks.owners[b as usize] as usize))
                    && !calls[b as usize]
                {
                    calls[b as usize] = true;
                    added += 1;
                }
            }
        }
    }
    added
}

/// Whether `node` is inside one of the host's site-level templates (never, without statistics).
pub(super) fn in_template(site_inside: Option<&[bool]>, node: usize) -> bool {
    site_inside.is_some_and(|inside| inside.get(node).copied().unwrap_or(false))
}

/// Whether two of the rows have the same label (case and surrounding white space aside).
fn labels_repeat(dom: &Dom, rows: &[Row]) -> bool {
    let mut labels: Vec<String> = rows
        .iter()
        .map(|row| {
            let text: String = dom
                .subtree(row.label)
                .filter_map(|i| dom.visible_text(i))
                .collect();
            text.trim().to_lowercase()
        })
        .collect();
    labels.sort_unstable();
    labels.windows(2).any(|pair| pair[0] == pair[1])
}

/// Whether block `b` is all that a definition or a header cell holds, wrapped in an element or
/// two (`<dt><div>Overall Weight</div></dt><dd>58 lb.</dd>`). Shops style a label in a `<div>`
/// or `<span>` of its own, which then owns the block, so without this the label is dropped
/// while the value beside it is kept (wayfair.com's specifications). A `<td>` is left out: old
/// news pages are laid out in tables, and their wrapped `<td>`s are boxes ("Who's online"), not
/// data; reading them as cells costs L3S-GN1's pages F1 (docs/evaluation.md).
fn wrapped_in_cell(dom: &Dom, blocks: &Blocks, b: usize) -> bool {
    let owner = blocks.owners[b] as usize;
    // Tags first: few blocks have such a cell above them, and only theirs is walked.
    let cell = dom
        .ancestors_or_self(owner)
        .skip(1)
        .take(WRAPPERS)
        .find(|&a| {
            dom.tag(a).is_some_and(|t| {
                *t == local_name!("dd") || *t == local_name!("dt") || *t == local_name!("th")
            })
        });
    cell.is_some_and(|cell| {
        dom.subtree(cell).all(|i| {
            let of = blocks.of_node[i];
            of == NONE || of as usize == b
        })
    })
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
    texts: &BlockTexts,
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
        texts.read(b, text);
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

/// The labels, sorted, that open at least [`REPEATED_LABEL`] of a page's short blocks.
fn repeated_labels(blocks: &Blocks, texts: &BlockTexts, text: &mut String) -> Vec<String> {
    let mut labels: Vec<String> = (0..blocks.len())
        .filter(|&b| blocks.stats[b].stops > 0 && blocks.stats[b].chars <= MAX_LINE_CHARS)
        .filter_map(|b| {
            texts.read(b, text);
            label_of(text)
        })
        .collect();
    labels.sort_unstable();
    labels
        .chunk_by(|a, b| a == b)
        .filter(|run| run.len() >= REPEATED_LABEL)
        .map(|run| run[0].clone())
        .collect()
}

/// The label a text opens with ([`label_colon`] within [`LABEL_WITHIN`] characters),
/// trimmed and lower-cased.
fn label_of(text: &str) -> Option<String> {
    let label = text[..label_colon(text)?].trim();
    (!label.is_empty() && label.chars().count() < LABEL_WITHIN).then(|| label.to_lowercase())
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

/// Each block's own text nodes in document order, and where lines break between them. A
/// block's owner may hold other blocks (`<div>Intro <p>…</p> tail</div>`), so reading its text
/// by walking the owner's subtree would visit theirs too, on every block of a deep page.
pub(super) struct BlockTexts<'a> {
    dom: &'a Dom,
    blocks: &'a Blocks,
    /// Block `b`'s text nodes are `nodes[start[b]..start[b + 1]]`, each with the number of
    /// line breaks (`<br>` elements and block owners) before it in the document: two text nodes
    /// of a block are on different lines when their counts differ.
    start: Vec<u32>,
    nodes: Vec<(u32, u32)>,
}

/// What one block's text says to the facts rule.
#[derive(Debug, Default)]
pub(super) struct Read {
    /// Lines of text, split where a `<br>` or a nested block comes between two text nodes.
    pub lines: u32,
    /// Lines that are *label: value* lines: at most [`MAX_LINE_CHARS`], a label's colon
    /// ([`label_colon`]) within the first [`LABEL_WITHIN`] characters and not in link text.
    pub labels: u32,
}

impl<'a> BlockTexts<'a> {
    pub(super) fn of(dom: &'a Dom, blocks: &'a Blocks) -> BlockTexts<'a> {
        let mut start = vec![0u32; blocks.len() + 1];
        for &b in blocks.of_node.iter().filter(|&&b| b != NONE) {
            start[b as usize + 1] += 1;
        }
        for b in 0..blocks.len() {
            start[b + 1] += start[b];
        }
        let mut owns_block = vec![false; dom.len()];
        for &owner in &blocks.owners {
            owns_block[owner as usize] = true;
        }
        let mut next = start.clone();
        let mut nodes = vec![(0u32, 0u32); start[blocks.len()] as usize];
        let mut breaks = 0u32;
        for (i, &b) in blocks.of_node.iter().enumerate() {
            if b != NONE {
                nodes[next[b as usize] as usize] = (i as u32, breaks);
                next[b as usize] += 1;
            } else if owns_block[i] || dom.tag(i).is_some_and(|t| *t == local_name!("br")) {
                breaks += 1;
            }
        }
        BlockTexts {
            dom,
            blocks,
            start,
            nodes,
        }
    }

    /// Block `b`'s text (its text nodes joined) into `out`, and its lines.
    pub(super) fn read(&self, b: usize, out: &mut String) -> Read {
        out.clear();
        let mut read = Read::default();
        let nodes = &self.nodes[self.start[b] as usize..self.start[b + 1] as usize];
        // The line being read: its characters, whether it has a label's colon, and the line
        // breaks before the text node read last.
        let (mut chars, mut labelled, mut previous) = (0usize, false, None);
        let end_line = |read: &mut Read, chars: usize, labelled: bool| {
            read.lines += 1;
            read.labels += u32::from(labelled && chars <= MAX_LINE_CHARS as usize);
        };
        for &(i, breaks) in nodes {
            let i = i as usize;
            let text = self.dom.visible_text(i).unwrap_or("");
            if previous.is_some_and(|p| p != breaks) {
                end_line(&mut read, chars, labelled);
                (chars, labelled) = (0, false);
            }
            if let Some(at) = label_colon(text) {
                let at = chars + visible_chars(&text[..at]) as usize;
                labelled |= at < LABEL_WITHIN && !self.blocks.in_link[i];
            }
            chars += visible_chars(text) as usize;
            if out.len() <= 4 * MAX_DETAILS_CHARS as usize {
                out.push_str(text);
            }
            previous = Some(breaks);
        }
        if previous.is_some() {
            end_line(&mut read, chars, labelled);
        }
        read
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::dom::subtree::summarize;
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
        let added = keep_facts(
            &product,
            &summarize(&product, "example.com"),
            &product_blocks,
            Some(&site),
            false,
            &mut calls,
        );
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
            keep_facts(
                &story,
                &summarize(&story, "example.com"),
                &story_blocks,
                None,
                false,
                &mut calls
            ),
            0,
            "a price in a paragraph makes no product page"
        );
    }

    /// Each block's text, and whether `keep_facts` keeps it on a page where nothing else is
    /// content.
    fn facts_of(html: &str) -> Vec<(String, bool)> {
        facts_declared(html, false)
    }

    /// The texts of the blocks [`facts_of`] or [`facts_declared`] keeps.
    fn kept(facts: Vec<(String, bool)>) -> Vec<String> {
        facts
            .into_iter()
            .filter(|(_, kept)| *kept)
            .map(|(text, _)| text)
            .collect()
    }

    /// [`facts_of`] on a page that does or does not declare one product.
    fn facts_declared(html: &str, one_product: bool) -> Vec<(String, bool)> {
        let page = dom::parse(html, 512);
        let page_blocks = blocks(&page);
        let mut calls = vec![false; page_blocks.len()];
        keep_facts(
            &page,
            &summarize(&page, "example.com"),
            &page_blocks,
            None,
            one_product,
            &mut calls,
        );
        let texts = BlockTexts::of(&page, &page_blocks);
        let mut text = String::new();
        (0..page_blocks.len())
            .map(|b| {
                texts.read(b, &mut text);
                (text.trim().to_string(), calls[b])
            })
            .collect()
    }

    #[test]
    fn labels_repeated_on_item_cards_are_no_facts_of_a_declared_product() {
        let card = |n: u32| format!("<li><a href=/p{n}>Dress {n}</a><p>Sold By: Shop {n}</p></li>");
        let html = format!(
            "<body><h1>A Dress</h1><p>$99.00</p><p>Sold By: Our Shop</p><p>Fabric: hemp</p>\
             <ul>{}</ul></body>",
            (1..=3).map(card).collect::<String>()
        );
        let every_line = ["A Dress", "Sold By: Our Shop", "Fabric: hemp"]
            .into_iter()
            .map(String::from)
            .chain((1..=3).map(|n| format!("Sold By: Shop {n}")))
            .collect::<Vec<_>>();
        assert_eq!(kept(facts_declared(&html, false)), every_line);
        assert_eq!(
            kept(facts_declared(&html, true)),
            ["A Dress", "Fabric: hemp"],
            "a label on four lines is a field of the cards, the product's own line included"
        );
        let three_cards_less_one = html.replace(&card(3), "");
        assert_eq!(
            kept(facts_declared(&three_cards_less_one, true)).len(),
            5,
            "a label on three lines is still a fact"
        );
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
        let kept = kept(facts_of(
            "<body><h1>A Book</h1><p>$9.99</p>\
             <div>Author: <a href=/a>An Author</a></div>\
             <div><a href=/s>Sale: 50% off everything</a></div>\
             <div>Share: <a href=/f>Facebook</a> <a href=/t>Twitter</a> <a href=/p>Pinterest</a> \
             <a href=/m>Email</a></div>\
             <div><a href=/j>James Fallows</a> 7:28 PM</div></body>",
        ));
        assert_eq!(kept, ["A Book", "Author: An Author"]);
    }

    #[test]
    fn without_h1_the_name_is_the_block_that_opens_like_the_title() {
        let kept = kept(facts_of(
            "<head><title>Football Champ by Tim Green (Paperback): shop.example</title></head>\
             <body><div>Welcome to our shop</div>\
             <div class=name>Football Champ : A Football Genius Novel</div>\
             <div>by <a href=/a>Tim Green</a></div><p>$6.99</p><p>In stock</p>\
             <p>Ships tomorrow</p><h2>Customers also bought</h2></body>",
        ));
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

    #[test]
    fn a_block_of_label_lines_is_a_details_list() {
        let facts = facts_of(
            "<body><h1>A Book</h1><p>$9.99</p>\
             <p><b>ISBN-13:</b> 9780316125581<br><b>Publisher:</b> Hachette Book Group<br>\
             <b>Date:</b> June 2010<br><b>Page Count:</b> 192<br>Hardcover, first edition, \
             with a jacket designed by the author's long-time collaborator in New York</p>\
             <p>Posted by: A Reader<br>What a wonderful book it was to read, from the first \
             page to the last one, and I will read it again<br>and again and again next summer \
             when the days are long and the evenings are warm and quiet</p></body>",
        );
        let kept: Vec<bool> = facts.iter().map(|(_, kept)| *kept).collect();
        assert_eq!(
            kept,
            [true, false, true, false],
            "four label lines of five keep the details; one of three is no list"
        );
    }

    #[test]
    fn a_blocks_text_and_lines_are_its_own() {
        let page = dom::parse(
            "<body><div>Intro: one<br>two <p>A nested paragraph: its own block</p> tail</div></body>",
            512,
        );
        let page_blocks = blocks(&page);
        let texts = BlockTexts::of(&page, &page_blocks);
        let mut text = String::new();
        let read = texts.read(0, &mut text);
        assert_eq!(text, "Intro: onetwo  tail");
        assert_eq!(
            (read.lines, read.labels),
            (3, 1),
            "split at the <br> and the <p>"
        );
        let read = texts.read(1, &mut text);
        assert_eq!(text, "A nested paragraph: its own block");
        assert_eq!((read.lines, read.labels), (1, 1));
        assert_eq!(visible_chars("\n\t  ISBN-13:  978 "), 12);
    }

    #[test]
    fn a_value_set_apart_from_its_label_is_kept_with_it() {
        let page = dom::parse(
            "<body><h1>A Book</h1><p>$9.99</p>\
             <div class=row><div class=label>ISBN-13:</div><div>9780316125581</div></div>\
             <div class=row><div class=label>Publisher:</div><div>Hachette</div></div>\
             <div>Questions?</div><div>Call us any time, day or night</div></body>",
            512,
        );
        let page_blocks = blocks(&page);
        let mut calls = vec![false; page_blocks.len()];
        // The labels are the same on every page of the host: site-level templates.
        let site: Vec<bool> = (0..page.len())
            .map(|i| page.classes(i).any(|c| c == "label"))
            .collect();
        keep_facts(
            &page,
            &summarize(&page, "example.com"),
            &page_blocks,
            Some(&site),
            false,
            &mut calls,
        );
        assert_eq!(
            calls,
            [true, false, true, true, true, true, false, false],
            "each value and its label; a question is no label"
        );
    }

    #[test]
    fn a_cell_styled_in_an_element_of_its_own_is_still_a_cell() {
        let kept = kept(facts_of(
            "<body><h1>A Chair</h1><p>$199.00</p>\
             <dl><dt><div class=label>Overall Weight</div></dt><dd>58 lb.</dd>\
             <dt><div><p>Seat Material</p></div></dt><dd>Vinyl</dd></dl>\
             <table><tr><th><div>Warranty</div></th><td>5 years</td></tr></table>\
             <table><tr><td><div>Who's online</div></td></tr></table>\
             <dl><dt><div>Care</div><div>Wipe clean</div></dt></dl></body>",
        ));
        assert_eq!(
            kept,
            [
                "A Chair",
                "Overall Weight",
                "58 lb.",
                "Seat Material",
                "Vinyl",
                "Warranty",
                "5 years"
            ],
            "a label in an element or two inside <dt> or <th> is kept with its value; a layout \
             table's <td> wrapper and a <dt> holding two texts are not cells"
        );
    }

    #[test]
    fn rows_of_a_label_and_a_value_without_colons_are_a_details_list() {
        let kept = kept(facts_of(
            "<body><h1>A Book</h1><p>$9.99</p>\
             <ul><li><span>ISBN-13</span> <span>9780316125581</span></li>\
             <li><span>Publisher</span> <span>Hachette</span></li>\
             <li><span>Pages</span> <span>192</span></li></ul>\
             <table><tr><td><div>Weight</div></td><td><div>2 lb</div></td></tr>\
             <tr><td><div>Width</div></td><td><div>6 in</div></td></tr>\
             <tr><td><div>Height</div></td><td><div>9 in</div></td></tr></table></body>",
        ));
        assert_eq!(
            kept,
            [
                "A Book",
                // `facts_of` joins a block's text nodes as they are (the white space between
                // them is no text node of the block); the cleaned text keeps the gap.
                "ISBN-139780316125581",
                "PublisherHachette",
                "Pages192",
                "Weight",
                "2 lb",
                "Width",
                "6 in",
                "Height",
                "9 in"
            ],
            "a row is one block (inline label and value) or two (a label and a value in blocks \
             of their own)"
        );
    }

    #[test]
    fn rows_of_links_filters_and_item_cards_are_no_details_list() {
        let facts = facts_of(
            "<body><h1>A Book</h1><p>$9.99</p>\
             <ul><li><span>23 Mar</span> <a href=/a>A headline</a></li>\
             <li><span>24 Mar</span> <a href=/b>Another headline</a></li>\
             <li><span>25 Mar</span> <a href=/c>A third headline</a></li></ul>\
             <ul><li><span>Keying Type</span> <span><input type=checkbox>Keyed</span></li>\
             <li><span>Size</span> <span><input type=checkbox>Large</span></li>\
             <li><span>Color</span> <span><input type=checkbox>Red</span></li></ul>\
             <ul><li><span>Price</span> <span>10</span></li><li><span>Price</span> <span>12</span></li>\
             <li><span>Price</span> <span>14</span></li></ul>\
             <ul><li><span>Author</span> <span>Ann</span></li>\
             <li><span>Format</span> <span>Paperback</span></li></ul>\
             <p><span>Ships</span> <span>today</span> and the rest of a long sentence.</p></body>",
        );
        assert_eq!(
            kept(facts),
            ["A Book"],
            "headlines after dates, a shop's filters, repeated labels, two rows alone and a row \
             inside a sentence are left to the model"
        );
    }

    #[test]
    fn a_row_whose_value_is_the_same_on_every_page_is_no_fact() {
        let page = dom::parse(
            "<body><h1>A Book</h1><p>$9.99</p>\
             <ul><li><span class=l>ISBN-13</span> <span>9780316125581</span></li>\
             <li><span class=l>Publisher</span> <span class=site>Our own press</span></li>\
             <li><span class=l>Pages</span> <span>192</span></li></ul></body>",
            512,
        );
        let page_blocks = blocks(&page);
        let mut calls = vec![false; page_blocks.len()];
        let site: Vec<bool> = (0..page.len())
            .map(|i| page.classes(i).any(|c| c == "site" || c == "l"))
            .collect();
        let sums = summarize(&page, "example.com");
        keep_facts(&page, &sums, &page_blocks, Some(&site), false, &mut calls);
        assert_eq!(
            calls,
            [true, false, true, false, true],
            "the ISBN and page count rows, not the publisher the host names on every page"
        );
    }
}
