//! One page at a time, for the Python package (`python/`): the text `stencil clean` prints,
//! with the models and an earlier run's site templates read once, so that each call costs
//! only the page.
//!
//! The settings are `stencil clean`'s flags, parsed by the same definitions
//! ([`PageArgs`], [`LimitArgs`]): whatever a flag means on the command line it means here, and
//! its default is the same.

use std::collections::HashMap;
use std::path::Path;

use clap::Parser;
use stencil_operators::site::site_level::{site_of, HostModel};

use crate::limits::LimitArgs;
use crate::run::clean::{analyse_page, host_of, html_of, printed, Html, Setup};
use crate::run::page::Options;
use crate::run::PageArgs;

pub use crate::run::clean::Format;

/// `stencil clean`'s page settings, parsed from its flags.
#[derive(Parser)]
#[command(name = "settings", no_binary_name = true)]
struct Settings {
    #[command(flatten)]
    page: PageArgs,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Cleans pages with one model, one main-content model and, optionally, the site templates of
/// an earlier `run` (a page of a host with templates gets their evidence, as with `apply
/// --site-templates`). Shared between threads: cleaning takes `&self`.
pub struct Cleaner {
    setup: Setup,
    /// The page settings with the Markdown made (`--format markdown` and `json`).
    markdown: Options,
    /// The same without it, for the plain text (as `stencil clean` does).
    text: Options,
    sites: HashMap<String, HostModel>,
}

impl Cleaner {
    /// `model`: a model.json (the shipped model when `None`); `site_templates`: the output
    /// folder of an earlier `run` or `site`; `flags`: more of `stencil clean`'s flags
    /// (`--links`, `--cleaned-text template`, …). Errors are the command line's messages.
    pub fn new(
        model: Option<&Path>,
        site_templates: Option<&Path>,
        flags: &[String],
    ) -> Result<Cleaner, String> {
        let settings = Settings::try_parse_from(flags).map_err(|e| e.to_string())?;
        let limits = settings.limits.limits();
        let mut page = settings.page;
        page.no_markdown = false;
        let markdown = page.options()?;
        let text = Options {
            markdown: None,
            ..markdown
        };
        let setup = Setup::new(model, &page, limits)?;
        let sites = match site_templates {
            Some(dir) => crate::run::load_site_templates(dir)?,
            None => HashMap::new(),
        };
        Ok(Cleaner {
            setup,
            markdown,
            text,
            sites,
        })
    }

    /// The hosts with site templates.
    pub fn site_hosts(&self) -> usize {
        self.sites.len()
    }

    /// What `stencil clean --format FORMAT --url URL` prints for a page, without the newline it
    /// ends its output with. `html` is the page's bytes, decoded as the command decodes them
    /// (a gzip file is decompressed; `<meta>` charset, byte order mark, sniffing), or text
    /// already decoded. An error names `url` (or "page").
    pub fn clean(&self, html: Page<'_>, url: &str, format: Format) -> Result<String, String> {
        let options = match format {
            Format::Text => self.text,
            Format::Markdown | Format::Json => self.markdown,
        };
        let setup = &self.setup;
        let source = if url.is_empty() { "page" } else { url };
        let site = self.sites.get(site_of(&host_of(url)));
        let analysed = match html {
            Page::Bytes(bytes) => {
                let bytes = html_of(bytes.to_vec(), source, &setup.limits)?;
                analyse_page(Html::Bytes(&bytes), (url, source), setup, options, site)?
            }
            Page::Text(text) => {
                analyse_page(Html::Decoded(text), (url, source), setup, options, site)?
            }
        };
        Ok(printed(analysed, url, format))
    }
}

/// A page as the caller has it.
pub enum Page<'a> {
    /// Bytes as fetched or stored (gzip allowed).
    Bytes(&'a [u8]),
    /// Text already decoded.
    Text(&'a str),
}
