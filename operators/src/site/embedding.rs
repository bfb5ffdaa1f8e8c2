//! Seed 002's removal: a host's template found in one of its pages in a single top-down pass.
//!
//! Seed 002 §5: "once a template has been detected, the removal process from a given page
//! consists in finding a subtree in this page, what is obtained in linear time". The template
//! is a tree rooted where the page is rooted, so finding it is pairing, from the roots down,
//! each template node with a page node of the same label under the page node its parent was
//! paired with, keeping sibling order: a top-down mapping that pairs only equal labels. The
//! page's blocks it pairs whole are the template's on that page, as with the least-cost
//! mapping ([`crate::site::rtdm::covered_roots`]), which this pass stands in for. Both
//! mapping methods remove their templates with it: RTDM-TD's pages labelled by tag and text,
//! ETDM's by tag and id ([`crate::site::etdm::label_tree_exact`]).
//!
//! The least-cost mapping learns what pairing two equal-labelled siblings is worth by mapping
//! their subtrees, and a page's mapping fills many alignments for each one it keeps, which
//! makes it the slower removal by far (docs/benchmarks.md). Here a pair's worth is read off at
//! most one level down, and only the pairs kept are descended into, each once
//! ([`embedded_roots`] says how a pair is weighed). It never pairs different labels: what it
//! calls template is always the template's text, in the template's place on the page.
//! `stencil bench --site-methods` measures how close it comes to the least-cost mapping on real
//! pages (docs/benchmarks.md).
//!
//! No recursion: pairs to descend into wait on an explicit list, and each list's alignment is
//! finished before the next is started, so one matrix serves all of a page's and a worker
//! reuses it for the next page.

use std::cell::RefCell;

use crate::site::rtdm::{Kid, Labelled, TooLarge, NO_KEY};

/// Cells, and pairs or children, whose scratch a worker keeps between pages (about a megabyte
/// each); a page that needed more, a 50 MB page, leaves its scratch to be freed.
const KEPT_CELLS: usize = 1 << 17;
const KEPT_NODES: usize = 1 << 16;

/// The page's blocks the template covers: the highest page nodes whose every node is paired
/// with a template node of equal label, in preorder. `max_cells` bounds the work on one page
/// (alignment cells, and children read to weigh pairs), as [`crate::site::rtdm::Limits`]
/// bounds the mapping's; [`TooLarge`] past it.
///
/// How the pass weighs a pair, and what it pairs without weighing:
///
/// - the identical ends of the two child lists are paired outright (the page's header and
///   footer), as the mapping pairs them;
/// - identical subtrees (equal keys and sizes) are worth both their sizes, as they are to the
///   mapping, and are paired without looking inside;
/// - two nodes with the same label are worth the two of them, and, where siblings leave it
///   open which page node a template node goes to (the middles do not have as many nodes of
///   that label on both sides), also both sizes of every child of the page's node identical
///   to one of the template node's children and half a node for each other child alike by
///   label (counted in nodes; the code counts in half nodes, to stay in integers): the
///   template's sidebar `<div>` then goes to the page's sidebar rather than to the first
///   `<div>` of the page;
/// - the pairing of the two middles is the heaviest common subsequence under those weights,
///   ties going to the leftmost pairs;
/// - a page block that shows no text ([`Labelled::shows_text`]: a `<head>`, a script, an icon)
///   is paired alone and not read: it has no text to remove, and aligning the `<head>`s of
///   template and page (dozens of `<meta>`s and `<link>`s each, alike and not) would be a
///   large share of the pass's alignment cells on real pages.
///
/// Where the estimate errs, a block the mapping would pair goes unpaired (the template finds
/// less on that page), or the pass descends into another block of the same tag and pairs
/// only what is equal there.
pub fn embedded_roots(
    template: &impl Labelled,
    page: &impl Labelled,
    max_cells: u64,
) -> Result<Vec<u32>, TooLarge> {
    // The pass runs once per page, and allocating its vectors afresh for each page would be a
    // large part of its time: a worker keeps one set.
    thread_local! {
        static SCRATCH: RefCell<Embedding> = RefCell::default();
    }
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut embedding) => embedding.roots_of(template, page, max_cells),
        Err(_) => Embedding::default().roots_of(template, page, max_cells),
    })
}

/// A template node and a page node paired, and what the page node is to the template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pair {
    template: u32,
    page: u32,
    covers: Covers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Covers {
    /// The page node's whole subtree: the two are identical, or the page's is a leaf.
    Whole,
    /// The page node alone: the template's node is a leaf and the page's is not, or the
    /// page's shows no text.
    Root,
    /// The page node, and its children as visit `.0` pairs them.
    Visit(u32),
}

/// A pair of equal-labelled nodes, neither a leaf nor identical, the page's showing text,
/// whose child lists are aligned.
#[derive(Clone, Copy, Debug)]
struct Visit {
    template: u32,
    page: u32,
    /// Its children's pairs, `pairs[first..first + count]`.
    first: usize,
    count: usize,
    /// Whether every node of the page node's subtree is paired.
    whole: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    SkipTemplate,
    SkipPage,
    Pair,
}

/// One page's pass, and the scratch its alignments share.
#[derive(Default)]
struct Embedding {
    visits: Vec<Visit>,
    pairs: Vec<Pair>,
    /// Visits whose child lists are still to align.
    pending: Vec<u32>,
    /// Work done on this page: alignment cells and children read to weigh pairs.
    cells: u64,
    /// The two child lists being aligned.
    kids_t: Vec<Kid>,
    kids_p: Vec<Kid>,
    /// The middles' labels, sorted, to count how many of each label either side has.
    labels_t: Vec<u64>,
    labels_p: Vec<u64>,
    /// For each middle template child that siblings leave open (else an empty run): its
    /// children's `(key, size)` and labels, sorted, starting at `runs[i]`.
    child_keys: Vec<(u64, u32)>,
    child_labels: Vec<u64>,
    runs: Vec<(usize, usize)>,
    open: Vec<bool>,
    scores: Vec<u64>,
    steps: Vec<Step>,
}

impl Embedding {
    fn roots_of(
        &mut self,
        template: &impl Labelled,
        page: &impl Labelled,
        max_cells: u64,
    ) -> Result<Vec<u32>, TooLarge> {
        let found = self.pair(template, page, max_cells).map(|()| self.roots());
        let nodes = [
            self.pairs.capacity(),
            self.visits.capacity(),
            self.kids_t.capacity(),
            self.kids_p.capacity(),
            self.child_labels.capacity(),
        ];
        if self.scores.capacity() > KEPT_CELLS || nodes.iter().any(|&n| n > KEPT_NODES) {
            *self = Embedding::default();
        }
        found
    }

    /// Pairs the template with the page from the roots down, into `visits` and `pairs`.
    fn pair(
        &mut self,
        template: &impl Labelled,
        page: &impl Labelled,
        max_cells: u64,
    ) -> Result<(), TooLarge> {
        self.visits.clear();
        self.pairs.clear();
        self.pending.clear();
        self.cells = 0;
        if template.is_empty() || page.is_empty() {
            return Ok(());
        }
        let (a, b) = (Kid::of(template, 0), Kid::of(page, 0));
        if a.label != b.label {
            return Ok(());
        }
        // The roots' pair as a visit's only pair, so that every pair has a visit.
        self.visits.push(Visit {
            template: 0,
            page: 0,
            first: 0,
            count: 0,
            whole: false,
        });
        self.push_pair(page, a, b);
        let root = &mut self.visits[0];
        root.count = 1;
        root.whole = true;
        while let Some(v) = self.pending.pop() {
            self.align(template, page, v, max_cells)?;
        }
        Ok(())
    }

    /// Records the pair of `a` and `b` (equal labels), queueing a visit when their children
    /// are to be aligned.
    fn push_pair(&mut self, page: &impl Labelled, a: Kid, b: Kid) {
        let covers = if a.identical(&b) || b.size == 1 {
            Covers::Whole
        } else if a.size == 1 || !page.shows_text(b.node) {
            // Nothing below a block that shows no text is to be removed: a page's `<head>`,
            // scripts and icons are paired alone, their children not read.
            Covers::Root
        } else {
            let v = self.visits.len() as u32;
            self.visits.push(Visit {
                template: a.node,
                page: b.node,
                first: 0,
                count: 0,
                whole: false,
            });
            self.pending.push(v);
            Covers::Visit(v)
        };
        self.pairs.push(Pair {
            template: a.node,
            page: b.node,
            covers,
        });
    }

    fn spend(&mut self, cells: u64, max_cells: u64) -> Result<(), TooLarge> {
        self.cells = self.cells.saturating_add(cells);
        if self.cells > max_cells {
            return Err(TooLarge { cells: self.cells });
        }
        Ok(())
    }

    /// Aligns the child lists of visit `v`'s two nodes and records the pairs.
    fn align(
        &mut self,
        template: &impl Labelled,
        page: &impl Labelled,
        v: u32,
        max_cells: u64,
    ) -> Result<(), TooLarge> {
        let Visit {
            template: node_t,
            page: node_p,
            ..
        } = self.visits[v as usize];
        self.kids_t.clear();
        self.kids_t.extend(
            template
                .children(node_t)
                .map(|n| Kid::unlabelled(template, n)),
        );
        self.kids_p.clear();
        self.kids_p
            .extend(page.children(node_p).map(|n| Kid::unlabelled(page, n)));
        let (all_t, all_p) = (self.kids_t.len(), self.kids_p.len());
        let head = self
            .kids_t
            .iter()
            .zip(&self.kids_p)
            .take_while(|(a, b)| a.identical(b))
            .count();
        let tail = self.kids_t[head..]
            .iter()
            .rev()
            .zip(self.kids_p[head..].iter().rev())
            .take_while(|(a, b)| a.identical(b))
            .count();
        let (m, n) = (all_t - head - tail, all_p - head - tail);
        self.spend(
            (m as u64 + 1).saturating_mul(n as u64 + 1) + (all_t + all_p) as u64,
            max_cells,
        )?;
        let first = self.pairs.len();
        let ends = (0..head).map(|k| (k, k));
        for (x, y) in ends.chain((1..=tail).map(|k| (all_t - k, all_p - k))) {
            self.pairs.push(Pair {
                template: self.kids_t[x].node,
                page: self.kids_p[y].node,
                covers: Covers::Whole,
            });
        }
        if m > 0 && n > 0 {
            for kid in &mut self.kids_t[head..head + m] {
                kid.label = template.label(kid.node);
            }
            for kid in &mut self.kids_p[head..head + n] {
                kid.label = page.label(kid.node);
            }
            if m == 1 && n == 1 {
                // One child each, the commonest middle (a wrapper whose content differs):
                // they pair when their labels do, as the alignment would pair them.
                let (a, b) = (self.kids_t[head], self.kids_p[head]);
                if a.label == b.label {
                    self.push_pair(page, a, b);
                }
            } else {
                self.index_open(template, head, m, n);
                self.fill(page, head, m, n, max_cells)?;
                self.read_back(page, head, m, n);
            }
        }
        let count = self.pairs.len() - first;
        let visit = &mut self.visits[v as usize];
        visit.first = first;
        visit.count = count;
        // Whole so far when every page child is paired; [`Embedding::roots`] asks the
        // children's visits.
        visit.whole = count == all_p;
        Ok(())
    }

    /// Which middle template children siblings leave open, and their children's keys and
    /// labels to weigh those by.
    fn index_open(&mut self, template: &impl Labelled, head: usize, m: usize, n: usize) {
        let (kids_t, kids_p) = (&self.kids_t[head..head + m], &self.kids_p[head..head + n]);
        self.labels_t.clear();
        self.labels_t.extend(kids_t.iter().map(|k| k.label));
        self.labels_t.sort_unstable();
        self.labels_p.clear();
        self.labels_p.extend(kids_p.iter().map(|k| k.label));
        self.labels_p.sort_unstable();
        let count = |sorted: &[u64], label: u64| {
            sorted.partition_point(|&l| l <= label) - sorted.partition_point(|&l| l < label)
        };
        self.child_keys.clear();
        self.child_labels.clear();
        self.runs.clear();
        self.open.clear();
        for a in kids_t {
            let start = (self.child_keys.len(), self.child_labels.len());
            self.runs.push(start);
            // As many of a label on both sides: they pair in order, and looking further
            // would change little for what it costs.
            let open = count(&self.labels_t, a.label) != count(&self.labels_p, a.label);
            self.open.push(open);
            if !open {
                continue;
            }
            for c in template.children(a.node) {
                let key = template.key(c);
                if key != NO_KEY {
                    self.child_keys.push((key, template.size(c)));
                }
                self.child_labels.push(template.label(c));
            }
            self.child_keys[start.0..].sort_unstable();
            self.child_labels[start.1..].sort_unstable();
        }
        self.runs
            .push((self.child_keys.len(), self.child_labels.len()));
    }

    /// What pairing the `i`-th middle template child `a` with page child `b` is worth (0:
    /// they cannot pair), with the page children read to weigh it.
    fn weight(&self, page: &impl Labelled, i: usize, a: &Kid, b: &Kid) -> (u64, u64) {
        // A paired node is worth 2 on each side: a child alike by label only (1) never
        // outweighs an identical one or the pair itself.
        if a.identical(b) {
            return (4 * u64::from(a.size), 0);
        }
        if a.label != b.label {
            return (0, 0);
        }
        if a.size == 1 || b.size == 1 || !self.open[i] {
            return (4, 0);
        }
        let ((k0, l0), (k1, l1)) = (self.runs[i], self.runs[i + 1]);
        let (keys, labels) = (&self.child_keys[k0..k1], &self.child_labels[l0..l1]);
        let (mut worth, mut read) = (4, 0);
        for c in page.children(b.node) {
            let (key, size) = (page.key(c), page.size(c));
            if key != NO_KEY && keys.binary_search(&(key, size)).is_ok() {
                worth += 4 * u64::from(size);
            } else if labels.binary_search(&page.label(c)).is_ok() {
                worth += 1;
            }
            read += 1;
        }
        (worth, read)
    }

    /// The heaviest common subsequence of the middles, into `scores` and `steps`. Ties go to
    /// leaving the page's child out, then the template's, so the leftmost pairs win.
    fn fill(
        &mut self,
        page: &impl Labelled,
        head: usize,
        m: usize,
        n: usize,
        max_cells: u64,
    ) -> Result<(), TooLarge> {
        let width = n + 1;
        self.scores.clear();
        self.scores.resize((m + 1) * width, 0);
        self.steps.clear();
        self.steps.resize((m + 1) * width, Step::SkipTemplate);
        self.steps[1..width].fill(Step::SkipPage);
        for i in 1..=m {
            let a = self.kids_t[head + i - 1];
            let mut read = 0;
            for j in 1..width {
                let b = self.kids_p[head + j - 1];
                let skip_page = self.scores[i * width + j - 1];
                let skip_template = self.scores[(i - 1) * width + j];
                let (w, r) = self.weight(page, i - 1, &a, &b);
                read += r;
                let pair = self.scores[(i - 1) * width + j - 1] + w;
                let (score, step) = if w > 0 && pair > skip_page && pair > skip_template {
                    (pair, Step::Pair)
                } else if skip_page >= skip_template {
                    (skip_page, Step::SkipPage)
                } else {
                    (skip_template, Step::SkipTemplate)
                };
                self.scores[i * width + j] = score;
                self.steps[i * width + j] = step;
            }
            self.spend(read, max_cells)?;
        }
        Ok(())
    }

    /// The pairs the alignment chose.
    fn read_back(&mut self, page: &impl Labelled, head: usize, m: usize, n: usize) {
        let width = n + 1;
        let (mut i, mut j) = (m, n);
        while i > 0 && j > 0 {
            match self.steps[i * width + j] {
                Step::SkipPage => j -= 1,
                Step::SkipTemplate => i -= 1,
                Step::Pair => {
                    let (a, b) = (self.kids_t[head + i - 1], self.kids_p[head + j - 1]);
                    self.push_pair(page, a, b);
                    i -= 1;
                    j -= 1;
                }
            }
        }
    }

    /// The highest wholly paired page nodes, in preorder.
    fn roots(&mut self) -> Vec<u32> {
        if self.visits.is_empty() {
            return Vec::new();
        }
        // A visit's children's visits come after it: decide wholeness from the last back.
        for v in (0..self.visits.len()).rev() {
            let Visit {
                first,
                count,
                whole,
                ..
            } = self.visits[v];
            if whole {
                let visits = &self.visits;
                let all = self.pairs[first..first + count]
                    .iter()
                    .all(|pair| match pair.covers {
                        Covers::Whole => true,
                        Covers::Root => false,
                        Covers::Visit(c) => visits[c as usize].whole,
                    });
                self.visits[v].whole = all;
            }
        }
        let mut roots = Vec::new();
        let mut pending = vec![0u32];
        while let Some(v) = pending.pop() {
            let Visit { first, count, .. } = self.visits[v as usize];
            for pair in &self.pairs[first..first + count] {
                match pair.covers {
                    Covers::Whole => roots.push(pair.page),
                    Covers::Visit(c) if self.visits[c as usize].whole => roots.push(pair.page),
                    Covers::Visit(c) => pending.push(c),
                    Covers::Root => {}
                }
            }
        }
        roots.sort_unstable();
        roots
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::rtdm::tests::{
        compatible, is_ancestor, parse, random_pairs, random_tree, wholly_paired,
    };
    use crate::site::rtdm::{covered_roots, Limits, Tree};
    use crate::xorshift;

    const CELLS: u64 = 1 << 22;

    /// Every node pair the pass makes, in template preorder, and its roots.
    fn pass(template: &Tree, page: &Tree) -> (Vec<(u32, u32)>, Vec<u32>) {
        let mut embedding = Embedding::default();
        embedding.pair(template, page, CELLS).unwrap();
        let mut pairs = Vec::new();
        for pair in &embedding.pairs {
            let whole = template.size(pair.template) == page.size(pair.page);
            if pair.covers == Covers::Whole && whole {
                // Identical subtrees: the k-th node of one to the k-th of the other.
                pairs.extend((0..page.size(pair.page)).map(|k| (pair.template + k, pair.page + k)));
            } else {
                pairs.push((pair.template, pair.page));
            }
        }
        pairs.sort_unstable();
        let roots = embedding.roots();
        (pairs, roots)
    }

    #[test]
    fn the_pass_is_a_top_down_mapping_of_equal_labels_and_its_roots_what_it_pairs_whole() {
        let (mut pairs_seen, mut rooted_below) = (0, 0);
        for (round, template, page) in random_pairs(0x0e1b_ed00_0002, 10_000, 12) {
            let (pairs, roots) = pass(&template, &page);
            for (k, &(a, b)) in pairs.iter().enumerate() {
                assert_eq!(template.label(a), page.label(b), "round {round}");
                assert!(
                    compatible(&template, &page, &pairs[..k], a, b),
                    "round {round}"
                );
            }
            let mut paired = vec![false; page.len()];
            for &(_, b) in &pairs {
                paired[b as usize] = true;
            }
            assert_eq!(roots, wholly_paired(&page, &paired), "round {round}");
            assert_eq!(
                embedded_roots(&template, &page, CELLS).unwrap(),
                roots,
                "round {round}"
            );
            pairs_seen += usize::from(pairs.len() > 1);
            rooted_below += usize::from(roots.first().is_some_and(|&r| r > 0));
        }
        // The cases that ask something of the pass came up often.
        assert!(
            pairs_seen > 2_000 && rooted_below > 1_500,
            "{pairs_seen} {rooted_below}"
        );
    }

    /// A random tree whose siblings all have different labels (labels repeat across levels).
    fn siblings_apart(state: &mut u64, max_nodes: u64) -> Tree {
        let shape = random_tree(state, max_nodes, 1);
        let mut labels = vec![0u64; shape.len()];
        for node in 0..shape.len() as u32 {
            let offset = xorshift(state) % 3;
            for (k, child) in shape.children(node).enumerate() {
                labels[child as usize] = 3 * k as u64 + offset;
            }
        }
        let ends = (0..shape.len() as u32).map(|n| shape.end(n)).collect();
        Tree::new(labels, ends).unwrap()
    }

    #[test]
    fn with_siblings_labelled_apart_the_pass_finds_every_block_the_template_kept_whole() {
        // Then which page node each template node goes to is never open, and the pass must
        // find the template exactly where it was cut from the page.
        let mut state = 0x5eed_0002_0e1b;
        let mut blocks = 0;
        for round in 0..5_000 {
            let page = siblings_apart(&mut state, 40);
            let mut keep = vec![false; page.len()];
            for node in 0..page.len() {
                let parent_kept = (0..node as u32)
                    .rev()
                    .find(|&p| is_ancestor(&page, p, node as u32))
                    .is_none_or(|p| keep[p as usize]);
                keep[node] = parent_kept && !xorshift(&mut state).is_multiple_of(4);
            }
            keep[0] = true;
            let template = page.restrict(&keep);
            let expected = wholly_paired(&page, &keep);
            assert_eq!(
                embedded_roots(&template, &page, CELLS).unwrap(),
                expected,
                "round {round}"
            );
            blocks += expected.len();
        }
        assert!(blocks > 10_000, "{blocks}");
    }

    #[test]
    fn siblings_of_one_tag_go_by_what_their_children_share() {
        // The template's sidebar `d(s k)` against a page with a content `d` before its
        // sidebar: the first `d` shares nothing with it, the second its heading and list.
        let template = parse("r(h d(s k) f)");
        let page = parse("r(h d(x y z) d(s k v) f)");
        // r h d x y z d s k v f: the page's s and k are nodes 7 and 8.
        let (pairs, roots) = pass(&template, &page);
        assert!(pairs.contains(&(2, 6)), "{pairs:?}");
        assert_eq!(roots, [1, 7, 8, 10]);
        // The least-cost mapping agrees.
        assert_eq!(
            covered_roots(&template, &page, Limits::default()).unwrap(),
            roots
        );
    }

    #[test]
    fn the_pass_pairs_only_from_the_roots_down() {
        let page = parse("r(a(b) c)");
        assert_eq!(embedded_roots(&page, &page, CELLS).unwrap(), [0]);
        // Another root label: nothing is the template's.
        assert!(embedded_roots(&parse("q(a(b) c)"), &page, CELLS)
            .unwrap()
            .is_empty());
        // A template leaf against a page subtree pairs the page's node alone.
        assert_eq!(embedded_roots(&parse("r(a c)"), &page, CELLS).unwrap(), [3]);
        // A page leaf paired with a template subtree is the template's whole, and so is a
        // page whose every node is paired.
        assert_eq!(
            embedded_roots(&parse("r(a(e) c(d))"), &page, CELLS).unwrap(),
            [3]
        );
        assert_eq!(
            embedded_roots(&parse("r(a(b) c(d))"), &page, CELLS).unwrap(),
            [0]
        );
        assert!(embedded_roots(&Tree::default(), &page, CELLS)
            .unwrap()
            .is_empty());
        assert!(embedded_roots(&page, &Tree::default(), CELLS)
            .unwrap()
            .is_empty());
    }

    /// A tree whose `quiet` nodes show no text.
    struct Quiet {
        tree: Tree,
        quiet: Vec<u32>,
    }

    impl Labelled for Quiet {
        fn len(&self) -> usize {
            self.tree.len()
        }
        fn label(&self, node: u32) -> u64 {
            self.tree.label(node)
        }
        fn key(&self, node: u32) -> u64 {
            self.tree.key(node)
        }
        fn end(&self, node: u32) -> u32 {
            self.tree.end(node)
        }
        fn shows_text(&self, node: u32) -> bool {
            !self.quiet.contains(&node)
        }
    }

    #[test]
    fn a_block_that_shows_no_text_is_paired_alone() {
        // The page r h m t s b x z (nodes 0 to 7); its h, a head, shows no text.
        let template = parse("r(h(m s) b(x y))");
        let tree = parse("r(h(m t s) b(x z))");
        assert_eq!(embedded_roots(&template, &tree, CELLS).unwrap(), [2, 4, 6]);
        let quiet = Quiet {
            tree,
            quiet: vec![1, 2, 3, 4],
        };
        assert_eq!(embedded_roots(&template, &quiet, CELLS).unwrap(), [6]);
    }

    #[test]
    fn a_page_100_000_deep_is_walked_without_recursion() {
        // A chain of `a`s ending in `x`; the page's last `a` also holds a `y`.
        let n = 100_000u32;
        let chain = |extra: bool| {
            let len = n + 1 + u32::from(extra);
            let mut labels = vec![u64::from(b'a'); n as usize];
            labels.push(u64::from(b'x'));
            let mut ends = vec![len; n as usize];
            ends.push(n + 1);
            if extra {
                labels.push(u64::from(b'y'));
                ends.push(len);
            }
            Tree::new(labels, ends).unwrap()
        };
        let (template, page) = (chain(false), chain(true));
        assert_eq!(embedded_roots(&template, &page, CELLS).unwrap(), [n]);
    }

    #[test]
    fn a_page_past_the_cell_limit_is_refused() {
        // 200 template children against 300 page children of the same tag, none identical.
        let list = |kids: usize, leaf: char| {
            let items: Vec<String> = (0..kids).map(|_| format!("a({leaf})")).collect();
            parse(&format!("r({})", items.join(" ")))
        };
        let (template, page) = (list(200, 'b'), list(300, 'c'));
        let err = embedded_roots(&template, &page, 10_000).unwrap_err();
        assert!(err.cells > 10_000);
        // Within the default limit the same pair is found, and the scratch it leaves behind
        // serves the next page.
        assert!(embedded_roots(&template, &page, CELLS).unwrap().is_empty());
        assert_eq!(embedded_roots(&page, &page, CELLS).unwrap(), [0]);
    }
}
