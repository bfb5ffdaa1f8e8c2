//! `stencil bench --smoothing-scaling`: smoothing time against problem size, on synthetic
//! pages (whole [`segmentation::segment`], with the shipped model's scores and with
//! worst-case scores) and on random trees (the solver alone), written as a TSV for
//! docs/bench/plot_smoothing.py.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use stencil_operators::dom::{self, subtree};
use stencil_operators::page_models::features;
use stencil_operators::page_models::model::Model;
use stencil_operators::smoothing::isotonic;
use stencil_operators::smoothing::segmentation::{self, Segmentation};

use super::{best_of, median};
use stencil_operators::synth::SplitMix;

use super::BenchArgs;

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
    "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has",
    "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "city",
    "council", "report", "market", "season", "research", "weather", "company", "players",
    "government", "students", "announced", "yesterday", "according", "million", "percent",
    "building", "community", "festival", "results", "project", "history", "development",
];

#[rustfmt::skip]
const MENU: &[&str] = &[
    "Home", "News", "Sport", "Business", "Culture", "Travel", "Opinion", "Science", "Video",
    "Contact", "About us", "Archive", "Weather", "Events", "Jobs", "Subscribe",
];

/// A synthetic page's HTML, written with a running count of the DOM nodes it will parse to
/// (elements and text nodes, including the white space between tags that real pages carry).
struct PageWriter<'r> {
    html: String,
    nodes: usize,
    depth: usize,
    rng: &'r mut SplitMix,
}

impl PageWriter<'_> {
    fn open(&mut self, tag: &str, attributes: &str) {
        self.newline();
        if attributes.is_empty() {
            let _ = write!(self.html, "<{tag}>");
        } else {
            let _ = write!(self.html, "<{tag} {attributes}>");
        }
        self.nodes += 1;
        self.depth += 1;
    }

    fn close(&mut self, tag: &str) {
        self.depth = self.depth.saturating_sub(1);
        self.newline();
        let _ = write!(self.html, "</{tag}>");
    }

    /// Indentation between block tags: one white-space text node, as in most real markup.
    fn newline(&mut self) {
        self.html.push('\n');
        for _ in 0..self.depth.min(12) {
            self.html.push_str("  ");
        }
        self.nodes += 1;
    }

    fn words(&mut self, min_chars: usize, max_chars: usize) -> String {
        let target = self.rng.between(min_chars, max_chars);
        let mut text = String::new();
        while text.len() < target {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(self.rng.pick(WORDS));
        }
        text
    }

    /// `<tag>text</tag>` on one line.
    fn leaf(&mut self, tag: &str, attributes: &str, text: &str) {
        self.open(tag, attributes);
        self.html.push_str(text);
        self.nodes += 1;
        self.depth -= 1;
        let _ = write!(self.html, "</{tag}>");
    }

    /// A list of short links: a menu, a widget, related articles.
    fn link_list(&mut self, class: &str, min: usize, max: usize) {
        self.open("ul", &format!("class={class}"));
        for _ in 0..self.rng.between(min, max) {
            self.open("li", "");
            let label = if self.rng.below(2) == 0 {
                self.rng.pick(MENU).to_string()
            } else {
                self.words(8, 30)
            };
            let href = format!("href=/{}/{}", class, self.rng.below(100_000));
            self.leaf("a", &href, &label);
            self.close("li");
        }
        self.close("ul");
    }

    /// A paragraph of 60–300 characters, some with a link or emphasis inside.
    fn paragraph(&mut self) {
        self.open("p", "");
        let text = self.words(60, 300);
        let inline = self.rng.below(3);
        if inline == 0 {
            self.html.push_str(&text);
            self.nodes += 1;
        } else {
            let cut = text.len() / 2;
            let cut = text[..cut].rfind(' ').unwrap_or(0);
            self.html.push_str(&text[..cut]);
            let words = self.words(5, 25);
            if inline == 1 {
                let _ = write!(
                    self.html,
                    " <a href=/story/{}>{words}</a> ",
                    self.rng.below(1_000_000)
                );
            } else {
                let _ = write!(self.html, " <em>{words}</em> ");
            }
            self.html.push_str(text[cut..].trim_start());
            self.nodes += 4;
        }
        self.depth -= 1;
        self.html.push_str("</p>");
    }

    fn figure(&mut self) {
        self.open("figure", "");
        let alt = self.words(10, 40);
        let src = format!(
            "src=/img/{}.jpg alt=\"{alt}\" width=640 height=360",
            self.rng.below(1_000_000)
        );
        self.open("img", &src);
        self.depth -= 1;
        let caption = self.words(20, 90);
        self.leaf("figcaption", "", &caption);
        self.close("figure");
    }

    fn card(&mut self) {
        self.open("div", "class=card");
        let title = self.words(15, 50);
        self.leaf("h3", "", &title);
        self.paragraph();
        self.leaf("a", "class=more href=/more", "Read more");
        self.close("div");
    }

    /// A section of content: nested wrappers, a heading, and 3–10 blocks.
    fn section(&mut self) {
        let wrappers = self.rng.below(4);
        self.open("section", "class=block");
        for _ in 0..wrappers {
            self.open("div", "class=wrap");
        }
        let title = self.words(20, 70);
        self.leaf("h2", "", &title);
        for _ in 0..self.rng.between(3, 10) {
            match self.rng.below(20) {
                0..=11 => self.paragraph(),
                12..=14 => self.link_list("related", 3, 8),
                15..=16 => self.figure(),
                _ => self.card(),
            }
        }
        for _ in 0..wrappers {
            self.close("div");
        }
        self.close("section");
    }
}

/// A deterministic page of about `target` DOM nodes: a header with a logo and a menu, a main
/// column of sections (grouped in rows of 1–5), a sidebar of link widgets, and a footer.
fn synthetic_page(seed: u64, target: usize) -> String {
    let mut rng = SplitMix(seed);
    let mut page = PageWriter {
        html: String::with_capacity(target * 40),
        nodes: 0,
        depth: 0,
        rng: &mut rng,
    };
    page.html.push_str("<!DOCTYPE html>");
    page.open("html", "lang=en");
    page.open("head", "");
    page.open("meta", "charset=utf-8");
    page.depth -= 1;
    let title = page.words(20, 60);
    page.leaf("title", "", &title);
    page.open("link", "rel=stylesheet href=/css/site.css");
    page.depth -= 1;
    page.leaf("script", "", &format!("var analytics = {{site: {seed}}};"));
    page.close("head");
    page.open("body", "class=page");
    page.open("header", "class=site-header");
    page.open("div", "class=logo");
    page.open("a", "href=/");
    page.open("img", "src=/img/logo.png alt=\"Site logo\"");
    page.depth -= 1;
    page.close("a");
    page.close("div");
    page.open("nav", "class=menu");
    page.link_list("menu", 5, 10);
    page.close("nav");
    page.close("header");

    // The sidebar and footer are written first into a second writer so their size is known
    // and the main column can fill the rest of the budget.
    let mut rest_rng = SplitMix(seed ^ 0xA5A5_A5A5);
    let mut rest = PageWriter {
        html: String::new(),
        nodes: 0,
        depth: 2,
        rng: &mut rest_rng,
    };
    rest.open("aside", "class=sidebar");
    for _ in 0..rest.rng.between(1, 3) {
        rest.open("div", "class=widget");
        let heading = rest.words(8, 25);
        rest.leaf("h3", "", &heading);
        rest.link_list("widget", 3, 6);
        rest.close("div");
    }
    rest.close("aside");
    rest.close("div");
    rest.open("footer", "class=site-footer");
    rest.open("div", "class=columns");
    for _ in 0..rest.rng.between(2, 3) {
        rest.open("div", "class=column");
        let heading = rest.words(6, 20);
        rest.leaf("h4", "", &heading);
        rest.link_list("footer", 3, 5);
        rest.close("div");
    }
    rest.close("div");
    rest.leaf(
        "p",
        "class=copyright",
        "© 2026 Example Media Group. All rights reserved.",
    );
    rest.close("footer");
    let (rest_html, rest_nodes) = (rest.html, rest.nodes);

    page.open("div", "class=layout");
    page.open("main", "class=content");
    let budget = target.saturating_sub(rest_nodes + 4);
    while page.nodes < budget {
        page.open("div", "class=row");
        for _ in 0..page.rng.between(1, 5) {
            page.section();
            if page.nodes >= budget {
                break;
            }
        }
        page.close("div");
    }
    page.close("main");
    page.html.push_str(&rest_html);
    page.nodes += rest_nodes;
    page.depth = 2;
    page.close("body");
    page.close("html");
    page.html
}

/// Scores all distinct and in random order, one per element: the worst case for the number
/// of levels K (always quantized to `max_levels` on any page with more elements).
fn random_distinct_scores(scores: &[Option<f32>], seed: u64) -> Vec<Option<f32>> {
    let elements = scores.iter().filter(|s| s.is_some()).count();
    let mut rank: Vec<u32> = (0..elements as u32).collect();
    let mut rng = SplitMix(seed);
    for i in (1..rank.len()).rev() {
        rank.swap(i, rng.below(i + 1));
    }
    let mut next = rank.into_iter();
    scores
        .iter()
        .map(|s| {
            s.and_then(|_| next.next())
                .map(|r| (r as f32 + 0.5) / elements as f32)
        })
        .collect()
}

/// The solver's two benchmark tree shapes, parents before children.
fn random_tree(n: usize, rng: &mut SplitMix) -> Vec<u32> {
    (0..n)
        .map(|i| {
            if i == 0 {
                isotonic::NO_PARENT
            } else {
                rng.below(i) as u32
            }
        })
        .collect()
}

/// A chain of n/2 links with a leaf hanging off every link: as deep as a tree of n nodes
/// with leaves gets, the shape that makes a careless solver hold a cost vector per link.
fn chain_with_leaves(n: usize) -> Vec<u32> {
    let half = n.div_ceil(2);
    (0..n)
        .map(|i| match i {
            0 => isotonic::NO_PARENT,
            i if i < half => (i - 1) as u32,
            i => (i - half) as u32,
        })
        .collect()
}

const SCALING_PAGE_SIZES: [usize; 7] = [300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000];
const SCALING_TREE_SIZES: [usize; 7] = [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000];
const SCALING_ROUNDS: usize = 3;

const TSV_HEADER: &str = "# stencil bench --smoothing-scaling. series: page/parse = dom::parse of \
    the synthetic page (once); page/model-scores = segmentation::segment with the shipped \
    model's scores, default params (best of 3); page/random-scores = the same with all-distinct \
    random scores (worst case for K); solver/random-tree and solver/chain-with-leaves = \
    isotonic::smooth alone, random scores, weights 1, penalties 0.01 (best of 3). target = \
    requested size; x_nodes = DOM nodes for page/*, problem nodes for solver/*; dom_nodes = DOM \
    nodes (0 for solver/*); problem_nodes = nodes smoothed (n); levels = K; quantized = 1 when \
    the scores were quantized to K levels; seconds; ns_per_node_level = seconds·1e9/(n·K) (NA \
    for page/parse)";
const TSV_COLUMNS: &str =
    "series\ttarget\tseed\tx_nodes\tdom_nodes\tproblem_nodes\tlevels\tquantized\tseconds\tns_per_node_level";

struct ScalingRow {
    series: &'static str,
    target: usize,
    seed: u64,
    dom_nodes: usize,
    problem_nodes: usize,
    levels: usize,
    quantized: bool,
    seconds: f64,
}

impl ScalingRow {
    fn x_nodes(&self) -> usize {
        if self.series.starts_with("page/") {
            self.dom_nodes
        } else {
            self.problem_nodes
        }
    }

    fn ns_per_node_level(&self) -> Option<f64> {
        let work = self.problem_nodes * self.levels;
        (work > 0).then(|| self.seconds * 1e9 / work as f64)
    }

    fn tsv(&self) -> String {
        let ns = self
            .ns_per_node_level()
            .map_or("NA".to_string(), |v| format!("{v:.4}"));
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.9}\t{ns}",
            self.series,
            self.target,
            self.seed,
            self.x_nodes(),
            self.dom_nodes,
            self.problem_nodes,
            self.levels,
            u8::from(self.quantized),
            self.seconds
        )
    }
}

/// Time of smoothing against problem size: synthetic pages from a few hundred to a few
/// hundred thousand DOM nodes (whole `segment`, with real and worst-case scores), and the
/// solver alone on random trees up to a million nodes. Written as TSV to `out`.
pub(super) fn smoothing_scaling(args: &BenchArgs, out: &Path) -> Result<(), String> {
    let model = Model::default_model();
    let params = segmentation::Params::default();
    let max = args.scaling_max_nodes;
    let max_depth = args.limits.limits().max_dom_depth;
    let mut rows: Vec<ScalingRow> = Vec::new();

    for &target in SCALING_PAGE_SIZES.iter().filter(|&&t| t <= max) {
        for copy in 0..args.scaling_pages.max(1) as u64 {
            let seed = target as u64 * 1_000 + copy;
            let html = synthetic_page(seed, target);
            let start = Instant::now();
            let d = dom::parse(&html, max_depth);
            let parse_s = start.elapsed().as_secs_f64();
            let sums = subtree::summarize(&d, "bench.example");
            let page_features = features::compute(&d, &sums);
            let scores = model.score_page(&d, &page_features);
            let area = &page_features.area;
            let (model_s, seg) = best_of(SCALING_ROUNDS, || {
                segmentation::segment(&d, &scores, area, &params)
            });
            let random = random_distinct_scores(&scores, seed);
            let (random_s, seg_random) = best_of(SCALING_ROUNDS, || {
                segmentation::segment(&d, &random, area, &params)
            });
            let row = |series, seconds, seg: Option<&Segmentation>| ScalingRow {
                series,
                target,
                seed,
                dom_nodes: d.len(),
                problem_nodes: seg.map_or(0, |s| s.smoothed_nodes()),
                levels: seg.map_or(0, |s| s.levels),
                quantized: seg.is_some_and(|s| s.quantized),
                seconds,
            };
            rows.push(row("page/parse", parse_s, None));
            rows.push(row("page/model-scores", model_s, Some(&seg)));
            rows.push(row("page/random-scores", random_s, Some(&seg_random)));
        }
    }

    for &n in SCALING_TREE_SIZES.iter().filter(|&&n| n <= max) {
        let mut rng = SplitMix(n as u64);
        let x: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
        let weight = vec![1.0f32; n];
        let penalty = vec![0.01f32; n];
        let shapes: [(&'static str, Vec<u32>); 2] = [
            ("solver/random-tree", random_tree(n, &mut rng)),
            ("solver/chain-with-leaves", chain_with_leaves(n)),
        ];
        for (series, parent) in shapes {
            let (seconds, solved) = best_of(SCALING_ROUNDS, || {
                isotonic::smooth(&parent, &x, &weight, &penalty, isotonic::Options::default())
            });
            let solved = solved.map_err(|e| format!("{series}, {n} nodes: {e}"))?;
            rows.push(ScalingRow {
                series,
                target: n,
                seed: n as u64,
                dom_nodes: 0,
                problem_nodes: n,
                levels: solved.levels,
                quantized: solved.quantized,
                seconds,
            });
        }
    }

    let mut tsv = format!("{TSV_HEADER}\n{TSV_COLUMNS}\n");
    for row in &rows {
        tsv.push_str(&row.tsv());
        tsv.push('\n');
    }
    std::fs::write(out, tsv).map_err(|e| format!("{}: {e}", out.display()))?;

    print_scaling_tables(&rows);
    println!("\n{} measurements written to {}", rows.len(), out.display());
    Ok(())
}

/// Medians over the pages of each size, and the solver rows as they are.
fn print_scaling_tables(rows: &[ScalingRow]) {
    println!("synthetic pages: medians over the pages of each size; smoothing = segment(), best of {SCALING_ROUNDS}\n");
    println!("| target | DOM nodes | smoothed nodes | parse ms | smoothing ms (model scores) | K | smoothing / parse | smoothing ms (random scores) | K | ns / node / level (random) |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let of = |series: &str, target: usize| -> Vec<&ScalingRow> {
        rows.iter()
            .filter(|r| r.series == series && r.target == target)
            .collect()
    };
    let med = |rows: &[&ScalingRow], value: &dyn Fn(&ScalingRow) -> f64| {
        median(&mut rows.iter().map(|r| value(r)).collect::<Vec<f64>>())
    };
    for target in SCALING_PAGE_SIZES {
        let (parse, model, random) = (
            of("page/parse", target),
            of("page/model-scores", target),
            of("page/random-scores", target),
        );
        if parse.is_empty() {
            continue;
        }
        let mut ratios: Vec<f64> = parse
            .iter()
            .zip(&model)
            .filter(|(p, _)| p.seconds > 0.0)
            .map(|(p, m)| m.seconds / p.seconds)
            .collect();
        let max_levels = |rows: &[&ScalingRow]| rows.iter().map(|r| r.levels).max().unwrap_or(0);
        println!(
            "| {target} | {:.0} | {:.0} | {:.2} | {:.2} | {} | {:.1}% | {:.2} | {} | {:.2} |",
            med(&parse, &|r| r.dom_nodes as f64),
            med(&model, &|r| r.problem_nodes as f64),
            med(&parse, &|r| r.seconds * 1e3),
            med(&model, &|r| r.seconds * 1e3),
            max_levels(&model),
            100.0 * median(&mut ratios),
            med(&random, &|r| r.seconds * 1e3),
            max_levels(&random),
            med(&random, &|r| r.ns_per_node_level().unwrap_or(f64::NAN)),
        );
    }
    println!("\nsolver alone (isotonic::smooth): random scores, weights 1, penalties 0.01, best of {SCALING_ROUNDS}\n");
    println!("| shape | problem nodes n | levels K | seconds | ns / node / level |");
    println!("|---|---:|---:|---:|---:|");
    for row in rows.iter().filter(|r| r.series.starts_with("solver/")) {
        println!(
            "| {} | {} | {} | {:.4} | {:.2} |",
            row.series.trim_start_matches("solver/"),
            row.problem_nodes,
            row.levels,
            row.seconds,
            row.ns_per_node_level().unwrap_or(f64::NAN)
        );
    }
}
