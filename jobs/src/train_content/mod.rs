//! `stencil train-content`: fits the main-content model (`stencil_operators::page_models::content`)
//! to human gold, and measures it host-disjoint.
//!
//! Input: WARC files and a manifest of gold texts (`url`, `gold_path`, and optionally `source`
//! and `page_type`, tab-separated with a header: what `stencil_tests::end_to_end::build`
//! writes for the shared data sets). Every page of the WARCs takes part in the site-level
//! statistics, as in `stencil run`, so a block inside a host's template carries that evidence;
//! the pages with gold are the examples.
//!
//! Each page is judged by a model fitted without its fold (host-disjoint folds, or one data set
//! per fold with `--hold-out-sources`), and the report (per source and page type: micro and
//! macro token F1 of the cleaned text, gold lost, pages emptied) is over those held-out calls.
//! The model written is then fitted on every page. The same input and parameters give the same
//! model, byte for byte: the trees are fitted single-threaded with a fixed seed.
//!
//! The command's steps, each in its own module: [`examples`] reads the crawl and the gold into
//! one example per gold page, [`folds`] deals pages to folds, [`fit`] fits lexicons and trees
//! and cross-validates, [`cache`] keeps held-out probabilities between runs, [`report`] turns
//! the held-out calls into the report and `--blocks`.

mod cache;
mod examples;
mod fit;
mod folds;
mod report;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use stencil_operators::dom::subtree::summarize;
use stencil_operators::page_models::content::Rule;

use crate::files;
use crate::limits::LimitArgs;
use cache::{cache_key, cached, KeptProbabilities};
use examples::{load, read_manifest, without_site_evidence, Example};
use fit::{cross_validate, unused_features};
use folds::Folds;
use report::{judged, write_blocks, Judged, Report};

#[derive(Args)]
pub struct TrainContentArgs {
    /// WARC files (.warc, .warc.gz) or directories holding them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Gold manifest: tab-separated, with a header naming `url` and `gold_path` (a UTF-8 text
    /// file of the page's main content), optionally `source` and `page_type`.
    #[arg(long)]
    pub gold: PathBuf,
    /// Where to write the model (JSON; `--content-model` of run, apply and clean reads it).
    #[arg(long)]
    pub out: PathBuf,
    /// Host-disjoint folds for the held-out report (0: no report, fit only).
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Seeds the hash that deals hosts to folds: another seed, another host-disjoint
    /// partition, so the held-out figures' spread over partitions can be measured.
    #[arg(long, default_value_t = 0)]
    pub fold_seed: u64,
    /// Also write the report as JSON here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Write each gold page's held-out cleaned text here, as `<gold file stem>.txt` (what
    /// `textf1.py --pred-dir` and `docs/bench/side_by_side.py` read).
    #[arg(long)]
    pub predictions: Option<PathBuf>,
    /// Write every block of every gold page here as TSV, for error analysis: page URL, source,
    /// page type, block index, characters, held-out probability, whether the shipped rule
    /// calls it content, the share of its tokens in the gold, and its text (tabs and line
    /// breaks turned into spaces).
    #[arg(long)]
    pub blocks: Option<PathBuf>,
    /// Boosting rounds.
    #[arg(long, default_value_t = 120)]
    pub iterations: usize,
    #[arg(long, default_value_t = 0.25)]
    pub learning_rate: f32,
    #[arg(long, default_value_t = 6)]
    pub max_depth: usize,
    /// Minimum summed hessian in a leaf.
    #[arg(long, default_value_t = 5.0)]
    pub min_leaf_weight: f32,
    /// Share of the blocks each tree is fitted on, drawn anew per tree (seeded: the fit stays
    /// deterministic); 1 fits every tree on every block.
    #[arg(long, default_value_t = 1.0)]
    pub subsample: f32,
    /// Share of the features each tree may split on, drawn anew per tree (seeded).
    #[arg(long, default_value_t = 1.0)]
    pub colsample: f64,
    /// A block weighs its token count to this power in the fit (1: as the token F1 counts it;
    /// 0: every block alike).
    #[arg(long, default_value_t = 0.5)]
    pub weight_power: f64,
    /// Let long pages weigh more in the fit. By default every page weighs the same (each
    /// block's weight divided by its page's total), as the macro F1 counts pages.
    #[arg(long)]
    pub long_pages_weigh_more: bool,
    /// A block is content when at least this share of its tokens is in the gold.
    #[arg(long, default_value_t = 0.5)]
    pub label_share: f32,
    /// Skip the final fit on every page (report only).
    #[arg(long)]
    pub no_model: bool,
    /// Keep the held-out probabilities in this file: read them from it when it was written
    /// for the same inputs, else compute them and write it. Comparing decision rules
    /// (`content::Rule`) then takes seconds instead of a cross-validation. The file is keyed
    /// by the fit's parameters, `--held-out-alone` and a hash of every page's feature rows,
    /// words, labels and weights, so a change of data, features or mode recomputes it; a
    /// change to the fitting code itself does not: delete the file after one.
    #[arg(long)]
    pub held_out_cache: Option<PathBuf>,
    /// Judge each held-out page as a crawl holding it alone would: without site-level
    /// evidence (no host statistics), as `stencil clean` and crawls with a page or two per
    /// host see it. The folds are fitted as usual.
    #[arg(long)]
    pub held_out_alone: bool,
    /// Pages of small groups (a source's page type, else the source) weigh more: each page's
    /// weight is scaled by its group's page count to the power of minus this (0: every page
    /// alike), the scales averaging 1 over the pages.
    #[arg(long, default_value_t = 0.0)]
    pub balance_groups: f64,
    /// Hold out one data set at a time instead of hash-dealt hosts: each source's pages are
    /// judged by a model fitted on the other sources only (less any page of a host the held-out
    /// source also has), as a model meets pages gathered and labelled by people it never
    /// learned from. `--folds` and `--fold-seed` then go unused.
    #[arg(long)]
    pub hold_out_sources: bool,
    /// Fit without these features (comma-separated names of `docs/features.md`' list): their
    /// columns are left constant, so no tree splits on them. For measuring what a feature is
    /// worth; the model's rows keep their layout.
    #[arg(long, value_delimiter = ',')]
    pub without_features: Vec<String>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

pub fn run(args: &TrainContentArgs) -> Result<ExitCode, String> {
    // A misspelt feature is refused before minutes of reading, not at the first fit.
    unused_features(args)?;
    let gold = read_manifest(&args.gold)?;
    let inputs = files::collect(&args.paths)?;
    let examples = load(&inputs, &gold, args)?;
    let alone: Option<Vec<Example>> = args
        .held_out_alone
        .then(|| examples.iter().map(without_site_evidence).collect());
    // The pages as they are judged: fitted on `examples`, predicted and scored as these.
    let judged_examples = alone.as_deref().unwrap_or(&examples);
    eprintln!(
        "train-content: {} pages with gold, {} blocks",
        examples.len(),
        examples.iter().map(|e| e.rows.len()).sum::<usize>()
    );
    let with_evidence =
        |pages: &[Example]| pages.iter().filter(|e| e.site_inside.is_some()).count();
    eprintln!(
        "train-content: {} pages on hosts with site-level statistics; held out, {} judged with them",
        with_evidence(&examples),
        with_evidence(judged_examples)
    );
    if examples.is_empty() {
        return Err("no page of the WARCs has gold in the manifest".into());
    }
    let mut training = serde_json::Map::new();
    training.insert("pages".into(), examples.len().into());
    training.insert("parameters".into(), parameters(args));
    if args.folds >= 2 || args.hold_out_sources {
        // The key is only worth its hashing when there is a cache to check it against.
        let cache = (args.held_out_cache.as_deref())
            .map(|path| (path, cache_key(&examples, judged_examples, args)));
        let kept = cache
            .as_ref()
            .and_then(|(path, key)| cached(&examples, key, path));
        let probabilities = match kept {
            Some(probabilities) => probabilities,
            None => {
                let probabilities = cross_validate(&examples, judged_examples, args)?;
                if let Some((path, key)) = cache {
                    let kept = KeptProbabilities { key, probabilities };
                    let json = serde_json::to_string(&kept).unwrap_or_default();
                    std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
                    kept.probabilities
                } else {
                    probabilities
                }
            }
        };
        // Every rule on the same held-out probabilities (each page's sums computed once for
        // all of them); the shipped rule's figures in full, after the others.
        let mut by_rule: Vec<Vec<Judged>> = Rule::ALL.iter().map(|_| Vec::new()).collect();
        for (example, probability) in judged_examples.iter().zip(&probabilities) {
            let sums = summarize(&example.dom, &example.host);
            for (judged_pages, &rule) in by_rule.iter_mut().zip(&Rule::ALL) {
                judged_pages.push(judged(example, &sums, probability, rule));
            }
        }
        let how = Folds::of(args).how();
        let shipped = Rule::ALL
            .iter()
            .position(|&r| r == Rule::default())
            .unwrap_or(0);
        for (judged_pages, rule) in by_rule.iter().zip(Rule::ALL) {
            if rule != Rule::default() {
                let table =
                    Report::of(&examples, judged_pages).table_for(how, &format!("{rule:?}"));
                print!("{table}");
            }
        }
        let held_out = by_rule.swap_remove(shipped);
        let report = Report::of(&examples, &held_out);
        print!(
            "{}",
            report.table_for(how, &format!("{:?} (shipped)", Rule::default()))
        );
        if let Some(dir) = &args.predictions {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            for (example, judged) in examples.iter().zip(&held_out) {
                let path = dir.join(format!("{}.txt", example.stem));
                std::fs::write(&path, &judged.text)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
        if let Some(path) = &args.blocks {
            write_blocks(path, &examples, &probabilities, &held_out)?;
        }
        let json = report.json();
        if let Some(path) = &args.report {
            std::fs::write(
                path,
                serde_json::to_string_pretty(&json).unwrap_or_default(),
            )
            .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        training.insert("held_out".into(), json);
    }
    if !args.no_model {
        let all: Vec<usize> = (0..examples.len()).collect();
        let mut model = fit::fit(&examples, &all, args)?;
        model.training = serde_json::Value::Object(training);
        std::fs::write(&args.out, model.to_json() + "\n")
            .map_err(|e| format!("{}: {e}", args.out.display()))?;
        eprintln!("train-content: model written to {}", args.out.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn parameters(args: &TrainContentArgs) -> serde_json::Value {
    let mut parameters = serde_json::json!({
        "folds": args.folds,
        "fold_seed": args.fold_seed,
        "iterations": args.iterations,
        "learning_rate": args.learning_rate,
        "max_depth": args.max_depth,
        "min_leaf_weight": args.min_leaf_weight,
        "subsample": args.subsample,
        "colsample": args.colsample,
        "weight_power": args.weight_power,
        "label_share": args.label_share,
        "equal_pages": !args.long_pages_weigh_more,
        "balance_groups": args.balance_groups,
    });
    // Named only when used: a fit without these options records the same parameters as the
    // shipped model's file, which names neither.
    if args.hold_out_sources {
        parameters["hold_out_sources"] = true.into();
    }
    if !args.without_features.is_empty() {
        parameters["without_features"] = args.without_features.clone().into();
    }
    parameters
}
