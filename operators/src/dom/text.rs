//! A page's visible text as one normalized stream, addressable by node.
//!
//! Nodes are in pre-order, so the text of any subtree is one contiguous slice of the stream:
//! block fingerprints ([`crate::site::labels`]) and word counts take a slice instead of walking the
//! subtree again, which keeps nested blocks from costing O(n · depth) walks.

use crate::dom::normalize::normalize_for_hash;
use crate::dom::Dom;

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
/// (whitespace collapsed, case kept): a sample for people reading tables.
pub fn sample(dom: &Dom, i: usize, max_chars: usize) -> String {
    let mut out = String::new();
    let mut chars = 0;
    let mut pending_space = false;
    'nodes: for node in dom.subtree(i) {
        let Some(text) = dom.visible_text(node) else {
            continue;
        };
        for c in text.chars() {
            if c.is_whitespace() {
                pending_space = !out.is_empty();
                continue;
            }
            if chars + usize::from(pending_space) >= max_chars {
                out.push('…');
                break 'nodes;
            }
            if pending_space {
                out.push(' ');
                chars += 1;
                pending_space = false;
            }
            out.push(c);
            chars += 1;
        }
        pending_space = !out.is_empty();
    }
    out
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
    }
}
