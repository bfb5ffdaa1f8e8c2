//! SiteLevel(θ) against gold: the synthetic crawl's own gold, human main-content gold on real
//! sites (dragnet, cleanportaleval), and SWDE's attribute values, which must survive.
//!
//! These run the library path (`stencil_tests::site_level_over`); `jobs/tests/site.rs` checks
//! that the timely job produces the same tables whatever the workers and processes.

use std::collections::{BTreeMap, HashMap};

use stencil_operators::dom::Dom;
use stencil_operators::site::site_level::{Fingerprints, Params};
use stencil_operators::synth;
use stencil_tests::gold::{self, tokens};
use stencil_tests::{shared_dir, site_level_over, warc_file};

/// Text of the visible text nodes inside (or outside) templates, joined by spaces.
fn visible_text(dom: &Dom, inside: &[bool], want_inside: bool) -> String {
    let mut out = String::new();
    for (i, &is_inside) in inside.iter().enumerate() {
        if is_inside != want_inside {
            continue;
        }
        if let Some(text) = dom.visible_text(i) {
            out.push_str(text);
            out.push(' ');
        }
    }
    out
}

#[test]
fn synthetic_crawl_templates_match_the_generators_gold() {
    let crawl = synth::crawl(20, 30, 7);
    let gold: HashMap<String, Vec<Vec<usize>>> = crawl
        .iter()
        .map(|p| (p.url.clone(), p.template_paths.clone()))
        .collect();
    let pages: Vec<(&str, &[u8])> = crawl
        .iter()
        .map(|p| (p.url.as_str(), p.html.as_bytes()))
        .collect();
    let file = warc_file("synthetic.warc.gz", &pages);
    let (mut tp, mut fp, mut fn_) = (0u64, 0u64, 0u64);
    let mut seen = 0;
    site_level_over(
        std::slice::from_ref(&file),
        &Params::default(),
        Fingerprints::Subtrees,
        |page, dom, _, inside, model| {
            seen += 1;
            assert!(model.labelled, "{}", page.host);
            let roots = &gold[&page.url];
            let paths = synth::element_paths(dom);
            let body = stencil_operators::site::labels::body(dom).expect("a body");
            for i in dom.subtree(body) {
                if dom.element(i).is_none() {
                    continue;
                }
                let gold_template = roots.iter().any(|root| paths[i].starts_with(root));
                match (gold_template, inside[i]) {
                    (true, true) => tp += 1,
                    (false, true) => fp += 1,
                    (true, false) => fn_ += 1,
                    (false, false) => {}
                }
            }
        },
    );
    let _ = std::fs::remove_file(file);
    assert_eq!(seen, 600);
    let precision = tp as f64 / (tp + fp) as f64;
    let recall = tp as f64 / (tp + fn_) as f64;
    eprintln!("synthetic: {tp} template nodes found, {fp} false, {fn_} missed: P {precision:.4} R {recall:.4}");
    assert!(tp > 600 * 20, "templates found: {tp}");
    assert!(
        precision >= 0.99 && recall >= 0.99,
        "P {precision} R {recall}"
    );
}

/// How many of `gold` (a multiset) `text`'s tokens can match.
fn overlap(gold: &[String], text: &str) -> u64 {
    let mut available: HashMap<String, u64> = HashMap::new();
    for token in tokens(text) {
        *available.entry(token).or_default() += 1;
    }
    let mut matched = 0;
    for token in gold {
        if let Some(left) = available.get_mut(token).filter(|n| **n > 0) {
            *left -= 1;
            matched += 1;
        }
    }
    matched
}

/// Micro-averaged share of gold main-content tokens that lie in site-level template text,
/// per host (as the gold names it): (lost tokens, gold tokens, the host's template hashes).
fn gold_tokens_in_templates(
    pages: &[gold::GoldPage],
    name: &str,
) -> BTreeMap<String, (u64, u64, u64)> {
    let by_url: HashMap<&str, &gold::GoldPage> =
        pages.iter().map(|p| (p.url.as_str(), p)).collect();
    let bodies: Vec<(&str, &[u8])> = pages
        .iter()
        .map(|p| (p.url.as_str(), p.html.as_slice()))
        .collect();
    let file = warc_file(name, &bodies);
    // host -> (gold tokens found in templates, gold tokens, template roots seen)
    let mut per_host: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    site_level_over(
        std::slice::from_ref(&file),
        &Params::default(),
        Fingerprints::Subtrees,
        |page, dom, _, inside, model| {
            let Some(gold_page) = by_url.get(page.url.as_str()) else {
                panic!("page {} not in the gold", page.url);
            };
            // A gold token is lost when removing the template text takes it away: compare
            // how many of the gold tokens the whole page and the page without templates hold
            // (multisets). A plain overlap with the template text would count every "the" of
            // a menu against the article.
            let gold_tokens = tokens(&gold_page.gold_text);
            let everything = vec![false; inside.len()];
            let lost = overlap(&gold_tokens, &visible_text(dom, &everything, false))
                - overlap(&gold_tokens, &visible_text(dom, inside, false));
            let entry = per_host.entry(gold_page.host.clone()).or_default();
            entry.0 += lost;
            entry.1 += gold_tokens.len() as u64;
            entry.2 = entry.2.max(model.template_count() as u64);
        },
    );
    let _ = std::fs::remove_file(file);
    per_host
}

#[test]
fn real_sites_lose_at_most_two_percent_of_main_content_to_templates() {
    let (Some(dragnet_dir), Some(cpe_dir)) = (
        shared_dir("data/dragnet"),
        shared_dir("data/cleanportaleval"),
    ) else {
        return;
    };
    let mut pages = gold::dragnet(&dragnet_dir, 10);
    let dragnet_hosts = gold::host_counts(&pages);
    pages.extend(gold::cleanportaleval(&cpe_dir));
    assert!(pages.len() > 450, "{} pages", pages.len());
    let per_host = gold_tokens_in_templates(&pages, "real-sites.warc.gz");
    let (mut lost, mut total) = (0, 0);
    for (host, (host_lost, host_total, templates)) in &per_host {
        eprintln!(
            "{host:32} gold tokens {host_total:7}  in templates {host_lost:6} ({:5.2}%)  template hashes {templates}",
            100.0 * *host_lost as f64 / (*host_total).max(1) as f64
        );
        lost += host_lost;
        total += host_total;
    }
    let share = lost as f64 / total as f64;
    eprintln!(
        "overall: {lost} of {total} gold tokens in template text ({:.3}%)",
        100.0 * share
    );
    assert!(
        share <= 0.02,
        "{:.3}% of gold tokens lie in templates",
        100.0 * share
    );
    // Every host with at least 10 pages gets some template.
    for (host, pages) in dragnet_hosts {
        let (_, _, templates) = per_host.get(&host).copied().unwrap_or_default();
        assert!(
            pages < 10 || templates > 0,
            "{host} ({pages} pages) has no template"
        );
    }
}

/// Lower case, whitespace collapsed: how an attribute value is looked for in a page's text.
fn collapse(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[test]
fn swde_books_attribute_values_stay_outside_templates() {
    let Some(dir) = shared_dir("data/swde-books") else {
        return;
    };
    let pages = gold::swde_books(&dir);
    assert_eq!(pages.len(), 2000);
    let values: HashMap<&str, &Vec<(String, String)>> =
        pages.iter().map(|p| (p.url.as_str(), &p.values)).collect();
    let bodies: Vec<(&str, &[u8])> = pages
        .iter()
        .map(|p| (p.url.as_str(), p.html.as_slice()))
        .collect();
    let file = warc_file("swde-books.warc.gz", &bodies);
    let wanted = ["title", "author", "isbn_13"];
    let mut ok = 0;
    let mut exceptions = Vec::new();
    let mut not_in_text = 0;
    site_level_over(
        std::slice::from_ref(&file),
        &Params::default(),
        Fingerprints::Subtrees,
        |page, dom, _, inside, _| {
            let kept = collapse(&visible_text(dom, inside, false));
            let all = collapse(&visible_text(dom, &vec![false; inside.len()], false));
            let mut lost = Vec::new();
            for (attribute, value) in values[page.url.as_str()] {
                if !wanted.contains(&attribute.as_str()) {
                    continue;
                }
                let value = collapse(value);
                if !all.contains(&value) {
                    not_in_text += 1;
                    continue;
                }
                if !kept.contains(&value) {
                    lost.push(format!("{attribute}={value}"));
                }
            }
            if lost.is_empty() {
                ok += 1;
            } else {
                exceptions.push(format!("{}: {}", page.url, lost.join(", ")));
            }
        },
    );
    let _ = std::fs::remove_file(file);
    eprintln!(
        "swde-books: {ok} of 2000 pages keep all title/author/ISBN values outside templates; \
         {not_in_text} values are not in the visible text at all"
    );
    for exception in &exceptions {
        eprintln!("  exception: {exception}");
    }
    assert!(ok >= 1980, "{ok} pages of 2000");
}
