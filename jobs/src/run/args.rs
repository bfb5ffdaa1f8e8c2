//! The command-line settings of `run` and `apply`, and the page-level ones they share with
//! `clean`.

use std::path::PathBuf;

use clap::Args;
use stencil_operators::dom::markdown;
use stencil_operators::page_models::content::ContentModel;

use super::page;
use crate::cluster::ClusterArgs;
use crate::fit::FitArgs;
use crate::limits::LimitArgs;
use crate::site::SiteArgs;
use crate::smoothing::SmoothingArgs;

/// `--site-weight` by default (see docs/evaluation.md, "Smooth + site").
pub const DEFAULT_SITE_WEIGHT: f32 = 0.4;

/// `--hidden-threshold` by default (see docs/evaluation.md, "Confident hidden elements").
pub const DEFAULT_HIDDEN_THRESHOLD: f32 = 0.8;

/// Hosts with site-level labels a crawl needs before `run` trusts a model fitted on it.
pub const MIN_TRAINING_HOSTS: usize = 10;

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub site: SiteArgs,
    /// Score with this model.json instead of training one on the crawl.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Fewer hosts with site-level labels than this: use the shipped model instead of one
    /// fitted on so few sites (run.json says so).
    #[arg(long, default_value_t = MIN_TRAINING_HOSTS)]
    pub min_training_hosts: usize,
    #[command(flatten)]
    pub fit: FitArgs,
    #[command(flatten)]
    pub page: PageArgs,
    /// Parsed pages kept in memory between the stages, for the whole process (split over its
    /// workers); past it pages spill to --spill-dir. Bytes, or with a K, M or G suffix; by
    /// default 512M per worker, which keeps a worker's peak under 1 GB whatever the input's
    /// size (docs/benchmarks.md, "Memory").
    #[arg(long, value_parser = parse_bytes)]
    pub memory_budget: Option<u64>,
    /// Where pages spill past the memory budget (local disk); OUT/.spill by default.
    #[arg(long)]
    pub spill_dir: Option<PathBuf>,
    /// Write `training` rows for every page of every labelled host, not only for the pages
    /// sampled for the site statistics (up to --host-sample per host), which are the ones the
    /// classifier learns from. Every page's rows cost a sizeable part of the run's time
    /// (docs/benchmarks.md) and grow with the crawl instead of with its number of hosts.
    #[arg(long, conflicts_with = "no_training")]
    pub all_training_rows: bool,
    /// Site statistics that carry from night to night: read the state in DIR (empty or absent
    /// on the first night), add tonight's pages to it and write the next generation; also
    /// writes OUT/template_changes. Run again on the same inputs, the night is redone on the
    /// state it started from (docs/cluster.md, "Nightly").
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// With --state: a host without a page for this many nights leaves the state (its
    /// templates are then reported as disappeared). Kept for ever when absent.
    #[arg(long, value_name = "NIGHTS", requires = "state", value_parser = clap::value_parser!(u32).range(1..))]
    pub state_max_age: Option<u32>,
    /// Resume a killed job in --out: refuse if it was made with other settings or inputs,
    /// otherwise start over (`run` keeps no stage's results on disk; see docs/cluster.md).
    #[arg(long)]
    pub resume: bool,
}

/// The page-level settings `run`, `apply` and `clean` share.
#[derive(Args, Clone, Debug)]
pub struct PageArgs {
    #[command(flatten)]
    pub smoothing: SmoothingArgs,
    /// Smooth + site: on hosts with site-level statistics, blend each classifier score x with
    /// the site-level call s (1 inside a site template, 0 outside) before smoothing:
    /// (1 − w)·x + w·s. 0 = off; see docs/evaluation.md.
    #[arg(long, default_value_t = DEFAULT_SITE_WEIGHT)]
    pub site_weight: f32,
    /// No smoothing: each element is template when its own score is ≥ τ, and takes its
    /// subtree with it (the paper's Basic, for comparisons; `segments` stays empty).
    #[arg(long)]
    pub basic: bool,
    /// An element too small to be smoothed (below --hidden-area) whose own score (after the
    /// site blend) is at least this is template with its subtree, whatever its section: small
    /// boilerplate inside content (share bars, "Advertisement"). Above 1 = off.
    #[arg(long, default_value_t = DEFAULT_HIDDEN_THRESHOLD)]
    pub hidden_threshold: f32,
    /// A main-content model written by `stencil train-content`; the shipped one when absent.
    #[arg(long)]
    pub content_model: Option<PathBuf>,
    /// What cleaned_text is made from: the main-content model's blocks, or everything the
    /// template model leaves (without the main-content model, for comparisons).
    #[arg(long, value_enum, default_value_t = page::CleanedFrom::Content)]
    pub cleaned_text: page::CleanedFrom,
    /// No Markdown: `pages.cleaned_markdown` stays null (`clean --format markdown` still
    /// writes it).
    #[arg(long)]
    pub no_markdown: bool,
    /// Links in the Markdown, as [text](href).
    #[arg(long)]
    pub links: bool,
    /// Images in the Markdown, as ![alt](src): those in the blocks kept.
    #[arg(long)]
    pub images: bool,
}

impl PageArgs {
    pub fn options(&self) -> Result<page::Options, String> {
        if !(0.0..=1.0).contains(&self.site_weight) {
            return Err(format!(
                "--site-weight must be in [0, 1], not {}",
                self.site_weight
            ));
        }
        if self.hidden_threshold.is_nan() || self.hidden_threshold <= 0.0 {
            return Err(format!(
                "--hidden-threshold must be above 0, not {}",
                self.hidden_threshold
            ));
        }
        Ok(page::Options {
            site_weight: self.site_weight,
            basic: self.basic,
            hidden_threshold: (self.hidden_threshold <= 1.0).then_some(self.hidden_threshold),
            cleaned_from: self.cleaned_text,
            markdown: (!self.no_markdown).then_some(markdown::Options {
                links: self.links,
                images: self.images,
            }),
        })
    }

    /// `--content-model`, or the model shipped in the binary.
    pub fn content_model(&self) -> Result<ContentModel, String> {
        match &self.content_model {
            Some(path) => {
                let json = std::fs::read_to_string(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                ContentModel::from_json(&json).map_err(|e| format!("{}: {e}", path.display()))
            }
            None => Ok(ContentModel::shipped()),
        }
    }
}

#[derive(Args)]
pub struct ApplyArgs {
    /// WARC files (.warc, .warc.gz) or directories holding them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output folder: OUT/pages, OUT/segments, OUT/hosts, OUT/records and OUT/run.json.
    #[arg(long)]
    pub out: PathBuf,
    /// A model.json (from `run` or `train`); the shipped model when absent.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// The output folder of an earlier `run`: its site_templates give the site-level
    /// fractions of pages of the same hosts (and the blend, with --site-weight).
    #[arg(long, conflicts_with = "state")]
    pub site_templates: Option<PathBuf>,
    /// A state folder of `run --state`: its current templates give the site-level fractions,
    /// as with --site-templates; the state is read, never changed.
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    #[command(flatten)]
    pub page: PageArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Resume a killed job in --out: refuse if it was made with other settings, inputs or
    /// split, otherwise keep the input files it finished and read only the others.
    #[arg(long)]
    pub resume: bool,
}

/// What each worker may keep in memory between `run`'s stages unless `--memory-budget` says.
pub const DEFAULT_WORKER_BUDGET: u64 = 512 << 20;

impl RunArgs {
    /// The process's memory budget: `--memory-budget`, or the default for its workers.
    pub fn memory_budget(&self) -> u64 {
        self.memory_budget
            .unwrap_or(DEFAULT_WORKER_BUDGET * self.site.cluster.workers.max(1) as u64)
    }
}

/// Parses `4G`, `512M`, `100k` or plain bytes.
fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (number, scale) = match text.char_indices().last() {
        Some((at, 'k' | 'K')) => (&text[..at], 1u64 << 10),
        Some((at, 'm' | 'M')) => (&text[..at], 1 << 20),
        Some((at, 'g' | 'G')) => (&text[..at], 1 << 30),
        _ => (text, 1),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {text:?} (try 512M or 4G)"))?;
    if !(value >= 0.0 && value.is_finite()) {
        return Err(format!("not a size: {text:?}"));
    }
    Ok((value * scale as f64) as u64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(super::parse_bytes("4G"), Ok(4 << 30));
        assert_eq!(super::parse_bytes("512m"), Ok(512 << 20));
        assert_eq!(super::parse_bytes("1.5K"), Ok(1536));
        assert_eq!(super::parse_bytes("1000"), Ok(1000));
        assert!(super::parse_bytes("lots").is_err());
        assert!(super::parse_bytes("-1G").is_err());
    }
}
