//! Agreement between two groupings of the same items (seed 000, §6.1 measures segmentations
//! this way).

use std::collections::HashMap;

/// The adjusted Rand index (Hubert & Arabie 1985) of two groupings of the same items, each
/// given as a group label per item: 1 for identical groupings, 0 on average for independent
/// ones, negative below chance. `None` when it is undefined: fewer than two items, or both
/// groupings put everything in one group (or both put everything apart).
pub fn adjusted_rand_index(a: &[u32], b: &[u32]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "two groupings of the same items");
    let n = a.len() as u64;
    if n < 2 {
        return None;
    }
    let pairs = |count: u64| count * count.saturating_sub(1) / 2;
    let mut joint: HashMap<(u32, u32), u64> = HashMap::new();
    let mut in_a: HashMap<u32, u64> = HashMap::new();
    let mut in_b: HashMap<u32, u64> = HashMap::new();
    for (&x, &y) in a.iter().zip(b) {
        *joint.entry((x, y)).or_default() += 1;
        *in_a.entry(x).or_default() += 1;
        *in_b.entry(y).or_default() += 1;
    }
    let together_both: u64 = joint.values().map(|&c| pairs(c)).sum();
    let together_a: u64 = in_a.values().map(|&c| pairs(c)).sum();
    let together_b: u64 = in_b.values().map(|&c| pairs(c)).sum();
    let expected = together_a as f64 * together_b as f64 / pairs(n) as f64;
    let best = (together_a + together_b) as f64 / 2.0;
    if best == expected {
        return None;
    }
    Some((together_both as f64 - expected) / (best - expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Same grouping under other names.
        assert_eq!(adjusted_rand_index(&[0, 0, 1, 1], &[5, 5, 7, 7]), Some(1.0));
        // scikit-learn's documented examples: 4/7 and 0.2424...
        let ari = adjusted_rand_index(&[0, 0, 1, 1], &[0, 0, 1, 2]).unwrap();
        assert!((ari - 0.571_428_571).abs() < 1e-6, "{ari}");
        let ari = adjusted_rand_index(&[0, 0, 0, 1, 1, 1], &[0, 0, 1, 1, 2, 2]).unwrap();
        assert!((ari - 0.242_424_242).abs() < 1e-6, "{ari}");
        // Everything apart against structure: no agreement beyond chance.
        assert_eq!(adjusted_rand_index(&[0, 0, 1, 1], &[0, 1, 2, 3]), Some(0.0));
        assert_eq!(adjusted_rand_index(&[0, 0], &[1, 1]), None);
        assert_eq!(adjusted_rand_index(&[0], &[1]), None);
    }
}
