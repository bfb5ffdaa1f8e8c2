//! Fitting: the lexicons and the trees on the pages of a split, and the cross-validation that
//! judges every page by a model fitted without its fold.

use std::collections::HashMap;

use forust_ml::sampler::SampleMethod;
use forust_ml::{GradientBooster, Matrix};
use stencil_operators::page_models::content;
use stencil_operators::page_models::content::containers;
use stencil_operators::page_models::content::features::{
    set_containers, set_lexical, Row, COUNT, NAMES,
};
use stencil_operators::page_models::content::forest::ContentModel;
use stencil_operators::page_models::content::kind::{self, set_kind, KindModel};
use stencil_operators::page_models::content::lexicon::Lexicon;
use stencil_operators::page_models::content::tree::Tree;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::examples::Example;
use super::folds::{split, Folds};
use super::TrainContentArgs;

/// Folds inside the training pages of one fit, for the training rows' lexical features.
const LEXICON_FOLDS: u64 = 3;

/// A word enters a lexicon when it occurs on at least this many pages.
const LEXICON_MIN_PAGES: u32 = 3;

/// A lexicon fitted to the blocks of the pages `pages`, labelled and weighted as in the fit; a
/// word is kept when it occurs on [`LEXICON_MIN_PAGES`] pages or more.
fn fit_lexicon(examples: &[Example], pages: &[usize], args: &TrainContentArgs) -> Lexicon {
    let counted: Vec<(usize, usize)> = pages.iter().map(|&p| (p, p)).collect();
    fit_words(examples, &counted, |e| &e.words, args)
}

/// A container lexicon fitted to the blocks of the pages `pages`: a word is kept when it
/// stands over blocks of [`LEXICON_MIN_PAGES`] hosts or more, since a site names its
/// containers alike on every page.
fn fit_containers(examples: &[Example], pages: &[usize], args: &TrainContentArgs) -> Lexicon {
    let mut by_host: Vec<usize> = pages.to_vec();
    by_host.sort_by(|&a, &b| examples[a].site.cmp(&examples[b].site).then(a.cmp(&b)));
    let mut host = 0usize;
    let mut counted = Vec::with_capacity(by_host.len());
    for (k, &p) in by_host.iter().enumerate() {
        if k > 0 && examples[by_host[k - 1]].site != examples[p].site {
            host += 1;
        }
        counted.push((p, host));
    }
    fit_words(examples, &counted, |e| &e.container_words, args)
}

/// A lexicon over the words `words_of` gives each block of the pages of `counted`, each page
/// with the number its words are counted under (`Lexicon::fit`'s distinct pages), in order.
fn fit_words(
    examples: &[Example],
    counted: &[(usize, usize)],
    words_of: impl Fn(&Example) -> &[Vec<u64>],
    args: &TrainContentArgs,
) -> Lexicon {
    let blocks = counted.iter().flat_map(|&(p, counted_as)| {
        let example = &examples[p];
        words_of(example)
            .iter()
            .zip(&example.labels)
            .zip(&example.weights)
            .map(move |((words, label), &weight)| {
                (
                    counted_as,
                    words.as_slice(),
                    label.share() >= args.label_share,
                    weight,
                )
            })
    });
    Lexicon::fit(blocks, LEXICON_MIN_PAGES)
}

/// Every block's container scores under `lexicon`.
fn container_scores(example: &Example, lexicon: &Lexicon) -> Vec<f32> {
    containers::scores(&example.dom, &example.blocks, lexicon)
}

/// Every block's score under `lexicon`.
fn lexical_scores(example: &Example, lexicon: &Lexicon) -> Vec<f32> {
    example.words.iter().map(|w| lexicon.mean(w)).collect()
}

/// A page's feature rows with the lexical features of `scores` and the container feature of
/// `containers`.
pub(super) fn rows_with_scores(example: &Example, scores: &[f32], containers: &[f32]) -> Vec<Row> {
    let mut rows = example.rows.clone();
    let every_block = vec![true; rows.len()];
    set_lexical(&mut rows, &example.blocks, scores, &every_block);
    set_containers(&mut rows, containers, &every_block);
    rows
}

/// Fits the trees on the blocks of the pages `pages` (indices into `examples`), and the
/// lexicon the model carries on all of them. A training row's lexical features come from a
/// lexicon fitted without its host (three host-disjoint folds of `pages`): with its own words
/// counted, a block's score would look surer than any unseen page's, and the trees would
/// learn to trust it too much.
pub(super) fn fit(
    examples: &[Example],
    pages: &[usize],
    args: &TrainContentArgs,
) -> Result<ContentModel, String> {
    let inner_fold = |p: usize| xxh3_64_with_seed(examples[p].site.as_bytes(), 1) % LEXICON_FOLDS;
    let mut out_of_fold: HashMap<usize, (Vec<f32>, Vec<f32>, f32)> = HashMap::new();
    for fold in 0..LEXICON_FOLDS {
        let (held, rest): (Vec<usize>, Vec<usize>) =
            pages.iter().partition(|&&p| inner_fold(p) == fold);
        let lexicon = fit_lexicon(examples, &rest, args);
        let names = fit_containers(examples, &rest, args);
        let kinds = fit_kinds(examples, &rest)?;
        for p in held {
            out_of_fold.insert(
                p,
                (
                    lexical_scores(&examples[p], &lexicon),
                    container_scores(&examples[p], &names),
                    kind_of(&examples[p], &kinds),
                ),
            );
        }
    }
    let unused = unused_features(args)?;
    let rows: usize = pages.iter().map(|&p| examples[p].rows.len()).sum();
    let mut columns = vec![0f64; rows * COUNT];
    let mut y = Vec::with_capacity(rows);
    let mut weight = Vec::with_capacity(rows);
    let mut r = 0;
    for &p in pages {
        let example = &examples[p];
        let (scores, names, kind) = &out_of_fold[&p];
        let mut page_rows = rows_with_scores(example, scores, names);
        set_kind(&mut page_rows, *kind);
        for ((row, label), &w) in page_rows.iter().zip(&example.labels).zip(&example.weights) {
            for (f, &value) in row.iter().enumerate() {
                if !unused[f] {
                    columns[f * rows + r] = f64::from(value);
                }
            }
            y.push(f64::from(u8::from(label.share() >= args.label_share)));
            weight.push(w);
            r += 1;
        }
    }
    let matrix = Matrix::new(&columns, rows, COUNT);
    let mut booster = GradientBooster::default()
        .set_iterations(args.iterations)
        .set_learning_rate(args.learning_rate)
        .set_max_depth(args.max_depth)
        .set_min_leaf_weight(args.min_leaf_weight)
        .set_subsample(args.subsample)
        .set_sample_method(if args.subsample < 1.0 {
            SampleMethod::Random
        } else {
            SampleMethod::None
        })
        .set_colsample_bytree(args.colsample)
        .set_parallel(false)
        .set_seed(0);
    booster
        .fit(&matrix, &y, &weight, None)
        .map_err(|e| format!("fitting the content model: {e}"))?;
    let trees = booster
        .trees
        .iter()
        .map(export)
        .collect::<Result<Vec<_>, _>>()?;
    let mut model = ContentModel::new(booster.base_score, 0.5, trees)?;
    model.lexicon = fit_lexicon(examples, pages, args);
    model.containers = fit_containers(examples, pages, args);
    model.kinds = fit_kinds(examples, pages)?;
    Ok(model)
}

/// A page's embedding for the kind classifier, over the blocks `content::probabilities` scores
/// first (`content::kind`).
fn kind_embedding(example: &Example) -> Vec<f64> {
    let scored = content::scored_first(&example.blocks, example.site_inside.as_deref());
    let rows: Vec<_> = (example.rows.iter().zip(&scored))
        .filter(|(_, &s)| s)
        .map(|(row, _)| *row)
        .collect();
    kind::embedding(&rows, &example.blocks, &scored, &example.url)
}

/// The kind `kinds` guesses for a page, as the `page_kind` feature's value.
fn kind_of(example: &Example, kinds: &KindModel) -> f32 {
    kinds.classify(&kind_embedding(example)) as f32
}

/// The kind classifier (`content::kind`) fitted on the pages `pages`: one forest per kind,
/// that kind against the others, every kind weighing the same in each fit (a page of a kind
/// with n pages weighs 1000 / n), so that the articles, most of the gold, do not drown the
/// rest. The gold's page type is the label; a page without one (the news sets) is an article.
fn fit_kinds(examples: &[Example], pages: &[usize]) -> Result<KindModel, String> {
    let label: Vec<usize> = (pages.iter())
        .map(|&p| {
            (kind::KINDS.iter())
                .position(|k| *k == examples[p].page_type)
                .unwrap_or(0)
        })
        .collect();
    let mut count = [0f64; kind::KINDS.len()];
    for &l in &label {
        count[l] += 1.0;
    }
    let mut columns = vec![0f64; pages.len() * kind::DIMENSIONS];
    for (r, &p) in pages.iter().enumerate() {
        for (d, value) in kind_embedding(&examples[p]).into_iter().enumerate() {
            columns[d * pages.len() + r] = value;
        }
    }
    let matrix = Matrix::new(&columns, pages.len(), kind::DIMENSIONS);
    let weight: Vec<f64> = label.iter().map(|&l| 1000.0 / count[l]).collect();
    let (mut base_scores, mut forests) = (Vec::new(), Vec::new());
    for (k, &pages_of_kind) in count.iter().enumerate() {
        // A kind no page has is never the guess; one every page has, always. Boosting either
        // would start from an infinite log-odds.
        if pages_of_kind == 0.0 || pages_of_kind == pages.len() as f64 {
            base_scores.push(if pages_of_kind == 0.0 { f64::MIN } else { 0.0 });
            forests.push(Vec::new());
            continue;
        }
        let y: Vec<f64> = label.iter().map(|&l| f64::from(u8::from(l == k))).collect();
        let mut booster = GradientBooster::default()
            .set_iterations(KIND_ROUNDS)
            .set_learning_rate(0.1)
            .set_max_depth(4)
            .set_parallel(false)
            .set_seed(0);
        booster
            .fit(&matrix, &y, &weight, None)
            .map_err(|e| format!("fitting the page kinds: {e}"))?;
        base_scores.push(booster.base_score);
        forests.push(
            (booster.trees.iter())
                .map(export)
                .collect::<Result<Vec<_>, _>>()?,
        );
    }
    KindModel::new(base_scores, forests)
}

/// Boosting rounds of each kind's forest.
const KIND_ROUNDS: usize = 150;

/// Which features `--without-features` leaves out of the fit.
pub(super) fn unused_features(args: &TrainContentArgs) -> Result<[bool; COUNT], String> {
    let mut unused = [false; COUNT];
    for name in &args.without_features {
        let f = (NAMES.iter().position(|n| n == name))
            .ok_or_else(|| format!("--without-features: no feature is named {name}"))?;
        unused[f] = true;
    }
    Ok(unused)
}

/// forust's tree in the shipped form (`content::tree::Tree`).
fn export(tree: &forust_ml::tree::Tree) -> Result<Tree, String> {
    let n = tree.nodes.len();
    let mut out = Tree {
        feature: vec![0; n],
        threshold: vec![0.0; n],
        left: vec![0; n],
        right: vec![0; n],
        value: vec![0.0; n],
        leaf: vec![true; n],
    };
    for node in &tree.nodes {
        let i = node.num;
        if i >= n {
            return Err(format!("tree node {i} of {n}"));
        }
        out.value[i] = node.weight_value;
        out.leaf[i] = node.is_leaf;
        if !node.is_leaf {
            out.feature[i] = node.split_feature as u16;
            out.threshold[i] = node.split_value;
            out.left[i] = node.left_child as u32;
            out.right[i] = node.right_child as u32;
        }
    }
    Ok(out)
}

/// Held-out probabilities of every block of every page, as `stencil run` computes them
/// (`content::probabilities`): fitted on the other folds' `examples`, predicted from the
/// page's entry in `judged` (the same pages, perhaps seen without site-level evidence).
pub(super) fn cross_validate(
    examples: &[Example],
    judged: &[Example],
    args: &TrainContentArgs,
) -> Result<Vec<Vec<f32>>, String> {
    let mut out: Vec<Option<Vec<f32>>> = (0..examples.len()).map(|_| None).collect();
    let pages: Vec<(&str, &str)> = (examples.iter())
        .map(|e| (e.source.as_str(), e.site.as_str()))
        .collect();
    let dealing = Folds::of(args);
    let folds = dealing.deal(&pages);
    for fold in 0..folds.iter().max().map_or(0, |&f| f + 1) {
        let (held, train) = split(fold, &folds, &pages);
        if held.is_empty() {
            continue;
        }
        if train.is_empty() {
            return Err(format!(
                "fold {fold} ({}) leaves no page to fit on: the held-out report needs pages \
                 of another {}",
                examples[held[0]].source,
                dealing.unit()
            ));
        }
        let model = fit(examples, &train, args)?;
        eprintln!(
            "train-content: fold {fold}: {} pages held out, fitted on {}",
            held.len(),
            train.len()
        );
        for p in held {
            let example = &judged[p];
            let mut kind = None;
            out[p] = Some(content::probabilities(
                &example.blocks,
                example.site_inside.as_deref(),
                model.threshold,
                |wanted| {
                    let scores = lexical_scores(example, &model.lexicon);
                    let names = container_scores(example, &model.containers);
                    let mut rows: Vec<_> = rows_with_scores(example, &scores, &names)
                        .iter()
                        .zip(wanted)
                        .filter(|(_, &w)| w)
                        .map(|(row, _)| *row)
                        .collect();
                    (model.kinds).set(&example.blocks, wanted, &mut rows, &example.url, &mut kind);
                    model.probabilities(&rows)
                },
            ));
        }
    }
    out.into_iter()
        .map(|j| j.ok_or_else(|| "a page in no fold".to_string()))
        .collect()
}
