//! SiteLevel(θ): a block is a template of its site when it occurs on at least a fraction θ of a
//! sample of the site's pages (Chakrabarti, Kumar & Punera 2007, §3 and §5.1; seed 000).
//!
//! Blocks are identified by fingerprints. Two kinds exist, one per labelling scheme:
//! - [`Fingerprints::Subtrees`] (the paper's): the content hash of every element that shows
//!   text (see [`crate::dom::subtree`]). Elements without visible text are left out: every `<br>`
//!   or empty ad slot hashes alike and would be a "template" on every site, and such elements
//!   are covered anyway by the template ancestor they sit in.
//! - [`Fingerprints::TextBlocks`] (Kołcz & Yih 2006, §4.1; seed 001): the normalized text of
//!   candidate visual blocks (see [`crate::site::blocks::kolcz_blocks`]).
//!
//! Everything here is a plain function over plain data. The dataflow in the `stencil` binary
//! computes the same [`HostModel`]s at scale; [`learn`] is the reference it is tested against.

use std::collections::{BTreeMap, HashMap};

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::dom::subtree::Subtree;
use crate::dom::text::PageText;
use crate::dom::Dom;
use crate::site::blocks::{kolcz_blocks, Block};

/// The knobs of SiteLevel(θ).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// A block is a template when it is on at least this fraction of the host's sampled pages
    /// (0.10 in the paper).
    pub theta: f64,
    /// Hosts with fewer sampled pages get no site-level labels: with 4 pages, θ = 0.1 would
    /// call every block a template.
    pub min_host_pages: u32,
    /// At most this many pages per host are counted (200 in the paper). Pages are chosen by
    /// [`url_key`], so every run, whatever the worker count, picks the same ones.
    pub host_sample: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            theta: 0.10,
            min_host_pages: 5,
            host_sample: 200,
        }
    }
}

impl Params {
    /// Pages a block must be on to be a template of a host with `sampled` sampled pages:
    /// θ of them, and never fewer than two. A block on one page does not repeat, so it is no
    /// template whatever θ says; without this floor every block of a host with 10 or fewer
    /// sampled pages would be one at θ = 0.1.
    pub fn min_count(&self, sampled: u32) -> u32 {
        // The epsilon keeps 0.1 × 30 = 3.0000000000000004 from demanding a 4th page.
        ((self.theta * f64::from(sampled)) - 1e-9).ceil().max(2.0) as u32
    }
}

/// Which fingerprints a page contributes (and hence which labelling scheme can use them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fingerprints {
    Subtrees,
    TextBlocks,
}

impl Fingerprints {
    /// The smallest count worth sending back to the workers: templates for subtrees; for text
    /// blocks also the "frequent but below θ" ones, which Kołcz & Yih ignore rather than call
    /// non-template.
    pub fn keep_from(self, min_count: u32) -> u32 {
        match self {
            Fingerprints::Subtrees => min_count,
            Fingerprints::TextBlocks => min_count.min(2),
        }
    }
}

/// The site a page belongs to (defined with the page's host, which every stage reads).
pub use crate::reading::page::site_of;

/// Fixed seed: the sample must not change between releases or machines.
const SAMPLE_SEED: u64 = 0x5174_e9c1_2007_0200;

/// The key by which pages are sampled: a host's sample is the `host_sample` distinct URLs with
/// the smallest keys (a bottom-k sample: uniform over URLs, and stable when pages are added).
pub fn url_key(url: &str) -> u64 {
    xxh3_64_with_seed(url.as_bytes(), SAMPLE_SEED)
}

/// The page's fingerprints of `kind`, sorted and deduplicated (a block counts once per page).
pub fn fingerprints(dom: &Dom, sums: &[Subtree], kind: Fingerprints) -> Vec<u64> {
    let mut out: Vec<u64> = match kind {
        Fingerprints::Subtrees => (0..dom.len())
            .filter(|&i| dom.element(i).is_some() && sums[i].text_chars > 0)
            .map(|i| sums[i].content_hash)
            .collect(),
        Fingerprints::TextBlocks => kolcz_blocks(dom, &PageText::new(dom))
            .into_iter()
            .map(|b| b.fingerprint)
            .collect(),
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// A bottom-k sample of one host's pages, keyed by [`url_key`]. Copies of one URL are merged
/// (their fingerprints united), so a page fetched twice counts once.
#[derive(Clone, Debug, Default)]
pub struct BottomK {
    k: usize,
    pages: BTreeMap<u64, Vec<u64>>,
}

impl BottomK {
    pub fn new(k: usize) -> BottomK {
        BottomK {
            k,
            pages: BTreeMap::new(),
        }
    }

    pub fn offer(&mut self, url_key: u64, fingerprints: Vec<u64>) {
        if self.pages.len() >= self.k {
            match self.pages.last_key_value() {
                Some((&largest, _)) if url_key > largest => return,
                _ => {}
            }
        }
        match self.pages.entry(url_key) {
            std::collections::btree_map::Entry::Occupied(mut seen) => {
                let merged = union_sorted(seen.get(), &fingerprints);
                seen.insert(merged);
            }
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(fingerprints);
            }
        }
        if self.pages.len() > self.k {
            self.pages.pop_last();
        }
    }

    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// The sampled pages' URL keys in order.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.pages.keys().copied()
    }

    /// The sampled pages (URL key, fingerprints) in key order.
    pub fn pages(&self) -> impl Iterator<Item = (u64, &[u64])> + '_ {
        self.pages
            .iter()
            .map(|(key, prints)| (*key, prints.as_slice()))
    }

    /// The sampled pages in key order.
    pub fn into_pages(self) -> impl Iterator<Item = (u64, Vec<u64>)> {
        self.pages.into_iter()
    }
}

fn union_sorted(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out: Vec<u64> = a.iter().chain(b).copied().collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// What SiteLevel(θ) learned about one host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostModel {
    /// Pages (records) of the host in the input.
    pub pages: u64,
    /// Distinct URLs counted (at most `host_sample`).
    pub pages_sampled: u32,
    /// Whether the host had enough pages for site-level labels.
    pub labelled: bool,
    /// Pages a fingerprint must be on to be a template.
    pub min_count: u32,
    /// The largest [`url_key`] in the sample: a page is sampled iff its key is at most this.
    pub sample_max_key: u64,
    /// Page counts of the fingerprints on at least [`Fingerprints::keep_from`] sampled pages;
    /// none for a host without labels, which nothing asks about.
    pub counts: HashMap<u64, u32>,
}

impl HostModel {
    pub fn is_template(&self, fingerprint: u64) -> bool {
        self.labelled
            && self
                .counts
                .get(&fingerprint)
                .is_some_and(|&c| c >= self.min_count)
    }

    /// Meaningful for text blocks of sampled pages only: the block is on no other sampled page.
    pub fn is_unique(&self, fingerprint: u64) -> bool {
        !self.counts.contains_key(&fingerprint)
    }

    pub fn in_sample(&self, url_key: u64) -> bool {
        url_key <= self.sample_max_key
    }

    pub fn template_count(&self) -> usize {
        if !self.labelled {
            return 0;
        }
        self.counts
            .values()
            .filter(|&&c| c >= self.min_count)
            .count()
    }
}

/// One page's contribution to its host's statistics.
#[derive(Clone, Debug)]
pub struct PageFingerprints {
    pub host: String,
    pub url_key: u64,
    pub fingerprints: Vec<u64>,
}

/// SiteLevel(θ) over pages held in memory: the reference the dataflow is tested against, and
/// what tests and small tools call directly.
pub fn learn(
    pages: impl IntoIterator<Item = PageFingerprints>,
    params: &Params,
    kind: Fingerprints,
) -> BTreeMap<String, HostModel> {
    let mut hosts: BTreeMap<String, (u64, BottomK)> = BTreeMap::new();
    for page in pages {
        let (count, sample) = hosts
            .entry(page.host)
            .or_insert_with(|| (0, BottomK::new(params.host_sample)));
        *count += 1;
        sample.offer(page.url_key, page.fingerprints);
    }
    hosts
        .into_iter()
        .map(|(host, (pages, sample))| {
            let pages_sampled = sample.len() as u32;
            let labelled = pages_sampled >= params.min_host_pages;
            let mut counts: HashMap<u64, u32> = HashMap::new();
            let mut sample_max_key = 0;
            for (key, fingerprints) in sample.into_pages() {
                sample_max_key = key;
                // A host without labels keeps no counts (nothing asks about them), as in
                // `run`'s dataflow, which does not count them either.
                if labelled {
                    for fingerprint in fingerprints {
                        *counts.entry(fingerprint).or_default() += 1;
                    }
                }
            }
            let min_count = params.min_count(pages_sampled);
            let keep = kind.keep_from(min_count);
            counts.retain(|_, c| *c >= keep);
            let model = HostModel {
                pages,
                pages_sampled,
                labelled,
                min_count,
                sample_max_key,
                counts,
            };
            (host, model)
        })
        .collect()
}

/// For every node, the fingerprint of the template block that starts there, if one does.
pub fn template_roots(
    dom: &Dom,
    sums: &[Subtree],
    model: &HostModel,
    kind: Fingerprints,
) -> Vec<Option<u64>> {
    let mut roots = vec![None; dom.len()];
    if !model.labelled {
        return roots;
    }
    match kind {
        Fingerprints::Subtrees => {
            for (i, root) in roots.iter_mut().enumerate() {
                let hash = sums[i].content_hash;
                if dom.element(i).is_some() && sums[i].text_chars > 0 && model.is_template(hash) {
                    *root = Some(hash);
                }
            }
        }
        Fingerprints::TextBlocks => {
            return block_roots(dom.len(), &kolcz_blocks(dom, &PageText::new(dom)), model);
        }
    }
    roots
}

/// [`template_roots`] for text blocks already found (`nodes` nodes in the page).
pub fn block_roots(nodes: usize, blocks: &[Block], model: &HostModel) -> Vec<Option<u64>> {
    let mut roots = vec![None; nodes];
    if model.labelled {
        for block in blocks {
            if model.is_template(block.fingerprint) {
                roots[block.node] = Some(block.fingerprint);
            }
        }
    }
    roots
}

/// For every node, whether it lies inside a template block (itself a root or below one).
pub fn inside_templates(dom: &Dom, roots: &[Option<u64>]) -> Vec<bool> {
    dom.inside_marked(|i| roots.get(i).is_some_and(Option::is_some))
}

/// Visible characters inside templates and on the whole page.
pub fn templated_text(dom: &Dom, sums: &[Subtree], inside: &[bool]) -> (u64, u64) {
    let mut templated = 0u64;
    let mut total = 0u64;
    for i in 0..dom.len() {
        if dom.visible_text(i).is_some() {
            let chars = u64::from(sums[i].text_chars);
            total += chars;
            if inside[i] {
                templated += chars;
            }
        }
    }
    (templated, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(host: &str, url: &str, fps: &[u64]) -> PageFingerprints {
        PageFingerprints {
            host: host.to_string(),
            url_key: url_key(url),
            fingerprints: fps.to_vec(),
        }
    }

    #[test]
    fn min_count_is_a_ceiling_without_float_noise() {
        let p = Params::default();
        assert_eq!(p.min_count(30), 3);
        assert_eq!(p.min_count(31), 4);
        assert_eq!(p.min_count(200), 20);
        assert_eq!(p.min_count(5), 2);
        assert_eq!(p.min_count(10), 2);
    }

    #[test]
    fn theta_small_hosts_and_duplicate_urls() {
        let params = Params {
            theta: 0.5,
            min_host_pages: 3,
            host_sample: 200,
        };
        let mut pages = vec![
            page("a", "u1", &[1, 2, 10]),
            page("a", "u2", &[1, 2, 11]),
            page("a", "u3", &[1, 12]),
            page("a", "u4", &[1, 13]),
            page("b", "v1", &[1, 2]),
            page("b", "v2", &[1, 2]),
        ];
        // A second fetch of u1 must not make 10 look frequent.
        pages.push(page("a", "u1", &[1, 2, 10]));
        let models = learn(pages, &params, Fingerprints::Subtrees);
        let a = &models["a"];
        assert_eq!((a.pages, a.pages_sampled, a.min_count), (5, 4, 2));
        assert!(a.labelled && a.is_template(1) && a.is_template(2));
        assert!(!a.is_template(10) && !a.is_template(11));
        assert_eq!(a.template_count(), 2);
        let b = &models["b"];
        assert!(!b.labelled && !b.is_template(1), "2 pages are too few");
    }

    #[test]
    fn the_sample_is_the_smallest_keys() {
        let params = Params {
            theta: 0.1,
            min_host_pages: 1,
            host_sample: 10,
        };
        let urls: Vec<String> = (0..100).map(|i| format!("https://h/{i}")).collect();
        let mut keys: Vec<u64> = urls.iter().map(|u| url_key(u)).collect();
        keys.sort_unstable();
        // Every page carries a shared fingerprint and one equal to its own key.
        let pages = urls.iter().map(|u| page("h", u, &[7, url_key(u)]));
        let model = &learn(pages, &params, Fingerprints::Subtrees)["h"];
        assert_eq!(model.pages, 100);
        assert_eq!(model.pages_sampled, 10);
        assert_eq!(model.sample_max_key, keys[9]);
        assert_eq!(
            model.counts.get(&7),
            Some(&10),
            "counted on the sample only"
        );
        assert!(model.is_template(7) && !model.is_template(keys[0]));
        // Order of arrival does not matter.
        let reversed = urls.iter().rev().map(|u| page("h", u, &[7, url_key(u)]));
        assert_eq!(
            &learn(reversed, &params, Fingerprints::Subtrees)["h"],
            model
        );
    }

    #[test]
    fn roots_and_text_inside_templates() {
        let html = |article: &str| {
            format!(
                "<html><body><div id=nav><a href=/>Home</a><a href=/n>News</a></div>\
                 <div id=main><p>{article}</p><span></span></div></body></html>"
            )
        };
        let doms: Vec<Dom> = ["One story", "Another story", "A third"]
            .iter()
            .map(|a| crate::dom::parse(&html(a), 64))
            .collect();
        let sums: Vec<Vec<Subtree>> = doms
            .iter()
            .map(|d| crate::dom::subtree::summarize(d, "h"))
            .collect();
        let pages = (0..3).map(|p| PageFingerprints {
            host: "h".into(),
            url_key: url_key(&p.to_string()),
            fingerprints: fingerprints(&doms[p], &sums[p], Fingerprints::Subtrees),
        });
        let params = Params {
            theta: 0.5,
            min_host_pages: 3,
            host_sample: 200,
        };
        let model = &learn(pages, &params, Fingerprints::Subtrees)["h"];
        let (dom, sum) = (&doms[0], &sums[0]);
        let roots = template_roots(dom, sum, model, Fingerprints::Subtrees);
        let nav = (0..dom.len()).find(|&i| dom.id(i) == Some("nav")).unwrap();
        let main = (0..dom.len()).find(|&i| dom.id(i) == Some("main")).unwrap();
        assert!(roots[nav].is_some() && roots[main].is_none());
        let inside = inside_templates(dom, &roots);
        assert!(dom.subtree(nav).all(|i| inside[i]));
        assert!(dom.subtree(main).all(|i| !inside[i]));
        assert_eq!(templated_text(dom, sum, &inside), (8, 8 + 9));
    }
}
