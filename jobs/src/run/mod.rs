//! `stencil run` and `stencil apply`: the whole job, from WARC files to the tables.
//!
//! Every worker of one timely computation takes its share of the files (file i to worker
//! i mod workers) and goes through the stages below; a stage that needs the whole crawl is a
//! small dataflow every worker steps through together, and pages never leave the worker that
//! parsed them:
//!
//! 1. **Read.** Every record becomes a `records` row; every HTML page is parsed once into the
//!    compact DOM arena and hashed ([`store`] keeps it, spilling to local disk past the
//!    worker's share of `--memory-budget`), and its fingerprints join the host's bottom-k
//!    sample.
//! 2. **Site statistics** (`site::dataflow::learn`): SiteLevel(θ) counts across workers; each
//!    worker gets the model of every host it holds.
//! 3. **Labels** (`site::label_page`): each kept page's template roots, site-level fractions,
//!    `training` rows and the worker's stratified sample.
//! 4. **Model** (`fit::fit_and_broadcast`): fitted on worker 0 and broadcast — or `--model`,
//!    or the shipped model when the crawl has too few labelled hosts.
//! 5. **Pages** ([`page`]): scores, smoothing, fractions and cleaned text of every kept page,
//!    streamed to `pages` and `segments`.
//! 6. **Hosts** (`site::dataflow::gather`): `site_templates` and `hosts`, then the workers'
//!    reports meet on worker 0 for `run.json`.
//!
//! `apply` is the nightly mode: no statistics and no training, so each page goes from stage 1
//! straight to stage 5 and nothing is kept; an earlier run's `site_templates` can stand in for
//! stage 2.

pub mod clean;
pub mod page;
pub mod store;

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use serde::{Deserialize, Serialize};
use stencil_operators::contain::{contain, Panic};
use stencil_operators::dom::subtree::summarize;
use stencil_operators::fractions::{self, Fractions};
use stencil_operators::inventory::{for_each_record, Inventory, RecordEntry};
use stencil_operators::page_models::content::ContentModel;
use stencil_operators::page_models::model::{Model, StratifiedSample};
use stencil_operators::reading::page::Page;
use stencil_operators::site::labels::Scheme;
use stencil_operators::site::site_level::{site_of, url_key, HostModel};
use timely::dataflow::operators::{Exchange, Inspect, Probe};
use timely::worker::Worker;

use crate::cluster::ClusterArgs;
use crate::fit::{fit_and_broadcast, FitArgs, TrainSettings};
use crate::limits::LimitArgs;
use crate::model_file::{load_model, write_model};
use crate::progress::Reporter;
use crate::score::Scorer;
use crate::site::dataflow::{self, HostFact, LocalFindings};
use crate::site::statistics::{Learned, Statistics};
use crate::site::SiteArgs;
use crate::smoothing::{Smoothing, SmoothingArgs};
use crate::tables::{self, PageRow, RecordRow, Rows, SegmentRow, StreamingPart, TrainingColumns};
use stencil_operators::site::etdm::label_tree_exact;
use store::{Kept, PageMeta, Store};

/// The tables `run` writes (`apply` writes all but `training`, and `site_templates` only
/// when it is given them).
pub const TABLES: [&str; 6] = [
    "pages",
    "hosts",
    "segments",
    "site_templates",
    "training",
    "records",
];

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
    /// workers); past it pages spill to --spill-dir. Bytes, or with a K, M or G suffix.
    #[arg(long, default_value = "4G", value_parser = parse_bytes)]
    pub memory_budget: u64,
    /// Where pages spill past the memory budget (local disk); OUT/.spill by default.
    #[arg(long)]
    pub spill_dir: Option<PathBuf>,
    /// Write `training` rows for every page of every labelled host, not only for the pages
    /// sampled for the site statistics (up to --host-sample per host), which are the ones the
    /// classifier learns from. Every page's rows cost about a quarter of the run's time and
    /// grow with the crawl instead of with its number of hosts.
    #[arg(long, conflicts_with = "no_training")]
    pub all_training_rows: bool,
}

/// An f32 setting as the user wrote it (0.8, not 0.800000011920929): the shortest decimal
/// that reads back as the same f32.
fn as_given(value: f32) -> serde_json::Value {
    value
        .to_string()
        .parse::<f64>()
        .map_or(serde_json::Value::Null, serde_json::Value::from)
}

/// Which pages of labelled hosts give `training` rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TrainingRows {
    None,
    /// The pages in the host's sample, the classifier's own training data (the default).
    Sampled,
    All,
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
    /// template model leaves (the cleaned text before the content model, for comparisons).
    #[arg(long, value_enum, default_value_t = page::CleanedFrom::Content)]
    pub cleaned_text: page::CleanedFrom,
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
    #[arg(long)]
    pub site_templates: Option<PathBuf>,
    #[command(flatten)]
    pub page: PageArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
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

/// Which model the pages are scored with.
enum ModelPlan {
    /// Fit one on the crawl's site-level labels (falling back to the shipped one).
    Train(TrainSettings),
    /// Use this one: `--model`, or the shipped model in `apply`.
    Given(Model, String),
}

/// What every worker shares, read-only.
struct Job {
    files: Vec<PathBuf>,
    /// `warc_file` of the tables: each file's path as listed.
    names: Vec<Arc<str>>,
    out: PathBuf,
    limits: stencil_operators::reading::warc::Limits,
    /// Site statistics to compute (`run`), or to take from an earlier run (`apply`), or none.
    site: SiteSource,
    plan: ModelPlan,
    smoothing: Smoothing,
    options: page::Options,
    /// The main-content model, the same on every worker (shipped, or --content-model).
    content: ContentModel,
    training_rows: TrainingRows,
    /// Each worker's share of the memory budget, and where it spills.
    worker_budget: usize,
    spill_dir: PathBuf,
    reporter: Arc<crate::progress::Counters>,
}

enum SiteSource {
    Learn {
        statistics: Statistics,
        scheme: Scheme,
    },
    Loaded(HashMap<String, HostModel>),
    None,
}

/// What a worker did; the workers' reports meet on worker 0 for the summary and run.json.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct WorkerReport {
    inventory: Inventory,
    /// Seconds per stage, in stage order.
    seconds: Vec<(String, f64)>,
    pages: u64,
    segments: u64,
    quantized_pages: u64,
    training_rows: u64,
    examples_offered: u64,
    template_rows: u64,
    hosts: u64,
    site_level_hosts: u64,
    spilled_pages: u64,
    spilled_bytes: u64,
    peak_kept_bytes: u64,
    failures: Vec<String>,
    /// Set by worker 0: how the model was chosen.
    model: Option<String>,
    fallback: Option<String>,
}

impl WorkerReport {
    fn merge(&mut self, other: &WorkerReport) {
        self.inventory.merge(&other.inventory);
        for (stage, seconds) in &other.seconds {
            match self.seconds.iter_mut().find(|(s, _)| s == stage) {
                Some((_, mine)) => *mine = mine.max(*seconds),
                None => self.seconds.push((stage.clone(), *seconds)),
            }
        }
        self.pages += other.pages;
        self.segments += other.segments;
        self.quantized_pages += other.quantized_pages;
        self.training_rows += other.training_rows;
        self.examples_offered += other.examples_offered;
        self.template_rows += other.template_rows;
        self.hosts += other.hosts;
        self.site_level_hosts += other.site_level_hosts;
        self.spilled_pages += other.spilled_pages;
        self.spilled_bytes += other.spilled_bytes;
        self.peak_kept_bytes = self.peak_kept_bytes.max(other.peak_kept_bytes);
        self.failures.extend(other.failures.iter().cloned());
        self.model = self.model.take().or(other.model.clone());
        self.fallback = self.fallback.take().or(other.fallback.clone());
    }
}

pub fn run(args: &RunArgs) -> Result<ExitCode, String> {
    let site = &args.site;
    let statistics = site.statistics()?;
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
        memory_budget: args.memory_budget,
        spill_dir: args.spill_dir.clone(),
        tables: &TABLES,
        configuration: serde_json::json!({
            "command": "run",
            "labels": site.labels.scheme().as_str(),
            "method": statistics.method.as_str(),
            "sample_pages": site.sample_pages,
            "theta": site.theta,
            "min_host_pages": site.min_host_pages,
            "host_sample": site.host_sample,
            "min_training_hosts": args.min_training_hosts,
            "sample_cap": args.fit.sample_cap,
            "l2": args.fit.l2,
            "folds": args.fit.folds,
            "memory_budget": args.memory_budget,
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
    let site = match &args.site_templates {
        Some(dir) => {
            refuse_text_block_templates(dir)?;
            SiteSource::Loaded(load_site_templates(dir)?)
        }
        None => SiteSource::None,
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
        configuration: serde_json::json!({
            "command": "apply",
            "site_templates": args.site_templates.as_ref().map(|p| p.display().to_string()),
        }),
    };
    execute(setup)
}

/// `apply` finds templates by subtree hash (the `paper` labels' fingerprints); a run with
/// `--labels kolcz` stored text-block fingerprints, which would silently match nothing.
fn refuse_text_block_templates(dir: &Path) -> Result<(), String> {
    let Ok(text) = std::fs::read_to_string(dir.join("run.json")) else {
        return Ok(());
    };
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    if json["configuration"]["labels"] == "kolcz" {
        return Err(format!(
            "{}: its site templates are text-block fingerprints (--labels kolcz); apply needs \
             those of a run with --labels paper",
            dir.display()
        ));
    }
    Ok(())
}

/// Reads the `site_templates` table of an earlier run into host models that mark exactly its
/// templates.
fn load_site_templates(dir: &Path) -> Result<HashMap<String, HostModel>, String> {
    use arrow_array::{Array, StringArray, UInt32Array, UInt64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let table = dir.join("site_templates");
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&table)
        .map_err(|e| format!("{}: {e}", table.display()))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    parts.sort();
    if parts.is_empty() {
        return Err(format!("{}: no part-*.parquet files", table.display()));
    }
    let mut models: HashMap<String, HostModel> = HashMap::new();
    for part in parts {
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", part.display());
        let file = std::fs::File::open(&part).map_err(|e| fail(&e))?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|e| fail(&e))?;
        for batch in reader {
            let batch = batch.map_err(|e| fail(&e))?;
            let column = |name: &str| {
                batch
                    .column_by_name(name)
                    .ok_or_else(|| fail(&format!("no column {name}")))
            };
            let hosts = column("host")?.as_any().downcast_ref::<StringArray>();
            let hashes = column("hash")?.as_any().downcast_ref::<UInt64Array>();
            let with = column("pages_with")?.as_any().downcast_ref::<UInt32Array>();
            let sampled = column("pages_sampled")?
                .as_any()
                .downcast_ref::<UInt32Array>();
            let (Some(hosts), Some(hashes), Some(with), Some(sampled)) =
                (hosts, hashes, with, sampled)
            else {
                return Err(fail(&"not a site_templates table"));
            };
            for row in 0..batch.num_rows() {
                if hosts.is_null(row) {
                    continue;
                }
                let model = models
                    .entry(hosts.value(row).to_string())
                    .or_insert_with(|| HostModel {
                        pages: 0,
                        pages_sampled: sampled.value(row),
                        labelled: true,
                        min_count: 1,
                        sample_max_key: 0,
                        counts: HashMap::new(),
                    });
                model
                    .counts
                    .insert(hashes.value(row), with.value(row).max(1));
            }
        }
    }
    Ok(models)
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
    configuration: serde_json::Value,
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
    if setup.cluster.is_first_process() {
        // Before any worker starts: other processes write only after the first dataflow,
        // which cannot complete without this process.
        tables::remove_earlier_parts(setup.out, &TABLES)?;
        let _ = std::fs::remove_file(setup.out.join("run.json"));
    }
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
    });
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
        write_run_json(&job, report, seconds, &setup.configuration, setup.tables)?;
        errors.extend(report.failures.iter().cloned());
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

/// One worker's whole job. Returns the merged report of all workers on worker 0.
fn run_worker(worker: &mut Worker, job: &Job) -> Result<Option<WorkerReport>, String> {
    let (index, peers) = (worker.index(), worker.peers());
    let mine = crate::files::shares(index, peers, job.files.len());
    let mut report = WorkerReport::default();
    let mut clock = Instant::now();
    let counters = job.reporter.clone();
    let here = crate::crash::Whereabouts::register(index);
    here.stage("read and parse");
    let stage_of = here.clone();
    // Each stage's time, and (on worker 0) the progress line names the stage that follows.
    let mut lap = |report: &mut WorkerReport, stage: &str, next: &'static str| {
        report
            .seconds
            .push((stage.to_string(), clock.elapsed().as_secs_f64()));
        clock = Instant::now();
        stage_of.stage(next);
        if index == 0 {
            counters.set_stage(next);
        }
    };
    // A failure to write stops this worker's work but not its part in the dataflows, or the
    // other workers would wait for it forever.
    let mut failure: Option<String> = None;
    let mut parts = Parts::create(&job.out, index, job)
        .map_err(|e| failure = Some(e))
        .ok();

    // 1. Read: records, parse once, keep (or, in `apply`, finish at once).
    let learn = matches!(job.site, SiteSource::Learn { .. });
    let mut local = match &job.site {
        SiteSource::Learn { statistics, .. } => Some(statistics.local()),
        _ => None,
    };
    let mut store = Store::new(
        job.worker_budget,
        job.spill_dir.join(format!("worker-{index:05}")),
    );
    let mut findings = LocalFindings::default();
    let mut tally = Tally::default();
    // Pages counted as parsed that a later stage panicked on (they move to `error`).
    let mut late_panics = 0u64;
    let mut loaded_hosts: BTreeSet<String> = BTreeSet::new();
    let direct_scorer = match (&job.plan, learn) {
        (ModelPlan::Given(model, source), false) => {
            report.model = Some(source.clone());
            Some(Scorer {
                model: model.clone(),
                smoothing: job.smoothing,
            })
        }
        _ => None,
    };
    for &(file, share) in &mine {
        let path = &job.files[file];
        let name = &job.names[file];
        let mut last = stencil_operators::inventory::Progress::default();
        let counters = &job.reporter;
        here.file(name);
        let visit = |entry: RecordEntry, page: Option<(Box<Page>, stencil_operators::dom::Dom)>| {
            here.offset(entry.offset);
            crate::crash::inject_worker_fault(index);
            if failure.is_some() {
                return;
            }
            let Some(parts) = parts.as_mut() else { return };
            let Some((page, dom)) = page else {
                let row = RecordRow {
                    warc_file: name.clone(),
                    entry,
                };
                failure = parts.records.push(row).err();
                return;
            };
            // A page's `records` row is written when the page is finished, so that a panic
            // in any later stage can still be its outcome.
            let meta = meta_of(&page, &entry, file);
            let hashed = contain("hashes", || {
                crate::crash::enter("hashes", &page.url);
                let sums = summarize(&dom, &page.host);
                let host = site_of(&page.host);
                let offered = match (&job.site, &local) {
                    (SiteSource::Learn { statistics, .. }, Some(local)) if !host.is_empty() => {
                        let key = url_key(&page.url);
                        let offer = statistics.prepare(local, (&page.url, host, key), &dom, &sums);
                        Some((key, offer))
                    }
                    _ => None,
                };
                (sums, offered)
            });
            let (sums, offered) = match hashed {
                Ok(hashed) => hashed,
                Err(panic) => {
                    late_panics += 1;
                    failure = parts.records.push(failed_row(name, &meta, &panic)).err();
                    return;
                }
            };
            if let (SiteSource::Learn { statistics, .. }, Some(local), Some((key, offer))) =
                (&job.site, local.as_mut(), offered)
            {
                statistics.offer(local, site_of(&page.host), key, offer);
            }
            // `dom::parse` sizes the arena exactly: a kept page holds no growth slack.
            let kept = Kept { meta, dom, sums };
            drop(page);
            let result = match &direct_scorer {
                Some(scorer) => {
                    let host = site_of(&kept.meta.host);
                    let site = match &job.site {
                        SiteSource::Loaded(models) => models.get(host),
                        _ => None,
                    };
                    if site.is_some() && !loaded_hosts.contains(host) {
                        loaded_hosts.insert(host.to_string());
                    }
                    let roots = site.map(|model| {
                        contain("labels", || {
                            crate::crash::enter("labels", &kept.meta.url);
                            site_roots(&kept, model, Scheme::Paper)
                        })
                    });
                    let finished = match roots.transpose() {
                        Ok(roots) => finish(kept, roots, scorer, job),
                        Err(panic) => Finished::Failed(failed_row(name, &kept.meta, &panic)),
                    };
                    finished.commit(parts, &mut findings, &mut tally, &mut late_panics)
                }
                None => store.push(kept),
            };
            if let Err(e) = result {
                failure = Some(e);
            }
        };
        let progress = |p: stencil_operators::inventory::Progress| {
            let add = |counter: &std::sync::atomic::AtomicU64, now: u64, before: u64| {
                counter.fetch_add(now.saturating_sub(before), Ordering::Relaxed);
            };
            // A shared file's bytes are counted by its first reader only.
            if share.part == 0 {
                add(&counters.input_bytes, p.offset, last.offset);
            }
            add(&counters.pages, p.pages, last.pages);
            add(&counters.html_bytes, p.html_bytes, last.html_bytes);
            last = p;
        };
        let result = for_each_record(
            path,
            &job.limits,
            share,
            &mut report.inventory,
            visit,
            progress,
        );
        // Every reader of a shared file meets the same failure; its first reader reports it.
        if let (Err(e), 0) = (result, share.part) {
            // Keep going: the file's records read so far are in `records`; the run fails at
            // the end, naming the file.
            report.failures.push(format!("{}: {e}", path.display()));
        }
    }
    let next = if learn {
        "site statistics"
    } else {
        "hosts and tables"
    };
    lap(&mut report, "read and parse", next);

    if let (SiteSource::Learn { statistics, scheme }, Some(local)) = (&job.site, local) {
        // 2. Site statistics. ETDM then wants the exact label trees of each host's key page
        // and complete subdigraph, which only the workers holding them can make.
        let models = match statistics.learn(worker, local) {
            Learned::Templates(templates) => templates,
            Learned::Etdm(pending) => {
                let mut trees = Vec::new();
                let made = store.for_each(|_, kept| {
                    let host = site_of(&kept.meta.host);
                    if let Some(place) = pending.wanted(&kept.meta.url, host) {
                        // A page that panics here is left out of its host's ETDM; its
                        // labelling meets the same page and records the panic.
                        if let Ok(tree) = contain("labels", || label_tree_exact(&kept.dom)) {
                            trees.push((host.to_string(), place, tree));
                        }
                    }
                    Ok(())
                });
                if let Err(e) = made {
                    failure.get_or_insert(e);
                }
                pending.finish(worker, trees)
            }
        };
        lap(&mut report, "site statistics", "labels");

        // 3. Labels, site-level fractions, training rows and the sample.
        let mut train_sample = match &job.plan {
            ModelPlan::Train(settings) => Some(StratifiedSample::new(settings.sample_cap)),
            ModelPlan::Given(..) => None,
        };
        // Per kept page: its template roots (`None` without a labelled host model), or the
        // panic that stopped its labelling.
        let mut roots_of: Vec<Result<Option<Vec<u32>>, Panic>> = Vec::with_capacity(store.len());
        let labelled = store.for_each(|_, kept| {
            let Some(model) = models.get(site_of(&kept.meta.host)) else {
                roots_of.push(Ok(None));
                return Ok(());
            };
            let training = parts.as_mut().and_then(|p| p.training.as_mut());
            let training = training.filter(|_| failure.is_none());
            let labels = contain("labels", || {
                crate::crash::enter("labels", &kept.meta.url);
                crate::site::label_page(
                    (&kept.meta.url, &kept.meta.host),
                    &kept.dom,
                    &kept.sums,
                    model,
                    *scheme,
                    &findings,
                    (training.is_some(), job.training_rows == TrainingRows::All),
                    train_sample.is_some(),
                )
            });
            let labels = match labels {
                Ok(labels) => labels,
                Err(panic) => {
                    roots_of.push(Err(panic));
                    return Ok(());
                }
            };
            let roots = labels.commit(
                (&kept.meta.url, &kept.meta.host),
                &kept.dom,
                &kept.sums,
                *scheme,
                &mut findings,
                training,
                train_sample.as_mut(),
            )?;
            roots_of.push(Ok(model.labelled().then(|| {
                roots
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.is_some())
                    .map(|(i, _)| i as u32)
                    .collect()
            })));
            Ok(())
        });
        if let Err(e) = labelled {
            failure.get_or_insert(e);
        }
        for (host, templates) in &models {
            findings
                .facts
                .push((host.clone(), HostFact::of_templates(templates)));
        }
        lap(&mut report, "labels", "training");

        // 4. The model.
        let scorer = match &job.plan {
            ModelPlan::Given(model, source) => {
                report.model = Some(source.clone());
                Ok(model.clone())
            }
            ModelPlan::Train(settings) => {
                let sample = train_sample.unwrap_or_else(|| StratifiedSample::new(1));
                report.examples_offered = sample.offered();
                fit_and_broadcast(worker, sample, settings).map(|trained| {
                    report.model = Some(match &trained.fallback {
                        Some(_) => "shipped".to_string(),
                        None => "trained".to_string(),
                    });
                    report.fallback = trained.fallback;
                    trained.model
                })
            }
        }
        .map(|model| Scorer {
            model,
            smoothing: job.smoothing,
        });
        lap(
            &mut report,
            "training",
            "scoring, smoothing and cleaning pages",
        );
        let scorer = match scorer {
            Ok(scorer) => Some(scorer),
            Err(e) => {
                failure.get_or_insert(e);
                None
            }
        };
        if let (Some(scorer), 0, ModelPlan::Train(_), None) =
            (&scorer, index, &job.plan, &report.fallback)
        {
            write_model(&job.out, &scorer.model).unwrap_or_else(|e| failure = Some(e));
        }

        // 5. Pages.
        report.spilled_pages = store.spilled_pages;
        report.spilled_bytes = store.spilled_bytes;
        report.peak_kept_bytes = store.peak_memory as u64;
        let finished = store.drain(|ordinal, kept| {
            let Some(parts) = parts.as_mut() else {
                return Ok(());
            };
            let warc_file = &job.names[kept.meta.file as usize];
            let (Some(scorer), None) = (&scorer, &failure) else {
                // The run has failed; its `records` still account for every page read.
                let entry = kept.meta.record_entry(None);
                let row = RecordRow {
                    warc_file: warc_file.clone(),
                    entry,
                };
                let _ = parts.records.push(row);
                return Ok(());
            };
            let roots = roots_of
                .get_mut(ordinal)
                .map_or(Ok(None), |slot| std::mem::replace(slot, Ok(None)));
            let finished = match roots {
                Ok(roots) => finish(kept, roots, scorer, job),
                Err(panic) => Finished::Failed(failed_row(warc_file, &kept.meta, &panic)),
            };
            finished.commit(parts, &mut findings, &mut tally, &mut late_panics)
        });
        if let Err(e) = finished {
            failure.get_or_insert(e);
        }
        lap(&mut report, "pages", "hosts and tables");
    }

    report.inventory.pages_panicked(late_panics);
    report.pages = tally.pages;
    report.segments = tally.segments;
    report.quantized_pages = tally.quantized;
    if let SiteSource::Loaded(models) = &job.site {
        for host in loaded_hosts {
            let templates = models.get(&host).map_or(0, |m| m.counts.len() as u64);
            findings.facts.push((
                host,
                HostFact::Model {
                    pages: 0,
                    pages_sampled: 0,
                    labelled: true,
                    min_count: 1,
                    template_hashes: templates,
                    method: None,
                },
            ));
        }
    }

    // 6. Hosts and site templates.
    let (template_rows, host_rows) = dataflow::gather(worker, findings);
    report.template_rows = template_rows.len() as u64;
    report.hosts = host_rows.len() as u64;
    report.site_level_hosts = host_rows.iter().filter(|h| h.site_level).count() as u64;
    if failure.is_none() {
        let written = (|| {
            let templates = learn.then_some(template_rows.as_slice());
            tables::write_host_tables(&job.out, index, templates, &host_rows)?;
            if let Some(parts) = parts.take() {
                report.training_rows = parts.finish()?;
            }
            Ok::<(), String>(())
        })();
        if let Err(e) = written {
            failure = Some(e);
        }
    }
    lap(&mut report, "hosts and tables", "done");
    if let Some(e) = failure {
        report.failures.push(e);
    }
    Ok(gather_reports(worker, report))
}

/// What `finish` counts.
#[derive(Default)]
struct Tally {
    pages: u64,
    segments: u64,
    quantized: u64,
}

/// A page at the end of its journey: its rows, or the `records` row of the panic that
/// stopped it (and no other row).
// Made once per page and consumed at once: the size of the rarer variant costs nothing.
#[allow(clippy::large_enum_variant)]
enum Finished {
    Done {
        record: RecordRow,
        page: PageRow,
        segments: Vec<SegmentRow>,
        quantized: bool,
    },
    Failed(RecordRow),
}

impl Finished {
    /// Writes the page's rows and counts them.
    fn commit(
        self,
        parts: &mut Parts,
        findings: &mut LocalFindings,
        tally: &mut Tally,
        late_panics: &mut u64,
    ) -> Result<(), String> {
        match self {
            Finished::Done {
                record,
                page,
                segments,
                quantized,
            } => {
                parts.records.push(record)?;
                tally.segments += segments.len() as u64;
                tally.quantized += u64::from(quantized);
                for row in segments {
                    parts.segments.push(row)?;
                }
                if !page.host.is_empty() {
                    findings.facts.push((
                        page.host.clone(),
                        HostFact::Fractions(page::fraction_bits(&page)),
                    ));
                }
                parts.pages.push(page)?;
                tally.pages += 1;
            }
            Finished::Failed(record) => {
                *late_panics += 1;
                parts.records.push(record)?;
            }
        }
        Ok(())
    }
}

/// Stage 5 for one page, contained: its `pages`, `segments` and `records` rows.
fn finish(kept: Kept, roots: Option<Vec<u32>>, scorer: &Scorer, job: &Job) -> Finished {
    let Kept { meta, dom, sums } = kept;
    let warc_file = &job.names[meta.file as usize];
    let done = contain("features", || {
        crate::crash::enter("features", &meta.url);
        let inside = roots.map(|roots| dom.inside_subtrees(&roots));
        let analysis = page::analyse(
            &dom,
            &sums,
            scorer,
            &job.content,
            inside.as_deref(),
            job.options,
            &meta.url,
        );
        let site: Option<Fractions> = inside
            .as_ref()
            .map(|inside| fractions::of(&dom, &sums, inside));
        let url: Arc<str> = Arc::from(meta.url.as_str());
        let host: Arc<str> = Arc::from(site_of(&meta.host));
        let segments = page::segment_rows(&url, &host, &dom, &sums, &analysis);
        let quantized = analysis.segmentation.quantized;
        let record = RecordRow {
            warc_file: warc_file.clone(),
            entry: meta.record_entry(None),
        };
        let page = page::page_row(meta.clone(), warc_file.clone(), &dom, &sums, analysis, site);
        Finished::Done {
            record,
            page,
            segments,
            quantized,
        }
    });
    done.unwrap_or_else(|panic| Finished::Failed(failed_row(warc_file, &meta, &panic)))
}

/// The `records` row of a page that panicked.
fn failed_row(warc_file: &Arc<str>, meta: &PageMeta, panic: &Panic) -> RecordRow {
    RecordRow {
        warc_file: warc_file.clone(),
        entry: meta.record_entry(Some(panic)),
    }
}

/// The template roots (node indices) of a page under a loaded host model.
fn site_roots(kept: &Kept, model: &HostModel, scheme: Scheme) -> Vec<u32> {
    stencil_operators::site::site_level::template_roots(
        &kept.dom,
        &kept.sums,
        model,
        scheme.fingerprints(),
    )
    .iter()
    .enumerate()
    .filter(|(_, r)| r.is_some())
    .map(|(i, _)| i as u32)
    .collect()
}

fn meta_of(page: &Page, entry: &RecordEntry, file: usize) -> PageMeta {
    PageMeta {
        url: page.url.clone(),
        host: page.host.clone(),
        file: file as u32,
        offset: page.position.offset,
        record_id: page.record_id.clone(),
        fetch_date: page.fetch_date.clone(),
        http_status: page.http_status,
        charset: page.encoding.name().to_string(),
        truncated: page.truncated.map(|t| t.as_str().to_string()),
        html_bytes: page.body_bytes as u64,
        offset_in_member: entry.offset_in_member,
        record_type: entry.record_type.clone(),
        target_uri: entry.target_uri.clone(),
        mime_type: entry.mime_type.clone(),
    }
}

/// A worker's streaming part files.
struct Parts {
    records: StreamingPart<Rows<RecordRow>>,
    pages: StreamingPart<Rows<PageRow>>,
    segments: StreamingPart<Rows<SegmentRow>>,
    training: Option<StreamingPart<TrainingColumns>>,
}

impl Parts {
    fn create(out: &Path, worker: usize, job: &Job) -> Result<Parts, String> {
        Ok(Parts {
            records: StreamingPart::records(out, worker)?,
            pages: StreamingPart::pages(out, worker)?,
            segments: StreamingPart::segments(out, worker)?,
            training: match (&job.site, job.training_rows) {
                (SiteSource::Learn { .. }, TrainingRows::Sampled | TrainingRows::All) => {
                    Some(StreamingPart::training(out, worker)?)
                }
                _ => None,
            },
        })
    }

    /// Closes every part; returns the training rows written.
    fn finish(self) -> Result<u64, String> {
        self.records.finish()?;
        self.pages.finish()?;
        self.segments.finish()?;
        match self.training {
            Some(training) => {
                let rows = training.rows;
                training.finish()?;
                Ok(rows)
            }
            None => Ok(0),
        }
    }
}

/// Sends every worker's report to worker 0, which returns them merged.
fn gather_reports(worker: &mut Worker, report: WorkerReport) -> Option<WorkerReport> {
    let received: Rc<RefCell<Vec<String>>> = Rc::default();
    let sink = received.clone();
    let (mut input, probe) = worker.dataflow::<u64, _, _>(|scope| {
        use timely::dataflow::operators::vec::Input;
        let (input, reports) = scope.new_input::<String>();
        let probe = reports
            .exchange(|_| 0)
            .inspect(move |json| sink.borrow_mut().push(json.clone()))
            .probe()
            .0;
        (input, probe)
    });
    input.send(serde_json::to_string(&report).unwrap_or_default());
    input.advance_to(1);
    drop(input);
    crate::cluster::finish_round(worker, &probe);
    if worker.index() != 0 {
        return None;
    }
    let mut merged = WorkerReport::default();
    for json in received.take() {
        match serde_json::from_str::<WorkerReport>(&json) {
            Ok(report) => merged.merge(&report),
            Err(e) => merged
                .failures
                .push(format!("a worker's report was unreadable: {e}")),
        }
    }
    Some(merged)
}

fn print_summary(job: &Job, report: &WorkerReport, seconds: f64) {
    let inv = &report.inventory;
    let count = |key: &str| inv.by_outcome.get(key).copied().unwrap_or(0);
    eprintln!(
        "read {} files, {} records + {} unreadable stretches: {} pages, {} skipped, {} errors; \
         {:.1} MB of HTML in {seconds:.1} s ({:.1} MB/s, {:.0} pages/s)",
        inv.files,
        inv.records,
        inv.read_errors,
        count("page"),
        count("skipped"),
        count("error"),
        inv.html_bytes as f64 / 1e6,
        inv.html_bytes as f64 / 1e6 / seconds.max(1e-9),
        count("page") as f64 / seconds.max(1e-9),
    );
    crate::crash::warn_of_contained_panics(inv, "their `records` rows (reason 'panic') say where");
    if matches!(job.site, SiteSource::Learn { .. }) {
        eprintln!(
            "{} hosts, {} with site-level statistics; {} site templates; {} training rows",
            report.hosts, report.site_level_hosts, report.template_rows, report.training_rows
        );
    }
    match (&report.model, &report.fallback) {
        (Some(model), Some(reason)) => {
            eprintln!("model: {model} (the crawl cannot train a sound one: {reason})")
        }
        (Some(model), None) => eprintln!("model: {model}"),
        _ => {}
    }
    eprintln!(
        "{} pages scored and smoothed: {} segments ({:.1} per page){}",
        report.pages,
        report.segments,
        report.segments as f64 / report.pages.max(1) as f64,
        if report.spilled_pages > 0 {
            format!(
                "; {} pages ({:.0} MB) spilled to disk past --memory-budget",
                report.spilled_pages,
                report.spilled_bytes as f64 / 1e6
            )
        } else {
            String::new()
        }
    );
    let stages: Vec<String> = report
        .seconds
        .iter()
        .map(|(stage, s)| format!("{stage} {s:.1} s"))
        .collect();
    eprintln!("stages (slowest worker): {}", stages.join(", "));
    eprintln!("tables -> {}", job.out.display());
}

fn write_run_json(
    job: &Job,
    report: &WorkerReport,
    seconds: f64,
    configuration: &serde_json::Value,
    tables: &[&str],
) -> Result<(), String> {
    let html_mb = report.inventory.html_bytes as f64 / 1e6;
    let stages: Vec<serde_json::Value> = report
        .seconds
        .iter()
        .map(|(stage, s)| {
            serde_json::json!({
                "stage": stage,
                "seconds": s,
                "html_mb_per_s": html_mb / s.max(1e-9),
            })
        })
        .collect();
    let mut configuration = configuration.clone();
    if let Some(map) = configuration.as_object_mut() {
        map.insert(
            "inputs".into(),
            job.names
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .into(),
        );
        map.insert("smoothing_c".into(), as_given(job.smoothing.params.c));
        map.insert(
            "penalty".into(),
            job.smoothing.params.penalty.to_string().into(),
        );
        map.insert(
            "hidden_area".into(),
            as_given(job.smoothing.params.hidden_area),
        );
        map.insert("max_levels".into(), job.smoothing.params.max_levels.into());
        map.insert("threshold".into(), as_given(job.smoothing.threshold));
        map.insert("site_weight".into(), as_given(job.options.site_weight));
        map.insert("basic".into(), job.options.basic.into());
        map.insert(
            "content_model".into(),
            job.content
                .training
                .get("source")
                .cloned()
                .unwrap_or_else(|| "shipped".into()),
        );
        map.insert(
            "cleaned_text".into(),
            format!("{:?}", job.options.cleaned_from)
                .to_lowercase()
                .into(),
        );
        map.insert(
            "hidden_threshold".into(),
            job.options.hidden_threshold.map(as_given).into(),
        );
    }
    let json = serde_json::json!({
        "stencil": env!("CARGO_PKG_VERSION"),
        "configuration": configuration,
        "model": {
            "source": report.model,
            "fallback_reason": report.fallback,
            "min_training_hosts_default": MIN_TRAINING_HOSTS,
        },
        "records": {
            "records": report.inventory.records,
            "read_errors": report.inventory.read_errors,
            "by_outcome": report.inventory.by_outcome,
            "skipped_by_reason": report.inventory.skipped_by_reason,
            "errors_by_kind": report.inventory.errors_by_kind,
        },
        "inventory": report.inventory,
        "rows": {
            "pages": report.pages,
            "segments": report.segments,
            "site_templates": report.template_rows,
            "hosts": report.hosts,
            "training": report.training_rows,
            "records": report.inventory.records + report.inventory.read_errors,
        },
        "hosts_with_site_level": report.site_level_hosts,
        "pages_on_quantized_levels": report.quantized_pages,
        "spilled": { "pages": report.spilled_pages, "bytes": report.spilled_bytes },
        "seconds": seconds,
        "html_mb_per_s": html_mb / seconds.max(1e-9),
        "pages_per_s": report.pages as f64 / seconds.max(1e-9),
        "stages": stages,
        "tables": tables,
        "failures": report.failures,
    });
    let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&job.out).map_err(|e| format!("{}: {e}", job.out.display()))?;
    let partial = job.out.join(".run.json.partial");
    std::fs::write(&partial, text).map_err(|e| format!("{}: {e}", partial.display()))?;
    let done = job.out.join("run.json");
    std::fs::rename(&partial, &done).map_err(|e| format!("{}: {e}", done.display()))
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
