//! L3S-GN1's labels on the original pages' text nodes (pages from [`crate::gold::l3s_gn1`]).
//!
//! The assessors labelled `annotated/`: a browser's serialization of the page's DOM in which
//! the labelled text sits in `<span class="x-nc-selN">`. [`spans`] reads those spans as
//! ranges of the annotated page's visible text stream ([`Subtree::text_start`] and
//! [`Subtree::text_chars`]); [`text_node_classes`] carries them over to the text nodes of the
//! original page, which is what a system under test parses.
//!
//! Offsets cannot be carried over as they are: parsed with [`parse_page`], the two pages'
//! visible text streams differ in length on 185 of the 621 pages (by at most 5 characters on
//! 24, by 6–50 on 51, by more on 110). Why:
//!
//! - the annotator's DOM has no comments, so text split by a comment in the original is one
//!   text node there, and white space at the split counts once more (`7 <!-- -->-- As`);
//! - text hidden by style sheets ("Skip to main content", "Main Menu", second copies of a
//!   headline, whole fly-out menus) is missing from the annotated page, and text written by
//!   scripts (menus, `<noscript>` fallbacks) is only there;
//! - the 2008 browser parsed broken markup differently (`-->` or `" />` shown as text);
//! - every character outside Latin-1 (’ – … € U+2028) is `?` in the annotated page;
//! - 9 originals lost bytes in their `<head>`: a `<title>` (8 pages) or a `<script>` (1) is
//!   never closed, so HTML5 parsing reads (almost) the whole page as its text and shows nothing
//!   (or 481 of 1,778 characters). The annotated pages, made from the intact originals, are
//!   fine; these 9 cannot be mapped.
//!
//! So [`text_node_classes`] aligns the two pages' text nodes by their text instead. It maps
//! 612 of the 621 pages (all but those 9); on them, the original's visible text nodes get
//! class 0 / 1 / 2 / 3 / 4 / 5 / none: 81,648 / 703 / 9,198 / 1,964 / 642 / 3,863 / 5,325
//! nodes, 1,238,822 / 31,678 / 1,544,392 / 57,711 / 19,896 / 266,002 / 78,705 characters.
//! On 35 of those pages more than 10% of the original's characters have no class (text the
//! assessors did not see); on 464 none.

use std::path::Path;

use stencil_operators::dom::subtree::{summarize, Subtree};
use stencil_operators::dom::{self, Dom};
use stencil_operators::reading::charset;
use stencil_operators::reading::warc::Limits;
use stencil_operators::site::site_level;

/// Assessor classes by number: `x-nc-sel0` … `x-nc-sel5`.
pub const CLASS_NAMES: [&str; 6] = [
    "boilerplate",
    "headline",
    "full text",
    "supplemental",
    "related",
    "comments",
];

/// Assessor classes: 0 boilerplate, 1 headline, 2 full text, 3 supplemental, 4 related,
/// 5 comments. `start..end` is a range of the annotated page's visible text stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelledSpan {
    pub start: u32,
    pub end: u32,
    pub class: u8,
}

/// An original L3S-GN1 page, parsed, with the class of each of its text nodes.
pub struct LabelledPage {
    pub host: String,
    pub dom: Dom,
    pub sums: Vec<Subtree>,
    /// [`text_node_classes`]: an assessor class per visible text node, `None` elsewhere.
    pub classes: Vec<Option<u8>>,
}

/// The L3S-GN1 pages the shipped model never saw, mapped ([`text_node_classes`]).
pub struct Unseen {
    pub pages: Vec<LabelledPage>,
    /// Pages left out because their site is in the dev crawl the shipped model was trained
    /// on (docs/model.md).
    pub left_out: usize,
}

/// Loads L3S-GN1 from `dir` and keeps the pages that map, leaving out those of sites in the
/// shipped model's dev crawl (dragnet, cleanportaleval, SWDE's booksamillion.com), so figures
/// are for sites the model never saw.
pub fn unseen_by_shipped_model(dir: &Path) -> Unseen {
    let mut seen_hosts = std::collections::HashSet::new();
    if let (Some(dragnet), Some(cpe)) = (
        crate::shared_dir("data/dragnet"),
        crate::shared_dir("data/cleanportaleval"),
    ) {
        for page in crate::gold::dragnet(&dragnet, 1)
            .into_iter()
            .chain(crate::gold::cleanportaleval(&cpe))
        {
            seen_hosts.insert(site_level::site_of(&page.host).to_string());
        }
    }
    seen_hosts.insert("booksamillion.com".to_string());
    let mut unseen = Unseen {
        pages: Vec::new(),
        left_out: 0,
    };
    for page in crate::gold::l3s_gn1(dir) {
        if seen_hosts.contains(site_level::site_of(&page.host)) {
            unseen.left_out += 1;
            continue;
        }
        let (dom, sums) = parse_page(&page.original, &page.host);
        let (annotated, annotated_sums) = parse_page(&page.annotated, &page.host);
        if let Some(classes) = text_node_classes(&dom, &sums, &annotated, &annotated_sums) {
            unseen.pages.push(LabelledPage {
                host: page.host,
                dom,
                sums,
                classes,
            });
        }
    }
    unseen
}

/// Decodes and parses a page of the data set (original or annotated) as the workspace does:
/// [`charset::decode`], [`dom::parse`] with the default depth limit, [`summarize`] for `host`.
///
/// Both folders hold UTF-8 whatever the pages declare: the conversion from the WARC re-encoded
/// the originals, but left their `<meta>` declarations (`iso-8859-1` mostly, also
/// `windows-1251`, `big5`…), and the annotated pages declare nothing. So the bytes are decoded
/// as if served with `Content-Type: text/html; charset=utf-8`. Without that header the
/// `<meta>` would decide, and 111 originals would come out as mojibake (`â€™` for `’`) but for
/// [`charset::decode`]'s rule that bytes valid as UTF-8 overrule a legacy declaration
/// (`hostile::pages_re_encoded_under_a_stale_declaration_read_as_utf8`);
/// [`text_node_classes`] gives their text nodes the same classes either way.
pub fn parse_page(bytes: &[u8], host: &str) -> (Dom, Vec<Subtree>) {
    let tld = host.rsplit('.').next().filter(|t| !t.is_empty());
    let text = charset::decode(bytes, Some("utf-8"), tld).text;
    let dom = dom::parse(&text, Limits::default().max_dom_depth);
    let sums = summarize(&dom, host);
    (dom, sums)
}

/// The assessor class an element carries: its first class token `x-nc-sel0` … `x-nc-sel5`.
pub fn class_of(dom: &Dom, i: usize) -> Option<u8> {
    dom.classes(i).find_map(|class| {
        let n: u8 = class.strip_prefix("x-nc-sel")?.parse().ok()?;
        (usize::from(n) < CLASS_NAMES.len()).then_some(n)
    })
}

/// Every element with class `x-nc-selN` in the annotated page, as a span of the visible text
/// stream, in document order (so a span inside another comes after it). Elements without
/// visible text are left out. The annotator wrapped every node of a selected region, elements
/// included, so spans nest, and classes can differ: a headline region's span around a list
/// whose items carry `x-nc-sel0`. The innermost span is the label of its text.
pub fn spans(annotated: &Dom, sums: &[Subtree]) -> Vec<LabelledSpan> {
    (0..annotated.len())
        .filter_map(|i| {
            let class = class_of(annotated, i)?;
            let sum = sums[i];
            (sum.text_chars > 0).then_some(LabelledSpan {
                start: sum.text_start,
                end: sum.text_end(),
                class,
            })
        })
        .collect()
}

/// The class of the innermost span covering each stream position in `positions` (ascending).
fn classes_at(spans: &[LabelledSpan], positions: impl Iterator<Item = u32>) -> Vec<Option<u8>> {
    let mut open: Vec<LabelledSpan> = Vec::new();
    let mut next = 0;
    positions
        .map(|at| {
            while let Some(span) = spans.get(next).filter(|s| s.start <= at) {
                while open.last().is_some_and(|o| o.end <= span.start) {
                    open.pop();
                }
                open.push(*span);
                next += 1;
            }
            while open.last().is_some_and(|o| o.end <= at) {
                open.pop();
            }
            open.last().map(|s| s.class)
        })
        .collect()
}

/// What [`text_node_classes`] compares: a text node's visible text without white space, ASCII
/// lower-cased, every run of non-ASCII characters and `?` as one `?` (so `’`, its mojibake
/// `â€™` and the annotated page's `?` agree). Always ASCII.
fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_whitespace() || matches!(c, '\u{85}' | '\u{a0}') {
            continue;
        }
        if c.is_ascii() && c != '?' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('?') {
            out.push('?');
        }
    }
    out
}

/// Visible text nodes with some text: `(node, folded text)` in document order.
fn text_nodes(dom: &Dom, sums: &[Subtree]) -> Vec<(usize, String)> {
    (0..dom.len())
        .filter(|&i| sums[i].text_chars > 0)
        .filter_map(|i| Some((i, fold(dom.visible_text(i)?))))
        .filter(|(_, folded)| !folded.is_empty())
        .collect()
}

/// At most this many text nodes inserted or deleted between the two pages (a bound on the
/// diff's work); pages further apart are not mapped. The most on any of the 621 pages is 393.
const MAX_NODE_EDITS: usize = 2000;

/// The annotated page must have at least this share of its visible characters in aligned
/// text.
const MIN_ALIGNED: f64 = 0.9;

/// For the ORIGINAL page: the class of every visible text node (indexed by node; `None` for
/// other nodes and for text the assessors did not see).
///
/// In the annotated page, a text node inside an element of class `x-nc-invisible` has no
/// class (it was hidden from the assessors); any other takes the class of the innermost of
/// [`spans`] covering its first visible character (the annotator wrapped whole regions and
/// then the blocks inside them, which can differ), and text outside every span is class 0:
/// upstream's readme says "unselected text is regarded not content", and about a third of
/// the annotated pages' visible characters are such text.
///
/// The original's text nodes are then aligned with the annotated page's, comparing their text
/// with white space removed, lower-cased, and runs of `?` and non-ASCII characters folded to
/// one `?` (the annotated pages turned everything outside Latin-1 into `?`, white space such
/// as U+2028 included; only ASCII white space and U+0085/U+00A0 are dropped, as Latin-1 kept
/// them). Folded texts are compared exactly:
///
/// 1. a shortest edit script between the two sequences of text nodes (Myers' diff) pairs
///    equal nodes: each original node takes its partner's class;
/// 2. between two pairs, the unpaired nodes of both sides are concatenated: where the two
///    concatenations agree from the start (common prefix) or from the end (common suffix), an
///    original node takes the class of the annotated node holding the counterpart of its first
///    character that has one. This catches text split or joined differently (comments dropped
///    by the annotator's browser, whitespace at a split, a block wrapped in two spans).
///
/// Original text with no counterpart stays `None`: it was not in the page the assessors saw
/// (menus hidden by style sheets or never rendered, duplicates, text our HTML5 parser shows
/// and the 2008 browser did not).
///
/// Returns `None` when the labels do not land: less than 90% of the annotated page's visible
/// characters ([`Subtree::text_chars`]) are in text aligned with the original, or more than
/// [`MAX_NODE_EDITS`] text nodes differ. The original may have any share without a
/// counterpart (on 35 of the 612 pages that map, more than 10% of its characters).
pub fn text_node_classes(
    original: &Dom,
    original_sums: &[Subtree],
    annotated: &Dom,
    annotated_sums: &[Subtree],
) -> Option<Vec<Option<u8>>> {
    let ours = text_nodes(original, original_sums);
    let theirs = text_nodes(annotated, annotated_sums);
    let their_classes = annotated_classes(annotated, annotated_sums, &theirs);
    let pairs = diff(&ours, &theirs, MAX_NODE_EDITS)?;

    // partner[k]: the annotated text node (index into `theirs`) holding the counterpart of
    // original text node k's first character that has one.
    let mut partner: Vec<Option<usize>> = vec![None; ours.len()];
    let mut aligned = vec![false; theirs.len()];
    let (mut o, mut a) = (0, 0);
    for (po, pa) in pairs.into_iter().chain([(ours.len(), theirs.len())]) {
        let gap = align_gap(&ours[o..po], &theirs[a..pa]);
        for (k, t) in gap.pairs {
            partner[o + k] = Some(a + t);
        }
        for (t, is_aligned) in gap.aligned.into_iter().enumerate() {
            aligned[a + t] = is_aligned;
        }
        if po < ours.len() {
            partner[po] = Some(pa);
            aligned[pa] = true;
        }
        (o, a) = (po + 1, pa + 1);
    }

    let (mut total, mut kept) = (0u64, 0u64);
    for (&(node, _), &is_aligned) in theirs.iter().zip(&aligned) {
        let chars = u64::from(annotated_sums[node].text_chars);
        total += chars;
        kept += if is_aligned { chars } else { 0 };
    }
    if (kept as f64) < MIN_ALIGNED * total as f64 {
        return None;
    }

    let mut classes = vec![None; original.len()];
    for (k, &(node, _)) in ours.iter().enumerate() {
        classes[node] = partner[k].and_then(|t| their_classes[t]);
    }
    Some(classes)
}

/// The class of each of the annotated page's text nodes `theirs` (see [`text_node_classes`]).
fn annotated_classes(
    annotated: &Dom,
    sums: &[Subtree],
    theirs: &[(usize, String)],
) -> Vec<Option<u8>> {
    let mut invisible = vec![false; annotated.len()];
    for i in 0..annotated.len() {
        invisible[i] = annotated.parent(i).is_some_and(|p| invisible[p])
            || annotated.classes(i).any(|c| c == "x-nc-invisible");
    }
    let labels = spans(annotated, sums);
    let innermost = classes_at(&labels, theirs.iter().map(|&(i, _)| sums[i].text_start));
    theirs
        .iter()
        .zip(innermost)
        .map(|(&(node, _), class)| (!invisible[node]).then_some(class.unwrap_or(0)))
        .collect()
}

/// What [`align_gap`] found.
#[derive(Debug, PartialEq, Eq)]
struct Gap {
    /// `(k, t)`: the counterpart of the first character of `ours[k]` that has one is in
    /// `theirs[t]`.
    pairs: Vec<(usize, usize)>,
    /// Per node of `theirs`: some of its text has a counterpart.
    aligned: Vec<bool>,
}

/// Step 2 of [`text_node_classes`] on one stretch of unpaired nodes. Folded text is ASCII, so
/// byte offsets are character offsets.
fn align_gap(ours: &[(usize, String)], theirs: &[(usize, String)]) -> Gap {
    let join = |nodes: &[(usize, String)]| {
        let mut text = String::new();
        let mut starts = Vec::with_capacity(nodes.len());
        for (_, folded) in nodes {
            starts.push(text.len());
            text.push_str(folded);
        }
        (text, starts)
    };
    let (ours_text, ours_starts) = join(ours);
    let (theirs_text, theirs_starts) = join(theirs);
    let (lo, la) = (ours_text.len(), theirs_text.len());
    let prefix = ours_text
        .bytes()
        .zip(theirs_text.bytes())
        .take_while(|(x, y)| x == y)
        .count();
    let suffix = ours_text
        .bytes()
        .rev()
        .zip(theirs_text.bytes().rev())
        .take(lo.min(la) - prefix)
        .take_while(|(x, y)| x == y)
        .count();
    // The annotated node holding an offset: the last one starting at or before it.
    let holder = |at: usize| theirs_starts.partition_point(|&s| s <= at) - 1;
    let mut pairs = Vec::new();
    for (k, &start) in ours_starts.iter().enumerate() {
        let end = start + ours[k].1.len();
        let counterpart = if start < prefix {
            start
        } else if end > lo - suffix {
            start.max(lo - suffix) + la - lo
        } else {
            continue;
        };
        pairs.push((k, holder(counterpart)));
    }
    let aligned = theirs_starts
        .iter()
        .zip(theirs)
        .map(|(&start, (_, folded))| start < prefix || start + folded.len() > la - suffix)
        .collect();
    Gap { pairs, aligned }
}

/// Myers' O(ND) diff of two sequences of folded text: the index pairs of equal elements in a
/// shortest edit script, ascending; `None` beyond `max_edits` insertions and deletions.
fn diff(
    ours: &[(usize, String)],
    theirs: &[(usize, String)],
    max_edits: usize,
) -> Option<Vec<(usize, usize)>> {
    let eq = |x: usize, y: usize| ours[x].1 == theirs[y].1;
    // Common ends first: most pages differ in a few places only.
    let (n_all, m_all) = (ours.len(), theirs.len());
    let head = (0..n_all.min(m_all)).take_while(|&i| eq(i, i)).count();
    let tail = (0..n_all.min(m_all) - head)
        .take_while(|&i| eq(n_all - 1 - i, m_all - 1 - i))
        .count();
    let (n, m) = (
        (n_all - head - tail) as isize,
        (m_all - head - tail) as isize,
    );
    let eq = |x: isize, y: isize| eq(head + x as usize, head + y as usize);

    // v[k + offset] = furthest x on diagonal k; trace[d] = v before round d, for -d-1..=d+1.
    let max_d = isize::try_from(max_edits).unwrap_or(isize::MAX).min(n + m);
    let offset = max_d + 1;
    let mut v = vec![0isize; 2 * offset as usize + 1];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'rounds: for d in 0..=max_d {
        trace.push(v[(offset - d - 1) as usize..=(offset + d + 1) as usize].to_vec());
        for k in (-d..=d).step_by(2) {
            let at = |k: isize| v[(k + offset) as usize];
            let mut x = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
                at(k + 1)
            } else {
                at(k - 1) + 1
            };
            let mut y = x - k;
            while x < n && y < m && eq(x, y) {
                x += 1;
                y += 1;
            }
            v[(k + offset) as usize] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'rounds;
            }
        }
    }
    let found = found?;

    let mut pairs: Vec<(usize, usize)> =
        (0..tail).map(|i| (n_all - 1 - i, m_all - 1 - i)).collect();
    let (mut x, mut y) = (n, m);
    for d in (0..=found).rev() {
        // trace[d][j] is v[j - d - 1].
        let before = |k: isize| trace[d as usize][(k + d + 1) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && before(k - 1) < before(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = before(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
            pairs.push((head + x as usize, head + y as usize));
        }
        (x, y) = (prev_x, prev_y);
    }
    pairs.extend((0..head).rev().map(|i| (i, i)));
    pairs.reverse();
    Some(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(words: &[&str]) -> Vec<(usize, String)> {
        words.iter().map(|w| (0, w.to_string())).collect()
    }

    #[test]
    fn myers_pairs_equal_nodes() {
        let a = nodes(&["a", "b", "c", "a", "b", "b", "a"]);
        let b = nodes(&["c", "b", "a", "b", "a", "c"]);
        let pairs = diff(&a, &b, 100).unwrap();
        // Shortest edit script: 5 edits, so 4 pairs, ascending on both sides.
        assert_eq!(pairs.len(), 4);
        assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        assert!(pairs.iter().all(|&(x, y)| a[x].1 == b[y].1));
        assert_eq!(diff(&a, &b, 4), None);
        assert_eq!(diff(&a, &a, 0).unwrap().len(), a.len());
        assert_eq!(diff(&a, &[], 7).unwrap(), []);
        assert_eq!(diff(&[], &[], 0).unwrap(), []);
    }

    #[test]
    fn folding_agrees_across_encodings() {
        assert_eq!(fold(" Kosovo’s\u{a0}future "), "kosovo?sfuture");
        assert_eq!(
            fold("Kosovo\u{e2}\u{20ac}\u{2122}s future"),
            "kosovo?sfuture"
        );
        assert_eq!(fold("Kosovo?s Future"), "kosovo?sfuture");
        // U+2028 is white space to Rust but not Latin-1: `?` in the annotated pages.
        assert_eq!(fold("teacup.\u{2028}"), fold("teacup.?"));
        assert_eq!(fold("a ?\u{a0}’ b"), "a?b");
    }

    #[test]
    fn innermost_span_wins() {
        let span = |start, end, class| LabelledSpan { start, end, class };
        let spans = [span(0, 10, 1), span(2, 4, 0), span(2, 3, 3), span(6, 8, 2)];
        assert_eq!(
            classes_at(&spans, [0, 2, 3, 4, 6, 9, 10].into_iter()),
            [Some(1), Some(3), Some(0), Some(1), Some(2), Some(1), None]
        );
    }

    #[test]
    fn gaps_align_by_prefix_and_suffix() {
        let ours = nodes(&["jan.7", "--as", "skip", "end"]);
        let theirs = nodes(&["jan.7--as", "xend"]);
        // "skip" has no counterpart; "end" matches the end of "xend".
        assert_eq!(
            align_gap(&ours, &theirs),
            Gap {
                pairs: vec![(0, 0), (1, 0), (3, 1)],
                aligned: vec![true, true]
            }
        );
        let theirs = nodes(&["jan.7--as", "new", "end"]);
        assert_eq!(align_gap(&ours, &theirs).aligned, [true, false, true]);
        assert_eq!(
            align_gap(&ours, &[]),
            Gap {
                pairs: vec![],
                aligned: vec![]
            }
        );
    }

    #[test]
    fn labels_carry_over_to_the_original() {
        let original = "<html><head><title>T</title></head><body>\
            <a class=skip href=#c>Skip</a><div>Home | News</div><ul><li>Menu</li></ul>\
            <h1>Kosovo’s future</h1><p>Jan. 7 <!-- x -->-- The council met.</p>\
            <p>Second   paragraph, long enough to outweigh the skip link.</p>\
            <div>Copyright</div></body></html>";
        let annotated = "<html><head></head><body><div>Home | News</div>\
            <ul class=\"x-nc-invisible\"><li><span class=\"x-nc-sel0\">Menu</span></li></ul>\
            <h1><span class=\"x-nc-sel1\">Kosovo?s future</span></h1>\
            <p><span class=\"x-nc-sel2\">Jan. 7 -- The council met.</span></p>\
            <p><span class=\"x-nc-sel2\">Second paragraph, long enough to outweigh the skip link.</span></p>\
            <div><span class=\"x-nc-sel0\">Copyright</span></div></body></html>";
        let od = dom::parse(original, 64);
        let os = summarize(&od, "x.test");
        let ad = dom::parse(annotated, 64);
        let asums = summarize(&ad, "x.test");
        let span = |start, end, class| LabelledSpan { start, end, class };
        // "Home | News" (11 characters) is outside every span.
        assert_eq!(
            spans(&ad, &asums),
            [
                span(11, 15, 0),
                span(15, 30, 1),
                span(30, 56, 2),
                span(56, 112, 2),
                span(112, 121, 0)
            ]
        );
        let classes = text_node_classes(&od, &os, &ad, &asums).unwrap();
        let by_text: Vec<(&str, Option<u8>)> = (0..od.len())
            .filter_map(|i| Some((od.visible_text(i)?.trim(), classes[i])))
            .filter(|(t, _)| !t.is_empty())
            .collect();
        assert_eq!(
            by_text,
            [
                ("Skip", None),
                ("Home | News", Some(0)),
                ("Menu", None),
                ("Kosovo’s future", Some(1)),
                ("Jan. 7", Some(2)),
                ("-- The council met.", Some(2)),
                (
                    "Second   paragraph, long enough to outweigh the skip link.",
                    Some(2)
                ),
                ("Copyright", Some(0)),
            ]
        );
    }
}
