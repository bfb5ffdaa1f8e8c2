//! `stencil synth` and `stencil demo`: a synthetic crawl written as a Common-Crawl-style WARC
//! with its gold, and the one-command tour that generates one, inspects it and finds its
//! site-level templates.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use stencil_operators::reading::warc::write::{http_response, NewRecord, WarcWriter};
use stencil_operators::synth;

use stencil_operators::page_models::model::FitParams;
use stencil_operators::site::site_level::Params;

use crate::fit::FitArgs;
use crate::limits::LimitArgs;
use crate::smoothing::SmoothingArgs;
use crate::{run, site};

#[derive(Args)]
pub struct SynthArgs {
    #[arg(long, default_value_t = 20)]
    hosts: usize,
    /// Pages per host.
    #[arg(long, default_value_t = 30)]
    pages: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write each host's home page and the section pages its menu links to (what
    /// `--method etdm` needs to find a host's template without falling back).
    #[arg(long)]
    menu_pages: bool,
    /// Night N of a crawl that fetches the same pages every night while every third host
    /// changes its cookie bar and sidebar, a different third each night from night 2 on (for
    /// `run --state` and its `template_changes`; night 1 is the plain crawl).
    #[arg(long, conflicts_with = "menu_pages", value_parser = clap::value_parser!(u32).range(1..))]
    night: Option<u32>,
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
pub struct DemoArgs {
    /// Where the synthetic crawl is written.
    #[arg(long, default_value = "stencil-demo")]
    dir: PathBuf,
}

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
pub fn write(
    out: &Path,
    hosts: usize,
    pages: usize,
    seed: u64,
    menu_pages: bool,
    night: Option<u32>,
) -> Result<usize, String> {
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
    let crawl = match (menu_pages, night) {
        (true, _) => synth::crawl_with_menu_pages(hosts, pages, seed),
        (false, Some(night)) => synth::nightly_crawl(hosts, pages, seed, night),
        (false, None) => synth::crawl(hosts, pages, seed),
    };
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
    let written = write(
        &args.out,
        args.hosts,
        args.pages,
        args.seed,
        args.menu_pages,
        args.night,
    )?;
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
    let written = write(&crawl, 20, 30, 1, false, None)?;
    println!(
        "generated {written} pages of 20 hosts: {} (gold: {})\n",
        crawl.display(),
        gold_path(&crawl).display()
    );
    let out = args.dir.join("out");
    println!(
        "stencil run on 2 workers: site-level templates, a classifier trained on their labels \
         and broadcast, every page scored, smoothed and cleaned:"
    );
    let code = run::run(&run::RunArgs {
        site: site::SiteArgs {
            paths: vec![crawl],
            out: out.clone(),
            labels: site::LabelArg::Paper,
            theta: Params::default().theta,
            min_host_pages: Params::default().min_host_pages,
            host_sample: Params::default().host_sample,
            method: site::MethodArg::SiteLevel,
            sample_pages: stencil_operators::site::rtdm_template::DEFAULT_SAMPLE_PAGES,
            min_cluster_pages: stencil_operators::site::clusters::DEFAULT_MIN_CLUSTER_PAGES,
            template_sample: stencil_operators::site::tree_regex::DEFAULT_TEMPLATE_SAMPLE,
            cs_size: 3,
            cs_threshold: 2,
            no_training: false,
            cluster: crate::cluster::ClusterArgs {
                workers: 2,
                processes: 1,
                process: 0,
                hostfile: None,
                connect_timeout: crate::cluster::CONNECT_TIMEOUT,
            },
            limits: LimitArgs::defaults(),
        },
        model: None,
        min_training_hosts: run::MIN_TRAINING_HOSTS,
        fit: FitArgs {
            sample_cap: 20_000,
            l2: FitParams::default().l2,
            folds: FitParams::default().folds,
        },
        page: run::PageArgs {
            smoothing: SmoothingArgs::defaults(),
            site_weight: run::DEFAULT_SITE_WEIGHT,
            basic: false,
            hidden_threshold: run::DEFAULT_HIDDEN_THRESHOLD,
            content_model: None,
            cleaned_text: run::page::CleanedFrom::Content,
            no_markdown: false,
            links: false,
            images: false,
        },
        memory_budget: None,
        spill_dir: None,
        all_training_rows: false,
        state: None,
        state_max_age: None,
        resume: false,
    })?;
    print_findings(&out)?;
    println!(
        "\ntables: {}/{{pages,hosts,segments,site_templates,training,records}}/part-*.parquet, \
         {}/run.json and {}/model.json",
        out.display(),
        out.display(),
        out.display()
    );
    Ok(code)
}

/// What the demo found, read back from its tables: templated shares per host and one page's
/// cleaned text.
fn print_findings(out: &Path) -> Result<(), String> {
    use arrow_array::{Array, Float64Array, StringArray};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let read = |table: &str| -> Result<Vec<arrow_array::RecordBatch>, String> {
        let mut batches = Vec::new();
        let dir = out.join(table);
        let mut parts: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .collect();
        parts.sort();
        for part in parts {
            let file = File::open(&part).map_err(|e| format!("{}: {e}", part.display()))?;
            let reader = ParquetRecordBatchReaderBuilder::try_new(file)
                .and_then(|b| b.build())
                .map_err(|e| format!("{}: {e}", part.display()))?;
            for batch in reader {
                batches.push(batch.map_err(|e| e.to_string())?);
            }
        }
        Ok(batches)
    };
    let mut hosts: Vec<(String, f64, f64)> = Vec::new();
    for batch in read("hosts")? {
        let names = batch
            .column_by_name("host")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned());
        let page = batch
            .column_by_name("mean_template_text_fraction")
            .and_then(|c| c.as_any().downcast_ref::<Float64Array>().cloned());
        let site = batch
            .column_by_name("mean_site_template_text_fraction")
            .and_then(|c| c.as_any().downcast_ref::<Float64Array>().cloned());
        if let (Some(names), Some(page), Some(site)) = (names, page, site) {
            for row in 0..batch.num_rows() {
                hosts.push((
                    names.value(row).to_string(),
                    page.value(row),
                    site.value(row),
                ));
            }
        }
    }
    hosts.sort_by(|a, b| a.0.cmp(&b.0));
    println!("\ntemplated share of visible text, mean over each host's pages (first 5 hosts):");
    println!("  {:<22} {:>10} {:>10}", "host", "page-level", "site-level");
    for (host, page, site) in hosts.iter().take(5) {
        println!("  {host:<22} {:>9.1}% {:>9.1}%", page * 100.0, site * 100.0);
    }
    for batch in read("pages")?.iter().take(1) {
        let urls = batch
            .column_by_name("url")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned());
        let texts = batch
            .column_by_name("cleaned_text")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned());
        if let (Some(urls), Some(texts)) = (urls, texts) {
            if texts.len() > 0 {
                println!("\ncleaned text of {} (first lines):", urls.value(0));
                for line in texts.value(0).lines().take(6) {
                    let cut: String = line.chars().take(100).collect();
                    println!("  {cut}{}", if cut.len() < line.len() { "…" } else { "" });
                }
            }
        }
    }
    Ok(())
}
