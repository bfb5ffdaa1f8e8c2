//! Smoothing: a classifier scores each element on its own, so its calls are noisy; smoothing
//! makes them consistent sections of the page.
//!
//! [`segmentation`] is the way in: it sets up a page's problem from its DOM and scores (hidden
//! nodes, weights, penalties) and reads the solution back as sections and cleaned text.
//! [`isotonic`] is the solver beneath it, regularized tree isotonic regression over a plain
//! parent array, which knows nothing of DOMs.

pub mod isotonic;
pub mod segmentation;
