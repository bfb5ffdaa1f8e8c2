//! `stencil clean`: the cleaned text of one page, for people who want one page and for
//! side-by-side comparisons with other extractors.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use stencil_operators::contain::contain;
use stencil_operators::dom::subtree::summarize;
use stencil_operators::dom::{metadata, Dom};
use stencil_operators::reading::page::looks_binary;
use stencil_operators::reading::warc::Limits;

use stencil_operators::page_models::content::ContentModel;
use stencil_operators::site::labels::Scheme;
use stencil_operators::site::site_level::{template_roots, HostModel};

use super::args::PageArgs;
use super::page::{Analysis, Options};
use crate::score::Scorer;

#[derive(Args)]
pub struct CleanArgs {
    /// An HTML file (gzipped or not), or - for standard input.
    pub page: PathBuf,
    /// A model.json; the shipped model when absent.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// The page's URL: links to its own host are known by it (a few features read them), and a
    /// forum thread's URL keeps its replies, which would otherwise go as readers' comments.
    #[arg(long, default_value = "")]
    pub url: String,
    /// What to print: the cleaned text (one line per block), the same as Markdown, or a JSON
    /// object with the page's metadata, both texts and its template fractions.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub page_args: PageArgs,
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
}

/// The page's HTML from a file's bytes: gzip (`page.html.gz`, as data sets and saved
/// responses often are) is decompressed, up to the page size limit; bytes that are not text
/// (an image, an archive) are refused with the reason, as `run` skips such records.
pub(crate) fn html_of(bytes: Vec<u8>, source: &str, limits: &Limits) -> Result<Vec<u8>, String> {
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut html = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .take(limits.max_page_bytes as u64)
            .read_to_end(&mut html)
            .map_err(|e| format!("{source}: gzip: {e}"))?;
        html
    } else {
        bytes
    };
    if looks_binary(&bytes) {
        return Err(format!("{source}: not an HTML page (binary bytes)"));
    }
    Ok(bytes)
}

/// A page's HTML as `clean` and `show` take it: bytes to decode, or text already decoded (a
/// WARC record's, decoded as `run` decodes it).
pub(crate) enum Html<'a> {
    Bytes(&'a [u8]),
    Decoded(&'a str),
}

/// A page parsed and analysed: its arena and the page-level stages' results.
pub(crate) struct Analysed {
    pub dom: Dom,
    pub analysis: Analysis,
}

/// The page at `path` (or standard input for `-`), read up to the page size limit and
/// refused when it is not text ([`html_of`]).
pub(crate) fn read_page(path: &Path, limits: &Limits) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let source = path.display().to_string();
    let read = if source == "-" {
        std::io::stdin()
            .lock()
            .take(limits.max_page_bytes as u64)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path)
            .and_then(|f| f.take(limits.max_page_bytes as u64).read_to_end(&mut bytes))
    };
    read.map_err(|e| format!("{source}: {e}"))?;
    html_of(bytes, &source, limits)
}

/// What analysing one page needs, read and checked once: the two models and the limits.
pub(crate) struct Setup {
    pub scorer: Scorer,
    pub content_model: ContentModel,
    pub limits: Limits,
}

impl Setup {
    /// `model` is a model.json, the shipped model when `None`.
    pub fn new(model: Option<&Path>, page_args: &PageArgs, limits: Limits) -> Result<Self, String> {
        Ok(Setup {
            scorer: Scorer {
                model: crate::model_file::load_model(model)?,
                smoothing: page_args.smoothing.smoothing()?,
            },
            content_model: page_args.content_model()?,
            limits,
        })
    }
}

/// The host a page's URL names, lowercased ("" for no URL), as `run` keys hosts.
pub(crate) fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_default()
}

/// Parses and analyses one page as `run` does, with the page settings `options`
/// ([`PageArgs::options`]); `url` is the page's URL ("" when unknown), `source` names it in
/// errors. `site` is its host's site-level templates (`apply --site-templates`), whose blocks
/// count as the site's evidence.
pub(crate) fn analyse_page(
    html: Html<'_>,
    (url, source): (&str, &str),
    setup: &Setup,
    options: Options,
    site: Option<&HostModel>,
) -> Result<Analysed, String> {
    let Setup {
        scorer,
        content_model,
        limits,
    } = setup;
    let host = host_of(url);
    // As in `run`, the page's own work is contained: a bug it triggers is reported as this
    // page's error, not as a crash.
    contain("decode", || {
        let decoded;
        let text = match html {
            Html::Bytes(bytes) => {
                decoded = stencil_operators::reading::charset::decode(bytes, None, None);
                &decoded.text
            }
            Html::Decoded(text) => text,
        };
        crate::crash::enter("parse", url);
        let dom = stencil_operators::dom::parse(text, limits.max_dom_depth);
        crate::crash::enter("hashes", url);
        let sums = summarize(&dom, &host);
        let inside = site.map(|model| {
            crate::crash::enter("labels", url);
            let roots = template_roots(&dom, &sums, model, Scheme::Paper.fingerprints());
            let roots: Vec<u32> = (0..roots.len())
                .filter(|&i| roots[i].is_some())
                .map(|i| i as u32)
                .collect();
            dom.inside_subtrees(&roots)
        });
        let analysis = super::page::analyse(
            (&dom, &sums),
            scorer,
            content_model,
            inside.as_deref(),
            options,
            url,
            None,
        );
        Analysed { dom, analysis }
    })
    .map_err(|panic| {
        format!(
            "{source}: analysing this page failed ({} in {}); please report it with the page",
            panic.message, panic.stage
        )
    })
}

pub fn run(args: &CleanArgs) -> Result<ExitCode, String> {
    let limits = args.limits.limits();
    let bytes = read_page(&args.page, &limits)?;
    let source = args.page.display().to_string();
    // The Markdown is made when it is printed (JSON has it too), whatever --no-markdown says.
    let mut page_args = args.page_args.clone();
    page_args.no_markdown = args.format == Format::Text;
    let setup = Setup::new(args.model.as_deref(), &page_args, limits)?;
    let options = page_args.options()?;
    let analysed = analyse_page(
        Html::Bytes(&bytes),
        (&args.url, &source),
        &setup,
        options,
        None,
    )?;
    let printed = printed(analysed, &args.url, args.format);
    let mut out = std::io::stdout().lock();
    let written = out.write_all(printed.as_bytes()).and_then(|()| {
        if printed.ends_with('\n') || printed.is_empty() {
            Ok(())
        } else {
            out.write_all(b"\n")
        }
    });
    match written {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // A closed pipe (`stencil clean page.html | head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(format!("stdout: {e}")),
    }
}

/// What `clean` prints of an analysed page in `format` (without the final newline it adds).
pub(crate) fn printed(analysed: Analysed, url: &str, format: Format) -> String {
    let Analysed { dom, analysis } = analysed;
    match format {
        Format::Json => page_json(&dom, url, &analysis).to_string(),
        Format::Markdown => analysis.cleaned_markdown.unwrap_or_default(),
        Format::Text => analysis.cleaned_text,
    }
}

/// `clean --format json`: the page's URL, its `<title>` and metadata
/// (`stencil_operators::dom::metadata`), its template and main-content fractions, and both
/// views of its cleaned text, under the names `pages` gives them.
fn page_json(dom: &Dom, url: &str, analysis: &Analysis) -> serde_json::Value {
    let fractions = &analysis.fractions;
    let page = metadata::of_page(dom, url);
    serde_json::json!({
        "url": url,
        "title": dom.title().map(|t| t.split_whitespace().collect::<Vec<_>>().join(" ")),
        "canonical_url": page.canonical_url,
        "page_title": page.title,
        "author": page.author,
        "published": page.published,
        "modified": page.modified,
        "site_name": page.site_name,
        "description": page.description,
        "lang": page.lang,
        "lang_detected": metadata::detected_language(&analysis.cleaned_text),
        "page_type": page.page_type,
        "template_text_fraction": fractions.text,
        "template_anchor_text_fraction": fractions.anchor_text,
        "template_link_fraction": fractions.links,
        "template_html_fraction": fractions.html,
        "main_content_chars": analysis.main_content_chars,
        "cleaned_text": analysis.cleaned_text,
        "cleaned_markdown": analysis.cleaned_markdown,
    })
}
