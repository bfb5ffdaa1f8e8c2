//! `stencil bench`: single-thread throughput of each stage, in MB/s of HTML, so the figures
//! in docs/benchmarks.md can be reproduced with one command. Each stage runs over all pages
//! held in memory (except framing, which reads the files), `rounds` times; the fastest round
//! counts, to keep disk cache and frequency noise out.
//!
//! `--smoothing-scaling` adds a size sweep of the smoothing stage on synthetic pages and
//! random trees (`scaling`), written as a TSV for docs/bench/plot_smoothing.py.
//!
//! `--site-methods` adds the site-level methods' detection, removal and memory per host
//! (`site_methods`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use stencil_operators::dom::{self, subtree};
use stencil_operators::page_models::features;
use stencil_operators::page_models::model::Model;
use stencil_operators::reading::page::{to_page, Outcome, Page};
use stencil_operators::reading::warc::{self, ReadItem, Record};
use stencil_operators::smoothing::segmentation::{self, Segmentation};

use crate::files;
use crate::limits::LimitArgs;

mod scaling;
mod site_methods;

#[derive(Args)]
pub struct BenchArgs {
    /// WARC files (.warc, .warc.gz) or directories holding them (optional with
    /// --smoothing-scaling alone).
    #[arg(required_unless_present = "smoothing_scaling")]
    paths: Vec<PathBuf>,
    /// Runs per stage; the fastest is reported.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Also measure how smoothing scales with page size, on synthetic pages and random trees,
    /// and write the measurements to this TSV (plot with docs/bench/plot_smoothing.py).
    #[arg(long, value_name = "OUT.tsv")]
    smoothing_scaling: Option<PathBuf>,
    /// Synthetic pages per size (different seeds) in --smoothing-scaling.
    #[arg(long, default_value_t = 3)]
    scaling_pages: usize,
    /// Largest problem in --smoothing-scaling: synthetic pages up to about this many DOM
    /// nodes, random trees up to this many problem nodes.
    #[arg(long, default_value_t = 1_000_000)]
    scaling_max_nodes: usize,
    /// Also measure the site-level methods side by side: SiteLevel(θ)'s statistics pass and
    /// removal, RTDM-TD's and ETDM's template detection per host and removal per page, and
    /// what each keeps per host. Off by default: their tree mappings add much to the bench's
    /// time (docs/benchmarks.md, "Site-level methods").
    #[arg(long)]
    site_methods: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// html5ever's tokenizer with its tokens dropped: the parse floor with html5ever's tokenizer,
/// for comparison with `dom::parse`'s own.
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
    if !args.paths.is_empty() {
        stages(args)?;
    }
    if let Some(out) = &args.smoothing_scaling {
        if !args.paths.is_empty() {
            println!();
        }
        scaling::smoothing_scaling(args, out)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn stages(args: &BenchArgs) -> Result<(), String> {
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

    // The parse-only floor: `dom::parse`'s tokenizer, tokens dropped.
    let (tokenize_s, _) = best_of(args.rounds, || {
        pages.iter().map(|p| dom::tokenize(&p.html)).sum::<usize>()
    });
    let (html5ever_tokenize_s, _) = best_of(args.rounds, || {
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
    // html5ever's own tree builder instead of `dom::parse`'s: the difference is what ours
    // saves (docs/architecture.md).
    let (standard_parse_s, _) = best_of(args.rounds, || {
        pages
            .iter()
            .map(|p| dom::parse_with_html5ever_tree_builder(&p.html, limits.max_dom_depth).len())
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
    // Features, scores, smoothing and cleaned text need each page's aggregates first: those
    // are computed outside the timed parts, page by page, so each stage's time is of that
    // stage alone (its inputs come from the stage before, as in the job).
    let model = Model::default_model();
    let params = segmentation::Params::default();
    let (mut features_s, mut score_s) = (f64::INFINITY, f64::INFINITY);
    let (mut smooth_s, mut clean_s) = (f64::INFINITY, f64::INFINITY);
    let content_model = stencil_operators::page_models::content::ContentModel::shipped();
    let (mut blocks_s, mut content_features_s, mut trees_s, mut content_clean_s) =
        (f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY);
    // Per page: the fastest smoothing over the rounds, and what the smoothing looked like
    // (the same in every round).
    let mut page_smooth_s = vec![f64::INFINITY; doms.len()];
    let mut page_seg: Vec<SegStats> = Vec::with_capacity(doms.len());
    let mut cleaned_bytes = 0usize;
    for round in 0..args.rounds.max(1) {
        let (mut f_s, mut s_s, mut m_s, mut c_s) = (0.0, 0.0, 0.0, 0.0);
        let (mut b_s, mut cf_s, mut t_s, mut cc_s) = (0.0, 0.0, 0.0, 0.0);
        for (k, (d, p)) in doms.iter().zip(&pages).enumerate() {
            let sums = subtree::summarize(d, &p.host);
            let start = Instant::now();
            // As in the job: the names are read once, here, for both models.
            let names = stencil_operators::page_models::names::of_page(d);
            let page_features = features::compute_with_names(d, &sums, &names);
            let scored = Instant::now();
            let scores = model.score_page(d, &page_features);
            let smoothing = Instant::now();
            let seg = segmentation::segment(d, &scores, &page_features.area, &params);
            let cleaning = Instant::now();
            let text =
                segmentation::cleaned_text(d, &seg.smoothed, segmentation::DEFAULT_THRESHOLD);
            let end = Instant::now();
            f_s += (scored - start).as_secs_f64();
            s_s += (smoothing - scored).as_secs_f64();
            let page_smoothing = (cleaning - smoothing).as_secs_f64();
            m_s += page_smoothing;
            c_s += (end - cleaning).as_secs_f64();
            page_smooth_s[k] = page_smooth_s[k].min(page_smoothing);
            if round == 0 {
                page_seg.push(SegStats::of(&seg));
                cleaned_bytes += text.len();
            }
            std::hint::black_box((scores, seg, text));

            // The main-content model (what `cleaned_text` is made with): blocks, their
            // features, the trees, the calls and the text.
            let start = Instant::now();
            let blocks = stencil_operators::page_models::content::blocks::blocks(d);
            let featured = Instant::now();
            let lexical = content_model.lexicon.scores(&blocks);
            let containers = stencil_operators::page_models::content::containers::scores(
                d,
                &blocks,
                &content_model.containers,
            );
            // As in `content::judge`: read once, for the features and the calls.
            let siblings = stencil_operators::page_models::content::items::Siblings::of(d);
            let context = stencil_operators::page_models::content::Context {
                url: &p.url,
                site_inside: None,
                lexical: Some(&lexical),
                containers: Some(&containers),
                names: Some(&names),
                siblings: Some(&siblings),
            };
            let mut rows = stencil_operators::page_models::content::features::compute(
                d, &sums, &blocks, context,
            );
            let treed = Instant::now();
            let every_block = vec![true; blocks.len()];
            (content_model.kinds).set(&blocks, &every_block, &mut rows, &p.url, &mut None);
            let probability = content_model.probabilities(&rows);
            let cleaning = Instant::now();
            let judgement = stencil_operators::page_models::content::Judgement {
                content: stencil_operators::page_models::content::decide(
                    d,
                    &sums,
                    &blocks,
                    &probability,
                    content_model.threshold,
                    Default::default(),
                    context,
                ),
                blocks,
                probability,
            };
            let text = judgement.cleaned_text(d);
            let end = Instant::now();
            b_s += (featured - start).as_secs_f64();
            cf_s += (treed - featured).as_secs_f64();
            t_s += (cleaning - treed).as_secs_f64();
            cc_s += (end - cleaning).as_secs_f64();
            std::hint::black_box((rows, judgement, text));
        }
        blocks_s = blocks_s.min(b_s);
        content_features_s = content_features_s.min(cf_s);
        trees_s = trees_s.min(t_s);
        content_clean_s = content_clean_s.min(cc_s);
        features_s = features_s.min(f_s);
        score_s = score_s.min(s_s);
        smooth_s = smooth_s.min(m_s);
        clean_s = clean_s.min(c_s);
    }
    // The per-page share of the parse needs each page's own parse time; one parse per page
    // is enough for a distribution (the totals above are the best of `rounds`).
    let page_parse_s: Vec<f64> = pages
        .iter()
        .map(|p| {
            let start = Instant::now();
            let d = dom::parse(&p.html, limits.max_dom_depth);
            let elapsed = start.elapsed().as_secs_f64();
            drop(d);
            elapsed
        })
        .collect();

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
    row("our tokenizer alone (parse-only floor)", tokenize_s);
    row(
        "html5ever's tokenizer alone (for comparison, not used)",
        html5ever_tokenize_s,
    );
    row("HTML → arena (our tree builder)", parse_s);
    row(
        "HTML → arena (html5ever's tree builder, not used)",
        standard_parse_s,
    );
    row("arena → hashes + aggregates", hash_s);
    row("arena + aggregates → classifier features", features_s);
    row("features → scores (shipped model)", score_s);
    row("scores → smoothing + sections", smooth_s);
    row(
        "smoothed → template cleaned text (--cleaned-text template)",
        clean_s,
    );
    row("arena → text blocks (content model)", blocks_s);
    row("blocks → content features", content_features_s);
    row("content features → probabilities (shipped trees)", trees_s);
    row("probabilities → calls + cleaned text", content_clean_s);
    let content_s = blocks_s + content_features_s + trees_s + content_clean_s;
    row("content model, all four", content_s);
    row("parse + hashes", parse_s + hash_s);
    let up_to_scores = parse_s + hash_s + features_s + score_s;
    row("parse + hashes + features + scores", up_to_scores);
    row(
        "parse + hashes + features + scores + smoothing + cleaned text",
        up_to_scores + smooth_s + clean_s,
    );
    // Without smoothing and cleaning: what reading and scoring alone cost.
    row(
        "all stages up to scores",
        framing_s + decode_s + up_to_scores,
    );
    row(
        "all stages (template view + main content)",
        framing_s + decode_s + up_to_scores + smooth_s + content_s,
    );
    println!(
        "\nframing + gzip: {:.1} MB/s of WARC, {:.1} MB/s of compressed input",
        warc_bytes as f64 / 1e6 / framing_s,
        compressed as f64 / 1e6 / framing_s
    );
    println!(
        "features + scoring: {:.1}% of the parse time",
        100.0 * (features_s + score_s) / parse_s
    );
    println!(
        "smoothing: {:.1}% of the parse time",
        100.0 * smooth_s / parse_s
    );
    println!(
        "cleaned text: {:.1}% of the parse time; {:.1} MB of text kept from {:.1} MB of HTML",
        100.0 * clean_s / parse_s,
        cleaned_bytes as f64 / 1e6,
        mb
    );
    print_smoothing_breakdown(&doms, &pages, &page_seg, &page_smooth_s, &page_parse_s);
    if args.site_methods {
        site_methods::run(&pages, &doms, args.rounds);
    }
    Ok(())
}

/// What one page's smoothing looked like.
struct SegStats {
    smoothed_nodes: usize,
    levels: usize,
    quantized: bool,
    sections: usize,
}

impl SegStats {
    fn of(seg: &Segmentation) -> SegStats {
        SegStats {
            smoothed_nodes: seg.smoothed_nodes(),
            levels: seg.levels,
            quantized: seg.quantized,
            sections: seg.sections.len(),
        }
    }
}

/// Page size buckets (DOM nodes) for the per-page breakdown: upper bounds, exclusive.
const DOM_BUCKETS: [(usize, &str); 5] = [
    (1_000, "< 1k"),
    (3_000, "1k–3k"),
    (10_000, "3k–10k"),
    (30_000, "10k–30k"),
    (usize::MAX, "≥ 30k"),
];

fn print_smoothing_breakdown(
    doms: &[dom::Dom],
    pages: &[Page],
    seg: &[SegStats],
    smooth_s: &[f64],
    parse_s: &[f64],
) {
    let n = seg.len();
    if n == 0 {
        return;
    }
    let quantized = seg.iter().filter(|s| s.quantized).count();
    let mut smoothed: Vec<f64> = seg.iter().map(|s| s.smoothed_nodes as f64).collect();
    let max_smoothed = seg.iter().map(|s| s.smoothed_nodes).max().unwrap_or(0);
    let mut levels: Vec<f64> = seg.iter().map(|s| s.levels as f64).collect();
    let mut sections: Vec<f64> = seg.iter().map(|s| s.sections as f64).collect();
    println!(
        "smoothing quantized (more than {} distinct scores): {quantized} of {n} pages",
        segmentation::Params::default().max_levels
    );
    println!(
        "smoothed nodes per page: median {:.0}, max {max_smoothed}; levels K: median {:.0}; \
         sections per page: median {:.0}",
        median(&mut smoothed),
        median(&mut levels),
        median(&mut sections)
    );

    // Comparable with the solver's figure in --smoothing-scaling (segment() also does O(DOM
    // nodes) work around the solver, counted here).
    let work: f64 = seg
        .iter()
        .map(|s| (s.smoothed_nodes * s.levels) as f64)
        .sum();
    if work > 0.0 {
        println!(
            "smoothing: {:.2} ns per smoothed node per level (Σ n·K = {:.3e}; per-page times summed)",
            smooth_s.iter().sum::<f64>() * 1e9 / work,
            work
        );
    }

    // A page's parse time can round to 0 on a coarse clock: such a page has no ratio.
    let ratio = |k: usize| (parse_s[k] > 0.0).then(|| smooth_s[k] / parse_s[k]);
    println!("\n| DOM nodes | pages | median smoothed nodes | median smoothing µs | median smoothing / parse | max smoothing / parse |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut low = 0;
    for (high, label) in DOM_BUCKETS {
        let members: Vec<usize> = (0..n)
            .filter(|&k| (low..high).contains(&doms[k].len()))
            .collect();
        low = high;
        if members.is_empty() {
            println!("| {label} | 0 | — | — | — | — |");
            continue;
        }
        let mut nodes: Vec<f64> = members
            .iter()
            .map(|&k| seg[k].smoothed_nodes as f64)
            .collect();
        let mut micros: Vec<f64> = members.iter().map(|&k| smooth_s[k] * 1e6).collect();
        let mut ratios: Vec<f64> = members.iter().filter_map(|&k| ratio(k)).collect();
        let max_ratio = ratios.iter().copied().fold(f64::NAN, f64::max);
        println!(
            "| {label} | {} | {:.0} | {:.0} | {:.1}% | {:.1}% |",
            members.len(),
            median(&mut nodes),
            median(&mut micros),
            100.0 * median(&mut ratios),
            100.0 * max_ratio
        );
    }

    // The pages where smoothing costs most relative to parsing are the ones to look at when
    // the stage is optimized.
    let mut by_ratio: Vec<usize> = (0..n).filter(|&k| ratio(k).is_some()).collect();
    by_ratio.sort_by(|&a, &b| {
        let (ra, rb) = (ratio(a).unwrap_or(0.0), ratio(b).unwrap_or(0.0));
        rb.total_cmp(&ra)
    });
    println!("\nlargest smoothing / parse (pages):\n");
    println!(
        "| smoothing / parse | smoothing ms | parse ms | DOM nodes | smoothed nodes | K | URL |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---|");
    for &k in by_ratio.iter().take(5) {
        println!(
            "| {:.1}% | {:.2} | {:.2} | {} | {} | {}{} | {} |",
            100.0 * ratio(k).unwrap_or(0.0),
            smooth_s[k] * 1e3,
            parse_s[k] * 1e3,
            doms[k].len(),
            seg[k].smoothed_nodes,
            seg[k].levels,
            if seg[k].quantized { " (q)" } else { "" },
            pages[k].url
        );
    }
}

/// Median (mean of the middle two for an even count); NaN when empty. Sorts in place.
fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}
