//! A page with nothing around its text is content whole.

use html5ever::local_name;

use crate::dom::Dom;
use crate::page_models::content::blocks::Blocks;

/// Whether the page is bare: no element of page furniture (`<nav>`, `<aside>`, `<menu>`,
/// `<form>`, `<iframe>`, a `<header>` or `<footer>` that holds a link), no block of which links
/// are half the text, and, on a host with statistics, no block inside a site-level template.
///
/// The content model's question is which of a page's parts it exists to deliver, and what it
/// learned to leave out is the other parts: menus, link lists, headers and footers, forms. A
/// page that has none (a heading and a few paragraphs written by hand, a one-line notice, a
/// story set as bare text) has nothing to leave out, and the trees, fitted to real sites'
/// pages, read it badly: they drop a lone line or a heading they cannot place against the rest.
/// So a bare page is one unit, called content whole, and nothing in it is a repeat to drop:
/// what a page with no second layout, no menu and no teaser says twice, it says twice on
/// purpose. Held out, 6 of the 3,419 dev pages change their text (docs/evaluation.md).
pub(crate) fn is_bare(dom: &Dom, blocks: &Blocks, site_inside: Option<&[bool]>) -> bool {
    if blocks.is_empty() {
        return false;
    }
    if (blocks.stats.iter()).any(|s| s.chars > 0 && s.anchor_chars * 2 >= s.chars) {
        return false;
    }
    if let Some(inside) = site_inside {
        if (blocks.owners.iter()).any(|&o| inside.get(o as usize).copied().unwrap_or(false)) {
            return false;
        }
    }
    !(0..dom.len()).any(|i| {
        dom.tag(i).is_some_and(|t| match *t {
            local_name!("nav")
            | local_name!("aside")
            | local_name!("menu")
            | local_name!("form")
            | local_name!("iframe") => true,
            local_name!("header") | local_name!("footer") => holds_a_link(dom, i),
            _ => false,
        })
    })
}

/// Whether an element holds a link: a `<header>` or `<footer>` without one is part of the text
/// (an article's title and byline, the date under it), one with links is a site's.
fn holds_a_link(dom: &Dom, i: usize) -> bool {
    dom.subtree(i).any(|n| dom.href(n).is_some())
}

#[cfg(test)]
mod tests {
    use crate::page_models::content::testing::decided_when_trees_say as calls_when_trees_say;

    const STORY: &str = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do \
        eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, \
        quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis \
        aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat.";

    #[test]
    fn a_bare_page_is_content_whole_repeats_and_all() {
        let page = format!(
            "<body><h1>Title</h1><h2>One</h2><p>{STORY}</p><p>{STORY}</p><h2>Two</h2>\
             <p>{STORY} <a href='/more'>More</a></p><p>{STORY}</p>\
             <footer><p>Posted on 3 May</p></footer></body>"
        );
        // However unsure the trees are, and though the paragraphs repeat word for word.
        let p = [0.01, 0.2, 0.9, 0.9, 0.3, 0.9, 0.9, 0.1];
        let (count, calls) = calls_when_trees_say(&page, &p);
        assert_eq!(count, 8);
        assert_eq!(calls, [true; 8]);
        let (_, calls) = calls_when_trees_say("<body><p>Hello, world.</p></body>", &[0.0]);
        assert_eq!(calls, [true]);
    }

    #[test]
    fn a_page_with_furniture_or_a_link_block_is_not_bare() {
        for chrome in [
            "<nav><p>Home, About</p></nav>",
            "<div><a href='/'>Home</a></div>",
            "<footer><p>Copyright notice, <a href='/terms'>terms</a></p></footer>",
            "<form><p>Subscribe</p></form>",
        ] {
            let page = format!("<body>{chrome}<p>{STORY}</p><p>{STORY}</p></body>");
            let (count, calls) = calls_when_trees_say(&page, &[0.1, 0.9, 0.9]);
            assert_eq!(count, 3, "{chrome}");
            // The trees' calls stand, and the repeat goes.
            assert_eq!(calls, [false, true, false], "{chrome}");
        }
    }
}
