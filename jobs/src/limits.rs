//! The per-record limits every command that reads WARC files takes as flags (`--max-page-bytes`,
//! `--max-decompression-ratio`, `--max-dom-depth`); a module of their own so that every
//! command can flatten them in without depending on the command line's root.

use clap::Args;
use stencil_operators::reading::warc::Limits;

#[derive(Args)]
pub struct LimitArgs {
    /// Page bodies longer than this many bytes are truncated (and flagged).
    #[arg(long, default_value_t = Limits::default().max_page_bytes)]
    max_page_bytes: usize,
    /// Content-Encoding may expand a body at most this many times (1 MiB floor).
    #[arg(long, default_value_t = Limits::default().max_decompression_ratio)]
    max_decompression_ratio: usize,
    /// Parsing stops (page flagged) past this element depth.
    #[arg(long, default_value_t = Limits::default().max_dom_depth)]
    max_dom_depth: usize,
}

impl LimitArgs {
    /// The flags' defaults, for callers that build the arguments in code.
    pub fn defaults() -> Self {
        let d = Limits::default();
        LimitArgs {
            max_page_bytes: d.max_page_bytes,
            max_decompression_ratio: d.max_decompression_ratio,
            max_dom_depth: d.max_dom_depth,
        }
    }

    pub fn limits(&self) -> Limits {
        Limits {
            max_page_bytes: self.max_page_bytes,
            max_decompression_ratio: self.max_decompression_ratio,
            max_dom_depth: self.max_dom_depth,
        }
    }
}
