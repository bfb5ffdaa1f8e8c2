//! Seed 002's Figure 7, reproduced in shape: how good RTDM-TD's template is against the number
//! of sample pages it was found from (2 … 100), on the synthetic crawl (gold template terms)
//! and on the multi-page real hosts of dragnet and cleanportaleval (gold main content).
//!
//! ```sh
//! cargo run --release -p stencil-tests --example template_curve -- docs/bench/rtdm-curve
//! ```
//!
//! writes `rtdm-curve.tsv` (one row per host and sample size) and `rtdm-curve.svg` (the plot
//! docs/evaluation.md shows). A host's sample pages are its pages with the smallest URL keys,
//! as `stencil run --method rtdm --sample-pages k` takes them; the template found from the
//! first k of them is then removed from every page of the host.
//!
//! - **Template-term F** (synthetic): the visible-text tokens inside the generator's gold
//!   template blocks against those inside the blocks the template covers, multisets per page,
//!   summed over the host's pages: seed 002's measure, whose gold was a person's reading of
//!   each site.
//! - **Real hosts**, where no one marked a template: the share of gold main-content tokens
//!   removed with the template (what must stay near 0) and the share of the other tokens
//!   removed (what a template method is for), summed over the host's pages.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use stencil_operators::dom::subtree;
use stencil_operators::dom::{parse, Dom};
use stencil_operators::reading::charset;
use stencil_operators::site::embedding::embedded_roots;
use stencil_operators::site::rtdm::Limits;
use stencil_operators::site::rtdm_template::{find_template, label_tree, PageTree};
use stencil_operators::site::site_level::{site_of, url_key};
use stencil_operators::synth;
use stencil_tests::gold::{self, tokens};
use stencil_tests::shared_dir;

const SIZES: [usize; 12] = [2, 3, 4, 5, 7, 10, 15, 20, 25, 35, 50, 100];

/// One host's pages, in sample order (smallest URL key first).
struct Host {
    name: String,
    source: &'static str,
    pages: Vec<Page>,
}

struct Page {
    dom: Dom,
    /// Gold tokens: template terms (synthetic) or main content (real).
    gold: Vec<String>,
    /// Synthetic only: for every node, whether it lies in a gold template block.
    gold_template: Option<Vec<bool>>,
}

/// One point of the curve.
struct Point {
    source: &'static str,
    host: String,
    pages: usize,
    sample: usize,
    /// Synthetic: template-term precision, recall and F. Real: gold lost, other removed.
    a: f64,
    b: f64,
    f: Option<f64>,
    detect_ms: f64,
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("rtdm-curve"), PathBuf::from);
    let mut hosts = synthetic_hosts();
    hosts.extend(real_hosts());
    hosts.extend(swde_host());
    let mut points = Vec::new();
    for host in &hosts {
        points.extend(curve(host));
    }
    let mut tsv = String::from("source\thost\tpages\tsample\ta\tb\tf\tdetect_ms\n");
    for p in &points {
        let f = p.f.map_or(String::new(), |f| format!("{f:.4}"));
        let _ = writeln!(
            tsv,
            "{}\t{}\t{}\t{}\t{:.4}\t{:.4}\t{f}\t{:.2}",
            p.source, p.host, p.pages, p.sample, p.a, p.b, p.detect_ms
        );
    }
    std::fs::write(out.with_extension("tsv"), tsv).expect("write the TSV");
    std::fs::write(out.with_extension("svg"), plot(&points)).expect("write the SVG");
    summarize(&points);
}

/// 8 synthetic hosts of 120 pages each (seed 7, as the tests' crawl), with gold.
fn synthetic_hosts() -> Vec<Host> {
    let mut by_host: BTreeMap<String, Vec<(u64, Page)>> = BTreeMap::new();
    for page in synth::crawl(8, 120, 7) {
        let dom = parse(&page.html, 512);
        let paths = synth::element_paths(&dom);
        let inside: Vec<bool> = paths
            .iter()
            .map(|p| page.template_paths.iter().any(|root| p.starts_with(root)))
            .collect();
        let gold = tokens(&text_where(&dom, &inside, true));
        // The generator's URLs are `http://host/...`.
        let host = site_of(page.url.split('/').nth(2).unwrap_or("")).to_string();
        by_host.entry(host).or_default().push((
            url_key(&page.url),
            Page {
                dom,
                gold,
                gold_template: Some(inside),
            },
        ));
    }
    hosts_of(by_host, "synthetic")
}

/// The multi-page real hosts (dragnet's hosts with 10 or more pages, and cleanportaleval).
fn real_hosts() -> Vec<Host> {
    let (Some(dragnet), Some(cpe)) = (
        shared_dir("data/dragnet"),
        shared_dir("data/cleanportaleval"),
    ) else {
        return Vec::new();
    };
    let mut pages = gold::dragnet(&dragnet, 10);
    pages.extend(gold::cleanportaleval(&cpe));
    let mut by_host: BTreeMap<String, Vec<(u64, Page)>> = BTreeMap::new();
    for page in pages {
        let text = charset::decode(&page.html, None, None).text;
        let dom = parse(&text, 512);
        by_host.entry(page.host.clone()).or_default().push((
            url_key(&page.url),
            Page {
                dom,
                gold: tokens(&page.gold_text),
                gold_template: None,
            },
        ));
    }
    hosts_of(by_host, "real")
}

/// swde-books' one host (2,000 pages): its gold is the title, author and ISBN-13 values, which
/// must never be removed.
fn swde_host() -> Vec<Host> {
    let Some(dir) = shared_dir("data/swde-books") else {
        return Vec::new();
    };
    let mut pages: Vec<(u64, Page)> = gold::swde_books(&dir)
        .into_iter()
        .map(|page| {
            let text = charset::decode(&page.html, None, None).text;
            let values: Vec<&str> = page.values.iter().map(|(_, v)| v.as_str()).collect();
            let page_gold = Page {
                dom: parse(&text, 512),
                gold: tokens(&values.join(" ")),
                gold_template: None,
            };
            (url_key(&page.url), page_gold)
        })
        .collect();
    pages.sort_by_key(|(key, _)| *key);
    // Removal is measured on the first 500 pages by URL key: the sample pages and more.
    pages.truncate(500);
    vec![Host {
        name: "swde-books".to_string(),
        source: "swde",
        pages: pages.into_iter().map(|(_, p)| p).collect(),
    }]
}

fn hosts_of(by_host: BTreeMap<String, Vec<(u64, Page)>>, source: &'static str) -> Vec<Host> {
    by_host
        .into_iter()
        .map(|(name, mut pages)| {
            pages.sort_by_key(|(key, _)| *key);
            Host {
                name,
                source,
                pages: pages.into_iter().map(|(_, p)| p).collect(),
            }
        })
        .collect()
}

/// Visible text of the nodes where `mask` is `want`.
fn text_where(dom: &Dom, mask: &[bool], want: bool) -> String {
    let mut out = String::new();
    for (i, &m) in mask.iter().enumerate() {
        if m == want {
            if let Some(text) = dom.visible_text(i) {
                out.push_str(text);
                out.push(' ');
            }
        }
    }
    out
}

/// How many of `gold` (a multiset) `found`'s tokens match.
fn overlap(gold: &[String], found: &[String]) -> u64 {
    let mut left: BTreeMap<&str, i64> = BTreeMap::new();
    for t in gold {
        *left.entry(t).or_default() += 1;
    }
    let mut matched = 0;
    for t in found {
        if let Some(n) = left.get_mut(t.as_str()).filter(|n| **n > 0) {
            *n -= 1;
            matched += 1;
        }
    }
    matched
}

fn curve(host: &Host) -> Vec<Point> {
    let subtrees: Vec<_> = host
        .pages
        .iter()
        .map(|p| subtree::summarize(&p.dom, &host.name))
        .collect();
    let trees: Vec<_> = host
        .pages
        .iter()
        .zip(&subtrees)
        .map(|(p, s)| label_tree(&p.dom, s))
        .collect();
    let mut points = Vec::new();
    for &k in SIZES.iter().filter(|&&k| k <= host.pages.len()) {
        let start = Instant::now();
        let Some(template) = find_template(trees[..k].iter().cloned(), k as u32, Limits::default())
        else {
            continue;
        };
        let detect_ms = start.elapsed().as_secs_f64() * 1e3;
        // (found ∩ gold, found, gold) for template terms, or (gold lost, gold, other removed,
        // other) for the real hosts.
        let mut sums = [0u64; 4];
        for (page, subtree) in host.pages.iter().zip(&subtrees) {
            let dom = &page.dom;
            // Removed as the job removes it: the template found in the page in one pass.
            let roots = embedded_roots(
                &template.tree,
                &PageTree::new(dom, subtree),
                Limits::default().max_cells,
            )
            .unwrap_or_default();
            let mut inside = vec![false; dom.len()];
            for root in roots {
                inside[root as usize] = true;
            }
            for i in 0..dom.len() {
                if let Some(parent) = dom.parent(i) {
                    inside[i] |= inside[parent];
                }
            }
            match &page.gold_template {
                Some(_) => {
                    let found = tokens(&text_where(dom, &inside, true));
                    sums[0] += overlap(&page.gold, &found);
                    sums[1] += found.len() as u64;
                    sums[2] += page.gold.len() as u64;
                }
                None => {
                    let all = tokens(&text_where(dom, &vec![false; dom.len()], false));
                    let kept = tokens(&text_where(dom, &inside, false));
                    let (gold_all, gold_kept) =
                        (overlap(&page.gold, &all), overlap(&page.gold, &kept));
                    sums[0] += gold_all - gold_kept;
                    sums[1] += page.gold.len() as u64;
                    sums[2] += (all.len() as u64 - gold_all) - (kept.len() as u64 - gold_kept);
                    sums[3] += all.len() as u64 - gold_all;
                }
            }
        }
        let share = |a: u64, b: u64| a as f64 / b.max(1) as f64;
        let (a, b, f) = match host.source {
            "synthetic" => {
                let (p, r) = (share(sums[0], sums[1]), share(sums[0], sums[2]));
                (
                    p,
                    r,
                    Some(if p + r > 0.0 {
                        2.0 * p * r / (p + r)
                    } else {
                        0.0
                    }),
                )
            }
            _ => (share(sums[0], sums[1]), share(sums[2], sums[3]), None),
        };
        points.push(Point {
            source: host.source,
            host: host.name.clone(),
            pages: host.pages.len(),
            sample: k,
            a,
            b,
            f,
            detect_ms,
        });
    }
    points
}

/// Means by (source, sample size), over the hosts that have that many pages.
fn means(points: &[Point], source: &str) -> Vec<(usize, f64, f64, f64, usize)> {
    SIZES
        .iter()
        .filter_map(|&k| {
            let at: Vec<&Point> = points
                .iter()
                .filter(|p| p.source == source && p.sample == k)
                .collect();
            let n = at.len();
            (n > 0).then(|| {
                let mean =
                    |get: &dyn Fn(&Point) -> f64| at.iter().map(|p| get(p)).sum::<f64>() / n as f64;
                (
                    k,
                    mean(&|p| p.a),
                    mean(&|p| p.b),
                    mean(&|p| p.f.unwrap_or(0.0)),
                    n,
                )
            })
        })
        .collect()
}

fn summarize(points: &[Point]) {
    println!("synthetic: sample pages, hosts, template-term P, R, F (means over hosts)");
    for (k, p, r, f, n) in means(points, "synthetic") {
        println!("  {k:3} {n:3}  P {p:.3}  R {r:.3}  F {f:.3}");
    }
    for source in ["real", "swde"] {
        println!("{source}: sample pages, hosts, gold lost, other text removed (means over hosts)");
        for (k, lost, removed, _, n) in means(points, source) {
            println!(
                "  {k:3} {n:3}  gold lost {:.2}%  other removed {:.1}%",
                100.0 * lost,
                100.0 * removed
            );
        }
    }
    let good = points
        .iter()
        .filter(|p| p.source == "synthetic" && p.f.is_some_and(|f| f >= 0.95))
        .fold(BTreeMap::new(), |mut first: BTreeMap<&str, usize>, p| {
            let at = first.entry(&p.host).or_insert(p.sample);
            *at = (*at).min(p.sample);
            first
        });
    println!("synthetic hosts reaching F ≥ 0.95, and with how many pages: {good:?}");
}

/// Two panels side by side: template-term F on the synthetic hosts (one thin line per host,
/// the mean bold), and gold lost / other text removed on the real hosts (means).
fn plot(points: &[Point]) -> String {
    let (w, h, pad) = (360.0, 260.0, 45.0);
    // x: log scale of the sample size, 2 … 100.
    let x = |k: usize, left: f64| {
        left + pad + ((k as f64).ln() - 2f64.ln()) / (100f64.ln() - 2f64.ln()) * (w - 1.5 * pad)
    };
    let y = |v: f64| h - pad + -v * (h - 1.6 * pad);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{h}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        2.0 * w
    );
    for (panel, title) in [
        (0.0, "Synthetic hosts: template-term F"),
        (w, "Real hosts: share of tokens removed"),
    ] {
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"18\" font-weight=\"bold\">{title}</text>",
            panel + pad
        );
        for v in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let _ = writeln!(
                svg,
                "<line x1=\"{}\" x2=\"{}\" y1=\"{y0}\" y2=\"{y0}\" stroke=\"#ddd\"/>\
                 <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{v}</text>",
                panel + pad,
                panel + w - 0.5 * pad,
                panel + pad - 4.0,
                y(v) + 4.0,
                y0 = y(v)
            );
        }
        for k in SIZES {
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{k}</text>",
                x(k, panel),
                h - pad + 14.0
            );
        }
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">sample pages (log scale)</text>",
            panel + w / 2.0,
            h - 8.0
        );
    }
    let line = |svg: &mut String, pts: &[(usize, f64)], left: f64, style: &str| {
        let d: Vec<String> = pts
            .iter()
            .map(|&(k, v)| format!("{:.1},{:.1}", x(k, left), y(v)))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline fill=\"none\" {style} points=\"{}\"/>",
            d.join(" ")
        );
    };
    let mut hosts: BTreeMap<&str, Vec<(usize, f64)>> = BTreeMap::new();
    for p in points.iter().filter(|p| p.source == "synthetic") {
        hosts
            .entry(&p.host)
            .or_default()
            .push((p.sample, p.f.unwrap_or(0.0)));
    }
    for pts in hosts.values() {
        line(&mut svg, pts, 0.0, "stroke=\"#9bb\" stroke-width=\"1\"");
    }
    let synthetic: Vec<(usize, f64)> = means(points, "synthetic")
        .iter()
        .map(|m| (m.0, m.3))
        .collect();
    line(
        &mut svg,
        &synthetic,
        0.0,
        "stroke=\"#055\" stroke-width=\"2.5\"",
    );
    // The real hosts' means only where every host has that many pages (all have 10).
    let real = means(points, "real");
    let all_hosts = real.first().map_or(0, |m| m.4);
    let real: Vec<_> = real.into_iter().filter(|m| m.4 == all_hosts).collect();
    let swde = means(points, "swde");
    for (series, colour, dash) in [
        (&real, "#05a", ""),
        (&swde, "#080", "stroke-dasharray=\"5,3\""),
    ] {
        let removed: Vec<(usize, f64)> = series.iter().map(|m| (m.0, m.2)).collect();
        let lost: Vec<(usize, f64)> = series.iter().map(|m| (m.0, m.1)).collect();
        let style = format!("stroke=\"{colour}\" stroke-width=\"2.5\" {dash}");
        line(&mut svg, &removed, w, &style);
        let style = format!("stroke=\"#c30\" stroke-width=\"2.5\" {dash}");
        line(&mut svg, &lost, w, &style);
    }
    let _ = writeln!(
        svg,
        "<text x=\"{x0}\" y=\"36\" fill=\"#05a\">non-gold text removed, {all_hosts} dragnet/CPE hosts</text>\
         <text x=\"{x0}\" y=\"50\" fill=\"#080\">non-gold text removed, swde-books (dashed)</text>\
         <text x=\"{x0}\" y=\"64\" fill=\"#c30\">gold main content / SWDE values removed</text>",
        x0 = w + pad + 10.0
    );
    svg.push_str("</svg>\n");
    svg
}
