//! `stencil run` and `stencil apply`: the whole job, from WARC files to the tables.
//!
//! Every worker of one timely computation takes its share of the files (file i to worker
//! i mod workers) and goes through the stages below ([`worker`] drives them, sharing the
//! read-only [`job`]); a stage that needs the whole crawl is a small dataflow every worker
//! steps through together, and pages never leave the worker that parsed them:
//!
//! 1. **Read** ([`worker`]). Every record becomes a `records` row; every HTML page is parsed
//!    once into the compact DOM arena and hashed ([`store`] keeps it, spilling to local disk
//!    past the worker's share of `--memory-budget`), and its fingerprints join the host's
//!    bottom-k sample.
//! 2. **Site statistics** (`site::dataflow::learn`): SiteLevel(θ) counts across workers; each
//!    worker gets the model of every host it holds.
//! 3. **Labels** (`site::label_page`): each kept page's template roots, site-level fractions,
//!    `training` rows and the worker's stratified sample.
//! 4. **Model** (`fit::fit_and_broadcast`): fitted on worker 0 and broadcast — or `--model`,
//!    or the shipped model when the crawl has too few labelled hosts.
//! 5. **Pages** ([`page`], [`finish`]): scores, smoothing, fractions and cleaned text of every
//!    kept page, streamed to `pages` and `segments`.
//! 6. **Hosts** (`site::dataflow::gather`): `site_templates` and `hosts`, then the workers'
//!    reports meet on worker 0 for `run.json` ([`report`]).
//!
//! `apply` is the nightly mode: no statistics and no training, so each page goes from stage 1
//! straight to stage 5 and nothing is kept; an earlier run's `site_templates` can stand in for
//! stage 2 ([`site_templates`]).

mod args;
pub mod clean;
mod finish;
mod job;
pub mod page;
mod report;
mod resume;
pub mod show;
mod site_templates;
pub mod store;
mod worker;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use stencil_operators::page_models::content::ContentModel;
use stencil_operators::site::templates::Method;

pub use args::{ApplyArgs, PageArgs, RunArgs};
pub use args::{DEFAULT_HIDDEN_THRESHOLD, DEFAULT_SITE_WEIGHT, MIN_TRAINING_HOSTS};
use job::{Job, Layout, ModelPlan, SiteSource, TrainingRows};
use report::{print_summary, write_run_json, WorkerReport};
use resume::Identity;
pub(crate) use site_templates::load_site_templates;
use site_templates::refuse_text_block_templates;
use worker::run_worker;

use crate::cluster::ClusterArgs;
use crate::model_file::load_model;
use crate::progress::Reporter;
use crate::site::state::Plan;
use crate::smoothing::Smoothing;

/// The tables `run` writes (`apply` writes all but `training`, and `site_templates` only
/// when it is given them; `template_changes` comes only with `--state`).
pub const TABLES: [&str; 7] = [
    "pages",
    "hosts",
    "segments",
    "site_templates",
    "training",
    "records",
    "template_changes",
];

pub fn run(args: &RunArgs) -> Result<ExitCode, String> {
    let site = &args.site;
    let statistics = site.statistics()?;
    if args.state.is_some() && site.labels == crate::site::LabelArg::Kolcz {
        return Err(
            "--state keeps subtree fingerprints (--labels paper); --labels kolcz's text \
             blocks are not carried"
                .to_string(),
        );
    }
    if args.state.is_some() && statistics.method != Method::SiteLevel {
        return Err(format!(
            "--state carries SiteLevel(θ)'s samples; --method {} keeps label trees, which a \
             state does not hold",
            statistics.method.as_str()
        ));
    }
    // What a state must have been made with to be continued: what decides its samples and
    // templates.
    let state_statistics = serde_json::json!({
        "labels": site.labels.scheme().as_str(),
        "theta": site.theta,
        "min_host_pages": site.min_host_pages,
        "host_sample": site.host_sample,
    });
    let smoothing = args.page.smoothing.smoothing()?;
    let plan = match &args.model {
        Some(path) => ModelPlan::Given(
            load_model(Some(path))?,
            format!("given: {}", path.display()),
        ),
        None => {
            let mut settings = args
                .fit
                .settings(site.labels.scheme(), site.params(), smoothing)?;
            settings.min_hosts = args.min_training_hosts.max(1);
            ModelPlan::Train(settings)
        }
    };
    let setup = Setup {
        paths: &site.paths,
        out: &site.out,
        cluster: &site.cluster,
        limits: site.limits.limits(),
        site: SiteSource::Learn {
            statistics,
            scheme: site.labels.scheme(),
        },
        plan,
        smoothing,
        options: args.page.options()?,
        content: args.page.content_model()?,
        training_rows: match (site.no_training, args.all_training_rows) {
            (true, _) => TrainingRows::None,
            (false, false) => TrainingRows::Sampled,
            (false, true) => TrainingRows::All,
        },
        memory_budget: args.memory_budget(),
        spill_dir: args.spill_dir.clone(),
        tables: if args.state.is_some() {
            &TABLES
        } else {
            &TABLES[..6]
        },
        state: args
            .state
            .clone()
            .map(|dir| (dir, args.state_max_age, state_statistics)),
        layout: Layout::Restart,
        resume: args.resume,
        site_templates_digest: None,
        configuration: serde_json::json!({
            "command": "run",
            "state": args.state.as_ref().map(|p| p.display().to_string()),
            "state_max_age": args.state_max_age,
            "labels": site.labels.scheme().as_str(),
            "method": statistics.method.as_str(),
            "sample_pages": site.sample_pages,
            "min_cluster_pages": site.min_cluster_pages,
            "template_sample": site.template_sample,
            "theta": site.theta,
            "min_host_pages": site.min_host_pages,
            "host_sample": site.host_sample,
            "min_training_hosts": args.min_training_hosts,
            "sample_cap": args.fit.sample_cap,
            "l2": args.fit.l2,
            "folds": args.fit.folds,
            "memory_budget": args.memory_budget(),
        }),
    };
    execute(setup)
}

pub fn apply(args: &ApplyArgs) -> Result<ExitCode, String> {
    let smoothing = args.page.smoothing.smoothing()?;
    let model = load_model(args.model.as_deref())?;
    let source = match &args.model {
        Some(path) => format!("given: {}", path.display()),
        None => "shipped".to_string(),
    };
    let (site, site_templates_digest) = match (&args.site_templates, &args.state) {
        (Some(dir), _) => {
            refuse_text_block_templates(dir)?;
            let digest = resume::site_templates_digest(dir)?;
            (SiteSource::Loaded(load_site_templates(dir)?), Some(digest))
        }
        (None, Some(root)) => {
            let generation = current_generation(root)?;
            let digest = resume::site_templates_digest(&generation)?;
            (
                SiteSource::Loaded(load_site_templates(&generation)?),
                Some(digest),
            )
        }
        (None, None) => (SiteSource::None, None),
    };
    let tables: &[&str] = &["pages", "hosts", "segments", "records"];
    let setup = Setup {
        paths: &args.paths,
        out: &args.out,
        cluster: &args.cluster,
        limits: args.limits.limits(),
        site,
        plan: ModelPlan::Given(model, source),
        smoothing,
        options: args.page.options()?,
        content: args.page.content_model()?,
        training_rows: TrainingRows::None,
        memory_budget: 0,
        spill_dir: None,
        tables,
        state: None,
        layout: Layout::FileShares,
        resume: args.resume,
        site_templates_digest,
        configuration: serde_json::json!({
            "command": "apply",
            "site_templates": args.site_templates.as_ref().map(|p| p.display().to_string()),
            "state": args.state.as_ref().map(|p| p.display().to_string()),
        }),
    };
    execute(setup)
}

/// A job, as `run` and `apply` describe it.
struct Setup<'a> {
    paths: &'a [PathBuf],
    out: &'a Path,
    cluster: &'a ClusterArgs,
    limits: stencil_operators::reading::warc::Limits,
    site: SiteSource,
    plan: ModelPlan,
    smoothing: Smoothing,
    options: page::Options,
    content: ContentModel,
    training_rows: TrainingRows,
    memory_budget: u64,
    spill_dir: Option<PathBuf>,
    tables: &'a [&'a str],
    /// `run --state`: the state folder, `--state-max-age`, and the parameters it must match.
    state: Option<(PathBuf, Option<u32>, serde_json::Value)>,
    layout: Layout,
    resume: bool,
    /// Of the site templates `apply` reads, for the job's identity.
    site_templates_digest: Option<String>,
    configuration: serde_json::Value,
}

/// `apply --state`: the current generation of a state folder, whose `site_templates` it reads.
fn current_generation(root: &Path) -> Result<PathBuf, String> {
    let Some((generation, manifest)) = crate::site::state::current(root)? else {
        return Err(format!(
            "{}: no state here (it is made by `stencil run --state`)",
            root.display()
        ));
    };
    if manifest.statistics["labels"] == "kolcz" {
        return Err(format!(
            "{}: its templates are text-block fingerprints (--labels kolcz); apply needs those \
             of a state made with --labels paper",
            root.display()
        ));
    }
    Ok(generation)
}

fn execute(setup: Setup<'_>) -> Result<ExitCode, String> {
    let config = setup.cluster.config()?;
    let files = crate::files::collect(setup.paths)?;
    let names = files
        .iter()
        .map(|p| Arc::from(p.display().to_string()))
        .collect();
    let total_bytes: u64 = files
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let state = match &setup.state {
        Some((root, max_age, statistics)) => {
            let digest = crate::site::state::inputs_digest(&files);
            let plan = Plan::open(root, statistics.clone(), digest, *max_age)?;
            Some(plan)
        }
        None => None,
    };
    let reporter = Reporter::start(total_bytes / setup.cluster.processes.max(1) as u64);
    let workers = setup.cluster.workers.max(1);
    let job = Arc::new(Job {
        files,
        names,
        out: setup.out.to_path_buf(),
        limits: setup.limits,
        site: setup.site,
        plan: setup.plan,
        smoothing: setup.smoothing,
        options: setup.options,
        content: setup.content,
        training_rows: setup.training_rows,
        worker_budget: (setup.memory_budget / workers as u64) as usize,
        spill_dir: setup.spill_dir.unwrap_or_else(|| setup.out.join(".spill")),
        reporter: reporter.counters_arc(),
        state,
        layout: setup.layout,
        resume: setup.resume,
    });
    let peers = setup.cluster.processes.max(1) * workers;
    let identity = Identity::new(
        &job,
        &setup.configuration,
        setup.site_templates_digest.clone(),
        setup.layout,
        peers,
    )?;
    if setup.cluster.is_first_process() {
        // Before any worker of any process starts: timely connects every process first, and
        // this one connects only after this.
        resume::prepare(setup.out, &identity, setup.resume, setup.layout, &TABLES)?;
        if let Some(plan) = &job.state {
            plan.prepare()?;
        }
    }
    // Spill files a killed job left (each process its own, also before connecting).
    resume::remove_stale_spill(&job.spill_dir);
    let start = Instant::now();
    let worker_job = job.clone();
    let guards = setup
        .cluster
        .execute(config, move |worker| run_worker(worker, &worker_job))?;
    let mut gathered: Option<WorkerReport> = None;
    let mut errors = Vec::new();
    for result in guards.join() {
        match result {
            Ok(Ok(Some(report))) => gathered = Some(report),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => errors.push(e),
            Err(e) => errors.push(format!("worker failed: {e}")),
        }
    }
    drop(reporter);
    let seconds = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir(&job.spill_dir);
    if let Some(report) = &gathered {
        print_summary(&job, report, seconds);
        crate::crash::kill_point("run-json");
        write_run_json(&job, report, seconds, &setup.configuration, setup.tables)?;
        errors.extend(report.failures.iter().cloned());
    }
    // Every worker wrote its buckets before its report reached worker 0.
    if let (true, Some(plan), true) = (gathered.is_some(), &job.state, errors.is_empty()) {
        plan.commit()?;
        eprintln!("state: night {} -> {}", plan.night(), plan.root().display());
    }
    if errors.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        errors.sort();
        errors.dedup();
        for error in &errors {
            eprintln!("stencil: {error}");
        }
        Ok(ExitCode::FAILURE)
    }
}
