//! `stencil synth` and `stencil demo`: a synthetic crawl written as a Common-Crawl-style WARC,
//! and the one-command tour that generates one and inspects it.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::process::ExitCode;

use stencil_operators::synth;
use stencil_operators::warc::write::{http_response, NewRecord, WarcWriter};

use crate::{inspect, DemoArgs, InspectArgs, SynthArgs};

/// Writes the crawl to `out` (a temporary name first, renamed when complete).
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
        "wrote {written} pages of {} hosts to {}",
        args.hosts,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn demo(args: &DemoArgs) -> Result<ExitCode, String> {
    std::fs::create_dir_all(&args.dir).map_err(|e| format!("{}: {e}", args.dir.display()))?;
    let crawl = args.dir.join("synthetic.warc.gz");
    let written = write(&crawl, 20, 30, 1)?;
    println!(
        "generated {written} pages of 20 hosts: {}\n",
        crawl.display()
    );
    inspect::run(&InspectArgs {
        paths: vec![crawl],
        workers: 1,
        json: false,
        no_parse: false,
        limits: crate::LimitArgs::defaults(),
    })
}
