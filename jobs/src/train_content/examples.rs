//! The examples: every gold page of the crawl, with its blocks, feature rows, labels and
//! weights, and the site-level evidence of its host.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use stencil_operators::dom::subtree::summarize;
use stencil_operators::dom::Dom;
use stencil_operators::inventory::{self, Inventory, Share};
use stencil_operators::page_models::content::align::{block_gold, BlockGold};
use stencil_operators::page_models::content::containers;
use stencil_operators::page_models::content::features::Row;
use stencil_operators::page_models::content::lexicon::block_words;
use stencil_operators::page_models::content::{self, Blocks, Context};
use stencil_operators::site::site_level::{self, site_of, url_key, Fingerprints, PageFingerprints};

use super::TrainContentArgs;

/// One page with gold, ready to fit and judge. Cloned only to judge a page without site-level
/// evidence (`--held-out-alone`), which changes its rows: what stays the same is shared.
#[derive(Clone)]
pub(super) struct Example {
    pub(super) url: String,
    pub(super) host: String,
    /// Whether each node is inside a site-level template (hosts with statistics only).
    pub(super) site_inside: Option<Vec<bool>>,
    pub(super) site: String,
    pub(super) source: String,
    pub(super) page_type: String,
    pub(super) stem: String,
    pub(super) gold: String,
    pub(super) dom: Rc<Dom>,
    pub(super) blocks: Rc<Blocks>,
    /// Feature rows with the lexical features left 0: they depend on the lexicon, which is
    /// fitted per fold ([`rows_with_scores`]).
    pub(super) rows: Vec<Row>,
    /// Each block's hashed words, for fitting and applying lexicons.
    pub(super) words: Rc<Vec<Vec<u64>>>,
    /// Each block's container words (`content::containers::block_words`), for fitting the
    /// container lexicon.
    pub(super) container_words: Rc<Vec<Vec<u64>>>,
    pub(super) labels: Vec<BlockGold>,
    /// Each block's weight in the fit ([`block_weights`]).
    pub(super) weights: Vec<f64>,
}

pub(super) struct GoldEntry {
    pub(super) path: PathBuf,
    pub(super) source: String,
    pub(super) page_type: String,
}

pub(super) fn read_manifest(path: &Path) -> Result<HashMap<String, GoldEntry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let column = |name: &str| header.iter().position(|h| *h == name);
    let (Some(url), Some(gold)) = (column("url"), column("gold_path")) else {
        return Err(format!(
            "{}: the header must name url and gold_path",
            path.display()
        ));
    };
    let (source, page_type) = (column("source"), column("page_type"));
    let base = path.parent().unwrap_or(Path::new("."));
    let mut out = HashMap::new();
    for line in lines {
        let fields: Vec<&str> = line.split('\t').collect();
        let field = |i: Option<usize>| i.and_then(|i| fields.get(i)).map_or("", |s| s.trim());
        let (url, gold) = (field(Some(url)), field(Some(gold)));
        if url.is_empty() || gold.is_empty() {
            continue;
        }
        let page_type = match field(page_type) {
            "-" => "",
            t => t,
        };
        out.insert(
            url.to_string(),
            GoldEntry {
                path: base.join(gold),
                source: field(source).to_string(),
                page_type: page_type.to_string(),
            },
        );
    }
    Ok(out)
}

/// Reads every page once: site-level fingerprints for all, features and gold labels for the
/// pages with gold.
pub(super) fn load(
    inputs: &[PathBuf],
    gold: &HashMap<String, GoldEntry>,
    args: &TrainContentArgs,
) -> Result<Vec<Example>, String> {
    let limits = args.limits.limits();
    let params = site_level::Params::default();
    let kind = Fingerprints::Subtrees;
    let mut prints = Vec::new();
    let mut kept: Vec<(String, String, Dom)> = Vec::new();
    let mut inventory = Inventory::default();
    for path in inputs {
        inventory::for_each_page(
            path,
            &limits,
            Share::WHOLE,
            &mut inventory,
            |page, dom| {
                let sums = summarize(dom, &page.host);
                prints.push(PageFingerprints {
                    host: site_of(&page.host).to_string(),
                    url_key: url_key(&page.url),
                    fingerprints: site_level::fingerprints(dom, &sums, kind),
                });
                if gold.contains_key(&page.url) {
                    kept.push((page.url.clone(), page.host.clone(), dom.clone()));
                }
            },
            |_| {},
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let hosts = site_level::learn(prints, &params, kind);
    let mut examples = Vec::with_capacity(kept.len());
    for (url, host, dom) in kept {
        let Some(entry) = gold.get(&url) else {
            continue;
        };
        let gold_text = std::fs::read_to_string(&entry.path)
            .map_err(|e| format!("{}: {e}", entry.path.display()))?;
        let sums = summarize(&dom, &host);
        let site = site_of(&host).to_string();
        let inside = hosts.get(&site).filter(|m| m.labelled).map(|model| {
            let roots = site_level::template_roots(&dom, &sums, model, kind);
            site_level::inside_templates(&dom, &roots)
        });
        let blocks = content::blocks::blocks(&dom);
        let context = Context {
            url: &url,
            site_inside: inside.as_deref(),
            lexical: None,
            containers: None,
            names: None,
            siblings: None,
        };
        let rows = content::features::compute(&dom, &sums, &blocks, context);
        let words = block_words(&blocks);
        let container_words =
            containers::block_words(&dom, &blocks, &containers::ElementWords::of(&dom));
        let labels = block_gold(&dom, &blocks, &gold_text);
        let weights = block_weights(&labels, args);
        let stem = entry
            .path
            .file_stem()
            .map_or_else(|| url.clone(), |s| s.to_string_lossy().into_owned());
        examples.push(Example {
            site_inside: inside.clone(),
            url,
            host: host.clone(),
            site,
            source: entry.source.clone(),
            page_type: entry.page_type.clone(),
            stem,
            gold: gold_text,
            dom: Rc::new(dom),
            blocks: Rc::new(blocks),
            rows,
            words: Rc::new(words),
            container_words: Rc::new(container_words),
            labels,
            weights,
        });
    }
    // WARC order depends on how the crawl was written; the fit must not.
    examples.sort_by(|a, b| a.url.cmp(&b.url));
    if args.balance_groups != 0.0 {
        let group = |e: &Example| format!("{}/{}", e.source, e.page_type);
        let mut counts: HashMap<String, f64> = HashMap::new();
        for e in &examples {
            *counts.entry(group(e)).or_default() += 1.0;
        }
        let scale = |e: &Example| counts[&group(e)].powf(-args.balance_groups);
        let mean = examples.iter().map(scale).sum::<f64>() / examples.len().max(1) as f64;
        let scales: Vec<f64> = examples.iter().map(|e| scale(e) / mean).collect();
        for (e, s) in examples.iter_mut().zip(scales) {
            for w in &mut e.weights {
                *w *= s;
            }
        }
    }
    Ok(examples)
}

/// `example` as a crawl holding it alone would see it: its features computed without
/// site-level evidence, and none for the calls.
pub(super) fn without_site_evidence(example: &Example) -> Example {
    let sums = summarize(&example.dom, &example.host);
    let context = Context {
        url: &example.url,
        ..Context::default()
    };
    Example {
        site_inside: None,
        rows: content::features::compute(&example.dom, &sums, &example.blocks, context),
        ..example.clone()
    }
}

/// The weight of each block of a page (`labels`) in the fit: its token count to
/// `--weight-power`, scaled so that every page weighs the same unless
/// `--long-pages-weigh-more`.
fn block_weights(labels: &[BlockGold], args: &TrainContentArgs) -> Vec<f64> {
    let weights: Vec<f64> = labels
        .iter()
        .map(|label| f64::from(label.tokens.max(1)).powf(args.weight_power))
        .collect();
    if args.long_pages_weigh_more {
        return weights;
    }
    // Equal pages: each page's blocks sum to the mean block count's worth of weight.
    let scale = 100.0 / weights.iter().sum::<f64>().max(1e-9);
    weights.into_iter().map(|w| w * scale).collect()
}
