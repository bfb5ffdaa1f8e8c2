//! `stencil score`: page-level templateness scores x(i) of every element of every page, with a
//! given model or the shipped one, written as the `node_scores` table. No site statistics and
//! no training: one pass, so it works on a single WARC, or on one page.
//!
//! The per-page work ([`score_page`]) is shared with `stencil train --score`, which scores with
//! the model it has just broadcast.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use stencil_operators::dom::Dom;
use stencil_operators::features;
use stencil_operators::inventory::{for_each_page, Inventory};
use stencil_operators::model::Model;
use stencil_operators::page::Page;
use stencil_operators::site_level::site_of;
use stencil_operators::subtree::summarize;

use crate::cluster::ClusterArgs;
use crate::tables::{NodeId, NodeScoreRow, StreamingPart};
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
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
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

/// Scores every element of one page and streams the rows.
pub fn score_page(
    url: &str,
    host: &str,
    dom: &Dom,
    model: &Model,
    out: &mut StreamingPart<NodeScoreRow>,
) -> Result<(), String> {
    let sums = summarize(dom, host);
    let page_features = features::compute(dom, &sums);
    let paths = dom.paths();
    let url: Arc<str> = Arc::from(url);
    let host: Arc<str> = Arc::from(site_of(host));
    for (node, path) in paths.into_iter().enumerate() {
        if dom.element(node).is_none() {
            continue;
        }
        let area = page_features.area[node];
        let bucket = model.bucket(area);
        out.push(NodeScoreRow {
            id: NodeId::new(&url, &host, dom, node, path),
            text_chars: sums[node].text_chars,
            area,
            bucket: bucket as u8,
            score: model.buckets[bucket].probability(page_features.row(node)),
        })?;
    }
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
    limits: &stencil_operators::warc::Limits,
) -> Result<(String, Dom), String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(limits.max_page_bytes as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let decoded = stencil_operators::charset::decode(&bytes, None, None);
    let dom = stencil_operators::dom::parse(&decoded.text, limits.max_dom_depth);
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok((format!("file://{}", absolute.display()), dom))
}

/// Scores every page of `files` (WARC files, or single `.html` pages) into this worker's
/// `node_scores` part.
pub fn score_files(
    files: &[&PathBuf],
    out: &Path,
    worker: usize,
    model: &Model,
    limits: &stencil_operators::warc::Limits,
    inventory: &mut Inventory,
) -> Result<u64, String> {
    let mut part = StreamingPart::node_scores(out, worker)?;
    let mut failure: Option<String> = None;
    for path in files {
        if is_html_file(path) {
            let scored = read_html_file(path, limits)
                .and_then(|(url, dom)| score_page(&url, "", &dom, model, &mut part));
            match scored {
                Ok(()) => *inventory.by_outcome.entry("page".to_string()).or_default() += 1,
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
            continue;
        }
        let visit = |page: &Page, dom: &Dom| {
            if failure.is_none() {
                if let Err(e) = score_page(&page.url, &page.host, dom, model, &mut part) {
                    failure = Some(e);
                }
            }
        };
        if let Err(e) = for_each_page(path, limits, inventory, visit, |_| {}) {
            failure.get_or_insert(format!("{}: {e}", path.display()));
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let rows = part.rows;
    part.finish()?;
    Ok(rows)
}

pub fn run(args: &ScoreArgs) -> Result<ExitCode, String> {
    let model = Arc::new(load_model(args.model.as_deref())?);
    let config = args.cluster.config()?;
    let all = Arc::new(files::collect(&args.paths)?);
    if args.cluster.is_first_process() {
        crate::site::clear_tables(&args.out, &["node_scores"])?;
    }
    let (out, limits) = (args.out.clone(), args.limits.limits());
    let start = Instant::now();
    let guards = timely::execute(config, move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mine: Vec<&PathBuf> = all.iter().skip(index).step_by(peers).collect();
        let mut inventory = Inventory::default();
        let rows = score_files(&mine, &out, index, &model, &limits, &mut inventory);
        rows.map(|rows| (rows, inventory))
    })?;
    let (mut rows, mut inventory) = (0u64, Inventory::default());
    for result in guards.join() {
        let (r, i) = result.map_err(|e| format!("worker failed: {e}"))??;
        rows += r;
        inventory.merge(&i);
    }
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "scored {} pages of {} files: {rows} nodes in {seconds:.1} s ({:.1} MB/s of WARC) -> {}",
        inventory.by_outcome.get("page").copied().unwrap_or(0),
        inventory.files,
        inventory.warc_bytes as f64 / 1e6 / seconds.max(1e-9),
        args.out.join("node_scores").display()
    );
    Ok(ExitCode::SUCCESS)
}
