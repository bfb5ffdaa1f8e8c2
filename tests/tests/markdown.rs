//! Stencil's Markdown (`stencil_operators::dom::markdown`) read back by a CommonMark parser
//! (pulldown-cmark): the words of the cleaned text, in order, on generated pages built of every
//! construct it writes and of text that looks like markup, and on every dev page with the
//! shipped content model's cleaned text; and how many of the gold's headings and list items
//! come out as Markdown headings and list items.

use stencil_operators::dom;
use stencil_operators::dom::markdown::{markdown, Options};
use stencil_operators::dom::subtree::summarize;
use stencil_operators::dom::text::readable;
use stencil_operators::page_models::content::{self, ContentModel, Context};
use stencil_operators::reading::charset;
use stencil_tests::markdown::{words, words_of_markdown};
use stencil_tests::{gold, shared_dir};

fn md(html: &str, options: Options) -> String {
    let dom = dom::parse(html, 512);
    markdown(&dom, 0..dom.len(), |_| false, |_| true, options)
}

/// The generator of the generated pages (xorshift64).
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn text_that_reads_as_markup_is_escaped() {
    let html = "<body><p># not a heading</p><p>1. not a list</p><p>- nor this</p>\
        <p>a_b _c_ *d* `e` <f> [g](h) &amp;amp;</p><p>---</p></body>";
    let out = md(html, Options::default());
    assert_eq!(words_of_markdown(&out), words(&readable_of(html)), "{out}");
    assert!(out.contains("\\# not"), "{out}");
    assert!(out.contains("1\\. not"), "{out}");
    assert!(out.contains("a_b"), "{out}");
}

fn readable_of(html: &str) -> String {
    let dom = dom::parse(html, 512);
    readable(&dom, 0..dom.len(), |_| false, usize::MAX)
}

#[test]
fn emphasis_commonmark_would_not_read_is_left_out() {
    // A closing `**` after punctuation and before a letter closes nothing.
    let out = md(
        "<body><p><b>\"a\"</b>b and <b>\"c\"</b> d</p></body>",
        Options::default(),
    );
    assert_eq!(out, "\"a\"b and **\"c\"** d");
    assert_eq!(words_of_markdown(&out), words("\"a\"b and \"c\" d"));
}

/// Pages made of every construct the Markdown writes, with text that looks like markup:
/// read back by a CommonMark parser, the Markdown has the cleaned text's words, in order.
#[test]
fn generated_pages_keep_the_cleaned_texts_words() {
    let opens = [
        "<p>",
        "<div>",
        "<h2>",
        "<h3>",
        "<ul><li>",
        "<ol><li>",
        "<li>",
        "<blockquote>",
        "<pre>",
        "<b>",
        "<strong>",
        "<i>",
        "<em>",
        "<code>",
        "<a href='/u'>",
        "<span>",
        "<table><tr><td>",
        "<td>",
        "<tr><th>",
        "<br>",
        "<sup>",
        "<img src=i.png alt=pic>",
    ];
    let closes = [
        "</p>",
        "</div>",
        "</h2>",
        "</h3>",
        "</li></ul>",
        "</li></ol>",
        "</li>",
        "</blockquote>",
        "</pre>",
        "</b>",
        "</strong>",
        "</i>",
        "</em>",
        "</code>",
        "</a>",
        "</span>",
        "</td></tr></table>",
        "</td>",
        "</th></tr>",
        "",
        "</sup>",
        "",
    ];
    let texts = [
        "word",
        "Two words",
        " spaced ",
        "a*b",
        "_x_",
        "snake_case",
        "#",
        "# h",
        "1.",
        "2)",
        "-",
        "+",
        ">",
        "---",
        "===",
        "[l](u)",
        "]",
        "![",
        "<tag>",
        "&amp;",
        "a|b",
        "`tick`",
        "``",
        "\\",
        "~~s~~",
        "\"q\"",
        ".",
        "x.",
        "end,",
        "Über",
        "\n",
        "  ",
        "CamelCase",
        "99",
        "*",
        "__",
        "<!--",
        "![x](y)",
        "[^1]",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for page in 0..50_000 {
        let mut html = String::from("<body>");
        let mut stack = Vec::new();
        for _ in 0..1 + xorshift(&mut state) % 40 {
            match xorshift(&mut state) % 3 {
                0 if stack.len() < 8 => {
                    let k = (xorshift(&mut state) % opens.len() as u64) as usize;
                    html.push_str(opens[k]);
                    stack.push(k);
                }
                1 => {
                    if let Some(k) = stack.pop() {
                        html.push_str(closes[k]);
                    }
                }
                _ => {
                    let k = (xorshift(&mut state) % texts.len() as u64) as usize;
                    html.push_str(&texts[k].replace('&', "&amp;").replace('<', "&lt;"));
                    if xorshift(&mut state).is_multiple_of(2) {
                        html.push(' ');
                    }
                }
            }
        }
        while let Some(k) = stack.pop() {
            html.push_str(closes[k]);
        }
        let dom = dom::parse(&html, 512);
        let plain = readable(&dom, 0..dom.len(), |_| false, usize::MAX);
        for options in [
            Options::default(),
            Options {
                links: true,
                images: true,
            },
        ] {
            let out = markdown(&dom, 0..dom.len(), |_| false, |_| true, options);
            assert_eq!(
                words_of_markdown(&out),
                words(&plain),
                "page {page}, {options:?}\nhtml: {html}\nmarkdown:\n{out}\nplain:\n{plain}"
            );
        }
    }
}

/// A dev page: id, URL, host, HTML, and its gold text where that keeps headings and list items
/// on lines of their own (WCXB's).
type DevPage = (String, String, String, Vec<u8>, Option<String>);

/// A dev page's cleaned text and its Markdown, plain and with links and images.
struct Views {
    text: String,
    markdown: String,
    with_links_and_images: String,
}

fn views(html: &[u8], url: &str, host: &str, model: &ContentModel) -> (dom::Dom, Views) {
    let decoded = charset::decode(html, None, None);
    let dom = dom::parse(&decoded.text, 512);
    let sums = summarize(&dom, host);
    let context = Context {
        url,
        ..Context::default()
    };
    let judgement = content::judge(&dom, &sums, context, model);
    let views = Views {
        text: judgement.cleaned_text(&dom),
        markdown: judgement.cleaned_markdown(&dom, Options::default()),
        with_links_and_images: judgement.cleaned_markdown(
            &dom,
            Options {
                links: true,
                images: true,
            },
        ),
    };
    (dom, views)
}

/// Words as a reader reads them: Markdown's escapes and emphasis marks left out.
fn plain_words(text: &str) -> String {
    let plain: String = text.chars().filter(|c| !"\\*`".contains(*c)).collect();
    normalized(&plain)
}

/// A heading line's words (after its `#`s).
fn heading_words(line: &str) -> String {
    plain_words(line.trim_start_matches(['>', ' ']).trim_start_matches('#'))
}

/// A list line's words (after its marker).
fn item_words(line: &str) -> String {
    let line = line.trim_start_matches(['>', ' ']);
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let line = if digits > 0 && line[digits..].starts_with(". ") {
        &line[digits + 2..]
    } else {
        ["- ", "* ", "+ "]
            .iter()
            .find_map(|m| line.strip_prefix(m))
            .unwrap_or(line)
    };
    plain_words(line)
}

/// Whether a line of Markdown (or of the gold) is a list item: `- `, `* `, `+ ` or `1. ` after
/// any `>` and indentation.
fn is_list_line(line: &str) -> bool {
    let marker = line.trim_start_matches(['>', ' ']);
    ["- ", "* ", "+ "].iter().any(|m| marker.starts_with(m))
        || marker
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Headings and list items of the gold: the page's `<h1>`–`<h6>` elements whose text is a whole
/// line of the gold main content (WCXB's gold keeps headings on lines of their own), and the
/// gold's own list items (its lines that start with `- `, `* ` or `1. `). Returns (gold
/// headings, those written as Markdown headings, gold items, those written as list items).
fn structure_kept(dom: &dom::Dom, gold: &str, markdown: &str) -> [usize; 4] {
    let gold_lines: std::collections::HashSet<String> = gold
        .lines()
        .map(normalized)
        .filter(|l| l.chars().count() >= 3)
        .collect();
    let mut headings = std::collections::HashSet::new();
    for i in 0..dom.len() {
        let Some(tag) = dom.tag(i) else { continue };
        if !matches!(&**tag, "h1" | "h2" | "h3" | "h4" | "h5" | "h6") {
            continue;
        }
        let text = normalized(&readable(dom, dom.subtree(i), |_| false, 4096));
        if gold_lines.contains(&text) {
            headings.insert(plain_words(&text));
        }
    }
    let items: std::collections::HashSet<String> = gold
        .lines()
        .filter(|line| is_list_line(line))
        .map(item_words)
        .filter(|l| l.chars().count() >= 3)
        .collect();
    let (mut md_headings, mut md_items) = (
        std::collections::HashSet::new(),
        std::collections::HashSet::new(),
    );
    for line in markdown.lines() {
        if line.trim_start_matches(['>', ' ']).starts_with('#') {
            md_headings.insert(heading_words(line));
        } else if is_list_line(line) {
            md_items.insert(item_words(line));
        }
    }
    [
        headings.len(),
        headings.intersection(&md_headings).count(),
        items.len(),
        items.intersection(&md_items).count(),
    ]
}

/// Every dev page: its Markdown, read back, has its cleaned text's words, in order (with and
/// without links and images); on WCXB, whose gold keeps headings and list items on lines of
/// their own, the share of those the Markdown writes as headings and list items.
#[test]
fn dev_pages_markdown_has_the_cleaned_texts_words() {
    let Some(data) = shared_dir("data") else {
        return;
    };
    // (id, url, host, html, gold text where it keeps headings and items on lines of their own)
    let mut pages: Vec<DevPage> = Vec::new();
    for page in gold::wcxb_dev(&data.join("wcxb-dev")) {
        let id = format!("wcxb-dev/{}", page.id);
        pages.push((id, page.url, page.host, page.html, page.gold_text));
    }
    for page in gold::dragnet(&data.join("dragnet"), 1) {
        pages.push((
            format!("dragnet/{}", page.id),
            page.url,
            page.host,
            page.html,
            None,
        ));
    }
    for page in gold::cleanportaleval(&data.join("cleanportaleval")) {
        let id = format!("cleanportaleval/{}", page.id);
        pages.push((id, page.url, page.host, page.html, None));
    }
    for page in gold::l3s_gn1(&data.join("l3s-gn1")) {
        let id = format!("l3s-gn1/{}", page.id);
        pages.push((id, page.url, page.host, page.original, None));
    }
    assert!(pages.len() > 3000, "{} dev pages", pages.len());
    let model = ContentModel::shipped();
    let shares = std::sync::Mutex::new([0usize; 4]);
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((id, url, host, html, gold)) = pages.get(k) else {
                    break;
                };
                let (dom, views) = views(html, url, host, &model);
                let text = words(&views.text);
                for markdown in [&views.markdown, &views.with_links_and_images] {
                    if words_of_markdown(markdown) != text {
                        failures.lock().unwrap().push(id.clone());
                    }
                }
                if let Some(gold) = gold {
                    let kept = structure_kept(&dom, gold, &views.markdown);
                    let mut shares = shares.lock().unwrap();
                    for (total, k) in shares.iter_mut().zip(kept) {
                        *total += k;
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} pages' Markdown differs from their cleaned text: {:?}",
        failures.len(),
        pages.len(),
        &failures[..failures.len().min(20)]
    );
    let [headings, md_headings, items, md_items] = shares.into_inner().unwrap();
    let share = |part: usize, whole: usize| part as f64 / whole.max(1) as f64;
    println!(
        "{} pages: Markdown words = cleaned text words on every one. WCXB gold headings written \
         as headings: {md_headings}/{headings} ({:.1}%); gold list items as list items: \
         {md_items}/{items} ({:.1}%)",
        pages.len(),
        100.0 * share(md_headings, headings),
        100.0 * share(md_items, items)
    );
    assert!(
        headings > 500 && items > 500,
        "{headings} headings, {items} items"
    );
    assert!(share(md_headings, headings) > 0.88);
    assert!(share(md_items, items) > 0.65);
}
