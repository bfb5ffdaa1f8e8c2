//! The restricted top-down mapping between two labelled ordered trees (RTDM, seed 002 §3–4),
//! computed with the record of how (RTDM-TD), so that the mapping itself can be read back.
//!
//! A *mapping* pairs nodes of two trees one to one, keeping ancestors and sibling order
//! (Tai's definition). It is *top-down* when every mapped node's parent is mapped to the
//! other's parent, and *restricted* when two nodes mapped with different labels have no mapped
//! descendants: a node can only be replaced together with its whole subtree. Its cost counts a
//! replaced pair, a node of the first tree left out and a node of the second left out as 1
//! each. [`map`] finds a mapping of least cost; seed 002 reads a site's template off it (the
//! nodes mapped to equal labels: [`crate::site::rtdm_template`]).
//!
//! With the roots mapped, the best mapping of two subtrees with equal root labels is an
//! alignment of their two child lists, where leaving a child out costs its subtree's size and
//! pairing two children costs their own mapping; pairing children with different labels costs
//! both sizes less one. That is a dynamic programme over child lists, one matrix per pair of
//! equal-labelled nodes the alignment asks about, and at most `n₁·n₂` cells in all. Two short
//! cuts keep the typical case near linear, as RTDM's authors do:
//!
//! - **Identical subtrees** cost 0 without descending: a linear pre-pass puts the nodes of
//!   both trees into exact equivalence classes of their subtrees ([`classes`]).
//! - **A pair that cannot win** is not descended into: no mapping of two subtrees costs less
//!   than the difference of their sizes, so when that bound already loses to leaving one of
//!   them out, its matrix is never built.
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

use crate::FastMap;

/// No node.
pub const NONE: u32 = u32::MAX;

/// A labelled ordered tree in preorder: node 0 is the root, node `i`'s subtree is the index
/// range `i..end(i)`, and its children follow one another at `i + 1`, `end(i + 1)`, ….
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    labels: Vec<u64>,
    ends: Vec<u32>,
}

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

impl Tree {
    /// A tree from its labels and subtree ends in preorder (checked).
    pub fn new(labels: Vec<u64>, ends: Vec<u32>) -> Result<Tree, TreeError> {
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
        Ok(Tree { labels, ends })
    }

    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// The labels and subtree ends in preorder, as [`Tree::new`] takes them back (to send a
    /// tree between workers).
    pub fn parts(&self) -> (&[u64], &[u32]) {
        (&self.labels, &self.ends)
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    pub fn label(&self, node: u32) -> u64 {
        self.labels[node as usize]
    }

    /// One past the last node of `node`'s subtree.
    pub fn end(&self, node: u32) -> u32 {
        self.ends[node as usize]
    }

    pub fn size(&self, node: u32) -> u32 {
        self.ends[node as usize] - node
    }

    pub fn children(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
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

    /// The tree of the nodes `keep` marks, in their order, each under its nearest kept
    /// ancestor. `keep` must be closed under parents (a kept node's parent is kept) and keep
    /// the root unless it keeps nothing; the nodes an RTDM mapping maps to equal labels are.
    pub fn restrict(&self, keep: &[bool]) -> Tree {
        let mut labels = Vec::new();
        let mut ends = Vec::new();
        // Open kept ancestors: (old end, new index).
        let mut open: Vec<(u32, usize)> = Vec::new();
        for node in 0..self.len() as u32 {
            while let Some(&(end, new)) = open.last() {
                if end > node {
                    break;
                }
                ends[new] = labels.len() as u32;
                open.pop();
            }
            if keep[node as usize] {
                open.push((self.end(node), labels.len()));
                labels.push(self.label(node));
                ends.push(0);
            }
        }
        for (_, new) in open {
            ends[new] = labels.len() as u32;
        }
        Tree { labels, ends }
    }
}

/// Exact equivalence classes of the subtrees of two trees: two nodes share a class when their
/// subtrees are equal (same labels, same shape), whichever tree each is in. One bottom-up pass
/// over each tree, interning (label, children's classes).
pub fn classes(t1: &Tree, t2: &Tree) -> (Vec<u32>, Vec<u32>) {
    let mut interned: FastMap<Vec<u64>, u32> = FastMap::default();
    let mut key = Vec::new();
    let mut of = |tree: &Tree| {
        let mut class = vec![0u32; tree.len()];
        for node in (0..tree.len() as u32).rev() {
            key.clear();
            key.push(tree.label(node));
            key.extend(tree.children(node).map(|c| u64::from(class[c as usize])));
            let next = interned.len() as u32;
            class[node as usize] = *interned.entry(key.clone()).or_insert(next);
        }
        class
    };
    let c1 = of(t1);
    let c2 = of(t2);
    (c1, c2)
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
    pub image: Vec<u32>,
    /// Matrix cells the mapping took (the work done).
    pub cells: u64,
}

impl Mapping {
    /// The nodes of the first tree mapped to a node with the same label: seed 002's
    /// `retrieveTemplate`, the part of the first tree the second shares. Closed under parents.
    pub fn equal_in_first(&self, t1: &Tree, t2: &Tree) -> Vec<bool> {
        (0..t1.len())
            .map(|a| {
                let b = self.image[a];
                b != NONE && t1.labels[a] == t2.label(b)
            })
            .collect()
    }
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
}

/// The alignment of the child lists of two nodes with equal labels. Its children and its
/// backtracking matrix live in arenas shared by all frames of a mapping ([`Arenas`]), and its
/// two rows of costs are lent from a pool while it is being filled: a mapping makes a frame
/// for every pair of equal-labelled siblings it descends into, and a few vectors each were
/// most of the removal pass's time.
struct Frame {
    a: u32,
    b: u32,
    /// Where its children start in [`Arenas::kids`]: the first tree's `len_a`, then the
    /// second's `len_b`.
    kids: usize,
    len_a: usize,
    len_b: usize,
    /// Where its `(len_a + 1) × (len_b + 1)` steps start in [`Arenas::steps`], row-major; row 0
    /// and column 0 included.
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
    kids: Vec<u32>,
    steps: Vec<Step>,
    /// Cost rows of finished frames, for the next frames to reuse.
    rows: Vec<Vec<u64>>,
}

impl Frame {
    fn new(t1: &Tree, t2: &Tree, (a, b): (u32, u32), arenas: &mut Arenas) -> Frame {
        let kids = arenas.kids.len();
        arenas.kids.extend(t1.children(a));
        let len_a = arenas.kids.len() - kids;
        arenas.kids.extend(t2.children(b));
        let len_b = arenas.kids.len() - kids - len_a;
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
            let kid = arenas.kids[kids + len_a + j];
            cur[j + 1] = cur[j] + u64::from(t2.size(kid));
            arenas.steps[steps + j + 1] = Step::Insert;
        }
        prev.copy_from_slice(&cur);
        Frame {
            a,
            b,
            kids,
            len_a,
            len_b,
            steps,
            prev,
            cur,
            i: 1,
            j: 0,
            waiting: None,
            cost: 0,
        }
    }

    fn cells(&self) -> u64 {
        ((self.len_a + 1) * (self.len_b + 1)) as u64
    }

    fn kid_a(&self, arenas: &Arenas, i: usize) -> u32 {
        arenas.kids[self.kids + i]
    }

    fn kid_b(&self, arenas: &Arenas, j: usize) -> u32 {
        arenas.kids[self.kids + self.len_a + j]
    }

    fn step_at(&self, i: usize, j: usize) -> usize {
        self.steps + i * (self.len_b + 1) + j
    }
}

/// A least-cost restricted top-down mapping of `t1` onto `t2`, or [`TooLarge`] when its
/// matrices would pass `limits` (the caller then treats the pair as not comparable).
pub fn map(t1: &Tree, t2: &Tree, limits: Limits) -> Result<Mapping, TooLarge> {
    map_in(t1, t2, limits, Mode::Restricted)
}

/// A largest exact top-down mapping of `t1` onto `t2` (seed 004, Definition 1.3.4, with
/// label equality as the node equality): every mapped node's parent is mapped to the other's
/// parent and only equal labels are mapped. Its [`Mapping::cost`] is the nodes of both trees
/// left out, so the cost is least when the mapping is largest. [`TooLarge`] as for [`map`].
/// Roots with different labels map nothing.
pub fn map_exact(t1: &Tree, t2: &Tree, limits: Limits) -> Result<Mapping, TooLarge> {
    map_in(t1, t2, limits, Mode::Exact)
}

fn map_in(t1: &Tree, t2: &Tree, limits: Limits, mode: Mode) -> Result<Mapping, TooLarge> {
    let mut image = vec![NONE; t1.len()];
    if t1.is_empty() || t2.is_empty() {
        let cost = (t1.len() + t2.len()) as u64;
        return Ok(Mapping {
            cost,
            image,
            cells: 0,
        });
    }
    let (class1, class2) = classes(t1, t2);
    let pair = |a: u32, b: u32| {
        if class1[a as usize] == class2[b as usize] {
            Pair::Identical
        } else if t1.label(a) == t2.label(b) {
            Pair::Descend
        } else if mode == Mode::Exact {
            Pair::Apart
        } else {
            Pair::Replace
        }
    };
    let (size1, size2) = (u64::from(t1.size(0)), u64::from(t2.size(0)));
    let mut arenas = Arenas::default();
    let (cost, root_step, frames, cells) = match pair(0, 0) {
        Pair::Identical => (0, Step::Identical, Vec::new(), 0),
        Pair::Replace => (size1 + size2 - 1, Step::Replace, Vec::new(), 0),
        // Every mapped pair hangs from the roots' pair: without it nothing is mapped.
        Pair::Apart => (size1 + size2, Step::Delete, Vec::new(), 0),
        Pair::Descend => {
            let (frames, cells) = align(t1, t2, &pair, limits, &mut arenas)?;
            (frames[0].cost, Step::Descend(0), frames, cells)
        }
    };
    read_back(t1, &frames, &arenas, root_step, &mut image);
    Ok(Mapping { cost, image, cells })
}

/// Fills the alignment frames from the roots down (frame 0 is the roots'), without recursion.
fn align(
    t1: &Tree,
    t2: &Tree,
    pair: &impl Fn(u32, u32) -> Pair,
    limits: Limits,
    arenas: &mut Arenas,
) -> Result<(Vec<Frame>, u64), TooLarge> {
    let root = Frame::new(t1, t2, (0, 0), arenas);
    let mut cells = root.cells();
    let mut frames = vec![root];
    let mut stack = vec![0u32];
    if cells > limits.max_cells {
        return Err(TooLarge { cells });
    }
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
            let size_a = u64::from(t1.size(ka));
            if j == 0 {
                frame.cur[0] = frame.prev[0] + size_a;
                arenas.steps[frame.step_at(i, 0)] = Step::Delete;
                frame.j = 1;
                continue;
            }
            let kb = frame.kid_b(arenas, j - 1);
            let size_b = u64::from(t2.size(kb));
            let delete = frame.prev[j] + size_a;
            let insert = frame.cur[j - 1] + size_b;
            let diagonal = frame.prev[j - 1];
            let paired = match (resumed.take(), pair(ka, kb)) {
                (Some((child, cost)), _) => Some((diagonal + cost, Step::Descend(child))),
                (None, Pair::Identical) => Some((diagonal, Step::Identical)),
                (None, Pair::Replace) => Some((diagonal + size_a + size_b - 1, Step::Replace)),
                (None, Pair::Apart) => None,
                (None, Pair::Descend) => {
                    // Equal labels: descend unless even the best case loses. Any mapping of
                    // the two subtrees, restricted or exact, maps at most min(size_a, size_b)
                    // pairs and leaves the rest out, each left-out node costing 1, so it costs
                    // at least |size_a − size_b|: a valid lower bound in both modes.
                    let bound = diagonal + size_a.abs_diff(size_b);
                    if bound > delete.min(insert) {
                        None
                    } else {
                        let child = Frame::new(t1, t2, (ka, kb), arenas);
                        cells += child.cells();
                        if cells > limits.max_cells {
                            return Err(TooLarge { cells });
                        }
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
    Ok((frames, cells))
}

/// Writes the mapping the frames chose into `image`, from the roots' step down.
fn read_back(t1: &Tree, frames: &[Frame], arenas: &Arenas, step: Step, image: &mut [u32]) {
    let mut pending = vec![(0, 0, step)];
    while let Some((a, b, step)) = pending.pop() {
        match step {
            Step::Delete | Step::Insert => {}
            Step::Identical => {
                // Equal subtrees have the same shape: the k-th node maps to the k-th node.
                for k in 0..t1.size(a) {
                    image[(a + k) as usize] = b + k;
                }
            }
            Step::Replace => image[a as usize] = b,
            Step::Descend(f) => {
                image[a as usize] = b;
                let frame = &frames[f as usize];
                debug_assert_eq!((frame.a, frame.b), (a, b));
                let (mut i, mut j) = (frame.len_a, frame.len_b);
                while i > 0 || j > 0 {
                    let step = arenas.steps[frame.step_at(i, j)];
                    match step {
                        Step::Delete => i -= 1,
                        Step::Insert => j -= 1,
                        _ => {
                            let (ka, kb) = (frame.kid_a(arenas, i - 1), frame.kid_b(arenas, j - 1));
                            pending.push((ka, kb, step));
                            i -= 1;
                            j -= 1;
                        }
                    }
                }
            }
        }
    }
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

    fn random_tree(state: &mut u64, max_nodes: u64, alphabet: u64) -> Tree {
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

    fn is_ancestor(t: &Tree, a: u32, d: u32) -> bool {
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
    fn compatible(t1: &Tree, t2: &Tree, pairs: &[(u32, u32)], a: u32, b: u32) -> bool {
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
        let mut state = 0x2545_f491_4f6c_dd1d;
        // How often the cases that need the matrices came up: equal subtrees below the root,
        // pairs with different labels, children left out.
        let (mut descended, mut identical_below, mut replaced, mut left_out) = (0, 0, 0, 0);
        for round in 0..12_000 {
            // Small alphabets make equal labels and identical subtrees common.
            let alphabet = 2 + round % 3;
            let t1 = random_tree(&mut state, 8, alphabet);
            let t2 = random_tree(&mut state, 8, alphabet);
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
            let (c1, c2) = classes(&t1, &t2);
            identical_below += usize::from(
                pairs
                    .iter()
                    .any(|&(a, b)| a > 0 && c1[a as usize] == c2[b as usize]),
            );
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
        let mut state = 0x9e37_79b9_7f4a_7c15;
        // How often the exact mapping left a node out that RTDM maps by replacement, and how
        // often it mapped more equal pairs than RTDM's least cost does.
        let (mut refused_replacement, mut more_equal) = (0, 0);
        for round in 0..10_000 {
            let alphabet = 2 + round % 3;
            let t1 = random_tree(&mut state, 8, alphabet);
            let t2 = random_tree(&mut state, 8, alphabet);
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
            assert_eq!(exact.equal_in_first(&t1, &t2), {
                let mut v = vec![false; t1.len()];
                pairs.iter().for_each(|&(a, _)| v[a as usize] = true);
                v
            });
            // RTDM's equal pairs are themselves an exact top-down mapping (a replaced pair
            // has no mapped descendants, so an equal pair's parents are equal too): the
            // largest exact mapping is never smaller.
            let restricted = map(&t1, &t2, Limits::default()).expect("small");
            let equal = restricted.equal_in_first(&t1, &t2);
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
        assert_eq!(
            mapping.equal_in_first(&t1, &t2),
            vec![true, true, false, false]
        );
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
        assert_eq!(kept, parse("a(b(d) e)"));
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

    #[test]
    fn work_beyond_the_limit_is_refused() {
        let wide = |label: u64| {
            let n = 301u32;
            let mut labels = vec![0u64];
            labels.extend((1..n).map(|i| label + u64::from(i % 2)));
            let mut ends = vec![n];
            ends.extend(2..=n);
            Tree::new(labels, ends).unwrap()
        };
        let err = map(&wide(10), &wide(20), Limits { max_cells: 10_000 }).unwrap_err();
        assert!(err.cells > 10_000);
        assert!(map(&wide(10), &wide(20), Limits::default()).is_ok());
    }
}
