//! `stencil`: the command line and the jobs, as a library that the `stencil` binary and the
//! Python package (`python/`) call. Argument parsing and wiring only; the work is done by
//! `stencil-operators`.
//!
//! The modules form layers, each using only those below it, so that a command can be read and
//! changed without the ones built on it:
//! 1. shared pieces: `cluster`, `crash`, `files`, `limits`, `progress`, `tables` (the output
//!    tables), `model_file` (model.json on disk) and `smoothing` (the smoothing flags);
//! 2. `score` (scoring pages with a model) and `fit` (fitting the classifier on worker 0 and
//!    broadcasting it); `inspect`, `bench`, `train_content` and `crawl_report` (`stencil
//!    report`, which reads a run's tables) also need only the shared pieces;
//! 3. `site`, the site job, which fits and scores when `train` asks it to;
//! 4. `train` and `run` (with `apply`, `clean` and `show`), which compose the site job, fitting and
//!    scoring;
//! 5. `synth`, whose demo runs `run`.
//!
//! Nothing but this root names the commands, and nothing imports the root. [`command`] runs one
//! command line; [`api`] is what the Python package calls for one page at a time.

mod bench;
mod cluster;
mod crash;
mod crawl_report;
mod files;
mod fit;
mod inspect;
mod limits;
mod model_file;
mod progress;
mod run;
mod score;
mod site;
mod smoothing;
mod synth;
mod tables;
mod train;
mod train_content;

pub mod api;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "stencil",
    version,
    about = "Find and remove web page templates in crawl archives",
    long_about = "Stencil reads WARC files, parses every HTML page into a compact DOM, hashes \
                  every subtree, learns which blocks repeat across a site's pages, and trains a \
                  classifier that scores how template-like every node of any page is."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read WARC files and report what they hold: records by type, HTTP status, content type
    /// and charset, pages parsed, DOM nodes, errors by kind, and throughput.
    #[command(after_help = "Examples:\n  \
        stencil inspect crawl/CC-MAIN-2024-10-00000.warc.gz\n  \
        stencil inspect crawl/ -w 2 --json > inventory.json")]
    Inspect(inspect::InspectArgs),
    /// Measure single-thread throughput of each stage (framing, decoding, tokenizer floor,
    /// HTML to arena, hashes, features, scores, smoothing, cleaned text) on the pages of WARC
    /// files, and optionally how smoothing scales with page size. Prints Markdown tables.
    #[command(after_help = "Examples:\n  \
        stencil bench bench.warc.gz --rounds 3\n  \
        stencil bench --smoothing-scaling scaling.tsv   (then docs/bench/plot_smoothing.py)")]
    Bench(bench::BenchArgs),
    /// Find site-level templates (SiteLevel(θ)) on a timely cluster and write the tables
    /// site_templates, hosts and training (labelled DOM nodes) as Parquet.
    #[command(after_help = "Examples:\n  \
        stencil site crawl/ --out site-out -w 2\n  \
        stencil site crawl/ --out site-out --labels kolcz\n  \
        stencil site crawl/ --out shared/site-out -n 2 -p 0 --hostfile hosts.txt   (and -p 1 on the other machine)")]
    Site(site::SiteArgs),
    /// Train the page-level templateness classifier: site-level labels as in `site`, then four
    /// logistic regressions (one per node size bucket) fitted on one worker from every
    /// worker's stratified sample, validated across hosts, saved as OUT/model.json and
    /// broadcast to every worker.
    #[command(after_help = "Examples:\n  \
        stencil train crawl/ --out model-out -w 2\n  \
        stencil train crawl/ --out model-out --sample-cap 50000 --score   (also writes node_scores)\n  \
        stencil train crawl/ --out shared/model-out -n 2 -p 0 --hostfile hosts.txt")]
    Train(train::TrainArgs),
    /// Fit the main-content model (the model `cleaned_text` is made with) to human gold: WARC
    /// files and a manifest of gold texts; reports held-out figures over host-disjoint folds,
    /// then fits on every page and writes the model (docs/model.md).
    #[command(after_help = "Examples:\n  \
        stencil train-content eval.warc.gz --gold manifest.tsv --out content.json\n  \
        stencil train-content eval.warc.gz --gold manifest.tsv --out content.json --predictions held-out/")]
    TrainContent(train_content::TrainContentArgs),
    /// Score every element of every page with a model (the shipped default unless --model is
    /// given): the page-level classifier x(i) in [0, 1], written as OUT/node_scores.
    #[command(after_help = "Examples:\n  \
        stencil score one.warc.gz --out scores\n  \
        stencil score crawl/ --out scores --model model-out/model.json -w 2")]
    Score(score::ScoreArgs),
    /// The whole job: site-level templates, a classifier trained on their labels and broadcast,
    /// then every page scored, smoothed into segments and cleaned. Writes the tables pages,
    /// hosts, segments, site_templates, training and records, and OUT/run.json.
    #[command(after_help = "Examples:\n  \
        stencil run crawl/ --out out -w 2\n  \
        stencil run CC-MAIN-*.warc.gz --out out --model model.json   (no training)\n  \
        stencil run crawl/ --out out --memory-budget 2G --spill-dir /scratch/stencil\n  \
        stencil run /shared/crawl --out /shared/out -w 8 -n 4 -p 0 --hostfile hosts.txt   (ranks 1-3 alike; see cluster/)")]
    Run(run::RunArgs),
    /// Nightly mode: clean new WARC files in one pass with the shipped model (or --model),
    /// optionally with an earlier run's site templates; no statistics, no training. Writes
    /// pages, hosts, segments, records and OUT/run.json.
    #[command(after_help = "Examples:\n  \
        stencil apply tonight/*.warc.gz --out cleaned\n  \
        stencil apply tonight/ --out cleaned --model last-run/model.json --site-templates last-run -w 4")]
    Apply(run::ApplyArgs),
    /// Print the cleaned text of one HTML page (a file, or - for standard input): its main
    /// content as the shipped content model judges it, one line per block (`--cleaned-text
    /// template`: the visible text outside templates instead); `--format markdown` the same as
    /// Markdown, `--format json` both with the page's metadata and template fractions.
    #[command(after_help = "Examples:\n  \
        stencil clean page.html\n  \
        stencil clean page.html --format markdown --links\n  \
        stencil clean page.html.gz --url https://example.com/a --format json\n  \
        curl -s https://example.com/ | stencil clean -")]
    Clean(run::clean::CleanArgs),
    /// Write one self-contained HTML page of charts over a run's tables (OUT/report.html by
    /// default): templated share over pages and hosts, the hosts with the most template text,
    /// share against page size, records by outcome, throughput per stage and, with --state,
    /// templated share over the state's nights. Inline SVG; no script, no external resource.
    #[command(after_help = "Examples:\n  \
        stencil report out\n  \
        stencil report out --output crawl-report.html --top-hosts 25\n  \
        stencil report tonight-out --state state/")]
    Report(crawl_report::ReportArgs),
    /// Write a copy of one page (an HTML file, a URL in a WARC file, or a page of an earlier
    /// run) with each section outlined by its kind: template (red), main content (green),
    /// boilerplate that is not template (blue); hover for the scores. Scripts, frames and
    /// anything that would fetch are left out, so the copy is safe to open (docs/show.md).
    #[command(after_help = "Examples:\n  \
        stencil show page.html --url https://example.com/news/1 -o page.show.html\n  \
        stencil show crawl.warc.gz --url https://example.com/news/1 -o page.show.html\n  \
        stencil show --run out --url https://example.com/news/1 -o page.show.html   (the run's model and record)")]
    Show(run::show::ShowArgs),
    /// Write a deterministic synthetic crawl (many hosts, each with its own template) as a
    /// Common-Crawl-style .warc.gz.
    #[command(after_help = "Example:\n  stencil synth --hosts 20 --pages 30 --out crawl.warc.gz")]
    Synth(synth::SynthArgs),
    /// Generate a small synthetic crawl, inspect it, find its site-level templates, train the
    /// page-level classifier on them and score every node: the quickest look at what Stencil
    /// does.
    #[command(after_help = "Example:\n  stencil demo --dir stencil-demo")]
    Demo(synth::DemoArgs),
}

/// Runs one command line (`args[0]` is the program's name): parses it as the `stencil` binary
/// does and runs the command. A usage error or `--help` comes back as clap's error, which
/// prints itself; any other failure as the message the binary prints after `stencil: `.
pub fn command<I, T>(args: I) -> Result<Result<ExitCode, String>, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::try_parse_from(args)?;
    Ok(match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Site(args) => site::run(&args),
        Command::Train(args) => train::run(&args),
        Command::Score(args) => score::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Apply(args) => run::apply(&args),
        Command::Clean(args) => run::clean::run(&args),
        Command::Show(args) => run::show::run(&args),
        Command::TrainContent(args) => train_content::run(&args),
        Command::Report(args) => crawl_report::run(&args),
        Command::Synth(args) => synth::run(&args),
        Command::Demo(args) => synth::demo(&args),
    })
}

/// What a process running jobs sets up once: the panic hook that stops a job when a worker
/// fails (`crash`), and log lines to standard error (`RUST_LOG`, `info` by default). Calling it
/// again does nothing.
pub fn set_up_process() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        crash::install_hook();
        let _ = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_default_env()
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,html5ever=error")),
            )
            .try_init();
    });
}
