//! `stencil train`: the site job (SiteLevel(θ) labels) plus the page-level classifier: every
//! worker keeps a stratified sample of its labelled nodes, the samples meet on worker 0, which
//! fits the four logistic regressions, and the model is broadcast back to every worker, which
//! can then score every node of its pages (`--score`).
//!
//! The sample is the part of training that must see the whole crawl; it is bounded by
//! `--sample-cap` per (size bucket, label) stratum, so worker 0 holds at most 8 × cap feature
//! rows whatever the crawl's size.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use clap::Args;
use stencil_operators::model::{self, FitParams, Model, StratifiedSample};
use timely::dataflow::operators::vec::{Broadcast, Input};
use timely::dataflow::operators::{Exchange, Inspect, Probe};
use timely::worker::Worker;

use crate::site::SiteArgs;

#[derive(Args)]
pub struct TrainArgs {
    #[command(flatten)]
    pub site: SiteArgs,
    /// At most this many labelled nodes per (size bucket, label) stratum are fitted on.
    #[arg(long, default_value_t = 20_000)]
    pub sample_cap: usize,
    /// L2 penalty of the logistic regressions (on standardized features).
    #[arg(long, default_value_t = FitParams::default().l2)]
    pub l2: f64,
    /// Host-disjoint cross-validation folds for the figures in model.json.
    #[arg(long, default_value_t = FitParams::default().folds)]
    pub folds: u32,
    /// After training, score every element of every page with the broadcast model and write
    /// OUT/node_scores (a third pass over the input).
    #[arg(long)]
    pub score: bool,
    #[command(flatten)]
    pub smoothing: crate::score::SmoothingArgs,
}

/// What the training stage needs besides the site job's settings.
#[derive(Clone, Debug)]
pub struct TrainSettings {
    pub sample_cap: usize,
    pub fit: FitParams,
    pub score: bool,
    /// How `score` smooths.
    pub smoothing: crate::score::Smoothing,
    /// Facts recorded in model.json's `training` field.
    pub facts: serde_json::Value,
}

pub fn run(args: &TrainArgs) -> Result<std::process::ExitCode, String> {
    if args.sample_cap == 0 {
        return Err("--sample-cap must be at least 1".to_string());
    }
    if !(args.l2 >= 0.0 && args.l2.is_finite()) {
        return Err(format!(
            "--l2 must be a non-negative number, not {}",
            args.l2
        ));
    }
    if args.folds < 2 {
        return Err("--folds must be at least 2".to_string());
    }
    let settings = TrainSettings {
        sample_cap: args.sample_cap,
        fit: FitParams {
            l2: args.l2,
            folds: args.folds,
        },
        score: args.score,
        smoothing: args.smoothing.smoothing()?,
        // The site job adds "inputs" once it has listed the files.
        facts: serde_json::json!({
            "labels": args.site.labels.scheme().as_str(),
            "theta": args.site.theta,
            "min_host_pages": args.site.min_host_pages,
            "host_sample": args.site.host_sample,
            "sample_cap": args.sample_cap,
            "l2": args.l2,
            "stencil": env!("CARGO_PKG_VERSION"),
        }),
    };
    crate::site::run_with(&args.site, Some(settings))
}

/// Gathers every worker's sample on worker 0, which validates and fits the model; the model is
/// then broadcast, so every worker returns the same one (or the same error).
pub fn fit_and_broadcast(
    worker: &mut Worker,
    local: StratifiedSample,
    settings: &TrainSettings,
) -> Result<Model, String> {
    let gathered: Rc<RefCell<Vec<model::Example>>> = Rc::default();
    let sink = gathered.clone();
    let (mut examples_in, probe) = worker.dataflow::<u64, _, _>(|scope| {
        let (input, examples) = scope.new_input::<model::Example>();
        let probe = examples
            .exchange(|_| 0)
            .inspect(move |example| sink.borrow_mut().push(example.clone()))
            .probe()
            .0;
        (input, probe)
    });
    for example in local.into_examples() {
        examples_in.send(example);
    }
    examples_in.advance_to(1);
    drop(examples_in);
    worker.step_while(|| probe.less_than(&1));

    let fitted = (worker.index() == 0).then(|| {
        let start = std::time::Instant::now();
        let mut sample = StratifiedSample::new(settings.sample_cap);
        for example in gathered.take() {
            sample.offer(example);
        }
        let fitted = fit_sample(sample, settings).map(|model| model.to_json());
        tracing::info!(
            seconds = start.elapsed().as_secs_f64(),
            "validated and fitted on worker 0"
        );
        fitted
    });

    let received: Rc<RefCell<Vec<Result<String, String>>>> = Rc::default();
    let sink = received.clone();
    let (mut model_in, probe) = worker.dataflow::<u64, _, _>(|scope| {
        let (input, models) = scope.new_input::<Result<String, String>>();
        let probe = models
            .broadcast()
            .inspect(move |model| sink.borrow_mut().push(model.clone()))
            .probe()
            .0;
        (input, probe)
    });
    if let Some(fitted) = fitted {
        model_in.send(fitted);
    }
    model_in.advance_to(1);
    drop(model_in);
    worker.step_while(|| probe.less_than(&1));
    let json = received
        .take()
        .pop()
        .ok_or("no model reached this worker")??;
    Model::from_json(&json)
}

fn fit_sample(sample: StratifiedSample, settings: &TrainSettings) -> Result<Model, String> {
    let examples = sample.into_examples();
    let templates = examples.iter().filter(|e| e.template).count();
    if templates == 0 || templates == examples.len() {
        return Err(format!(
            "cannot train: {} labelled nodes, {templates} of them templates (a crawl needs hosts \
             with at least --min-host-pages pages, and both labels)",
            examples.len()
        ));
    }
    let validation = model::validate(&examples, &settings.fit)?;
    let mut facts = settings.facts.clone();
    if let Some(map) = facts.as_object_mut() {
        map.insert("examples".into(), examples.len().into());
        map.insert("templates".into(), templates.into());
    }
    let mut fitted = model::fit(&examples, &settings.fit, facts)?;
    fitted.validation = Some(validation);
    Ok(fitted)
}

/// Writes `model.json` under a temporary name and renames it, like the tables.
pub fn write_model(out: &Path, model: &Model) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let partial = out.join(".model.json.partial");
    let done = out.join("model.json");
    std::fs::write(&partial, model.to_json()).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, &done).map_err(|e| format!("{}: {e}", done.display()))
}
