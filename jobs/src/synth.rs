//! `stencil synth` and `stencil demo`: a synthetic crawl written as a Common-Crawl-style WARC
//! with its gold, and the one-command tour that generates one, inspects it and finds its
//! site-level templates.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use stencil_operators::synth;
use stencil_operators::warc::write::{http_response, NewRecord, WarcWriter};

use stencil_operators::model::FitParams;
use stencil_operators::site_level::Params;

use crate::{inspect, site, train, DemoArgs, InspectArgs, SynthArgs};

/// Where the gold of a crawl written to `out` goes: `crawl.warc.gz` → `crawl.gold.jsonl`.
pub fn gold_path(out: &Path) -> PathBuf {
    let name = out.file_name().and_then(|n| n.to_str()).unwrap_or("crawl");
    let stem = name
        .strip_suffix(".warc.gz")
        .or_else(|| name.strip_suffix(".warc"))
        .unwrap_or(name);
    out.with_file_name(format!("{stem}.gold.jsonl"))
}

/// Writes the crawl to `out` (a temporary name first, renamed when complete) and its gold to
/// [`gold_path`]: one JSON line per page, `{"url": …, "template": ["1/0", …]}`, the element
/// paths of the template blocks (see `stencil_operators::synth::SynthPage::template_paths`).
pub fn write(out: &Path, hosts: usize, pages: usize, seed: u64) -> Result<usize, String> {
    let fail = |e: std::io::Error| format!("{}: {e}", out.display());
    let partial = out.with_extension("partial");
    let mut writer = WarcWriter::new(BufWriter::new(File::create(&partial).map_err(fail)?), true);
    writer
        .write(&NewRecord {
            record_type: "warcinfo",
            target_uri: None,
            date: "2026-01-01T00:00:00Z",
            content_type: "application/warc-fields",
            block: format!(
                "software: stencil synth\r\nhosts: {hosts}\r\npages: {pages}\r\nseed: {seed}\r\n"
            )
            .as_bytes(),
        })
        .map_err(fail)?;
    let crawl = synth::crawl(hosts, pages, seed);
    let gold_out = gold_path(out);
    let gold: String = crawl
        .iter()
        .map(|page| {
            serde_json::json!({"url": page.url, "template": page.template_path_strings()})
                .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(&gold_out, gold).map_err(|e| format!("{}: {e}", gold_out.display()))?;
    for page in &crawl {
        let block = http_response(
            200,
            &[("Content-Type", "text/html; charset=utf-8")],
            page.html.as_bytes(),
        );
        writer
            .write(&NewRecord {
                record_type: "response",
                target_uri: Some(&page.url),
                date: "2026-01-01T00:00:00Z",
                content_type: "application/http; msgtype=response",
                block: &block,
            })
            .map_err(fail)?;
    }
    let mut file = writer.into_inner();
    std::io::Write::flush(&mut file).map_err(fail)?;
    drop(file);
    std::fs::rename(&partial, out).map_err(fail)?;
    Ok(crawl.len())
}

pub fn run(args: &SynthArgs) -> Result<ExitCode, String> {
    let written = write(&args.out, args.hosts, args.pages, args.seed)?;
    eprintln!(
        "wrote {written} pages of {} hosts to {} (gold: {})",
        args.hosts,
        args.out.display(),
        gold_path(&args.out).display()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn demo(args: &DemoArgs) -> Result<ExitCode, String> {
    std::fs::create_dir_all(&args.dir).map_err(|e| format!("{}: {e}", args.dir.display()))?;
    let crawl = args.dir.join("synthetic.warc.gz");
    let written = write(&crawl, 20, 30, 1)?;
    println!(
        "generated {written} pages of 20 hosts: {} (gold: {})\n",
        crawl.display(),
        gold_path(&crawl).display()
    );
    inspect::run(&InspectArgs {
        paths: vec![crawl.clone()],
        workers: 1,
        json: false,
        no_parse: false,
        limits: crate::LimitArgs::defaults(),
    })?;
    let out = args.dir.join("site");
    println!(
        "\nsite-level templates, then the page-level classifier trained on their labels, \
         broadcast and applied to every node (stencil train --score, 2 workers):"
    );
    let code = train::run(&train::TrainArgs {
        site: site::SiteArgs {
            paths: vec![crawl],
            out: out.clone(),
            labels: site::LabelArg::Paper,
            theta: Params::default().theta,
            min_host_pages: Params::default().min_host_pages,
            host_sample: Params::default().host_sample,
            no_training: false,
            cluster: crate::cluster::ClusterArgs {
                workers: 2,
                processes: 1,
                process: 0,
                hostfile: None,
            },
            limits: crate::LimitArgs::defaults(),
        },
        sample_cap: 20_000,
        l2: FitParams::default().l2,
        folds: FitParams::default().folds,
        score: true,
        smoothing: crate::score::SmoothingArgs::defaults(),
    })?;
    println!(
        "tables: {}/{{site_templates,hosts,training,node_scores}}/part-*.parquet and {}/model.json",
        out.display(),
        out.display()
    );
    Ok(code)
}
