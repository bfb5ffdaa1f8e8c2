//! Repeated items share one call.
//!
//! A listing, a forum thread, a table of results is a run of sibling elements built alike
//! (`<tr class="athing">` thirty times, `<li class="product-card">` forty times), and a reader
//! takes or leaves the run whole: the thirtieth job on Hacker News' *jobs* is as much the page
//! as the first. The trees judge each block on its own, and their probabilities drift along a
//! run with the block's position and length: held out, the job titles of that page fall from
//! likely to unlikely down the run, and the threshold alone keeps only the first few.
//!
//! Before the calls are made ([`super::decide`]) every block inside a run of repeated items
//! therefore gets the mean probability of its *slot*: the blocks at the same place in the run's
//! items (same run, same number of levels below the item, same tag and classes). The mean is
//! weighted by characters, so a slot's long blocks, which the trees see best, weigh most. The
//! choices are measured in docs/evaluation.md.

use std::borrow::Cow;
use std::hash::{BuildHasher, Hasher};

use foldhash::fast::FixedState;
use html5ever::local_name;

use super::Blocks;
use crate::dom::Dom;
use crate::FastMap;

/// Siblings of one tag and class list under one parent that make a run of items.
pub const MIN_ITEMS: u32 = 4;

/// How far above a block's owner its item may be (a card's title sits a few levels down).
pub const ITEM_LEVELS: usize = 4;

/// Which elements are alike: each element's tag-and-class signature, and how many children of
/// its parent share it. The content features read it (how repeated a block's owner and its
/// parents are) and so does [`pool`]; a page computes it once ([`Siblings::given_or_of_page`]).
#[derive(Clone, Debug, Default)]
pub struct Siblings {
    /// A hash of each element's tag and classes, in order (0 for other nodes).
    pub signature: Vec<u64>,
    /// How many children of each node's parent carry its signature (itself included; 1 for the
    /// root and for nodes that are not elements).
    pub alike: Vec<u32>,
}

impl Siblings {
    pub fn of(dom: &Dom) -> Siblings {
        let n = dom.len();
        let mut signature = vec![0u64; n];
        // Sized for the page up front (about half of a page's nodes are elements): rehashing it
        // as it grows costs a good share of the content features' time.
        let mut count: FastMap<(u32, u64), u32> =
            FastMap::with_capacity_and_hasher(n / 2, Default::default());
        for (i, sig) in signature.iter_mut().enumerate() {
            let Some(tag) = dom.tag(i) else { continue };
            let mut hasher = FixedState::default().build_hasher();
            hasher.write(tag.as_bytes());
            for class in dom.classes(i) {
                hasher.write_u8(b'.');
                hasher.write(class.as_bytes());
            }
            *sig = hasher.finish();
            if let Some(p) = dom.parent(i) {
                *count.entry((p as u32, *sig)).or_default() += 1;
            }
        }
        let alike = (0..n)
            .map(|i| match (dom.tag(i), dom.parent(i)) {
                (Some(_), Some(p)) => count.get(&(p as u32, signature[i])).copied().unwrap_or(1),
                _ => 1,
            })
            .collect();
        Siblings { signature, alike }
    }

    /// `given` when the caller has it, else computed here.
    pub fn given_or_of_page<'a>(dom: &Dom, given: Option<&'a Siblings>) -> Cow<'a, Siblings> {
        match given {
            Some(siblings) => Cow::Borrowed(siblings),
            None => Cow::Owned(Siblings::of(dom)),
        }
    }
}

/// Where a block sits in a run of items: the run (its parent and the items' signature), how
/// many levels below the item, and the block owner's own signature.
type Slot = (u32, u64, u32, u64);

/// The probabilities with every block of a run of repeated items given its slot's mean (see the
/// module's documentation); other blocks keep their own.
pub fn pool(dom: &Dom, siblings: &Siblings, blocks: &Blocks, probability: &[f32]) -> Vec<f32> {
    let slots: Vec<Option<Slot>> = blocks
        .owners
        .iter()
        .map(|&owner| slot_of(dom, siblings, owner as usize))
        .collect();
    if slots.iter().all(Option::is_none) {
        return probability.to_vec();
    }
    // Per slot: Σ chars·p, Σ chars, blocks.
    let mut sums: FastMap<Slot, (f64, f64, u32)> = FastMap::default();
    for (b, slot) in slots.iter().enumerate() {
        if let Some(slot) = slot {
            let weight = f64::from(blocks.stats[b].chars.max(1));
            let sum = sums.entry(*slot).or_default();
            sum.0 += weight * f64::from(probability[b]);
            sum.1 += weight;
            sum.2 += 1;
        }
    }
    probability
        .iter()
        .zip(&slots)
        .map(|(&p, slot)| match slot.and_then(|s| sums.get(&s)) {
            Some(&(weighted, weight, count)) if count >= MIN_ITEMS => (weighted / weight) as f32,
            _ => p,
        })
        .collect()
}

/// The slot of a block owned by `owner`: its nearest ancestor-or-self within [`ITEM_LEVELS`]
/// that is one of [`MIN_ITEMS`] or more alike siblings, paragraphs aside; `None` outside runs.
///
/// Paragraphs are not items: an article is a run of `<p>`s too, and there each paragraph's own
/// evidence is worth more than its neighbours' (pooling them as well costs WCXB's forums
/// held-out macro F1; docs/evaluation.md).
fn slot_of(dom: &Dom, siblings: &Siblings, owner: usize) -> Option<Slot> {
    for (up, a) in dom
        .ancestors_or_self(owner)
        .enumerate()
        .take(ITEM_LEVELS + 1)
    {
        let tag = dom.tag(a)?;
        if matches!(*tag, local_name!("body") | local_name!("html")) {
            return None;
        }
        if *tag == local_name!("p") {
            continue;
        }
        if siblings.alike[a] >= MIN_ITEMS {
            let parent = dom.parent(a)? as u32;
            return Some((
                parent,
                siblings.signature[a],
                up as u32,
                siblings.signature[owner],
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_models::content::blocks::{blocks, texts};

    fn pooled(html: &str, probability: impl Fn(&str) -> f32) -> Vec<(String, f32)> {
        let dom = crate::dom::parse(html, 512);
        let blocks = blocks(&dom);
        let texts = texts(&dom, &blocks);
        let p: Vec<f32> = texts.iter().map(|t| probability(t)).collect();
        texts
            .into_iter()
            .zip(pool(&dom, &Siblings::of(&dom), &blocks, &p))
            .collect()
    }

    #[test]
    fn items_of_a_run_share_their_slots_mean() {
        let rows: String = (1..=4)
            .map(|i| format!("<li class=job><a href=/{i}>Job {i}</a><div>{i} days ago</div></li>"))
            .collect();
        let html = format!("<body><h1>Jobs</h1><ul>{rows}</ul></body>");
        let p = pooled(&html, |t| match t {
            "Job 1" => 0.8,
            "Job 2" => 0.6,
            "Job 3" => 0.4,
            "Job 4" => 0.2,
            "Jobs" => 0.9,
            _ => 0.1,
        });
        for (text, p) in &p {
            let expected = match text.as_str() {
                "Jobs" => 0.9,
                t if t.starts_with("Job ") => 0.5,
                _ => 0.1,
            };
            assert!(
                (p - expected).abs() < 1e-6,
                "{text}: {p}, expected {expected}"
            );
        }
    }

    #[test]
    fn short_runs_and_paragraphs_keep_their_own_probability() {
        let three: String = (1..=3).map(|i| format!("<li>Item {i}</li>")).collect();
        let paragraphs: String = (1..=6).map(|i| format!("<p>Paragraph {i}</p>")).collect();
        let html = format!("<body><ul>{three}</ul><div>{paragraphs}</div></body>");
        let own = |t: &str| t.len() as f32 / 20.0;
        for (text, p) in pooled(&html, own) {
            assert_eq!(p, own(&text), "{text}");
        }
    }

    #[test]
    fn the_mean_weighs_characters() {
        let html = "<body><div><div class=c>a</div><div class=c>b</div><div class=c>c</div>\
                    <div class=c>dddddddddddddddddddddddddddddd</div></div></body>";
        let p = pooled(html, |t| if t.len() > 1 { 1.0 } else { 0.0 });
        // 30 characters at 1 against 3 at 0.
        for (_, p) in p {
            assert!((p - 30.0 / 33.0).abs() < 1e-6, "{p}");
        }
    }
}
