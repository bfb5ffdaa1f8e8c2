//! What kind of page a page is — a story, a forum thread, a product, a shop's collection, a
//! listing, a manual's page or a service page — guessed from the page as a whole and given to
//! the trees as a feature of every block (`page_kind`).
//!
//! No block shows its page's kind, and the trees' probabilities mean different things on
//! different kinds: a block at 0.1–0.2 is gold far more often on a listing than on a news page
//! (docs/evaluation.md, *How block calls are made*). Trees told WCXB's gold page type do
//! markedly better on listings; this guess, a small forest per kind over the page's mean and
//! largest feature values and its URL's path words, is what `run` can know
//! (docs/evaluation.md).

use serde::{Deserialize, Serialize};

use super::blocks::Blocks;
use super::features::{Row, CONTAINER, COUNT, LEXICAL, PAGE_KIND};
use super::tree::{lay_out, Tree};

/// The kinds, in the order of [`KindModel::forests`]; the gold's page types (WCXB's), a page
/// of the news sets counting as an article. The feature's value is the index.
pub const KINDS: [&str; 7] = [
    "article",
    "forum",
    "product",
    "collection",
    "listing",
    "documentation",
    "service",
];

/// Path words that name a kind of page, one list per kind but the article (`/docs/`,
/// `/products/`, `/collections/`, `/tag/`, `/t/`, `/services/`): how site software lays out
/// its URLs, which the page's markup does not say.
const PATH_WORDS: [&[&str]; 6] = [
    &[
        "docs",
        "doc",
        "documentation",
        "reference",
        "api",
        "manual",
        "guide",
        "handbook",
        "library",
        "wiki",
        "std",
    ],
    &[
        "product", "products", "p", "dp", "item", "itm", "pdp", "ip", "app",
    ],
    &[
        "collections",
        "collection",
        "category",
        "categories",
        "c",
        "cat",
        "shop",
        "b",
        "browse",
        "store",
    ],
    &[
        "list", "tag", "tags", "topics", "section", "archive", "recent", "newest", "jobs",
        "courses", "recipes", "events",
    ],
    &[
        "forum",
        "forums",
        "t",
        "thread",
        "threads",
        "topic",
        "discussion",
        "community",
        "questions",
        "comments",
        "boards",
        "r",
    ],
    &[
        "services",
        "service",
        "solutions",
        "pricing",
        "features",
        "consulting",
        "why-us",
        "about",
    ],
];

/// Host names that start so serve one kind of page (`docs.python.org`, `forum.example.com`).
const HOST_PREFIXES: [&str; 8] = [
    "docs.",
    "developer.",
    "forum.",
    "forums.",
    "community.",
    "discuss.",
    "shop.",
    "store.",
];

/// Values in a page's embedding: every feature's character-weighted mean and largest value
/// over the blocks, then a flag per list of [`PATH_WORDS`], the path's segment count and
/// whether the host starts with one of [`HOST_PREFIXES`].
pub const DIMENSIONS: usize = 2 * COUNT + PATH_WORDS.len() + 2;

/// A page as the kind classifier reads it: `rows` are the feature rows of the blocks marked in
/// `scored` (in block order). Computed in f64, as the trainer compares.
///
/// The rows are those of the blocks [`super::probabilities`] scores first, so that `run`, which
/// computes the features of those blocks only, sees the same kind as the fit did; the features
/// a model sets itself (the lexicons' scores, the kind) are left out.
pub fn embedding(rows: &[Row], blocks: &Blocks, scored: &[bool], url: &str) -> Vec<f64> {
    let mut values = vec![0f64; DIMENSIONS];
    let chars = || {
        (blocks.stats.iter().zip(scored))
            .filter(|(_, &s)| s)
            .map(|(stats, _)| f64::from(stats.chars.max(1)))
    };
    let total = chars().sum::<f64>().max(1.0);
    for (row, chars) in rows.iter().zip(chars()) {
        let weight = chars / total;
        for (f, &value) in row.iter().enumerate() {
            if set_by_the_model(f) {
                continue;
            }
            let value = f64::from(value);
            values[f] += weight * value;
            values[COUNT + f] = values[COUNT + f].max(value);
        }
    }
    let url = url.to_ascii_lowercase();
    let mut parts = url.splitn(4, '/');
    let host = parts.nth(2).unwrap_or("");
    let path = parts.next().unwrap_or("");
    let segments: Vec<&str> = path
        .split(['/', '?', '#', '.'])
        .filter(|s| !s.is_empty())
        .collect();
    let at = 2 * COUNT;
    for (k, words) in PATH_WORDS.iter().enumerate() {
        values[at + k] = flag(segments.iter().any(|s| words.contains(s)));
    }
    values[at + PATH_WORDS.len()] = segments.len() as f64;
    values[at + PATH_WORDS.len() + 1] = flag(HOST_PREFIXES.iter().any(|p| labels_start(host, p)));
    values
}

/// Whether one of the host's labels starts `prefix` (`docs.` in `docs.python.org` and in
/// `www.docs.example.com`, not in `mydocs.com`).
fn labels_start(host: &str, prefix: &str) -> bool {
    host.match_indices(prefix)
        .any(|(i, _)| i == 0 || host.as_bytes()[i - 1] == b'.')
}

/// The features a model sets after computing the rows: they are not the page's.
fn set_by_the_model(f: usize) -> bool {
    f == LEXICAL || f == LEXICAL + 1 || f == CONTAINER || f == PAGE_KIND
}

fn flag(set: bool) -> f64 {
    f64::from(u8::from(set))
}

/// One forest per kind, each scoring "this kind, not another"; the kind whose forest scores
/// highest is the guess. Empty in a model file without kinds: every page then reads as an
/// article.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct KindModel {
    pub base_scores: Vec<f64>,
    pub forests: Vec<Vec<Tree>>,
    /// The trees laid out for scoring ([`KindModel::prepare`]) as the block model's are
    /// (`super::forest`): each a perfect binary tree of `depth` levels, splits (feature,
    /// threshold) at positions whose children are 2p + 1 and 2p + 2, then its leaves. Walking
    /// the trained trees node by node, chasing pointers, costs a measurable share of `run`
    /// (docs/benchmarks.md).
    #[serde(skip)]
    depth: u32,
    #[serde(skip)]
    splits: Vec<(u16, f64)>,
    #[serde(skip)]
    leaves: Vec<f32>,
}

impl PartialEq for KindModel {
    fn eq(&self, other: &Self) -> bool {
        self.base_scores == other.base_scores && self.forests == other.forests
    }
}

/// The deepest kind tree a model may hold (the trainer's are 4 levels deep).
const MAX_DEPTH: u32 = 8;

impl KindModel {
    /// A model from the trainer's forests, checked and laid out for scoring.
    pub fn new(base_scores: Vec<f64>, forests: Vec<Vec<Tree>>) -> Result<KindModel, String> {
        let mut model = KindModel {
            base_scores,
            forests,
            ..KindModel::default()
        };
        model.prepare()?;
        Ok(model)
    }

    pub fn is_empty(&self) -> bool {
        self.forests.is_empty()
    }

    /// Checks the forests and lays their trees out for scoring.
    pub fn prepare(&mut self) -> Result<(), String> {
        if self.is_empty() {
            return Ok(());
        }
        if self.forests.len() != KINDS.len() || self.base_scores.len() != KINDS.len() {
            return Err(format!(
                "page kinds: {} forests and {} base scores for {} kinds",
                self.forests.len(),
                self.base_scores.len(),
                KINDS.len()
            ));
        }
        if let Some(score) = self.base_scores.iter().find(|s| !s.is_finite()) {
            return Err(format!("page kinds: a base score of {score}"));
        }
        let mut depth = 0;
        for tree in self.forests.iter().flatten() {
            tree.check(DIMENSIONS)?;
            depth = depth.max(tree.depth());
        }
        if depth > MAX_DEPTH {
            return Err(format!(
                "page kinds: a tree {depth} levels deep (at most {MAX_DEPTH})"
            ));
        }
        self.depth = depth;
        (self.splits, self.leaves) = lay_out(
            self.forests.iter().flatten(),
            depth,
            (0, f64::INFINITY),
            |tree, node| (tree.feature[node], tree.threshold[node]),
        );
        Ok(())
    }

    /// The index in [`KINDS`] of the kind whose forest scores `embedding` highest (the first
    /// on a tie). The comparisons are the trainer's, in f64: a value below the threshold
    /// goes left.
    pub fn classify(&self, embedding: &[f64]) -> usize {
        let inner = (1usize << self.depth) - 1;
        let mut tree = 0;
        let mut best = (0, f64::NEG_INFINITY);
        for (kind, (forest, &base)) in self.forests.iter().zip(&self.base_scores).enumerate() {
            let mut score = base;
            for _ in forest {
                let splits = &self.splits[tree * inner..(tree + 1) * inner];
                let mut position = 0;
                for _ in 0..self.depth {
                    let (feature, threshold) = splits[position];
                    let value = embedding.get(feature as usize).copied().unwrap_or(0.0);
                    // Not `>=`: a NaN goes right, as in the block model's walk.
                    #[allow(clippy::neg_cmp_op_on_partial_ord)]
                    let right = !(value < threshold);
                    position = 2 * position + 1 + usize::from(right);
                }
                score += f64::from(self.leaves[tree * (inner + 1) + position - inner]);
                tree += 1;
            }
            if score > best.1 {
                best = (kind, score);
            }
        }
        best.0
    }

    /// Sets the page's kind in every row (the rows of the blocks marked in `wanted`), guessed
    /// from those rows the first time for a page (`guessed`), and read from it after: a page
    /// scored a second time, with every block, keeps the kind its first rows gave
    /// ([`super::probabilities`]).
    pub fn set(
        &self,
        blocks: &Blocks,
        wanted: &[bool],
        rows: &mut [Row],
        url: &str,
        guessed: &mut Option<f32>,
    ) {
        if self.is_empty() {
            return;
        }
        let kind = *guessed
            .get_or_insert_with(|| self.classify(&embedding(rows, blocks, wanted, url)) as f32);
        set_kind(rows, kind);
    }
}

/// Sets `kind` (an index in [`KINDS`]) as the `page_kind` feature of every row.
pub fn set_kind(rows: &mut [Row], kind: f32) {
    for row in rows {
        row[PAGE_KIND] = kind;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::dom::subtree::summarize;
    use crate::page_models::content::{blocks::blocks, features, Context};

    fn page(html: &str, url: &str) -> (Blocks, Vec<Row>) {
        let dom = dom::parse(html, 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks(&dom);
        let context = Context {
            url,
            ..Context::default()
        };
        let rows = features::compute(&dom, &sums, &blocks, context);
        (blocks, rows)
    }

    #[test]
    fn the_embedding_reads_the_url_and_not_what_a_model_sets() {
        let html = "<body><h1>Kallax shelf</h1><p>A shelf unit, white, 77 by 147 cm.</p></body>";
        let url = "https://www.Example.com/us/en/p/kallax-shelf/?colour=white";
        let (blocks, mut rows) = page(html, url);
        let all = vec![true; blocks.len()];
        let before = embedding(&rows, &blocks, &all, url);
        assert_eq!(before.len(), DIMENSIONS);
        let at = 2 * COUNT;
        // `p` names a product page; no other list matches; five segments (us, en, p,
        // kallax-shelf and the query).
        assert_eq!(before[at..at + 6], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(before[at + 6], 5.0);
        assert_eq!(before[at + 7], 0.0);
        // The lexicons' scores and the kind itself change nothing.
        for row in &mut rows {
            row[LEXICAL] = 0.9;
            row[CONTAINER] = -2.0;
            row[PAGE_KIND] = 3.0;
        }
        assert_eq!(embedding(&rows, &blocks, &all, url), before);
        let docs = embedding(&rows, &blocks, &all, "https://docs.example.org/");
        assert_eq!(docs[at + 7], 1.0);
        assert_eq!(docs[at + 6], 0.0);
        assert!(labels_start("www.forum.example.com", "forum."));
        assert!(!labels_start("myforum.example.com", "forum."));
    }

    #[test]
    fn the_kind_is_the_highest_scoring_forest_and_is_guessed_once_per_page() {
        let stump = |threshold: f64, left: f32, right: f32| Tree {
            feature: vec![(2 * COUNT + 6) as u16, 0, 0],
            threshold: vec![threshold, 0.0, 0.0],
            left: vec![1, 0, 0],
            right: vec![2, 0, 0],
            value: vec![0.0, left, right],
            leaf: vec![false, true, true],
        };
        // Kind 4 (listing) wins on pages with a path of three segments or more.
        let mut forests = vec![vec![stump(3.0, 0.5, -1.0)]; KINDS.len()];
        // A second tree, its left leaf a level above its right ones (laid out, it fills two
        // slots): 0.25 for short paths, else −0.1 or 0.3 by the host's prefix.
        let deeper = Tree {
            feature: vec![(2 * COUNT + 6) as u16, 0, (2 * COUNT + 7) as u16, 0, 0],
            threshold: vec![2.0, 0.0, 0.5, 0.0, 0.0],
            left: vec![1, 0, 3, 0, 0],
            right: vec![2, 0, 4, 0, 0],
            value: vec![0.0, 0.25, 0.0, -0.1, 0.3],
            leaf: vec![false, true, false, true, true],
        };
        forests[4] = vec![stump(3.0, -1.0, 1.0), deeper];
        let model = KindModel::new(vec![0.0; KINDS.len()], forests).unwrap();
        let (blocks, mut rows) = page("<body><p>Items</p></body>", "https://a.com/x/y/z");
        let all = vec![true; blocks.len()];
        assert_eq!(
            model.classify(&embedding(&rows, &blocks, &all, "https://a.com/x/y/z")),
            4
        );
        // Ties go to the first kind.
        assert_eq!(
            model.classify(&embedding(&rows, &blocks, &all, "https://a.com/x")),
            0
        );
        let mut guessed = None;
        model.set(
            &blocks,
            &all,
            &mut rows,
            "https://a.com/x/y/z",
            &mut guessed,
        );
        assert_eq!(guessed, Some(4.0));
        assert!(rows.iter().all(|r| r[PAGE_KIND] == 4.0));
        // The second scoring of the page keeps the first guess.
        model.set(&blocks, &all, &mut rows, "https://a.com/", &mut guessed);
        assert!(rows.iter().all(|r| r[PAGE_KIND] == 4.0));
        // A model without kinds leaves the feature alone.
        let mut untouched = rows.clone();
        for row in &mut untouched {
            row[PAGE_KIND] = 0.0;
        }
        KindModel::default().set(&blocks, &all, &mut untouched, "", &mut None);
        assert!(untouched.iter().all(|r| r[PAGE_KIND] == 0.0));
        assert!(KindModel::new(vec![0.0], vec![vec![]]).is_err());
        let mut unseen = vec![0.0; KINDS.len()];
        unseen[1] = f64::NAN;
        assert!(KindModel::new(unseen, vec![vec![]; KINDS.len()]).is_err());
    }
}
