//! The HTML standard's categories of tags, as the tree builder ([`super::builder`]) asks
//! about them: which elements are special, bound a scope, hold raw text, end foreign content.
//! Kept apart from the builder so that its rules read as rules, not as lists of names.

use html5ever::{local_name, LocalName};

use super::tokenizer::{raw_text_kind, Attribute, Content, Doctype, Tag};

/// The namespace an element is in: HTML, or the foreign content of `<svg>` and `<math>`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Ns {
    Html,
    Svg,
    MathMl,
}

impl Ns {
    /// The foreign namespace an `<svg>` or `<math>` start tag opens.
    pub(super) fn opened_by(tag: &LocalName) -> Option<Ns> {
        match *tag {
            local_name!("svg") => Some(Ns::Svg),
            local_name!("math") => Some(Ns::MathMl),
            _ => None,
        }
    }
}

pub(super) fn is_html_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0c' | '\r')
}

/// Start tags of blocks, which close an open `p` (in button scope).
pub(super) fn closes_an_open_p(tag: &LocalName) -> bool {
    matches!(
        *tag,
        local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("main")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("search")
            | local_name!("section")
            | local_name!("summary")
            | local_name!("ul")
    )
}

/// End tags that close the block of their name (when in scope): the blocks a `<p>` start tag
/// closes, except `p` itself, and `button`, `listing`, `pre`, `select`, `applet`, `marquee`,
/// `object`.
pub(super) fn ends_a_block(tag: &LocalName) -> bool {
    (closes_an_open_p(tag) && *tag != local_name!("p"))
        || matches!(
            *tag,
            local_name!("button")
                | local_name!("listing")
                | local_name!("pre")
                | local_name!("select")
                | local_name!("applet")
                | local_name!("marquee")
                | local_name!("object")
        )
}

/// The standard's formatting elements: reopened after a block closes them.
pub(super) fn is_formatting(tag: &LocalName) -> bool {
    matches!(
        *tag,
        local_name!("a")
            | local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("nobr")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u")
    )
}

/// Whether a class name marks text that only screen readers read. Accessibility frameworks clip
/// such text to a 1-pixel box (Bootstrap's and Tailwind's `sr-only`, `visually-hidden`,
/// WordPress's `screen-reader-text`, Foundation's `show-for-sr`, Drupal's `element-invisible`,
/// Amazon's `a-offscreen`, eBay's `clipped`), so a reader sees none of it: "(opens in a new
/// window)", a price read out again beside the one shown, "Rated 4.5 out of 5 stars" beside the
/// stars, a card's "Regular price". A name counts as it is or as the end of a prefixed name
/// (`govuk-visually-hidden`, `tw:sr-only`); `clipped` only as it is, a word other pages use for
/// text shown cut short. Asked of every class of every element, so the last two letters pick
/// the few names worth comparing.
pub(crate) fn is_screen_reader_only(class: &str) -> bool {
    let bytes = class.as_bytes();
    let n = bytes.len();
    if n < 6 {
        return false;
    }
    let names: &[&str] = match [
        bytes[n - 2].to_ascii_lowercase(),
        bytes[n - 1].to_ascii_lowercase(),
    ] {
        [b'l', b'y'] => &[
            "sr-only",
            "sronly",
            "sr_only",
            "screen-reader-only",
            "screenreader-only",
            "hidden-visually",
        ],
        [b'x', b't'] => &["sr-text", "screen-reader-text", "assistive-text"],
        [b'e', b'n'] => &["visually-hidden", "visuallyhidden", "offscreen"],
        [b'e', b'r'] => &["screenreader"],
        [b's', b'r'] => &["show-for-sr"],
        [b'l', b'e'] => &["element-invisible"],
        [b'e', b'd'] => return class.eq_ignore_ascii_case("clipped"),
        _ => return false,
    };
    names.iter().any(|name| {
        let name = name.as_bytes();
        n >= name.len()
            && bytes[n - name.len()..].eq_ignore_ascii_case(name)
            && (n == name.len() || matches!(bytes[n - name.len() - 1], b'-' | b'_' | b':'))
    })
}

/// Elements whose content no reader sees, whatever their attributes (a browser that runs
/// scripts shows neither a `<noscript>` nor an `<iframe>`'s fallback content).
pub(super) fn hides_by_tag(tag: &LocalName) -> bool {
    matches!(
        *tag,
        local_name!("script")
            | local_name!("style")
            | local_name!("noscript")
            | local_name!("template")
            | local_name!("head")
            | local_name!("iframe")
            | local_name!("object")
    )
}

pub(crate) fn is_heading(tag: &LocalName) -> bool {
    heading_rank(tag).is_some()
}

/// `h1` … `h6`'s rank, 1 … 6.
pub(crate) fn heading_rank(tag: &LocalName) -> Option<u8> {
    Some(match *tag {
        local_name!("h1") => 1,
        local_name!("h2") => 2,
        local_name!("h3") => 3,
        local_name!("h4") => 4,
        local_name!("h5") => 5,
        local_name!("h6") => 6,
        _ => return None,
    })
}

pub(super) fn is_table_structure(tag: &LocalName) -> bool {
    matches!(
        *tag,
        local_name!("table")
            | local_name!("tbody")
            | local_name!("thead")
            | local_name!("tfoot")
            | local_name!("tr")
    )
}

/// A table, its sections, rows and cells, its caption and column group.
pub(super) fn is_table_part(tag: &LocalName) -> bool {
    is_table_structure(tag)
        || matches!(
            *tag,
            local_name!("td")
                | local_name!("th")
                | local_name!("caption")
                | local_name!("colgroup")
        )
}

/// Elements that belong in `<head>`.
pub(super) fn is_head_content(tag: &LocalName) -> bool {
    matches!(
        *tag,
        local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("title")
            | local_name!("noscript")
            | local_name!("noframes")
            | local_name!("style")
            | local_name!("script")
            | local_name!("template")
    )
}

/// Whether a doctype puts the page in quirks mode, where a table does not close an open
/// paragraph. The standard lists dozens of legacy public identifiers; they share the prefixes
/// below, and the one still common on the web is HTML 4.01 Transitional without a system id.
pub(super) fn is_quirky(doctype: &Doctype) -> bool {
    const QUIRKY_PREFIXES: [&str; 19] = [
        "-//w3c//dtd html 4.0 transitional//",
        "-//w3c//dtd html 4.0 frameset//",
        "-//w3c//dtd html 3",
        "-//w3c//dtd html experimental",
        "-//w3c//dtd w3 html//",
        "-//w3o//",
        "-//ietf//",
        "-//netscape comm. corp.//",
        "-//microsoft//",
        "-//webtechs//",
        "-//sun microsystems corp.//",
        "-//o'reilly and associates//",
        "-//spyglass//",
        "-//sq//",
        "-//softquad",
        "-//metrius//",
        "-//advasoft ltd//",
        "-//as//",
        "-/w3c/dtd html 4.0 transitional/en",
    ];
    const HTML4_PREFIXES: [&str; 2] = [
        "-//w3c//dtd html 4.01 transitional//",
        "-//w3c//dtd html 4.01 frameset//",
    ];
    if doctype.force_quirks
        || !doctype
            .name
            .as_ref()
            .is_some_and(|n| n.eq_ignore_ascii_case("html"))
    {
        return true;
    }
    let public = doctype
        .public_id
        .as_ref()
        .map(|p| p.to_ascii_lowercase())
        .unwrap_or_default();
    let system = doctype.system_id.as_ref().map(|s| s.to_ascii_lowercase());
    public == "html"
        || QUIRKY_PREFIXES.iter().any(|p| public.starts_with(p))
        || (system.is_none() && HTML4_PREFIXES.iter().any(|p| public.starts_with(p)))
        || system.as_deref() == Some("http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd")
}

pub(super) fn is_raw_text(tag: &LocalName) -> bool {
    raw_text_kind(tag) != Content::Markup
}

/// Foreign elements whose content is HTML: SVG's `foreignObject`, `desc` and `title`, and a
/// MathML `annotation-xml` whose encoding is HTML.
pub(super) fn is_html_integration_point(tag: &LocalName, ns: Ns, attrs: &[Attribute<'_>]) -> bool {
    match ns {
        Ns::Html => false,
        Ns::Svg => matches!(
            *tag,
            local_name!("foreignobject") | local_name!("desc") | local_name!("title")
        ),
        Ns::MathMl => {
            *tag == local_name!("annotation-xml")
                && attrs.iter().any(|a| {
                    a.name == local_name!("encoding")
                        && (a.value.eq_ignore_ascii_case("text/html")
                            || a.value.eq_ignore_ascii_case("application/xhtml+xml"))
                })
        }
    }
}

/// HTML start tags that end foreign content (`<p>` inside an `<svg>` closes the svg).
pub(super) fn breaks_out_of_foreign_content(tag: &Tag<'_>) -> bool {
    match tag.name {
        local_name!("b")
        | local_name!("big")
        | local_name!("blockquote")
        | local_name!("body")
        | local_name!("br")
        | local_name!("center")
        | local_name!("code")
        | local_name!("dd")
        | local_name!("div")
        | local_name!("dl")
        | local_name!("dt")
        | local_name!("em")
        | local_name!("embed")
        | local_name!("h1")
        | local_name!("h2")
        | local_name!("h3")
        | local_name!("h4")
        | local_name!("h5")
        | local_name!("h6")
        | local_name!("head")
        | local_name!("hr")
        | local_name!("i")
        | local_name!("img")
        | local_name!("li")
        | local_name!("listing")
        | local_name!("menu")
        | local_name!("meta")
        | local_name!("nobr")
        | local_name!("ol")
        | local_name!("p")
        | local_name!("pre")
        | local_name!("ruby")
        | local_name!("s")
        | local_name!("small")
        | local_name!("span")
        | local_name!("strong")
        | local_name!("strike")
        | local_name!("sub")
        | local_name!("sup")
        | local_name!("table")
        | local_name!("tt")
        | local_name!("u")
        | local_name!("ul")
        | local_name!("var") => true,
        local_name!("font") => tag.attrs.iter().any(|a| {
            matches!(
                a.name,
                local_name!("color") | local_name!("face") | local_name!("size")
            )
        }),
        _ => false,
    }
}

/// The standard's "special" elements.
pub(super) fn is_special(tag: &LocalName, ns: Ns) -> bool {
    match ns {
        Ns::Html => matches!(
            *tag,
            local_name!("address")
                | local_name!("applet")
                | local_name!("area")
                | local_name!("article")
                | local_name!("aside")
                | local_name!("base")
                | local_name!("basefont")
                | local_name!("bgsound")
                | local_name!("blockquote")
                | local_name!("body")
                | local_name!("br")
                | local_name!("button")
                | local_name!("caption")
                | local_name!("center")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("dd")
                | local_name!("details")
                | local_name!("dir")
                | local_name!("div")
                | local_name!("dl")
                | local_name!("dt")
                | local_name!("embed")
                | local_name!("fieldset")
                | local_name!("figcaption")
                | local_name!("figure")
                | local_name!("footer")
                | local_name!("form")
                | local_name!("frame")
                | local_name!("frameset")
                | local_name!("h1")
                | local_name!("h2")
                | local_name!("h3")
                | local_name!("h4")
                | local_name!("h5")
                | local_name!("h6")
                | local_name!("head")
                | local_name!("header")
                | local_name!("hgroup")
                | local_name!("hr")
                | local_name!("html")
                | local_name!("iframe")
                | local_name!("img")
                | local_name!("input")
                | local_name!("keygen")
                | local_name!("li")
                | local_name!("link")
                | local_name!("listing")
                | local_name!("main")
                | local_name!("marquee")
                | local_name!("menu")
                | local_name!("meta")
                | local_name!("nav")
                | local_name!("noembed")
                | local_name!("noframes")
                | local_name!("noscript")
                | local_name!("object")
                | local_name!("ol")
                | local_name!("p")
                | local_name!("param")
                | local_name!("plaintext")
                | local_name!("pre")
                | local_name!("script")
                | local_name!("search")
                | local_name!("section")
                | local_name!("select")
                | local_name!("source")
                | local_name!("style")
                | local_name!("summary")
                | local_name!("table")
                | local_name!("tbody")
                | local_name!("td")
                | local_name!("template")
                | local_name!("textarea")
                | local_name!("tfoot")
                | local_name!("th")
                | local_name!("thead")
                | local_name!("title")
                | local_name!("tr")
                | local_name!("track")
                | local_name!("ul")
                | local_name!("wbr")
                | local_name!("xmp")
        ),
        Ns::MathMl => matches!(
            *tag,
            local_name!("mi")
                | local_name!("mo")
                | local_name!("mn")
                | local_name!("ms")
                | local_name!("mtext")
                | local_name!("annotation-xml")
        ),
        Ns::Svg => matches!(
            *tag,
            local_name!("foreignobject") | local_name!("desc") | local_name!("title")
        ),
    }
}

/// Elements that bound the standard's default scope.
pub(super) fn bounds_scope(tag: &LocalName, ns: Ns) -> bool {
    match ns {
        Ns::Html => matches!(
            *tag,
            local_name!("applet")
                | local_name!("caption")
                | local_name!("html")
                | local_name!("table")
                | local_name!("td")
                | local_name!("th")
                | local_name!("marquee")
                | local_name!("object")
                | local_name!("template")
        ),
        Ns::MathMl | Ns::Svg => is_special(tag, ns),
    }
}

#[cfg(test)]
mod tests {
    use super::is_screen_reader_only;

    #[test]
    fn screen_reader_only_class_names() {
        for name in [
            "sr-only",
            "SR-ONLY",
            "tw:sr-only",
            "u-sronly",
            "visually-hidden",
            "govuk-visually-hidden",
            "visuallyhidden",
            "screen-reader-text",
            "sbi-screenreader",
            "show-for-sr",
            "element-invisible",
            "a-offscreen",
            "plp-price__sr-text",
            "clipped",
        ] {
            assert!(is_screen_reader_only(name), "{name}");
        }
        for name in [
            "only",
            "sr-only-focusable-x",
            "sr-onlyish",
            "notsr-only",
            "fb-clipped",
            "clippedtext",
            "hidden",
            "offscreen-nav",
            "reader",
            "ésr-only",
            "é",
        ] {
            assert!(!is_screen_reader_only(name), "{name}");
        }
    }
}
