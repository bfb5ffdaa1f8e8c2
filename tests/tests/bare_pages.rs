//! Pages that are all content, as a new user writes them to try `stencil clean`: a line, a
//! heading and a few paragraphs, the same paragraph under several headings, a story in
//! Japanese. With the shipped content model every word of each comes out, in order.

use stencil_operators::dom;
use stencil_operators::dom::subtree::summarize;
use stencil_operators::dom::text::readable;
use stencil_operators::page_models::content::{self, ContentModel, Context};

const LOREM: &str = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod \
    tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud \
    exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor \
    in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur.";

fn pages() -> Vec<(&'static str, String)> {
    let story: String = (1..=38)
        .map(|i| {
            format!(
                "<p>第{i}章。むかしむかし、ある村に、おじいさんとおばあさんが住んでいました。</p>"
            )
        })
        .collect();
    vec![
        (
            "text in the body",
            "<html><body>Hello, world.</body></html>".into(),
        ),
        (
            "one paragraph",
            "<p>This is a single line of text.</p>".into(),
        ),
        (
            "lines in divs",
            "<body><div>First line</div><div>Second line</div><div>Third line</div></body>".into(),
        ),
        (
            "a heading and paragraphs",
            "<html><head><title>Simple</title></head><body><h1>A simple page</h1>\
             <p>This is the first paragraph of a page with nothing around it.</p>\
             <p>The second paragraph says a little more, with <a href='https://example.org/'>a \
             link</a> in it.</p></body></html>"
                .into(),
        ),
        (
            "the same paragraph under several headings",
            format!(
                "<body><h1>Sections</h1><h2>One</h2><p>{LOREM}</p><p>{LOREM}</p><h2>Two</h2>\
                 <p>{LOREM}</p><h2>Three</h2><p>{LOREM}</p></body>"
            ),
        ),
        (
            "one paragraph three times",
            format!("<body><p>{LOREM}</p><p>{LOREM}</p><p>{LOREM}</p></body>"),
        ),
        (
            "an HTML5 article",
            format!(
                "<body><article><header><h1>Notes from the field</h1><p>By A. Writer</p>\
                 </header><p>{LOREM}</p><footer><p>Posted on 3 May 2024</p></footer></article>\
                 </body>"
            ),
        ),
        (
            "a list, a table and code",
            "<body><h1>Shopping</h1><ul><li>Eggs</li><li>Milk</li><li>Bread</li></ul>\
             <table><tr><th>Item</th><th>Price</th></tr><tr><td>Eggs</td><td>2.10</td></tr>\
             </table><pre>total = sum(prices)</pre><p>Buy them before Friday.</p></body>"
                .into(),
        ),
        (
            "a story in Japanese",
            format!("<html lang=ja><body><h1>むかしむかし</h1>{story}</body></html>"),
        ),
        (
            "a notice in Russian",
            "<body><h2>Объявление</h2><p>Библиотека закрыта на ремонт до понедельника.</p></body>"
                .into(),
        ),
    ]
}

#[test]
fn pages_that_are_all_content_keep_every_word() {
    let model = ContentModel::shipped();
    for (what, html) in pages() {
        let dom = dom::parse(&html, 512);
        let sums = summarize(&dom, "example.com");
        let judgement = content::judge(&dom, &sums, Context::default(), &model);
        let cleaned = judgement.cleaned_text(&dom);
        let everything = readable(&dom, 0..dom.len(), |_| false, usize::MAX);
        assert!(!cleaned.trim().is_empty(), "{what}: empty");
        assert_eq!(cleaned, everything, "{what}");
    }
}
