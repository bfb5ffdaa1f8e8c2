//! `stencil inspect`: files split over worker threads, each counted by
//! `inventory::inspect_file`, the inventories merged and printed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

use clap::Args;
use serde::Serialize;
use stencil_operators::inventory::{inspect_file, Inventory};

use crate::files;
use crate::limits::LimitArgs;
use crate::progress::Reporter;

#[derive(Args)]
pub struct InspectArgs {
    /// WARC files (.warc, .warc.gz) or directories holding them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Worker threads; files are split over them.
    #[arg(short = 'w', long, default_value_t = 1)]
    workers: usize,
    /// Print the inventory as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Only read and decode records; do not parse HTML.
    #[arg(long)]
    no_parse: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(Serialize)]
struct Report<'a> {
    inventory: &'a Inventory,
    seconds: f64,
    workers: usize,
    input_mb_per_s: f64,
    html_mb_per_s: f64,
    pages_per_s: f64,
    failed_files: &'a [(String, String)],
}

pub fn run(args: &InspectArgs) -> Result<ExitCode, String> {
    let files = files::collect(&args.paths)?;
    let limits = args.limits.limits();
    let workers = args.workers.max(1);
    let total_bytes = files
        .iter()
        .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
        .sum();
    let start = Instant::now();
    let reporter = Reporter::start(total_bytes);
    let counters = reporter.counters();

    // Worker w takes files w, w + workers, ...: deterministic, and the merge is
    // order-independent, so the inventory does not depend on the number of workers.
    let results: Vec<(Inventory, Vec<(String, String)>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let mine: Vec<&PathBuf> = files.iter().skip(w).step_by(workers).collect();
                let limits = &limits;
                scope.spawn(move || {
                    let mut inventory = Inventory::default();
                    let mut failed = Vec::new();
                    for path in mine {
                        let mut last = Default::default();
                        let outcome = inspect_file(path, limits, !args.no_parse, |p| {
                            let last: &mut stencil_operators::inventory::Progress = &mut last;
                            counters
                                .input_bytes
                                .fetch_add(p.offset.saturating_sub(last.offset), Ordering::Relaxed);
                            counters
                                .pages
                                .fetch_add(p.pages - last.pages, Ordering::Relaxed);
                            counters
                                .html_bytes
                                .fetch_add(p.html_bytes - last.html_bytes, Ordering::Relaxed);
                            *last = p;
                        });
                        match outcome {
                            Ok(found) => inventory.merge(&found),
                            Err(e) => {
                                tracing::error!("{}: {e}", path.display());
                                failed.push((path.display().to_string(), e.to_string()));
                            }
                        }
                    }
                    (inventory, failed)
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    drop(reporter);
    if results.len() != workers {
        return Err("a worker thread panicked".to_string());
    }
    let mut inventory = Inventory::default();
    let mut failed = Vec::new();
    for (part, part_failed) in &results {
        inventory.merge(part);
        failed.extend(part_failed.iter().cloned());
    }
    failed.sort();
    let report = Report {
        inventory: &inventory,
        seconds,
        workers,
        input_mb_per_s: inventory.input_bytes as f64 / seconds / 1e6,
        html_mb_per_s: inventory.html_bytes as f64 / seconds / 1e6,
        pages_per_s: inventory.pages as f64 / seconds,
        failed_files: &failed,
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", render(&report, !args.no_parse));
    }
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn counts(map: &BTreeMap<String, u64>, most: usize) -> String {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut out: Vec<String> = entries
        .iter()
        .take(most)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if entries.len() > most {
        let rest: u64 = entries[most..].iter().map(|(_, v)| **v).sum();
        out.push(format!("({} more) {rest}", entries.len() - most));
    }
    if out.is_empty() {
        "-".to_string()
    } else {
        out.join(", ")
    }
}

fn render(report: &Report<'_>, parsed: bool) -> String {
    let inv = report.inventory;
    let mut s = String::new();
    let mb = |b: u64| b as f64 / 1e6;
    let _ = writeln!(
        s,
        "files            {} ({:.1} MB read, {:.1} MB of WARC)",
        inv.files,
        mb(inv.input_bytes),
        mb(inv.warc_bytes)
    );
    let _ = writeln!(
        s,
        "records          {} framed, {} unreadable stretches",
        inv.records, inv.read_errors
    );
    let _ = writeln!(s, "  by type        {}", counts(&inv.by_record_type, 10));
    let _ = writeln!(s, "  HTTP status    {}", counts(&inv.by_http_status, 10));
    let _ = writeln!(s, "  content type   {}", counts(&inv.by_mime_type, 8));
    let _ = writeln!(s, "outcomes         {}", counts(&inv.by_outcome, 3));
    let _ = writeln!(s, "  skipped        {}", counts(&inv.skipped_by_reason, 10));
    let _ = writeln!(s, "  errors         {}", counts(&inv.errors_by_kind, 10));
    let _ = writeln!(
        s,
        "pages            {} ({:.1} MB of HTML)",
        inv.pages,
        mb(inv.html_bytes)
    );
    let _ = writeln!(s, "  charset        {}", counts(&inv.by_charset, 8));
    let _ = writeln!(s, "  charset from   {}", counts(&inv.by_charset_source, 4));
    let _ = writeln!(
        s,
        "  truncated      {}",
        counts(&inv.truncated_by_reason, 6)
    );
    if parsed {
        let per_page = inv.dom_nodes.checked_div(inv.pages).unwrap_or(0);
        let _ = writeln!(
            s,
            "  DOM nodes      {} ({per_page} per page)",
            inv.dom_nodes
        );
    }
    let _ = writeln!(
        s,
        "time             {:.2} s on {} worker(s): {:.1} MB/s input, {:.1} MB/s HTML, {:.0} pages/s",
        report.seconds, report.workers, report.input_mb_per_s, report.html_mb_per_s, report.pages_per_s
    );
    for (file, why) in report.failed_files {
        let _ = writeln!(s, "FAILED           {file}: {why}");
    }
    s
}
