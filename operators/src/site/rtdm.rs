//! The restricted top-down mapping between two labelled ordered trees (RTDM, seed 002 §3–4),
//! computed with the record of how (RTDM-TD), so that the mapping itself can be read back.
//!
//! A *mapping* pairs nodes of two trees one to one, keeping ancestors and sibling order
//! (Tai's definition). It is *top-down* when every mapped node's parent is mapped to the
//! other's parent, and *restricted* when two nodes mapped with different labels have no mapped
//! descendants: a node can only be replaced together with its whole subtree. Its cost counts a
//! replaced pair, a node of the first tree left out and a node of the second left out as 1
//! each. [`map`] finds a mapping of least cost; seed 002 reads a site's template off it (the
//! nodes mapped to equal labels: [`crate::site::rtdm_template`]), and [`covered_roots`] reads
//! off the second tree's blocks the first covers: the least-cost removal, which the removal
//! pass ([`crate::site::embedding`]) stands in for at a fraction of the cost and is measured
//! against.
//!
//! With the roots mapped, the best mapping of two subtrees with equal root labels is an
//! alignment of their two child lists, where leaving a child out costs its subtree's size and
//! pairing two children costs their own mapping; pairing children with different labels costs
//! both sizes less one. That is a dynamic programme over child lists, one matrix per pair of
//! equal-labelled nodes the alignment asks about, and at most `n₁·n₂` cells in all. Three short
//! cuts keep the typical case near linear, as RTDM's authors do:
//!
//! - **Identical subtrees** cost 0 without descending. RTDM's authors find them by a linear
//!   pre-pass into equivalence classes; here every node carries a subtree *key* (a hash of its
//!   label and its children's keys, [`Tree::new`]), so that a page labelled from the content
//!   hashes every page gets anyway ([`crate::dom::subtree`]) is mapped with no pre-pass at all
//!   ([`Labelled`]). Two nodes are identical when their keys and sizes are equal.
//! - **Identical ends of two child lists** are paired before the matrix is built: pairing two
//!   identical first (or last) children is always part of some least-cost alignment (the
//!   argument is at the alignment frame, `Frame`), and a page's header and footer are exactly
//!   that, so the matrix is only the middle.
//! - **A pair that cannot win** is not descended into: no mapping of two subtrees costs less
//!   than the difference of their sizes, so when that bound already loses to leaving one of
//!   them out, its matrix is never built. A pair with equal labels of which one is a leaf
//!   needs no matrix either: the two are mapped and the other's descendants left out.
//!
//! No recursion: the matrices are frames on an explicit stack, because crawled pages nest tens
//! of thousands deep. Ties go to pairing, then to leaving the first tree's child out, so the
//! same two trees always give the same mapping.
//!
//! [`map_exact`] runs the same programme for seed 004's *exact* top-down mapping (ETDM,
//! Definition 1.3.4): only nodes with equal labels may be mapped, so a pair with different
//! labels is no candidate and its cell takes the better of leaving either child out. Every
//! mapped pair is then an equal one and the cost is `|t1| + |t2| − 2·|mapping|`: the least-cost
//! exact mapping is the largest one. Where RTDM maps a `<table>` onto a `<div>` as one replaced
//! node, ETDM leaves both out ([`crate::site::etdm`] reads seed 004's templates off it).

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// No node.
pub const NONE: u32 = u32::MAX;

/// The key of a node whose subtree is known to equal no other: a template node that lost part
/// of its subtree to [`Tree::restrict`]. The mapping then descends into it.
pub const NO_KEY: u64 = u64::MAX;

/// Seeds the keys [`Tree::new`] computes.
const KEY_SEED: u64 = 0x6b65_7900_0002;

/// A tree as the mapping reads it, in preorder: node 0 is the root, node `i`'s subtree is the
/// index range `i..end(i)`, and its children follow one another at `i + 1`, `end(i + 1)`, ….
/// A node's *key* names its subtree: two nodes with equal keys (other than [`NO_KEY`]) and
/// equal sizes have equal subtrees, for what the mapping counts as equal. [`Tree`] is one; a
/// parsed page with its content hashes is another
/// ([`crate::site::rtdm_template::PageTree`]), read in place.
pub trait Labelled {
    fn len(&self) -> usize;
    fn label(&self, node: u32) -> u64;
    fn key(&self, node: u32) -> u64;
    /// One past the last node of `node`'s subtree.
    fn end(&self, node: u32) -> u32;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn size(&self, node: u32) -> u32 {
        self.end(node) - node
    }

    /// Whether a reader sees any text in `node`'s subtree. The removal pass does not look
    /// inside a page block that shows none ([`crate::site::embedding`]); a tree that cannot
    /// tell says it does.
    fn shows_text(&self, node: u32) -> bool {
        let _ = node;
        true
    }

    /// `node`'s children, in order.
    fn children(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        let end = self.end(node);
        let mut next = node + 1;
        std::iter::from_fn(move || {
            let child = next;
            (child < end).then(|| {
                next = self.end(child);
                child
            })
        })
    }
}

/// A labelled ordered tree in preorder, with its subtree keys ([`Labelled`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    labels: Vec<u64>,
    ends: Vec<u32>,
    keys: Vec<u64>,
}

/// A tree's labels, subtree ends and keys, as they cross workers ([`Tree::parts`],
/// [`Tree::from_parts`]).
pub type TreeParts = (Vec<u64>, Vec<u32>, Vec<u64>);

/// Why a list of labels and ends is not a tree in preorder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeError {
    LengthMismatch,
    /// `end(i)` is not after `i`, runs past its parent's end, or the root does not span all.
    BadEnd {
        node: u32,
    },
    TooLarge,
}

/// Checks that `labels` and `ends` are a tree in preorder: as many of each, fewer nodes than
/// [`NONE`], each node ending after itself and within its parent, the root spanning all.
fn check_preorder(labels: &[u64], ends: &[u32]) -> Result<(), TreeError> {
    if labels.len() != ends.len() {
        return Err(TreeError::LengthMismatch);
    }
    if labels.len() >= NONE as usize {
        return Err(TreeError::TooLarge);
    }
    let n = labels.len() as u32;
    // Each node must end after itself and within every open ancestor: a stack of open ends.
    let mut open: Vec<u32> = Vec::new();
    for (i, &end) in ends.iter().enumerate() {
        let i = i as u32;
        while open.last().is_some_and(|&e| e <= i) {
            open.pop();
        }
        let limit = open.last().copied().unwrap_or(n);
        if end <= i || end > limit || (i == 0 && end != n) {
            return Err(TreeError::BadEnd { node: i });
        }
        open.push(end);
    }
    Ok(())
}

impl Tree {
    /// A tree from its labels and subtree ends in preorder (checked). Its keys hash each
    /// node's label with its children's keys, bottom up: equal keys mean equal subtrees but
    /// for a 64-bit collision, which the mapping's size check makes harmless to memory and
    /// rarer still.
    pub fn new(labels: Vec<u64>, ends: Vec<u32>) -> Result<Tree, TreeError> {
        check_preorder(&labels, &ends)?;
        let mut tree = Tree {
            keys: vec![0u64; labels.len()],
            labels,
            ends,
        };
        let mut bytes: Vec<u8> = Vec::new();
        for node in (0..tree.len() as u32).rev() {
            bytes.clear();
            bytes.extend_from_slice(&tree.label(node).to_le_bytes());
            for kid in tree.children(node) {
                bytes.extend_from_slice(&tree.key(kid).to_le_bytes());
            }
            tree.keys[node as usize] = xxh3_64_with_seed(&bytes, KEY_SEED).min(NO_KEY - 1);
        }
        Ok(tree)
    }

    /// Any [`Labelled`] tree copied, keys included.
    pub fn copy_of(tree: &impl Labelled) -> Tree {
        let n = tree.len() as u32;
        Tree {
            labels: (0..n).map(|i| tree.label(i)).collect(),
            ends: (0..n).map(|i| tree.end(i)).collect(),
            keys: (0..n).map(|i| tree.key(i)).collect(),
        }
    }

    /// The labels, subtree ends and keys in preorder, as [`Tree::from_parts`] takes them back
    /// (to send a tree between workers).
    pub fn parts(&self) -> (&[u64], &[u32], &[u64]) {
        (&self.labels, &self.ends, &self.keys)
    }

    /// A tree from [`Tree::parts`], checked as [`Tree::new`] checks, with the keys as sent:
    /// they must name subtrees as [`Labelled`] says, or the mapping is not a least-cost one
    /// (it stays a mapping).
    pub fn from_parts((labels, ends, keys): TreeParts) -> Result<Tree, TreeError> {
        check_preorder(&labels, &ends)?;
        if keys.len() != labels.len() {
            return Err(TreeError::LengthMismatch);
        }
        Ok(Tree { labels, ends, keys })
    }

    pub fn to_parts(&self) -> TreeParts {
        (self.labels.clone(), self.ends.clone(), self.keys.clone())
    }

    /// The tree of the nodes `keep` marks, in their order, each under its nearest kept
    /// ancestor. `keep` must be closed under parents (a kept node's parent is kept) and keep
    /// the root unless it keeps nothing; the nodes an RTDM mapping maps to equal labels are.
    /// A node keeps its key when it keeps its whole subtree, and has [`NO_KEY`] otherwise.
    pub fn restrict(&self, keep: &[bool]) -> Tree {
        let mut labels = Vec::new();
        let mut ends = Vec::new();
        let mut keys = Vec::new();
        // Open kept ancestors: (old node, new index).
        let mut open: Vec<(u32, usize)> = Vec::new();
        for node in 0..=self.len() as u32 {
            while let Some(&(old, new)) = open.last() {
                if node < self.len() as u32 && self.end(old) > node {
                    break;
                }
                let end = labels.len();
                ends[new] = end as u32;
                if end - new != self.size(old) as usize {
                    keys[new] = NO_KEY;
                }
                open.pop();
            }
            if keep.get(node as usize) == Some(&true) {
                open.push((node, labels.len()));
                labels.push(self.label(node));
                ends.push(0);
                keys.push(self.key(node));
            }
        }
        Tree { labels, ends, keys }
    }
}

impl Labelled for Tree {
    fn len(&self) -> usize {
        self.labels.len()
    }

    fn label(&self, node: u32) -> u64 {
        self.labels[node as usize]
    }

    fn key(&self, node: u32) -> u64 {
        self.keys[node as usize]
    }

    fn end(&self, node: u32) -> u32 {
        self.ends[node as usize]
    }
}

/// How much work one mapping may do: the cells of all its alignment matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_cells: u64,
}

impl Default for Limits {
    /// 4 M cells, 32 MiB of backtracking. Two real pages of 5,000 nodes each take a few
    /// thousand; a page whose one element holds 2,000 children against another's takes 4 M.
    fn default() -> Self {
        Limits { max_cells: 1 << 22 }
    }
}

/// The mapping is bigger than [`Limits`] allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge {
    pub cells: u64,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tree mapping needs more than {} matrix cells",
            self.cells
        )
    }
}

impl std::error::Error for TooLarge {}

/// A least-cost restricted top-down mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// Replaced pairs plus nodes left out of either tree.
    pub cost: u64,
    /// For each node of the first tree, the node of the second it is mapped to, or [`NONE`].
    /// Inside two identical subtrees the k-th node maps to the k-th.
    pub image: Vec<u32>,
    /// For each node of the first tree, whether it is mapped to an equal node (not replaced):
    /// seed 002's `retrieveTemplate`, the part of the first tree the second shares. Closed
    /// under parents.
    pub equal: Vec<bool>,
    /// Matrix cells the mapping took (the work done).
    pub cells: u64,
}

/// Which mapping the programme computes: they differ only in what two nodes with different
/// labels may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// RTDM: they may be mapped, as a replaced pair without mapped descendants.
    Restricted,
    /// ETDM: they may not be mapped.
    Exact,
}

/// What two nodes, one of each tree, can be to each other in a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pair {
    /// Equal subtrees: mapped node for node.
    Identical,
    /// Equal labels, different subtrees: mapped, with their child lists aligned.
    Descend,
    /// Different labels, mapped as a replaced pair (RTDM only).
    Replace,
    /// Different labels, not mapped (ETDM).
    Apart,
}

/// How a cell of an alignment matrix was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The first tree's child is left out.
    Delete,
    /// The second tree's child is left out.
    Insert,
    /// The two children's subtrees are equal: mapped node for node at no cost.
    Identical,
    /// Different labels: the two children are mapped, their subtrees not.
    Replace,
    /// Equal labels: the two children are mapped and their own alignment is frame `.0`.
    Descend(u32),
    /// Equal labels, the first tree's child a leaf: the two children are mapped and the
    /// second's descendants left out, with no alignment to make.
    LeafFirst,
    /// Equal labels, the second tree's child a leaf: the two children are mapped and the
    /// first's descendants left out; the second's child is covered whole.
    LeafSecond,
}

/// A child as the alignment reads it, copied once per frame so that the matrix's inner loop
/// reads neither tree (the removal pass's alignments read them so too).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kid {
    pub node: u32,
    pub size: u32,
    pub label: u64,
    pub key: u64,
}

impl Kid {
    pub(crate) fn of(tree: &impl Labelled, node: u32) -> Kid {
        Kid {
            label: tree.label(node),
            ..Kid::unlabelled(tree, node)
        }
    }

    /// The child without its label, which a page reads from its element table: a cache miss
    /// that the identical ends of two lists, compared by key, are spared.
    pub(crate) fn unlabelled(tree: &impl Labelled, node: u32) -> Kid {
        Kid {
            node,
            size: tree.size(node),
            label: 0,
            key: tree.key(node),
        }
    }

    pub(crate) fn identical(&self, other: &Kid) -> bool {
        self.key == other.key && self.key != NO_KEY && self.size == other.size
    }

    fn pair(&self, other: &Kid, mode: Mode) -> Pair {
        if self.identical(other) {
            Pair::Identical
        } else if self.label == other.label {
            Pair::Descend
        } else if mode == Mode::Exact {
            Pair::Apart
        } else {
            Pair::Replace
        }
    }
}

/// The alignment of the child lists of two nodes with equal labels. Its children and its
/// backtracking matrix live in arenas shared by all frames of a mapping ([`Arenas`]), and its
/// two rows of costs are lent from a pool while it is being filled: a mapping makes a frame
/// for every pair of equal-labelled siblings it descends into, and allocating a few vectors
/// for each would be most of its time. The children both lists begin and end with identically
/// are paired outright; the matrix covers the middle.
///
/// Why pairing identical ends is safe: if a least-cost alignment pairs the first child `x` of
/// one list with a later `y′` of the other and leaves out the other's first child `y` (of `x`'s
/// size, being identical to it), pairing `x` with `y` and leaving `y′` out instead costs
/// `size(y′)` ≤ `|size(x) − size(y′)| + size(y)` ≤ what the alignment paid for those two; the
/// same holds when `x` is left out and `y` paired later, and leaving both out is worse than
/// pairing them at no cost. Ties may then go to another mapping of the same cost than the
/// full matrix would choose; the cost does not change (the brute-force tests check it).
struct Frame {
    a: u32,
    b: u32,
    /// Where its children start in [`Arenas::kids`]: the first tree's `all_a`, then the
    /// second's `all_b`.
    kids: usize,
    all_a: usize,
    all_b: usize,
    /// Identical children paired at the start and at the end of both lists.
    head: usize,
    tail: usize,
    /// The middle's lengths: the matrix is `(len_a + 1) × (len_b + 1)`.
    len_a: usize,
    len_b: usize,
    /// Where its steps start in [`Arenas::steps`], row-major; row 0 and column 0 included.
    steps: usize,
    /// Costs of the previous and the current row, while the frame is being filled.
    prev: Vec<u64>,
    cur: Vec<u64>,
    /// The next cell to fill.
    i: usize,
    j: usize,
    /// The child frame this frame waits on, for cell (`i`, `j`).
    waiting: Option<u32>,
    /// The alignment's cost, once done.
    cost: u64,
}

/// What the frames of one mapping share.
#[derive(Default)]
struct Arenas {
    /// The alignments, frame 0 the roots'.
    frames: Vec<Frame>,
    kids: Vec<Kid>,
    steps: Vec<Step>,
    /// Cost rows of finished frames, for the next frames to reuse.
    rows: Vec<Vec<u64>>,
}

impl Frame {
    /// The frame of `a` and `b`, or the cells it would take when those would pass `budget`:
    /// refused before its matrix is allocated, so that two elements of 100,000 children each
    /// cost their children and nothing more.
    fn new<A: Labelled, B: Labelled>(
        t1: &A,
        t2: &B,
        (a, b): (u32, u32),
        mode: Mode,
        arenas: &mut Arenas,
        budget: u64,
    ) -> Result<Frame, u64> {
        let kids = arenas.kids.len();
        arenas.kids.extend(t1.children(a).map(|n| Kid::of(t1, n)));
        let all_a = arenas.kids.len() - kids;
        arenas.kids.extend(t2.children(b).map(|n| Kid::of(t2, n)));
        let all_b = arenas.kids.len() - kids - all_a;
        let (list_a, list_b) = arenas.kids[kids..].split_at(all_a);
        let identical = |x: &Kid, y: &Kid| x.pair(y, mode) == Pair::Identical;
        let head = list_a
            .iter()
            .zip(list_b)
            .take_while(|(x, y)| identical(x, y))
            .count();
        let tail = list_a[head..]
            .iter()
            .rev()
            .zip(list_b[head..].iter().rev())
            .take_while(|(x, y)| identical(x, y))
            .count();
        let (len_a, len_b) = (all_a - head - tail, all_b - head - tail);
        let cells = (len_a as u64 + 1).saturating_mul(len_b as u64 + 1);
        if cells > budget {
            return Err(cells);
        }
        let width = len_b + 1;
        let steps = arenas.steps.len();
        arenas
            .steps
            .resize(steps + (len_a + 1) * width, Step::Delete);
        let row = |arenas: &mut Arenas| {
            let mut row = arenas.rows.pop().unwrap_or_default();
            row.clear();
            row.resize(width, 0);
            row
        };
        let mut cur = row(arenas);
        let mut prev = row(arenas);
        for j in 0..len_b {
            let kid = arenas.kids[kids + all_a + head + j];
            cur[j + 1] = cur[j] + u64::from(kid.size);
            arenas.steps[steps + j + 1] = Step::Insert;
        }
        prev.copy_from_slice(&cur);
        Ok(Frame {
            a,
            b,
            kids,
            all_a,
            all_b,
            head,
            tail,
            len_a,
            len_b,
            steps,
            prev,
            cur,
            i: 1,
            j: 0,
            waiting: None,
            cost: 0,
        })
    }

    fn cells(&self) -> u64 {
        ((self.len_a + 1) * (self.len_b + 1)) as u64
    }

    /// The first tree's `i`-th child of the middle (from 0).
    fn kid_a(&self, arenas: &Arenas, i: usize) -> Kid {
        arenas.kids[self.kids + self.head + i]
    }

    /// The second tree's `j`-th child of the middle (from 0).
    fn kid_b(&self, arenas: &Arenas, j: usize) -> Kid {
        arenas.kids[self.kids + self.all_a + self.head + j]
    }

    fn step_at(&self, i: usize, j: usize) -> usize {
        self.steps + i * (self.len_b + 1) + j
    }

    /// The alignment the frame chose, as (first tree's child or [`NONE`], second tree's child
    /// or [`NONE`], step), into `out` (cleared first), in no particular order.
    fn chosen(&self, arenas: &Arenas, out: &mut Vec<(u32, u32, Step)>) {
        out.clear();
        let list_a = &arenas.kids[self.kids..self.kids + self.all_a];
        let list_b = &arenas.kids[self.kids + self.all_a..self.kids + self.all_a + self.all_b];
        let ends = (0..self.head).chain(self.all_a - self.tail..self.all_a);
        let ends_b = (0..self.head).chain(self.all_b - self.tail..self.all_b);
        for (x, y) in ends.zip(ends_b) {
            out.push((list_a[x].node, list_b[y].node, Step::Identical));
        }
        let (mut i, mut j) = (self.len_a, self.len_b);
        while i > 0 || j > 0 {
            let step = arenas.steps[self.step_at(i, j)];
            match step {
                Step::Delete => {
                    out.push((self.kid_a(arenas, i - 1).node, NONE, step));
                    i -= 1;
                }
                Step::Insert => {
                    out.push((NONE, self.kid_b(arenas, j - 1).node, step));
                    j -= 1;
                }
                _ => {
                    let (ka, kb) = (self.kid_a(arenas, i - 1), self.kid_b(arenas, j - 1));
                    out.push((ka.node, kb.node, step));
                    i -= 1;
                    j -= 1;
                }
            }
        }
    }
}

/// What the programme leaves to read back: how the roots were paired, the frames and their
/// arenas, the cost and the work.
struct Solved {
    root: Step,
    arenas: Arenas,
    cost: u64,
    cells: u64,
}

/// A least-cost restricted top-down mapping of `t1` onto `t2`, or [`TooLarge`] when its
/// matrices would pass `limits` (the caller then treats the pair as not comparable).
pub fn map(t1: &Tree, t2: &Tree, limits: Limits) -> Result<Mapping, TooLarge> {
    let solved = solve(t1, t2, limits, Mode::Restricted)?;
    Ok(read_back(t1, solved))
}

/// A largest exact top-down mapping of `t1` onto `t2` (seed 004, Definition 1.3.4, with
/// label equality as the node equality): every mapped node's parent is mapped to the other's
/// parent and only equal labels are mapped. Its [`Mapping::cost`] is the nodes of both trees
/// left out, so the cost is least when the mapping is largest. [`TooLarge`] as for [`map`].
/// Roots with different labels map nothing.
pub fn map_exact(t1: &Tree, t2: &Tree, limits: Limits) -> Result<Mapping, TooLarge> {
    let solved = solve(t1, t2, limits, Mode::Exact)?;
    Ok(read_back(t1, solved))
}

/// The blocks of `t2` that a least-cost restricted top-down mapping covers from `t1`, as their
/// roots in preorder: the highest nodes of `t2` whose every node is mapped from a node of
/// `t1` with an equal label. With `t1` a site's template and `t2` one of its pages, these are
/// the template's blocks on the page (seed 002's removal at its most exact; the job removes
/// with [`crate::site::embedding`]), found without reading the parts of the page the mapping
/// pairs wholesale or leaves out.
pub fn covered_roots(t1: &Tree, t2: &impl Labelled, limits: Limits) -> Result<Vec<u32>, TooLarge> {
    Ok(roots_in_second(solve(t1, t2, limits, Mode::Restricted)?))
}

/// [`covered_roots`] under a largest exact top-down mapping ([`map_exact`]).
pub fn covered_roots_exact(
    t1: &Tree,
    t2: &impl Labelled,
    limits: Limits,
) -> Result<Vec<u32>, TooLarge> {
    Ok(roots_in_second(solve(t1, t2, limits, Mode::Exact)?))
}

fn solve<A: Labelled, B: Labelled>(
    t1: &A,
    t2: &B,
    limits: Limits,
    mode: Mode,
) -> Result<Solved, TooLarge> {
    let mut arenas = Arenas::default();
    if t1.is_empty() || t2.is_empty() {
        let cost = (t1.len() + t2.len()) as u64;
        return Ok(Solved {
            root: Step::Delete,
            arenas,
            cost,
            cells: 0,
        });
    }
    let (size1, size2) = (u64::from(t1.size(0)), u64::from(t2.size(0)));
    let (root, cost, cells) = match Kid::of(t1, 0).pair(&Kid::of(t2, 0), mode) {
        Pair::Identical => (Step::Identical, 0, 0),
        Pair::Replace => (Step::Replace, size1 + size2 - 1, 0),
        // Every mapped pair hangs from the roots' pair: without it nothing is mapped.
        Pair::Apart => (Step::Delete, size1 + size2, 0),
        Pair::Descend => {
            let cells = align(t1, t2, mode, limits, &mut arenas)?;
            (Step::Descend(0), arenas.frames[0].cost, cells)
        }
    };
    Ok(Solved {
        root,
        arenas,
        cost,
        cells,
    })
}

/// Fills the alignment frames into `arenas.frames` from the roots down (frame 0 is the roots'),
/// without recursion, and returns the cells filled. A frame's child frames come after it.
fn align<A: Labelled, B: Labelled>(
    t1: &A,
    t2: &B,
    mode: Mode,
    limits: Limits,
    arenas: &mut Arenas,
) -> Result<u64, TooLarge> {
    let root = Frame::new(t1, t2, (0, 0), mode, arenas, limits.max_cells)
        .map_err(|cells| TooLarge { cells })?;
    let mut cells = root.cells();
    let mut frames = vec![root];
    let mut stack = vec![0u32];
    'frames: while let Some(&top) = stack.last() {
        let f = top as usize;
        // A child frame just finished: its cost completes the waiting cell.
        let mut resumed = frames[f]
            .waiting
            .take()
            .map(|c| (c, frames[c as usize].cost));
        loop {
            let frame = &mut frames[f];
            let width = frame.len_b + 1;
            if frame.j == width {
                frame.i += 1;
                frame.j = 0;
                std::mem::swap(&mut frame.prev, &mut frame.cur);
            }
            if frame.i > frame.len_a {
                frame.cost = frame.prev[width - 1];
                // Its rows go back to the pool; the steps stay for the read-back.
                arenas.rows.push(std::mem::take(&mut frame.prev));
                arenas.rows.push(std::mem::take(&mut frame.cur));
                stack.pop();
                continue 'frames;
            }
            let (i, j) = (frame.i, frame.j);
            let ka = frame.kid_a(arenas, i - 1);
            let size_a = u64::from(ka.size);
            if j == 0 {
                frame.cur[0] = frame.prev[0] + size_a;
                arenas.steps[frame.step_at(i, 0)] = Step::Delete;
                frame.j = 1;
                continue;
            }
            let kb = frame.kid_b(arenas, j - 1);
            let size_b = u64::from(kb.size);
            let delete = frame.prev[j] + size_a;
            let insert = frame.cur[j - 1] + size_b;
            let diagonal = frame.prev[j - 1];
            let paired = match (resumed.take(), ka.pair(&kb, mode)) {
                (Some((child, cost)), _) => Some((diagonal + cost, Step::Descend(child))),
                (None, Pair::Identical) => Some((diagonal, Step::Identical)),
                (None, Pair::Replace) => Some((diagonal + size_a + size_b - 1, Step::Replace)),
                (None, Pair::Apart) => None,
                // A leaf against a subtree with the same root label: the roots mapped, the
                // rest left out. Most pairs a page's middle asks about are such, a template's
                // emptied link against each of the page's links.
                (None, Pair::Descend) if size_b == 1 => {
                    Some((diagonal + size_a - 1, Step::LeafSecond))
                }
                (None, Pair::Descend) if size_a == 1 => {
                    Some((diagonal + size_b - 1, Step::LeafFirst))
                }
                (None, Pair::Descend) => {
                    // Equal labels: descend unless even the best case loses. Any mapping of
                    // the two subtrees, restricted or exact, maps at most min(size_a, size_b)
                    // pairs and leaves the rest out, each left-out node costing 1, so it costs
                    // at least |size_a − size_b|: a valid lower bound in both modes.
                    let bound = diagonal + size_a.abs_diff(size_b);
                    if bound > delete.min(insert) {
                        None
                    } else {
                        let budget = limits.max_cells - cells;
                        let child = Frame::new(t1, t2, (ka.node, kb.node), mode, arenas, budget)
                            .map_err(|more| TooLarge {
                                cells: cells + more,
                            })?;
                        cells += child.cells();
                        let c = frames.len() as u32;
                        frames[f].waiting = Some(c);
                        frames.push(child);
                        stack.push(c);
                        continue 'frames;
                    }
                }
            };
            let (cost, step) = match paired {
                Some((cost, step)) if cost <= delete && cost <= insert => (cost, step),
                _ if delete <= insert => (delete, Step::Delete),
                _ => (insert, Step::Insert),
            };
            frame.cur[j] = cost;
            arenas.steps[frame.step_at(i, j)] = step;
            frame.j += 1;
        }
    }
    arenas.frames = frames;
    Ok(cells)
}

/// The mapping the frames chose, from the roots' step down.
fn read_back(t1: &Tree, solved: Solved) -> Mapping {
    let Solved {
        root,
        arenas,
        cost,
        cells,
    } = solved;
    let frames = &arenas.frames;
    let mut image = vec![NONE; t1.len()];
    let mut equal = vec![false; t1.len()];
    let mut chosen = Vec::new();
    let mut pending = if t1.is_empty() {
        Vec::new()
    } else {
        vec![(0, 0, root)]
    };
    while let Some((a, b, step)) = pending.pop() {
        match step {
            Step::Delete | Step::Insert => {}
            Step::Identical => {
                for k in 0..t1.size(a) {
                    image[(a + k) as usize] = b + k;
                    equal[(a + k) as usize] = true;
                }
            }
            Step::Replace => image[a as usize] = b,
            Step::LeafFirst | Step::LeafSecond => {
                image[a as usize] = b;
                equal[a as usize] = true;
            }
            Step::Descend(f) => {
                image[a as usize] = b;
                equal[a as usize] = true;
                let frame = &frames[f as usize];
                debug_assert_eq!((frame.a, frame.b), (a, b));
                frame.chosen(&arenas, &mut chosen);
                pending.extend(
                    chosen
                        .iter()
                        .filter(|&&(ka, kb, _)| ka != NONE && kb != NONE),
                );
            }
        }
    }
    Mapping {
        cost,
        image,
        equal,
        cells,
    }
}

/// The roots of the second tree's wholly covered subtrees ([`covered_roots`]): a pair of
/// identical subtrees covers the second's whole; a descended pair covers its node, and the
/// whole subtree when every child of the second tree's node is covered whole in turn.
fn roots_in_second(solved: Solved) -> Vec<u32> {
    let Solved { root, arenas, .. } = solved;
    let frames = &arenas.frames;
    match root {
        Step::Identical => return vec![0],
        Step::Descend(_) => {}
        _ => return Vec::new(),
    }
    // The frames the mapping chose, parents before children; most frames a mapping fills
    // are pairs it then did not choose.
    let mut chosen = Vec::new();
    let mut order = vec![0u32];
    let mut next = 0;
    while let Some(&f) = order.get(next) {
        frames[f as usize].chosen(&arenas, &mut chosen);
        order.extend(chosen.iter().filter_map(|&(_, _, step)| match step {
            Step::Descend(c) => Some(c),
            _ => None,
        }));
        next += 1;
    }
    let mut whole = vec![false; frames.len()];
    for &f in order.iter().rev() {
        frames[f as usize].chosen(&arenas, &mut chosen);
        whole[f as usize] = chosen.iter().all(|&(_, _, step)| match step {
            Step::Delete | Step::Identical | Step::LeafSecond => true,
            Step::Descend(c) => whole[c as usize],
            Step::Insert | Step::Replace | Step::LeafFirst => false,
        });
    }
    let mut roots = Vec::new();
    let mut pending = vec![0u32];
    if whole[0] {
        roots.push(0);
        pending.clear();
    }
    while let Some(f) = pending.pop() {
        frames[f as usize].chosen(&arenas, &mut chosen);
        for &(_, kb, step) in &chosen {
            match step {
                Step::Identical | Step::LeafSecond => roots.push(kb),
                Step::Descend(c) if whole[c as usize] => roots.push(kb),
                Step::Descend(c) => pending.push(c),
                _ => {}
            }
        }
    }
    roots.sort_unstable();
    roots
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::xorshift;

    /// A tree from a bracket string: `a(b c(d))` is a root `a` with children `b` and `c`,
    /// `c` with child `d`. Labels are the letters' codes.
    pub(crate) fn parse(s: &str) -> Tree {
        let mut labels = Vec::new();
        let mut ends = Vec::new();
        let mut open = Vec::new();
        let mut last = None;
        for c in s.chars() {
            match c {
                '(' => open.push(last.expect("a label before '('")),
                ')' => {
                    let node: usize = open.pop().expect("balanced");
                    ends[node] = labels.len() as u32;
                }
                ' ' => {}
                _ => {
                    last = Some(labels.len());
                    labels.push(c as u64);
                    ends.push(labels.len() as u32);
                }
            }
        }
        Tree::new(labels, ends).expect("a tree")
    }

    pub(crate) fn random_tree(state: &mut u64, max_nodes: u64, alphabet: u64) -> Tree {
        let n = 1 + (xorshift(state) % max_nodes) as usize;
        // Parent of node i is a random earlier node on the rightmost path: preorder holds.
        let mut parents = vec![NONE; n];
        let mut path = vec![0usize];
        for (i, parent) in parents.iter_mut().enumerate().skip(1) {
            let keep = 1 + (xorshift(state) % path.len() as u64) as usize;
            path.truncate(keep);
            *parent = *path.last().expect("root stays") as u32;
            path.push(i);
        }
        let mut ends: Vec<u32> = (1..=n as u32).collect();
        for i in (1..n).rev() {
            let p = parents[i] as usize;
            ends[p] = ends[p].max(ends[i]);
        }
        let labels = (0..n).map(|_| xorshift(state) % alphabet).collect();
        Tree::new(labels, ends).expect("preorder by construction")
    }

    /// `rounds` pairs of random trees of up to `max_nodes` nodes, with their round. Small
    /// alphabets (2 to 4 labels) make equal labels and identical subtrees common.
    pub(crate) fn random_pairs(
        seed: u64,
        rounds: u64,
        max_nodes: u64,
    ) -> impl Iterator<Item = (u64, Tree, Tree)> {
        let mut state = seed;
        (0..rounds).map(move |round| {
            let alphabet = 2 + round % 3;
            let t1 = random_tree(&mut state, max_nodes, alphabet);
            let t2 = random_tree(&mut state, max_nodes, alphabet);
            (round, t1, t2)
        })
    }

    pub(crate) fn is_ancestor(t: &Tree, a: u32, d: u32) -> bool {
        a < d && d < t.end(a)
    }

    fn parent(t: &Tree, node: u32) -> u32 {
        (0..node)
            .rev()
            .find(|&p| is_ancestor(t, p, node))
            .unwrap_or(NONE)
    }

    /// Whether adding pair (a, b) to `pairs` keeps Tai's conditions and the top-down and
    /// restricted ones, checked pair against pair from the definitions, not from the algorithm.
    pub(crate) fn compatible(t1: &Tree, t2: &Tree, pairs: &[(u32, u32)], a: u32, b: u32) -> bool {
        let (pa, pb) = (parent(t1, a), parent(t2, b));
        if (pa == NONE) != (pb == NONE) {
            return false;
        }
        if pa != NONE && !pairs.contains(&(pa, pb)) {
            return false;
        }
        pairs.iter().all(|&(x, y)| {
            let one_to_one = (x == a) == (y == b);
            let ancestry = is_ancestor(t1, x, a) == is_ancestor(t2, y, b)
                && is_ancestor(t1, a, x) == is_ancestor(t2, b, y);
            let left = |t: &Tree, p: u32, q: u32| p < q && !is_ancestor(t, p, q);
            let order = left(t1, x, a) == left(t2, y, b) && left(t1, a, x) == left(t2, b, y);
            // No replaced pair has a mapped descendant.
            let replaced_above =
                |p: (u32, u32), d: u32| t1.label(p.0) != t2.label(p.1) && is_ancestor(t1, p.0, d);
            let restricted = !replaced_above((x, y), a) && !replaced_above((a, b), x);
            one_to_one && ancestry && order && restricted
        })
    }

    fn cost_of(t1: &Tree, t2: &Tree, pairs: &[(u32, u32)]) -> u64 {
        let replaced = pairs
            .iter()
            .filter(|&&(a, b)| t1.label(a) != t2.label(b))
            .count();
        (replaced + t1.len() - pairs.len() + t2.len() - pairs.len()) as u64
    }

    /// The least cost over every restricted top-down mapping, enumerated node by node of `t1`
    /// in preorder (each unmapped or mapped to any node of `t2` that keeps the definitions).
    fn brute_force(t1: &Tree, t2: &Tree) -> u64 {
        brute_force_in(t1, t2, Mode::Restricted)
    }

    /// [`brute_force`] over the mappings `mode` allows: in exact mode, only pairs of equal
    /// labels (on top of Tai's conditions and the top-down one).
    fn brute_force_in(t1: &Tree, t2: &Tree, mode: Mode) -> u64 {
        fn go(
            t1: &Tree,
            t2: &Tree,
            mode: Mode,
            node: u32,
            pairs: &mut Vec<(u32, u32)>,
            best: &mut u64,
        ) {
            if node as usize == t1.len() {
                *best = (*best).min(cost_of(t1, t2, pairs));
                return;
            }
            go(t1, t2, mode, node + 1, pairs, best);
            for b in 0..t2.len() as u32 {
                let allowed = mode == Mode::Restricted || t1.label(node) == t2.label(b);
                if allowed && compatible(t1, t2, pairs, node, b) {
                    pairs.push((node, b));
                    go(t1, t2, mode, node + 1, pairs, best);
                    pairs.pop();
                }
            }
        }
        let mut best = u64::MAX;
        go(t1, t2, mode, 0, &mut Vec::new(), &mut best);
        best
    }

    fn pairs_of(mapping: &Mapping) -> Vec<(u32, u32)> {
        (0..mapping.image.len() as u32)
            .filter(|&a| mapping.image[a as usize] != NONE)
            .map(|a| (a, mapping.image[a as usize]))
            .collect()
    }

    /// Asserts that `pairs`, added one by one, keep [`compatible`]'s conditions.
    fn assert_is_mapping(t1: &Tree, t2: &Tree, pairs: &[(u32, u32)], round: u64) {
        for (k, &(a, b)) in pairs.iter().enumerate() {
            assert!(compatible(t1, t2, &pairs[..k], a, b), "round {round}");
        }
    }

    #[test]
    fn cost_equals_brute_force_on_random_trees() {
        // How often the cases that need the matrices came up: equal subtrees below the root,
        // pairs with different labels, children left out.
        let (mut descended, mut identical_below, mut replaced, mut left_out) = (0, 0, 0, 0);
        for (round, t1, t2) in random_pairs(0x2545_f491_4f6c_dd1d, 12_000, 8) {
            let mapping = map(&t1, &t2, Limits::default()).expect("small");
            assert_eq!(
                mapping.cost,
                brute_force(&t1, &t2),
                "round {round}: {t1:?} onto {t2:?}"
            );
            // The mapping returned is itself a restricted top-down mapping of that cost.
            let pairs = pairs_of(&mapping);
            assert_is_mapping(&t1, &t2, &pairs, round);
            assert_eq!(cost_of(&t1, &t2, &pairs), mapping.cost, "round {round}");
            descended += usize::from(mapping.cells > 0);
            identical_below +=
                usize::from(pairs.iter().any(|&(a, b)| a > 0 && t1.key(a) == t2.key(b)));
            replaced += usize::from(pairs.iter().any(|&(a, b)| t1.label(a) != t2.label(b)));
            left_out += usize::from(pairs.len() < t1.len().max(t2.len()));
        }
        for (case, count) in [
            ("descended", descended),
            ("identical below the root", identical_below),
            ("replaced", replaced),
            ("left out", left_out),
        ] {
            assert!(count > 1_000, "{case}: only {count} of 12,000 rounds");
        }
    }

    #[test]
    fn exact_mapping_equals_brute_force_on_random_trees() {
        // How often the exact mapping left a node out that RTDM maps by replacement, and how
        // often it mapped more equal pairs than RTDM's least cost does.
        let (mut refused_replacement, mut more_equal) = (0, 0);
        for (round, t1, t2) in random_pairs(0x9e37_79b9_7f4a_7c15, 10_000, 8) {
            let exact = map_exact(&t1, &t2, Limits::default()).expect("small");
            assert_eq!(
                exact.cost,
                brute_force_in(&t1, &t2, Mode::Exact),
                "round {round}: {t1:?} onto {t2:?}"
            );
            // The mapping returned is an exact top-down mapping of that size.
            let pairs = pairs_of(&exact);
            assert_is_mapping(&t1, &t2, &pairs, round);
            for &(a, b) in &pairs {
                assert_eq!(t1.label(a), t2.label(b), "round {round}");
            }
            let mapped = pairs.len() as u64;
            assert_eq!(exact.cost, (t1.len() + t2.len()) as u64 - 2 * mapped);
            assert_eq!(exact.equal, {
                let mut v = vec![false; t1.len()];
                pairs.iter().for_each(|&(a, _)| v[a as usize] = true);
                v
            });
            // RTDM's equal pairs are themselves an exact top-down mapping (a replaced pair
            // has no mapped descendants, so an equal pair's parents are equal too): the
            // largest exact mapping is never smaller.
            let restricted = map(&t1, &t2, Limits::default()).expect("small");
            let equal = &restricted.equal;
            let equal = equal.iter().filter(|&&e| e).count() as u64;
            assert!(mapped >= equal, "round {round}");
            more_equal += usize::from(mapped > equal);
            refused_replacement += usize::from(
                pairs_of(&restricted)
                    .iter()
                    .any(|&(a, b)| t1.label(a) != t2.label(b)),
            );
        }
        assert!(refused_replacement > 1_000, "{refused_replacement}");
        assert!(more_equal > 100, "{more_equal}");
    }

    /// The highest nodes of `t2` whose every node `mapping` maps from an equal node, from the
    /// definition: what [`covered_roots`] must find.
    fn roots_by_definition(t1: &Tree, t2: &Tree, mapping: &Mapping) -> Vec<u32> {
        let mut paired = vec![false; t2.len()];
        for a in 0..t1.len() {
            if mapping.equal[a] {
                paired[mapping.image[a] as usize] = true;
            }
        }
        wholly_paired(t2, &paired)
    }

    /// The highest nodes of `t` whose every node `paired` marks, from the definition.
    pub(crate) fn wholly_paired(t: &Tree, paired: &[bool]) -> Vec<u32> {
        let mut whole = paired.to_vec();
        for node in (0..t.len() as u32).rev() {
            if whole[node as usize] {
                whole[node as usize] = t.children(node).all(|c| whole[c as usize]);
            }
        }
        (0..t.len() as u32)
            .filter(|&n| whole[n as usize])
            .filter(|&n| !(0..n).any(|p| whole[p as usize] && is_ancestor(t, p, n)))
            .collect()
    }

    #[test]
    fn covered_roots_are_the_mappings_wholly_covered_blocks() {
        let (mut below_root, mut several) = (0, 0);
        for (round, t1, t2) in random_pairs(0x1234_5678_9abc_def1, 10_000, 10) {
            let limits = Limits::default();
            let restricted = (covered_roots(&t1, &t2, limits), map(&t1, &t2, limits));
            let exact = (
                covered_roots_exact(&t1, &t2, limits),
                map_exact(&t1, &t2, limits),
            );
            for (roots, mapping) in [restricted, exact] {
                let (roots, mapping) = (roots.unwrap(), mapping.unwrap());
                assert_eq!(
                    roots,
                    roots_by_definition(&t1, &t2, &mapping),
                    "round {round}"
                );
                below_root += usize::from(roots.first().is_some_and(|&r| r > 0));
                several += usize::from(roots.len() > 1);
            }
        }
        assert!(
            below_root > 2_000 && several > 600,
            "{below_root} {several}"
        );
    }

    #[test]
    fn identical_ends_of_child_lists_need_no_matrix() {
        // A header, a menu and a footer shared; only the middle block differs.
        let t1 = parse("r(h n m(x) f)");
        let t2 = parse("r(h n m(y z) f)");
        let mapping = map(&t1, &t2, Limits::default()).unwrap();
        assert_eq!(mapping.cost, 1 + 1);
        // The roots' matrix is m against m (2 × 2), m's is x against y z (2 × 3); x is
        // replaced by z (read back from the last cell, ties go to pairing) and y left out.
        assert_eq!(mapping.cells, 4 + 6);
        assert_eq!(mapping.image, vec![0, 1, 2, 3, 5, 6]);
        assert_eq!(
            covered_roots(&t1, &t2, Limits::default()).unwrap(),
            [1, 2, 6]
        );
    }

    #[test]
    fn restricted_trees_keep_the_keys_of_whole_subtrees_only() {
        let t = parse("a(b(c d) e(f))");
        let kept = t.restrict(&[true, true, false, true, true, true]);
        assert_eq!(kept.len(), 5);
        // a and b lost nodes; d and e(f) are whole.
        assert_eq!(kept.key(0), NO_KEY);
        assert_eq!(kept.key(1), NO_KEY);
        assert_eq!(kept.key(2), t.key(3));
        assert_eq!(kept.key(3), t.key(4));
        assert_eq!(kept.key(4), t.key(5));
        // A node that lost part of its subtree is identical to nothing, not even its copy.
        let mapping = map(&kept, &kept.clone(), Limits::default()).unwrap();
        assert_eq!(mapping.cost, 0);
        assert!(mapping.cells > 0);
    }

    #[test]
    fn exact_mapping_does_not_replace() {
        // Seed 004's Figures 1.5 and 1.6: RTDM maps the `t`able onto the `d`iv as a replaced
        // node (their rows then cannot be mapped); ETDM leaves both out and maps the rest.
        let t1 = parse("r(t(a b) c)");
        let t2 = parse("r(d(a b) c)");
        let rtdm = map(&t1, &t2, Limits::default()).unwrap();
        assert_eq!(rtdm.image, vec![0, 1, NONE, NONE, 4]);
        assert_eq!(rtdm.cost, 1 + 2 + 2);
        let etdm = map_exact(&t1, &t2, Limits::default()).unwrap();
        assert_eq!(etdm.image, vec![0, NONE, NONE, NONE, 4]);
        assert_eq!(etdm.cost, 3 + 3);
        // Two replacements cost as much as leaving two nodes out, and ties go to pairing:
        // RTDM replaces x by y and y by z, losing the `y` both trees have; ETDM keeps it.
        let t1 = parse("r(x y)");
        let t2 = parse("r(y z)");
        let rtdm = map(&t1, &t2, Limits::default()).unwrap();
        assert_eq!(rtdm.image, vec![0, 1, 2]);
        let etdm = map_exact(&t1, &t2, Limits::default()).unwrap();
        assert_eq!(etdm.image, vec![0, NONE, 1]);
        // Roots with different labels leave nothing to map.
        let etdm = map_exact(&parse("a(b)"), &parse("c(b)"), Limits::default()).unwrap();
        assert_eq!((etdm.image, etdm.cost), (vec![NONE, NONE], 4));
    }

    #[test]
    fn a_replaced_node_takes_its_subtree_with_it() {
        // Seed 002's Figure 2(b): `c` and `x` differ, so `d` under them cannot be mapped even
        // though it is on both sides; a general top-down mapping would map it.
        let t1 = parse("a(b c(d))");
        let t2 = parse("a(b x(d))");
        let mapping = map(&t1, &t2, Limits::default()).unwrap();
        assert_eq!(mapping.cost, 1 + 1 + 1);
        assert_eq!(mapping.image, vec![0, 1, 2, NONE]);
        assert_eq!(mapping.equal, vec![true, true, false, false]);
    }

    #[test]
    fn identical_trees_map_node_for_node_at_no_cost() {
        let t = parse("h(b(u(l l l) d(p p)) f)");
        let mapping = map(&t, &t, Limits::default()).unwrap();
        assert_eq!(mapping.cost, 0);
        assert_eq!(mapping.image, (0..t.len() as u32).collect::<Vec<_>>());
        assert_eq!(mapping.cells, 0, "identical roots need no matrix");
    }

    #[test]
    fn children_are_aligned_in_order() {
        // The second page has an extra banner before the shared menu and a different body.
        let t1 = parse("r(m(x y) c(p))");
        let t2 = parse("r(z m(x y) c(q q))");
        let mapping = map(&t1, &t2, Limits::default()).unwrap();
        // z inserted; m identical; c mapped, p replaced by one q and the other q inserted.
        // Either q costs the same; the matrix is read back from its last cell and ties go
        // to pairing, so p pairs with the last.
        assert_eq!(mapping.cost, 1 + 1 + 1);
        assert_eq!(mapping.image, vec![0, 2, 3, 4, 5, 7]);
    }

    #[test]
    fn restrict_keeps_the_marked_nodes_in_shape() {
        let t = parse("a(b(c d) e(f))");
        let kept = t.restrict(&[true, true, false, true, true, false]);
        assert_eq!(kept.parts().0, parse("a(b(d) e)").parts().0);
        assert_eq!(kept.parts().1, parse("a(b(d) e)").parts().1);
        assert!(t.restrict(&[false; 6]).is_empty());
    }

    #[test]
    fn malformed_preorders_are_refused() {
        assert_eq!(
            Tree::new(vec![1, 2], vec![1, 2]),
            Err(TreeError::BadEnd { node: 0 })
        );
        assert_eq!(
            Tree::new(vec![1, 2, 3], vec![3, 3, 2]),
            Err(TreeError::BadEnd { node: 2 })
        );
        assert_eq!(
            Tree::new(vec![1], vec![1, 1]),
            Err(TreeError::LengthMismatch)
        );
    }

    #[test]
    fn deep_trees_map_without_recursion() {
        // Two chains 100,000 deep differing only at the bottom: one frame per level.
        let depth = 100_000u32;
        let chain = |leaf: u64| {
            let mut labels = vec![7u64; depth as usize];
            labels.push(leaf);
            let ends = vec![depth + 1; depth as usize + 1];
            Tree::new(labels, ends).unwrap()
        };
        let mapping = map(&chain(1), &chain(2), Limits::default()).unwrap();
        assert_eq!(mapping.cost, 1);
        assert!(mapping.image.iter().all(|&b| b != NONE));
    }

    /// A root with `children` leaves labelled `label` and `label + 1` in turn.
    fn wide(children: u32, label: u64) -> Tree {
        let n = children + 1;
        let mut labels = vec![0u64];
        labels.extend((1..n).map(|i| label + u64::from(i % 2)));
        let mut ends = vec![n];
        ends.extend(2..=n);
        Tree::new(labels, ends).unwrap()
    }

    #[test]
    fn a_huge_pair_is_refused_before_its_matrix_is_made() {
        // 200,000 children against 200,000: 4·10¹⁰ cells, 320 GB of matrix if it were made.
        let (t1, t2) = (wide(200_000, 10), wide(200_000, 20));
        let err = map(&t1, &t2, Limits::default()).unwrap_err();
        assert_eq!(err.cells, 200_001 * 200_001);
        assert!(covered_roots_exact(&t1, &t2, Limits::default()).is_err());
    }

    #[test]
    fn work_beyond_the_limit_is_refused() {
        let (t1, t2) = (wide(300, 10), wide(300, 20));
        let err = map(&t1, &t2, Limits { max_cells: 10_000 }).unwrap_err();
        assert!(err.cells > 10_000);
        assert!(map(&t1, &t2, Limits::default()).is_ok());
    }
}
