//! Shoppers' reviews, found through the page's own JSON-LD.
//!
//! A shop's product page shows its description beside the reviews of its buyers, and both are
//! long first-person prose of the same vocabulary: by their shape and words the trees keep the
//! reviews with the description (on WCXB's product pages, whose gold leaves reviews out, they
//! were most of the text kept wrongly). Many shops also list those reviews for search engines,
//! as schema.org `Review` items with a `reviewBody`, in a JSON-LD script of the same page. The
//! share of a block's word triples that occur in those bodies is what the page itself says is
//! a review ([`block_shares`]; `content::decide` calls such blocks boilerplate).
//!
//! Only the reviews a `Product` carries count, and only on pages with two or more of them: a
//! magazine's roundup marks up its own reviews of each item, and those are its content.

use std::collections::HashSet;

use foldhash::fast::FixedState;

use super::blocks::Blocks;
use super::lexicon::for_each_word;

/// Word triples of a page's review bodies.
pub type Shingles = HashSet<u64, FixedState>;

/// Review bodies read from one script; past this many the rest are not read (a page of reviews
/// shows a few dozen at most).
const MOST_BODIES: usize = 200;

/// The `reviewBody` strings of the reviews a JSON-LD script attaches to a product (under a
/// `Product`'s `review` or `reviews`): its buyers' reviews. Reviews elsewhere are left alone: a
/// review site's or a magazine's roundup lists its own, editorial, reviews of each item, and
/// those are its content. A script that is not valid JSON gives none.
pub fn bodies(script: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(script.trim()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // (value, whether it lies under a product's reviews); a stack, not recursion: the script
    // is input (serde_json itself stops at 128 levels).
    let mut stack = vec![(&value, false)];
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
    match kind {
        serde_json::Value::String(name) => name == "Product",
        serde_json::Value::Array(names) => names.iter().any(|n| n.as_str() == Some("Product")),
        _ => false,
    }
}

/// The word triples of review bodies, when there are at least two bodies; `None` otherwise.
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
/// three words).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::page_models::content::blocks::blocks;

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
}
