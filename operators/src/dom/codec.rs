//! A DOM as bytes, so a job can set pages aside on local disk between its stages instead of
//! keeping them in memory or parsing their HTML again (`stencil run --memory-budget`).
//!
//! The format is the arena itself, little-endian, with no versioning: it is written and read by
//! the same process within one run, never stored. Hand-written rather than serde because the
//! arena is a few flat vectors and the decoder must check every index it restores: a page read
//! back with a bad span would panic in a later stage, so a damaged spill file is an error here.

use std::ops::Range;

use super::{Dom, Element, LocalName, Node, NodeKind, Span, NONE};

/// Why bytes could not be read back as a DOM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "damaged DOM encoding: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

const KIND_DOCUMENT: u8 = 0;
const KIND_ELEMENT: u8 = 1;
const KIND_TEXT: u8 = 2;
const KIND_VISIBLE_TEXT: u8 = 3;

impl Dom {
    /// Appends this DOM's encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Writer(out);
        w.u32(self.nodes.len() as u32);
        for node in &self.nodes {
            w.u32(node.parent);
            w.u32(node.end);
            w.u32(node.next_sibling);
            w.u32(node.depth);
            match node.kind {
                NodeKind::Document => w.u8(KIND_DOCUMENT),
                NodeKind::Element(e) => {
                    w.u8(KIND_ELEMENT);
                    w.u32(e);
                }
                NodeKind::Text { span, visible } => {
                    w.u8(if visible {
                        KIND_VISIBLE_TEXT
                    } else {
                        KIND_TEXT
                    });
                    w.span(span);
                }
            }
        }
        w.u32(self.elements.len() as u32);
        for element in &self.elements {
            w.str(&element.tag);
            w.option_span(element.id);
            w.range(&element.classes);
            w.range(&element.other_attributes);
            w.range(&element.kept);
            w.option_span(element.href);
            w.option_span(element.src);
            w.option_span(element.alt);
            w.option_span(element.anchor);
            w.u32(element.attribute_bytes);
            // Flags: hides its content, modal, screen-reader-only.
            w.u8(u8::from(element.hides_content)
                | u8::from(element.modal) << 1
                | u8::from(element.screen_reader_only) << 2);
        }
        w.str(&self.strings);
        w.u32(self.classes.len() as u32);
        for span in &self.classes {
            w.span(*span);
        }
        w.u32(self.other_attributes.len() as u32);
        for name in &self.other_attributes {
            w.str(name);
        }
        w.u32(self.kept.len() as u32);
        for (name, span) in &self.kept {
            w.str(name);
            w.span(*span);
        }
        w.option_span(self.title);
        w.u32(self.parse_errors);
        w.u8(u8::from(self.depth_limited));
    }

    /// Reads back what [`Dom::encode`] wrote, checking that every index and span points inside
    /// the DOM, so that no accessor can panic on a restored page.
    pub fn decode(bytes: &[u8]) -> Result<Dom, DecodeError> {
        let mut r = Reader { bytes, at: 0 };
        let node_count = r.len(17)?;
        let mut nodes = Vec::with_capacity(node_count);
        for _ in 0..node_count {
            let (parent, end, next_sibling, depth) = (r.u32()?, r.u32()?, r.u32()?, r.u32()?);
            let kind = match r.u8()? {
                KIND_DOCUMENT => NodeKind::Document,
                KIND_ELEMENT => NodeKind::Element(r.u32()?),
                KIND_TEXT => NodeKind::Text {
                    span: r.span()?,
                    visible: false,
                },
                KIND_VISIBLE_TEXT => NodeKind::Text {
                    span: r.span()?,
                    visible: true,
                },
                _ => return Err(DecodeError("unknown node kind")),
            };
            nodes.push(Node {
                parent,
                end,
                next_sibling,
                depth,
                kind,
            });
        }
        let element_count = r.len(4)?;
        let mut elements = Vec::with_capacity(element_count);
        for _ in 0..element_count {
            // Fields in the order `encode` writes them; the flags byte last.
            let mut element = Element {
                tag: LocalName::from(r.str()?),
                id: r.option_span()?,
                classes: r.range()?,
                other_attributes: r.range()?,
                kept: r.range()?,
                href: r.option_span()?,
                src: r.option_span()?,
                alt: r.option_span()?,
                anchor: r.option_span()?,
                attribute_bytes: r.u32()?,
                hides_content: false,
                modal: false,
                screen_reader_only: false,
            };
            let flags = r.u8()?;
            element.hides_content = flags & 1 != 0;
            element.modal = flags & 2 != 0;
            element.screen_reader_only = flags & 4 != 0;
            elements.push(element);
        }
        let strings = r.str()?.to_string();
        let class_count = r.len(8)?;
        let mut classes = Vec::with_capacity(class_count);
        for _ in 0..class_count {
            classes.push(r.span()?);
        }
        let other_count = r.len(4)?;
        let mut other_attributes = Vec::with_capacity(other_count);
        for _ in 0..other_count {
            other_attributes.push(LocalName::from(r.str()?));
        }
        let kept_count = r.len(12)?;
        let mut kept = Vec::with_capacity(kept_count);
        for _ in 0..kept_count {
            kept.push((LocalName::from(r.str()?), r.span()?));
        }
        let dom = Dom {
            nodes,
            elements,
            strings,
            classes,
            other_attributes,
            kept,
            title: r.option_span()?,
            parse_errors: r.u32()?,
            depth_limited: r.u8()? != 0,
        };
        if r.at != bytes.len() {
            return Err(DecodeError("trailing bytes"));
        }
        dom.check()?;
        Ok(dom)
    }

    /// Heap bytes this DOM holds, roughly: what keeping it in memory costs.
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.elements.capacity() * std::mem::size_of::<Element>()
            + self.strings.capacity()
            + self.classes.capacity() * std::mem::size_of::<Span>()
            + self.other_attributes.capacity() * std::mem::size_of::<LocalName>()
            + self.kept.capacity() * std::mem::size_of::<(LocalName, Span)>()
    }

    /// The invariants the accessors and every downstream pass rely on.
    fn check(&self) -> Result<(), DecodeError> {
        let n = self.nodes.len() as u32;
        let span_ok = |span: Span| {
            let (start, end) = (span.start as usize, span.start as usize + span.len as usize);
            end <= self.strings.len()
                && self.strings.is_char_boundary(start)
                && self.strings.is_char_boundary(end)
        };
        let option_ok = |span: Option<Span>| span.is_none_or(span_ok);
        for (i, node) in self.nodes.iter().enumerate() {
            let i = i as u32;
            let parent_ok = if i == 0 {
                node.parent == NONE
            } else {
                node.parent < i
            };
            if !parent_ok || node.end <= i || node.end > n {
                return Err(DecodeError("node out of order"));
            }
            if node.next_sibling != NONE && (node.next_sibling <= i || node.next_sibling >= n) {
                return Err(DecodeError("sibling out of range"));
            }
            match node.kind {
                NodeKind::Element(e) if e as usize >= self.elements.len() => {
                    return Err(DecodeError("element out of range"))
                }
                NodeKind::Text { span, .. } if !span_ok(span) => {
                    return Err(DecodeError("text out of range"))
                }
                _ => {}
            }
        }
        for element in &self.elements {
            let range_ok = |range: &Range<u32>, len: usize| {
                range.start <= range.end && range.end as usize <= len
            };
            if !range_ok(&element.classes, self.classes.len())
                || !range_ok(&element.other_attributes, self.other_attributes.len())
                || !range_ok(&element.kept, self.kept.len())
                || ![
                    element.id,
                    element.href,
                    element.src,
                    element.alt,
                    element.anchor,
                ]
                .into_iter()
                .all(option_ok)
            {
                return Err(DecodeError("attribute out of range"));
            }
        }
        if !self.classes.iter().all(|&span| span_ok(span))
            || !self.kept.iter().all(|&(_, span)| span_ok(span))
            || !option_ok(self.title)
        {
            return Err(DecodeError("string out of range"));
        }
        Ok(())
    }
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn span(&mut self, span: Span) {
        self.u32(span.start);
        self.u32(span.len);
    }
    fn option_span(&mut self, span: Option<Span>) {
        match span {
            Some(span) => {
                self.u8(1);
                self.span(span);
            }
            None => self.u8(0),
        }
    }
    fn range(&mut self, range: &Range<u32>) {
        self.u32(range.start);
        self.u32(range.end);
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or(DecodeError("truncated"))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let mut le = [0u8; 4];
        le.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(le))
    }
    /// A count of items at least `min_item_bytes` long each, checked against what is left so a
    /// damaged count cannot ask for a huge allocation.
    fn len(&mut self, min_item_bytes: usize) -> Result<usize, DecodeError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_item_bytes) > self.bytes.len() - self.at {
            return Err(DecodeError("count larger than the data"));
        }
        Ok(n)
    }
    fn span(&mut self) -> Result<Span, DecodeError> {
        Ok(Span {
            start: self.u32()?,
            len: self.u32()?,
        })
    }
    fn option_span(&mut self) -> Result<Option<Span>, DecodeError> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.span()?)),
            _ => Err(DecodeError("bad option tag")),
        }
    }
    fn range(&mut self) -> Result<Range<u32>, DecodeError> {
        Ok(self.u32()?..self.u32()?)
    }
    fn str(&mut self) -> Result<&'a str, DecodeError> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| DecodeError("string not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    const PAGE: &str = "<html lang=en><head><title>T é</title><style>p{}</style>\
        <meta name=author content=\"A. B.\"></head><body>\
        <div id=\"nav\" class=\"menu top\" data-x=\"1\"><a href=\"/a\">Home</a></div>\
        <p hidden>gone</p><img src=\"x.png\" alt=\"pic\"><p>Text ünïcode &amp; more</p>\
        <div aria-modal=true hidden>modal and hidden</div><dialog>modal</dialog>\
        <span class=\"x sr-only\">read</span></body></html>";

    fn same(a: &Dom, b: &Dom) {
        assert_eq!(a.nodes, b.nodes);
        assert_eq!(a.elements, b.elements);
        assert_eq!(a.strings, b.strings);
        assert_eq!(a.classes, b.classes);
        assert_eq!(a.other_attributes, b.other_attributes);
        assert_eq!(a.kept, b.kept);
        assert_eq!(a.title, b.title);
        assert_eq!(a.parse_errors, b.parse_errors);
        assert_eq!(a.depth_limited, b.depth_limited);
    }

    #[test]
    fn round_trips_a_page() {
        let dom = parse(PAGE, 512);
        let mut bytes = Vec::new();
        dom.encode(&mut bytes);
        let back = Dom::decode(&bytes).expect("decodes");
        same(&dom, &back);
        assert_eq!(back.title(), Some("T é"));
        assert!(!back.kept.is_empty());
        assert_eq!(back.paths(), dom.paths());
        let flagged = |d: &Dom| -> Vec<(bool, bool, bool)> {
            (0..d.len())
                .filter_map(|i| {
                    d.element(i)
                        .map(|e| (e.hides_content, e.modal, e.screen_reader_only))
                })
                .filter(|&(h, m, s)| h || m || s)
                .collect()
        };
        // head, style, <p hidden>, the hidden modal, the dialog, the screen reader's span.
        assert_eq!(
            flagged(&back),
            [
                (true, false, false),
                (true, false, false),
                (true, false, false),
                (true, true, false),
                (false, true, false),
                (false, false, true)
            ]
        );
        assert_eq!(flagged(&back), flagged(&dom));
    }

    #[test]
    fn round_trips_a_depth_limited_page_and_an_empty_one() {
        let deep = "<div>".repeat(3_000);
        for dom in [parse(&deep, 100), parse("", 512), Dom::default()] {
            let mut bytes = Vec::new();
            dom.encode(&mut bytes);
            same(&dom, &Dom::decode(&bytes).expect("decodes"));
        }
    }

    #[test]
    fn damaged_bytes_are_an_error_never_a_panic() {
        let dom = parse(PAGE, 512);
        let mut bytes = Vec::new();
        dom.encode(&mut bytes);
        for cut in 0..bytes.len() {
            assert!(Dom::decode(&bytes[..cut]).is_err(), "prefix of {cut} bytes");
        }
        // Flip every byte in turn: each result is an error or a DOM that passed the checks.
        for i in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[i] ^= 0xA5;
            if let Ok(back) = Dom::decode(&damaged) {
                let _ = back.paths();
                for node in 0..back.len() {
                    let _ = (back.text(node), back.classes(node).count(), back.id(node));
                }
            }
        }
    }
}
