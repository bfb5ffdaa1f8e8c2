//! The main-content model: an ensemble of regression trees over [`super::features`], read from
//! its JSON file and evaluated without allocating.
//!
//! The trees are fitted by a gradient-boosting library at training time (`stencil
//! train-content`, forust-ml); what ships is only this plain form of them — per tree, flat
//! arrays of (feature, threshold, children, leaf value) — so scoring a block is a few dozen
//! comparisons and the library stays out of the binary's hot path.

use serde::{Deserialize, Serialize};

use super::features::{Row, COUNT, NAMES};
use super::kind::KindModel;
use super::lexicon::Lexicon;
use super::tree::{lay_out, Tree};

/// Rows walked down a tree together ([`ContentModel::walk_lanes`]).
const LANES: usize = 8;

/// The deepest tree a model may have: every tree is laid out as a perfect binary tree of the
/// model's depth (2^depth leaves each), which must stay small.
const MAX_DEPTH: u32 = 12;

/// One inner position of a tree laid out for scoring: go right when `!(row[feature] < split)`,
/// with `split` the f32 form of the trainer's f64 threshold (rounded up so that the
/// comparison agrees with the trainer's in f64).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Split {
    split: f32,
    feature: u16,
}

/// The smallest f32 not below `t`: for every f32 `x`, `f64::from(x) < t` exactly when
/// `x < ceil_f32(t)`, as no f32 lies between the two neighbours of `t`.
fn ceil_f32(t: f64) -> f32 {
    let nearest = t as f32;
    if f64::from(nearest) < t {
        nearest.next_up()
    } else {
        nearest
    }
}

/// The model file (`operators/models/content.json` ships in the binary).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ContentModel {
    /// [`NAMES`] at training time; loading checks them against this build's.
    pub features: Vec<String>,
    /// The logit every block starts from.
    pub base_score: f64,
    /// A block is content when its probability is at least this.
    pub threshold: f32,
    pub trees: Vec<Tree>,
    /// The words' weights behind the lexical features (`super::lexicon`).
    #[serde(default)]
    pub lexicon: Lexicon,
    /// The container names' weights behind the container features (`super::containers`).
    #[serde(default)]
    pub containers: Lexicon,
    /// The forests that guess the page's kind, the `page_kind` feature (`super::kind`).
    #[serde(default)]
    pub kinds: KindModel,
    /// How the model was made (data, folds, parameters, cross-validated figures): for people.
    #[serde(default)]
    pub training: serde_json::Value,
    /// `trees` laid out for scoring ([`ContentModel::prepare`]): each a perfect binary tree of
    /// `depth` levels, inner positions in `splits` (2^depth − 1 per tree, position p's
    /// children at 2p + 1 and 2p + 2) and leaves in `leaves` (2^depth per tree; a leaf the
    /// trainer placed higher fills every slot below it). Walking it is `depth` steps with no
    /// branch on the data: a walk that chases child pointers mispredicts about every other step
    /// (docs/benchmarks.md).
    #[serde(skip)]
    depth: u32,
    #[serde(skip)]
    splits: Vec<Split>,
    #[serde(skip)]
    leaves: Vec<f32>,
}

impl PartialEq for ContentModel {
    fn eq(&self, other: &Self) -> bool {
        self.features == other.features
            && self.base_score == other.base_score
            && self.threshold == other.threshold
            && self.trees == other.trees
            && self.lexicon == other.lexicon
            && self.containers == other.containers
            && self.kinds == other.kinds
            && self.training == other.training
    }
}

impl ContentModel {
    pub fn from_json(json: &str) -> Result<ContentModel, String> {
        let model: ContentModel =
            serde_json::from_str(json).map_err(|e| format!("content model: {e}"))?;
        if model.features != NAMES {
            return Err(format!(
                "content model: trained on features {:?}…, this build computes {:?}…; retrain it \
                 (docs/model.md)",
                model.features.iter().take(3).collect::<Vec<_>>(),
                &NAMES[..3]
            ));
        }
        let mut model = model;
        model.prepare()?;
        model.lexicon.prepare();
        model.containers.prepare();
        Ok(model)
    }

    /// A model over this build's features, checked and laid out for scoring.
    pub fn new(base_score: f64, threshold: f32, trees: Vec<Tree>) -> Result<ContentModel, String> {
        let mut model = ContentModel {
            features: NAMES.iter().map(|s| s.to_string()).collect(),
            base_score,
            threshold,
            trees,
            ..ContentModel::default()
        };
        model.prepare()?;
        Ok(model)
    }

    /// Checks the trees and lays them out for scoring.
    fn prepare(&mut self) -> Result<(), String> {
        let mut depth = 0u32;
        for tree in &self.trees {
            tree.check(COUNT)
                .map_err(|e| format!("content model: {e}"))?;
            depth = depth.max(tree.depth());
        }
        self.kinds
            .prepare()
            .map_err(|e| format!("content model: {e}"))?;
        if depth > MAX_DEPTH {
            return Err(format!(
                "content model: a tree {depth} levels deep (at most {MAX_DEPTH})"
            ));
        }
        self.depth = depth;
        (self.splits, self.leaves) =
            lay_out(&self.trees, depth, Split::default(), |tree, node| Split {
                split: ceil_f32(tree.threshold[node]),
                feature: tree.feature[node],
            });
        Ok(())
    }

    /// The model shipped in the binary.
    pub fn shipped() -> ContentModel {
        ContentModel::from_json(include_str!("../../../models/content.json"))
            .expect("the shipped content model matches this build's features (a test checks)")
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a content model serializes")
    }

    /// The probability of every row, in order. Tree by tree over all rows rather than row by
    /// row over all trees: a tree stays in the first-level cache while every block walks it,
    /// and the walks of different blocks are independent work the processor overlaps.
    pub fn probabilities(&self, rows: &[Row]) -> Vec<f32> {
        let mut logits = vec![self.base_score as f32; rows.len()];
        // Sets of LANES rows, typed as such: with the count of lanes in the type the compiler
        // unrolls the walk over them; over a slice it may keep a loop, which makes the trees
        // markedly slower (callgrind).
        let (whole, rest) = rows.as_chunks::<LANES>();
        // The last rows, padded to a full set of lanes with copies of the last one.
        let tail = rest.last().map(|last| {
            let mut padded = [*last; LANES];
            padded[..rest.len()].copy_from_slice(rest);
            padded
        });
        let (whole_logits, rest_logits) = logits.as_chunks_mut::<LANES>();
        for t in 0..self.trees.len() {
            for (logits, rows) in whole_logits.iter_mut().zip(whole) {
                let leaves = self.walk_lanes_of_depth(t, rows);
                for (logit, leaf) in logits.iter_mut().zip(leaves) {
                    *logit += leaf;
                }
            }
            if let Some(padded) = &tail {
                let leaves = self.walk_lanes_of_depth(t, padded);
                for (logit, leaf) in rest_logits.iter_mut().zip(leaves) {
                    *logit += leaf;
                }
            }
        }
        for logit in &mut logits {
            *logit = 1.0 / (1.0 + (-*logit).exp());
        }
        logits
    }

    #[inline]
    fn walk_lanes_of_depth(&self, t: usize, rows: &[Row; LANES]) -> [f32; LANES] {
        match self.depth {
            // The shipped depth, unrolled.
            6 => self.walk_lanes::<6>(t, rows),
            _ => self.walk_lanes::<0>(t, rows),
        }
    }

    /// The leaf values tree `t` gives [`LANES`] rows, walked level by level together: each
    /// walk is a chain of dependent loads, and stepping several at once keeps that many loads
    /// in flight instead of leaving it to the processor to find them. Eight lanes keep every
    /// position in a register (sixteen spill them to the stack), every walk starts at the
    /// root (whose split is read once for all lanes), and the lookups have no panicking path
    /// to keep values alive for: `prepare` checked every split's feature.
    #[inline]
    fn walk_lanes<const DEPTH: u32>(&self, t: usize, rows: &[Row; LANES]) -> [f32; LANES] {
        // DEPTH is the model's depth when known at compile time, 0 otherwise.
        let depth = if DEPTH == 0 { self.depth } else { DEPTH };
        let inner = (1usize << depth) - 1;
        let leaves = &self.leaves[t * (inner + 1)..(t + 1) * (inner + 1)];
        let splits = &self.splits[t * inner..(t + 1) * inner];
        // Right unless below (a NaN goes right, as `!(x < split)` says). Written as `!(x <
        // split)`: `partial_cmp(…) != Some(Less)`, which says the same, can compile to much
        // slower code, and so can `unwrap_or` in place of `is_none_or` (`stencil bench`,
        // "content features → probabilities").
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let right = |row: &Row, split: &Split| {
            row.get(usize::from(split.feature))
                .is_none_or(|&x| !(x < split.split))
        };
        let Some(root) = splits.first() else {
            // A model of lone leaves.
            return [leaves.first().copied().unwrap_or(0.0); LANES];
        };
        let mut positions = rows.each_ref().map(|row| 1 + usize::from(right(row, root)));
        for _ in 1..depth {
            for (position, row) in positions.iter_mut().zip(rows) {
                let right = splits.get(*position).is_none_or(|split| right(row, split));
                *position = 2 * *position + 1 + usize::from(right);
            }
        }
        positions.map(|p| leaves.get(p - inner).copied().unwrap_or(0.0))
    }

    /// The probability that a block with features `row` is main content (the same walk as
    /// [`ContentModel::probabilities`], the row padded to a set of lanes).
    pub fn probability(&self, row: &Row) -> f32 {
        self.probabilities(std::slice::from_ref(row))[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stump(feature: u16, threshold: f64, below: f32, above: f32) -> Tree {
        Tree {
            feature: vec![feature, 0, 0],
            threshold: vec![threshold, 0.0, 0.0],
            left: vec![1, 0, 0],
            right: vec![2, 0, 0],
            value: vec![0.0, below, above],
            leaf: vec![false, true, true],
        }
    }

    fn model(trees: Vec<Tree>) -> ContentModel {
        let mut model = ContentModel {
            features: NAMES.iter().map(|s| s.to_string()).collect(),
            base_score: 0.5,
            threshold: 0.5,
            trees,
            ..ContentModel::default()
        };
        model.prepare().expect("a well-formed model");
        model
    }

    #[test]
    fn trees_add_up_to_a_logit() {
        let m = model(vec![stump(0, 1.0, -1.0, 2.0), stump(2, 0.5, 0.25, -3.0)]);
        let mut row = [0f32; COUNT];
        row[0] = 3.0;
        row[2] = 0.1;
        let expected = 1.0 / (1.0 + (-(0.5f32 + 2.0 + 0.25)).exp());
        assert_eq!(m.probability(&row), expected);
        assert_eq!(
            m.probabilities(&[row, [0f32; COUNT]]),
            [expected, m.probability(&[0f32; COUNT])]
        );
        let back = ContentModel::from_json(&m.to_json()).expect("round trip");
        assert_eq!(back, m);
    }

    #[test]
    fn a_malformed_model_is_refused() {
        let tree = |t: Tree| ContentModel {
            features: NAMES.iter().map(|s| s.to_string()).collect(),
            trees: vec![t],
            ..ContentModel::default()
        };
        let mut looping = stump(0, 1.0, 0.0, 0.0);
        looping.left[0] = 0;
        assert!(ContentModel::from_json(&tree(looping).to_json()).is_err());
        let mut far = stump(0, 1.0, 0.0, 0.0);
        far.feature[0] = COUNT as u16;
        assert!(ContentModel::from_json(&tree(far).to_json()).is_err());
        let mut renamed = model(vec![]);
        renamed.features[0] = "something_else".into();
        assert!(ContentModel::from_json(&renamed.to_json()).is_err());
    }

    #[test]
    fn thresholds_compare_as_the_trainer_compares_in_f64() {
        for t in [0.1f64, 1.0 / 3.0, 2.5, -0.7, 1e-9, 123456.789] {
            let c = ceil_f32(t);
            for x in [c, c.next_down(), c.next_up(), t as f32] {
                assert_eq!(f64::from(x) < t, x < c, "x = {x}, t = {t}");
            }
        }
    }

    /// The trained tree walked as the trainer walks it.
    fn reference(tree: &Tree, row: &Row) -> f32 {
        let mut i = 0;
        while !tree.leaf[i] {
            let x = f64::from(row[tree.feature[i] as usize]);
            i = if x < tree.threshold[i] {
                tree.left[i]
            } else {
                tree.right[i]
            } as usize;
        }
        tree.value[i]
    }

    /// A random tree of at most `max_depth` levels, nodes numbered parents first.
    fn random_tree(rng: &mut crate::synth::SplitMix, max_depth: u32) -> Tree {
        let mut t = Tree::default();
        let mut stack = vec![(0usize, 0u32)];
        let push = |t: &mut Tree| {
            t.feature.push(0);
            t.threshold.push(0.0);
            t.left.push(0);
            t.right.push(0);
            t.value.push(0.0);
            t.leaf.push(true);
            t.leaf.len() - 1
        };
        push(&mut t);
        while let Some((node, level)) = stack.pop() {
            if level < max_depth && rng.below(4) != 0 {
                let (left, right) = (push(&mut t), push(&mut t));
                t.leaf[node] = false;
                t.feature[node] = rng.below(COUNT) as u16;
                t.threshold[node] = f64::from(rng.unit()) * 2.0 - 0.5;
                t.left[node] = left as u32;
                t.right[node] = right as u32;
                stack.push((left, level + 1));
                stack.push((right, level + 1));
            } else {
                t.value[node] = rng.unit() - 0.5;
            }
        }
        t
    }

    #[test]
    fn the_perfect_layout_gives_what_the_trained_trees_give() {
        let mut rng = crate::synth::SplitMix(0x7ee5);
        for case in 0..200 {
            let trees: Vec<Tree> = (0..1 + case % 7)
                .map(|_| random_tree(&mut rng, 1 + case as u32 % 8))
                .collect();
            let m = model(trees.clone());
            // Every count of rows from none to two and a half sets of lanes.
            let rows: Vec<Row> = (0..case % (2 * LANES + LANES / 2))
                .map(|_| {
                    std::array::from_fn(|_| match rng.below(40) {
                        0..=7 => 0.25,
                        // A NaN goes right, as the trainer's `x < threshold` sends it.
                        8 => f32::NAN,
                        _ => rng.unit(),
                    })
                })
                .collect();
            let all = m.probabilities(&rows);
            for (row, &p) in rows.iter().zip(&all) {
                let logit = 0.5 + trees.iter().map(|t| reference(t, row)).sum::<f32>();
                let expected = 1.0 / (1.0 + (-logit).exp());
                assert!(
                    (p - expected).abs() < 1e-6,
                    "case {case}: {p} against {expected}"
                );
                assert_eq!(p, m.probability(row));
            }
        }
    }

    #[test]
    fn the_shipped_model_loads() {
        let model = ContentModel::shipped();
        assert!(!model.trees.is_empty());
    }
}
