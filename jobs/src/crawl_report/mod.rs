//! `stencil report OUT`: one self-contained HTML page of charts over a run's tables (`pages`,
//! `hosts`, `records`, `run.json`, and with `--state DIR` the state's nights).
//!
//! The tables are streamed batch by batch, each read with only the columns a chart needs, into
//! the bounded aggregates of [`figures`]; [`charts`] draws them as inline SVG with plotters and
//! [`page`] lays out the HTML. The page has no script and names no URL, so it opens the same
//! offline; its size does not grow with the crawl (the charts hold bins and a top list, not
//! rows).

mod charts;
mod figures;
mod page;

use std::ops::ControlFlow::Continue;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use arrow_array::{Array, BooleanArray, Float64Array, StringArray};
use arrow_array::{UInt32Array, UInt64Array};
use clap::Args;

use crate::tables::{column, each_batch};

use figures::{HostFigures, Night, Outcomes, PageFigures, PageRow};

#[derive(Args)]
pub struct ReportArgs {
    /// The output folder of `stencil run` or `stencil apply` (its `pages` table is required;
    /// `hosts`, `records` and `run.json` are charted where present).
    out: PathBuf,
    /// The state folder of `run --state`: adds templated share over the nights it keeps.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Where to write the page (default: OUT/report.html).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Hosts in the chart of the hosts with the most template text.
    #[arg(long, default_value_t = 15)]
    top_hosts: usize,
}

pub fn run(args: &ReportArgs) -> Result<ExitCode, String> {
    let report = read(&args.out, args.state.as_deref())?;
    let html = page::render(&report, args.top_hosts.clamp(1, 100))?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.out.join("report.html"));
    let partial = output.with_extension("html.partial");
    std::fs::write(&partial, &html).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, &output).map_err(|e| format!("{}: {e}", output.display()))?;
    eprintln!(
        "report of {} pages, {} hosts, {} records ({} kB) -> {}",
        report.pages.pages,
        report.hosts.hosts,
        report.outcomes.records,
        html.len().div_ceil(1000),
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Everything the page shows, read from the folders.
pub struct Report {
    pub out: PathBuf,
    pub pages: PageFigures,
    pub hosts: HostFigures,
    /// Whether OUT has a `hosts` table (`records` below alike).
    pub has_hosts: bool,
    pub outcomes: Outcomes,
    pub has_records: bool,
    /// `run.json`, or why it could not be read.
    pub run_json: Result<serde_json::Value, String>,
    /// With `--state`: the nights of the generations the state keeps, in order.
    pub nights: Option<Vec<Night>>,
}

fn read(out: &Path, state: Option<&Path>) -> Result<Report, String> {
    let mut pages = PageFigures::default();
    let found = each_batch(
        &out.join("pages"),
        &[
            "host",
            "html_bytes",
            "text_chars",
            "template_text_fraction",
            "site_template_text_fraction",
        ],
        |batch| {
            let host = column::<StringArray>(batch, "host")?;
            let bytes = column::<UInt64Array>(batch, "html_bytes")?;
            let chars = column::<UInt32Array>(batch, "text_chars")?;
            let page_share = column::<Float64Array>(batch, "template_text_fraction")?;
            let site_share = column::<Float64Array>(batch, "site_template_text_fraction")?;
            for i in 0..batch.num_rows() {
                pages.add(PageRow {
                    host: if host.is_null(i) { "" } else { host.value(i) },
                    html_bytes: bytes.value(i),
                    text_chars: chars.value(i),
                    page_share: value(page_share, i),
                    site_share: value(site_share, i),
                });
            }
            Ok(Continue(()))
        },
    )?
    .is_some();
    if !found {
        return Err(format!(
            "{}: no pages table (OUT must be the output folder of `stencil run` or `stencil \
             apply`)",
            out.join("pages").display()
        ));
    }
    let mut hosts = HostFigures::default();
    let has_hosts = each_batch(
        &out.join("hosts"),
        &["site_level", "mean_templated_fraction"],
        |batch| {
            let site_level = column::<BooleanArray>(batch, "site_level")?;
            let share = column::<Float64Array>(batch, "mean_templated_fraction")?;
            for i in 0..batch.num_rows() {
                hosts.add(
                    site_level.is_valid(i) && site_level.value(i),
                    value(share, i),
                );
            }
            Ok(Continue(()))
        },
    )?
    .is_some();
    let mut outcomes = Outcomes::default();
    let has_records = each_batch(&out.join("records"), &["outcome", "reason"], |batch| {
        let outcome = column::<StringArray>(batch, "outcome")?;
        let reason = column::<StringArray>(batch, "reason")?;
        for i in 0..batch.num_rows() {
            let of = if outcome.is_null(i) {
                "unknown"
            } else {
                outcome.value(i)
            };
            outcomes.add(of, reason.is_valid(i).then(|| reason.value(i)));
        }
        Ok(Continue(()))
    })?
    .is_some();
    let run_path = out.join("run.json");
    let run_json = std::fs::read_to_string(&run_path)
        .map_err(|e| format!("{}: {e}", run_path.display()))
        .and_then(|text| {
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", run_path.display()))
        });
    let nights = state.map(read_nights).transpose()?;
    Ok(Report {
        out: out.to_path_buf(),
        pages,
        hosts,
        has_hosts,
        outcomes,
        has_records,
        run_json,
        nights,
    })
}

/// The nights of the generations a state folder holds (`night-NNNNNN/` with a `state.json`;
/// a night keeps its own generation and the one it built on), each from its `hosts` table:
/// the hosts whose last night it is had pages that night, with that night's templated share.
fn read_nights(state: &Path) -> Result<Vec<Night>, String> {
    let entries = std::fs::read_dir(state).map_err(|e| format!("{}: {e}", state.display()))?;
    let mut generations: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("night-"))
                && p.join("state.json").is_file()
        })
        .collect();
    generations.sort();
    let mut nights = Vec::new();
    for generation in generations {
        let manifest = generation.join("state.json");
        let text = std::fs::read_to_string(&manifest)
            .map_err(|e| format!("{}: {e}", manifest.display()))?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", manifest.display()))?;
        let number = json
            .get("night")
            .and_then(|n| n.as_u64())
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{}: no night number", manifest.display()))?;
        let mut night = Night::new(number);
        each_batch(
            &generation.join("hosts"),
            &["last_night", "templated_fraction"],
            |batch| {
                let last = column::<UInt32Array>(batch, "last_night")?;
                let share = column::<Float64Array>(batch, "templated_fraction")?;
                for i in 0..batch.num_rows() {
                    night.add(last.value(i), value(share, i));
                }
                Ok(Continue(()))
            },
        )?;
        nights.push(night);
    }
    if nights.is_empty() {
        return Err(format!(
            "{}: no state generation (night-NNNNNN/state.json)",
            state.display()
        ));
    }
    nights.sort_by_key(|n| n.night);
    Ok(nights)
}

fn value(column: &Float64Array, row: usize) -> Option<f64> {
    column.is_valid(row).then(|| column.value(row))
}
