//! `stencil score`: page-level templateness scores x(i) of every element of every page, with a
//! given model or the shipped one, and their smoothing y(i) into sections, written as the
//! `node_scores` table. No site statistics and no training: one pass, so it works on a single
//! WARC, or on one page.
//!
//! The per-page work ([`score_page`]) is shared with `stencil train --score`, which scores with
//! the model it has just broadcast.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use stencil_operators::dom::subtree::summarize;
use stencil_operators::dom::Dom;
use stencil_operators::inventory::{for_each_page, Inventory, Share};
use stencil_operators::page_models::features;
use stencil_operators::page_models::model::Model;
use stencil_operators::reading::page::Page;
use stencil_operators::site::site_level::site_of;
use stencil_operators::smoothing::isotonic;
use stencil_operators::smoothing::segmentation::{self, Penalty};

use crate::cluster::ClusterArgs;
use crate::tables::{NodeId, NodeScoreRow, Rows, StreamingPart};
use crate::{files, LimitArgs};

#[derive(Args)]
pub struct ScoreArgs {
    /// WARC files (.warc, .warc.gz), directories holding them, or single HTML pages (.html,
    /// .htm).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output folder; the scores are written to OUT/node_scores.
    #[arg(long)]
    pub out: PathBuf,
    /// A model.json written by `stencil train`; the shipped default model when absent.
    #[arg(long)]
    pub model: Option<PathBuf>,
    #[command(flatten)]
    pub smoothing: SmoothingArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// How scores are smoothed into sections (seed 000, §4 and §5.3; docs/evaluation.md measures
/// the choices).
#[derive(Args, Clone, Debug)]
pub struct SmoothingArgs {
    /// The penalty constant c: γ(i) = c · A / A(i) with the default penalty form. Larger
    /// values give fewer, larger sections.
    #[arg(long, default_value_t = segmentation::Params::default().c)]
    pub smoothing_c: f32,
    /// How γ(i) depends on the node: area (c·A/A(i)), nodes (c·N/N(i)), parent-area
    /// (c·A(parent)/A(i)) or constant (c).
    #[arg(long, default_value_t = segmentation::Params::default().penalty)]
    pub penalty: Penalty,
    /// Elements with a size proxy (visible characters + 100 per media element + 20 per form
    /// control) below this are hidden: folded into their parent, never sections.
    #[arg(long, default_value_t = segmentation::Params::default().hidden_area)]
    pub hidden_area: f32,
    /// Scores are quantized to this many levels on pages with more distinct scores (the
    /// solver is exact below it).
    #[arg(long, default_value_t = segmentation::Params::default().max_levels)]
    pub max_levels: usize,
    /// τ: a node smoothed to at least this is template (the `template` column).
    #[arg(long, default_value_t = segmentation::DEFAULT_THRESHOLD)]
    pub threshold: f32,
}

impl SmoothingArgs {
    /// The flags' defaults, for callers that build the arguments in code.
    pub fn defaults() -> SmoothingArgs {
        let params = segmentation::Params::default();
        SmoothingArgs {
            smoothing_c: params.c,
            penalty: params.penalty,
            hidden_area: params.hidden_area,
            max_levels: params.max_levels,
            threshold: segmentation::DEFAULT_THRESHOLD,
        }
    }

    /// The smoothing these settings describe, or what is wrong with them.
    pub fn smoothing(&self) -> Result<Smoothing, String> {
        if !(self.smoothing_c >= 0.0 && self.smoothing_c.is_finite()) {
            return Err(format!(
                "--smoothing-c must be ≥ 0, not {}",
                self.smoothing_c
            ));
        }
        if !(self.hidden_area >= 0.0 && self.hidden_area.is_finite()) {
            return Err(format!(
                "--hidden-area must be ≥ 0, not {}",
                self.hidden_area
            ));
        }
        if !isotonic::MAX_LEVELS.contains(&self.max_levels) {
            return Err(format!(
                "--max-levels must be in {:?}, not {}",
                isotonic::MAX_LEVELS,
                self.max_levels
            ));
        }
        if !(self.threshold.is_finite()) {
            return Err(format!(
                "--threshold must be a number, not {}",
                self.threshold
            ));
        }
        Ok(Smoothing {
            params: segmentation::Params {
                c: self.smoothing_c,
                penalty: self.penalty,
                hidden_area: self.hidden_area,
                max_levels: self.max_levels,
            },
            threshold: self.threshold,
        })
    }
}

/// How scores become sections and template calls.
#[derive(Clone, Copy, Debug)]
pub struct Smoothing {
    pub params: segmentation::Params,
    /// τ.
    pub threshold: f32,
}

/// A model and how its scores are smoothed: what scoring a page needs.
#[derive(Clone, Debug)]
pub struct Scorer {
    pub model: Model,
    pub smoothing: Smoothing,
}

/// Loads `--model`, or the model embedded in the binary.
pub fn load_model(path: Option<&Path>) -> Result<Model, String> {
    match path {
        Some(path) => {
            let json =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            Model::from_json(&json).map_err(|e| format!("{}: {e}", path.display()))
        }
        None => Ok(Model::default_model()),
    }
}

/// What scoring wrote, for the run's summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scored {
    /// `node_scores` rows.
    pub rows: u64,
    pub sections: u64,
    /// Pages whose scores had more distinct values than `--max-levels` and were smoothed
    /// after quantizing them (the approximation bounded in
    /// `stencil_operators::smoothing::isotonic`).
    pub quantized_pages: u64,
}

/// Scores and smooths every element of one page and streams the rows.
pub fn score_page(
    url: &str,
    host: &str,
    dom: &Dom,
    scorer: &Scorer,
    out: &mut StreamingPart<Rows<NodeScoreRow>>,
    scored: &mut Scored,
) -> Result<(), String> {
    crate::crash::enter("hashes", url);
    let sums = summarize(dom, host);
    crate::crash::enter("features", url);
    let page_features = features::compute(dom, &sums);
    let scores = scorer.model.score_page(dom, &page_features);
    let smoothing = &scorer.smoothing;
    let segments = segmentation::segment(dom, &scores, &page_features.area, &smoothing.params);
    let paths = dom.paths();
    let url: Arc<str> = Arc::from(url);
    let host: Arc<str> = Arc::from(site_of(host));
    for (node, path) in paths.into_iter().enumerate() {
        let Some(score) = scores[node] else {
            continue;
        };
        let area = page_features.area[node];
        let smoothed = segments.smoothed[node];
        out.push(NodeScoreRow {
            id: NodeId::new(&url, &host, dom, node, path),
            text_chars: sums[node].text_chars,
            area,
            bucket: scorer.model.bucket(area) as u8,
            score,
            smoothed,
            section: segments.is_section(node),
            template: smoothed >= smoothing.threshold,
        })?;
        scored.rows += 1;
    }
    scored.sections += segments.sections.len() as u64;
    scored.quantized_pages += u64::from(segments.quantized);
    Ok(())
}

/// Whether a path names a single HTML page rather than a WARC file.
fn is_html_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let name = name.to_ascii_lowercase();
    name.ends_with(".html") || name.ends_with(".htm")
}

/// Reads one HTML file as a page: its bytes (at most the page size limit), its charset found
/// as for a WARC page without HTTP headers (BOM, `<meta>`, then detection), and its URL the
/// file's `file:` path.
fn read_html_file(
    path: &Path,
    limits: &stencil_operators::reading::warc::Limits,
) -> Result<(String, Dom), String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(limits.max_page_bytes as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let decoded = stencil_operators::reading::charset::decode(&bytes, None, None);
    let dom = stencil_operators::dom::parse(&decoded.text, limits.max_dom_depth);
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok((format!("file://{}", absolute.display()), dom))
}

/// Scores every page of `files` (WARC files, or single `.html` pages) into this worker's
/// `node_scores` part.
pub fn score_files(
    files: &[(&PathBuf, Share)],
    out: &Path,
    worker: usize,
    scorer: &Scorer,
    limits: &stencil_operators::reading::warc::Limits,
    inventory: &mut Inventory,
) -> Result<Scored, String> {
    let mut part = StreamingPart::node_scores(out, worker)?;
    let mut scored = Scored::default();
    let mut failure: Option<String> = None;
    let here = crate::crash::Whereabouts::register(worker);
    here.stage("scoring");
    for &(path, share) in files {
        here.file(&path.display().to_string());
        if is_html_file(path) {
            // A page file has one record: its first reader takes it.
            if share.part != 0 {
                continue;
            }
            inventory.files += 1;
            let result = read_html_file(path, limits)
                .and_then(|(url, dom)| score_page(&url, "", &dom, scorer, &mut part, &mut scored));
            match result {
                Ok(()) => *inventory.by_outcome.entry("page".to_string()).or_default() += 1,
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
            continue;
        }
        let visit = |page: &Page, dom: &Dom| {
            here.offset(page.position.offset);
            if failure.is_none() {
                let page_result =
                    score_page(&page.url, &page.host, dom, scorer, &mut part, &mut scored);
                if let Err(e) = page_result {
                    failure = Some(e);
                }
            }
        };
        if let Err(e) = for_each_page(path, limits, share, inventory, visit, |_| {}) {
            failure.get_or_insert(format!("{}: {e}", path.display()));
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    part.finish()?;
    Ok(scored)
}

pub fn run(args: &ScoreArgs) -> Result<ExitCode, String> {
    let scorer = Arc::new(Scorer {
        model: load_model(args.model.as_deref())?,
        smoothing: args.smoothing.smoothing()?,
    });
    let config = args.cluster.config()?;
    let all = Arc::new(files::collect(&args.paths)?);
    if args.cluster.is_first_process() {
        crate::site::clear_tables(&args.out, &["node_scores"])?;
    }
    let (out, limits) = (args.out.clone(), args.limits.limits());
    let start = Instant::now();
    let guards = args.cluster.execute(config, move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mine = crate::files::assigned(&all, index, peers);
        let mut inventory = Inventory::default();
        let scored = score_files(&mine, &out, index, &scorer, &limits, &mut inventory);
        scored.map(|scored| (scored, inventory))
    })?;
    let (mut total, mut inventory) = (Scored::default(), Inventory::default());
    for result in guards.join() {
        let (scored, i) = result.map_err(|e| format!("worker failed: {e}"))??;
        total.rows += scored.rows;
        total.sections += scored.sections;
        total.quantized_pages += scored.quantized_pages;
        inventory.merge(&i);
    }
    let seconds = start.elapsed().as_secs_f64();
    crate::crash::warn_of_contained_panics(&inventory, "they have no node_scores rows");
    let pages = inventory.by_outcome.get("page").copied().unwrap_or(0);
    eprintln!(
        "scored {pages} pages of {} files: {} nodes, {} sections ({:.1} per page; {} pages \
         with more than {} distinct scores smoothed on quantized levels) in {seconds:.1} s \
         ({:.1} MB/s of WARC) -> {}",
        inventory.files,
        total.rows,
        total.sections,
        total.sections as f64 / pages.max(1) as f64,
        total.quantized_pages,
        args.smoothing.max_levels,
        inventory.warc_bytes as f64 / 1e6 / seconds.max(1e-9),
        args.out.join("node_scores").display()
    );
    Ok(ExitCode::SUCCESS)
}
