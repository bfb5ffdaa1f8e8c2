//! A list of linked headlines after the story is not the story.

use crate::dom::Dom;
use crate::page_models::content::blocks::Blocks;
use crate::page_models::content::items::{Siblings, ITEM_LEVELS};

/// Drops, as one unit, every list of linked headlines that comes after a kept paragraph of
/// prose (at least [`PROSE_WORDS`] words, ending a sentence, hardly any link text): at least
/// [`MIN_HEADLINES`] items alike under one parent ([`Siblings`]), every block of the list
/// [`LINKED_SHARE`] link text, its blocks [`HEADLINE_WORDS`] words long on average, a heading
/// between the prose and the list, and the kept block before the list not ending in a colon.
/// `siblings`: the page's alike siblings when the caller has them (else computed here, on a
/// page with a linked block after prose).
///
/// A "latest news", "more from this section" or "popular now" list under a story is a list of
/// links to other pages, each a headline: read item by item, a headline is a short line of
/// words like the story's own, and on a page with one short story (a host with one page in
/// the crawl, no site-level evidence) the trees keep it, the items' pooled probability
/// ([`super::super::items::pool`]) keeping the whole list. As a unit it is plain: a run of
/// alike items that are nothing but links, after the text the page exists for. A list the
/// story introduces ("Previous interviews from the series:") is the story's, and so is a list
/// right under the page's intro with no heading of its own between (a category page's items);
/// a list before the page's first prose is left to the trees. Menus are lists of links too, but
/// of a word or two: the average of four words leaves them to the trees. Held out on the dev sets the unit gains on the news and product pages
/// and costs listings less than a thousandth (docs/evaluation.md).
pub(super) fn drop_headline_lists(
    dom: &Dom,
    blocks: &Blocks,
    siblings: Option<&Siblings>,
    calls: &mut [bool],
) {
    let linked = |b: usize| {
        let s = &blocks.stats[b];
        s.chars > 0 && s.anchor_chars as f32 >= LINKED_SHARE * s.chars as f32
    };
    let Some(story) = (0..blocks.len()).find(|&b| {
        let s = &blocks.stats[b];
        calls[b] && s.words >= PROSE_WORDS && s.ends_sentence && 10 * s.anchor_chars < s.chars
    }) else {
        return;
    };
    if !(story + 1..blocks.len()).any(|b| calls[b] && linked(b)) {
        return;
    }
    let siblings = Siblings::given_or_of_page(dom, siblings);
    // A list under a heading of its own ("Latest news"), not the page's own list right under
    // its intro: the first heading after the story.
    let heading = (story + 1..blocks.len())
        .find(|&k| blocks.stats[k].chars > 0 && super::in_heading(dom, blocks.owners[k] as usize));
    let mut b = story + 1;
    while b < blocks.len() {
        if !(calls[b] && linked(b)) {
            b += 1;
            continue;
        }
        // The item: the nearest element above the block's owner with enough alike siblings.
        let owner = blocks.owners[b] as usize;
        let item = dom
            .ancestors_or_self(owner)
            .take(ITEM_LEVELS)
            .find(|&i| siblings.alike[i] >= MIN_HEADLINES);
        let Some(list) = item.and_then(|i| dom.parent(i)) else {
            b += 1;
            continue;
        };
        let nodes = dom.subtree(list);
        // The list's blocks: those from b on whose owners are inside it.
        let mut end = b;
        while end < blocks.len() && nodes.contains(&(blocks.owners[end] as usize)) {
            end += 1;
        }
        let members = b..end;
        let with_text: Vec<usize> = members
            .clone()
            .filter(|&m| blocks.stats[m].chars > 0)
            .collect();
        let words: u32 = with_text.iter().map(|&m| blocks.stats[m].words).sum();
        // A list the story introduces ("Previous interviews:") is the story's.
        let introduced = (0..b)
            .rev()
            .find(|&k| calls[k] && blocks.stats[k].chars > 0)
            .is_some_and(|k| ends_with_colon(dom, blocks, k));
        let headed = heading.is_some_and(|h| h < b);
        if headed
            && !introduced
            && with_text.iter().all(|&m| linked(m))
            && words >= HEADLINE_WORDS * with_text.len() as u32
        {
            for m in members {
                calls[m] = false;
            }
        }
        b = end.max(b + 1);
    }
}

pub const MIN_HEADLINES: u32 = 5;
pub const HEADLINE_WORDS: u32 = 4;
pub const PROSE_WORDS: u32 = 30;
/// At least this share of each block's characters is link text.
pub const LINKED_SHARE: f32 = 0.8;

/// Whether block `k`'s text ends with a colon: its last text node, read from the end of its
/// owner's subtree.
fn ends_with_colon(dom: &Dom, blocks: &Blocks, k: usize) -> bool {
    let owner = blocks.owners[k] as usize;
    dom.subtree(owner)
        .rev()
        .filter(|&n| blocks.of_node[n] == k as u32)
        .find_map(|n| {
            dom.visible_text(n)
                .map(str::trim_end)
                .filter(|t| !t.is_empty())
        })
        .is_some_and(|t| t.ends_with(':'))
}

#[cfg(test)]
mod tests {
    use crate::page_models::content::testing::calls_when_all_sure;

    const STORY: &str = "The council voted on Tuesday to close the old bridge to cars from May, \
        after engineers found that two of its piers had moved, and said it would decide by the \
        summer whether to mend it or build a new one.";

    fn list(headlines: &[&str]) -> String {
        let items: String = (headlines.iter().enumerate())
            .map(|(i, h)| format!("<li class=item><a href='/news/{i}'>{h}</a></li>"))
            .collect();
        format!("<ul>{items}</ul>")
    }

    const HEADLINES: [&str; 5] = [
        "Rates held again as inflation slows",
        "Harbour ferry returns after a long winter",
        "School board names its new head teacher",
        "Storm brings down power lines in the north",
        "Local team wins the cup after extra time",
    ];

    #[test]
    fn linked_headlines_after_the_story_are_dropped_whole() {
        let page = format!(
            "<body><h1>Bridge to close</h1><p>{STORY}</p><h2>Latest news</h2>{}</body>",
            list(&HEADLINES)
        );
        let (count, calls) = calls_when_all_sure(&page);
        assert_eq!(count, 8);
        // The list goes; its heading is the trees' to judge.
        assert_eq!(calls, [true, true, true, false, false, false, false, false]);
    }

    #[test]
    fn a_list_the_story_introduces_or_a_menu_or_a_list_without_a_heading_stays() {
        let introduced = format!(
            "<body><p>{STORY}</p><h2>The series</h2><p>Earlier stories in the series:</p>{}\
             </body>",
            list(&HEADLINES)
        );
        let menu = format!(
            "<body><p>{STORY}</p><h2>Sections</h2>{}</body>",
            list(&["Home", "News", "Sport", "Weather", "Contact us"])
        );
        let unheaded = format!("<body><p>{STORY}</p>{}</body>", list(&HEADLINES));
        let before = format!(
            "<body><h2>Latest</h2>{}<p>{STORY}</p></body>",
            list(&HEADLINES)
        );
        for page in [introduced, menu, unheaded, before] {
            let (count, calls) = calls_when_all_sure(&page);
            assert_eq!(calls, vec![true; count], "{page}");
        }
    }
}
