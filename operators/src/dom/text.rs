//! A page's visible text: as one normalized stream addressable by node ([`PageText`], for
//! hashing and counting), and as a reader sees it ([`readable`], for cleaned text and samples).
//!
//! Nodes are in pre-order, so the text of any subtree is one contiguous slice of the stream:
//! block fingerprints ([`crate::site::labels`]) and word counts take a slice instead of walking the
//! subtree again, which keeps nested blocks from costing O(n · depth) walks.

use std::ops::Range;

use html5ever::{local_name, LocalName};

use crate::dom::normalize::{is_ascii_text_space, normalize_for_hash};
use crate::dom::{is_heading, Dom, NodeKind, NONE};

/// The hash form of the page's visible text (see [`crate::dom::normalize`]), text nodes joined by
/// one space, with the stream offset at which every node starts.
pub struct PageText {
    stream: String,
    /// `offsets[i]` is where node `i`'s text starts; `offsets[len]` is the stream's end.
    offsets: Vec<u32>,
}

impl PageText {
    pub fn new(dom: &Dom) -> PageText {
        let mut stream = String::new();
        let mut offsets = Vec::with_capacity(dom.len() + 1);
        let mut scratch = Vec::new();
        for i in 0..dom.len() {
            offsets.push(stream.len() as u32);
            if let Some(text) = dom.visible_text(i) {
                normalize_for_hash(text, &mut scratch);
                if scratch.is_empty() {
                    continue;
                }
                if !stream.is_empty() {
                    stream.push(' ');
                }
                // normalize_for_hash writes whole UTF-8 characters of valid input.
                stream.push_str(&String::from_utf8_lossy(&scratch));
            }
        }
        offsets.push(stream.len() as u32);
        PageText { stream, offsets }
    }

    /// The normalized text of node `i`'s subtree.
    pub fn of(&self, dom: &Dom, i: usize) -> &str {
        let start = self.offsets[i] as usize;
        let end = self.offsets[dom.node(i).end as usize] as usize;
        self.stream[start..end].trim_start_matches(' ')
    }
}

/// Up to `max_chars` of the visible text of node `i`'s subtree as a reader sees it
/// ([`readable`], its lines joined by spaces, case kept): a sample for people reading tables.
pub fn sample(dom: &Dom, i: usize, max_chars: usize) -> String {
    // max_chars + 1 characters take at most 4 bytes each: enough to know whether to cut.
    let text = readable(dom, dom.subtree(i), |_| false, 4 * (max_chars + 1));
    let mut out: String = text.chars().take(max_chars).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out.replace('\n', " ")
}

/// The visible text of nodes `nodes` (a subtree, or the page) as a reader sees it: white space
/// collapsed as a browser does, one line per block (a line break wherever a block element
/// starts or ends, kept or dropped, and at `<br>`), no empty lines, side-by-side elements'
/// words kept apart ([`reads_as_two_words`]), and no text only screen readers read. An
/// element for which `dropped` holds goes with its subtree, a text node alone. Writing stops
/// once the text holds `max_bytes` bytes or more (a sample needs no more).
///
/// One walk ([`walk`]) for every view of a page's text, so the template view's cleaned text,
/// the content view's, their Markdown ([`crate::dom::markdown`]), and the samples people read
/// in the tables all agree on what a reader sees.
pub fn readable(
    dom: &Dom,
    nodes: Range<usize>,
    dropped: impl Fn(usize) -> bool,
    max_bytes: usize,
) -> String {
    let mut plain = Plain::default();
    walk(dom, nodes, dropped, &mut plain, max_bytes);
    let mut out = plain.out;
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

/// What [`walk`] writes to: the plain text of [`readable`], or Markdown.
pub(crate) trait Sink {
    /// Bytes written so far.
    fn len(&self) -> usize;
    /// The last character of text written (markup aside), for [`reads_as_two_words`].
    fn last_char(&self) -> Option<char>;
    /// Whether element `i`, which is not a block, is to be told when its subtree ends.
    fn wants_close(&self, dom: &Dom, i: usize) -> bool;
    /// A kept element starts: a block (after its line break) or one [`Sink::wants_close`]
    /// named, or any other element (an image, a `<br>`).
    fn open(&mut self, dom: &Dom, i: usize, block: bool);
    /// A kept block, or an element [`Sink::wants_close`] named, ends (before a block's line
    /// break).
    fn close(&mut self, dom: &Dom, i: usize, block: bool);
    /// A block starts or ends.
    fn line_break(&mut self);
    /// Appends a visible text node's text; `split` when the walk has found it to be a word of
    /// its own ([`reads_as_two_words`]). Returns whether a word was written.
    fn text(&mut self, text: &str, split: bool) -> bool;
}

/// [`readable`]'s sink: text, white space collapsed, one line per block.
#[derive(Default)]
struct Plain {
    out: String,
    space_pending: bool,
}

impl Sink for Plain {
    fn len(&self) -> usize {
        self.out.len()
    }

    fn last_char(&self) -> Option<char> {
        self.out.chars().next_back()
    }

    fn wants_close(&self, _: &Dom, _: usize) -> bool {
        false
    }

    fn open(&mut self, _: &Dom, _: usize, _: bool) {}

    fn close(&mut self, _: &Dom, _: usize, _: bool) {}

    fn line_break(&mut self) {
        self.space_pending = false;
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }

    fn text(&mut self, text: &str, split: bool) -> bool {
        self.space_pending |= split;
        let written = self.out.len();
        if text.is_ascii() {
            append_collapsed_ascii(&mut self.out, text, &mut self.space_pending);
        } else {
            append_collapsed(&mut self.out, text, &mut self.space_pending);
        }
        // Only a word makes `out` longer (white space is written before a word).
        self.out.len() > written
    }
}

/// The walk behind [`readable`] and [`crate::dom::markdown`]: nodes `nodes` in document order,
/// elements for which `dropped` holds (and text only screen readers read) skipped with their
/// subtree, text nodes for which it holds skipped alone; every block's start and end told to
/// `sink` as a line break, and every kept element's start (and, for blocks and those the sink
/// asks for, its end) as `open` and `close`. Stops once the sink holds `max_bytes` bytes.
///
/// Inside `<pre>` (code) no word is split from the one before it: code is written as it is.
pub(crate) fn walk<S: Sink>(
    dom: &Dom,
    nodes: Range<usize>,
    dropped: impl Fn(usize) -> bool,
    sink: &mut S,
    max_bytes: usize,
) {
    // Open elements to close: (end, node, block).
    let mut open: Vec<(u32, u32, bool)> = Vec::new();
    let mut open_pre = 0usize;
    // The parent of the text the sink ends with, while that text is on the current line.
    let mut line_text_parent = NONE;
    let end = nodes.end.min(dom.len());
    let mut i = nodes.start;
    let close = |sink: &mut S, (_, node, block): (u32, u32, bool), open_pre: &mut usize| {
        sink.close(dom, node as usize, block);
        if block {
            sink.line_break();
            if dom.tag(node as usize) == Some(&local_name!("pre")) {
                *open_pre -= 1;
            }
        }
    };
    while i < end && sink.len() < max_bytes {
        while open.last().is_some_and(|&(end, ..)| end as usize <= i) {
            if let Some(element) = open.pop() {
                close(sink, element, &mut open_pre);
                if element.2 {
                    line_text_parent = NONE;
                }
            }
        }
        let node = dom.node(i);
        match node.kind {
            NodeKind::Element(_) => {
                let element = dom.element(i);
                let block = element.is_some_and(|e| tag_breaks_line(&e.tag));
                if block {
                    sink.line_break();
                    line_text_parent = NONE;
                }
                // Text only screen readers read is no reader's text, in any view.
                if dropped(i) || element.is_some_and(|e| e.screen_reader_only) {
                    i = node.end as usize;
                    continue;
                }
                if block || sink.wants_close(dom, i) {
                    open.push((node.end, i as u32, block));
                    if block && element.is_some_and(|e| e.tag == local_name!("pre")) {
                        open_pre += 1;
                    }
                }
                sink.open(dom, i, block);
            }
            NodeKind::Text { visible: true, .. } if !dropped(i) => {
                let text = dom.visible_text(i).unwrap_or("");
                let split = open_pre == 0
                    && line_text_parent != NONE
                    && line_text_parent != node.parent
                    && reads_as_two_words(sink.last_char(), text)
                    && !is_script_position(dom, line_text_parent)
                    && !is_script_position(dom, node.parent);
                if sink.text(text, split) {
                    line_text_parent = node.parent;
                }
            }
            _ => {}
        }
        i += 1;
    }
    while let Some(element) = open.pop() {
        close(sink, element, &mut open_pre);
    }
}

/// Whether `text`, appended to `out` with no white space between them, would glue two words a
/// reader sees apart: a lower-case letter or a digit, then an upper-case letter; or a letter,
/// then a digit. Asked only where the two texts have different parents and neither is a sub- or
/// superscript: side-by-side elements such as a spec table's
/// `<span>Publisher</span><span>Houghton Mifflin</span>`, a card's brand and model, or a
/// "5 stars" and its review count, which the page's CSS lays out as separate cells and which
/// human gold (and a reader) keeps apart. Without the CSS, the case or digit change is the one
/// sign of such a boundary, and it seldom falls inside a word; where it does (a brand set in two
/// styles, `Better<b>Help</b>`) the word is split. On the evaluation crawl's held-out cleaned
/// text, this splits far more glued tokens into words the gold has than it splits words the
/// gold keeps whole (docs/evaluation.md).
fn reads_as_two_words(last: Option<char>, text: &str) -> bool {
    let (Some(last), Some(first)) = (last, text.chars().next()) else {
        return false;
    };
    ((last.is_lowercase() || last.is_ascii_digit()) && first.is_uppercase())
        || (last.is_alphabetic() && first.is_ascii_digit())
}

/// Whether element `i`, or its parent, is a `<sub>` or `<sup>`, whose text belongs to the word it
/// follows or precedes (N<sub>2</sub>O, 21<sup>ST</sup>, a footnote's `<sup><a>1</a></sup>`).
fn is_script_position(dom: &Dom, i: u32) -> bool {
    let is_script = |i: u32| {
        i != NONE
            && matches!(
                dom.tag(i as usize),
                Some(&local_name!("sub") | &local_name!("sup"))
            )
    };
    is_script(i) || (i != NONE && is_script(dom.node(i as usize).parent))
}

/// Appends `text` to `out` with its white space collapsed: words joined by one space, and one
/// space before the first when white space (`space_pending`, or the text's own) separates it
/// from what `out` ends with, unless `out` is empty or ends a line. `space_pending` says on
/// return whether white space ends the text (an empty text leaves it as it was).
fn append_collapsed(out: &mut String, text: &str, space_pending: &mut bool) {
    *space_pending |= text.starts_with(char::is_whitespace);
    for word in text.split_whitespace() {
        if *space_pending && !out.is_empty() && !out.ends_with('\n') {
            out.push(' ');
        }
        out.push_str(word);
        *space_pending = true;
    }
    *space_pending = text.ends_with(char::is_whitespace) || (*space_pending && text.is_empty());
}

/// [`append_collapsed`] for ASCII text, which is most text: a run of words separated by single
/// spaces is already collapsed and is copied whole, not word by word (copying and checking
/// word by word would be most of the time of making the cleaned text).
fn append_collapsed_ascii(out: &mut String, text: &str, space_pending: &mut bool) {
    let space = is_ascii_text_space;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let gap = i;
        while i < bytes.len() && space(bytes[i]) {
            i += 1;
        }
        *space_pending |= i > gap;
        if i == bytes.len() {
            break;
        }
        let run = i;
        // On to the end of the run: white space other than one space before a word.
        while i < bytes.len()
            && (!space(bytes[i])
                || (bytes[i] == b' ' && bytes.get(i + 1).is_some_and(|&b| !space(b))))
        {
            i += 1;
        }
        if *space_pending && !out.is_empty() && !out.ends_with('\n') {
            out.push(' ');
        }
        out.push_str(&text[run..i]);
        *space_pending = false;
    }
    if let Some(&last) = bytes.last() {
        *space_pending = space(last);
    }
}

/// Elements that start a new line when rendered (CSS `display: block`, list items, table
/// rows and cells): their boundaries become line breaks in the cleaned text. Matched as atoms
/// (one integer comparison each), not as strings: every element of every page is asked, twice.
pub(crate) fn breaks_line(dom: &Dom, i: usize) -> bool {
    dom.tag(i).is_some_and(tag_breaks_line)
}

/// [`breaks_line`] for an element's tag.
fn tag_breaks_line(t: &LocalName) -> bool {
    is_heading(t)
        || matches!(
            *t,
            local_name!("address")
                | local_name!("article")
                | local_name!("aside")
                | local_name!("blockquote")
                | local_name!("body")
                | local_name!("br")
                | local_name!("caption")
                | local_name!("center")
                | local_name!("dd")
                | local_name!("details")
                | local_name!("dialog")
                | local_name!("dir")
                | local_name!("div")
                | local_name!("dl")
                | local_name!("dt")
                | local_name!("fieldset")
                | local_name!("figcaption")
                | local_name!("figure")
                | local_name!("footer")
                | local_name!("form")
                | local_name!("header")
                | local_name!("hgroup")
                | local_name!("hr")
                | local_name!("html")
                | local_name!("legend")
                | local_name!("li")
                | local_name!("main")
                | local_name!("menu")
                | local_name!("nav")
                | local_name!("ol")
                | local_name!("p")
                | local_name!("pre")
                | local_name!("section")
                | local_name!("summary")
                | local_name!("table")
                | local_name!("tbody")
                | local_name!("td")
                | local_name!("tfoot")
                | local_name!("th")
                | local_name!("thead")
                | local_name!("tr")
                | local_name!("ul")
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtree_text_is_a_slice() {
        let dom = crate::dom::parse(
            "<body><div id=a><p>Hello  World</p><p>Second 2026</p></div><div id=b>Tail</div>\
             <script>hidden()</script></body>",
            64,
        );
        let text = PageText::new(&dom);
        let find = |id: &str| (0..dom.len()).find(|&i| dom.id(i) == Some(id)).unwrap();
        assert_eq!(text.of(&dom, find("a")), "hello world second 2026");
        assert_eq!(text.of(&dom, find("b")), "tail");
        assert_eq!(text.of(&dom, 0), "hello world second 2026 tail");
        assert_eq!(sample(&dom, find("a"), 100), "Hello World Second 2026");
        assert_eq!(sample(&dom, find("a"), 8), "Hello Wo…");
        assert_eq!(sample(&dom, find("b"), 4), "Tail");
    }

    #[test]
    fn a_sample_reads_as_the_cleaned_text_does() {
        let dom = crate::dom::parse(
            "<body><nav id=n><a href=/>Skip<span class=sr-only> to content</span></a>\
             <span>Sports</span><span>Weather</span> Head<b>line</b><ul><li>One</li><li>Two</li></ul></nav></body>",
            64,
        );
        let nav = (0..dom.len()).find(|&i| dom.id(i) == Some("n")).unwrap();
        // Screen-reader text left out, side-by-side spans apart, inline markup inside a word
        // not splitting it, lines joined by spaces.
        assert_eq!(
            sample(&dom, nav, 200),
            "Skip Sports Weather Headline One Two"
        );
        let whole = readable(&dom, dom.subtree(nav), |_| false, usize::MAX);
        assert_eq!(whole, "Skip Sports Weather Headline\nOne\nTwo");
        // Writing stops early for a short sample, and the cut is marked.
        assert_eq!(sample(&dom, nav, 10), "Skip Sport…");
    }

    #[test]
    fn ascii_collapsing_agrees_with_collapsing_word_by_word() {
        let pieces = [
            " ", "  ", "\t", "\n", "\x0b", "\x0c", "\r", "a", "word", ".", "\x1c",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut texts = Vec::new();
            for _ in 0..1 + crate::xorshift(&mut state) % 3 {
                let mut text = String::new();
                for _ in 0..crate::xorshift(&mut state) % 8 {
                    let pick = crate::xorshift(&mut state) % pieces.len() as u64;
                    text.push_str(pieces[pick as usize]);
                }
                texts.push(text);
            }
            let start = ["", "x", "x\n"][(crate::xorshift(&mut state) % 3) as usize];
            let pending = crate::xorshift(&mut state).is_multiple_of(2);
            let (mut fast, mut fast_pending) = (start.to_string(), pending);
            let (mut slow, mut slow_pending) = (start.to_string(), pending);
            for text in &texts {
                append_collapsed_ascii(&mut fast, text, &mut fast_pending);
                append_collapsed(&mut slow, text, &mut slow_pending);
                assert_eq!(
                    (&fast, fast_pending),
                    (&slow, slow_pending),
                    "{texts:?} {start:?}"
                );
            }
        }
    }
}
