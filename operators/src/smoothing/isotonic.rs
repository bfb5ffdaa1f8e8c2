//! Regularized tree isotonic regression with the L1 distance (seed 000, §4, Problem 2), solved
//! exactly.
//!
//! Given a tree, a score x(i), a weight w(i) ≥ 0 and a penalty γ(i) ≥ 0 for every node, find
//! smoothed scores y that never decrease from a parent to its children (y(i) ≤ min over the
//! children, constraint (1)) and minimize
//!
//! ```text
//! c(y) = Σ γ(i) over the sections  +  Σ w(i) · |x(i) − y(i)|
//! ```
//!
//! where the sections are the root and every node whose y differs from its parent's (the
//! places where the compressed score ŷ is defined). A section is where the page changes from
//! one kind of block to another; γ is the price of starting one.
//!
//! # Why not the paper's dynamic program as written
//!
//! BuildError keeps err(i, j) for every node i and every candidate j: O(n²) memory and
//! O(n² log n) time, far too much for a 20,000-node page on every page of a crawl. The
//! recurrence is the same here, organised differently:
//!
//! - **Candidates sorted once.** By Lemma 3 an optimal y takes values among the x. Sort the K
//!   distinct values v₀ < … < v_{K−1}; a node's cost is then a vector over K levels.
//! - **Suffix minima instead of a heap.** With own(i, k) the best cost of i's subtree when
//!   y(i) = v_k, the cost of child c under a parent at level k is
//!   `min(own(c, k), γ(c) + min_{k' > k} own(c, k'))`: continue the parent's section, or
//!   start a new one strictly above it. One backward scan gives all K suffix minima, so a node
//!   costs O(K) and the page O(n·K).
//! - **Only the back-pointers that are needed.** Reconstruction needs, per node, the level it
//!   takes as a function of its parent's level. That function is piecewise constant (runs of
//!   "same as parent" or "jump to level t"), so it is stored as runs, usually a handful per
//!   node; the cost vectors themselves are dropped as soon as the parent has absorbed them.
//! - **Few cost vectors alive at once.** Nodes are visited children first, each node's
//!   largest child subtree first. A node holds an accumulator only once one child is done, so
//!   while inside a child that is not the largest. On any root path there are at most log₂ n
//!   such steps: working memory is O(K log n), whatever the depth.
//! - **No recursion**: the visiting order is built with an explicit stack.
//!
//! # Bounding K
//!
//! K is the number of distinct scores, up to n. When it exceeds [`Options::max_levels`] (256
//! by default) the scores are quantized to that many evenly spaced levels between their
//! minimum and maximum, and the problem is solved exactly for the quantized scores
//! ([`Smoothed::quantized`] says so). Each |x − y| term then moves by at most half a step,
//! for the optimum and for the returned solution alike, so the returned cost (measured
//! against the original x) is within `step · Σ w(i)` of the true optimum, with
//! `step = (max − min) / (max_levels − 1)`.

use std::fmt;

/// `parent` of the root.
pub const NO_PARENT: u32 = u32::MAX;

/// The values [`Options::max_levels`] may take: a level is a `u16`, and `u16::MAX` marks
/// "same level as the parent" in the back-pointers.
pub const MAX_LEVELS: std::ops::RangeInclusive<usize> = 2..=65_535;

/// Solver settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The most distinct levels solved exactly; more distinct scores are quantized to this
    /// many levels. In [`MAX_LEVELS`].
    pub max_levels: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_levels: 256 }
    }
}

/// The optimal smoothing of a tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Smoothed {
    /// Smoothed score of every node; never smaller than its parent's.
    pub y: Vec<f32>,
    /// The sections: the root, and every node whose y differs from its parent's.
    pub section: Vec<bool>,
    /// c(y), measured against the scores as given (not quantized).
    pub cost: f64,
    /// Number of candidate levels the program ran over (K).
    pub levels: usize,
    /// Whether the scores had more than `max_levels` distinct values and were quantized.
    pub quantized: bool,
    /// Memory the program used beyond its input and output: the most cost vectors (K
    /// doubles each) alive at once, and the back-pointer runs kept (4 bytes each).
    pub peak_cost_vectors: usize,
    pub back_pointer_runs: usize,
}

/// Why a problem was refused: the inputs break the solver's preconditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProblemError {
    /// `x`, `weight` and `penalty` must each have one entry per node.
    Lengths,
    /// Node 0 must be the root and every other node's parent must come before it.
    ParentOrder { node: usize },
    /// Scores must be finite; weights and penalties finite and not negative.
    BadValue { node: usize },
    /// `max_levels` out of [`MAX_LEVELS`].
    MaxLevels,
}

impl fmt::Display for ProblemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemError::Lengths => write!(f, "x, weight and penalty need one entry per node"),
            ProblemError::ParentOrder { node } => {
                write!(f, "node {node}: parents must come before their children")
            }
            ProblemError::BadValue { node } => write!(
                f,
                "node {node}: score not finite, or weight or penalty negative or not finite"
            ),
            ProblemError::MaxLevels => write!(f, "max_levels must be in {MAX_LEVELS:?}"),
        }
    }
}

impl std::error::Error for ProblemError {}

/// Target of a run meaning "the parent's level": the node continues its parent's section.
const SAME_AS_PARENT: u16 = u16::MAX;

/// Solves Problem 2 exactly (up to quantization, see the module docs).
///
/// `parent[i]` is the parent of node `i`: [`NO_PARENT`] for node 0, the root, and a smaller
/// index for every other node (pre-order, as [`crate::dom::Dom`] numbers its nodes, is one
/// such order). Ties are broken the same way on every run: a node continues its parent's
/// section rather than start one at equal cost, and takes the lowest of equally good levels.
pub fn smooth(
    parent: &[u32],
    x: &[f32],
    weight: &[f32],
    penalty: &[f32],
    options: Options,
) -> Result<Smoothed, ProblemError> {
    let n = parent.len();
    check(parent, x, weight, penalty, options)?;
    if n == 0 {
        return Ok(Smoothed {
            y: Vec::new(),
            section: Vec::new(),
            cost: 0.0,
            levels: 0,
            quantized: false,
            peak_cost_vectors: 0,
            back_pointer_runs: 0,
        });
    }
    let candidates = Candidates::new(x, options.max_levels);
    let k = candidates.values.len();
    let values = &candidates.values;

    let children = Children::new(parent);
    let mut size = vec![1u32; n];
    for i in (1..n).rev() {
        size[parent[i] as usize] += size[i];
    }
    let order = children_first_largest_first(&children, &size);

    // Accumulated Σ children's costs per level, for the nodes that have a finished child.
    let mut accumulator: Vec<u32> = vec![NO_PARENT; n];
    let mut vectors = CostVectors::new(k);

    let mut runs: Vec<(u16, u16)> = Vec::new();
    let mut run_range: Vec<(usize, usize)> = vec![(0, 0); n];
    let mut root_level = 0u16;
    // One node's runs, found from the top level down: at most one per level.
    let mut found: Vec<(u16, u16)> = vec![(0, 0); k];

    for &node in &order {
        let node = node as usize;
        let own_level = candidates.level[node] as usize;
        let w = f64::from(weight[node]);
        if accumulator[node] == NO_PARENT && node != 0 && w > 0.0 {
            // A leaf (of the smoothing tree) in one pass. Its own costs w·|x − v_k| are least
            // (0) at its own level, so under a parent below that level it either continues
            // the parent's section or starts one exactly at its own level for γ; at or above
            // it, continuing is always cheapest. Same arithmetic and ties as the general
            // case below, a quarter of the passes: about half of a page's smoothed nodes are
            // leaves.
            let parent_slot = vectors.slot_of(&mut accumulator[parent[node] as usize]);
            let into = &mut vectors.buffers[parent_slot];
            let (xv, gamma) = (values[own_level], f64::from(penalty[node]));
            // Below its own level the cost of staying, w·(x − v), falls as the level rises
            // (the values are sorted, and rounding keeps that order), so the levels where a
            // new section is cheaper are a prefix: counted, not tracked, which leaves both
            // loops free of branches.
            let (below, above) = into.split_at_mut(own_level);
            let mut first_staying = 0;
            for (sum, &v) in below.iter_mut().zip(values) {
                let stay = w * (xv - v).abs();
                let jump = stay > gamma;
                first_staying += usize::from(jump);
                *sum += if jump { gamma } else { stay };
            }
            for (sum, &v) in above.iter_mut().zip(&values[own_level..]) {
                *sum += w * (xv - v).abs();
            }
            let start = runs.len();
            if first_staying > 0 {
                runs.push((0, own_level as u16));
            }
            runs.push((first_staying as u16, SAME_AS_PARENT));
            run_range[node] = (start, runs.len());
            continue;
        }
        let slot = vectors.slot_of(&mut accumulator[node]);
        accumulator[node] = NO_PARENT;
        let xv = values[own_level];
        for (cost, &v) in vectors.buffers[slot].iter_mut().zip(values) {
            *cost += w * (xv - v).abs();
        }
        if node == 0 {
            root_level = argmin(&vectors.buffers[slot]) as u16;
            vectors.release(slot);
            continue;
        }

        let parent_slot = vectors.slot_of(&mut accumulator[parent[node] as usize]);
        let gamma = f64::from(penalty[node]);
        let (own, into) = vectors.pair(slot, parent_slot);
        // Scan levels downwards keeping the minimum of own() strictly above the current level:
        // the best section this node can start under a parent at that level. The runs of
        // equal targets are found in the same pass, from the top level down, into `found`
        // (by index: a `push`, which may call the allocator, would make the compiler keep the
        // running minimum in memory), and join `runs` in ascending order after it.
        let (mut best_above, mut best_above_level) = (f64::INFINITY, SAME_AS_PARENT);
        let mut run_target = SAME_AS_PARENT;
        let mut count = 0;
        for level in (0..k).rev() {
            let stay = own[level];
            let jump = gamma + best_above;
            let (cost, target) = if stay <= jump {
                (stay, SAME_AS_PARENT)
            } else {
                (jump, best_above_level)
            };
            into[level] += cost;
            if target != run_target && level + 1 < k {
                found[count] = ((level + 1) as u16, run_target);
                count += 1;
            }
            run_target = target;
            // The running minimum is the loop's one chain of dependent steps: kept to a
            // plain `minsd` (equal values are the same value, and the costs are never NaN),
            // with the level of the lowest equal minimum picked beside it, off that chain.
            if stay <= best_above {
                best_above_level = level as u16;
            }
            best_above = if stay < best_above { stay } else { best_above };
        }
        found[count] = (0, run_target);
        let start = runs.len();
        runs.extend(found[..=count].iter().rev());
        run_range[node] = (start, runs.len());
        vectors.release(slot);
    }

    // Top-down: each node's level from its parent's (parents come first in index order).
    let mut level = vec![0u16; n];
    let mut section = vec![false; n];
    level[0] = root_level;
    section[0] = true;
    for node in 1..n {
        let above = level[parent[node] as usize];
        let (start, end) = run_range[node];
        let node_runs = &runs[start..end];
        let run = node_runs.partition_point(|&(first, _)| first <= above) - 1;
        let target = node_runs[run].1;
        if target == SAME_AS_PARENT {
            level[node] = above;
        } else {
            level[node] = target;
            section[node] = true;
        }
    }
    let y: Vec<f32> = level.iter().map(|&l| values[l as usize] as f32).collect();
    let cost = cost(parent, x, weight, penalty, &y);
    Ok(Smoothed {
        y,
        section,
        cost,
        levels: k,
        quantized: candidates.quantized,
        peak_cost_vectors: vectors.buffers.len(),
        back_pointer_runs: runs.len(),
    })
}

/// c(y) of any smoothing `y` (feasible or not): the penalties of its sections plus its
/// weighted L1 distance to `x`.
pub fn cost(parent: &[u32], x: &[f32], weight: &[f32], penalty: &[f32], y: &[f32]) -> f64 {
    let mut total = 0.0;
    for i in 0..parent.len() {
        let starts_section = i == 0 || y[i] != y[parent[i] as usize];
        if starts_section {
            total += f64::from(penalty[i]);
        }
        total += f64::from(weight[i]) * (f64::from(x[i]) - f64::from(y[i])).abs();
    }
    total
}

/// Whether `y` satisfies constraint (1): no node below its parent.
pub fn is_monotone(parent: &[u32], y: &[f32]) -> bool {
    (1..parent.len()).all(|i| y[parent[i] as usize] <= y[i])
}

fn check(
    parent: &[u32],
    x: &[f32],
    weight: &[f32],
    penalty: &[f32],
    options: Options,
) -> Result<(), ProblemError> {
    let n = parent.len();
    if x.len() != n || weight.len() != n || penalty.len() != n {
        return Err(ProblemError::Lengths);
    }
    if !MAX_LEVELS.contains(&options.max_levels) {
        return Err(ProblemError::MaxLevels);
    }
    for (node, &p) in parent.iter().enumerate() {
        let ordered = if node == 0 {
            p == NO_PARENT
        } else {
            (p as usize) < node
        };
        if !ordered {
            return Err(ProblemError::ParentOrder { node });
        }
        let fine = |v: f32| v.is_finite() && v >= 0.0;
        if !x[node].is_finite() || !fine(weight[node]) || !fine(penalty[node]) {
            return Err(ProblemError::BadValue { node });
        }
    }
    Ok(())
}

/// Cost vectors over the K levels, reused: a released vector is zeroed and handed out again,
/// so the peak count, not the node count, decides the memory.
struct CostVectors {
    levels: usize,
    buffers: Vec<Vec<f64>>,
    free: Vec<usize>,
}

impl CostVectors {
    fn new(levels: usize) -> CostVectors {
        CostVectors {
            levels,
            buffers: Vec::new(),
            free: Vec::new(),
        }
    }

    /// The vector a node's `accumulator` entry names, taking a zeroed one first if it names
    /// none.
    fn slot_of(&mut self, accumulator: &mut u32) -> usize {
        if *accumulator == NO_PARENT {
            *accumulator = match self.free.pop() {
                Some(slot) => {
                    self.buffers[slot].fill(0.0);
                    slot as u32
                }
                None => {
                    self.buffers.push(vec![0.0; self.levels]);
                    (self.buffers.len() - 1) as u32
                }
            };
        }
        *accumulator as usize
    }

    /// A node's own vector and its parent's, to read one while adding to the other.
    fn pair(&mut self, own: usize, parent: usize) -> (&[f64], &mut [f64]) {
        debug_assert_ne!(own, parent, "a node and its parent hold different vectors");
        if own < parent {
            let (low, high) = self.buffers.split_at_mut(parent);
            (&low[own], &mut high[0])
        } else {
            let (low, high) = self.buffers.split_at_mut(own);
            (&high[0], &mut low[parent])
        }
    }

    fn release(&mut self, slot: usize) {
        self.free.push(slot);
    }
}

/// The sorted candidate levels and each node's own level among them.
struct Candidates {
    values: Vec<f64>,
    level: Vec<u16>,
    quantized: bool,
}

impl Candidates {
    fn new(x: &[f32], max_levels: usize) -> Candidates {
        let mut distinct: Vec<f32> = x.to_vec();
        distinct.sort_by(f32::total_cmp);
        distinct.dedup();
        if distinct.len() <= max_levels {
            let level = x
                .iter()
                .map(|v| distinct.partition_point(|d| d < v) as u16)
                .collect();
            let values = distinct.into_iter().map(f64::from).collect();
            return Candidates {
                values,
                level,
                quantized: false,
            };
        }
        let lo = f64::from(distinct[0]);
        let hi = f64::from(distinct[distinct.len() - 1]);
        let step = (hi - lo) / (max_levels - 1) as f64;
        let grid = |v: f32| (((f64::from(v) - lo) / step).round() as usize).min(max_levels - 1);
        let mut used = vec![false; max_levels];
        for &v in x {
            used[grid(v)] = true;
        }
        // Compact the used grid points into levels 0..K.
        let mut compact = vec![0u16; max_levels];
        let mut values = Vec::new();
        for (point, &is_used) in used.iter().enumerate() {
            if is_used {
                compact[point] = values.len() as u16;
                values.push(lo + point as f64 * step);
            }
        }
        let level = x.iter().map(|&v| compact[grid(v)]).collect();
        Candidates {
            values,
            level,
            quantized: true,
        }
    }
}

/// Children lists in one flat array (compressed rows), in index order.
struct Children {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Children {
    fn new(parent: &[u32]) -> Children {
        let n = parent.len();
        let mut start = vec![0u32; n + 1];
        for &p in &parent[1.min(n)..] {
            start[p as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; n.saturating_sub(1)];
        for (node, &p) in parent.iter().enumerate().skip(1) {
            list[fill[p as usize] as usize] = node as u32;
            fill[p as usize] += 1;
        }
        Children { start, list }
    }

    fn of(&self, node: usize) -> &[u32] {
        &self.list[self.start[node] as usize..self.start[node + 1] as usize]
    }
}

/// A post-order (children before parents) that finishes each node's largest child subtree
/// before its other children, which bounds the accumulators alive at once by O(log n).
///
/// Built as the reverse of a pre-order that visits the largest child last.
fn children_first_largest_first(children: &Children, size: &[u32]) -> Vec<u32> {
    let mut order = Vec::with_capacity(size.len());
    let mut stack = vec![0u32];
    while let Some(node) = stack.pop() {
        order.push(node);
        let kids = children.of(node as usize);
        let Some(&largest) = kids
            .iter()
            .max_by_key(|&&c| (size[c as usize], u32::MAX - c))
        else {
            continue;
        };
        stack.push(largest);
        stack.extend(kids.iter().copied().filter(|&c| c != largest));
    }
    order.reverse();
    order
}

/// Index of the first minimum.
fn argmin(costs: &[f64]) -> usize {
    let mut best = 0;
    for (i, &c) in costs.iter().enumerate() {
        if c < costs[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::SplitMix as Rng;

    struct Case {
        parent: Vec<u32>,
        x: Vec<f32>,
        weight: Vec<f32>,
        penalty: Vec<f32>,
    }

    /// A random tree of `n` nodes (each node's parent uniform among the earlier ones), scores
    /// either continuous or from five values (so ties happen), weights 1..=4 (hidden children
    /// folded in), penalties from 0 to 1.5 (from free sections to dearer than any distance).
    fn random_case(rng: &mut Rng, n: usize) -> Case {
        let mut parent = vec![NO_PARENT];
        for i in 1..n {
            parent.push(rng.below(i) as u32);
        }
        let discrete = rng.below(2) == 0;
        let x = (0..n)
            .map(|_| {
                if discrete {
                    rng.below(5) as f32 / 4.0
                } else {
                    rng.unit()
                }
            })
            .collect();
        let weight = (0..n).map(|_| 1.0 + rng.below(4) as f32).collect();
        let scale = [0.0, 0.05, 0.3, 1.5][rng.below(4)];
        let penalty = (0..n).map(|_| scale * rng.unit()).collect();
        Case {
            parent,
            x,
            weight,
            penalty,
        }
    }

    /// The optimum over every feasible assignment of candidate values (the distinct x) to the
    /// nodes, enumerated in index order so a node's parent is assigned before it. The search
    /// stops extending an assignment whose cost so far already reaches the best found, which
    /// keeps it exhaustive (all terms are ≥ 0) while making 9-node stars affordable.
    fn brute_force(case: &Case) -> f64 {
        let n = case.parent.len();
        let mut values = case.x.clone();
        values.sort_by(f32::total_cmp);
        values.dedup();
        let mut best = f64::INFINITY;
        let mut choice = vec![0usize; n];
        let mut partial = vec![0.0f64; n + 1];
        let mut node = 0usize;
        loop {
            if node == n {
                best = best.min(partial[n]);
                node -= 1;
                choice[node] += 1;
                continue;
            }
            let lowest = if node == 0 {
                0
            } else {
                choice[case.parent[node] as usize]
            };
            if choice[node] < lowest {
                choice[node] = lowest;
            }
            if choice[node] >= values.len() {
                if node == 0 {
                    break;
                }
                choice[node] = 0;
                node -= 1;
                choice[node] += 1;
                continue;
            }
            let y = values[choice[node]];
            let section = node == 0 || choice[node] != choice[case.parent[node] as usize];
            let term = f64::from(case.weight[node])
                * (f64::from(case.x[node]) - f64::from(y)).abs()
                + if section {
                    f64::from(case.penalty[node])
                } else {
                    0.0
                };
            partial[node + 1] = partial[node] + term;
            if partial[node + 1] >= best {
                choice[node] += 1;
                continue;
            }
            node += 1;
            if node < n {
                choice[node] = 0;
            }
        }
        best
    }

    fn solve(case: &Case) -> Smoothed {
        smooth(
            &case.parent,
            &case.x,
            &case.weight,
            &case.penalty,
            Options::default(),
        )
        .expect("a valid problem")
    }

    #[test]
    fn equals_the_brute_force_optimum_on_thousands_of_random_trees() {
        let mut rng = Rng(7);
        for round in 0..10_000 {
            let n = 1 + rng.below(9);
            let case = random_case(&mut rng, n);
            let got = solve(&case);
            let optimum = brute_force(&case);
            assert!(
                (got.cost - optimum).abs() < 1e-9,
                "round {round}: cost {} != optimum {optimum}; parent {:?} x {:?} w {:?} γ {:?} y {:?}",
                got.cost,
                case.parent,
                case.x,
                case.weight,
                case.penalty,
                got.y
            );
            assert!(is_monotone(&case.parent, &got.y), "round {round}");
            // Lemma 3: every smoothed score is one of the classifier scores.
            assert!(got.y.iter().all(|y| case.x.contains(y)), "round {round}");
            // Sections are exactly where y changes, and the root.
            for i in 0..n {
                let changes = i == 0 || got.y[i] != got.y[case.parent[i] as usize];
                assert_eq!(got.section[i], changes, "round {round}, node {i}");
            }
            assert!(!got.quantized);
        }
    }

    #[test]
    fn equal_children_pull_an_unconstrained_parent_to_their_score() {
        // A root scored 0.2 over three children scored 0.8: keeping the root at 0.2 costs three
        // sections (3 × 0.3 = 0.9), moving it up costs a distance of 0.6.
        let parent = [NO_PARENT, 0, 0, 0];
        let x = [0.2, 0.8, 0.8, 0.8];
        let got = smooth(&parent, &x, &[1.0; 4], &[0.3; 4], Options::default()).unwrap();
        assert_eq!(got.y, vec![0.8; 4]);
        assert_eq!(got.section, vec![true, false, false, false]);
        // With cheap sections the root keeps its own score, and each child is a section.
        let got = smooth(&parent, &x, &[1.0; 4], &[0.1; 4], Options::default()).unwrap();
        assert_eq!(got.y, vec![0.2, 0.8, 0.8, 0.8]);
        assert_eq!(got.section, vec![true; 4]);
    }

    #[test]
    fn a_huge_penalty_leaves_one_section_at_the_weighted_median() {
        let mut rng = Rng(11);
        for _ in 0..200 {
            let n = 1 + rng.below(40);
            let mut case = random_case(&mut rng, n);
            case.penalty = vec![1e6; n];
            let got = solve(&case);
            assert_eq!(got.section.iter().filter(|&&s| s).count(), 1);
            let level = got.y[0];
            assert!(got.y.iter().all(|&y| y == level));
            // A weighted median: neither side holds more than half the weight.
            let total: f32 = case.weight.iter().sum();
            let below: f32 = (0..n)
                .filter(|&i| case.x[i] < level)
                .map(|i| case.weight[i])
                .sum();
            let above: f32 = (0..n)
                .filter(|&i| case.x[i] > level)
                .map(|i| case.weight[i])
                .sum();
            assert!(below <= total / 2.0 && above <= total / 2.0);
        }
    }

    #[test]
    fn zero_penalty_is_the_l1_isotonic_projection() {
        // A chain is a sequence: y must be non-decreasing from the root down. The L1 isotonic
        // regression of 0.9, 0.1, 0.5, 0.3, 0.8 pools the first two and the middle two.
        let parent = [NO_PARENT, 0, 1, 2, 3];
        let x = [0.9, 0.1, 0.5, 0.3, 0.8];
        let got = smooth(&parent, &x, &[1.0; 5], &[0.0; 5], Options::default()).unwrap();
        assert!(is_monotone(&parent, &got.y));
        // Any median of a pool is optimal; the lowest is taken on ties.
        assert_eq!(got.y, vec![0.1, 0.1, 0.3, 0.3, 0.8]);
        assert!((got.cost - (0.8 + 0.2 + 0.0)).abs() < 1e-6);
        // Already monotone scores are their own projection.
        let sorted = [0.1, 0.3, 0.5, 0.8, 0.9];
        let got = smooth(&parent, &sorted, &[1.0; 5], &[0.0; 5], Options::default()).unwrap();
        assert_eq!(got.y, sorted.to_vec());
        assert_eq!(got.cost, 0.0);
    }

    #[test]
    fn quantized_scores_stay_within_the_documented_bound() {
        let mut rng = Rng(3);
        for _ in 0..500 {
            let n = 2 + rng.below(8);
            let mut case = random_case(&mut rng, n);
            case.x = (0..n).map(|_| rng.unit()).collect();
            let got = smooth(
                &case.parent,
                &case.x,
                &case.weight,
                &case.penalty,
                Options { max_levels: 3 },
            )
            .unwrap();
            let mut distinct = case.x.clone();
            distinct.sort_by(f32::total_cmp);
            distinct.dedup();
            assert_eq!(got.quantized, distinct.len() > 3);
            assert!(got.levels <= 3);
            assert!(is_monotone(&case.parent, &got.y));
            let lo = distinct[0];
            let step = f64::from(distinct[distinct.len() - 1] - lo) / 2.0;
            let weights: f64 = case.weight.iter().map(|&w| f64::from(w)).sum();
            let optimum = brute_force(&case);
            assert!(got.cost >= optimum - 1e-9);
            assert!(got.cost <= optimum + step * weights + 1e-6);
        }
    }

    #[test]
    fn refuses_malformed_problems() {
        let ok = Options::default();
        assert_eq!(
            smooth(&[NO_PARENT, 0], &[0.5], &[1.0, 1.0], &[0.1, 0.1], ok),
            Err(ProblemError::Lengths)
        );
        assert_eq!(
            smooth(&[NO_PARENT, 2, 0], &[0.5; 3], &[1.0; 3], &[0.1; 3], ok),
            Err(ProblemError::ParentOrder { node: 1 })
        );
        assert_eq!(
            smooth(&[NO_PARENT, 0], &[0.5, f32::NAN], &[1.0; 2], &[0.1; 2], ok),
            Err(ProblemError::BadValue { node: 1 })
        );
        assert_eq!(
            smooth(&[NO_PARENT], &[0.5], &[-1.0], &[0.1], ok),
            Err(ProblemError::BadValue { node: 0 })
        );
        assert_eq!(
            smooth(
                &[NO_PARENT],
                &[0.5],
                &[1.0],
                &[0.1],
                Options { max_levels: 1 }
            ),
            Err(ProblemError::MaxLevels)
        );
        let empty = smooth(&[], &[], &[], &[], ok).unwrap();
        assert!(empty.y.is_empty());
    }

    #[test]
    fn a_100_000_node_chain_and_a_100_000_node_bushy_tree_smooth_without_recursion() {
        let mut rng = Rng(5);
        let n = 100_000;
        // A 50,000-deep chain (nodes 0..half) with a leaf hanging off every link (the leaf
        // of link j is node half + j): deep enough to overflow any recursive solver, and the
        // worst shape for plain reverse index order, which would finish every leaf first and
        // hold a cost vector for every link at once.
        let half = n / 2;
        let parent: Vec<u32> = (0..n)
            .map(|i| match i {
                0 => NO_PARENT,
                i if i < half => (i - 1) as u32,
                i => (i - half) as u32,
            })
            .collect();
        let x: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
        let weight = vec![1.0; n];
        let penalty = vec![0.05; n];
        let got = smooth(&parent, &x, &weight, &penalty, Options::default()).unwrap();
        assert!(got.quantized && got.levels <= 256);
        assert!(is_monotone(&parent, &got.y));
        // Within memory: a handful of cost vectors alive at once (a plain children-first
        // order would hold 50,000 of them, 100 MB), and a few back-pointer runs per node.
        assert!(got.peak_cost_vectors <= 4, "{}", got.peak_cost_vectors);
        assert!(got.back_pointer_runs <= 4 * n, "{}", got.back_pointer_runs);
        // Fewer sections than nodes, and no worse than one section at the median.
        let sections = got.section.iter().filter(|&&s| s).count();
        assert!(sections < n);
        let mut sorted = x.clone();
        sorted.sort_by(f32::total_cmp);
        let flat = vec![sorted[n / 2]; n];
        assert!(got.cost <= cost(&parent, &x, &weight, &penalty, &flat));

        let bushy: Vec<u32> = (0..n)
            .map(|i| {
                if i == 0 {
                    NO_PARENT
                } else {
                    rng.below(i) as u32
                }
            })
            .collect();
        let got = smooth(&bushy, &x, &weight, &penalty, Options::default()).unwrap();
        assert!(is_monotone(&bushy, &got.y));
        // At most log2(n) + 2 cost vectors alive (see the module docs).
        assert!(got.peak_cost_vectors <= 19, "{}", got.peak_cost_vectors);
        assert!(got.back_pointer_runs <= 4 * n, "{}", got.back_pointer_runs);
    }
}
