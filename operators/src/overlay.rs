//! A page's sections drawn on a copy of it: what `stencil show` writes.
//!
//! The copy is made from the arena the page was analysed in, node for node, so each outline
//! sits on the element that was scored. It keeps what the arena keeps of an element (its tag,
//! id, classes, link targets and alt text), so the page's own `<style>` rules still find their
//! elements by tag, class and id, while inline styles and the other attributes are not in it.
//! The copy is safe to open: whatever can run or fetch is left out (see [`write`]), and a
//! Content-Security-Policy in the head forbids the rest.
//!
//! Each section's root gets `data-stencil-kind` (template, content or boilerplate),
//! `data-stencil-score` and `data-stencil-smoothed`, and a `title` that shows them on hover;
//! one injected `<style>` outlines each kind in its colour and a fixed legend counts them.
//! Sections nest: each outline is drawn inside its element's box, so an inner section's
//! outline shows within its outer one's, and where two boxes coincide the inner one is seen.
//!
//! The walk is a loop over the pre-order arena with a stack of open elements: no recursion,
//! however deep the page nests. html5ever's serializer escapes text and attribute values and
//! knows which elements are void.

use std::io::{self, Write};

use html5ever::serialize::{HtmlSerializer, SerializeOpts, Serializer, TraversalScope};
use html5ever::{local_name, ns, LocalName, QualName};

use crate::dom::{Dom, NodeKind};

/// What a section is, as the overlay colours it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Its smoothed score reaches the template threshold.
    Template,
    /// Not template, and the main-content model kept at least one of its blocks.
    Content,
    /// Neither: boilerplate the template model did not call template.
    Boilerplate,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Template, Kind::Content, Kind::Boilerplate];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Template => "template",
            Kind::Content => "content",
            Kind::Boilerplate => "boilerplate",
        }
    }

    /// The outline colour (CSS hex): red, green and blue, far apart for a screenshot's pixels.
    pub fn colour(self) -> &'static str {
        match self {
            Kind::Template => "#e01b24",
            Kind::Content => "#1a9e3a",
            Kind::Boilerplate => "#1c5fd6",
        }
    }

    fn legend(self) -> &'static str {
        match self {
            Kind::Template => "template (smoothed score ≥ τ)",
            Kind::Content => "main content (blocks the content model kept)",
            Kind::Boilerplate => "boilerplate, not template",
        }
    }
}

/// One section as the overlay draws it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outline {
    /// The section's root (a node index of the arena).
    pub node: u32,
    pub kind: Kind,
    /// The classifier's score of the root (`None` for nodes it does not score).
    pub score: Option<f32>,
    /// The section's smoothed score.
    pub smoothed: f32,
    /// The blocks whose innermost section this is, and how many of them the main-content
    /// model kept.
    pub blocks: u32,
    pub content_blocks: u32,
}

/// The page-level calls an overlay is drawn from, as plain slices over the arena's nodes.
pub struct Calls<'a> {
    /// The sections' roots, in document order.
    pub sections: &'a [u32],
    /// The classifier's score of every node.
    pub scores: &'a [Option<f32>],
    /// The smoothed score of every node.
    pub smoothed: &'a [f32],
    /// Whether every node is template (smoothed ≥ τ).
    pub template: &'a [bool],
    /// The owner element of each main-content block, and whether the model kept it.
    pub block_owners: &'a [u32],
    pub block_content: &'a [bool],
}

/// Each section's outline: template when its root is, else content when the main-content
/// model kept a block whose innermost section it is, else boilerplate. Sections that are not
/// elements of the arena are left out.
pub fn outlines(dom: &Dom, calls: &Calls<'_>) -> Vec<Outline> {
    // The innermost section of every node, in one top-down pass.
    let mut is_section = vec![false; dom.len()];
    for &s in calls.sections {
        if let Some(slot) = is_section.get_mut(s as usize) {
            *slot = true;
        }
    }
    let mut section_of = vec![u32::MAX; dom.len()];
    for i in 0..dom.len() {
        section_of[i] = if is_section[i] {
            i as u32
        } else {
            dom.parent(i).map_or(u32::MAX, |p| section_of[p])
        };
    }
    let mut blocks = vec![(0u32, 0u32); dom.len()];
    for (&owner, &kept) in calls.block_owners.iter().zip(calls.block_content) {
        let Some(&section) = section_of.get(owner as usize) else {
            continue;
        };
        if let Some(count) = blocks.get_mut(section as usize) {
            count.0 += 1;
            count.1 += u32::from(kept);
        }
    }
    calls
        .sections
        .iter()
        .filter(|&&s| (s as usize) < dom.len() && dom.element(s as usize).is_some())
        .map(|&s| {
            let i = s as usize;
            let (blocks, content_blocks) = blocks[i];
            let kind = if calls.template.get(i).copied().unwrap_or(false) {
                Kind::Template
            } else if content_blocks > 0 {
                Kind::Content
            } else {
                Kind::Boilerplate
            };
            Outline {
                node: s,
                kind,
                score: calls.scores.get(i).copied().flatten(),
                smoothed: calls.smoothed.get(i).copied().unwrap_or(0.0),
                blocks,
                content_blocks,
            }
        })
        .collect()
}

/// The policy the copy declares: nothing is fetched and nothing runs; inline styles and
/// `data:` images are all it may use.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// Writes the copy of `dom` with `outlines` drawn on it, a complete HTML document. `base` is
/// the page's URL: links are made absolute against it (relative links are kept as they are
/// without one). `heading` names the page in the legend.
///
/// Left out, with their content: scripts, `<noscript>`, `<template>`, frames, objects and
/// embeds, `<base>`, `<link>` and `<meta>` (a refresh among them), `<source>` and `<track>`;
/// of attributes, all but id, class, alt, an anchor's `name`, `href` on `<a>` and `<area>`
/// (only http, https, mailto and relative ones: no `javascript:`), and `src` on `<img>` when
/// it is a `data:` image. A `<style>`'s `@import`s and `url(…)`s other than `data:` are
/// disabled. Elements the page hides (the `hidden` attribute or an inline `display:none`,
/// which the copy does not keep) are marked `hidden`.
pub fn write(
    dom: &Dom,
    outlines: &[Outline],
    base: Option<&url::Url>,
    heading: &str,
    out: impl Write,
) -> io::Result<()> {
    let mut outline_of: Vec<Option<usize>> = vec![None; dom.len()];
    for (k, outline) in outlines.iter().enumerate() {
        if let Some(slot) = outline_of.get_mut(outline.node as usize) {
            *slot = Some(k);
        }
    }
    let has = |tag: LocalName| (0..dom.len()).any(|i| dom.tag(i) == Some(&tag));
    let (has_head, has_body) = (has(local_name!("head")), has(local_name!("body")));
    let mut ser = HtmlSerializer::new(
        out,
        SerializeOpts {
            scripting_enabled: false,
            traversal_scope: TraversalScope::ChildrenOnly(None),
            create_missing_parent: true,
        },
    );
    ser.write_doctype("html")?;
    if !has_head {
        write_head_extras(&mut ser)?;
    }
    // Open elements: (node, the name written for it).
    let mut open: Vec<(usize, LocalName)> = Vec::new();
    let mut i = 1; // node 0 is the document
    while i <= dom.len() {
        while let Some(&(top, _)) = open.last() {
            if i < dom.node(top).end as usize && i < dom.len() {
                break;
            }
            let Some((_, name)) = open.pop() else { break };
            if name == local_name!("body") {
                write_legend(&mut ser, outlines, heading)?;
            }
            ser.end_elem(html_name(name))?;
        }
        if i == dom.len() {
            break;
        }
        let node = dom.node(i);
        match node.kind {
            NodeKind::Document => i += 1,
            NodeKind::Text { span, .. } => {
                let text = dom.str(span);
                let in_style = open
                    .last()
                    .is_some_and(|(_, name)| *name == local_name!("style"));
                if in_style {
                    ser.write_text(&neutralised_css(text))?;
                } else {
                    ser.write_text(text)?;
                }
                i += 1;
            }
            NodeKind::Element(_) => {
                let Some(element) = dom.element(i) else {
                    i += 1;
                    continue;
                };
                let Some(name) = written_name(&element.tag) else {
                    i = (node.end as usize).max(i + 1);
                    continue;
                };
                let attributes =
                    attributes(dom, i, &name, base, outline_of[i].map(|k| &outlines[k]));
                let attrs = attributes
                    .iter()
                    .map(|(name, value)| (name, value.as_str()));
                ser.start_elem(html_name(name.clone()), attrs)?;
                if name == local_name!("head") {
                    write_head_extras(&mut ser)?;
                }
                open.push((i, name));
                i += 1;
            }
        }
    }
    if !has_body {
        write_legend(&mut ser, outlines, heading)?;
    }
    ser.writer.flush()
}

fn html_name(local: LocalName) -> QualName {
    QualName::new(None, ns!(html), local)
}

/// The name an element is written under, or `None` when it is left out with its content.
fn written_name(tag: &LocalName) -> Option<LocalName> {
    match *tag {
        local_name!("script")
        | local_name!("noscript")
        | local_name!("template")
        | local_name!("iframe")
        | local_name!("frame")
        | local_name!("frameset")
        | local_name!("object")
        | local_name!("embed")
        | local_name!("applet")
        | local_name!("param")
        | local_name!("base")
        | local_name!("link")
        | local_name!("meta")
        | local_name!("source")
        | local_name!("track")
        | local_name!("noembed")
        | local_name!("noframes") => None,
        // Both swallow the markup after them as text: shown as the preformatted text they are.
        local_name!("xmp") | local_name!("plaintext") => Some(local_name!("pre")),
        ref other if &**other == "portal" || &**other == "fencedframe" => None,
        _ => Some(tag.clone()),
    }
}

/// The attributes written for element `i`.
fn attributes(
    dom: &Dom,
    i: usize,
    name: &LocalName,
    base: Option<&url::Url>,
    outline: Option<&Outline>,
) -> Vec<(QualName, String)> {
    let attr = |local: &str| QualName::new(None, ns!(), LocalName::from(local));
    let mut out = Vec::new();
    if let Some(id) = dom.id(i) {
        out.push((attr("id"), id.to_string()));
    }
    let classes: Vec<&str> = dom.classes(i).collect();
    if !classes.is_empty() {
        out.push((attr("class"), classes.join(" ")));
    }
    if matches!(*name, local_name!("a") | local_name!("area")) {
        if let Some(href) = dom.href(i).and_then(|h| safe_href(h, base)) {
            out.push((attr("href"), href));
        }
        if let Some(anchor) = dom.anchor(i) {
            out.push((attr("name"), anchor.to_string()));
        }
    }
    if *name == local_name!("img") {
        if let Some(src) = dom.src(i).filter(|s| is_data_image(s)) {
            out.push((attr("src"), src.to_string()));
        }
    }
    if let Some(alt) = dom.alt(i) {
        out.push((attr("alt"), alt.to_string()));
    }
    let hidden_by_tag = matches!(
        *name,
        local_name!("head") | local_name!("style") | local_name!("title")
    );
    if dom.element(i).is_some_and(|e| e.hides_content) && !hidden_by_tag {
        out.push((attr("hidden"), String::new()));
    }
    if let Some(outline) = outline {
        let score = outline
            .score
            .map_or_else(|| "none".to_string(), |s| format!("{s:.3}"));
        let smoothed = format!("{:.3}", outline.smoothed);
        out.push((attr("data-stencil-kind"), outline.kind.as_str().to_string()));
        out.push((attr("data-stencil-score"), score.clone()));
        out.push((attr("data-stencil-smoothed"), smoothed.clone()));
        out.push((
            attr("title"),
            format!(
                "{} section — classifier score {score}, smoothed {smoothed}; main content: {} \
                 of {} blocks kept — {}",
                outline.kind.as_str(),
                outline.content_blocks,
                outline.blocks,
                dom.path(i)
            ),
        ));
    }
    out
}

/// A link target that cannot run anything: http, https, mailto or ftp, made absolute against
/// `base` when there is one; a relative target is kept as written without a base.
fn safe_href(href: &str, base: Option<&url::Url>) -> Option<String> {
    const ALLOWED: [&str; 4] = ["http", "https", "mailto", "ftp"];
    // The url crate drops tabs and newlines and trims as browsers do, so `java\nscript:`
    // is seen as the scheme it is.
    let placeholder;
    let against = match base {
        Some(base) => base,
        None => {
            placeholder = url::Url::parse("https://stencil.invalid/").ok()?;
            &placeholder
        }
    };
    let resolved = url::Url::options()
        .base_url(Some(against))
        .parse(href)
        .ok()?;
    if !ALLOWED.contains(&resolved.scheme()) {
        return None;
    }
    match base {
        Some(_) => Some(resolved.into()),
        None if resolved.host_str() == Some("stencil.invalid") => Some(href.to_string()),
        None => Some(resolved.into()),
    }
}

fn is_data_image(src: &str) -> bool {
    src.get(..11)
        .is_some_and(|head| head.eq_ignore_ascii_case("data:image/"))
}

/// A stylesheet that fetches nothing: every `@import` rule removed, every `url(…)` that is not `data:` emptied, and `</` escaped so the text cannot end its
/// `<style>`.
fn neutralised_css(css: &str) -> String {
    let mut out = String::with_capacity(css.len());
    let lower = css.to_ascii_lowercase();
    let mut at = 0;
    while at < css.len() {
        let rest = &lower[at..];
        if rest.starts_with("@import") {
            // The rule goes, up to its semicolon.
            out.push_str("/* @import removed */");
            at = lower[at..].find(';').map_or(css.len(), |c| at + c + 1);
        } else if let Some(after) = rest.strip_prefix("url(") {
            let argument = after.trim_start_matches([' ', '\t', '\n', '"', '\'']);
            out.push_str(&css[at..at + "url(".len()]);
            at += "url(".len();
            if !argument.starts_with("data:") {
                // Skip to the closing parenthesis; the argument goes.
                let close = lower[at..].find(')').map_or(css.len(), |c| at + c);
                out.push_str("data:,");
                at = close;
            }
        } else if rest.starts_with("</") {
            out.push_str("<\\/");
            at += 2;
        } else {
            // `at` is on a character boundary: every pattern above is ASCII.
            let Some(c) = css[at..].chars().next() else {
                break;
            };
            out.push(c);
            at += c.len_utf8();
        }
    }
    out
}

/// The charset, the policy and the overlay's style, first in the head.
fn write_head_extras<W: Write>(ser: &mut HtmlSerializer<W>) -> io::Result<()> {
    let attr = |local: &str| QualName::new(None, ns!(), LocalName::from(local));
    let (charset, http_equiv, content) = (attr("charset"), attr("http-equiv"), attr("content"));
    ser.start_elem(
        html_name(local_name!("meta")),
        [(&charset, "utf-8")].into_iter(),
    )?;
    ser.end_elem(html_name(local_name!("meta")))?;
    ser.start_elem(
        html_name(local_name!("meta")),
        [
            (&http_equiv, "Content-Security-Policy"),
            (&content, CONTENT_SECURITY_POLICY),
        ]
        .into_iter(),
    )?;
    ser.end_elem(html_name(local_name!("meta")))?;
    let id = attr("id");
    ser.start_elem(
        html_name(local_name!("style")),
        [(&id, "stencil-overlay-style")].into_iter(),
    )?;
    ser.write_text(&overlay_css())?;
    ser.end_elem(html_name(local_name!("style")))
}

fn overlay_css() -> String {
    let mut css = String::new();
    for kind in Kind::ALL {
        let (name, colour) = (kind.as_str(), kind.colour());
        css.push_str(&format!(
            "[data-stencil-kind=\"{name}\"]{{outline:3px solid {colour} !important;\
             outline-offset:-3px !important}}\n\
             #stencil-legend .stencil-swatch-{name}{{border:3px solid {colour}}}\n"
        ));
    }
    css.push_str(
        "#stencil-legend{position:fixed !important;right:8px;bottom:8px;z-index:2147483647;\
         background:#fff;color:#111;border:1px solid #444;border-radius:4px;padding:6px 10px;\
         font:12px/1.5 sans-serif;text-align:left;box-shadow:0 1px 4px rgba(0,0,0,.3);\
         max-width:40em;outline:none !important}\n\
         #stencil-legend *{outline:none !important}\n\
         #stencil-legend .stencil-swatch{display:inline-block;width:10px;height:10px;\
         margin-right:6px;vertical-align:middle}\n\
         #stencil-legend .stencil-heading{font-weight:bold;display:block;overflow:hidden;\
         text-overflow:ellipsis;white-space:nowrap}\n",
    );
    css
}

/// The fixed box naming each kind's colour and counting its sections.
fn write_legend<W: Write>(
    ser: &mut HtmlSerializer<W>,
    outlines: &[Outline],
    heading: &str,
) -> io::Result<()> {
    let attr = |local: &str| QualName::new(None, ns!(), LocalName::from(local));
    let (id, class, key) = (attr("id"), attr("class"), attr("data-stencil-key"));
    let div = || html_name(local_name!("div"));
    let span = || html_name(local_name!("span"));
    ser.start_elem(div(), [(&id, "stencil-legend")].into_iter())?;
    ser.start_elem(span(), [(&class, "stencil-heading")].into_iter())?;
    ser.write_text(&format!("Stencil sections: {heading}"))?;
    ser.end_elem(span())?;
    for kind in Kind::ALL {
        let count = outlines.iter().filter(|o| o.kind == kind).count();
        ser.start_elem(div(), [(&key, kind.as_str())].into_iter())?;
        let swatch = format!("stencil-swatch stencil-swatch-{}", kind.as_str());
        ser.start_elem(span(), [(&class, swatch.as_str())].into_iter())?;
        ser.end_elem(span())?;
        ser.write_text(&format!("{}: {count}", kind.legend()))?;
        ser.end_elem(div())?;
    }
    ser.end_elem(div())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;

    fn page(html: &str) -> Dom {
        dom::parse(html, 4096)
    }

    fn node_with_id(dom: &Dom, id: &str) -> u32 {
        (0..dom.len()).find(|&i| dom.id(i) == Some(id)).unwrap() as u32
    }

    fn written(dom: &Dom, outlines: &[Outline], base: Option<&str>) -> String {
        let base = base.map(|b| url::Url::parse(b).unwrap());
        let mut out = Vec::new();
        write(dom, outlines, base.as_ref(), "test page", &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn leaves_out_what_runs_or_fetches() {
        let dom = page(
            "<html><head><base href='https://evil.example/'><meta http-equiv=refresh \
             content='0;url=https://evil.example/'><link rel=stylesheet href=x.css>\
             <script>alert(1)</script><style>@import 'x.css'; body{background:url(a.png)} \
             i{background:url( \"data:image/png;base64,AA\")}</style></head>\
             <body onload='alert(2)'><a href='javascript:alert(3)' onclick='x()'>j</a>\
             <a href=' JaVa\tScript:alert(4)'>k</a><a href='/about'>about</a>\
             <img src='https://evil.example/a.png' srcset='b.png 2x' alt='a picture'>\
             <img src='data:image/gif;base64,R0lGOD' alt=d><iframe src='https://x/'></iframe>\
             <object data=x></object><embed src=y><svg><script>alert(5)</script></svg>\
             <noscript><img src=z></noscript></body></html>",
        );
        let html = written(&dom, &[], None);
        let lower = html.to_ascii_lowercase();
        for banned in [
            "<script",
            "alert",
            "onload",
            "onclick",
            "javascript",
            "<base",
            "refresh",
            "<link",
            "x.css",
            "a.png",
            "srcset",
            "evil.example",
            "<iframe",
            "<object",
            "<embed",
            "<noscript",
        ] {
            assert!(!lower.contains(banned), "{banned} in {html}");
        }
        assert!(html.contains("href=\"/about\""), "{html}");
        assert!(html.contains("alt=\"a picture\""), "{html}");
        assert!(
            html.contains("src=\"data:image/gif;base64,R0lGOD\""),
            "{html}"
        );
        assert!(
            html.contains("url( \"data:image/png;base64,AA\")"),
            "{html}"
        );
        assert!(html.contains("url(data:,)"), "{html}");
        assert!(html.contains(CONTENT_SECURITY_POLICY), "{html}");
    }

    #[test]
    fn links_are_made_absolute_against_the_page() {
        let dom = page("<p><a href='/about'>a</a> <a href='mailto:x@y.z'>m</a>");
        let html = written(&dom, &[], Some("https://example.com/news/1.html"));
        assert!(
            html.contains("href=\"https://example.com/about\""),
            "{html}"
        );
        assert!(html.contains("href=\"mailto:x@y.z\""), "{html}");
    }

    #[test]
    fn text_and_attributes_are_escaped() {
        let dom = page("<p id='a\"b' class='x'>1 &lt; 2 &amp; &lt;script&gt;</p>");
        let html = written(&dom, &[], None);
        assert!(html.contains("id=\"a&quot;b\""), "{html}");
        assert!(html.contains("1 &lt; 2 &amp; &lt;script&gt;"), "{html}");
    }

    #[test]
    fn hidden_elements_stay_hidden() {
        let dom = page("<div id=h style='display:none'>secret</div><div id=v>seen</div>");
        let html = written(&dom, &[], None);
        assert!(html.contains("<div id=\"h\" hidden=\"\">"), "{html}");
        assert!(html.contains("<div id=\"v\">"), "{html}");
    }

    #[test]
    fn sections_are_outlined_by_kind_and_counted_in_the_legend() {
        let dom = page(
            "<body><div id=nav><a href=/>Home</a></div><div id=main><p>Story text.</p></div>\
             <div id=foot>Share</div></body>",
        );
        let (nav, main, foot) = (
            node_with_id(&dom, "nav"),
            node_with_id(&dom, "main"),
            node_with_id(&dom, "foot"),
        );
        let p = (main as usize + 1..dom.len())
            .find(|&i| dom.tag(i).is_some_and(|t| &**t == "p"))
            .unwrap() as u32;
        let body = dom.parent(nav as usize).unwrap() as u32;
        let n = dom.len();
        let mut template = vec![false; n];
        template[dom.subtree(nav as usize)].fill(true);
        let mut smoothed = vec![0.1f32; n];
        smoothed[dom.subtree(nav as usize)].fill(0.9);
        let scores = vec![Some(0.5f32); n];
        let calls = Calls {
            sections: &[body, nav, main, foot],
            scores: &scores,
            smoothed: &smoothed,
            template: &template,
            block_owners: &[nav + 1, p, foot],
            block_content: &[false, true, false],
        };
        let outlines = outlines(&dom, &calls);
        let kinds: Vec<(u32, Kind)> = outlines.iter().map(|o| (o.node, o.kind)).collect();
        assert_eq!(
            kinds,
            [
                (body, Kind::Boilerplate),
                (nav, Kind::Template),
                (main, Kind::Content),
                (foot, Kind::Boilerplate)
            ]
        );
        assert_eq!((outlines[2].blocks, outlines[2].content_blocks), (1, 1));
        let html = written(&dom, &outlines, None);
        assert!(
            html.contains(
                "<div id=\"nav\" data-stencil-kind=\"template\" data-stencil-score=\"0.500\" \
                 data-stencil-smoothed=\"0.900\" title=\"template section"
            ),
            "{html}"
        );
        assert!(
            html.contains("<div id=\"main\" data-stencil-kind=\"content\""),
            "{html}"
        );
        assert!(html.contains("main content: 1 of 1 blocks kept"), "{html}");
        assert!(
            html.contains("boilerplate, not template: 2</div>"),
            "{html}"
        );
        assert!(
            html.contains("template (smoothed score ≥ τ): 1</div>"),
            "{html}"
        );
        // The legend closes the body; the overlay's style is in the head.
        let legend = html.find("id=\"stencil-legend\"").unwrap();
        assert!(legend < html.find("</body>").unwrap());
        assert!(html.find("stencil-overlay-style").unwrap() < html.find("</head>").unwrap());
    }

    #[test]
    fn a_100_000_deep_page_is_written_without_recursion() {
        let depth = 100_000;
        let html = format!("{}deep{}", "<div>".repeat(depth), "</div>".repeat(depth));
        let dom = dom::parse(&html, 2 * depth);
        assert!(!dom.depth_limited());
        assert!(dom.max_depth() as usize >= depth);
        let outlines = [Outline {
            node: node_with_tag_deepest(&dom),
            kind: Kind::Content,
            score: None,
            smoothed: 0.0,
            blocks: 1,
            content_blocks: 1,
        }];
        // A thread with a small stack: a recursive walk would overflow it long before
        // 100,000 levels.
        let written = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || written(&dom, &outlines, None))
            .unwrap()
            .join()
            .unwrap();
        // The legend is four divs.
        assert_eq!(written.matches("<div").count(), depth + 4);
        assert_eq!(written.matches("</div>").count(), depth + 4);
        assert!(written.contains("data-stencil-kind=\"content\" data-stencil-score=\"none\""));
        assert!(written.contains("deep"));
    }

    fn node_with_tag_deepest(dom: &Dom) -> u32 {
        (0..dom.len())
            .filter(|&i| dom.element(i).is_some())
            .max_by_key(|&i| dom.node(i).depth)
            .unwrap() as u32
    }

    #[test]
    fn css_is_neutralised() {
        assert_eq!(
            neutralised_css("@IMPORT url(x.css); a{b:URL('y.png')} c{d:url(data:image/png,1)}</x"),
            "/* @import removed */ a{b:URL(data:,)} c{d:url(data:image/png,1)}<\\/x"
        );
        // Not ASCII, and a url( that never closes.
        assert_eq!(neutralised_css("é{x:url(abc"), "é{x:url(data:,");
    }
}
