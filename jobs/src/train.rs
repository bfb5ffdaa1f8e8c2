//! `stencil train`: the site job (SiteLevel(θ) labels), then the page-level classifier fitted
//! on every worker's sample and broadcast ([`crate::fit`]), then with `--score` every node of
//! every page scored with it ([`crate::score`]). The site job runs all three; this module only
//! turns the flags into its settings.

use std::process::ExitCode;

use clap::Args;

use crate::fit::FitArgs;
use crate::site::SiteArgs;
use crate::smoothing::SmoothingArgs;

#[derive(Args)]
pub struct TrainArgs {
    #[command(flatten)]
    pub site: SiteArgs,
    #[command(flatten)]
    pub fit: FitArgs,
    /// After training, score every element of every page with the broadcast model and write
    /// OUT/node_scores (a third pass over the input).
    #[arg(long)]
    pub score: bool,
    #[command(flatten)]
    pub smoothing: SmoothingArgs,
}

pub fn run(args: &TrainArgs) -> Result<ExitCode, String> {
    let site = &args.site;
    let smoothing = args.smoothing.smoothing()?;
    let mut settings = args
        .fit
        .settings(site.labels.scheme(), site.params(), smoothing)?;
    settings.score = args.score;
    crate::site::run_with(site, Some(settings))
}
