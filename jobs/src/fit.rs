//! The page-level classifier fitted across a cluster: every worker keeps a stratified sample of
//! its labelled nodes, the samples meet on worker 0, which fits the four logistic regressions,
//! and the model is broadcast back to every worker, which can then score every node of its
//! pages.
//!
//! The sample is the part of training that must see the whole crawl; it is bounded by
//! `--sample-cap` per (size bucket, label) stratum, so worker 0 holds at most 8 × cap feature
//! rows whatever the crawl's size.

use std::cell::RefCell;
use std::rc::Rc;

use clap::Args;
use stencil_operators::page_models::model::{self, FitParams, Model, StratifiedSample};
use stencil_operators::site::labels::Scheme;
use stencil_operators::site::site_level::Params;
use timely::dataflow::operators::vec::{Broadcast, Input};
use timely::dataflow::operators::{Exchange, Inspect, Probe};
use timely::worker::Worker;

use crate::smoothing::Smoothing;

/// How the classifier is fitted (`train` and `run`).
#[derive(Args, Clone, Debug)]
pub struct FitArgs {
    /// At most this many labelled nodes per (size bucket, label) stratum are fitted on.
    #[arg(long, default_value_t = 20_000)]
    pub sample_cap: usize,
    /// L2 penalty of the logistic regressions (on standardized features).
    #[arg(long, default_value_t = FitParams::default().l2)]
    pub l2: f64,
    /// Host-disjoint cross-validation folds for the figures in model.json.
    #[arg(long, default_value_t = FitParams::default().folds)]
    pub folds: u32,
}

impl FitArgs {
    /// The training settings these flags describe (`score`, `smoothing` and `min_hosts` are
    /// the caller's), or what is wrong with them. The site job's labelling scheme and
    /// parameters, recorded in model.json, come as values rather than as the site job's flags:
    /// the site job depends on this module, not the reverse.
    pub fn settings(
        &self,
        labels: Scheme,
        site: Params,
        smoothing: Smoothing,
    ) -> Result<TrainSettings, String> {
        if self.sample_cap == 0 {
            return Err("--sample-cap must be at least 1".to_string());
        }
        if !(self.l2 >= 0.0 && self.l2.is_finite()) {
            return Err(format!(
                "--l2 must be a non-negative number, not {}",
                self.l2
            ));
        }
        if self.folds < 2 {
            return Err("--folds must be at least 2".to_string());
        }
        Ok(TrainSettings {
            sample_cap: self.sample_cap,
            fit: FitParams {
                l2: self.l2,
                folds: self.folds,
            },
            score: false,
            min_hosts: 0,
            smoothing,
            // The job adds "inputs" once it has listed the files.
            facts: serde_json::json!({
                "labels": labels.as_str(),
                "theta": site.theta,
                "min_host_pages": site.min_host_pages,
                "host_sample": site.host_sample,
                "sample_cap": self.sample_cap,
                "l2": self.l2,
                "stencil": env!("CARGO_PKG_VERSION"),
            }),
        })
    }
}

/// What the training stage needs besides the site job's settings.
#[derive(Clone, Debug)]
pub struct TrainSettings {
    pub sample_cap: usize,
    pub fit: FitParams,
    pub score: bool,
    /// Below this many hosts with labelled nodes (or with one label only), the shipped model
    /// is used instead of fitting one (`stencil run`); 0 makes that an error (`stencil train`).
    pub min_hosts: usize,
    /// How `score` smooths.
    pub smoothing: Smoothing,
    /// Facts recorded in model.json's `training` field.
    pub facts: serde_json::Value,
}

/// The model every worker ends up with, and why it is not a fitted one when it is not.
pub struct Trained {
    pub model: Model,
    /// Set when the crawl could not train a sound model and the shipped one is used.
    pub fallback: Option<String>,
}

/// Gathers every worker's sample on worker 0, which validates and fits the model (or, with
/// `min_hosts`, falls back to the shipped one); the model is then broadcast, so every worker
/// returns the same one (or the same error).
pub fn fit_and_broadcast(
    worker: &mut Worker,
    local: StratifiedSample,
    settings: &TrainSettings,
) -> Result<Trained, String> {
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
    crate::cluster::finish_round(worker, &probe);

    let fitted = (worker.index() == 0).then(|| {
        let start = std::time::Instant::now();
        let examples = gathered.take();
        let fitted = match too_few_to_train(&examples, settings.min_hosts) {
            Some(reason) => Ok((Model::default_model().to_json(), Some(reason))),
            None => {
                let mut sample = StratifiedSample::new(settings.sample_cap);
                for example in examples {
                    sample.offer(example);
                }
                fit_sample(sample, settings).map(|model| (model.to_json(), None))
            }
        };
        // Logged under the `train` command's target, so RUST_LOG=stencil::train selects the
        // line in `run` as well.
        tracing::info!(
            target: "stencil::train",
            seconds = start.elapsed().as_secs_f64(),
            "validated and fitted on worker 0"
        );
        fitted
    });

    type Fitted = Result<(String, Option<String>), String>;
    let received: Rc<RefCell<Vec<Fitted>>> = Rc::default();
    let sink = received.clone();
    let (mut model_in, probe) = worker.dataflow::<u64, _, _>(|scope| {
        let (input, models) = scope.new_input::<Result<(String, Option<String>), String>>();
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
    crate::cluster::finish_round(worker, &probe);
    let (json, fallback) = received
        .take()
        .pop()
        .ok_or("no model reached this worker")??;
    Ok(Trained {
        model: Model::from_json(&json)?,
        fallback,
    })
}

/// Why the gathered examples cannot train a sound model, when `min_hosts` asks for the check:
/// too few distinct hosts (a model fitted on a handful of sites learns their templates, not
/// templates), or a single label.
fn too_few_to_train(examples: &[model::Example], min_hosts: usize) -> Option<String> {
    if min_hosts == 0 {
        return None;
    }
    let hosts: std::collections::BTreeSet<u64> = examples.iter().map(|e| e.host).collect();
    let templates = examples.iter().filter(|e| e.template).count();
    if hosts.len() < min_hosts {
        Some(format!(
            "{} hosts with site-level labels, fewer than --min-training-hosts {min_hosts}",
            hosts.len()
        ))
    } else if templates == 0 || templates == examples.len() {
        Some(format!(
            "{} labelled nodes, {templates} of them templates: one label only",
            examples.len()
        ))
    } else {
        None
    }
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
    let mut facts = settings.facts.clone();
    if let Some(map) = facts.as_object_mut() {
        map.insert("examples".into(), examples.len().into());
        map.insert("templates".into(), templates.into());
    }
    let mut fitted = model::fit(&examples, &settings.fit, facts)?;
    fitted.validation = Some(model::validate(&examples, &settings.fit, &fitted)?);
    Ok(fitted)
}
