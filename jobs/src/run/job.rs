//! What every worker of a job shares, read-only: the inputs, the settings, and where the site
//! statistics and the model come from.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use stencil_operators::page_models::content::ContentModel;
use stencil_operators::page_models::model::Model;
use stencil_operators::site::labels::Scheme;
use stencil_operators::site::site_level::HostModel;

use super::page;
use crate::fit::TrainSettings;
use crate::site::statistics::Statistics;
use crate::smoothing::Smoothing;

/// Which pages of labelled hosts give `training` rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TrainingRows {
    None,
    /// The pages in the host's sample, the classifier's own training data (the default).
    Sampled,
    All,
}

/// Which model the pages are scored with.
pub(super) enum ModelPlan {
    /// Fit one on the crawl's site-level labels (falling back to the shipped one).
    Train(TrainSettings),
    /// Use this one: `--model`, or the shipped model in `apply`.
    Given(Model, String),
}

/// What every worker shares, read-only.
pub(super) struct Job {
    pub(super) files: Vec<PathBuf>,
    /// `warc_file` of the tables: each file's path as listed.
    pub(super) names: Vec<Arc<str>>,
    pub(super) out: PathBuf,
    pub(super) limits: stencil_operators::reading::warc::Limits,
    /// Site statistics to compute (`run`), or to take from an earlier run (`apply`), or none.
    pub(super) site: SiteSource,
    pub(super) plan: ModelPlan,
    pub(super) smoothing: Smoothing,
    pub(super) options: page::Options,
    /// The main-content model, the same on every worker (shipped, or --content-model).
    pub(super) content: ContentModel,
    pub(super) training_rows: TrainingRows,
    /// Each worker's share of the memory budget, and where it spills.
    pub(super) worker_budget: usize,
    pub(super) spill_dir: PathBuf,
    pub(super) reporter: Arc<crate::progress::Counters>,
    /// `run --state`: where the site statistics carried from earlier nights are read and
    /// tonight's are written.
    pub(super) state: Option<crate::site::state::Plan>,
    /// Whether parts are per worker or per file share, and whether finished shares of a killed
    /// job are taken from their entries (`--resume`).
    pub(super) layout: Layout,
    pub(super) resume: bool,
}

pub(super) enum SiteSource {
    Learn {
        statistics: Statistics,
        scheme: Scheme,
    },
    Loaded(HashMap<String, HostModel>),
    None,
}

/// How a job's tables are laid out, and so what a resumed job can keep (`super::resume`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// One part per worker and table, complete only at the end (`run`): a resumed job starts
    /// over.
    Restart,
    /// Parts per file share, each share finished with its `_done` entry (`apply`): a resumed
    /// job keeps the finished shares.
    FileShares,
}
