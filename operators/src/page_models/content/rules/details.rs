//! A details group is one record: kept whole or dropped whole.

use super::facts::{
    BlockTexts, MAX_CELL_CHARS, MAX_DETAILS_CHARS, MAX_LINE_CHARS, MAX_VALUE_LINKS,
};
use crate::dom::Dom;
use crate::page_models::content::blocks::{Blocks, NONE};

/// Calls every details group ([`groups`]) as one unit: a group of which any block is called
/// content is content whole.
///
/// The trees call text blocks, but a product's details, a book's bibliographic data or a
/// specification are one record set in several blocks: label/value lines in sibling cells of a
/// row (`<td><b>Format:</b> Paperback<br>…</td><td><b>ISBN-13:</b> 978…<br>…</td>`), the rows
/// of a table or a list, a `<dl>`'s terms and definitions, labels and values in `<div>`s side
/// by side. Called block by block, the cell that reads like prose is kept and the one of codes
/// and a linked availability line is dropped, and a record with half its fields is worse for
/// whoever extracts records from the text than the whole record or none: so a group is content
/// when any of its blocks is. (`<br>` lines of one element are one block already.) Held out on the dev sets the unit moves few pages (docs/evaluation.md); it is
/// there for the records, whatever the page's kind, where [`super::facts`] reads only product
/// pages.
pub(super) fn keep_details_whole(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) {
    // Only a page with both a kept and a dropped block that may hold a label has work here.
    let may_label = |b: usize| {
        let s = &blocks.stats[b];
        s.chars <= MAX_DETAILS_CHARS
            && (s.stops > 0 || tag_is(dom, blocks.owners[b] as usize, &["dt", "th"]))
    };
    if !(0..blocks.len()).any(|b| may_label(b) && calls[b]) || !(0..blocks.len()).any(|b| !calls[b])
    {
        return;
    }
    for group in groups(dom, blocks) {
        if group.iter().any(|&b| calls[b]) {
            for &b in &group {
                calls[b] = true;
            }
        }
    }
}

/// A group is at most this many blocks,
pub const MAX_GROUP_BLOCKS: usize = 40;
/// this many visible characters,
pub const MAX_GROUP_CHARS: u32 = 2000;
/// and this many nodes; and its root is at most this many levels above a labelled block.
pub const MAX_GROUP_NODES: usize = 400;
pub const MAX_CLIMB: usize = 4;

/// The page's details groups, each as its blocks in order: the largest element, at most
/// [`MAX_CLIMB`] levels above a block with a label, whose blocks are all its own (it is no
/// inline element inside a block) and are all record lines, at least two of them, with at least
/// two labels and a label on at least half their lines.
///
/// A record line is a block of at most [`MAX_DETAILS_CHARS`] characters, no heading, and not
/// a row of links (mostly link text and more than [`MAX_VALUE_LINKS`] links) that is a label
/// of at most [`MAX_CELL_CHARS`] characters (a `<dt>`, a `<th>` beside a `<td>`), or has
/// *label: value* lines ([`super::facts`]'s reading; a label alone, "ISBN-13:", is one) on at
/// least half its lines, or is a single value line of at most [`MAX_LINE_CHARS`] characters
/// and [`MAX_VALUE_WORDS`] words. A list of related stories (headline links), a menu, a
/// paragraph or a heading is none, so the groups stop short of them.
pub fn groups(dom: &Dom, blocks: &Blocks) -> Vec<Vec<usize>> {
    let texts = BlockTexts::of(dom, blocks);
    let mut text = String::new();
    // Each block's (labels, lines) as a record line, read once: None when it is none.
    let mut lines: Vec<Option<Option<(u32, u32)>>> = vec![None; blocks.len()];
    let mut line = |b: usize| -> Option<(u32, u32)> {
        *lines[b].get_or_insert_with(|| record_line(dom, blocks, &texts, b, &mut text))
    };
    let mut groups = Vec::new();
    // Nodes below this one belong to the last group found.
    let mut covered = 0usize;
    let mut members = Vec::new();
    for b in 0..blocks.len() {
        let owner = blocks.owners[b] as usize;
        if owner < covered || line(b).is_none_or(|(labels, _)| labels == 0) {
            continue;
        }
        let mut best: Option<(usize, Vec<usize>)> = None;
        let mut at = owner;
        for _ in 0..MAX_CLIMB {
            let Some(parent) = dom.parent(at) else { break };
            at = parent;
            let nodes = dom.subtree(at);
            if nodes.len() > MAX_GROUP_NODES {
                break;
            }
            members.clear();
            let mut own = true;
            for n in nodes.clone() {
                let m = blocks.of_node[n];
                if m == NONE || members.last() == Some(&(m as usize)) {
                    continue;
                }
                own &= nodes.contains(&(blocks.owners[m as usize] as usize));
                members.push(m as usize);
            }
            members.sort_unstable();
            members.dedup();
            if !own || members.len() > MAX_GROUP_BLOCKS {
                break;
            }
            let (mut labels, mut total, mut chars, mut record) = (0, 0, 0, true);
            for &m in &members {
                match line(m) {
                    Some((l, n)) => {
                        labels += l;
                        total += n;
                        chars += blocks.stats[m].chars;
                    }
                    None => record = false,
                }
            }
            if !record || chars > MAX_GROUP_CHARS {
                break;
            }
            if members.len() >= 2 && labels >= 2 && 2 * labels >= total {
                best = Some((at, members.clone()));
            }
        }
        if let Some((root, group)) = best {
            covered = dom.subtree(root).end;
            groups.push(group);
        }
    }
    groups
}

/// Block `b` as a record line ([`groups`]): its labels and its lines, or None.
fn record_line(
    dom: &Dom,
    blocks: &Blocks,
    texts: &BlockTexts<'_>,
    b: usize,
    text: &mut String,
) -> Option<(u32, u32)> {
    let stats = &blocks.stats[b];
    let owner = blocks.owners[b] as usize;
    if stats.chars == 0 {
        return Some((0, 0));
    }
    let mostly_links = 2 * stats.anchor_chars > stats.chars;
    if stats.chars > MAX_DETAILS_CHARS
        || (mostly_links && stats.links > MAX_VALUE_LINKS)
        || super::in_heading(dom, owner)
    {
        return None;
    }
    if stats.chars <= MAX_CELL_CHARS && !mostly_links && row_label(dom, owner) {
        return Some((1, 1));
    }
    let read = texts.read(b, text);
    if read.labels >= 1 && 2 * read.labels >= read.lines {
        return Some((read.labels, read.lines));
    }
    (read.lines == 1 && stats.chars <= MAX_LINE_CHARS && stats.words <= MAX_VALUE_WORDS)
        .then_some((0, 1))
}

/// A value alone on its line is a few words ("Natural", "Little, Brown and Company", "Usually
/// ships in 2 days"), not a sentence.
pub const MAX_VALUE_WORDS: u32 = 8;

/// Whether element `i` labels the value beside it: a `<dt>`, or a `<th>` in a row with a
/// `<td>` (`<tr><th>Weight</th><td>2 lb</td></tr>`; a row of `<th>`s heads a table's columns).
fn row_label(dom: &Dom, i: usize) -> bool {
    match dom.tag(i).map(|t| &**t) {
        Some("dt") => true,
        Some("th") => dom
            .parent(i)
            .is_some_and(|row| dom.children(row).any(|c| tag_is(dom, c, &["td"]))),
        _ => false,
    }
}

fn tag_is(dom: &Dom, i: usize, names: &[&str]) -> bool {
    dom.tag(i).is_some_and(|t| names.contains(&&**t))
}

#[cfg(test)]
mod tests {
    use crate::page_models::content::testing::calls_when_trees_say;

    #[test]
    fn a_record_in_two_cells_is_kept_whole() {
        let (count, calls) = calls_when_trees_say(
            "<body><h1>Twilight</h1><p>A story of a girl and a vampire, told over four books.</p>\
             <table><tr><td><b>Format:</b> Paperback<br><b>Number of Pages:</b> 498<br>\
             <b>Publisher:</b> Little, Brown</td><td><b>ISBN:</b> 0316015849<br>\
             <b>ISBN-13:</b> 9780316015844<br>Availability: <a href='#availability'>In \
             Stock</a></td></tr></table><p>Customers also bought these books.</p></body>",
            &[0.9, 0.9, 0.7, 0.1, 0.2],
        );
        assert_eq!(count, 5);
        assert_eq!(calls, [true, true, true, true, false]);
    }

    #[test]
    fn terms_rows_and_labelled_divs_are_records() {
        let page = "<body><p>The chair is made of oak and seats one adult comfortably.</p>\
             <dl><dt>Weight</dt><dd>12 kg</dd><dt>Height</dt><dd>90 cm</dd></dl>\
             <div class=specs><div><div>Colour:</div><div>Natural</div></div>\
             <div><div>Finish:</div><div>Oiled</div></div></div>\
             <ul><li>Seat: 45 cm</li><li>Back: 50 cm</li><li>Legs: 4</li></ul></body>";
        let p = [0.9, 0.1, 0.8, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.6, 0.1, 0.1];
        let (count, calls) = calls_when_trees_say(page, &p);
        assert_eq!(count, 12);
        // Each group with a block kept is kept whole; the labelled divs, none kept, go whole.
        assert_eq!(
            calls,
            [true, true, true, true, true, false, false, false, false, true, true, true]
        );
    }

    #[test]
    fn a_list_of_links_or_prose_is_no_record() {
        let page = "<body><p>Our story about the rate decision, with all its background.</p>\
             <ul><li>Filed: <a href='/a'>Markets</a></li><li><a href='/b'>Rates held again \
             as inflation slows</a></li><li><a href='/c'>What the bank said about jobs</a>\
             </li></ul><div><p>Note: the figures were revised.</p><p>The bank had said in \
             March that it would wait for two more quarters of data before it moved again, \
             and markets had priced that in.</p></div></body>";
        let (count, calls) = calls_when_trees_say(page, &[0.9, 0.9, 0.1, 0.1, 0.9, 0.1]);
        assert_eq!(count, 6);
        assert_eq!(calls, [true, true, false, false, true, false]);
    }
}
