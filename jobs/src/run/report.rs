//! What the workers did: each worker's report, their meeting on worker 0, the summary printed
//! at the end and `run.json`.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use stencil_operators::inventory::Inventory;
use timely::dataflow::operators::{Exchange, Inspect, Probe};
use timely::worker::Worker;

use super::args::MIN_TRAINING_HOSTS;
use super::job::{Job, SiteSource};

/// An f32 setting as the user wrote it (0.8, not 0.800000011920929): the shortest decimal
/// that reads back as the same f32.
fn as_given(value: f32) -> serde_json::Value {
    value
        .to_string()
        .parse::<f64>()
        .map_or(serde_json::Value::Null, serde_json::Value::from)
}

/// What a worker did; the workers' reports meet on worker 0 for the summary and run.json.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct WorkerReport {
    pub(super) inventory: Inventory,
    /// Seconds per stage, in stage order.
    pub(super) seconds: Vec<(String, f64)>,
    /// The process's peak resident memory when each stage ended, in bytes, in stage order
    /// (Linux only; empty elsewhere).
    pub(super) peak_rss: Vec<(String, u64)>,
    pub(super) pages: u64,
    pub(super) segments: u64,
    pub(super) quantized_pages: u64,
    pub(super) training_rows: u64,
    pub(super) examples_offered: u64,
    pub(super) template_rows: u64,
    pub(super) template_changes: u64,
    pub(super) hosts: u64,
    pub(super) site_level_hosts: u64,
    pub(super) spilled_pages: u64,
    pub(super) spilled_bytes: u64,
    /// The most any one worker kept in memory between stages (pages and what they carry).
    pub(super) peak_kept_bytes: u64,
    pub(super) failures: Vec<String>,
    /// File shares an earlier, killed `apply` had finished, taken from their `_done` entries
    /// instead of read again.
    pub(super) resumed_shares: u64,
    /// Set by worker 0: how the model was chosen.
    pub(super) model: Option<String>,
    pub(super) fallback: Option<String>,
}

impl WorkerReport {
    fn merge(&mut self, other: &WorkerReport) {
        self.inventory.merge(&other.inventory);
        most_per_stage(&mut self.seconds, &other.seconds);
        most_per_stage(&mut self.peak_rss, &other.peak_rss);
        self.pages += other.pages;
        self.segments += other.segments;
        self.quantized_pages += other.quantized_pages;
        self.training_rows += other.training_rows;
        self.examples_offered += other.examples_offered;
        self.template_rows += other.template_rows;
        self.template_changes += other.template_changes;
        self.hosts += other.hosts;
        self.site_level_hosts += other.site_level_hosts;
        self.spilled_pages += other.spilled_pages;
        self.spilled_bytes += other.spilled_bytes;
        self.peak_kept_bytes = self.peak_kept_bytes.max(other.peak_kept_bytes);
        self.failures.extend(other.failures.iter().cloned());
        self.resumed_shares += other.resumed_shares;
        self.model = self.model.take().or(other.model.clone());
        self.fallback = self.fallback.take().or(other.fallback.clone());
    }
}

/// Keeps in `mine` the larger of the two figures of each stage: the slowest worker's seconds,
/// the largest peak.
fn most_per_stage<T: PartialOrd + Copy>(mine: &mut Vec<(String, T)>, other: &[(String, T)]) {
    for (stage, figure) in other {
        match mine.iter_mut().find(|(s, _)| s == stage) {
            Some((_, kept)) if *figure > *kept => *kept = *figure,
            Some(_) => {}
            None => mine.push((stage.clone(), *figure)),
        }
    }
}

/// The process's peak resident memory so far (`VmHWM` of `/proc/self/status`), in bytes;
/// `None` where there is no such file.
pub(super) fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Sends every worker's report to worker 0, which returns them merged.
pub(super) fn gather_reports(worker: &mut Worker, report: WorkerReport) -> Option<WorkerReport> {
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

pub(super) fn print_summary(job: &Job, report: &WorkerReport, seconds: f64) {
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

/// The job's settings as `run.json` records them: the command's own (`configuration`) and the
/// page-level ones every job has. The inputs are not among them.
pub(super) fn settings(job: &Job, configuration: &serde_json::Value) -> serde_json::Value {
    let mut configuration = configuration.clone();
    if let Some(map) = configuration.as_object_mut() {
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
        if let Some(plan) = &job.state {
            map.insert("night".into(), plan.night().into());
            let base = plan.base().map(|b| b.display().to_string());
            map.insert("state_base".into(), base.into());
        }
    }
    configuration
}

pub(super) fn write_run_json(
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
            let peak = report.peak_rss.iter().find(|(name, _)| name == stage);
            serde_json::json!({
                "stage": stage,
                "seconds": s,
                "html_mb_per_s": html_mb / s.max(1e-9),
                "peak_rss_mb": peak.map(|(_, bytes)| *bytes as f64 / (1 << 20) as f64),
            })
        })
        .collect();
    let mut configuration = settings(job, configuration);
    if let Some(map) = configuration.as_object_mut() {
        map.insert(
            "inputs".into(),
            job.names
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .into(),
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
            "template_changes": report.template_changes,
            "records": report.inventory.records + report.inventory.read_errors,
        },
        "hosts_with_site_level": report.site_level_hosts,
        "pages_on_quantized_levels": report.quantized_pages,
        "spilled": { "pages": report.spilled_pages, "bytes": report.spilled_bytes },
        "kept_peak_bytes": report.peak_kept_bytes,
        "seconds": seconds,
        "html_mb_per_s": html_mb / seconds.max(1e-9),
        "pages_per_s": report.pages as f64 / seconds.max(1e-9),
        "stages": stages,
        "tables": tables,
        "failures": report.failures,
        "resumed": { "file_shares": report.resumed_shares },
    });
    let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&job.out).map_err(|e| format!("{}: {e}", job.out.display()))?;
    let partial = job.out.join(".run.json.partial");
    std::fs::write(&partial, text).map_err(|e| format!("{}: {e}", partial.display()))?;
    let done = job.out.join("run.json");
    std::fs::rename(&partial, &done).map_err(|e| format!("{}: {e}", done.display()))
}
