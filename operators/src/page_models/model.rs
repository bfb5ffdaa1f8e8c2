//! The page-level templateness classifier x(i) ∈ [0, 1] (seed 000 §3 step 2, §5.2): four
//! logistic regressions, one per size bucket, on standardized [`crate::page_models::features`].
//!
//! Training takes [`Example`]s — labelled nodes from the site-level labels — drawn by a
//! [`StratifiedSample`] that keeps at most `cap` examples of each (bucket, label) stratum, chosen
//! by a hash of (page, node): the same crawl gives the same sample however it is split over
//! workers, and no stratum drowns the others. Fitting is [`crate::page_models::logistic`]'s Newton
//! solver; scoring is one dot product per node and lives here, so a model file is all a worker
//! needs.
//!
//! [`validate`] is host-disjoint cross-validation: examples are split into folds by host, so
//! the reported AUC is for sites the model never saw, which is the paper's claim. Each fold's
//! model is the one fitted on the other folds with their own standardization, computed in the
//! whole bucket's coordinates so that the folds share most of their work.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::page_models::features::{self, PageFeatures, BUCKETS, BUCKET_BOUNDS, COUNT, NAMES};
use crate::page_models::logistic;

/// The `format` field of every model file.
pub const FORMAT: &str = "stencil-templateness-model";
/// Bumped whenever features or scoring change meaning; a model of another version is refused.
pub const VERSION: u32 = 1;

/// The shipped default model (see docs/model.md for how it was made).
pub const DEFAULT_JSON: &str = include_str!("../../models/default.json");

/// A trained classifier, as saved in `model.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub format: String,
    pub version: u32,
    /// Feature names in row order; must equal [`features::NAMES`].
    pub features: Vec<String>,
    /// Size proxy weights the features were computed with.
    pub media_weight: f32,
    pub control_weight: f32,
    /// Upper area bounds of all buckets but the last.
    pub bucket_bounds: Vec<f32>,
    pub buckets: Vec<BucketModel>,
    /// How the model was trained: free-form facts for people (data, settings, counts).
    pub training: serde_json::Value,
    pub validation: Option<Validation>,
}

/// The logistic regression of one size bucket.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketModel {
    pub examples: u64,
    pub templates: u64,
    /// Standardization: z = (x − mean) / scale.
    pub mean: Vec<f32>,
    pub scale: Vec<f32>,
    pub weights: Vec<f32>,
    pub intercept: f32,
}

impl BucketModel {
    /// The logistic model's probability of *template* for a feature row.
    pub fn probability(&self, row: &[f32]) -> f32 {
        let mut z = f64::from(self.intercept);
        for (k, &x) in row.iter().enumerate().take(COUNT) {
            z += f64::from(self.weights[k]) * f64::from((x - self.mean[k]) / self.scale[k]);
        }
        sigmoid(z)
    }

    /// (weights, mean, scale) as rows of [`COUNT`].
    #[allow(clippy::type_complexity)]
    fn as_arrays(&self) -> Option<(&[f32; COUNT], &[f32; COUNT], &[f32; COUNT])> {
        Some((
            self.weights.as_slice().try_into().ok()?,
            self.mean.as_slice().try_into().ok()?,
            self.scale.as_slice().try_into().ok()?,
        ))
    }

    /// [`BucketModel::probability`] of [`LANES`] rows, each with its bucket's model, the same
    /// arithmetic in the same order per lane.
    fn probabilities_of_lanes(
        buckets: [&BucketModel; LANES],
        rows: [&[f32; COUNT]; LANES],
    ) -> [f32; LANES] {
        // `check` saw to it that every bucket has COUNT of each; as arrays, the loop below has
        // no bounds to check.
        let mut arrays = [None; LANES];
        for (slot, b) in arrays.iter_mut().zip(buckets) {
            *slot = b.as_arrays();
        }
        let [Some(a0), Some(a1), Some(a2), Some(a3)] = arrays else {
            return std::array::from_fn(|l| buckets[l].probability(rows[l]));
        };
        let (weights, mean, scale) = (
            [a0.0, a1.0, a2.0, a3.0],
            [a0.1, a1.1, a2.1, a3.1],
            [a0.2, a1.2, a2.2, a3.2],
        );
        let mut z = buckets.map(|b| f64::from(b.intercept));
        for k in 0..COUNT {
            // Gathered lane by lane so that the four divisions, the costliest step, are one
            // vector division.
            let x: [f32; LANES] = std::array::from_fn(|l| rows[l][k]);
            let m: [f32; LANES] = std::array::from_fn(|l| mean[l][k]);
            let s: [f32; LANES] = std::array::from_fn(|l| scale[l][k]);
            let w: [f32; LANES] = std::array::from_fn(|l| weights[l][k]);
            let standardized: [f32; LANES] = std::array::from_fn(|l| (x[l] - m[l]) / s[l]);
            for l in 0..LANES {
                z[l] += f64::from(w[l]) * f64::from(standardized[l]);
            }
        }
        z.map(sigmoid)
    }
}

/// Host-disjoint cross-validation figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    pub folds: u32,
    pub hosts: u64,
    pub examples: u64,
    /// ROC AUC of the out-of-fold scores of all buckets together (None if one class is absent).
    pub auc: Option<f64>,
    pub buckets: Vec<BucketValidation>,
    /// Of the examples scored ≥ 0.5, the share labelled template; of the templates, the share
    /// scored ≥ 0.5.
    pub precision: Option<f64>,
    pub recall: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketValidation {
    pub examples: u64,
    pub templates: u64,
    pub auc: Option<f64>,
}

impl Model {
    /// Parses and checks a model file: format, version and feature names must be this build's.
    pub fn from_json(json: &str) -> Result<Model, String> {
        let model: Model =
            serde_json::from_str(json).map_err(|e| format!("not a model file: {e}"))?;
        model.check()?;
        Ok(model)
    }

    /// The shipped default model.
    pub fn default_model() -> Model {
        // Checked by a unit test, so this cannot fail in a released binary.
        Model::from_json(DEFAULT_JSON).expect("the embedded default model is valid")
    }

    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).unwrap_or_default();
        json.push('\n');
        json
    }

    fn check(&self) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!("format is {:?}, not {FORMAT:?}", self.format));
        }
        if self.version != VERSION {
            return Err(format!(
                "model version {} but this build scores version {VERSION}: retrain it",
                self.version
            ));
        }
        if self
            .features
            .iter()
            .map(String::as_str)
            .ne(NAMES.iter().copied())
        {
            return Err("the model's features are not this build's: retrain it".to_string());
        }
        if self.bucket_bounds.len() + 1 != self.buckets.len() {
            return Err("bucket bounds and bucket models disagree".to_string());
        }
        for b in &self.buckets {
            if b.mean.len() != COUNT || b.scale.len() != COUNT || b.weights.len() != COUNT {
                return Err("a bucket model has the wrong number of weights".to_string());
            }
            // A hand-edited or damaged file must not turn scores into NaN.
            let finite = |v: &[f32]| v.iter().all(|x| x.is_finite());
            let sound = finite(&b.mean)
                && finite(&b.weights)
                && b.intercept.is_finite()
                && b.scale.iter().all(|s| s.is_finite() && *s > 0.0);
            if !sound {
                return Err("a bucket model has non-finite weights or a scale ≤ 0".to_string());
            }
        }
        Ok(())
    }

    /// The size bucket (index into `buckets`) of a node of this area.
    pub fn bucket(&self, area: f32) -> usize {
        features::bucket(area, &self.bucket_bounds)
    }

    /// The templateness of a node with this feature row and area.
    pub fn score(&self, row: &[f32], area: f32) -> f32 {
        self.buckets[self.bucket(area)].probability(row)
    }

    /// Scores of every node of a page; `None` for non-elements.
    ///
    /// Elements are scored [`LANES`] at a time, each lane with its own bucket: one node's dot
    /// product is a chain of dependent additions (kept in feature order, so the scores are
    /// [`BucketModel::probability`]'s to the bit), and a few chains side by side keep the
    /// processor busy where one leaves it waiting on the previous addition.
    pub fn score_page(&self, dom: &crate::dom::Dom, page: &PageFeatures) -> Vec<Option<f32>> {
        let mut scores = vec![None; page.len()];
        let elements: Vec<usize> = (0..page.len())
            .filter(|&i| dom.element(i).is_some())
            .collect();
        for lanes in elements.chunks(LANES) {
            // A short last set is padded with copies of its last node.
            let node = |l: usize| lanes[l.min(lanes.len() - 1)];
            let rows: [&[f32; COUNT]; LANES] = std::array::from_fn(|l| page.row(node(l)));
            let buckets: [&BucketModel; LANES] =
                std::array::from_fn(|l| &self.buckets[self.bucket(page.area[node(l)])]);
            let probabilities = BucketModel::probabilities_of_lanes(buckets, rows);
            for (&i, p) in lanes.iter().zip(probabilities) {
                scores[i] = Some(p);
            }
        }
        scores
    }
}

/// Nodes [`Model::score_page`] scores side by side.
const LANES: usize = 4;

/// One labelled node for training.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// Sampling priority: a hash of (page URL key, node).
    pub key: u64,
    /// Hash of the example's site, for host-disjoint folds.
    pub host: u64,
    pub bucket: u8,
    pub template: bool,
    pub features: Vec<f32>,
}

impl Example {
    pub fn new(
        url_key: u64,
        node: u32,
        host: &str,
        area: f32,
        template: bool,
        row: &[f32],
    ) -> Example {
        Example {
            key: Example::key_of(url_key, node),
            host: xxh3_64(host.as_bytes()),
            bucket: features::bucket(area, &BUCKET_BOUNDS) as u8,
            template,
            features: row.to_vec(),
        }
    }

    /// The sampling priority of a page's node.
    pub fn key_of(url_key: u64, node: u32) -> u64 {
        let mut bytes = [0u8; 12];
        bytes[..8].copy_from_slice(&url_key.to_le_bytes());
        bytes[8..].copy_from_slice(&node.to_le_bytes());
        xxh3_64(&bytes)
    }

    /// A total order: by key, then by content, so that duplicates (one URL read twice) are
    /// resolved the same way whatever order they arrive in.
    fn order(&self) -> (u64, bool, Vec<u32>) {
        (
            self.key,
            self.template,
            self.features.iter().map(|f| f.to_bits()).collect(),
        )
    }
}

/// At most `cap` examples per (bucket, label) stratum: those with the smallest keys. Merging
/// local samples gives the sample of the union, so workers sample locally and send only their
/// samples. A key offered twice (a URL read twice) is kept once, as the smaller example in
/// [`Example::order`], so the result does not depend on arrival order.
pub struct StratifiedSample {
    cap: usize,
    strata: Vec<Stratum>,
    offered: u64,
}

/// One stratum's candidates. `run` offers every labelled node of every sampled page (millions),
/// so an offer must cost little: candidates are pushed unsorted and, when there are half as
/// many again as the cap, sorted and cut back to the cap smallest keys, whose largest then
/// turns away every bigger key at once. (An ordered map keeping exactly `cap` examples pays a
/// tree walk and a shift of 48-byte values per offer, a measurable share of `run`.) What
/// [`Stratum::compact`] leaves is the same as an exact bottom-k would hold.
struct Stratum {
    candidates: Vec<Example>,
    /// No example with a larger key can be among the `cap` smallest (`u64::MAX` until the
    /// stratum first fills).
    bound: u64,
}

impl Stratum {
    /// The `cap` smallest distinct keys, each with its smallest example in [`Example::order`],
    /// sorted by key.
    fn compact(&mut self, cap: usize) {
        let candidates = &mut self.candidates;
        sort_canonically(candidates);
        candidates.dedup_by_key(|e| e.key);
        candidates.truncate(cap);
        if candidates.len() == cap {
            self.bound = candidates.last().map_or(u64::MAX, |e| e.key);
        }
    }
}

/// Sorts examples in [`Example::order`]: by key, and only the rare runs of one key (a URL read
/// twice) by the rest, which copies each example's features.
fn sort_canonically(examples: &mut [Example]) {
    examples.sort_unstable_by_key(|e| e.key);
    let mut start = 0;
    while start < examples.len() {
        let key = examples[start].key;
        let mut end = start + 1;
        while end < examples.len() && examples[end].key == key {
            end += 1;
        }
        if end - start > 1 {
            examples[start..end].sort_by_cached_key(Example::order);
        }
        start = end;
    }
}

impl StratifiedSample {
    pub fn new(cap: usize) -> StratifiedSample {
        StratifiedSample {
            cap,
            strata: (0..BUCKETS * 2)
                .map(|_| Stratum {
                    candidates: Vec::new(),
                    bound: u64::MAX,
                })
                .collect(),
            offered: 0,
        }
    }

    pub fn offer(&mut self, example: Example) {
        self.offered += 1;
        let cap = self.cap;
        let stratum = &mut self.strata[Self::stratum(example.bucket, example.template)];
        if example.key > stratum.bound {
            return;
        }
        stratum.candidates.push(example);
        if stratum.candidates.len() > cap + cap / 2 {
            stratum.compact(cap);
        }
    }

    /// [`StratifiedSample::offer`] of a page's node, its example made only when the sample
    /// may keep it: once the strata are full most nodes are turned away before their feature
    /// row is copied to the heap.
    pub fn offer_node(
        &mut self,
        (url_key, node): (u64, u32),
        host_hash: u64,
        area: f32,
        template: bool,
        row: &[f32],
    ) {
        let key = Example::key_of(url_key, node);
        let bucket = features::bucket(area, &BUCKET_BOUNDS) as u8;
        if key > self.strata[Self::stratum(bucket, template)].bound {
            self.offered += 1;
            return;
        }
        self.offer(Example {
            key,
            host: host_hash,
            bucket,
            template,
            features: row.to_vec(),
        });
    }

    fn stratum(bucket: u8, template: bool) -> usize {
        usize::from(bucket).min(BUCKETS - 1) * 2 + usize::from(template)
    }

    /// Examples offered so far (sampled or not).
    pub fn offered(&self) -> u64 {
        self.offered
    }

    /// The sample in a canonical order (by key, then content).
    pub fn into_examples(self) -> Vec<Example> {
        let cap = self.cap;
        let mut all: Vec<Example> = self
            .strata
            .into_iter()
            .flat_map(|mut stratum| {
                stratum.compact(cap);
                stratum.candidates
            })
            .collect();
        sort_canonically(&mut all);
        all
    }
}

/// Fitting settings.
#[derive(Clone, Copy, Debug)]
pub struct FitParams {
    /// L2 penalty on the standardized weights (α: ½·α·‖w‖² added to the summed log loss, the
    /// intercept unpenalized). The default, 1000, is strong on purpose: the labels come from a
    /// few hundred sites, the model is for all others. On WCXB-dev's unseen sites and on L3S-GN1
    /// the Basic scores' token F1 is higher at 1000 than at α = 1, for a slightly lower
    /// host-disjoint AUC on the automatic labels (docs/model.md).
    pub l2: f64,
    /// Host-disjoint folds for [`validate`].
    pub folds: u32,
}

impl Default for FitParams {
    fn default() -> Self {
        FitParams {
            l2: 1000.0,
            folds: 5,
        }
    }
}

/// Fits one logistic regression per size bucket on `examples` (in canonical order).
pub fn fit(
    examples: &[Example],
    params: &FitParams,
    training: serde_json::Value,
) -> Result<Model, String> {
    let buckets = fit_buckets(examples.iter(), params, None)?;
    Ok(Model {
        format: FORMAT.to_string(),
        version: VERSION,
        features: NAMES.iter().map(|s| s.to_string()).collect(),
        media_weight: features::MEDIA_WEIGHT,
        control_weight: features::CONTROL_WEIGHT,
        bucket_bounds: BUCKET_BOUNDS.to_vec(),
        buckets,
        training,
        validation: None,
    })
}

/// The four bucket models, fitted on the examples `examples` yields.
fn fit_buckets<'a>(
    examples: impl Iterator<Item = &'a Example> + Clone,
    params: &FitParams,
    start: Option<&Model>,
) -> Result<Vec<BucketModel>, String> {
    (0..BUCKETS)
        .map(|b| {
            let rows: Vec<&Example> = examples
                .clone()
                .filter(|e| usize::from(e.bucket) == b)
                .collect();
            fit_bucket(&rows, params, start.and_then(|m| m.buckets.get(b)))
        })
        .collect()
}

fn fit_bucket(
    rows: &[&Example],
    params: &FitParams,
    start: Option<&BucketModel>,
) -> Result<BucketModel, String> {
    let n = rows.len();
    let templates = rows.iter().filter(|e| e.template).count();
    let mut columns = feature_columns(rows.iter().copied());
    let moments = Moments::of(&columns, 0..n);
    let scale = moments.scale();
    let mut model = BucketModel {
        examples: n as u64,
        templates: templates as u64,
        mean: moments.mean.iter().map(|&m| m as f32).collect(),
        scale: scale.iter().map(|&s| s as f32).collect(),
        weights: vec![0.0; COUNT],
        intercept: base_rate(templates, n),
    };
    if templates == 0 || templates == n {
        return Ok(model);
    }
    standardize(&mut columns, &moments.mean, &scale);
    let columns: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
    let y: Vec<bool> = rows.iter().map(|e| e.template).collect();
    let start = start.map(start_point);
    let fitted = logistic::fit(&columns, &y, params.l2, start.as_ref())
        .map_err(|e| format!("logistic regression: {e}"))?;
    for (weight, &w) in model.weights.iter_mut().zip(&fitted.weights) {
        *weight = w as f32;
    }
    model.intercept = fitted.intercept as f32;
    Ok(model)
}

/// The log-odds of the smoothed base rate: with one class only (or none), all there is to
/// learn.
fn base_rate(templates: usize, n: usize) -> f32 {
    let p = (templates as f64 + 1.0) / (n as f64 + 2.0);
    (p / (1.0 - p)).ln() as f32
}

/// The features of `rows`, one column per feature: the layout the solver's dot products want.
/// Filled row by row, so that each example's features are read once, in order (they are small
/// allocations of their own, scattered over the heap).
fn feature_columns<'a>(rows: impl ExactSizeIterator<Item = &'a Example>) -> Vec<Vec<f64>> {
    let n = rows.len();
    let mut columns: Vec<Vec<f64>> = (0..COUNT).map(|_| Vec::with_capacity(n)).collect();
    for e in rows {
        for (column, &x) in columns.iter_mut().zip(&e.features) {
            column.push(f64::from(x));
        }
    }
    columns
}

/// z = (x − mean) / scale, in place.
fn standardize(columns: &mut [Vec<f64>], mean: &[f64], scale: &[f64]) {
    for ((column, m), s) in columns.iter_mut().zip(mean).zip(scale) {
        for x in column {
            *x = (*x - m) / s;
        }
    }
}

/// The count, means and centred sums of squares of the features over some rows: what a
/// standardization is made of, and, unlike it, mergeable over disjoint sets of rows.
#[derive(Clone, Debug)]
struct Moments {
    n: usize,
    mean: Vec<f64>,
    m2: Vec<f64>,
}

impl Moments {
    fn empty() -> Moments {
        Moments {
            n: 0,
            mean: vec![0.0; COUNT],
            m2: vec![0.0; COUNT],
        }
    }

    /// Over `rows` of feature `columns`, in two passes, the mean first: a sum of squares about
    /// the mean loses no precision to a feature's offset, and is exactly zero for a constant
    /// feature (features are f32, and sums of up to 2²⁹ of them are exact in f64, so the mean
    /// of a constant is the constant).
    fn of(columns: &[Vec<f64>], rows: Range<usize>) -> Moments {
        let n = rows.len();
        let mut moments = Moments::empty();
        moments.n = n;
        for ((column, mean), m2) in columns.iter().zip(&mut moments.mean).zip(&mut moments.m2) {
            let values = &column[rows.clone()];
            *mean = values.iter().fold(0.0, |sum, x| sum + x) / n.max(1) as f64;
            *m2 = values
                .iter()
                .fold(0.0, |sum, x| sum + (x - *mean) * (x - *mean));
        }
        moments
    }

    /// The moments of the union of two disjoint sets of rows (Chan, Golub and LeVeque's
    /// update). A feature constant on both stays exactly constant: its means agree, so nothing
    /// is added to its sum of squares.
    fn merge(&self, other: &Moments) -> Moments {
        if self.n == 0 {
            return other.clone();
        }
        if other.n == 0 {
            return self.clone();
        }
        let (a, b) = (self.n as f64, other.n as f64);
        let n = a + b;
        let mut merged = self.clone();
        merged.n += other.n;
        for ((mean, m2), (&other_mean, &other_m2)) in merged
            .mean
            .iter_mut()
            .zip(&mut merged.m2)
            .zip(other.mean.iter().zip(&other.m2))
        {
            let delta = other_mean - *mean;
            *mean += delta * b / n;
            *m2 += other_m2 + delta * delta * a * b / n;
        }
        merged
    }

    /// The standard deviations, or 1 for a constant feature, whose weight the penalty then
    /// holds at zero.
    fn scale(&self) -> Vec<f64> {
        self.m2
            .iter()
            .map(|v| {
                let sd = (v / self.n.max(1) as f64).sqrt();
                if sd > 1e-9 {
                    sd
                } else {
                    1.0
                }
            })
            .collect()
    }
}

/// A bucket model's weights as the point a fit starts from.
fn start_point(model: &BucketModel) -> logistic::Fit {
    logistic::Fit {
        weights: model.weights.iter().map(|&w| f64::from(w)).collect(),
        intercept: f64::from(model.intercept),
        iterations: 0,
        hessians: 0,
    }
}

/// The logistic function, rounded as scores are stored.
fn sigmoid(z: f64) -> f32 {
    (1.0 / (1.0 + (-z).exp())) as f32
}

/// Host-disjoint cross-validation: examples are split into `params.folds` folds by host hash,
/// each fold scored by a model fitted on the others.
///
/// Every fold's fit is done in the coordinates of the whole bucket (the mean m and scale s the
/// full fit standardizes with), which makes the folds share most of their work. A fold's own
/// standardization, with the mean mₖ and scale sₖ of the rows it is fitted on, only
/// reparametrizes its model: a weight wⱼ on (x − mₖⱼ)/sₖⱼ is the weight vⱼ = wⱼ·sⱼ/sₖⱼ on
/// (x − mⱼ)/sⱼ, the shift of the means goes to the unpenalized intercept, and the penalty
/// ½·α·Σ wⱼ² becomes ½·α·Σ (sₖⱼ/sⱼ)²·vⱼ². With that penalty the fold's optimum scores every
/// example as its own standardization would (to the solver's tolerance), but
/// - the bucket is standardized once, into columns ordered by fold, so a fold's rows are a
///   range and the rows it is fitted on are the rest;
/// - every fold starts at the same point, `fitted`'s weights (in these very coordinates when
///   it was fitted on `examples`; close to each fold's optimum, so Newton needs two or three
///   steps), and XᵀWX there is a sum over folds: one pass gives each fold's share, and each
///   fold's first Hessian is the sum of the others'.
///
/// `fitted` does not leak into the scores: every fold's fit converges to its own optimum.
pub fn validate(
    examples: &[Example],
    params: &FitParams,
    fitted: &Model,
) -> Result<Validation, String> {
    let folds = params.folds.max(2);
    let probabilities = out_of_fold(examples, params, fitted, folds)?.probabilities;
    let scored: Vec<(u8, f32, bool)> = examples
        .iter()
        .zip(probabilities)
        .map(|(e, p)| (e.bucket, p, e.template))
        .collect();
    let all: Vec<(f32, bool)> = scored.iter().map(|&(_, s, t)| (s, t)).collect();
    let buckets = (0..BUCKETS as u8)
        .map(|b| {
            let of: Vec<(f32, bool)> = scored
                .iter()
                .filter(|e| e.0 == b)
                .map(|&(_, s, t)| (s, t))
                .collect();
            BucketValidation {
                examples: of.len() as u64,
                templates: of.iter().filter(|e| e.1).count() as u64,
                auc: roc_auc(&of),
            }
        })
        .collect();
    let predicted = all.iter().filter(|e| e.0 >= 0.5).count();
    let hits = all.iter().filter(|e| e.0 >= 0.5 && e.1).count();
    let templates = all.iter().filter(|e| e.1).count();
    let mut hosts: Vec<u64> = examples.iter().map(|e| e.host).collect();
    hosts.sort_unstable();
    hosts.dedup();
    Ok(Validation {
        folds,
        hosts: hosts.len() as u64,
        examples: examples.len() as u64,
        auc: roc_auc(&all),
        buckets,
        precision: (predicted > 0).then(|| hits as f64 / predicted as f64),
        recall: (templates > 0).then(|| hits as f64 / templates as f64),
    })
}

/// Out-of-fold scores, and what the fold fits cost.
struct OutOfFold {
    /// Each example's probability of template by the model fitted without its fold.
    probabilities: Vec<f32>,
    /// Fold fits Newton solved (the others had one class and scored the base rate).
    fits: u32,
    /// Hessians those fits built.
    hessians: u32,
}

/// Every example's probability by the model of its bucket fitted without its fold.
fn out_of_fold(
    examples: &[Example],
    params: &FitParams,
    fitted: &Model,
    folds: u32,
) -> Result<OutOfFold, String> {
    if let Some(e) = examples
        .iter()
        .find(|e| usize::from(e.bucket) >= BUCKETS || e.features.len() != COUNT)
    {
        return Err(format!(
            "an example of bucket {} with {} features: not from this build",
            e.bucket,
            e.features.len()
        ));
    }
    let mut out = OutOfFold {
        probabilities: vec![0.0; examples.len()],
        fits: 0,
        hessians: 0,
    };
    // The columns a fold's model is fitted on, reused by every fold.
    let mut buffer = Vec::new();
    for b in 0..BUCKETS {
        let rows = (0..examples.len())
            .filter(|&i| usize::from(examples[i].bucket) == b)
            .collect();
        let bucket = FoldedBucket::new(examples, rows, folds);
        let start = fitted
            .buckets
            .get(b)
            .filter(|m| m.weights.len() == COUNT)
            .map_or_else(
                || logistic::Fit {
                    weights: vec![0.0; COUNT],
                    intercept: 0.0,
                    iterations: 0,
                    hessians: 0,
                },
                start_point,
            );
        bucket.score_folds(params.l2, &start, &mut out, &mut buffer)?;
    }
    Ok(out)
}

/// One bucket's examples for cross-validation: ordered by fold, so that a fold is a range of
/// rows, and standardized once with the whole bucket's mean and scale.
struct FoldedBucket {
    /// Indices into `examples`, fold by fold.
    rows: Vec<usize>,
    /// Each fold's range of `rows`.
    folds: Vec<Range<usize>>,
    /// The features' moments over each fold, from which the scale of any fold's complement
    /// follows without another pass over the examples.
    moments: Vec<Moments>,
    /// The standardization's scale over the whole bucket.
    scale: Vec<f64>,
    /// One per feature, in the order of `rows`.
    columns: Vec<Vec<f64>>,
    y: Vec<bool>,
}

impl FoldedBucket {
    /// `rows` (indices into `examples`) in canonical order.
    fn new(examples: &[Example], rows: Vec<usize>, folds: u32) -> FoldedBucket {
        let mut by_fold = vec![Vec::new(); folds as usize];
        for i in rows {
            // Below `folds`, so it fits a usize.
            by_fold[(examples[i].host % u64::from(folds)) as usize].push(i);
        }
        let mut ranges = Vec::with_capacity(by_fold.len());
        let mut start = 0;
        for fold in &by_fold {
            ranges.push(start..start + fold.len());
            start += fold.len();
        }
        let rows = by_fold.concat();
        let mut columns = feature_columns(rows.iter().map(|&i| &examples[i]));
        let moments: Vec<Moments> = (ranges.iter())
            .map(|fold| Moments::of(&columns, fold.clone()))
            .collect();
        // The full fit's standardization (to rounding: it summed in another order).
        let all = moments.iter().fold(Moments::empty(), |all, m| all.merge(m));
        let scale = all.scale();
        standardize(&mut columns, &all.mean, &scale);
        let y = rows.iter().map(|&i| examples[i].template).collect();
        FoldedBucket {
            rows,
            folds: ranges,
            moments,
            scale,
            columns,
            y,
        }
    }

    /// Scores every fold's rows into `out` by the model fitted on the other folds, all fits
    /// starting at `start`.
    fn score_folds(
        &self,
        alpha: f64,
        start: &logistic::Fit,
        out: &mut OutOfFold,
        buffer: &mut Vec<f64>,
    ) -> Result<(), String> {
        let templates = self.y.iter().filter(|&&t| t).count();
        let trained_on: Vec<(usize, usize)> = self
            .folds
            .iter()
            .map(|fold| {
                let held_out = self.y[fold.clone()].iter().filter(|&&t| t).count();
                (self.rows.len() - fold.len(), templates - held_out)
            })
            .collect();
        let one_class = |&(n, templates): &(usize, usize)| templates == 0 || templates == n;
        let shares = if trained_on.iter().all(one_class) {
            Vec::new()
        } else {
            let columns: Vec<&[f64]> = self.columns.iter().map(Vec::as_slice).collect();
            logistic::data_hessians(&columns, start, &self.folds)?
        };
        for (k, counts) in trained_on.iter().enumerate() {
            if self.folds[k].is_empty() {
                // Nothing to score.
                continue;
            }
            if one_class(counts) {
                let p = sigmoid(f64::from(base_rate(counts.1, counts.0)));
                for &i in &self.rows[self.folds[k].clone()] {
                    out.probabilities[i] = p;
                }
                continue;
            }
            let fit = self.fit_without(k, alpha, start, &shares, buffer)?;
            out.fits += 1;
            out.hessians += fit.hessians;
            self.score(k, &fit, &mut out.probabilities);
        }
        Ok(())
    }

    /// The model fitted on all folds but `k`, in the bucket's coordinates: the penalty of each
    /// weight rescaled by the fold's standardization (see [`validate`]), and the first Hessian
    /// summed from the other folds' `shares` of it at `start`. `buffer` holds the columns of the
    /// rows it is fitted on; reused from fold to fold, it is allocated once.
    fn fit_without(
        &self,
        k: usize,
        alpha: f64,
        start: &logistic::Fit,
        shares: &[Vec<f64>],
        buffer: &mut Vec<f64>,
    ) -> Result<logistic::Fit, String> {
        let fold = self.folds[k].clone();
        let penalty = self.penalty_without(k, alpha);
        buffer.clear();
        for column in &self.columns {
            buffer.extend_from_slice(&column[..fold.start]);
            buffer.extend_from_slice(&column[fold.end..]);
        }
        let y = all_but(&self.y, &fold);
        // A complement without rows has no template, so it is never fitted: `max` only spares
        // chunks_exact a length of zero.
        let columns: Vec<&[f64]> = buffer.chunks_exact(y.len().max(1)).collect();
        let mut hessian = vec![0.0; shares.first().map_or(0, Vec::len)];
        for (_, share) in shares.iter().enumerate().filter(|&(j, _)| j != k) {
            for (sum, x) in hessian.iter_mut().zip(share) {
                *sum += x;
            }
        }
        logistic::fit_with(
            &columns,
            &y,
            logistic::Penalty::PerWeight(&penalty),
            Some(start),
            Some(&hessian),
        )
        .map_err(|e| format!("logistic regression: {e}"))
    }

    /// α·(sₖⱼ/sⱼ)² for each weight j: sₖⱼ is the scale the rows of all folds but `k` would have
    /// been standardized with, sⱼ the bucket's.
    fn penalty_without(&self, k: usize, alpha: f64) -> Vec<f64> {
        let trained_on = (self.moments.iter().enumerate())
            .filter(|&(j, _)| j != k)
            .fold(Moments::empty(), |all, (_, m)| all.merge(m));
        trained_on
            .scale()
            .iter()
            .zip(&self.scale)
            .map(|(sk, s)| alpha * (sk / s) * (sk / s))
            .collect()
    }

    /// Scores the rows of fold `k` by `fit`, a model in the bucket's coordinates.
    fn score(&self, k: usize, fit: &logistic::Fit, probabilities: &mut [f32]) {
        let fold = self.folds[k].clone();
        let mut z = vec![fit.intercept; fold.len()];
        for (column, &w) in self.columns.iter().zip(&fit.weights) {
            for (zi, &x) in z.iter_mut().zip(&column[fold.clone()]) {
                *zi += w * x;
            }
        }
        for (&i, zi) in self.rows[fold].iter().zip(z) {
            probabilities[i] = sigmoid(zi);
        }
    }
}

/// All of `values` (one per row) but those of `fold`.
fn all_but<T: Copy>(values: &[T], fold: &Range<usize>) -> Vec<T> {
    [&values[..fold.start], &values[fold.end..]].concat()
}

/// ROC AUC of scores against labels (true = positive): the probability that a random positive
/// outscores a random negative, ties counting half (Mann–Whitney U). None without both classes.
pub fn roc_auc(scored: &[(f32, bool)]) -> Option<f64> {
    let positives = scored.iter().filter(|e| e.1).count() as f64;
    let negatives = scored.len() as f64 - positives;
    if positives == 0.0 || negatives == 0.0 {
        return None;
    }
    let mut sorted: Vec<(f32, bool)> = scored.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Sum of the positives' ranks, tied scores sharing their mean rank.
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j < sorted.len() && sorted[j].0 == sorted[i].0 {
            j += 1;
        }
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        rank_sum += mean_rank * sorted[i..j].iter().filter(|e| e.1).count() as f64;
        i = j;
    }
    Some((rank_sum - positives * (positives + 1.0) / 2.0) / (positives * negatives))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_scored_in_lanes_gets_each_nodes_own_score() {
        let model = Model::default_model();
        let mut padded = false;
        for paragraphs in [9, 10] {
            let html = format!(
                "<html><head><title>Lanes of nodes</title></head><body><nav><a href=/a>Home</a>\
                 <a href=/b>About</a></nav><main><h1>Lanes of nodes</h1>{}</main>\
                 <footer>© 2026 <img src=x.png></footer></body></html>",
                (0..paragraphs)
                    .map(|k| format!("<p>Paragraph {k} {}</p>", "with words ".repeat(k * 7)))
                    .collect::<String>()
            );
            let dom = crate::dom::parse(&html, 1 << 20);
            let page =
                features::compute(&dom, &crate::dom::subtree::summarize(&dom, "example.com"));
            let scores = model.score_page(&dom, &page);
            let buckets: std::collections::BTreeSet<usize> = (0..page.len())
                .map(|i| model.bucket(page.area[i]))
                .collect();
            assert!(buckets.len() > 1, "the page spans buckets: {buckets:?}");
            for (i, score) in scores.iter().enumerate() {
                let own = dom
                    .element(i)
                    .map(|_| model.score(page.row(i), page.area[i]).to_bits());
                assert_eq!(score.map(f32::to_bits), own, "node {i}");
            }
            padded |= scores.iter().filter(|s| s.is_some()).count() % LANES != 0;
        }
        assert!(padded, "one page ends in a short set of lanes");
    }

    #[test]
    fn auc_of_known_orders() {
        assert_eq!(roc_auc(&[(0.1, false), (0.9, true)]), Some(1.0));
        assert_eq!(roc_auc(&[(0.9, false), (0.1, true)]), Some(0.0));
        assert_eq!(roc_auc(&[(0.5, false), (0.5, true)]), Some(0.5));
        assert_eq!(
            roc_auc(&[(0.1, false), (0.4, true), (0.5, false), (0.8, true)]),
            Some(0.75)
        );
        assert_eq!(roc_auc(&[(0.1, true)]), None);
    }

    #[test]
    fn the_default_model_loads() {
        let model = Model::default_model();
        assert_eq!(model.buckets.len(), BUCKETS);
        assert!(model.validation.is_some());
    }

    /// Examples where feature 0 decides the label, with some noise, over many hosts.
    fn synthetic(n: usize) -> Vec<Example> {
        (0..n)
            .map(|i| {
                let h = xxh3_64(&(i as u64).to_le_bytes());
                let signal = (h % 1000) as f32 / 1000.0;
                let template = signal + ((h >> 20) % 100) as f32 / 500.0 > 0.6;
                let mut row = vec![0.0; COUNT];
                row[0] = signal;
                row[1] = ((h >> 40) % 7) as f32; // noise
                let area = [10.0, 100.0, 1000.0, 10_000.0][i % 4];
                Example::new(
                    h,
                    i as u32,
                    &format!("host{}", i % 40),
                    area,
                    template,
                    &row,
                )
            })
            .collect()
    }

    #[test]
    fn fits_a_separable_signal_and_validates_by_host() {
        let examples = synthetic(4000);
        // Light regularization: 1,000 rows per bucket would be shrunk hard by the default.
        let params = FitParams { l2: 1.0, folds: 5 };
        let model = fit(&examples, &params, serde_json::json!({"test": true})).unwrap();
        let back = Model::from_json(&model.to_json()).unwrap();
        assert_eq!(back, model, "model.json round-trips exactly");
        let mut damaged = model.clone();
        damaged.buckets[2].scale[7] = 0.0;
        assert!(
            Model::from_json(&damaged.to_json()).is_err(),
            "a zero scale is refused"
        );
        for b in &model.buckets {
            assert!(
                b.weights[0] > 1.0,
                "the signal gets a large positive weight: {b:?}"
            );
            assert!(b.weights[0].abs() > 5.0 * b.weights[1].abs());
        }
        let mut row = vec![0.0; COUNT];
        row[0] = 0.95;
        assert!(model.score(&row, 10.0) > 0.9);
        row[0] = 0.05;
        assert!(model.score(&row, 10_000.0) < 0.1);
        let validation = validate(&examples, &params, &model).unwrap();
        assert!(validation.auc.unwrap() > 0.9, "{validation:?}");
        assert_eq!(validation.examples, 4000);
        assert_eq!(validation.hosts, 40);
    }

    #[test]
    fn one_class_buckets_fall_back_to_the_base_rate() {
        let examples: Vec<Example> = synthetic(400)
            .into_iter()
            .map(|mut e| {
                e.template = false;
                e
            })
            .collect();
        let model = fit(&examples, &FitParams::default(), serde_json::Value::Null).unwrap();
        let row = vec![0.5; COUNT];
        assert!(model.score(&row, 10.0) < 0.05);
    }

    #[test]
    fn sampling_is_the_same_however_the_input_is_split() {
        let examples = synthetic(3000);
        let mut whole = StratifiedSample::new(100);
        for e in examples.iter().cloned() {
            whole.offer(e);
        }
        // Three "workers", each also seeing some duplicates, merged in another order.
        let mut parts: Vec<StratifiedSample> = (0..3).map(|_| StratifiedSample::new(100)).collect();
        for (i, e) in examples.iter().enumerate() {
            parts[i % 3].offer(e.clone());
            if i % 10 == 0 {
                parts[(i + 1) % 3].offer(e.clone());
            }
        }
        let mut merged = StratifiedSample::new(100);
        for part in parts.into_iter().rev() {
            for e in part.into_examples() {
                merged.offer(e);
            }
        }
        let (a, b) = (whole.into_examples(), merged.into_examples());
        assert_eq!(a, b);
        assert!(a.len() <= 800 && a.len() >= 400, "{}", a.len());
    }

    /// The sample as its definition says: per stratum, the `cap` smallest distinct keys, each
    /// with its smallest example in [`Example::order`].
    fn bottom_k_by_definition(examples: &[Example], cap: usize) -> Vec<Example> {
        let mut best: std::collections::BTreeMap<(usize, u64), Example> = Default::default();
        for e in examples {
            let slot = (StratifiedSample::stratum(e.bucket, e.template), e.key);
            match best.get(&slot) {
                Some(old) if old.order() <= e.order() => {}
                _ => {
                    best.insert(slot, e.clone());
                }
            }
        }
        let mut per_stratum: Vec<usize> = vec![0; BUCKETS * 2];
        let mut all: Vec<Example> = best
            .into_iter()
            .filter(|((stratum, _), _)| {
                per_stratum[*stratum] += 1;
                per_stratum[*stratum] <= cap
            })
            .map(|(_, e)| e)
            .collect();
        all.sort_by_cached_key(Example::order);
        all
    }

    #[test]
    fn the_sample_is_the_bottom_k_of_each_stratum_whatever_the_offers() {
        let mut examples = synthetic(5000);
        // Duplicate keys with other content (a URL read twice, its page changed).
        for i in (0..5000).step_by(7) {
            let mut twin = examples[i].clone();
            twin.features[1] += 1.0;
            examples.push(twin);
        }
        for cap in [1, 2, 37, 100, 700, 10_000] {
            let expected = bottom_k_by_definition(&examples, cap);
            for rotation in [0, 1234, 4999] {
                let mut sample = StratifiedSample::new(cap);
                let (a, b) = examples.split_at(rotation);
                for e in b.iter().chain(a).cloned() {
                    sample.offer(e);
                }
                assert_eq!(sample.offered(), examples.len() as u64);
                assert_eq!(sample.into_examples(), expected, "cap {cap}");
            }
            // offer_node gives the same sample as offering the examples made in full.
            let mut by_node = StratifiedSample::new(cap);
            let mut by_example = StratifiedSample::new(cap);
            for i in 0..3000u32 {
                let area = [10.0, 100.0, 1000.0, 10_000.0][i as usize % 4];
                let row = [i as f32; COUNT];
                let url_key = u64::from(i / 50);
                by_node.offer_node((url_key, i), 9, area, i % 3 == 0, &row);
                let mut e = Example::new(url_key, i, "h", area, i % 3 == 0, &row);
                e.host = 9;
                by_example.offer(e);
            }
            assert_eq!(by_node.offered(), by_example.offered());
            assert_eq!(by_node.into_examples(), by_example.into_examples());
        }
    }

    /// Out-of-fold scores the straightforward way, which [`validate`]'s fits in the bucket's
    /// coordinates must match: per fold, the bucket models refitted on the other folds, each
    /// with its own standardization.
    fn out_of_fold_by_refitting(
        examples: &[Example],
        params: &FitParams,
        fitted: &Model,
        folds: u32,
    ) -> Vec<f32> {
        let mut probabilities = vec![f32::NAN; examples.len()];
        for fold in 0..u64::from(folds) {
            let in_fold = |e: &Example| e.host % u64::from(folds) == fold;
            let buckets = fit_buckets(
                examples.iter().filter(|e| !in_fold(e)),
                params,
                Some(fitted),
            )
            .expect("fit");
            for (p, e) in probabilities.iter_mut().zip(examples) {
                if in_fold(e) {
                    *p = buckets[usize::from(e.bucket)].probability(&e.features);
                }
            }
        }
        probabilities
    }

    /// Examples whose folds are standardized differently: a feature whose spread grows tenfold
    /// from fold to fold, one far from zero whose mean drifts, one constant on all folds but
    /// fold 0 (so constant where fold 0's model is fitted) and one constant within fold 2. In
    /// bucket 2 only fold 1 has templates, so fold 1's model there is the base rate; bucket 3
    /// has no templates at all.
    fn unevenly_scaled(n: usize, folds: u64) -> Vec<Example> {
        (0..n)
            .map(|i| {
                let h = xxh3_64(&(i as u64).to_le_bytes());
                let unit = |shift: u32| ((h >> shift) % 1000) as f32 / 1000.0 - 0.5;
                let host = format!("host{}", i % 61);
                let fold = xxh3_64(host.as_bytes()) % folds;
                let mut row = vec![0.0; COUNT];
                row[0] = unit(0);
                row[1] = unit(10) * 10f32.powi(fold as i32);
                row[2] = 100.0 + 5.0 * fold as f32 + unit(20);
                row[3] = if fold == 0 { unit(30) } else { 3.0 };
                row[4] = if fold == 2 { 7.0 } else { unit(40) };
                row[5] = unit(50) * 0.001;
                let signal = 3.0 * row[0]
                    + row[1] / 10f32.powi(fold as i32)
                    + unit(20)
                    + if fold == 0 { row[3] } else { 0.0 }
                    + 2.0 * unit(5);
                let bucket = i % 4;
                let template = match bucket {
                    2 => fold == 1 && signal > 0.0,
                    3 => false,
                    _ => signal > 0.2,
                };
                let area = [10.0, 100.0, 1000.0, 10_000.0][bucket];
                Example::new(h, i as u32, &host, area, template, &row)
            })
            .collect()
    }

    #[test]
    fn folds_fitted_in_the_buckets_coordinates_score_as_refitted_folds() {
        let folds = 5;
        let examples = unevenly_scaled(6000, u64::from(folds));
        let in_fold = |e: &Example, fold| e.host % u64::from(folds) == fold;
        assert!(
            (0..u64::from(folds)).all(|f| examples.iter().any(|e| in_fold(e, f))),
            "every fold has hosts"
        );
        for l2 in [1.0, 1000.0] {
            let params = FitParams { l2, folds };
            let fitted = fit(&examples, &params, serde_json::Value::Null).expect("fit");
            let reference = out_of_fold_by_refitting(&examples, &params, &fitted, folds);
            let shared = out_of_fold(&examples, &params, &fitted, folds).expect("folds");
            assert!(
                shared
                    .probabilities
                    .iter()
                    .chain(&reference)
                    .all(|p| p.is_finite()),
                "every example scored"
            );
            let worst = shared
                .probabilities
                .iter()
                .zip(&reference)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(worst < 1e-5, "α = {l2}: probabilities differ by {worst}");
            // Buckets 0 and 1 fit every fold, bucket 2 all but fold 1, bucket 3 none.
            assert_eq!(shared.fits, 3 * folds - 1, "α = {l2}");
            // Refitting builds 36 Hessians for these 14 fits at α = 1 and 32 at 1000; with the
            // first one shared, 21 and 17 are left.
            assert!(
                shared.hessians < 2 * shared.fits,
                "α = {l2}: {} Hessians for {} fits",
                shared.hessians,
                shared.fits
            );
            let validation = validate(&examples, &params, &fitted).expect("validate");
            let bucket_2 = &validation.buckets[2];
            assert!(bucket_2.templates > 0 && bucket_2.auc.is_some());
            assert_eq!(validation.buckets[3].auc, None);
        }
    }

    #[test]
    fn moments_merged_over_parts_are_those_of_the_whole() {
        let examples = unevenly_scaled(900, 5);
        let rows: Vec<&Example> = examples.iter().collect();
        let mut columns = feature_columns(rows.iter().copied());
        // A constant far from zero, whose sum of squares rounding could make positive.
        columns[7].fill(f64::from(1234.567f32));
        let whole = Moments::of(&columns, 0..900);
        let merged = [0..0, 0..100, 100..101, 101..650, 650..900]
            .into_iter()
            .map(|part| Moments::of(&columns, part))
            .fold(Moments::empty(), |all, m| all.merge(&m));
        assert_eq!(merged.n, 900);
        for j in 0..COUNT {
            let (a, b) = (merged.mean[j], whole.mean[j]);
            assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "mean {j}");
            let (a, b) = (merged.m2[j], whole.m2[j]);
            assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "m2 {j}");
        }
        assert_eq!(merged.m2[7], 0.0);
        assert_eq!(merged.scale()[7], 1.0);
    }

    #[test]
    fn validation_refuses_examples_of_another_build() {
        let mut examples = synthetic(400);
        let params = FitParams { l2: 1.0, folds: 5 };
        let fitted = fit(&examples, &params, serde_json::Value::Null).expect("fit");
        examples[7].features.pop();
        assert!(validate(&examples, &params, &fitted).is_err());
        examples[7].features.push(0.0);
        examples[9].bucket = BUCKETS as u8;
        assert!(validate(&examples, &params, &fitted).is_err());
    }
}
