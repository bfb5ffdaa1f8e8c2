//! Subtree hashes and per-node aggregates, bottom-up in one O(n) pass.
//!
//! For every node: a *content* hash (tag + normalized visible text + children's content hashes
//! in order; see [`crate::dom::normalize`]) that is equal exactly when two subtrees show the same
//! text in the same element structure, and a *structure* hash (tags and class tokens only) that
//! is equal when two subtrees are built alike whatever they say. Attributes other than class
//! are left out of both: link targets, ids and tracking parameters vary per page inside the
//! same template.
//!
//! Whitespace-only and invisible text (script, style, hidden) is not part of any content hash,
//! so a header is the same block whatever the indentation or the inline script around it.
//!
//! The aggregates are what every later stage (site-level statistics, classifier features,
//! smoothing penalties) needs, computed once here.

use xxhash_rust::xxh3::xxh3_64;

use crate::dom::normalize::{fold_token, normalize_for_hash};
use crate::dom::{Dom, NodeKind};
use crate::reading::page::site_of;

/// Hashes and counts of one node's subtree (the node included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subtree {
    pub content_hash: u64,
    pub structure_hash: u64,
    /// Visible characters (whitespace collapsed within each text node).
    pub text_chars: u32,
    pub words: u32,
    /// `<a>`/`<area>` elements with an `href`.
    pub links: u32,
    /// Visible characters inside links.
    pub anchor_text_chars: u32,
    /// Links to the page's own host (relative links included).
    pub intra_host_links: u32,
    pub images: u32,
    pub descendants: u32,
    /// Size of the subtree serialized as HTML (tags, attributes, text; comments excluded).
    pub html_bytes: u32,
    /// Visible characters before this node in document order: with `text_chars`, the node's
    /// span in the page's visible text stream.
    pub text_start: u32,
}

impl Subtree {
    /// One past the node's last visible character in the page's text stream.
    pub fn text_end(&self) -> u32 {
        self.text_start + self.text_chars
    }
}

/// A content hash of 0 marks text that takes no part in its parent's hash.
const NO_CONTENT: u64 = 0;

/// Computes [`Subtree`] for every node of `dom`; `page_host` decides which links are
/// intra-host.
pub fn summarize(dom: &Dom, page_host: &str) -> Vec<Subtree> {
    let mut out = vec![Subtree::default(); dom.len()];
    let mut scratch = Vec::with_capacity(256);
    let page_host = site_of(page_host);

    // Forward pass: text nodes (their hash and measure) and text positions.
    let mut seen_chars = 0u32;
    for (i, node) in dom.nodes().iter().enumerate() {
        out[i].text_start = seen_chars;
        if let NodeKind::Text { span, visible } = node.kind {
            let text = dom.str(span);
            let summary = &mut out[i];
            summary.html_bytes = span.len;
            if visible {
                let measure = normalize_for_hash(text, &mut scratch);
                summary.text_chars = measure.chars;
                summary.words = measure.words;
                seen_chars += measure.chars;
                if !scratch.is_empty() {
                    summary.content_hash = xxh3_64(&scratch).max(1);
                }
            }
        }
    }

    // Backward pass: every element after all its descendants.
    let mut content = Vec::with_capacity(256);
    let mut structure = Vec::with_capacity(256);
    for i in (0..dom.len()).rev() {
        let node = dom.node(i);
        let element = match node.kind {
            NodeKind::Text { .. } => continue,
            NodeKind::Element(_) => dom.element(i),
            NodeKind::Document => None,
        };
        let tag: &str = element.map_or("#document", |e| &e.tag);
        content.clear();
        structure.clear();
        content.extend_from_slice(tag.as_bytes());
        content.push(0);
        structure.extend_from_slice(tag.as_bytes());
        structure.push(0);
        // Class order carries no meaning: combine the folded tokens commutatively.
        let class_set = dom.classes(i).fold(0u64, |acc, class| {
            fold_token(class, &mut scratch);
            acc.wrapping_add(xxh3_64(&scratch))
        });
        structure.extend_from_slice(&class_set.to_le_bytes());

        let mut sum = Subtree {
            text_start: out[i].text_start,
            descendants: node.end - i as u32 - 1,
            ..Subtree::default()
        };
        for child in dom.children(i) {
            let c = out[child];
            sum.text_chars += c.text_chars;
            sum.words += c.words;
            sum.links += c.links;
            sum.anchor_text_chars += c.anchor_text_chars;
            sum.intra_host_links += c.intra_host_links;
            sum.images += c.images;
            sum.html_bytes = sum.html_bytes.saturating_add(c.html_bytes);
            if c.content_hash != NO_CONTENT {
                content.extend_from_slice(&c.content_hash.to_le_bytes());
            }
            if dom.element(child).is_some() {
                structure.extend_from_slice(&c.structure_hash.to_le_bytes());
            }
        }
        if let Some(element) = element {
            let tag_bytes = element.tag.len() as u32;
            let close = if is_void(tag) { 0 } else { tag_bytes + 3 };
            sum.html_bytes = sum
                .html_bytes
                .saturating_add(tag_bytes + 2 + element.attribute_bytes + close);
            match tag {
                "a" | "area" => {
                    if let Some(href) = dom.href(i) {
                        sum.links += 1;
                        if link_is_intra_host(href, page_host) {
                            sum.intra_host_links += 1;
                        }
                    }
                    if tag == "a" {
                        sum.anchor_text_chars = sum.text_chars;
                    }
                }
                "img" => sum.images += 1,
                _ => {}
            }
        }
        sum.content_hash = xxh3_64(&content).max(1);
        sum.structure_hash = xxh3_64(&structure);
        out[i] = sum;
    }
    out
}

fn is_void(tag: &str) -> bool {
    matches!(
        tag,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "source"
            | "track"
            | "wbr"
            | "#document"
    )
}

/// Whether a link leads to a page on `page_host` (already without `www.`): relative links do,
/// absolute ones when their host matches up to a leading `www.`; `javascript:`, `mailto:` and
/// other non-web schemes do not.
///
/// Written by hand rather than with the `url` crate: it runs for every link of every page, and
/// only the host part matters, which needs no full URL parse or percent-decoding.
pub fn link_is_intra_host(href: &str, page_host: &str) -> bool {
    let href = href.trim();
    let rest = if let Some(rest) = href.strip_prefix("//") {
        rest
    } else {
        match href.find(':') {
            Some(colon)
                if href[..colon]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
                    && !href[..colon].is_empty()
                    && href[..colon].find(['/', '?', '#']).is_none() =>
            {
                let scheme = &href[..colon];
                if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
                    return false;
                }
                match href[colon + 1..].strip_prefix("//") {
                    Some(rest) => rest,
                    // "http:/path" is relative to the page's host.
                    None => return true,
                }
            }
            _ => return true,
        }
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = match host_port.rfind(':') {
        Some(colon) if !host_port.ends_with(']') => &host_port[..colon],
        _ => host_port,
    };
    let host = host.trim_end_matches('.');
    strip_www_ignore_case(host).eq_ignore_ascii_case(page_host)
}

fn strip_www_ignore_case(host: &str) -> &str {
    // Compared as bytes: a link's host may be any text (a raw IDN such as `日本語.jp`), where
    // byte 4 can fall inside a character; it is a boundary whenever the bytes before it are
    // the ASCII `www.`.
    if host.len() > 4 && host.as_bytes()[..4].eq_ignore_ascii_case(b"www.") {
        &host[4..]
    } else {
        host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intra_host_links() {
        let host = "example.com";
        for href in [
            "/about",
            "about.html",
            "?page=2",
            "#top",
            "http:/x",
            "//www.example.com/a",
            "https://EXAMPLE.com:8080/path",
            "http://user@www.example.com./",
        ] {
            assert!(link_is_intra_host(href, host), "{href}");
        }
        for href in [
            "https://other.com/",
            "mailto:me@example.com",
            "javascript:void(0)",
            "//cdn.example.net/x",
            "https://example.com.evil.org/",
        ] {
            assert!(!link_is_intra_host(href, host), "{href}");
        }
    }

    /// A raw (not punycode) international host whose first four bytes end inside a character:
    /// looking for `www.` must not slice the host there.
    #[test]
    fn intra_host_links_with_multibyte_hosts() {
        assert!(!link_is_intra_host("http://日本語.jp/", "example.com"));
        assert!(!link_is_intra_host("//ñandú.example/", "example.com"));
        assert!(!link_is_intra_host("https://wwé.example/", "é.example"));
        assert!(link_is_intra_host("http://日本語.jp/x", "日本語.jp"));
        assert!(link_is_intra_host("http://WWW.日本語.jp:80/", "日本語.jp"));
        assert_eq!(strip_www_ignore_case("日本語.jp"), "日本語.jp");
        assert_eq!(strip_www_ignore_case("www.日本語.jp"), "日本語.jp");
        assert_eq!(strip_www_ignore_case("wwwé.jp"), "wwwé.jp");
    }

    #[test]
    fn aggregates_add_up() {
        let dom = crate::dom::parse(
            "<html><body><div id=nav><a href='/a'>Home</a> <a href='http://x.org/'>Elsewhere</a></div>\
             <p>Some   article text <img src=a.png></p><script>var x='<b>hidden</b>'</script></body></html>",
            4096,
        );
        let sums = summarize(&dom, "www.example.com");
        let root = sums[0];
        assert_eq!(root.links, 2);
        assert_eq!(root.intra_host_links, 1);
        assert_eq!(root.images, 1);
        assert_eq!(
            root.anchor_text_chars,
            "Home".len() as u32 + "Elsewhere".len() as u32
        );
        assert_eq!(root.text_chars, (4 + 9 + "Some article text".len()) as u32);
        assert_eq!(root.words, 5);
        assert_eq!(root.descendants as usize, dom.len() - 1);
        let p = (0..dom.len())
            .find(|&i| dom.tag(i).is_some_and(|t| &**t == "p"))
            .unwrap();
        assert_eq!(sums[p].text_start, 13);
        assert_eq!(sums[p].text_end(), 13 + 17);
        assert!(root.html_bytes > 150, "{}", root.html_bytes);
    }
}
