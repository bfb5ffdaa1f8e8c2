//! `stencil show`: one page's sections drawn on a safe copy of it (`operators::overlay`), to
//! look at in a browser what the page-level stages made of a page.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use stencil_operators::overlay::{self, Calls, Kind};
use stencil_operators::reading::page::{to_page, Outcome};
use stencil_operators::reading::warc::{self, Limits, Record};

use super::args::PageArgs;
use super::clean::{analyse_page, read_page, Analysed, Html, Setup};
use crate::tables;

#[derive(Args)]
pub struct ShowArgs {
    /// An HTML file (gzipped or not, - for standard input), or a WARC file (.warc, .warc.gz)
    /// with --url naming the page. Without it, --run and --url find the page.
    #[arg(required_unless_present = "run")]
    pub page: Option<PathBuf>,
    /// The page's URL: in a WARC file, the record to show (the first HTML page when absent);
    /// with --run, the row of `pages` to show; for an HTML file, what its links are made
    /// absolute against (and what the features read, as for `clean`).
    #[arg(long)]
    pub url: Option<String>,
    /// An earlier run's output folder: the page is the record its `pages` row points at
    /// (warc_file, warc_offset), scored with the run's OUT/model.json unless --model is given.
    #[arg(long, value_name = "OUT", requires = "url", conflicts_with = "page")]
    pub run: Option<PathBuf>,
    /// In a WARC file, start looking for the record at this byte offset (a `pages` row's
    /// warc_offset).
    #[arg(long, default_value_t = 0)]
    pub offset: u64,
    /// Write the HTML here instead of to standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A model.json; the shipped model when absent (with --run, the run's own model).
    #[arg(long)]
    pub model: Option<PathBuf>,
    #[command(flatten)]
    pub page_args: PageArgs,
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
}

/// The page to show, read from wherever the arguments say it is.
struct Found {
    html: Page,
    url: String,
    source: String,
}

enum Page {
    Bytes(Vec<u8>),
    Decoded(String),
}

pub fn run(args: &ShowArgs) -> Result<ExitCode, String> {
    let limits = args.limits.limits();
    let found = find_page(args, &limits)?;
    let model_path = match (&args.model, &args.run) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(out)) => Some(out.join("model.json")).filter(|p| p.exists()),
        (None, None) => None,
    };
    let setup = Setup::new(model_path.as_deref(), &args.page_args, limits)?;
    let options = args.page_args.options()?;
    let html = match &found.html {
        Page::Bytes(bytes) => Html::Bytes(bytes),
        Page::Decoded(text) => Html::Decoded(text),
    };
    let Analysed { dom, analysis, .. } =
        analyse_page(html, (&found.url, &found.source), &setup, options, None)?;
    let judgement = &analysis.judgement;
    let calls = Calls {
        sections: &analysis.segmentation.sections,
        scores: &analysis.scores,
        smoothed: &analysis.segmentation.smoothed,
        template: &analysis.template,
        block_owners: &judgement.blocks.owners,
        block_content: &judgement.content,
    };
    let outlines = overlay::outlines(&dom, &calls);
    let base = url::Url::parse(&found.url).ok();
    let heading = if found.url.is_empty() {
        found.source.clone()
    } else {
        found.url.clone()
    };
    let mut html = Vec::new();
    overlay::write(&dom, &outlines, base.as_ref(), &heading, &mut html)
        .map_err(|e| format!("writing the overlay: {e}"))?;
    let counts: Vec<String> = Kind::ALL
        .iter()
        .map(|&kind| {
            let n = outlines.iter().filter(|o| o.kind == kind).count();
            format!("{n} {}", kind.as_str())
        })
        .collect();
    match &args.output {
        Some(path) => {
            std::fs::write(path, &html).map_err(|e| format!("{}: {e}", path.display()))?;
            eprintln!(
                "{heading}: {} sections ({}) drawn in {}",
                outlines.len(),
                counts.join(", "),
                path.display()
            );
        }
        None => match std::io::stdout().lock().write_all(&html) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => return Err(format!("stdout: {e}")),
        },
    }
    Ok(ExitCode::SUCCESS)
}

fn find_page(args: &ShowArgs, limits: &Limits) -> Result<Found, String> {
    if let Some(out) = &args.run {
        // `requires = "url"` makes clap insist on it.
        let url = args.url.clone().unwrap_or_default();
        let (file, offset) = row_of(out, &url)?;
        let path = warc_path(out, &file);
        return from_warc(&path, offset, Some(&url), limits);
    }
    let Some(page) = &args.page else {
        return Err("give a page, or --run OUT with --url".to_string());
    };
    if page.as_os_str() != "-" && is_warc(page)? {
        return from_warc(page, args.offset, args.url.as_deref(), limits);
    }
    Ok(Found {
        html: Page::Bytes(read_page(page, limits)?),
        url: args.url.clone().unwrap_or_default(),
        source: page.display().to_string(),
    })
}

/// Whether a file is a WARC file, by its first bytes (after gzip's, for .warc.gz).
fn is_warc(path: &Path) -> Result<bool, String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(512).read_to_end(&mut head))
        .map_err(fail)?;
    let mut start = Vec::new();
    if warc::detect_compression(&head) == warc::Compression::Gzip {
        // A gzip member cut at 512 bytes still yields its first bytes; the error after is
        // expected.
        let _ = flate2::read::GzDecoder::new(&head[..])
            .take(5)
            .read_to_end(&mut start);
    } else {
        start = head;
    }
    Ok(start.starts_with(b"WARC/"))
}

/// The record at `offset` on (the first HTML page, or the one whose target is `url`) as a
/// decoded page.
fn from_warc(
    path: &Path,
    offset: u64,
    url: Option<&str>,
    limits: &Limits,
) -> Result<Found, String> {
    let is_html = |record: &Record| match url {
        Some(url) => record.head.target_uri.as_deref() == Some(url),
        None => record.head.record_type == warc::RecordType::Response,
    };
    let record = warc::find_from(path, offset, limits, is_html)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .ok_or_else(|| match url {
            Some(url) => format!(
                "{}: no record of {url} from offset {offset}",
                path.display()
            ),
            None => format!(
                "{}: no response record from offset {offset}",
                path.display()
            ),
        })?;
    let source = format!("{}@{}", path.display(), record.head.position.offset);
    match to_page(record, limits).1 {
        Outcome::Page(page) => Ok(Found {
            html: Page::Decoded(page.html),
            url: page.url,
            source,
        }),
        Outcome::Skipped { reason, detail } => Err(format!(
            "{source}: not a page ({}: {detail})",
            reason.as_str()
        )),
        Outcome::Error { kind, detail } => Err(format!("{source}: {kind}: {detail}")),
    }
}

/// A run's `warc_file` is the input as given on its command line: as it is when that path is
/// there, else beside the run's output folder.
fn warc_path(out: &Path, file: &str) -> PathBuf {
    let given = PathBuf::from(file);
    if given.exists() || given.is_absolute() {
        return given;
    }
    match out.parent() {
        Some(parent) if parent.join(&given).exists() => parent.join(given),
        _ => given,
    }
}

/// The `warc_file` and `warc_offset` of the `pages` row of `url` in the run in `out`.
fn row_of(out: &Path, url: &str) -> Result<(String, u64), String> {
    use arrow_array::{Array, StringArray, UInt64Array};
    use std::ops::ControlFlow;
    let table = out.join("pages");
    let mut found = None;
    let parts = tables::each_batch(&table, &["url", "warc_file", "warc_offset"], |batch| {
        let urls = tables::column::<StringArray>(batch, "url")?;
        let files = tables::column::<StringArray>(batch, "warc_file")?;
        let offsets = tables::column::<UInt64Array>(batch, "warc_offset")?;
        found = (0..batch.num_rows())
            .find(|&row| !urls.is_null(row) && urls.value(row) == url)
            .map(|row| (files.value(row).to_string(), offsets.value(row)));
        Ok(match found {
            Some(_) => ControlFlow::Break(()),
            None => ControlFlow::Continue(()),
        })
    })?;
    if parts.is_none() {
        return Err(format!("{}: no pages table", table.display()));
    }
    found.ok_or_else(|| format!("{}: no page {url}", table.display()))
}
