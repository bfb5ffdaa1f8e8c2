//! L2-penalized binary logistic regression, fitted by Newton's method (IRLS).
//!
//! Minimizes Σᵢ [log(1 + e^zᵢ) − yᵢ·zᵢ] + ½·α·‖w‖², zᵢ = w·xᵢ + b, the intercept b
//! unpenalized — the objective smartcore's `LogisticRegression` minimizes, so α means what it
//! means there; [`fit_with`] also takes one α per weight ([`Penalty::PerWeight`]).
//!
//! Why by hand: the problem has at most 51 unknowns and, with the strong penalty the classifier
//! uses (α = 1000), is well conditioned, so Newton reaches machine precision in a handful of
//! iterations. Each iteration is one pass building XᵀWX from columns, a dot-product loop the
//! compiler vectorizes; once the steps are small, that matrix is kept for the following steps
//! (chord steps), which then cost a pass over the data instead of 51. A general solver such as
//! smartcore's L-BFGS over its generic matrix spends many times as long on these problems
//! (docs/benchmarks.md), and a linear-algebra crate would bring far more than the 51×51
//! Cholesky factorization needed here. Problems that differ only in which rows they leave out
//! can share the pass that builds their first XᵀWX ([`data_hessians`]).

use std::ops::Range;

/// A fitted model in the coordinates it was fitted in.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub weights: Vec<f64>,
    pub intercept: f64,
    /// Steps taken.
    pub iterations: u32,
    /// Hessians built (the costly part of a step); the other steps reused the last one.
    pub hessians: u32,
}

/// Most Newton steps before giving up; a well-posed problem needs fewer than 15.
const MAX_ITERATIONS: u32 = 100;

/// After a full step this small, relative to the weights, the Hessian is kept for the next
/// steps: Newton is then in its quadratic regime, and the curvature moves by about as little
/// as the weights did, so a chord step does nearly as well as a fresh Newton step.
const REUSE_STEP: f64 = 1e-2;

/// Rows per block of the Hessian's sums: 51 columns of 512 rows are 209 KB, which stays in a
/// core's L2 cache while every pair of columns is multiplied.
const BLOCK_ROWS: usize = 512;

/// A Newton step this small, relative to the weights, is the last one. Newton converges
/// quadratically near the optimum, so the next step would be of the order of its square
/// (10⁻⁸), below the f32 precision weights are stored with (6·10⁻⁸); stopping here saves a
/// Hessian that would only confirm convergence.
const LAST_STEP: f64 = 1e-4;

/// The penalty on the weights (never on the intercept).
#[derive(Clone, Copy, Debug)]
pub enum Penalty<'a> {
    /// ½·α·‖w‖².
    Uniform(f64),
    /// ½·Σⱼ αⱼ·wⱼ², one α per weight. A problem standardized with other means and scales is
    /// the uniform one in other coordinates, with the penalty rescaled weight by weight, which
    /// lets cross-validation fit every fold in the coordinates of the whole sample (see
    /// [`crate::page_models::model::validate`]).
    PerWeight(&'a [f64]),
}

impl Penalty<'_> {
    fn check(&self, d: usize) -> Result<(), String> {
        let sound = |alpha: f64| alpha >= 0.0 && alpha.is_finite();
        match *self {
            Penalty::Uniform(alpha) if !sound(alpha) => {
                Err(format!("penalty {alpha} is not a finite number ≥ 0"))
            }
            Penalty::PerWeight(alphas) if alphas.len() != d => {
                Err(format!("{} penalties for {d} weights", alphas.len()))
            }
            Penalty::PerWeight(alphas) => match alphas.iter().find(|&&a| !sound(a)) {
                Some(alpha) => Err(format!("penalty {alpha} is not a finite number ≥ 0")),
                None => Ok(()),
            },
            Penalty::Uniform(_) => Ok(()),
        }
    }

    /// The α of weight `j`.
    fn of(&self, j: usize) -> f64 {
        match *self {
            Penalty::Uniform(alpha) => alpha,
            Penalty::PerWeight(alphas) => alphas[j],
        }
    }

    /// The penalty's share of the objective.
    fn value(&self, weights: &[f64]) -> f64 {
        match *self {
            // One α times the sum of squares, not a sum of α·w²: the uniform penalty keeps its
            // own rounding, so that uniform fits, and the shipped models made from them, are
            // reproduced to the last bit.
            Penalty::Uniform(alpha) => 0.5 * alpha * weights.iter().map(|w| w * w).sum::<f64>(),
            Penalty::PerWeight(alphas) => {
                0.5 * weights
                    .iter()
                    .zip(alphas)
                    .map(|(w, a)| a * w * w)
                    .sum::<f64>()
            }
        }
    }
}

/// Fits on `columns` (one slice per feature, all of the labels' length) and labels `y`.
/// `start`, when given, is where Newton begins (a nearby solution makes it converge in two or
/// three steps); otherwise it begins at zero.
pub fn fit(columns: &[&[f64]], y: &[bool], alpha: f64, start: Option<&Fit>) -> Result<Fit, String> {
    fit_with(columns, y, Penalty::Uniform(alpha), start, None)
}

/// [`fit`] with any [`Penalty`], and, when `start_hessian` is given, that matrix as the first
/// Hessian instead of a pass over the data: it must be XᵀWX at `start` over these rows, without
/// the penalty ((d+1)×(d+1), row-major, as [`data_hessians`] sums it). It is only used if
/// `start` is, and does not count among the Hessians built.
pub fn fit_with(
    columns: &[&[f64]],
    y: &[bool],
    penalty: Penalty,
    start: Option<&Fit>,
    start_hessian: Option<&[f64]>,
) -> Result<Fit, String> {
    let n = y.len();
    let d = columns.len();
    if let Some(bad) = columns.iter().position(|c| c.len() != n) {
        return Err(format!(
            "feature {bad} has {} rows, labels {n}",
            columns[bad].len()
        ));
    }
    penalty.check(d)?;
    if let Some(h) = start_hessian.filter(|h| h.len() != (d + 1) * (d + 1)) {
        return Err(format!(
            "a start Hessian of {} entries for {d} weights",
            h.len()
        ));
    }
    // Unknowns: d weights, then the intercept.
    let mut theta = vec![0.0; d + 1];
    let start = start.filter(|s| s.weights.len() == d);
    if let Some(start) = start {
        theta[..d].copy_from_slice(&start.weights);
        theta[d] = start.intercept;
    }
    // A Hessian at another point than the one Newton begins at would only mislead it.
    let mut given = start_hessian.filter(|_| start.is_some());
    let mut z = vec![0.0; n];
    let mut residual = vec![0.0; n];
    let mut curvature = vec![0.0; n];
    let mut weighted = vec![0.0; BLOCK_ROWS.min(n)];
    let mut objective = margins_and_loss(columns, y, &theta, penalty, &mut z);
    // The Cholesky factor of the last Hessian built, and whether it may serve the next step
    // (only ever set after one was built).
    let mut factor: Option<Vec<f64>> = None;
    let mut reuse = false;
    let mut hessians = 0;
    for iteration in 1..=MAX_ITERATIONS {
        for i in 0..n {
            let p = sigmoid(z[i]);
            residual[i] = p - f64::from(u8::from(y[i]));
            curvature[i] = p * (1.0 - p);
        }
        let mut gradient = vec![0.0; d + 1];
        for j in 0..d {
            gradient[j] = dot(columns[j], &residual) + penalty.of(j) * theta[j];
        }
        gradient[d] = residual.iter().sum::<f64>();
        let reused = factor.as_deref().filter(|_| reuse);
        let chord = reused.is_some();
        let step = match reused {
            // Near the optimum the Hessian barely changes between steps, and building it costs
            // d times more than the gradient: the last one serves (a chord step). The step is
            // still a descent direction, and the stopping rule below is unchanged.
            Some(factor) => solve_factored(factor, &gradient, d + 1),
            None => {
                // Only the first step is at the start point, so only it may take the given one.
                let data = match given.take() {
                    Some(h) => h.to_vec(),
                    None => {
                        hessians += 1;
                        data_hessian(columns, &curvature, 0..n, &mut weighted)
                    }
                };
                let mut hessian = with_penalty(data, penalty, d);
                let step = solve_positive_definite(&mut hessian, &gradient, d + 1)?;
                factor = Some(hessian);
                step
            }
        };
        // Newton's step on a convex objective; halved while it does not decrease the
        // objective, which only happens far from the optimum.
        // When no step along it decreases the objective any more, rounding has the last word:
        // the weights are at the optimum as closely as f64 can tell.
        let mut length = 1.0;
        let mut candidate = theta.clone();
        let mut decreased = false;
        while length >= 1e-10 {
            for (c, (t, s)) in candidate.iter_mut().zip(theta.iter().zip(&step)) {
                *c = t - length * s;
            }
            let next = margins_and_loss(columns, y, &candidate, penalty, &mut z);
            if next <= objective {
                objective = next;
                decreased = true;
                break;
            }
            length *= 0.5;
        }
        if !decreased && chord {
            // The reused Hessian led nowhere: build a fresh one at the same point.
            objective = margins_and_loss(columns, y, &theta, penalty, &mut z);
            reuse = false;
            continue;
        }
        if decreased {
            theta = candidate;
        }
        let size = 1.0 + theta.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        let moved = step.iter().fold(0.0f64, |m, s| m.max(s.abs()));
        reuse = decreased && length == 1.0 && moved <= REUSE_STEP * size;
        // A Newton step of LAST_STEP leaves an error of about its square; a chord step's
        // error shrinks only linearly, so it must itself be that small.
        let last = if chord {
            LAST_STEP * LAST_STEP
        } else {
            LAST_STEP
        };
        if !decreased || moved <= last * size {
            return Ok(Fit {
                intercept: theta[d],
                weights: theta[..d].to_vec(),
                iterations: iteration,
                hessians,
            });
        }
    }
    Err(format!("Newton did not converge in {MAX_ITERATIONS} steps"))
}

/// XᵀWX at `at` over each range of `rows` (one slice per feature): the data part of the
/// Hessian, without the penalty, in the layout [`fit_with`] takes as its first Hessian. A
/// problem on the union of some ranges has the sum of theirs, so one pass over all rows serves
/// every problem that leaves some ranges out.
pub fn data_hessians(
    columns: &[&[f64]],
    at: &Fit,
    ranges: &[Range<usize>],
) -> Result<Vec<Vec<f64>>, String> {
    let d = columns.len();
    let n = columns.first().map_or(0, |c| c.len());
    if columns.iter().any(|c| c.len() != n) || at.weights.len() != d {
        return Err(format!(
            "{d} features of unequal length or not the {} weights of the point",
            at.weights.len()
        ));
    }
    if let Some(bad) = ranges.iter().find(|r| r.start > r.end || r.end > n) {
        return Err(format!("rows {bad:?} of {n}"));
    }
    let mut theta = at.weights.clone();
    theta.push(at.intercept);
    let mut z = vec![0.0; n];
    margins(columns, &theta, &mut z);
    let curvature: Vec<f64> = z
        .iter()
        .map(|&zi| {
            let p = sigmoid(zi);
            p * (1.0 - p)
        })
        .collect();
    let mut weighted = vec![0.0; BLOCK_ROWS.min(n)];
    Ok(ranges
        .iter()
        .map(|rows| data_hessian(columns, &curvature, rows.clone(), &mut weighted))
        .collect())
}

/// XᵀWX over `rows` (row-major, (d+1)×(d+1), the intercept's column of ones last), where W
/// holds the sigmoid curvatures p·(1 − p) of the point. It is symmetric, so only its upper
/// triangle is summed, and it is summed over blocks of rows that stay in cache while each pair
/// of columns is multiplied.
fn data_hessian(
    columns: &[&[f64]],
    curvature: &[f64],
    rows: Range<usize>,
    weighted: &mut [f64],
) -> Vec<f64> {
    let d = columns.len();
    let mut hessian = vec![0.0; (d + 1) * (d + 1)];
    for start in rows.clone().step_by(BLOCK_ROWS) {
        let end = (start + BLOCK_ROWS).min(rows.end);
        let weighted = &mut weighted[..end - start];
        for j in 0..d {
            for ((w, &c), &x) in weighted
                .iter_mut()
                .zip(&curvature[start..end])
                .zip(&columns[j][start..end])
            {
                *w = c * x;
            }
            let row = &mut hessian[j * (d + 1)..(j + 1) * (d + 1)];
            let mut k = j;
            while k + 4 <= d {
                let sums = dot4(
                    weighted,
                    [0, 1, 2, 3].map(|offset| &columns[k + offset][start..end]),
                );
                for (entry, sum) in row[k..k + 4].iter_mut().zip(sums) {
                    *entry += sum;
                }
                k += 4;
            }
            for k in k..d {
                row[k] += dot(weighted, &columns[k][start..end]);
            }
            row[d] += weighted.iter().sum::<f64>();
        }
    }
    hessian[d * (d + 1) + d] = curvature[rows].iter().sum::<f64>();
    for j in 0..=d {
        for k in 0..j {
            hessian[j * (d + 1) + k] = hessian[k * (d + 1) + j];
        }
    }
    hessian
}

/// The Hessian of the objective: the data part plus the penalty's diagonal.
fn with_penalty(mut hessian: Vec<f64>, penalty: Penalty, d: usize) -> Vec<f64> {
    for j in 0..d {
        hessian[j * (d + 1) + j] += penalty.of(j);
    }
    hessian
}

/// Fills `z` with the margins of `theta` (the weights, then the intercept).
fn margins(columns: &[&[f64]], theta: &[f64], z: &mut [f64]) {
    z.fill(theta[columns.len()]);
    for (column, &w) in columns.iter().zip(theta) {
        for (zi, &x) in z.iter_mut().zip(column.iter()) {
            *zi += w * x;
        }
    }
}

/// Fills `z` with the margins of `theta` and returns the penalized objective.
fn margins_and_loss(
    columns: &[&[f64]],
    y: &[bool],
    theta: &[f64],
    penalty: Penalty,
    z: &mut [f64],
) -> f64 {
    margins(columns, theta, z);
    let loss: f64 = z
        .iter()
        .zip(y)
        .map(|(&zi, &yi)| log_one_plus_exp(zi) - if yi { zi } else { 0.0 })
        .sum();
    loss + penalty.value(&theta[..columns.len()])
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// log(1 + e^z) without overflow for large z.
fn log_one_plus_exp(z: f64) -> f64 {
    if z > 0.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

/// Dot product with four running sums, which lets the compiler use vector registers (one
/// running sum would pin the additions to their source order).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut sums = [0.0; 4];
    let chunks_a = a.chunks_exact(4);
    let chunks_b = b.chunks_exact(4);
    let tail: f64 = chunks_a
        .remainder()
        .iter()
        .zip(chunks_b.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in chunks_a.zip(chunks_b) {
        for k in 0..4 {
            sums[k] += x[k] * y[k];
        }
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + tail
}

/// Four dot products of `a` with four columns at once: each value of `a` is loaded once for
/// four multiplications instead of one, which is what bounds the Hessian's inner loop.
fn dot4(a: &[f64], columns: [&[f64]; 4]) -> [f64; 4] {
    let mut sums = [[0.0; 4]; 4];
    let [c0, c1, c2, c3] = columns.map(|c| c.chunks_exact(4));
    let rest = a.len() - a.len() % 4;
    for ((((x, y0), y1), y2), y3) in a.chunks_exact(4).zip(c0).zip(c1).zip(c2).zip(c3) {
        for lane in 0..4 {
            sums[0][lane] += x[lane] * y0[lane];
            sums[1][lane] += x[lane] * y1[lane];
            sums[2][lane] += x[lane] * y2[lane];
            sums[3][lane] += x[lane] * y3[lane];
        }
    }
    let mut out = [0.0; 4];
    for ((value, sum), column) in out.iter_mut().zip(sums).zip(columns) {
        let tail = dot(&a[rest..], column.get(rest..).unwrap_or(&[]));
        *value = (sum[0] + sum[1]) + (sum[2] + sum[3]) + tail;
    }
    out
}

/// Solves H·x = g for a symmetric positive definite `h` (row-major, `size`×`size`, overwritten
/// by its Cholesky factor, which [`solve_factored`] can use again).
fn solve_positive_definite(h: &mut [f64], g: &[f64], size: usize) -> Result<Vec<f64>, String> {
    for j in 0..size {
        let mut diagonal = h[j * size + j];
        for k in 0..j {
            diagonal -= h[j * size + k] * h[j * size + k];
        }
        if !(diagonal > 0.0 && diagonal.is_finite()) {
            return Err(format!(
                "the Hessian is singular at unknown {j}: a feature is constant or the penalty is zero \
                 on separable data"
            ));
        }
        let root = diagonal.sqrt();
        h[j * size + j] = root;
        for i in j + 1..size {
            let mut value = h[i * size + j];
            for k in 0..j {
                value -= h[i * size + k] * h[j * size + k];
            }
            h[i * size + j] = value / root;
        }
    }
    Ok(solve_factored(h, g, size))
}

/// Solves H·x = g given the Cholesky factor L of H (the lower triangle of `h`, row-major).
fn solve_factored(h: &[f64], g: &[f64], size: usize) -> Vec<f64> {
    // L·u = g, then Lᵀ·x = u.
    let mut x = g.to_vec();
    for i in 0..size {
        for k in 0..i {
            x[i] -= h[i * size + k] * x[k];
        }
        x[i] /= h[i * size + i];
    }
    for i in (0..size).rev() {
        for k in i + 1..size {
            x[i] -= h[k * size + i] * x[k];
        }
        x[i] /= h[i * size + i];
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute-force gradient of the objective, to check the optimum without trusting the solver.
    fn gradient_norm(columns: &[&[f64]], y: &[bool], alpha: f64, fit: &Fit) -> f64 {
        gradient_norm_per_weight(columns, y, &vec![alpha; columns.len()], fit)
    }

    fn gradient_norm_per_weight(columns: &[&[f64]], y: &[bool], alphas: &[f64], fit: &Fit) -> f64 {
        let d = columns.len();
        let mut g = vec![0.0; d + 1];
        for i in 0..y.len() {
            let z = fit.intercept + (0..d).map(|j| fit.weights[j] * columns[j][i]).sum::<f64>();
            let r = sigmoid(z) - f64::from(u8::from(y[i]));
            for j in 0..d {
                g[j] += r * columns[j][i];
            }
            g[d] += r;
        }
        for ((gj, w), alpha) in g.iter_mut().zip(&fit.weights).zip(alphas) {
            *gj += alpha * w;
        }
        g.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    fn noisy_problem(n: usize) -> (Vec<Vec<f64>>, Vec<bool>) {
        // Deterministic pseudo-random features; the label depends on two of them, with noise.
        let mut state = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut columns: Vec<Vec<f64>> = (0..3).map(|_| Vec::with_capacity(n)).collect();
        let mut y = Vec::with_capacity(n);
        for _ in 0..n {
            let row = [next(), next(), next()];
            for (c, v) in columns.iter_mut().zip(row) {
                c.push(v);
            }
            y.push(2.0 * row[0] - row[1] + 0.8 * next() > 0.3);
        }
        (columns, y)
    }

    #[test]
    fn reaches_the_optimum_of_the_penalized_objective() {
        let (columns, y) = noisy_problem(2000);
        let columns: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        for alpha in [0.0, 1.0, 1000.0] {
            let fit = fit(&columns, &y, alpha, None).expect("fit");
            assert!(
                gradient_norm(&columns, &y, alpha, &fit) < 1e-6,
                "α = {alpha}: {fit:?}"
            );
            assert!(fit.iterations < 15, "α = {alpha}: {} steps", fit.iterations);
        }
        let fit = fit(&columns, &y, 1.0, None).expect("fit");
        // The signal's signs and the feature with no influence.
        assert!(fit.weights[0] > 1.0 && fit.weights[1] < -0.5, "{fit:?}");
        assert!(fit.weights[2].abs() < 0.3, "{fit:?}");
    }

    #[test]
    fn a_warm_start_converges_in_fewer_steps() {
        let (columns, y) = noisy_problem(2000);
        let columns: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        let cold = fit(&columns, &y, 10.0, None).expect("fit");
        let half: Vec<&[f64]> = columns.iter().map(|c| &c[..1000]).collect();
        let warm = fit(&half, &y[..1000], 10.0, Some(&cold)).expect("fit");
        let again = fit(&half, &y[..1000], 10.0, None).expect("fit");
        assert!(warm.iterations < again.iterations, "{warm:?} vs {again:?}");
        assert!(warm.hessians < again.hessians, "{warm:?} vs {again:?}");
        // Near the optimum the last Hessian serves more than one step.
        assert!(again.hessians < again.iterations, "{again:?}");
        for (a, b) in warm.weights.iter().zip(&again.weights) {
            assert!((a - b).abs() < 1e-9, "{warm:?} vs {again:?}");
        }
    }

    #[test]
    fn reaches_the_optimum_of_a_penalty_per_weight() {
        let (columns, y) = noisy_problem(2000);
        let columns: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        // One weight free, one held hard, one in between.
        let alphas = [0.0, 3000.0, 20.0];
        let fit = fit_with(&columns, &y, Penalty::PerWeight(&alphas), None, None).expect("fit");
        assert!(
            gradient_norm_per_weight(&columns, &y, &alphas, &fit) < 1e-6,
            "{fit:?}"
        );
        let uniform = super::fit(&columns, &y, 20.0, None).expect("fit");
        assert!(
            fit.weights[1].abs() < 0.2 * uniform.weights[1].abs(),
            "{fit:?} vs {uniform:?}"
        );
        // Equal penalties are the uniform one.
        let equal =
            fit_with(&columns, &y, Penalty::PerWeight(&[20.0; 3]), None, None).expect("fit");
        for (a, b) in equal.weights.iter().zip(&uniform.weights) {
            assert!((a - b).abs() < 1e-12, "{equal:?} vs {uniform:?}");
        }
        assert!(fit_with(&columns, &y, Penalty::PerWeight(&[1.0; 2]), None, None).is_err());
        assert!(fit_with(
            &columns,
            &y,
            Penalty::PerWeight(&[1.0, -1.0, 1.0]),
            None,
            None
        )
        .is_err());
    }

    #[test]
    fn hessians_of_row_ranges_add_up() {
        let (columns, y) = noisy_problem(2000);
        let columns: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        let at = fit(&columns, &y, 10.0, None).expect("fit");
        let parts = data_hessians(&columns, &at, &[0..700, 700..700, 700..2000]).expect("parts");
        let whole = data_hessians(&columns, &at, std::slice::from_ref(&(0..2000))).expect("whole");
        assert!(parts[1].iter().all(|&h| h == 0.0), "no rows, no curvature");
        for ((a, c), w) in parts[0].iter().zip(&parts[2]).zip(&whole[0]) {
            assert!((a + c - w).abs() <= 1e-9 * (1.0 + w.abs()));
        }
        assert!(data_hessians(&columns, &at, &[0..700, 1500..2001]).is_err());
    }

    #[test]
    fn a_given_start_hessian_saves_one_and_reaches_the_same_optimum() {
        let (columns, y) = noisy_problem(3000);
        let columns: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        let alphas = [5.0, 50.0, 500.0];
        let penalty = Penalty::PerWeight(&alphas);
        let start = fit(&columns, &y, 10.0, None).expect("fit");
        // The problem on the first 2000 rows, starting from the fit on all of them.
        let shares = data_hessians(&columns, &start, &[0..2000, 2000..3000]).expect("shares");
        let head: Vec<&[f64]> = columns.iter().map(|c| &c[..2000]).collect();
        let y = &y[..2000];
        let cold = fit_with(&head, y, penalty, None, None).expect("fit");
        let warm = fit_with(&head, y, penalty, Some(&start), None).expect("fit");
        let given = fit_with(&head, y, penalty, Some(&start), Some(&shares[0])).expect("fit");
        assert_eq!(given.hessians + 1, warm.hessians, "{given:?} vs {warm:?}");
        assert_eq!(given.iterations, warm.iterations, "{given:?} vs {warm:?}");
        for fit in [&warm, &given] {
            assert!(
                gradient_norm_per_weight(&head, y, &alphas, fit) < 1e-6,
                "{fit:?}"
            );
            // The same optimum as from zero, to the solver's tolerance (steps of 10⁻⁴
            // relative leave errors of about their square).
            for (a, b) in fit.weights.iter().zip(&cold.weights) {
                assert!((a - b).abs() < 1e-7, "{fit:?} vs {cold:?}");
            }
            assert!((fit.intercept - cold.intercept).abs() < 1e-7);
        }
        assert!(
            fit_with(&head, y, penalty, Some(&start), Some(&shares[0][1..])).is_err(),
            "a Hessian of the wrong size"
        );
    }

    #[test]
    fn separable_data_needs_the_penalty() {
        let x = [-2.0, -1.0, 1.0, 2.0];
        let y = [false, false, true, true];
        let fit_penalized = fit(&[&x], &y, 1.0, None).expect("a penalty bounds the weights");
        assert!(fit_penalized.weights[0] > 0.0);
        assert!(
            fit(&[&x], &y, 0.0, None).is_err(),
            "unbounded without a penalty"
        );
    }

    #[test]
    fn four_dot_products_at_once_match_one_at_a_time() {
        let (columns, _) = noisy_problem(4003);
        let a: Vec<f64> = columns[0].iter().map(|x| x * 0.5 + 0.25).collect();
        for n in [0, 1, 3, 4, 7, 512, 4003] {
            let four = [0, 1, 2, 0].map(|c| &columns[c][..n]);
            let together = dot4(&a[..n], four);
            for (value, column) in together.iter().zip(four) {
                let alone = dot(&a[..n], column);
                assert!(
                    (value - alone).abs() <= 1e-12 * (1.0 + alone.abs()),
                    "n = {n}"
                );
            }
        }
    }

    #[test]
    fn refuses_ragged_input() {
        assert!(fit(&[&[1.0, 2.0]], &[true], 1.0, None).is_err());
        assert!(fit(&[&[1.0]], &[true], f64::NAN, None).is_err());
    }
}
