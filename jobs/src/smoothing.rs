//! The smoothing flags, shared by every command that smooths scores (`score`, `train --score`,
//! `run`, `apply`, `clean`), and the settings they are checked into; kept apart from the
//! commands so that each can take them without depending on another.

use clap::Args;
use stencil_operators::smoothing::segmentation::Penalty;
use stencil_operators::smoothing::{isotonic, segmentation};

/// How scores are smoothed into sections (seed 000, §4 and §5.3; docs/evaluation.md measures
/// the choices).
#[derive(Args, Clone, Debug)]
pub struct SmoothingArgs {
    /// The penalty constant c: γ(i) = c · A / A(i) with the default penalty form. Larger
    /// values give fewer, larger sections.
    #[arg(long, default_value_t = segmentation::Params::default().c)]
    pub smoothing_c: f32,
    /// How γ(i) depends on the node: area (c·A/A(i)), nodes (c·N/N(i)), parent-area
    /// (c·A(parent)/A(i)) or constant (c).
    #[arg(long, default_value_t = segmentation::Params::default().penalty)]
    pub penalty: Penalty,
    /// Elements with a size proxy (visible characters + 100 per media element + 20 per form
    /// control) below this are hidden: folded into their parent, never sections.
    #[arg(long, default_value_t = segmentation::Params::default().hidden_area)]
    pub hidden_area: f32,
    /// Scores are quantized to this many levels on pages with more distinct scores (the
    /// solver is exact below it).
    #[arg(long, default_value_t = segmentation::Params::default().max_levels)]
    pub max_levels: usize,
    /// τ: a node smoothed to at least this is template (the `template` column).
    #[arg(long, default_value_t = segmentation::DEFAULT_THRESHOLD)]
    pub threshold: f32,
}

impl SmoothingArgs {
    /// The flags' defaults, for callers that build the arguments in code.
    pub fn defaults() -> SmoothingArgs {
        let params = segmentation::Params::default();
        SmoothingArgs {
            smoothing_c: params.c,
            penalty: params.penalty,
            hidden_area: params.hidden_area,
            max_levels: params.max_levels,
            threshold: segmentation::DEFAULT_THRESHOLD,
        }
    }

    /// The smoothing these settings describe, or what is wrong with them.
    pub fn smoothing(&self) -> Result<Smoothing, String> {
        if !(self.smoothing_c >= 0.0 && self.smoothing_c.is_finite()) {
            return Err(format!(
                "--smoothing-c must be ≥ 0, not {}",
                self.smoothing_c
            ));
        }
        if !(self.hidden_area >= 0.0 && self.hidden_area.is_finite()) {
            return Err(format!(
                "--hidden-area must be ≥ 0, not {}",
                self.hidden_area
            ));
        }
        if !isotonic::MAX_LEVELS.contains(&self.max_levels) {
            return Err(format!(
                "--max-levels must be in {:?}, not {}",
                isotonic::MAX_LEVELS,
                self.max_levels
            ));
        }
        if !(self.threshold.is_finite()) {
            return Err(format!(
                "--threshold must be a number, not {}",
                self.threshold
            ));
        }
        Ok(Smoothing {
            params: segmentation::Params {
                c: self.smoothing_c,
                penalty: self.penalty,
                hidden_area: self.hidden_area,
                max_levels: self.max_levels,
            },
            threshold: self.threshold,
        })
    }
}

/// How scores become sections and template calls.
#[derive(Clone, Copy, Debug)]
pub struct Smoothing {
    pub params: segmentation::Params,
    /// τ.
    pub threshold: f32,
}
