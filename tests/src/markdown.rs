//! Reading Markdown back to words, to check that Stencil's Markdown holds exactly the cleaned
//! text's words (`stencil_operators::dom::markdown`).

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// The words a CommonMark reader finds in `markdown` (image alt text left out: it is
/// markup's, not the page's text).
pub fn words_of_markdown(markdown: &str) -> Vec<String> {
    let mut text = String::new();
    let mut in_image = 0usize;
    let options = pulldown_cmark::Options::ENABLE_TABLES;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Text(t) | Event::Code(t) if in_image == 0 => text.push_str(&t),
            // Raw HTML is text the escaping missed: kept, so the comparison fails.
            Event::Html(t) | Event::InlineHtml(t) => text.push_str(&t),
            Event::Start(Tag::Image { .. }) => in_image += 1,
            Event::End(TagEnd::Image) => in_image = in_image.saturating_sub(1),
            Event::Start(Tag::Emphasis | Tag::Strong | Tag::Link { .. } | Tag::Strikethrough)
            | Event::End(
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Link | TagEnd::Strikethrough,
            ) => {}
            Event::Start(_) | Event::End(_) | Event::SoftBreak | Event::HardBreak => text.push(' '),
            _ => {}
        }
    }
    text.split_whitespace().map(str::to_string).collect()
}

/// The words of a plain text.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}
