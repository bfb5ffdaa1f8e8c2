//! `stencil score`: page-level templateness scores x(i) of every element of every page, with a
//! given model or the shipped one, and their smoothing y(i) into sections, written as the
//! `node_scores` table. No site statistics and no training: one pass, so it works on a single
//! WARC, or on one page.
//!
//! The per-page work ([`score_files`], [`score_page`]) is shared with `stencil train --score`,
//! which scores with the model it has just broadcast, and the [`Scorer`] with `run`, `apply`
//! and `clean`. Those commands build on this one; it depends on none of them.

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
use stencil_operators::smoothing::segmentation;

use crate::cluster::ClusterArgs;
use crate::files;
use crate::limits::LimitArgs;
use crate::model_file::load_model;
use crate::smoothing::{Smoothing, SmoothingArgs};
use crate::tables::{self, NodeId, NodeScoreRow, Rows, StreamingPart};

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

/// A model and how its scores are smoothed: what scoring a page needs.
#[derive(Clone, Debug)]
pub struct Scorer {
    pub model: Model,
    pub smoothing: Smoothing,
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
        tables::remove_earlier_parts(&args.out, &["node_scores"])?;
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
