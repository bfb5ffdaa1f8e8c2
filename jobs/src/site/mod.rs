//! `stencil site`: SiteLevel(θ) over a crawl on a timely cluster, and the tables
//! `site_templates`, `hosts` and `training`.
//!
//! Every worker reads its share of the files twice:
//! 1. **Statistics.** Each page is parsed where it is read; the worker keeps a bottom-k sample
//!    of each host's pages (their fingerprints only) and hands the samples to the
//!    [`dataflow::learn`] dataflow, which sizes every host's sample, counts the fingerprints of
//!    the hosts with enough sampled pages for labels by (host, fingerprint) across all workers,
//!    and sends each worker the models of the hosts it holds pages of.
//! 2. **Labelling.** Each page is parsed again and labelled locally against its host's model;
//!    `training` rows stream to the worker's part file, and the findings for `site_templates`
//!    and `hosts` are gathered by [`dataflow::gather`].
//!
//! Parsing twice costs a second parse (the dominant cost) but keeps memory bounded by the
//! samples rather than the input: holding every page's DOM between the passes would not be.
//!
//! `stencil train` is this job with training settings: after labelling, the workers fit and
//! broadcast the classifier ([`crate::fit`]) and, with `--score`, score their pages with it
//! ([`crate::score`]). This module composes the two, so it sits above both of them.

pub mod dataflow;
pub mod state;
pub mod statistics;

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, ValueEnum};
use stencil_operators::contain::Panic;
use stencil_operators::dom::subtree::{summarize, Subtree};
use stencil_operators::dom::text;
use stencil_operators::dom::Dom;
use stencil_operators::inventory::{for_each_page, Inventory};
use stencil_operators::page_models::features;
use stencil_operators::page_models::model::{Model, StratifiedSample};
use stencil_operators::reading::page::Page;
use stencil_operators::site::blocks;
use stencil_operators::site::clusters::DEFAULT_MIN_CLUSTER_PAGES;
use stencil_operators::site::labels::{self, Label, Scheme};
use stencil_operators::site::rtdm::Limits as MappingLimits;
use stencil_operators::site::rtdm_template::DEFAULT_SAMPLE_PAGES;
use stencil_operators::site::sections::Section;
use stencil_operators::site::site_level::{
    block_roots, inside_templates, site_of, templated_text, url_key, Params,
};
use stencil_operators::site::templates::{HostTemplates, Method, PageCall};
use stencil_operators::site::tree_regex::DEFAULT_TEMPLATE_SAMPLE;
use timely::worker::Worker;
use xxhash_rust::xxh3::xxh3_64;

use crate::cluster::ClusterArgs;
use crate::files;
use crate::fit::{fit_and_broadcast, TrainSettings};
use crate::limits::LimitArgs;
use crate::model_file::write_model;
use crate::score::{score_files, Scorer};
use crate::tables::{self, StreamingPart, TrainingColumns, TrainingRow};
use dataflow::{HostFact, LocalFindings, Occurrence};
use statistics::{Learned, Statistics};
use stencil_operators::site::etdm::label_tree_exact;

/// The work one tree mapping may do (RTDM-TD): a page whose mapping against its host's
/// template would pass it keeps none of the template.
pub(crate) const MAPPING_LIMITS: MappingLimits = MappingLimits { max_cells: 1 << 22 };

/// The tables `site` writes, each a folder of part files under `--out`.
pub const TABLES: [&str; 3] = ["site_templates", "hosts", "training"];

#[derive(Args)]
pub struct SiteArgs {
    /// WARC files (.warc, .warc.gz) or directories holding them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output folder; each table is written to OUT/<table>/part-*.parquet (the command's
    /// description lists its tables).
    #[arg(long)]
    pub out: PathBuf,
    /// How training labels are made from the site-level templates.
    #[arg(long, value_enum, default_value_t = LabelArg::Paper)]
    pub labels: LabelArg,
    /// A block is a template when it is on at least this fraction of a host's sampled pages.
    #[arg(long, default_value_t = Params::default().theta)]
    pub theta: f64,
    /// Hosts with fewer (distinct, sampled) pages get no site-level labels.
    #[arg(long, default_value_t = Params::default().min_host_pages)]
    pub min_host_pages: u32,
    /// At most this many pages per host are counted, chosen by URL hash.
    #[arg(long, default_value_t = Params::default().host_sample)]
    pub host_sample: usize,
    /// How each host's templates are found: SiteLevel(θ) counts blocks over a sample of up to
    /// --host-sample pages (seed 000); rtdm maps --sample-pages pages onto each other and
    /// keeps what they share (RTDM-TD, seed 002); etdm keeps the key page's nodes found in
    /// --cs-threshold of the --cs-size pages its menu links to (seed 004), and falls back to
    /// SiteLevel(θ) on a host whose crawl lacks those pages; tree-regex learns a tree regular
    /// expression from --template-sample of the --sample-pages pages and calls a page's
    /// sections of importance below 0.25 its template (seed 003).
    #[arg(long, value_enum, default_value_t = MethodArg::SiteLevel)]
    pub method: MethodArg,
    /// RTDM-TD's and tree-regex's sample pages per host, chosen by URL hash (seed 002's
    /// MaxPages).
    #[arg(long, default_value_t = DEFAULT_SAMPLE_PAGES)]
    pub sample_pages: u32,
    /// RTDM-TD and tree-regex: a host's sample pages are first grouped by structure (its
    /// templates: home, article and listing pages, redesigns), and a template is learned from
    /// each group of at least this many pages; a page is cleaned by the template it fits best.
    #[arg(long, default_value_t = DEFAULT_MIN_CLUSTER_PAGES)]
    pub min_cluster_pages: u32,
    /// tree-regex: a group's tree regular expression is learned from (and its page support
    /// counted over) at most this many of its pages (seed 003's k).
    #[arg(long, default_value_t = DEFAULT_TEMPLATE_SAMPLE)]
    pub template_sample: u32,
    /// ETDM: pages of the key page's menu that must all link to each other (seed 004's n-CS).
    #[arg(long, default_value_t = 3)]
    pub cs_size: u32,
    /// ETDM: a key page's node is template when it is mapped in at least this many of the CS
    /// pages (seed 004's t).
    #[arg(long, default_value_t = 2)]
    pub cs_threshold: u32,
    /// Do not write the training table.
    #[arg(long)]
    pub no_training: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
}

impl SiteArgs {
    /// SiteLevel(θ)'s parameters as given.
    pub fn params(&self) -> Params {
        Params {
            theta: self.theta,
            min_host_pages: self.min_host_pages,
            host_sample: self.host_sample,
        }
    }

    /// The site statistics as given, checked.
    pub fn statistics(&self) -> Result<Statistics, String> {
        if !(self.theta > 0.0 && self.theta <= 1.0) {
            return Err(format!("--theta must be in (0, 1], not {}", self.theta));
        }
        if self.host_sample == 0 {
            return Err("--host-sample must be at least 1".to_string());
        }
        let method = self.method.method();
        if method != Method::SiteLevel {
            if self.labels == LabelArg::Kolcz {
                return Err(format!(
                    "--labels kolcz needs SiteLevel(θ)'s block counts; --method {} has none",
                    method.as_str()
                ));
            }
            if self.sample_pages < 2 {
                return Err("--sample-pages must be at least 2".to_string());
            }
            if self.min_cluster_pages < 2 {
                return Err("--min-cluster-pages must be at least 2".to_string());
            }
            if self.template_sample < 2 {
                return Err("--template-sample must be at least 2".to_string());
            }
        }
        if method == Method::Etdm && (self.cs_size == 0 || self.cs_threshold > self.cs_size) {
            return Err(format!(
                "--cs-threshold ({}) must be at most --cs-size ({}), which must be at least 1",
                self.cs_threshold, self.cs_size
            ));
        }
        Ok(Statistics {
            method,
            params: self.params(),
            kind: self.labels.scheme().fingerprints(),
            sample_pages: self.sample_pages,
            min_cluster_pages: self.min_cluster_pages,
            template_sample: self.template_sample,
            cs_size: self.cs_size,
            cs_threshold: self.cs_threshold,
            limits: MAPPING_LIMITS,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// SiteLevel(θ) (Chakrabarti et al. §3): block fingerprints counted over a sample.
    SiteLevel,
    /// RTDM-TD (Vieira et al.): the common subtree of a few pages by tree mapping.
    Rtdm,
    /// ETDM (Alarte): the key page's nodes shared with the pages its menu links to.
    Etdm,
    /// A tree regular expression (*, ?, |) per group of a few pages, and the sections of each
    /// page below 0.25 importance (seed 003).
    TreeRegex,
}

impl MethodArg {
    pub fn method(self) -> Method {
        match self {
            MethodArg::SiteLevel => Method::SiteLevel,
            MethodArg::Rtdm => Method::Rtdm,
            MethodArg::Etdm => Method::Etdm,
            MethodArg::TreeRegex => Method::TreeRegex,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LabelArg {
    /// Chakrabarti et al. §5.1: every body element; template when ≥ 85% of its HTML lies in
    /// site-level templates.
    Paper,
    /// Kołcz & Yih §4.1: text blocks; template at ≥ θ of the pages, non-template when unique.
    Kolcz,
}

impl LabelArg {
    pub fn scheme(self) -> Scheme {
        match self {
            LabelArg::Paper => Scheme::Paper,
            LabelArg::Kolcz => Scheme::Kolcz,
        }
    }
}

/// Everything a worker needs, shared read-only by all workers of a process.
struct Job {
    files: Vec<PathBuf>,
    out: PathBuf,
    statistics: Statistics,
    scheme: Scheme,
    training: bool,
    /// Set for `stencil train`: fit, broadcast and (optionally) score after labelling.
    train: Option<TrainSettings>,
    limits: stencil_operators::reading::warc::Limits,
}

/// What a worker did, for the process's summary.
#[derive(Default)]
struct WorkerReport {
    inventory: Inventory,
    hosts: u64,
    labelled_hosts: u64,
    template_rows: u64,
    training_rows: u64,
    examples_offered: u64,
    model: Option<Model>,
    node_score_rows: u64,
    failed_files: Vec<String>,
}

pub fn run(args: &SiteArgs) -> Result<ExitCode, String> {
    run_with(args, None)
}

/// The site job, followed by training when `train` is given (`stencil train`).
pub fn run_with(args: &SiteArgs, mut train: Option<TrainSettings>) -> Result<ExitCode, String> {
    let statistics = args.statistics()?;
    let config = args.cluster.config()?;
    let files = files::collect(&args.paths)?;
    if let Some(facts) = train.as_mut().and_then(|t| t.facts.as_object_mut()) {
        let names = files.iter().map(|p| {
            p.file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned())
        });
        facts.insert("inputs".into(), names.collect::<Vec<_>>().into());
    }
    let job = Arc::new(Job {
        files,
        out: args.out.clone(),
        statistics,
        scheme: args.labels.scheme(),
        training: !args.no_training,
        train,
        limits: args.limits.limits(),
    });
    if args.cluster.is_first_process() {
        // Before any worker starts: other processes write only after the first dataflow,
        // which cannot complete without this process.
        tables::remove_earlier_parts(&job.out, &TABLES)?;
        tables::remove_earlier_parts(&job.out, &["node_scores"])?;
    }
    let start = Instant::now();
    let worker_job = job.clone();
    let guards = args
        .cluster
        .execute(config, move |worker| run_worker(worker, &worker_job))?;
    let mut total = WorkerReport::default();
    for result in guards.join() {
        let report = result.map_err(|e| format!("worker failed: {e}"))??;
        total.inventory.merge(&report.inventory);
        total.hosts += report.hosts;
        total.labelled_hosts += report.labelled_hosts;
        total.template_rows += report.template_rows;
        total.training_rows += report.training_rows;
        total.examples_offered += report.examples_offered;
        total.node_score_rows += report.node_score_rows;
        total.model = total.model.or(report.model);
        total.failed_files.extend(report.failed_files);
    }
    print_summary(&job, &total, start.elapsed().as_secs_f64());
    if total.failed_files.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        for failure in &total.failed_files {
            eprintln!("stencil: {failure}");
        }
        Ok(ExitCode::FAILURE)
    }
}

fn print_summary(job: &Job, total: &WorkerReport, seconds: f64) {
    let inv = &total.inventory;
    let count = |map: &std::collections::BTreeMap<String, u64>, key: &str| {
        map.get(key).copied().unwrap_or(0)
    };
    eprintln!(
        "read {} files, {} records + {} unreadable stretches: {} pages, {} skipped, {} errors \
         ({:.1} s, {:.1} MB/s of WARC)",
        inv.files,
        inv.records,
        inv.read_errors,
        count(&inv.by_outcome, "page"),
        count(&inv.by_outcome, "skipped"),
        count(&inv.by_outcome, "error"),
        seconds,
        inv.warc_bytes as f64 / 1e6 / seconds.max(1e-9),
    );
    crate::crash::warn_of_contained_panics(inv, "they count as errors of kind 'panic'");
    eprintln!(
        "{} hosts ({} with site-level labels), {} site templates, {} training rows ({} labels) \
         -> {}",
        total.hosts,
        total.labelled_hosts,
        total.template_rows,
        total.training_rows,
        job.scheme.as_str(),
        job.out.display()
    );
    if let Some(model) = &total.model {
        let validation = model.validation.as_ref();
        let figure = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.3}"));
        eprintln!(
            "model: {} labelled nodes offered, {} fitted; host-disjoint AUC {} (per bucket {}) \
             -> {}",
            total.examples_offered,
            model.buckets.iter().map(|b| b.examples).sum::<u64>(),
            figure(validation.and_then(|v| v.auc)),
            validation.map_or(String::new(), |v| v
                .buckets
                .iter()
                .map(|b| figure(b.auc))
                .collect::<Vec<_>>()
                .join(" / ")),
            job.out.join("model.json").display()
        );
    }
    if total.node_score_rows > 0 {
        eprintln!(
            "{} nodes scored -> {}",
            total.node_score_rows,
            job.out.join("node_scores").display()
        );
    }
}

fn run_worker(worker: &mut Worker, job: &Job) -> Result<WorkerReport, String> {
    let (index, peers) = (worker.index(), worker.peers());
    // Files (or, with fewer files than workers, shares of a file's records) are dealt out by
    // worker index: every process computes the same split.
    let mine = crate::files::assigned(&job.files, index, peers);
    let mut report = WorkerReport::default();
    let statistics = &job.statistics;

    // Pass 1: samples of fingerprints (or of label trees).
    let here = crate::crash::Whereabouts::register(index);
    here.stage("fingerprints");
    let mut local = statistics.local();
    for &(path, share) in &mine {
        here.file(&path.display().to_string());
        crate::crash::inject_worker_fault(index);
        let visit = |page: &Page, dom: &Dom| {
            here.offset(page.position.offset);
            let host = site_of(&page.host);
            if host.is_empty() {
                return;
            }
            crate::crash::enter("hashes", &page.url);
            let sums = summarize(dom, &page.host);
            let key = url_key(&page.url);
            let offer = statistics.prepare(&local, (&page.url, host, key), dom, &sums);
            statistics.offer(&mut local, host, key, offer);
        };
        let read = for_each_page(
            path,
            &job.limits,
            share,
            &mut report.inventory,
            visit,
            |_| {},
        );
        // Keep going: every worker must take part in the dataflows, or the others wait. Every
        // reader of a shared file meets the same failure; its first reader reports it.
        if let (Err(e), 0) = (read, share.part) {
            report.failed_files.push(format!("{}: {e}", path.display()));
        }
    }
    tracing::debug!(worker = index, hosts = local.hosts(), "statistics read");
    here.stage("site statistics");
    let models = match statistics.learn(worker, local).0 {
        Learned::Templates(templates) => templates,
        Learned::Etdm(pending) => {
            // ETDM wants the exact label trees of each host's key page and complete
            // subdigraph: a pass over the files for them (the first pass could not know
            // which pages they would be).
            here.stage("key pages");
            let mut trees = Vec::new();
            let mut again = Inventory::default();
            for &(path, share) in &mine {
                here.file(&path.display().to_string());
                let visit = |page: &Page, dom: &Dom| {
                    here.offset(page.position.offset);
                    let host = site_of(&page.host);
                    if let Some(place) = pending.wanted(&page.url, host) {
                        trees.push((host.to_string(), place, label_tree_exact(dom)));
                    }
                };
                // Errors opening a file were reported in the first pass.
                let _ = for_each_page(path, &job.limits, share, &mut again, visit, |_| {});
            }
            pending.finish(worker, trees)
        }
    };

    // Pass 2: labels, training rows and findings. A failure to write stops the labelling but
    // not the worker, which must still take part in the last dataflow.
    let mut failure: Option<String> = None;
    let mut training = if job.training {
        StreamingPart::training(&job.out, index)
            .map_err(|e| failure = Some(e))
            .ok()
    } else {
        None
    };
    let mut findings = LocalFindings::default();
    let mut sample = job
        .train
        .as_ref()
        .map(|t| StratifiedSample::new(t.sample_cap));
    let mut second = Inventory::default();
    here.stage("labels");
    for &(path, share) in &mine {
        here.file(&path.display().to_string());
        let visit = |page: &Page, dom: &Dom| {
            here.offset(page.position.offset);
            if failure.is_some() {
                return;
            }
            if let Some(model) = models.get(site_of(&page.host)) {
                crate::crash::enter("labels", &page.url);
                let sums = summarize(dom, &page.host);
                let committed = label_page(
                    (&page.url, &page.host),
                    dom,
                    &sums,
                    model,
                    job.scheme,
                    &findings,
                    (training.is_some(), true),
                    sample.is_some(),
                )
                .commit(&page.host, &mut findings, sample.as_mut());
                if let (Some(part), Some(labels)) = (training.as_mut(), committed.training) {
                    let computed = committed
                        .computed
                        .unwrap_or_else(|| features::Computed::of(dom, &sums));
                    let result = write_training_rows(
                        (&page.url, &page.host),
                        (dom, &sums),
                        job.scheme,
                        &labels,
                        &computed.features,
                        part,
                    );
                    if let Err(e) = result {
                        failure = Some(e);
                    }
                }
            }
        };
        // Errors opening a file were reported in the first pass.
        let _ = for_each_page(path, &job.limits, share, &mut second, visit, |_| {});
    }
    // The second pass reads the same pages: what panics in it and not in the first is a page
    // whose labelling panicked.
    let panics = |inventory: &Inventory| {
        let kinds = &inventory.errors_by_kind;
        kinds.get(Panic::KIND).copied().unwrap_or(0)
    };
    report
        .inventory
        .pages_panicked(panics(&second).saturating_sub(panics(&report.inventory)));
    for (host, templates) in &models {
        findings
            .facts
            .push((host.clone(), HostFact::of_templates(templates)));
    }
    let (template_rows, host_rows) = dataflow::gather(worker, findings);
    // Every worker takes part in training, even after a failure, or the others would wait.
    // A training failure is reported after the site tables are written.
    let model = match (&job.train, sample) {
        (Some(settings), Some(sample)) => {
            report.examples_offered = sample.offered();
            Some(fit_and_broadcast(worker, sample, settings).map(|t| t.model))
        }
        _ => None,
    };
    if let Some(e) = failure {
        return Err(e);
    }

    report.hosts = host_rows.len() as u64;
    report.labelled_hosts = host_rows.iter().filter(|h| h.site_level).count() as u64;
    report.template_rows = template_rows.len() as u64;
    tables::write_host_tables(&job.out, index, Some(&template_rows), &host_rows)?;
    if let Some(training) = training {
        report.training_rows = training.rows;
        training.finish()?;
    }
    if let (Some(settings), Some(model)) = (&job.train, model) {
        let model = model?;
        if index == 0 {
            write_model(&job.out, &model)?;
        }
        if settings.score {
            let mut third = Inventory::default();
            let scorer = Scorer {
                model,
                smoothing: settings.smoothing,
            };
            report.node_score_rows =
                score_files(&mine, &job.out, index, &scorer, &job.limits, &mut third)?.rows;
            report.model = Some(scorer.model);
        } else {
            report.model = Some(model);
        }
    }
    Ok(report)
}

/// What labelling one page found, before any of it is written: see [`label_page`].
pub(crate) struct PageLabels {
    /// The hash of each node that roots a site-level template.
    roots: Vec<Option<u64>>,
    /// Seed 003's sections of the page (a tree-regex host's page only).
    sections: Vec<Section>,
    /// The page's templated and total text, when it has text.
    text: Option<(u64, u64)>,
    /// The page was too large to map against its host's template (a mapping method), and so
    /// keeps none of it.
    unmapped: bool,
    /// Candidates for `site_templates` rows: (hash, occurrence), sampled pages only.
    occurrences: Vec<(u64, Occurrence)>,
    /// Node labels with their features and paths, when the page gives training rows or
    /// examples.
    labelled: Option<Labelled>,
}

struct Labelled {
    key: u64,
    labels: Vec<Option<Label>>,
    /// The page's features, computed here only when it gives examples (which carry them).
    computed: Option<features::Computed>,
    /// Whether the page is in its host's sample (only sampled pages give examples).
    sampled: bool,
    /// Whether the page gives `training` rows.
    training: bool,
}

/// What [`PageLabels::commit`] hands back for the page's later stages.
pub(crate) struct Committed {
    pub(crate) roots: Vec<Option<u64>>,
    pub(crate) sections: Vec<Section>,
    /// The labels of the page's nodes, when it gives `training` rows ([`write_training_rows`]).
    pub(crate) training: Option<Vec<Option<Label>>>,
    /// The page's features, when labelling computed them for its examples: `stencil run`
    /// scores the page with them instead of computing them again.
    pub(crate) computed: Option<features::Computed>,
}

/// Labels one page (its URL, its raw host, its DOM and subtree sums) against its host's model:
/// its templated-text fraction, candidates for the `site_templates` rows (sampled pages
/// only), and the labels and features of its `training` rows (when `training`, for a sampled
/// page unless `every_page`) and sample examples (when `examples`, sampled pages only).
/// Nothing is written yet: [`PageLabels::commit`] and [`write_training_rows`] do that, so that
/// a panic while labelling (contained by `stencil run`) leaves no trace of the page in any
/// table. Features are computed here for the examples only; `training` rows are written from
/// features computed where they are written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn label_page(
    (url, raw_host): (&str, &str),
    dom: &Dom,
    sums: &[Subtree],
    templates: &HostTemplates,
    scheme: Scheme,
    findings: &LocalFindings,
    (training, every_page): (bool, bool),
    examples: bool,
) -> PageLabels {
    let host = site_of(raw_host);
    let kind = scheme.fingerprints();
    // Kołcz blocks are found once and serve both the template roots and the labels; they
    // need SiteLevel(θ)'s counts (the command line refuses them with another method).
    let site_level = match templates {
        HostTemplates::SiteLevel(model) => Some(model),
        _ => None,
    };
    let blocks =
        (scheme == Scheme::Kolcz).then(|| blocks::kolcz_blocks(dom, &text::PageText::new(dom)));
    let (call, unmapped) = match (&blocks, site_level) {
        (Some(blocks), Some(model)) => (
            PageCall::of_roots(block_roots(dom.len(), blocks, model)),
            false,
        ),
        // A page too large to map against its host's template keeps none of it, and the
        // host's row counts it.
        _ => match templates.call(dom, sums, kind, MAPPING_LIMITS) {
            Ok(call) => (call, false),
            Err(too_large) => {
                tracing::debug!(url, %too_large, "page left unmapped");
                (PageCall::of_roots(vec![None; dom.len()]), true)
            }
        },
    };
    // `cluster`: the mapping method's template the page was cleaned by.
    let PageCall {
        roots,
        template: cluster,
        sections,
        fell_back,
    } = call;
    let inside = inside_templates(dom, &roots);
    let (templated, total) = templated_text(dom, sums, &inside);
    let mut found = PageLabels {
        roots,
        sections,
        text: (total > 0).then_some((templated, total)),
        unmapped,
        occurrences: Vec::new(),
        labelled: None,
    };
    if !templates.labelled() {
        return found;
    }
    let key = url_key(url);
    let sampled = templates.in_sample(key);
    // A page that fit none of a mapping method's templates has SiteLevel(θ)'s, which its
    // occurrences name.
    let model = templates.fallback().filter(|_| fell_back);
    let in_sample = model.map_or(sampled, |model| model.in_sample(key));
    if in_sample {
        // Only sampled pages can hold a template's first occurrence on the smallest key.
        let mut seen: HashSet<u64> = HashSet::new();
        for (node, root) in found.roots.iter().enumerate() {
            let Some(hash) = *root else { continue };
            if !seen.insert(hash) || !findings.could_take(host, hash, (key, node as u32)) {
                continue;
            }
            found.occurrences.push((
                hash,
                Occurrence {
                    url_key: key,
                    method: model
                        .map_or(templates.method(), |_| Method::SiteLevel)
                        .as_str()
                        .to_string(),
                    node: node as u32,
                    url: url.to_string(),
                    path: dom.path(node),
                    text_sample: text::sample(dom, node, 200),
                    pages_with: model.map_or_else(
                        || templates.pages_with(hash),
                        |model| model.counts.get(&hash).copied().unwrap_or(0),
                    ),
                    pages_sampled: model.map_or(templates.pages_sampled(), |m| m.pages_sampled),
                    cluster,
                },
            ));
        }
    }
    // The classifier learns from sampled pages only, so no host weighs more than its sample.
    let examples = examples && sampled;
    let training = training && (sampled || every_page);
    if !training && !examples {
        return found;
    }
    let labels = match scheme {
        Scheme::Paper => labels::paper(dom, sums, &found.roots),
        // Uniqueness is only known among the sampled pages.
        Scheme::Kolcz => match (site_level, sampled) {
            (Some(model), true) => labels::kolcz(dom, blocks.as_deref().unwrap_or(&[]), model),
            _ => return found,
        },
    };
    if labels.iter().all(Option::is_none) {
        return found;
    }
    found.labelled = Some(Labelled {
        key,
        computed: examples.then(|| features::Computed::of(dom, sums)),
        labels,
        sampled: examples,
        training,
    });
    found
}

/// Writes the `training` rows of one page: one per labelled node, with its features.
pub(crate) fn write_training_rows(
    (url, raw_host): (&str, &str),
    (dom, sums): (&Dom, &[Subtree]),
    scheme: Scheme,
    labels: &[Option<Label>],
    page_features: &features::PageFeatures,
    training: &mut StreamingPart<TrainingColumns>,
) -> Result<(), String> {
    let host = site_of(raw_host);
    let paths = dom.paths_where(|node| labels.get(node).is_some_and(Option::is_some));
    for (node, label) in labels.iter().enumerate() {
        let Some(label) = label else { continue };
        let area = page_features.area[node];
        training.push(TrainingRow {
            url,
            host,
            dom,
            node,
            path: &paths[node],
            label: label.as_str(),
            scheme: scheme.as_str(),
            subtree: &sums[node],
            area,
            bucket: features::bucket(area, &features::BUCKET_BOUNDS) as u8,
            features: page_features.row(node),
        })?;
    }
    Ok(())
}

impl PageLabels {
    /// Writes what [`label_page`] found: the page's host fact and template candidates into
    /// `findings` and its examples into `sample`. Returns the page's template roots, sections
    /// and, when it gives `training` rows, its labels.
    pub(crate) fn commit(
        self,
        raw_host: &str,
        findings: &mut LocalFindings,
        sample: Option<&mut StratifiedSample>,
    ) -> Committed {
        let host = site_of(raw_host);
        if let Some((templated, total)) = self.text {
            findings
                .facts
                .push((host.to_string(), HostFact::Page { templated, total }));
        }
        if self.unmapped {
            findings.facts.push((host.to_string(), HostFact::Unmapped));
        }
        for (hash, occurrence) in self.occurrences {
            findings.offer(host, hash, occurrence);
        }
        let mut committed = Committed {
            roots: self.roots,
            sections: self.sections,
            training: None,
            computed: None,
        };
        let Some(labelled) = self.labelled else {
            return committed;
        };
        if let (Some(sample), true, Some(computed)) = (sample, labelled.sampled, &labelled.computed)
        {
            let page_features = &computed.features;
            let host_hash = xxh3_64(host.as_bytes());
            for (node, label) in labelled.labels.iter().enumerate() {
                let Some(label) = label else { continue };
                sample.offer_node(
                    (labelled.key, node as u32),
                    host_hash,
                    page_features.area[node],
                    *label == Label::Template,
                    page_features.row(node),
                );
            }
        }
        committed.training = labelled.training.then_some(labelled.labels);
        committed.computed = labelled.computed;
        committed
    }
}
