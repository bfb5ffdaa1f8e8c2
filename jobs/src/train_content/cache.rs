//! `--held-out-cache`: the held-out probabilities kept for the same inputs and parameters, so
//! that comparing decision rules takes seconds instead of a cross-validation.

use std::path::Path;

use super::examples::Example;
use super::{parameters, TrainContentArgs};

/// The `--held-out-cache` file.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct KeptProbabilities {
    pub(super) key: serde_json::Value,
    pub(super) probabilities: Vec<Vec<f32>>,
}

/// What the held-out probabilities depend on, short of the fitting code: the fit's
/// parameters, the mode, and a hash of everything the folds are fitted on and judged from.
pub(super) fn cache_key(
    examples: &[Example],
    judged: &[Example],
    args: &TrainContentArgs,
) -> serde_json::Value {
    // What a page is judged from: the rest of it is shared with its judged copy.
    let hash_judged_part = |hasher: &mut xxhash_rust::xxh3::Xxh3, example: &Example| {
        hasher.update(&(example.rows.len() as u64).to_le_bytes());
        for value in example.rows.iter().flatten() {
            hasher.update(&value.to_bits().to_le_bytes());
        }
        for inside in example.site_inside.iter().flatten() {
            hasher.update(&[u8::from(*inside)]);
        }
    };
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for example in examples {
        hasher.update(example.url.as_bytes());
        hasher.update(example.site.as_bytes());
        hash_judged_part(&mut hasher, example);
        for words in example.words.iter().chain(example.container_words.iter()) {
            hasher.update(&(words.len() as u64).to_le_bytes());
            for word in words {
                hasher.update(&word.to_le_bytes());
            }
        }
        for label in &example.labels {
            hasher.update(&label.tokens.to_le_bytes());
            hasher.update(&label.in_gold.to_le_bytes());
        }
        for weight in &example.weights {
            hasher.update(&weight.to_bits().to_le_bytes());
        }
    }
    // Without --held-out-alone the judged pages are `examples` themselves, hashed above.
    if args.held_out_alone {
        for example in judged {
            hash_judged_part(&mut hasher, example);
        }
    }
    serde_json::json!({
        "parameters": parameters(args),
        "held_out_alone": args.held_out_alone,
        "inputs": format!("{:016x}", hasher.digest()),
    })
}

/// The held-out probabilities kept in `path`, when they were written under `key` and hold
/// one probability per block of every page.
pub(super) fn cached(
    examples: &[Example],
    key: &serde_json::Value,
    path: &Path,
) -> Option<Vec<Vec<f32>>> {
    let text = std::fs::read_to_string(path).ok()?;
    let KeptProbabilities {
        key: kept_key,
        probabilities,
    } = serde_json::from_str(&text).ok()?;
    if kept_key != *key {
        eprintln!(
            "train-content: {} was written for other inputs, parameters or mode; computing anew",
            path.display()
        );
        return None;
    }
    let fits = probabilities.len() == examples.len()
        && examples
            .iter()
            .zip(&probabilities)
            .all(|(e, p)| e.blocks.len() == p.len());
    if fits {
        eprintln!(
            "train-content: held-out probabilities read from {}",
            path.display()
        );
    }
    fits.then_some(probabilities)
}
