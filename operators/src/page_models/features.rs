//! Features of every element node for the page-level templateness classifier.
//!
//! Chakrabarti et al. (seed 000, §5.2) measured nodes in a rendered page: distance from the
//! page margins and centre, area, links, anchor text, intra-site links, visible characters to
//! HTML. Kołcz & Yih (seed 001, §3 step 4, §4.1) add text and markup features of a block in
//! isolation, its difference from the rest of the page (KL divergence of the words) and its
//! position in the tree. There is no renderer here, so geometry is approximated from the arena:
//! where a node's text starts and ends in the page's text stream stands for its vertical
//! position, and a size proxy ([`area`]) stands for its rendered area. docs/features.md gives
//! every feature with the seed section it comes from and how it approximates the original.
//!
//! All features are computed for all nodes in a fixed number of O(n) passes (forward over
//! text, backward to sum subtrees, forward to inherit from ancestors), never by walking each
//! node's subtree: nested blocks would make that O(n · depth).
//!
//! Counts enter as `ln(1 + count)` and ratios as they are, so that one logistic weight per
//! feature is a sensible model after standardization.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use html5ever::local_name;
use xxhash_rust::xxh3::xxh3_64;

use crate::dom::normalize::{is_ascii_text_space, push_lowercase, text_units, TextUnit};
use crate::dom::subtree::Subtree;
use crate::dom::{Dom, LocalName};
use crate::page_models::names::{self, NameWords};
use crate::page_models::vocabulary::{
    ROLE_AD, ROLE_BREADCRUMB, ROLE_COMMENT, ROLE_CONTENT, ROLE_COOKIE, ROLE_FOOTER, ROLE_HEADER,
    ROLE_NAV, ROLE_RELATED, ROLE_SIDEBAR, ROLE_SOCIAL,
};

/// The feature names, in the order of a feature row. They name the columns of the `training`
/// table and the weights in `model.json`, so renaming one is a model format change.
pub const NAMES: [&str; COUNT] = [
    // Position: closeness to the page margins (000 §5.2), position in the tree (001 §3).
    "text_start",
    "text_end",
    "margin",
    "node_position",
    "log_depth",
    "relative_depth",
    // Links (000 §5.2).
    "links_per_word",
    "anchor_text_share",
    "anchor_size",
    "intra_site_link_share",
    "visible_to_html",
    // Text (000 §5.2 title words; 001 §3 text, punctuation, divergence from the page).
    "title_overlap",
    "title_density",
    "log_text_chars",
    "log_words",
    "text_share",
    "punctuation_ratio",
    "digit_ratio",
    "word_divergence",
    // Markup (001 §3: presence and frequency of tags, images and anchors counted apart).
    "log_a",
    "log_img",
    "log_li",
    "log_form",
    "log_input",
    "log_iframe",
    "log_button",
    "log_subtree_nodes",
    "sibling_position",
    "log_siblings",
    "tag_list",
    "tag_heading",
    "tag_paragraph",
    "tag_link",
    "tag_table",
    "tag_container",
    // Size (000 §5.2: one model per area bucket; also a feature within the bucket).
    "log_area",
    "area_share",
    // Roles hinted by class and id tokens and by HTML5 sectioning tags.
    "role_nav",
    "role_header",
    "role_footer",
    "role_sidebar",
    "role_ad",
    "role_social",
    "role_comment",
    "role_related",
    "role_cookie",
    "role_breadcrumb",
    "role_content",
    "inside_template_role",
    "inside_content_role",
];

/// Number of features in a row.
pub const COUNT: usize = 50;

/// Size proxy weight of one image, video, iframe, embed, object, svg or canvas, in visible
/// characters. The paper's 2000 px² hiding threshold is about a dozen characters of body text
/// (16 px type, ~160 px² a character); a 100 × 160 px image is worth about 100.
pub const MEDIA_WEIGHT: f32 = 100.0;
/// Size proxy weight of a form control (input, button, select, textarea).
pub const CONTROL_WEIGHT: f32 = 20.0;

/// Upper area bounds of the first three size buckets; the fourth is everything above.
/// Roughly: a link or heading, a paragraph or menu, a section, the page's main columns.
pub const BUCKET_BOUNDS: [f32; 3] = [50.0, 500.0, 5000.0];
/// Number of size buckets, hence of logistic models (000 §5.2).
pub const BUCKETS: usize = 4;

/// The size bucket of a node of the given area.
pub fn bucket(area: f32, bounds: &[f32]) -> usize {
    bounds.iter().take_while(|&&b| area >= b).count()
}

/// Features of one page: a row per element (text nodes, about half of a page's nodes, have
/// none: on a 16 MB page that is 150 MB not spent on zeros).
#[derive(Clone, Debug, Default)]
pub struct PageFeatures {
    values: Vec<[f32; COUNT]>,
    /// Row index of every node; [`NO_ROW`] for non-elements.
    row_of: Vec<u32>,
    /// Size proxy of every node: visible characters plus weighted media.
    pub area: Vec<f32>,
}

const NO_ROW: u32 = u32::MAX;
const ZERO_ROW: [f32; COUNT] = [0.0; COUNT];

impl PageFeatures {
    /// The feature row of `node`; all zeros for a node that is not an element.
    pub fn row(&self, node: usize) -> &[f32; COUNT] {
        match self.row_of.get(node) {
            Some(&row) if row != NO_ROW => &self.values[row as usize],
            _ => &ZERO_ROW,
        }
    }

    pub fn len(&self) -> usize {
        self.area.len()
    }

    pub fn is_empty(&self) -> bool {
        self.area.is_empty()
    }

    /// The bytes this page's features hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<[f32; COUNT]>()
            + self.row_of.capacity() * std::mem::size_of::<u32>()
            + self.area.capacity() * std::mem::size_of::<f32>()
    }
}

/// A page's features together with the class and id names they were computed from, which the
/// content model reads too: what a job computes once per page and hands from stage to stage
/// (`stencil run` labels a sampled page, then scores it).
#[derive(Clone, Debug, Default)]
pub struct Computed {
    pub names: Vec<NameWords>,
    pub features: PageFeatures,
}

impl Computed {
    pub fn of(dom: &Dom, sums: &[Subtree]) -> Computed {
        let names = names::of_page(dom);
        let features = compute_with_names(dom, sums, &names);
        Computed { names, features }
    }

    pub fn heap_bytes(&self) -> usize {
        self.names.capacity() * std::mem::size_of::<NameWords>() + self.features.heap_bytes()
    }
}

/// Counts summed over a subtree that [`Subtree`] does not carry.
#[derive(Clone, Copy, Default)]
struct Extra {
    tags: [u32; COUNTED_TAGS],
    media: f32,
    punctuation: u32,
    digits: u32,
    /// Word tokens (alphanumeric runs), title-word occurrences, and the summed surprisal of the
    /// tokens under the page's word distribution.
    tokens: u32,
    title_hits: u32,
    surprisal: f64,
}

const COUNTED_TAGS: usize = 7;

/// The tags whose descendants are counted (`log_a` … `log_button`, in this order). Interned
/// atoms: finding a tag here compares integers, not strings.
static TAG_COUNTED: [LocalName; COUNTED_TAGS] = [
    local_name!("a"),
    local_name!("img"),
    local_name!("li"),
    local_name!("form"),
    local_name!("input"),
    local_name!("iframe"),
    local_name!("button"),
];

const TEMPLATE_ROLES: u16 = ROLE_NAV
    | ROLE_HEADER
    | ROLE_FOOTER
    | ROLE_SIDEBAR
    | ROLE_AD
    | ROLE_SOCIAL
    | ROLE_COMMENT
    | ROLE_RELATED
    | ROLE_COOKIE
    | ROLE_BREADCRUMB;

fn role_of_tag(tag: &LocalName) -> u16 {
    match *tag {
        local_name!("nav") => ROLE_NAV,
        local_name!("header") => ROLE_HEADER,
        local_name!("footer") => ROLE_FOOTER,
        local_name!("aside") => ROLE_SIDEBAR,
        local_name!("article") | local_name!("main") => ROLE_CONTENT,
        _ => 0,
    }
}

/// The roles an element's tag, id and classes hint at.
fn own_roles(dom: &Dom, i: usize, names: &[NameWords]) -> u16 {
    dom.tag(i).map_or(0, role_of_tag) | names.get(i).map_or(0, |n| n.roles)
}

/// One pass over a text node's characters: digits and punctuation are counted, and every word
/// token — a lower-cased alphanumeric run of at least three characters (shorter runs are mostly
/// stop words, numbers and initials) — is hashed and handed to `token`. Returns
/// (digits, punctuation).
///
/// Runs for every character of every page, so ASCII bytes (nearly all of them, even in text
/// with a curly quote or a non-breaking space) are classified by table and only the others are
/// decoded and asked the Unicode questions; both paths give the same answers.
fn scan_text(text: &str, word: &mut Vec<u8>, mut token: impl FnMut(u64)) -> (u32, u32) {
    let (mut digits, mut punctuation) = (0, 0);
    let mut run_chars = 0u32;
    word.clear();
    for unit in text_units(text) {
        match unit {
            TextUnit::Ascii(b) => {
                let lower = ASCII_WORD_BYTE[usize::from(b)];
                if lower != 0 {
                    digits += u32::from(b.is_ascii_digit());
                    word.push(lower);
                    run_chars += 1;
                    continue;
                }
                if !is_ascii_text_space(b) {
                    punctuation += 1;
                }
            }
            TextUnit::Other(c) => {
                if c.is_alphanumeric() {
                    if c.is_numeric() {
                        digits += 1;
                    }
                    push_lowercase(c, word);
                    run_chars += 1;
                    continue;
                }
                if !c.is_whitespace() {
                    punctuation += 1;
                }
            }
        }
        if run_chars >= 3 {
            token(xxh3_64(word));
        }
        word.clear();
        run_chars = 0;
    }
    if run_chars >= 3 {
        token(xxh3_64(word));
    }
    (digits, punctuation)
}

/// An ASCII byte's lower case if it is alphanumeric, else 0.
const ASCII_WORD_BYTE: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            table[b] = c.to_ascii_lowercase();
        }
        b += 1;
    }
    table
};

/// Token keys are xxh3 hashes already; hashing them again with SipHash would cost a measurable
/// share of the feature time for nothing.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type TokenMap<V> = HashMap<u64, V, BuildHasherDefault<Prehashed>>;

fn flag(set: bool) -> f32 {
    f32::from(u8::from(set))
}

fn ln1p(x: impl Into<f64>) -> f32 {
    (x.into()).ln_1p() as f32
}

/// Counts below this take their logarithm from a table.
const LOG_TABLE: usize = 4096;

/// [`ln1p`] of a count: the same bits, from a table for the small counts that nearly all
/// are. Twelve of the features are logarithms of counts, taken for every element of every page.
pub(crate) fn ln1p_count(count: u32) -> f32 {
    static TABLE: OnceLock<Vec<f32>> = OnceLock::new();
    let table = TABLE.get_or_init(|| (0..LOG_TABLE as u32).map(ln1p).collect());
    table
        .get(count as usize)
        .copied()
        .unwrap_or_else(|| ln1p(count))
}

/// [`ln1p`] of a size that is most often a whole number (an element's area: characters plus
/// whole weights of media and controls) or 0 (the link text per link of an element without
/// links): the same bits, from the table when it is one.
fn ln1p_size(size: f32) -> f32 {
    if size.is_sign_positive() && size < LOG_TABLE as f32 && size.fract() == 0.0 {
        ln1p_count(size as u32)
    } else {
        ln1p(size)
    }
}

fn ratio(part: impl Into<f64>, whole: impl Into<f64>) -> f32 {
    let whole = whole.into();
    if whole > 0.0 {
        (part.into() / whole) as f32
    } else {
        0.0
    }
}

/// Computes the features of every element of `dom`, given its [`Subtree`] aggregates.
pub fn compute(dom: &Dom, sums: &[Subtree]) -> PageFeatures {
    compute_with_names(dom, sums, &names::of_page(dom))
}

/// [`compute`], given also what the page's class and id names say ([`names::of_page`]), which
/// the content model reads too.
pub fn compute_with_names(dom: &Dom, sums: &[Subtree], names: &[NameWords]) -> PageFeatures {
    let n = dom.len();
    let mut extra = vec![Extra::default(); n];
    let mut word = Vec::new();

    // Forward over text: tokens, punctuation, digits, and the page's word distribution.
    let mut title_words: Vec<u64> = Vec::new();
    if let Some(title) = dom.title() {
        scan_text(title, &mut word, |h| title_words.push(h));
    }
    title_words.sort_unstable();
    title_words.dedup();
    let mut token_hashes: Vec<u64> = Vec::new();
    let mut token_ranges: Vec<(usize, u32, u32)> = Vec::new();
    for (i, e) in extra.iter_mut().enumerate() {
        let Some(text) = dom.visible_text(i) else {
            continue;
        };
        let start = token_hashes.len() as u32;
        (e.digits, e.punctuation) = scan_text(text, &mut word, |h| token_hashes.push(h));
        let end = token_hashes.len() as u32;
        if end > start {
            token_ranges.push((i, start, end));
        }
    }
    // Each token's count, then in place its surprisal: one table, sized up front (a page has
    // about one distinct token in three).
    let mut surprisal: TokenMap<f64> =
        TokenMap::with_capacity_and_hasher(token_hashes.len() / 3, Default::default());
    for &h in &token_hashes {
        *surprisal.entry(h).or_default() += 1.0;
    }
    let total_tokens = token_hashes.len() as f64;
    for value in surprisal.values_mut() {
        *value = -(*value / total_tokens).ln();
    }
    let surprisal_of = |h: &u64| surprisal.get(h).copied().unwrap_or(0.0);
    // The page's entropy is the mean surprisal of its tokens; summed in page order (never in
    // hash-map order) so that every run gives the same bits.
    let page_entropy = if token_hashes.is_empty() {
        0.0
    } else {
        token_hashes.iter().map(surprisal_of).sum::<f64>() / total_tokens
    };
    for &(i, start, end) in &token_ranges {
        let e = &mut extra[i];
        for h in &token_hashes[start as usize..end as usize] {
            e.tokens += 1;
            if title_words.binary_search(h).is_ok() {
                e.title_hits += 1;
            }
            e.surprisal += surprisal_of(h);
        }
    }

    // Backward: sum subtrees (children come after their parent in pre-order).
    for i in (0..n).rev() {
        if let Some(tag) = dom.tag(i) {
            if let Some(k) = TAG_COUNTED.iter().position(|t| t == tag) {
                extra[i].tags[k] += 1;
            }
            extra[i].media += match *tag {
                local_name!("img")
                | local_name!("video")
                | local_name!("iframe")
                | local_name!("embed")
                | local_name!("object")
                | local_name!("svg")
                | local_name!("canvas") => MEDIA_WEIGHT,
                local_name!("input")
                | local_name!("button")
                | local_name!("select")
                | local_name!("textarea") => CONTROL_WEIGHT,
                _ => 0.0,
            };
        }
        if let Some(parent) = dom.parent(i) {
            let child = extra[i];
            let p = &mut extra[parent];
            for (sum, add) in p.tags.iter_mut().zip(child.tags) {
                *sum += add;
            }
            p.media += child.media;
            p.punctuation += child.punctuation;
            p.digits += child.digits;
            p.tokens += child.tokens;
            p.title_hits += child.title_hits;
            p.surprisal += child.surprisal;
        }
    }

    let area: Vec<f32> = (0..n)
        .map(|i| sums[i].text_chars as f32 + extra[i].media)
        .collect();

    // Forward: roles inherited from ancestors, sibling positions, and each element's row.
    let mut own = vec![0u16; n];
    let mut inherited = vec![0u16; n];
    let mut sibling_index = vec![0u32; n];
    let mut element_children = vec![0u32; n];
    let mut row_of = vec![NO_ROW; n];
    let mut elements = 0u32;
    for i in 0..n {
        if dom.element(i).is_none() {
            continue;
        }
        row_of[i] = elements;
        elements += 1;
        own[i] = own_roles(dom, i, names);
        if let Some(parent) = dom.parent(i) {
            inherited[i] = inherited[parent] | own[parent];
            sibling_index[i] = element_children[parent];
            element_children[parent] += 1;
        }
    }

    let page_chars = sums.first().map_or(0, |s| s.text_chars);
    let page_area = area.first().copied().unwrap_or(0.0);
    let max_depth = dom.max_depth();
    let title_len = title_words.len() as u32;
    let mut values = vec![[0f32; COUNT]; elements as usize];
    for i in 0..n {
        let Some(tag) = dom.tag(i) else { continue };
        let s = &sums[i];
        let e = &extra[i];
        let depth = dom.node(i).depth;
        let start = ratio(s.text_start, page_chars);
        let end = ratio(s.text_end(), page_chars);
        let (sibling_index, siblings) = (
            sibling_index[i],
            dom.parent(i).map_or(1, |p| element_children[p]),
        );
        let roles = own[i];
        let has = |role: u16| flag(roles & role != 0);
        let mean_surprisal = if e.tokens > 0 {
            e.surprisal / f64::from(e.tokens)
        } else {
            page_entropy
        };
        let row: [f32; COUNT] = [
            start,
            end,
            start.min(1.0 - end).max(0.0),
            ratio(i as u32, n as u32),
            ln1p_count(depth),
            ratio(depth, max_depth),
            ratio(s.links, s.words),
            ratio(s.anchor_text_chars, s.text_chars),
            ln1p_size(ratio(s.anchor_text_chars, s.links)),
            ratio(s.intra_host_links, s.links),
            ratio(s.text_chars, s.html_bytes),
            ratio(e.title_hits, title_len).min(1.0),
            ratio(e.title_hits, e.tokens),
            ln1p_count(s.text_chars),
            ln1p_count(s.words),
            ratio(s.text_chars, page_chars),
            ratio(e.punctuation, s.text_chars),
            ratio(e.digits, s.text_chars),
            (mean_surprisal - page_entropy) as f32,
            ln1p_count(e.tags[0]),
            ln1p_count(e.tags[1]),
            ln1p_count(e.tags[2]),
            ln1p_count(e.tags[3]),
            ln1p_count(e.tags[4]),
            ln1p_count(e.tags[5]),
            ln1p_count(e.tags[6]),
            ln1p_count(s.descendants),
            if siblings > 1 {
                sibling_index as f32 / (siblings - 1) as f32
            } else {
                0.0
            },
            ln1p_count(siblings),
            flag(matches!(
                *tag,
                local_name!("ul")
                    | local_name!("ol")
                    | local_name!("li")
                    | local_name!("dl")
                    | local_name!("dt")
                    | local_name!("dd")
                    | local_name!("menu")
            )),
            flag(crate::dom::is_heading(tag)),
            flag(matches!(
                *tag,
                local_name!("p") | local_name!("blockquote") | local_name!("pre")
            )),
            flag(*tag == local_name!("a")),
            flag(matches!(
                *tag,
                local_name!("table")
                    | local_name!("tbody")
                    | local_name!("thead")
                    | local_name!("tr")
                    | local_name!("td")
                    | local_name!("th")
            )),
            flag(matches!(
                *tag,
                local_name!("div") | local_name!("section") | local_name!("span")
            )),
            ln1p_size(area[i]),
            ratio(area[i], page_area),
            has(ROLE_NAV),
            has(ROLE_HEADER),
            has(ROLE_FOOTER),
            has(ROLE_SIDEBAR),
            has(ROLE_AD),
            has(ROLE_SOCIAL),
            has(ROLE_COMMENT),
            has(ROLE_RELATED),
            has(ROLE_COOKIE),
            has(ROLE_BREADCRUMB),
            has(ROLE_CONTENT),
            flag(inherited[i] & TEMPLATE_ROLES != 0),
            flag(inherited[i] & ROLE_CONTENT != 0),
        ];
        values[row_of[i] as usize] = row;
    }
    PageFeatures {
        values,
        row_of,
        area,
    }
}

/// The index of a feature by name.
pub fn index_of(name: &str) -> Option<usize> {
    NAMES.iter().position(|&n| n == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::subtree::summarize;

    /// The character-by-character definition [`scan_text`]'s ASCII table must agree with.
    fn scan_by_chars(text: &str) -> (u32, u32, Vec<u64>) {
        let (mut digits, mut punctuation, mut tokens) = (0, 0, Vec::new());
        let mut word = Vec::new();
        let mut run_chars = 0;
        for c in text.chars().chain([' ']) {
            if c.is_alphanumeric() {
                digits += u32::from(c.is_numeric());
                push_lowercase(c, &mut word);
                run_chars += 1;
                continue;
            }
            punctuation += u32::from(!c.is_whitespace());
            if run_chars >= 3 {
                tokens.push(xxh3_64(&word));
            }
            word.clear();
            run_chars = 0;
        }
        (digits, punctuation, tokens)
    }

    #[test]
    fn the_ascii_table_scans_as_the_characters_do() {
        let mut every_ascii: String = (0u8..128).map(char::from).collect();
        every_ascii.push_str(" ABC xyz 0123");
        for text in [
            every_ascii.as_str(),
            "Hello, World! 2024 was ok.",
            "It\u{2019}s CAF\u{c9} na\u{ef}ve \u{a0}r\u{e9}sum\u{e9}\u{2014}done",
            "\u{5317}\u{4eac}\u{5e02} \u{0661}\u{0662}\u{0663} \u{2163}x",
            "mIxEd\u{0130}stanbul \u{1f600}emoji\u{1f600} tail",
            "",
            "ab",
            "\u{b}\u{c}\r\n\t",
        ] {
            let mut word = Vec::new();
            let mut tokens = Vec::new();
            let (digits, punctuation) = scan_text(text, &mut word, |h| tokens.push(h));
            assert_eq!(
                (digits, punctuation, tokens),
                scan_by_chars(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn logarithms_of_sizes_are_exact() {
        for size in [
            0.0f32,
            -0.0,
            1.0,
            20.0,
            100.5,
            4095.0,
            4096.0,
            1e9,
            -3.0,
            f32::NAN,
        ] {
            assert_eq!(ln1p_size(size).to_bits(), ln1p(size).to_bits(), "{size}");
        }
    }

    #[test]
    fn logarithms_of_counts_are_exact() {
        for count in (0..LOG_TABLE as u32 + 10).chain([u32::MAX - 1, u32::MAX]) {
            assert_eq!(
                ln1p_count(count).to_bits(),
                ln1p(count).to_bits(),
                "{count}"
            );
        }
    }

    #[test]
    fn counted_tags_follow_the_feature_order() {
        // `log_a` … `log_button` are the counts of TAG_COUNTED, in its order.
        let first = index_of("log_a").expect("log_a");
        for (k, tag) in TAG_COUNTED.iter().enumerate() {
            assert_eq!(NAMES[first + k], format!("log_{tag}"), "{tag}");
        }
        assert!(!TAG_COUNTED.contains(&LocalName::from("div")));
    }

    #[test]
    fn roles_are_the_same_for_a_repeated_class() {
        // The second and third elements take the class's roles from the page's memo.
        let (dom, f) = page(
            "<html><body><div class='site-nav x'>a</div><div class='site-nav x'>b</div>\
             <div class='x site-nav'>c</div><div class='x'>d</div></body></html>",
        );
        let divs: Vec<usize> = (0..dom.len())
            .filter(|&i| dom.tag(i).is_some_and(|t| &**t == "div"))
            .collect();
        let nav = index_of("role_nav").expect("role_nav");
        let roles: Vec<f32> = divs.iter().map(|&d| f.row(d)[nav]).collect();
        assert_eq!(roles, [1.0, 1.0, 1.0, 0.0]);
    }

    fn page(html: &str) -> (Dom, PageFeatures) {
        let dom = crate::dom::parse(html, 512);
        let sums = summarize(&dom, "example.com");
        let features = compute(&dom, &sums);
        (dom, features)
    }

    fn find(dom: &Dom, id: &str) -> usize {
        (0..dom.len()).find(|&i| dom.id(i) == Some(id)).unwrap()
    }

    fn get(f: &PageFeatures, node: usize, name: &str) -> f32 {
        f.row(node)[index_of(name).unwrap()]
    }

    const PAGE: &str = "<html><head><title>Rust parsers compared</title></head><body>\
        <div id=top class='site-header'><ul id=menu class=main-nav>\
        <li><a href='/'>Home</a></li><li><a href='/news'>News</a></li>\
        <li><a href='https://other.org/x'>Elsewhere</a></li></ul></div>\
        <article id=story><h1 id=h>Rust parsers compared</h1>\
        <p id=p>We compared three parsers written in Rust, measuring speed and correctness \
        on ten thousand crawled pages; the parsers differ by 3x in speed.</p>\
        <img src=a.png></article>\
        <div id=foot class=footer><p>Copyright 2026 Example Inc. All rights reserved.</p></div>\
        </body></html>";

    #[test]
    fn names_match_the_row() {
        assert_eq!(NAMES.len(), COUNT);
        let mut sorted = NAMES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), COUNT, "feature names are unique");
    }

    #[test]
    fn margins_follow_the_text_stream() {
        let (dom, f) = page(PAGE);
        let (top, story, foot) = (find(&dom, "top"), find(&dom, "story"), find(&dom, "foot"));
        assert_eq!(get(&f, top, "text_start"), 0.0);
        assert_eq!(get(&f, top, "margin"), 0.0);
        assert!((get(&f, foot, "text_end") - 1.0).abs() < 1e-6);
        assert_eq!(get(&f, foot, "margin"), 0.0);
        assert!(
            get(&f, story, "margin") > 0.05,
            "the article sits between header and footer"
        );
    }

    #[test]
    fn links_and_anchor_text() {
        let (dom, f) = page(PAGE);
        let (menu, p) = (find(&dom, "menu"), find(&dom, "p"));
        assert_eq!(get(&f, menu, "anchor_text_share"), 1.0);
        assert!(
            (get(&f, menu, "links_per_word") - 1.0).abs() < 1e-6,
            "3 links, 3 words"
        );
        assert!((get(&f, menu, "intra_site_link_share") - 2.0 / 3.0).abs() < 1e-6);
        assert!((get(&f, menu, "log_li") - 3f32.ln_1p()).abs() < 1e-6);
        assert_eq!(get(&f, p, "anchor_text_share"), 0.0);
        assert_eq!(get(&f, p, "links_per_word"), 0.0);
        assert!(get(&f, p, "visible_to_html") > get(&f, menu, "visible_to_html"));
    }

    #[test]
    fn title_words_and_divergence() {
        let (dom, f) = page(PAGE);
        let (h, menu, foot) = (find(&dom, "h"), find(&dom, "menu"), find(&dom, "foot"));
        assert_eq!(get(&f, h, "title_overlap"), 1.0);
        assert_eq!(get(&f, h, "title_density"), 1.0);
        assert_eq!(get(&f, menu, "title_overlap"), 0.0);
        // The heading repeats the article's words; the footer's words occur nowhere else.
        assert!(get(&f, foot, "word_divergence") > get(&f, h, "word_divergence"));
        assert!(get(&f, foot, "digit_ratio") > 0.0);
        assert!(get(&f, foot, "punctuation_ratio") > 0.0);
    }

    #[test]
    fn roles_from_classes_ids_and_tags() {
        let (dom, f) = page(PAGE);
        let (top, menu, story, foot) = (
            find(&dom, "top"),
            find(&dom, "menu"),
            find(&dom, "story"),
            find(&dom, "foot"),
        );
        assert_eq!(get(&f, top, "role_header"), 1.0);
        assert_eq!(get(&f, menu, "role_nav"), 1.0);
        assert_eq!(
            get(&f, menu, "role_content"),
            1.0,
            "`main-nav` hints at both"
        );
        assert_eq!(get(&f, menu, "inside_template_role"), 1.0);
        assert_eq!(get(&f, story, "role_content"), 1.0);
        assert_eq!(get(&f, story, "inside_template_role"), 0.0);
        assert_eq!(get(&f, find(&dom, "p"), "inside_content_role"), 1.0);
        assert_eq!(get(&f, foot, "role_footer"), 1.0);
        let roles = |name| crate::page_models::names::words_of_name(name).roles;
        assert_eq!(roles("shadow"), 0);
        assert_eq!(roles("ad"), ROLE_AD);
        assert_eq!(roles("navigation"), ROLE_NAV);
    }

    #[test]
    fn area_counts_media_and_picks_a_bucket() {
        let (dom, f) = page(PAGE);
        let story = find(&dom, "story");
        let text = summarize(&dom, "example.com")[story].text_chars as f32;
        assert_eq!(f.area[story], text + MEDIA_WEIGHT);
        assert_eq!(bucket(0.0, &BUCKET_BOUNDS), 0);
        assert_eq!(bucket(50.0, &BUCKET_BOUNDS), 1);
        assert_eq!(bucket(4999.0, &BUCKET_BOUNDS), 2);
        assert_eq!(bucket(1e9, &BUCKET_BOUNDS), 3);
    }

    #[test]
    fn siblings_and_deep_pages() {
        let (dom, f) = page(PAGE);
        let lis: Vec<usize> = (0..dom.len())
            .filter(|&i| dom.tag(i).is_some_and(|t| &**t == "li"))
            .collect();
        assert_eq!(get(&f, lis[0], "sibling_position"), 0.0);
        assert_eq!(get(&f, lis[2], "sibling_position"), 1.0);
        assert!((get(&f, lis[1], "log_siblings") - 3f32.ln_1p()).abs() < 1e-6);
        // 20,000 nested divs: no recursion, every value finite.
        let deep = format!(
            "<body>{}x{}</body>",
            "<div>".repeat(20_000),
            "</div>".repeat(20_000)
        );
        let (_, f) = page(&deep);
        assert!(f.values.iter().flatten().all(|v| v.is_finite()));
    }
}
