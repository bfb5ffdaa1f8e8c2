//! One regression tree of the content model's ensembles, in the plain form that ships (flat
//! arrays per tree, as `stencil train-content` exports them), and the layout in which they are
//! scored without branching on the data. The block model ([`super::forest`]) and the page-kind
//! guess ([`super::kind`]) are both ensembles of these trees.

use serde::{Deserialize, Serialize};

/// One tree, its nodes in arrays indexed by node number; node 0 is the root. At an inner node
/// a row goes left when `row[feature] < threshold` (compared in f64, as the trainer does),
/// else right; a leaf adds `value` to the logit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub feature: Vec<u16>,
    pub threshold: Vec<f64>,
    pub left: Vec<u32>,
    pub right: Vec<u32>,
    /// Leaf values; meaningful at leaves only.
    pub value: Vec<f32>,
    pub leaf: Vec<bool>,
}

impl Tree {
    /// Levels of splits on the longest path from the root to a leaf (0 for a lone leaf).
    pub(super) fn depth(&self) -> u32 {
        let mut deepest = 0;
        let mut stack = vec![(0usize, 0u32)];
        while let Some((node, level)) = stack.pop() {
            if self.leaf[node] {
                deepest = deepest.max(level);
            } else {
                stack.push((self.left[node] as usize, level + 1));
                stack.push((self.right[node] as usize, level + 1));
            }
        }
        deepest
    }

    pub(super) fn check(&self, features: usize) -> Result<(), String> {
        let n = self.leaf.len();
        if n == 0 {
            return Err("a tree has no nodes".into());
        }
        if [
            self.feature.len(),
            self.threshold.len(),
            self.left.len(),
            self.right.len(),
            self.value.len(),
        ]
        .iter()
        .any(|&len| len != n)
        {
            return Err("a tree's arrays differ in length".into());
        }
        for i in 0..n {
            if self.leaf[i] {
                continue;
            }
            if self.feature[i] as usize >= features {
                return Err(format!(
                    "a split on feature {} of {features}",
                    self.feature[i]
                ));
            }
            // Children after their parent: evaluation always ends.
            for child in [self.left[i], self.right[i]] {
                if child as usize >= n || child as usize <= i {
                    return Err(format!("node {i} has child {child} of {n}"));
                }
            }
        }
        Ok(())
    }
}

/// `trees` laid out as perfect binary trees of `depth` levels, one after the other: per tree
/// 2^depth − 1 inner positions (`split_of` a trained node, `unused` where no split is, under
/// a leaf placed higher), position p's children at 2p + 1 and 2p + 2, and 2^depth leaves (a
/// leaf the trainer placed higher fills every slot below it). Walking such a tree is `depth`
/// steps with no branch on the data.
pub(super) fn lay_out<'t, S: Copy>(
    trees: impl IntoIterator<Item = &'t Tree>,
    depth: u32,
    unused: S,
    split_of: impl Fn(&Tree, usize) -> S,
) -> (Vec<S>, Vec<f32>) {
    let inner = (1usize << depth) - 1;
    let (mut splits, mut leaves) = (Vec::new(), Vec::new());
    for tree in trees {
        let at = splits.len();
        splits.resize(at + inner, unused);
        let first_leaf = leaves.len();
        leaves.resize(first_leaf + inner + 1, 0.0);
        // (node of the trained tree, position in the perfect one, its level)
        let mut stack = vec![(0usize, 0usize, 0u32)];
        while let Some((node, position, level)) = stack.pop() {
            if tree.leaf[node] {
                // Every leaf slot below `position`: a run of 2^(depth − level) slots.
                let below = depth - level;
                let first = first_leaf + ((position + 1) << below) - 1 - inner;
                leaves[first..first + (1 << below)].fill(tree.value[node]);
                continue;
            }
            splits[at + position] = split_of(tree, node);
            stack.push((tree.left[node] as usize, 2 * position + 1, level + 1));
            stack.push((tree.right[node] as usize, 2 * position + 2, level + 1));
        }
    }
    (splits, leaves)
}
