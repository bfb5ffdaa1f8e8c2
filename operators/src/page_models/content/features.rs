//! Features of every text block ([`super::blocks`]) for the main-content model.
//!
//! The template model's features (`crate::page_models::features`) describe an element by itself.
//! Whether a block is what the page exists to deliver depends on its surroundings as much: a
//! caption is short text beside a long story, a teaser is a short linked text repeated in a list of
//! look-alikes, a product's details table is short text on a page with a price. So besides the
//! block's own text and tag, a row carries
//!
//! - its ancestors' text and link density (parent and grandparent of the owner element),
//! - repeated sibling structure: how many siblings of the owner (or of its two nearest
//!   ancestors) share its tag and classes — list items, cards, comments,
//! - its neighbours' text and link density (the blocks before and after it),
//! - where it is relative to the page's densest text region (the element whose paragraphs
//!   carry the most non-link text, as Readability scores candidates) and to the first `<h1>`:
//!   before or after it, and how high one climbs from it to a container holding both,
//! - cues of sectioning tags and of class and id words (`related`, `comment`, `share`,
//!   `caption`, `byline`, …), inherited from every ancestor,
//! - page-level cues of the page type: repeated item blocks, prices, forms, the URL's shape,
//!   JSON-LD types,
//! - the site-level evidence when the host has statistics: whether the block is inside one of
//!   the host's templates,
//! - what its words say: the lexicon's score (`super::lexicon`) and how far it stands from the
//!   page's.
//!
//! Counts enter as `ln(1 + count)`; trees need no scaling, but logarithms keep the bins of the
//! histogram learner spread over the range that matters. Everything is O(n) over the arena.

use html5ever::local_name;

use super::blocks::Blocks;
use super::items::Siblings;
use crate::dom::subtree::Subtree;
use crate::dom::{is_heading, Dom, LocalName, NodeKind};
use crate::page_models::names::{self, NameWords};
use crate::page_models::vocabulary::{
    CUE_AD, CUE_ARTICLE, CUE_ASIDE, CUE_BREADCRUMB, CUE_CAPTION, CUE_COMMENT, CUE_FOOTER, CUE_FORM,
    CUE_HEADER, CUE_ITEM, CUE_ITEMPROP, CUE_MAIN, CUE_META, CUE_NAV, CUE_OVERLAY, CUE_RELATED,
    CUE_SHARE,
};
use crate::FastMap;

/// The feature names, in the order of a row. They name the model's inputs in its file, so
/// renaming, adding or reordering one is a model format change (the shipped model is checked
/// against them when loaded).
pub const NAMES: [&str; COUNT] = [
    // The block's own text.
    "log_chars",
    "log_words",
    "link_density",
    "log_links",
    "stop_rate",
    "comma_rate",
    "symbol_rate",
    "digit_rate",
    "capital_rate",
    "mean_word_len",
    "ends_sentence",
    "log_prices",
    // The owner element's tag.
    "tag_p",
    "tag_li",
    "tag_cell",
    "tag_div",
    "tag_heading",
    "tag_h1",
    "tag_definition",
    "tag_pre",
    "tag_blockquote",
    "tag_caption",
    "tag_section",
    "tag_form",
    "tag_other",
    // Position.
    "position",
    "log_depth",
    "relative_depth",
    // Ancestors and repeated structure.
    "parent_log_chars",
    "parent_link_density",
    "share_of_parent",
    "grandparent_log_chars",
    "grandparent_link_density",
    "log_sibling_repeat",
    "log_item_repeat",
    // Neighbours.
    "previous_log_chars",
    "previous_link_density",
    "next_log_chars",
    "next_link_density",
    // The densest text region and the first h1.
    "in_densest",
    "densest_share",
    "densest_distance",
    "densest_link_density",
    "after_h1",
    "from_h1",
    "h1_shared_depth",
    "h1_climb",
    // Cues of tags, classes and ids on the ancestors.
    "cue_main",
    "cue_article",
    "cue_nav",
    "cue_header",
    "cue_footer",
    "cue_aside",
    "cue_related",
    "cue_comment",
    "cue_share",
    "cue_caption",
    "cue_meta",
    "cue_ad",
    "cue_breadcrumb",
    "cue_overlay",
    "cue_form",
    "cue_item",
    "cue_itemprop",
    // The page.
    "page_log_chars",
    "page_link_density",
    "page_log_blocks",
    "page_log_max_repeat",
    "page_log_prices",
    "page_log_forms",
    "url_depth",
    "url_has_id",
    "url_query",
    "url_is_root",
    "ld_article",
    "ld_product",
    "ld_list",
    "ld_forum",
    // Site-level evidence.
    "site_statistics",
    "in_site_template",
    // The block's words (`super::lexicon`).
    "lexical_score",
    "lexical_vs_page",
    // What the block's containers are called (`super::containers`).
    "container_score",
    // What kind of page the page is (`super::kind`), the same in every row of a page.
    "page_kind",
];

/// Number of features in a row.
pub const COUNT: usize = 84;

pub type Row = [f32; COUNT];

/// The cues in the order of the `cue_*` features.
const CUES: [u32; 17] = [
    CUE_MAIN,
    CUE_ARTICLE,
    CUE_NAV,
    CUE_HEADER,
    CUE_FOOTER,
    CUE_ASIDE,
    CUE_RELATED,
    CUE_COMMENT,
    CUE_SHARE,
    CUE_CAPTION,
    CUE_META,
    CUE_AD,
    CUE_BREADCRUMB,
    CUE_OVERLAY,
    CUE_FORM,
    CUE_ITEM,
    CUE_ITEMPROP,
];

fn cue_of_tag(tag: &LocalName) -> u32 {
    // Atoms, not strings: every element of every page is asked.
    match *tag {
        local_name!("main") => CUE_MAIN,
        local_name!("article") => CUE_ARTICLE,
        local_name!("nav") => CUE_NAV,
        local_name!("header") => CUE_HEADER,
        local_name!("footer") => CUE_FOOTER,
        local_name!("aside") => CUE_ASIDE,
        local_name!("figcaption") | local_name!("caption") => CUE_CAPTION,
        local_name!("form") => CUE_FORM,
        local_name!("time") | local_name!("address") => CUE_META,
        _ => 0,
    }
}

/// The cues of an element's own tag, attribute names, id and classes.
fn own_cues(dom: &Dom, i: usize, names: &[NameWords]) -> u32 {
    let mut mask = dom.tag(i).map_or(0, cue_of_tag);
    if dom
        .other_attributes(i)
        .iter()
        .any(|a| matches!(*a, local_name!("itemprop") | local_name!("itemscope")))
    {
        mask |= CUE_ITEMPROP;
    }
    mask | names.get(i).map_or(0, |n| n.cues)
}

/// What the content model knows of the page besides its DOM.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context<'a> {
    /// The page's URL (its shape hints at the page type).
    pub url: &'a str,
    /// Whether each node is inside one of the host's site-level templates; `None` when the host
    /// has no site-level statistics.
    pub site_inside: Option<&'a [bool]>,
    /// The lexicon's score of every block ([`super::lexicon::Lexicon::scores`]); `None` for a
    /// model without a lexicon (both lexical features are then 0). [`super::judge`] fills it
    /// from the model it is given; `stencil train-content` sets the features per fold instead
    /// ([`set_lexical`]).
    pub lexical: Option<&'a [f32]>,
    /// The container lexicon's score of every block ([`super::containers::scores`]); `None`
    /// for a model without one (the container feature is then 0). Filled and set as `lexical`
    /// is ([`set_containers`]).
    pub containers: Option<&'a [f32]>,
    /// What each node's class and id names say ([`names::of_page`]), when the caller has it
    /// already (`stencil run` computes it once for both models); `None`: read here.
    pub names: Option<&'a [NameWords]>,
    /// Which elements are alike ([`Siblings::of`]), when the caller has it already
    /// ([`super::judge`] computes it once for the features and the calls); `None`: read here.
    pub siblings: Option<&'a Siblings>,
}

/// The feature row of every block of `blocks`.
pub fn compute(dom: &Dom, sums: &[Subtree], blocks: &Blocks, context: Context<'_>) -> Vec<Row> {
    compute_for(dom, sums, blocks, context, &vec![true; blocks.len()])
}

/// The feature rows of the blocks marked in `wanted`, in block order.
pub fn compute_for(
    dom: &Dom,
    sums: &[Subtree],
    blocks: &Blocks,
    context: Context<'_>,
    wanted: &[bool],
) -> Vec<Row> {
    let n = dom.len();

    // One pass over the arena: cues inherited from every ancestor, and what the page-level cues
    // count.
    let mut cues = vec![0u32; n];
    // Sized for the page up front (about half of a page's nodes are elements), so that few
    // pages regrow it: rehashing it as it grows costs a good share of this function's time.
    let elements = n / 2;
    let siblings = Siblings::given_or_of_page(dom, context.siblings);
    let names = names::given_or_of_page(dom, context.names);
    let mut max_depth = 1u32;
    let mut scan = PageScan {
        items: FastMap::with_capacity_and_hasher(elements / 4, Default::default()),
        ..PageScan::default()
    };
    for i in 0..n {
        let parent = dom.parent(i);
        max_depth = max_depth.max(dom.node(i).depth);
        let inherited = parent.map_or(0, |p| cues[p]);
        let Some(tag) = dom.tag(i) else {
            cues[i] = inherited;
            scan.other_node(dom, i);
            continue;
        };
        cues[i] = inherited | own_cues(dom, i, &names);
        scan.element(tag, parent, sums[i].text_chars);
    }
    let page = scan.cues(sums, blocks, context.url);
    let repeat_of = |i: usize| -> u32 { siblings.alike[i] };

    // The densest text region: paragraphs give their parent a score and their grandparent half
    // of it (Readability's candidate scoring); the best element after discounting its links.
    let mut region = vec![0f32; n];
    for (b, stats) in blocks.stats.iter().enumerate() {
        let own = stats.chars.saturating_sub(stats.anchor_chars);
        if own < 25 {
            continue;
        }
        let score = 1.0 + stats.commas as f32 + (own as f32 / 100.0).min(3.0);
        let owner = blocks.owners[b] as usize;
        if let Some(parent) = dom.parent(owner) {
            region[parent] += score;
            if let Some(grandparent) = dom.parent(parent) {
                region[grandparent] += score / 2.0;
            }
        }
    }
    let mut densest: Option<usize> = None;
    let mut best = 0.0f32;
    for (i, &score) in region.iter().enumerate() {
        if score <= 0.0 {
            continue;
        }
        let score = score * (1.0 - link_density(&sums[i]));
        if score > best {
            best = score;
            densest = Some(i);
        }
    }
    let page_chars = blocks.page_chars.max(1) as f32;
    let (densest_range, densest_share, densest_links) = match densest {
        Some(d) => (
            sums[d].text_start..sums[d].text_end(),
            sums[d].text_chars as f32 / page_chars,
            link_density(&sums[d]),
        ),
        None => (0..0, 0.0, 0.0),
    };
    let densest_nodes = densest.map_or(0..0, |d| dom.subtree(d));
    let first_h1_block = blocks
        .owners
        .iter()
        .position(|&o| dom.tag(o as usize).is_some_and(|t| *t == local_name!("h1")));
    let first_h1 = first_h1_block.map(|b| blocks.stats[b].text_start);
    // The first <h1>'s depth, and every node's depth where it meets the <h1>.
    let meets_h1 = first_h1_block.map(|b| {
        let h1 = blocks.owners[b] as usize;
        (dom.node(h1).depth.max(1), shared_depths(dom, h1))
    });

    let mut rows = Vec::with_capacity(wanted.iter().filter(|&&w| w).count());
    for (b, stats) in blocks.stats.iter().enumerate() {
        if !wanted.get(b).copied().unwrap_or(false) {
            continue;
        }
        let owner = blocks.owners[b] as usize;
        let mut row = [0f32; COUNT];
        let mut f = 0;
        let mut put = |value: f32| {
            row[f] = value;
            f += 1;
        };
        let words = stats.words.max(1) as f32;
        let chars = stats.chars.max(1) as f32;
        put(ln1p(stats.chars));
        put(ln1p(stats.words));
        put(stats.anchor_chars as f32 / chars);
        put(ln1p(stats.links));
        put(stats.stops as f32 / words);
        put(stats.commas as f32 / words);
        put(stats.symbols as f32 / chars);
        put(stats.digits as f32 / chars);
        put(stats.capitalized as f32 / words);
        put(stats.word_chars as f32 / words);
        put(flag(stats.ends_sentence));
        put(ln1p(stats.prices));

        let tag = dom.tag(owner).cloned().unwrap_or(local_name!(""));
        let tags: [bool; 13] = [
            tag == local_name!("p"),
            tag == local_name!("li"),
            matches!(tag, local_name!("td") | local_name!("th")),
            tag == local_name!("div"),
            is_heading(&tag),
            tag == local_name!("h1"),
            matches!(
                tag,
                local_name!("dd") | local_name!("dt") | local_name!("dl")
            ),
            tag == local_name!("pre"),
            tag == local_name!("blockquote"),
            matches!(
                tag,
                local_name!("figcaption") | local_name!("caption") | local_name!("figure")
            ),
            matches!(
                tag,
                local_name!("section") | local_name!("article") | local_name!("main")
            ),
            matches!(
                tag,
                local_name!("form") | local_name!("fieldset") | local_name!("legend")
            ),
            false,
        ];
        let known_tag = tags.iter().any(|&t| t);
        for (k, &t) in tags.iter().enumerate() {
            put(flag(if k == 12 { !known_tag } else { t }));
        }

        put(stats.text_start as f32 / page_chars);
        let depth = dom.node(owner).depth;
        put(ln1p(depth));
        put(depth as f32 / max_depth as f32);

        let parent = dom.parent(owner);
        let grandparent = parent.and_then(|p| dom.parent(p));
        let parent_sums = parent.map(|p| sums[p]).unwrap_or_default();
        let grandparent_sums = grandparent.map(|p| sums[p]).unwrap_or_default();
        put(ln1p(parent_sums.text_chars));
        put(link_density(&parent_sums));
        put(stats.chars as f32 / parent_sums.text_chars.max(stats.chars).max(1) as f32);
        put(ln1p(grandparent_sums.text_chars));
        put(link_density(&grandparent_sums));
        let own_repeat = repeat_of(owner);
        let item_repeat = own_repeat
            .max(parent.map_or(1, repeat_of))
            .max(grandparent.map_or(1, repeat_of));
        put(ln1p(own_repeat - 1));
        put(ln1p(item_repeat - 1));

        for neighbour in [b.checked_sub(1), Some(b + 1).filter(|&x| x < blocks.len())] {
            match neighbour {
                Some(x) => {
                    let s = &blocks.stats[x];
                    put(ln1p(s.chars));
                    put(s.anchor_chars as f32 / s.chars.max(1) as f32);
                }
                None => {
                    put(0.0);
                    put(0.0);
                }
            }
        }

        let inside = densest_nodes.contains(&owner);
        put(flag(inside));
        put(densest_share);
        let start = stats.text_start;
        let distance = if inside || densest.is_none() {
            0
        } else if start < densest_range.start {
            densest_range.start - start
        } else {
            start.saturating_sub(densest_range.end)
        };
        put(if densest.is_none() {
            1.0
        } else {
            distance as f32 / page_chars
        });
        put(densest_links);
        match first_h1 {
            Some(h1) => {
                put(flag(start >= h1));
                put((start as f32 - h1 as f32) / page_chars);
            }
            None => {
                put(0.5);
                put(0.0);
            }
        }
        match &meets_h1 {
            Some((h1_depth, shared)) => {
                let common = shared[owner].min(*h1_depth);
                put(common as f32 / *h1_depth as f32);
                put(ln1p(h1_depth - common));
            }
            None => {
                put(-1.0);
                put(-1.0);
            }
        }

        let mask = cues[owner];
        for cue in CUES {
            put(flag(mask & cue != 0));
        }

        for value in page.values {
            put(value);
        }

        put(flag(context.site_inside.is_some()));
        put(flag(context.site_inside.is_some_and(|inside| {
            inside.get(owner).copied().unwrap_or(false)
        })));
        // The lexical and container features: 0 here, set below from the scores when there
        // are any; and the page's kind, 0 until a model guesses it (`super::kind`).
        for _ in 0..4 {
            put(0.0);
        }
        debug_assert_eq!(f, COUNT);
        rows.push(row);
    }
    if let Some(scores) = context.lexical {
        set_lexical(&mut rows, blocks, scores, wanted);
    }
    if let Some(scores) = context.containers {
        set_containers(&mut rows, scores, wanted);
    }
    rows
}

/// For every node, the depth of its deepest ancestor-or-self that is also an ancestor-or-self of
/// `anchor`. A story's paragraphs share a deep container with its headline; a menu meets the
/// headline only near `<body>`, wherever the two sit in source order. One pass in arena order
/// (parents come before their children), so deep nesting costs no more than wide pages; a node
/// is an ancestor-or-self of `anchor` when its subtree's range holds it.
fn shared_depths(dom: &Dom, anchor: usize) -> Vec<u32> {
    let mut shared = vec![0u32; dom.len()];
    for i in 0..dom.len() {
        shared[i] = if dom.subtree(i).contains(&anchor) {
            dom.node(i).depth
        } else {
            dom.parent(i).map_or(0, |p| shared[p])
        };
    }
    shared
}

/// The page's mean lexical score, each block weighing its characters: what the page's words
/// are like as a whole, against which a block's own stand out.
fn lexical_page_mean(blocks: &Blocks, scores: &[f32]) -> f32 {
    let (mut sum, mut chars) = (0f64, 0f64);
    for (stats, &score) in blocks.stats.iter().zip(scores) {
        sum += f64::from(score) * f64::from(stats.chars);
        chars += f64::from(stats.chars);
    }
    if chars == 0.0 {
        0.0
    } else {
        (sum / chars) as f32
    }
}

/// Sets the lexical features of the rows of the blocks marked in `wanted` (in block order, as
/// [`compute_for`] makes them) from every block's score: the page's mean is over all blocks.
/// `stencil train-content` calls it after making the rows, as it fits a lexicon per fold.
pub fn set_lexical(rows: &mut [Row], blocks: &Blocks, scores: &[f32], wanted: &[bool]) {
    let page = lexical_page_mean(blocks, scores);
    for (row, s) in rows.iter_mut().zip(of_wanted(scores, wanted)) {
        row[LEXICAL] = s;
        row[LEXICAL + 1] = s - page;
    }
}

/// Sets the container feature of the rows of the blocks marked in `wanted` (in block order, as
/// [`compute_for`] returns them) from every block's score.
pub fn set_containers(rows: &mut [Row], scores: &[f32], wanted: &[bool]) {
    for (row, s) in rows.iter_mut().zip(of_wanted(scores, wanted)) {
        row[CONTAINER] = s;
    }
}

/// The scores of the blocks marked in `wanted`, in order: those [`compute_for`] made rows for.
fn of_wanted<'a>(scores: &'a [f32], wanted: &'a [bool]) -> impl Iterator<Item = f32> + 'a {
    scores
        .iter()
        .zip(wanted)
        .filter(|(_, &w)| w)
        .map(|(&s, _)| s)
}

/// Where the two lexical features sit in a row (before the container feature; a test checks).
pub(super) const LEXICAL: usize = COUNT - 4;

/// Where the container feature sits in a row (before the page's kind; a test checks).
pub(super) const CONTAINER: usize = COUNT - 2;

/// Where the page's kind sits in a row (the last; a test checks), set by [`super::kind`].
pub(super) const PAGE_KIND: usize = COUNT - 1;

/// The page-level features, the same in every row of a page.
struct PageCues {
    values: [f32; 14],
}

/// What the page-level cues count, gathered during [`compute`]'s pass over the arena.
#[derive(Default)]
struct PageScan<'d> {
    forms: u32,
    /// JSON-LD types seen: article, product, list, forum.
    ld: [bool; 4],
    /// The most siblings of one tag that each hold some text (item blocks).
    max_repeat: u32,
    items: FastMap<(u32, &'d str), u32>,
}

impl<'d> PageScan<'d> {
    fn element(&mut self, tag: &'d LocalName, parent: Option<usize>, text_chars: u32) {
        if *tag == local_name!("form") {
            self.forms += 1;
        }
        if let (Some(p), true) = (parent, text_chars >= 20) {
            let count = self.items.entry((p as u32, &**tag)).or_default();
            *count += 1;
            self.max_repeat = self.max_repeat.max(*count);
        }
    }

    /// Non-element nodes: scripts' text may be JSON-LD naming the page's type.
    fn other_node(&mut self, dom: &Dom, i: usize) {
        if !matches!(dom.node(i).kind, NodeKind::Text { visible: false, .. }) {
            return;
        }
        let Some(text) = dom.text(i) else { return };
        if !text.contains("@type") {
            return;
        }
        let ld = &mut self.ld;
        ld[0] |= [
            "\"Article\"",
            "NewsArticle",
            "BlogPosting",
            "\"Report\"",
            "ReportageNewsArticle",
        ]
        .iter()
        .any(|t| text.contains(t));
        ld[1] |= text.contains("\"Product\"") || text.contains("\"Offer\"");
        ld[2] |= text.contains("ItemList")
            || text.contains("CollectionPage")
            || text.contains("SearchResultsPage");
        ld[3] |= text.contains("DiscussionForumPosting")
            || text.contains("QAPage")
            || text.contains("\"Comment\"");
    }

    fn cues(&self, sums: &[Subtree], blocks: &Blocks, url: &str) -> PageCues {
        let total = sums.first().copied().unwrap_or_default();
        let prices: u32 = blocks.stats.iter().map(|s| s.prices).sum();
        let path_and_query = url.split_once("://").map_or(url, |(_, rest)| {
            rest.find('/').map_or("", |slash| &rest[slash..])
        });
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        let depth = path.split('/').filter(|s| !s.is_empty()).count() as u32;
        let has_id = path
            .as_bytes()
            .split(|b| !b.is_ascii_digit())
            .any(|run| run.len() >= 4);
        PageCues {
            values: [
                ln1p(total.text_chars),
                link_density(&total),
                ln1p(blocks.len() as u32),
                ln1p(self.max_repeat.max(1) - 1),
                ln1p(prices),
                ln1p(self.forms),
                depth as f32,
                flag(has_id),
                flag(!query.is_empty()),
                flag(depth == 0 && query.is_empty()),
                flag(self.ld[0]),
                flag(self.ld[1]),
                flag(self.ld[2]),
                flag(self.ld[3]),
            ],
        }
    }
}

fn link_density(sums: &Subtree) -> f32 {
    if sums.text_chars == 0 {
        0.0
    } else {
        (sums.anchor_text_chars as f32 / sums.text_chars as f32).min(1.0)
    }
}

fn flag(set: bool) -> f32 {
    f32::from(u8::from(set))
}

fn ln1p(x: u32) -> f32 {
    crate::page_models::features::ln1p_count(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::dom::subtree::summarize;
    use crate::page_models::content::blocks::blocks;

    fn feature(name: &str) -> usize {
        NAMES
            .iter()
            .position(|n| *n == name)
            .expect("feature exists")
    }

    #[test]
    fn lexical_features_are_where_set_lexical_puts_them() {
        assert_eq!(feature("lexical_score"), LEXICAL);
        assert_eq!(feature("lexical_vs_page"), LEXICAL + 1);
        assert_eq!(feature("container_score"), CONTAINER);
        assert_eq!(feature("page_kind"), PAGE_KIND);
    }

    #[test]
    fn shared_depth_is_where_a_node_meets_the_anchor() {
        let dom = dom::parse(
            "<body><div id=top><h1 id=anchor>Headline</h1><p id=near>Story</p></div>\
             <footer><p id=far>Footer</p></footer></body>",
            64,
        );
        let find = |id: &str| (0..dom.len()).find(|&i| dom.id(i) == Some(id)).unwrap();
        let shared = shared_depths(&dom, find("anchor"));
        let depth = |i: usize| dom.node(i).depth;
        assert_eq!(shared[find("anchor")], depth(find("anchor")));
        assert_eq!(shared[find("near")], depth(find("top")));
        assert_eq!(
            shared[find("far")],
            depth(find("top")) - 1,
            "they meet in <body>"
        );
    }

    #[test]
    fn names_are_distinct_and_counted() {
        let mut names = NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COUNT);
    }

    #[test]
    fn context_tells_a_story_from_a_teaser_list() {
        let html = "<html><head><title>Story</title></head><body>\
            <nav class=menu><a href=/>Home</a> <a href=/w>World</a></nav>\
            <article><h1>Story</h1><p>The first paragraph of the story, with commas, tells what happened.</p>\
            <p>The second paragraph goes on, with quotes, from the people who were there.</p></article>\
            <div class=related><ul><li><a href=/a>Another story about something</a></li>\
            <li><a href=/b>Yet another story about something</a></li>\
            <li><a href=/c>A third story about something else</a></li></ul></div></body></html>";
        let dom = dom::parse(html, 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks(&dom);
        let context = Context {
            url: "https://example.com/2024/05/story.html",
            site_inside: None,
            lexical: None,
            containers: None,
            names: None,
            siblings: None,
        };
        let rows = compute(&dom, &sums, &blocks, context);
        assert_eq!(rows.len(), blocks.len());
        let text_of = |b: usize| {
            (0..dom.len())
                .filter(|&i| blocks.of_node[i] == b as u32)
                .filter_map(|i| dom.visible_text(i))
                .collect::<String>()
        };
        let block = |needle: &str| {
            (0..blocks.len())
                .find(|&b| text_of(b).contains(needle))
                .expect("block")
        };
        let story = &rows[block("first paragraph")];
        let teaser = &rows[block("third story")];
        let menu = &rows[block("Home")];
        assert_eq!(story[feature("in_densest")], 1.0);
        assert_eq!(teaser[feature("in_densest")], 0.0);
        assert_eq!(story[feature("cue_article")], 1.0);
        assert_eq!(teaser[feature("cue_related")], 1.0);
        assert_eq!(menu[feature("cue_nav")], 1.0);
        assert_eq!(teaser[feature("link_density")], 1.0);
        assert!(teaser[feature("log_item_repeat")] > 0.0, "three list items");
        assert_eq!(story[feature("after_h1")], 1.0);
        assert_eq!(menu[feature("after_h1")], 0.0);
        // The story meets its headline in <article>, the teasers and the menu only in <body>.
        assert!(story[feature("h1_shared_depth")] > teaser[feature("h1_shared_depth")]);
        assert!(story[feature("h1_climb")] < teaser[feature("h1_climb")]);
        assert_eq!(teaser[feature("h1_climb")], menu[feature("h1_climb")]);
        assert_eq!(story[feature("url_has_id")], 1.0);
        assert_eq!(story[feature("site_statistics")], 0.0);
    }
}
