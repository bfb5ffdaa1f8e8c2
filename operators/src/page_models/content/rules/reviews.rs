//! Shoppers' reviews, found through the page's own JSON-LD and the names of its markup.
//!
//! A shop's product page shows its description beside the reviews of its buyers, and both are
//! long first-person prose of the same vocabulary: by their shape and words the trees keep the
//! reviews with the description (on WCXB's product pages, whose gold leaves reviews out, they
//! are much of the text kept wrongly; docs/evaluation.md). The page itself often says which
//! blocks are reviews: many shops list them for search engines in a JSON-LD script
//! ([`block_shares`]), and review widgets name their elements for them ([`names_reviews`]).
//! `drop_product_reviews` reads both.

use std::collections::HashSet;

use foldhash::fast::FixedState;

use crate::dom::Dom;
use crate::page_models::content::blocks::Blocks;
use crate::page_models::content::words::for_each_word;

/// Word triples of a page's review bodies.
pub type Shingles = HashSet<u64, FixedState>;

/// Review bodies read from one script; past this many the rest are not read (a page of reviews
/// shows a few dozen at most), and a page that has this many reads no further script.
const MOST_BODIES: usize = 200;

/// The `reviewBody` strings of the reviews a JSON-LD value attaches to a product (under a
/// `Product`'s `review` or `reviews`): its buyers' reviews. Reviews elsewhere are left alone: a
/// review site's or a magazine's roundup lists its own, editorial, reviews of each item, and
/// those are its content.
fn bodies_of(value: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    // (value, whether it lies under a product's reviews); a stack, not recursion: the script
    // is input (serde_json itself stops at 128 levels).
    let mut stack = vec![(value, false)];
    while let Some((value, under_product)) = stack.pop() {
        match value {
            serde_json::Value::Array(items) => {
                stack.extend(items.iter().rev().map(|item| (item, under_product)));
            }
            serde_json::Value::Object(fields) => {
                let product = fields.get("@type").is_some_and(names_product);
                for (key, child) in fields.iter().rev() {
                    if under_product && key == "reviewBody" {
                        if let Some(text) = child.as_str() {
                            out.push(text.to_string());
                        }
                        continue;
                    }
                    let reviews = product && (key == "review" || key == "reviews");
                    stack.push((child, under_product || reviews));
                }
            }
            _ => {}
        }
        if out.len() >= MOST_BODIES {
            break;
        }
    }
    out
}

/// Whether a JSON-LD `@type` (a name or a list of names) says `Product`.
fn names_product(kind: &serde_json::Value) -> bool {
    names_any(kind, &["Product"])
}

/// Whether a JSON-LD `@type` (a name or a list of names) is one of `wanted`.
fn names_any(kind: &serde_json::Value, wanted: &[&str]) -> bool {
    match kind {
        serde_json::Value::String(name) => wanted.contains(&name.as_str()),
        serde_json::Value::Array(names) => names
            .iter()
            .any(|n| n.as_str().is_some_and(|n| wanted.contains(&n))),
        _ => false,
    }
}

/// What a page's JSON-LD says about its buyers' reviews.
#[derive(Debug, Default, PartialEq)]
pub struct Declared {
    /// The `reviewBody` strings of the reviews its products carry ([`bodies_of`]).
    pub bodies: Vec<String>,
    /// Whether the page declares that it is about one product: its scripts' top-level items
    /// (each script's root, or the items of its list or of its `@graph`) hold exactly one
    /// `Product` or `ProductGroup`, and no article, review or collection page. A shop's
    /// product page does; a roundup ("the best dishwashers of the year") declares several
    /// products or an article, a category page a collection.
    pub one_product: bool,
}

/// Top-level JSON-LD types that declare a product (a `ProductGroup` is one product in several
/// sizes or colours).
const PRODUCT: [&str; 2] = ["Product", "ProductGroup"];

/// Top-level JSON-LD types that make a page about something other than one product.
const NOT_ONE_PRODUCT: [&str; 5] = [
    "Article",
    "NewsArticle",
    "BlogPosting",
    "Review",
    "CollectionPage",
];

/// Reads the page's JSON-LD scripts (the text of hidden nodes, parsed as JSON; a script that is
/// not valid JSON says nothing): those that mention a product or a review body, then, when
/// they declare one product, those that might declare something else as well.
pub fn declared(dom: &Dom) -> Declared {
    // Only a text that opens like a JSON object or list can be one: the check spares the
    // substring searches below the page's scripts and style sheets, often most of its bytes.
    let scripts = || {
        (0..dom.len()).filter_map(|i| match (dom.text(i), dom.visible_text(i)) {
            (Some(text), None) if text.trim_start().starts_with(['{', '[']) => Some(text),
            _ => None,
        })
    };
    let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text.trim()).ok();
    // A JSON-LD item's type is a key of its own, `"@type"`; a page's application state (a
    // `__NEXT_DATA__` script, often hundreds of kilobytes of JSON that mentions products) has
    // none, or has it escaped inside a string, and is not parsed.
    let typed = |text: &str| text.contains("\"@type\"");
    let about_products =
        |text: &str| text.contains("\"reviewBody\"") || (text.contains("\"Product") && typed(text));
    let (mut bodies, mut products, mut others) = (Vec::new(), 0usize, 0usize);
    for value in scripts().filter(|t| about_products(t)).filter_map(parse) {
        if bodies.len() < MOST_BODIES {
            bodies.extend(bodies_of(&value));
        }
        let (p, o) = kinds(&value);
        (products, others) = (products + p, others + o);
    }
    // An article or a collection page may be declared in a script of its own; only read them
    // on the pages that need it (a news page rarely mentions a product).
    if products == 1 && others == 0 {
        let other_kinds = |text: &str| {
            !about_products(text)
                && NOT_ONE_PRODUCT.iter().any(|kind| text.contains(kind))
                && typed(text)
        };
        for value in scripts().filter(|t| other_kinds(t)).filter_map(parse) {
            others += kinds(&value).1;
        }
    }
    Declared {
        bodies,
        one_product: products == 1 && others == 0,
    }
}

/// How many of a script's top-level items are a product, and how many are something else
/// ([`NOT_ONE_PRODUCT`]).
fn kinds(value: &serde_json::Value) -> (usize, usize) {
    let (mut products, mut others) = (0, 0);
    for item in top_level_items(value) {
        if let Some(kind) = item.get("@type") {
            products += usize::from(names_any(kind, &PRODUCT));
            others += usize::from(names_any(kind, &NOT_ONE_PRODUCT));
        }
    }
    (products, others)
}

/// A script's top-level items: its root, or the items of its root list, and the items of
/// every `@graph` among those.
fn top_level_items(value: &serde_json::Value) -> Vec<&serde_json::Value> {
    let mut items: Vec<&serde_json::Value> = match value {
        serde_json::Value::Array(list) => list.iter().collect(),
        other => vec![other],
    };
    let mut i = 0;
    while i < items.len() {
        if let Some(serde_json::Value::Array(graph)) = items[i].get("@graph") {
            items.extend(graph);
        }
        i += 1;
    }
    items
}

/// Whether a class or id name says its element holds reviews: one of its words (split at
/// every character that is not a letter or digit, lower-cased) contains `review` (`reviews`,
/// `reviewer`, `productreviews`, but not `preview` or `reviewed`, a site's or a badge's name,
/// nor `editorialreviews`, a publisher's description of a book, which is the product's own
/// text) or starts with `testimonial`.
///
/// Most review widgets do not list their reviews in JSON-LD, but they do name them: a shop's
/// review section sits in elements whose class or id says so (`individual-review__review`,
/// `review-card`, `woocommerce-Reviews`, `yotpo-reviews`, `testimonials`). Such names say
/// "review" on other pages too (a magazine's `samsung-dishwasher-review` section is its
/// content), so they are read only on a page whose JSON-LD declares it is about one product
/// ([`Declared::one_product`]).
pub fn names_reviews(name: &str) -> bool {
    let has = |word: &[u8], part: &[u8]| {
        word.windows(part.len())
            .any(|window| window.eq_ignore_ascii_case(part))
    };
    name.split(|c: char| !c.is_alphanumeric()).any(|word| {
        let word = word.as_bytes();
        (has(word, b"review")
            && !has(word, b"preview")
            && !has(word, b"reviewed")
            && !has(word, b"editorial"))
            || word
                .get(..11)
                .is_some_and(|start| start.eq_ignore_ascii_case(b"testimonial"))
    })
}

/// The word triples of review bodies, when there are at least two bodies; `None` otherwise (a
/// lone review body is no list of buyers' reviews).
pub fn shingles(bodies: &[String]) -> Option<Shingles> {
    if bodies.len() < 2 {
        return None;
    }
    let mut out = Shingles::default();
    for body in bodies {
        let mut window = [0u64; 3];
        let mut seen = 0usize;
        for_each_word(body, |hash| {
            let Some(hash) = hash else { return };
            window = [window[1], window[2], hash];
            seen += 1;
            if seen >= 3 {
                out.insert(triple(window));
            }
        });
    }
    Some(out)
}

fn triple([a, b, c]: [u64; 3]) -> u64 {
    a.rotate_left(42) ^ b.rotate_left(21) ^ c
}

/// The share of each block's word triples that occur in `shingles` (0 for a block of fewer than
/// three words): how much of the block the page's JSON-LD says is a review.
pub fn block_shares(blocks: &Blocks, shingles: &Shingles) -> Vec<f32> {
    let mut found = vec![0u32; blocks.len()];
    let mut total = vec![0u32; blocks.len()];
    let mut window = [0u64; 3];
    let (mut current, mut seen) = (usize::MAX, 0usize);
    for &(b, hash) in &blocks.words {
        let b = b as usize;
        if b != current {
            (current, seen) = (b, 0);
        }
        window = [window[1], window[2], hash];
        seen += 1;
        if seen >= 3 {
            total[b] += 1;
            found[b] += u32::from(shingles.contains(&triple(window)));
        }
    }
    found
        .iter()
        .zip(&total)
        .map(|(&f, &t)| if t == 0 { 0.0 } else { f as f32 / t as f32 })
        .collect()
}

/// A product's buyers' reviews are not the product page's content (WCXB's gold leaves them out,
/// as it leaves out a story's comments). The trees keep them (first-person prose, as on
/// sweetwater's product pages); the page names them itself, in two ways:
///
/// - its JSON-LD lists them for search engines, as schema.org `Review` items with a
///   `reviewBody` under the `Product` ([`shingles`], two or more of them): a block that mostly
///   repeats those reviews ([`block_shares`], [`REVIEW_SHARE`]) is not content (held out, this
///   helps some product pages and hurts none; docs/evaluation.md). Only the reviews a `Product`
///   carries count: a magazine's roundup marks up its own reviews of each item, and those are
///   its content;
/// - its JSON-LD declares the page is about one product, and the review widget's elements are
///   named for reviews ([`names_reviews`]): what lies inside them is not content (held out,
///   this helps more product pages and hurts one, whose gold keeps an expert's review;
///   docs/evaluation.md).
///
/// Returns whether the page declares one product (the facts rule reads it too).
pub(super) fn drop_product_reviews(dom: &Dom, blocks: &Blocks, calls: &mut [bool]) -> bool {
    let declared = declared(dom);
    if let Some(shingles) = shingles(&declared.bodies) {
        let shares = block_shares(blocks, &shingles);
        for (call, share) in calls.iter_mut().zip(shares) {
            if share >= REVIEW_SHARE {
                *call = false;
            }
        }
    }
    if declared.one_product && calls.contains(&true) {
        let in_review = dom.inside_marked(|i| {
            dom.id(i)
                .into_iter()
                .chain(dom.classes(i))
                .any(names_reviews)
        });
        for (call, &owner) in calls.iter_mut().zip(&blocks.owners) {
            *call &= !in_review[owner as usize];
        }
    }
    declared.one_product
}

/// A block at least this share of whose word triples a product's JSON-LD reviews hold is one
/// of those reviews.
pub const REVIEW_SHARE: f32 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::dom::subtree::summarize;
    use crate::page_models::content::blocks::blocks;
    use crate::page_models::content::testing::{calls_of, calls_when_all_sure};
    use crate::page_models::content::Rule;

    fn bodies(script: &str) -> Vec<String> {
        serde_json::from_str(script).map_or(Vec::new(), |value| bodies_of(&value))
    }

    #[test]
    fn only_a_products_reviews_are_read() {
        let script = r#"{"@context":"https://schema.org","@graph":[
            {"@type":["Product","Thing"],"name":"Mic","review":[
                {"@type":"Review","reviewBody":"Great \"mic\", I\u2019d buy it\nagain"},
                {"@type":"Review","author":{"name":"Lee"},"reviewBody":"Second one"}]},
            {"@type":"Article","review":{"@type":"Review","reviewBody":"An editor's review"}},
            {"@type":"ItemList","itemListElement":[{"@type":"Review","reviewBody":"Roundup"}]}]}"#;
        assert_eq!(
            bodies(script),
            ["Great \"mic\", I\u{2019}d buy it\nagain", "Second one"]
        );
        assert!(bodies(r#"{"@type":"Product","review":[{"reviewBody":"x"}],}"#).is_empty());
    }

    #[test]
    fn names_of_review_widgets() {
        for name in [
            "individual-review__review",
            "woocommerce-Reviews",
            "productReviews",
            "reviewer-profile",
            "yotpo-reviews-main-widget",
            "Testimonials",
            "testimonial_card",
        ] {
            assert!(names_reviews(name), "{name}");
        }
        for name in [
            "preview-pane",
            "reviewed-logo",
            "overview",
            "rev",
            "product-info",
            "",
        ] {
            assert!(!names_reviews(name), "{name}");
        }
    }

    #[test]
    fn a_page_declares_one_product_in_its_top_level_items() {
        let declared_by = |scripts: &[&str]| {
            let html: String = scripts
                .iter()
                .map(|s| format!("<script type=application/ld+json>{s}</script>"))
                .collect();
            declared(&dom::parse(
                &format!("<head>{html}</head><body>x</body>"),
                512,
            ))
        };
        let product = r#"{"@type":"Product","name":"Mic","offers":{"@type":"Offer"},
            "isRelatedTo":[{"@type":"Product","name":"Stand"}]}"#;
        // Products nested in another item (related products, a list's items) do not count.
        assert!(declared_by(&[product]).one_product);
        assert!(declared_by(&[product, r#"{"@type":"BreadcrumbList"}"#]).one_product);
        assert!(declared_by(&[r#"{"@graph":[{"@type":["ProductGroup"]}]}"#]).one_product);
        assert!(!declared_by(&[product, product]).one_product);
        assert!(!declared_by(&[product, r#"{"@type":"CollectionPage"}"#]).one_product);
        assert!(!declared_by(&[r#"[{"@type":"BlogPosting"},{"@type":"Product"}]"#]).one_product);
        assert!(
            !declared_by(&[r#"{"@type":"ItemList","itemListElement":[{"@type":"Product"}]}"#])
                .one_product
        );
        let reviewed =
            r#"{"@type":"Product","review":[{"reviewBody":"Warm"},{"reviewBody":"Loud"}]}"#;
        assert_eq!(
            declared_by(&[reviewed]),
            Declared {
                bodies: vec!["Warm".to_string(), "Loud".to_string()],
                one_product: true
            }
        );
    }

    #[test]
    fn blocks_score_the_share_of_their_triples_in_the_reviews() {
        let dom = dom::parse(
            "<body><p>The microphone has a built in preamp for quiet sources.</p>\
             <div><p>I love this <b>mic</b> so much, it sounds warm.</p><p>Two words</p></div>\
             </body>",
            512,
        );
        let blocks = blocks(&dom);
        let reviews = vec![
            "I love this mic so much".to_string(),
            "Terrible, it broke after a week".to_string(),
        ];
        let triples = shingles(&reviews).expect("two bodies");
        let shares = block_shares(&blocks, &triples);
        // None of 8 triples; 4 of 7 (across the <b>); under three words.
        assert_eq!(shares, [0.0, 4.0 / 7.0, 0.0]);
        assert!(
            shingles(&reviews[..1]).is_none(),
            "one body: an editorial review"
        );
    }

    #[test]
    fn a_products_reviews_named_in_its_json_ld_are_not_content() {
        let page = |kind: &str| {
            format!(
                "<head><script type=application/ld+json>{{\"@type\":\"{kind}\",\"review\":[\
                 {{\"reviewBody\":\"I love this mic so much, it sounds warm on my voice.\"}},\
                 {{\"reviewBody\":\"Broke after a week, sadly.\"}}]}}</script></head>\
                 <body><p>A dynamic microphone with a built-in preamp.</p>\
                 <p>I love this mic so much, it sounds warm on my voice.</p></body>"
            )
        };
        for (kind, expected) in [("Product", [true, false]), ("Article", [true, true])] {
            let (_, calls) = calls_when_all_sure(&page(kind));
            assert_eq!(calls, expected, "{kind}");
        }
    }

    #[test]
    fn reviews_named_by_a_shop_are_not_content_on_a_page_about_one_product() {
        let page = |script: &str| {
            format!(
                "<head><script type=application/ld+json>{script}</script></head><body>\
                 <div class=product-description><p>A dynamic microphone with a built-in \
                 preamp for quiet sources.</p></div>\
                 <div id=reviews><h2>Customer reviews</h2><div class='individual-review__review'>\
                 <p>I love this mic so much, it sounds warm on my voice.</p></div></div>\
                 <div class=testimonials-carousel><p>Best purchase of the year, says Lee.</p></div>\
                 <div class=preview-pane><p>See the microphone from every side.</p></div></body>"
            )
        };
        let product = r#"{"@context":"https://schema.org","@graph":[{"@type":"BreadcrumbList"},
            {"@type":"Product","name":"Mic"}]}"#;
        let group = r#"[{"@type":"ProductGroup","name":"Mic"},{"@type":"Organization"}]"#;
        let roundup = r#"[{"@type":"NewsArticle"},{"@type":"Product","name":"Mic"}]"#;
        let two = r#"[{"@type":"Product","name":"Mic"},{"@type":"Product","name":"Stand"}]"#;
        for (script, expected) in [
            (product, [true, false, false, false, true]),
            (group, [true, false, false, false, true]),
            // A roundup's or a category's review sections are its content.
            (roundup, [true; 5]),
            (two, [true; 5]),
            ("not json", [true; 5]),
        ] {
            let dom = dom::parse(&page(script), 512);
            let sums = summarize(&dom, "example.com");
            let blocks = blocks(&dom);
            assert_eq!(blocks.len(), 5);
            let calls = calls_of(&dom, &sums, &blocks, &[0.9; 5], Rule::Blocks);
            assert_eq!(calls, expected, "{script}");
        }
    }
}
