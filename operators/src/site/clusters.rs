//! A host's sample pages grouped by template, before a mapping method learns one.
//!
//! RTDM-TD keeps what every one of its sample pages shares, so on a host with several
//! templates (home, article, listing and gallery pages; a redesign) it keeps nothing below
//! `<html>`. Grouping the pages first lets it learn one template per group.
//!
//! A page's *signature* is the set of its element paths: for every node with children, the
//! labels from the root down to it, hashed (the tag path shingles of structural clustering).
//! Two pages of one template share most of their paths whatever their texts; pages of two
//! templates share the skeleton above them only. Texts are leaves and never part of a path, so
//! the articles of one template differ only by the paths their own markup adds.
//!
//! Groups are made by average linkage over the Jaccard similarity of the signatures: the two
//! most alike groups merge while they are at least `threshold` alike. Average linkage and not
//! a single pass of "join the first group alike enough": the groups then do not depend on the
//! order the pages come in, only ties do, and those are broken by the groups' first pages. A
//! host's sample is at most a few dozen pages (`--sample-pages`), so the cubic cost is nothing;
//! [`MAX_PAGES`] bounds it on any input.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::site::rtdm::{Labelled, Limits, Tree};
use crate::site::rtdm_template::{find_template, Template};

/// Pages grouped at most: beyond this, pages are left out of the grouping (and of every
/// group), which keeps the O(n³) linkage to a few milliseconds.
pub const MAX_PAGES: usize = 256;

/// Mean similarity two groups of pages must have to merge, by default. On dragnet's hosts with
/// at least 10 pages, two pages of one host had a median similarity of 0.90 (5% below 0.50) and
/// two pages of different hosts 0.13 (5% above 0.25).
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// Sample pages alike in structure that a template is learned from at least, by default:
/// two pages of one template share more than the site does (two articles of a section share
/// its menu), three less often.
pub const DEFAULT_MIN_CLUSTER_PAGES: u32 = 3;

const PATH_SEED: u64 = 0xc105_0003;

/// The hash of the path to a node labelled `label` under the path `above` (0 at the root).
pub fn path_hash(above: u64, label: u64) -> u64 {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&above.to_le_bytes());
    bytes[8..].copy_from_slice(&label.to_le_bytes());
    xxh3_64_with_seed(&bytes, PATH_SEED)
}

/// The sorted, distinct hashes of the element paths of `tree`'s nodes with children.
pub fn signature(tree: &impl Labelled) -> Vec<u64> {
    let mut paths = Vec::new();
    // Open ancestors: (end of the subtree, hash of the path down to it).
    let mut open: Vec<(u32, u64)> = Vec::new();
    for node in 0..tree.len() as u32 {
        while open.last().is_some_and(|&(end, _)| end <= node) {
            open.pop();
        }
        let above = open.last().map_or(0, |&(_, path)| path);
        let path = path_hash(above, tree.label(node));
        let end = tree.end(node);
        if end > node + 1 {
            paths.push(path);
            open.push((end, path));
        }
    }
    paths.sort_unstable();
    paths.dedup();
    paths
}

/// The Jaccard similarity of two signatures (sorted and distinct); two empty ones are alike.
pub fn similarity(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - shared;
    if union == 0 {
        1.0
    } else {
        shared as f64 / union as f64
    }
}

/// The share of `template`'s paths that `page` has (1 for a template without any).
pub fn containment(template: &[u64], page: &[u64]) -> f64 {
    if template.is_empty() {
        return 1.0;
    }
    let shared = template
        .iter()
        .filter(|path| page.binary_search(path).is_ok())
        .count();
    shared as f64 / template.len() as f64
}

/// Groups pages by their signatures: for each page its group, groups numbered in the order
/// of their first pages (`None` past [`MAX_PAGES`]).
pub fn group(signatures: &[Vec<u64>], threshold: f64) -> Vec<Option<u32>> {
    let n = signatures.len().min(MAX_PAGES);
    let mut alike = vec![vec![0f64; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let s = similarity(&signatures[i], &signatures[j]);
            alike[i][j] = s;
            alike[j][i] = s;
        }
    }
    // Groups as their pages, each sorted; a merged group leaves an empty one behind.
    let mut groups: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    loop {
        let mut best: Option<(f64, usize, usize)> = None;
        for a in 0..n {
            if groups[a].is_empty() {
                continue;
            }
            for b in a + 1..n {
                if groups[b].is_empty() {
                    continue;
                }
                let mut sum = 0.0;
                for &i in &groups[a] {
                    for &j in &groups[b] {
                        sum += alike[i][j];
                    }
                }
                let mean = sum / (groups[a].len() * groups[b].len()) as f64;
                // Strictly greater: of equally alike pairs, the one with the first pages wins.
                if best.is_none_or(|(m, _, _)| mean > m) {
                    best = Some((mean, a, b));
                }
            }
        }
        match best {
            Some((mean, a, b)) if mean >= threshold => {
                let taken = std::mem::take(&mut groups[b]);
                groups[a].extend(taken);
                groups[a].sort_unstable();
            }
            _ => break,
        }
    }
    let mut of_page = vec![None; signatures.len()];
    let mut firsts: Vec<&Vec<usize>> = groups.iter().filter(|g| !g.is_empty()).collect();
    firsts.sort_by_key(|g| g[0]);
    for (number, pages) in firsts.into_iter().enumerate() {
        for &page in pages {
            of_page[page] = Some(number as u32);
        }
    }
    of_page
}

/// A host's templates when its pages may follow several: the sample pages (in sample order)
/// grouped by structure ([`group`] at `threshold`), and
/// [`find_template`] over each group of at least `min_group_pages` pages, in the order of the
/// groups' first pages. A host of one template gives one group, and its template as before.
pub fn find_templates(
    samples: Vec<Tree>,
    groups: (u32, f64),
    max_pages: u32,
    limits: Limits,
) -> Vec<Template> {
    grouped(samples, groups)
        .into_iter()
        .filter_map(|pages| find_template(pages, max_pages, limits))
        .collect()
}

/// The sample pages (in sample order) in their groups ([`group`] at `threshold`) of at least
/// `min_group_pages`, in the order of the groups' first pages.
pub fn grouped<T: Labelled>(
    samples: Vec<T>,
    (min_group_pages, threshold): (u32, f64),
) -> Vec<Vec<T>> {
    let signatures: Vec<Vec<u64>> = samples.iter().map(signature).collect();
    let groups = group(&signatures, threshold);
    let count = groups.iter().flatten().max().map_or(0, |g| g + 1);
    let mut members: Vec<Vec<T>> = (0..count).map(|_| Vec::new()).collect();
    for (tree, group) in samples.into_iter().zip(groups) {
        if let Some(group) = group {
            members[group as usize].push(tree);
        }
    }
    members.retain(|pages| pages.len() >= min_group_pages.max(2) as usize);
    members
}

/// Of several templates' signatures, the one whose paths the page's (`paths`, [`signature`])
/// has most of, if it has at least [`DEFAULT_THRESHOLD`] of them (a page of a design no group
/// had fits none); the only one, whatever the page, when there is one. Ties go to the first.
pub fn best_fit<'a>(
    mut templates: impl ExactSizeIterator<Item = &'a [u64]>,
    paths: impl FnOnce() -> Vec<u64>,
) -> Option<u32> {
    match templates.len() {
        0 => None,
        1 => Some(0),
        _ => {
            let paths = paths();
            let mut best: Option<(f64, u32)> = None;
            for (number, template) in templates.by_ref().enumerate() {
                let fit = containment(template, &paths);
                if best.is_none_or(|(b, _)| fit > b) {
                    best = Some((fit, number as u32));
                }
            }
            best.filter(|(fit, _)| *fit >= DEFAULT_THRESHOLD)
                .map(|(_, number)| number)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::rtdm_template::tests::Parsed;

    fn article(title: &str) -> String {
        format!(
            "<html><body><header><nav><ul><li><a href=/>Home</a></li><li><a href=/w>World</a>\
             </li></ul></nav></header><main><article><h1>{title}</h1><div class=byline><span>\
             By someone</span></div><p>{title} <b>first</b> paragraph.</p><p>Second.</p>\
             </article><aside><ol><li><a href=/1>Most read</a></li></ol></aside></main>\
             <footer><p>© Example</p></footer></body></html>"
        )
    }

    fn listing(title: &str) -> String {
        format!(
            "<html><body><div id=top><table><tr><td><a href=/>Home</a></td></tr></table></div>\
             <div class=grid><section><h2>{title}</h2><div class=card><a href=/a><img src=a>\
             </a><span>One</span></div><div class=card><a href=/b><img src=b></a><span>Two\
             </span></div></section></div><div id=bottom><span>© Example</span></div>\
             </body></html>"
        )
    }

    fn signature_of(html: &str) -> Vec<u64> {
        signature(&Parsed::new(html).tree())
    }

    #[test]
    fn pages_of_one_template_are_alike_whatever_their_texts() {
        let (a, b) = (
            signature_of(&article("Rain")),
            signature_of(&article("Sun")),
        );
        assert_eq!(similarity(&a, &b), 1.0);
        let other = signature_of(&listing("Rain"));
        assert!(similarity(&a, &other) < 0.5, "{}", similarity(&a, &other));
        assert_eq!(similarity(&[], &[]), 1.0);
    }

    #[test]
    fn two_templates_make_two_groups_whatever_the_order() {
        let pages = [
            article("One"),
            listing("Two"),
            article("Three"),
            listing("Four"),
            article("Five"),
        ];
        let signatures: Vec<Vec<u64>> = pages.iter().map(|p| signature_of(p)).collect();
        let groups = group(&signatures, DEFAULT_THRESHOLD);
        assert_eq!(
            groups,
            vec![Some(0), Some(1), Some(0), Some(1), Some(0)],
            "articles together, listings together"
        );
        // Reversed, the same pages go together (numbered by their first page).
        let reversed: Vec<Vec<u64>> = signatures.iter().rev().cloned().collect();
        let mut back = group(&reversed, DEFAULT_THRESHOLD);
        back.reverse();
        assert_eq!(back, vec![Some(0), Some(1), Some(0), Some(1), Some(0)]);
        // A threshold no two pages reach keeps every page apart; one of 0 joins them all.
        let apart = group(&signatures, 1.01);
        assert_eq!(apart, (0..5).map(Some).collect::<Vec<_>>());
        assert!(group(&signatures, 0.0).iter().all(|g| *g == Some(0)));
    }

    #[test]
    fn the_grouping_is_bounded() {
        let one = signature_of(&article("x"));
        let many = vec![one; MAX_PAGES + 3];
        let groups = group(&many, DEFAULT_THRESHOLD);
        assert_eq!(groups.len(), MAX_PAGES + 3);
        assert!(groups[..MAX_PAGES].iter().all(|g| *g == Some(0)));
        assert!(groups[MAX_PAGES..].iter().all(Option::is_none));
    }

    /// Deep nesting: the signature is made without recursion, one path per level.
    #[test]
    fn a_deep_page_has_one_path_a_level() {
        let depth = 5_000;
        let html = format!("{}x{}", "<div>".repeat(depth), "</div>".repeat(depth));
        let dom = crate::dom::parse(&html, 100_000);
        let sums = crate::dom::subtree::summarize(&dom, "example.com");
        let tree = crate::site::rtdm_template::label_tree(&dom, &sums);
        let paths = signature(&tree);
        assert!(paths.len() >= depth, "{}", paths.len());
    }
}
