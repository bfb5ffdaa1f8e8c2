//! `stencil bench`: single-thread throughput of each stage, in MB/s of HTML, so the figures
//! in docs/benchmarks.md can be reproduced with one command. Each stage runs over all pages
//! held in memory (except framing, which reads the files), `rounds` times; the fastest round
//! counts, to keep disk cache and frequency noise out.

use std::process::ExitCode;
use std::time::Instant;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use stencil_operators::page::{to_page, Outcome, Page};
use stencil_operators::warc::{self, ReadItem, Record};
use stencil_operators::{dom, features, subtree};

use crate::{files, BenchArgs};

/// The tokenizer floor: tokens are produced and dropped.
struct DiscardTokens;

impl TokenSink for DiscardTokens {
    type Handle = ();
    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        std::hint::black_box(&token);
        TokenSinkResult::Continue
    }
}

fn best_of<T>(rounds: usize, mut stage: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        let out = stage();
        best = best.min(start.elapsed().as_secs_f64());
        last = Some(out);
    }
    (best, last.expect("at least one round ran"))
}

pub fn run(args: &BenchArgs) -> Result<ExitCode, String> {
    let files = files::collect(&args.paths)?;
    let limits = args.limits.limits();
    let read_all = || -> Result<(Vec<Record>, u64, u64), String> {
        let mut records = Vec::new();
        let (mut compressed, mut warc_bytes) = (0, 0);
        for path in &files {
            let summary = warc::read_file(path, &limits, |item| {
                if let ReadItem::Record(record) = item {
                    records.push(record);
                }
            })
            .map_err(|e| format!("{}: {e}", path.display()))?;
            compressed += summary.compressed_bytes;
            warc_bytes += summary.uncompressed_bytes;
        }
        Ok((records, compressed, warc_bytes))
    };
    let (framing_s, records) = best_of(args.rounds, read_all);
    let (records, compressed, warc_bytes) = records?;
    let record_count = records.len();

    // to_page consumes its record: clone outside the timed part.
    let mut decode_s = f64::INFINITY;
    let mut pages = Vec::new();
    for _ in 0..args.rounds.max(1) {
        let copies = records.clone();
        let start = Instant::now();
        pages = copies
            .into_iter()
            .filter_map(|r| match to_page(r, &limits).1 {
                Outcome::Page(page) => Some(*page),
                _ => None,
            })
            .collect::<Vec<Page>>();
        decode_s = decode_s.min(start.elapsed().as_secs_f64());
    }
    let html_bytes: u64 = pages.iter().map(|p| p.html.len() as u64).sum();

    let (tokenize_s, _) = best_of(args.rounds, || {
        for page in &pages {
            let tokenizer = Tokenizer::new(DiscardTokens, TokenizerOpts::default());
            let input = BufferQueue::default();
            input.push_back(StrTendril::from_slice(&page.html));
            let _ = tokenizer.feed(&input);
            tokenizer.end();
        }
    });
    // Each DOM is dropped after parsing, as in a streaming job: holding thousands of them
    // would measure page faults, not parsing.
    let (parse_s, nodes) = best_of(args.rounds, || {
        pages
            .iter()
            .map(|p| dom::parse(&p.html, limits.max_dom_depth).len())
            .sum::<usize>()
    });
    let doms: Vec<_> = pages
        .iter()
        .map(|p| dom::parse(&p.html, limits.max_dom_depth))
        .collect();
    let (hash_s, _) = best_of(args.rounds, || {
        doms.iter()
            .zip(&pages)
            .map(|(d, p)| subtree::summarize(d, &p.host).len())
            .sum::<usize>()
    });
    // Features and scores need each page's aggregates first: those are computed outside the
    // timed parts, page by page, so the stage times are of features and scoring alone.
    let model = stencil_operators::model::Model::default_model();
    let (mut features_s, mut score_s) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..args.rounds.max(1) {
        let (mut f_s, mut s_s) = (0.0, 0.0);
        for (d, p) in doms.iter().zip(&pages) {
            let sums = subtree::summarize(d, &p.host);
            let start = Instant::now();
            let page_features = features::compute(d, &sums);
            let between = Instant::now();
            let scores = model.score_page(d, &page_features);
            let end = Instant::now();
            std::hint::black_box(scores);
            f_s += (between - start).as_secs_f64();
            s_s += (end - between).as_secs_f64();
        }
        features_s = features_s.min(f_s);
        score_s = score_s.min(s_s);
    }

    let mb = html_bytes as f64 / 1e6;
    let n = pages.len() as f64;
    println!(
        "{} file(s): {:.1} MB read, {:.1} MB WARC, {record_count} records, {} pages, {:.1} MB HTML, {nodes} DOM nodes\n",
        files.len(),
        compressed as f64 / 1e6,
        warc_bytes as f64 / 1e6,
        pages.len(),
        mb
    );
    println!("| stage (one thread) | seconds | MB/s of HTML | pages/s |");
    println!("|---|---:|---:|---:|");
    let row = |name: &str, s: f64| println!("| {name} | {s:.3} | {:.1} | {:.0} |", mb / s, n / s);
    row("gzip + WARC framing", framing_s);
    row("HTTP + charset decoding", decode_s);
    row("html5ever tokenizer alone (floor)", tokenize_s);
    row("HTML → arena (html5ever tree builder)", parse_s);
    row("arena → hashes + aggregates", hash_s);
    row("arena + aggregates → classifier features", features_s);
    row("features → scores (shipped model)", score_s);
    row("parse + hashes", parse_s + hash_s);
    row(
        "parse + hashes + features + scores",
        parse_s + hash_s + features_s + score_s,
    );
    row(
        "all stages",
        framing_s + decode_s + parse_s + hash_s + features_s + score_s,
    );
    println!(
        "\nframing + gzip: {:.1} MB/s of WARC, {:.1} MB/s of compressed input",
        warc_bytes as f64 / 1e6 / framing_s,
        compressed as f64 / 1e6 / framing_s
    );
    println!(
        "features + scoring: {:.1}% of the parse time (html5ever tree builder)",
        100.0 * (features_s + score_s) / parse_s
    );
    Ok(ExitCode::SUCCESS)
}
