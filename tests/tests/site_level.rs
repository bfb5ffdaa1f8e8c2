//! SiteLevel(θ) against gold: the synthetic crawl's own gold, human main-content gold on real
//! sites (dragnet, cleanportaleval), and SWDE's attribute values, which must survive.
//!
//! These run the library path (`stencil_tests::site_level_over`); `jobs/tests/site.rs` checks
//! that the timely job produces the same tables whatever the workers and processes.

use std::collections::{BTreeMap, HashMap};

use stencil_operators::dom::Dom;
use stencil_operators::site::rtdm_template::DEFAULT_SAMPLE_PAGES;
use stencil_operators::site::site_level::{Fingerprints, Params};
use stencil_operators::synth;
use stencil_tests::gold::{self, tokens};
use stencil_tests::{rtdm_over, shared_dir, site_level_over, warc_file};

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
    for method in [Method::SiteLevel, Method::Rtdm(DEFAULT_SAMPLE_PAGES)] {
        let (mut tp, mut fp, mut fn_) = (0u64, 0u64, 0u64);
        let mut seen = 0;
        let mut count = |url: &str, dom: &Dom, inside: &[bool]| {
            seen += 1;
            let roots = &gold[url];
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
        };
        match method {
            Method::SiteLevel => site_level_over(
                std::slice::from_ref(&file),
                &Params::default(),
                Fingerprints::Subtrees,
                |page, dom, _, inside, model| {
                    assert!(model.labelled, "{}", page.host);
                    count(&page.url, dom, inside)
                },
            ),
            Method::Rtdm(max_pages) => rtdm_over(
                std::slice::from_ref(&file),
                max_pages,
                |page, dom, inside, template| {
                    assert!(template.is_some(), "{}", page.host);
                    count(&page.url, dom, inside)
                },
            ),
        }
        assert_eq!(seen, 600);
        let precision = tp as f64 / (tp + fp) as f64;
        let recall = tp as f64 / (tp + fn_) as f64;
        eprintln!(
            "synthetic, {method:?}: {tp} template nodes found, {fp} false, {fn_} missed: \
             P {precision:.4} R {recall:.4}"
        );
        assert!(tp > 600 * 20, "templates found: {tp}");
        assert!(
            precision >= 0.99 && recall >= 0.99,
            "P {precision} R {recall}"
        );
    }
    let _ = std::fs::remove_file(file);
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

/// A site-level method, as the tests run it.
#[derive(Clone, Copy, Debug)]
enum Method {
    SiteLevel,
    /// RTDM-TD with at most this many sample pages per host.
    Rtdm(u32),
}

/// What removing a host's templates takes from its pages, summed over them.
#[derive(Clone, Copy, Debug, Default)]
struct Removal {
    /// Gold main-content tokens the page without its templates no longer holds.
    gold_lost: u64,
    gold: u64,
    /// Tokens of the page that are not gold (multiset difference), and those removed.
    other_removed: u64,
    other: u64,
    /// The host's template size (hashes for SiteLevel, nodes for RTDM), 0 when it has none.
    template_size: u64,
}

/// Per host (as the gold names it), what removing `method`'s templates takes away.
fn removal_by_host(
    pages: &[gold::GoldPage],
    name: &str,
    method: Method,
) -> BTreeMap<String, Removal> {
    let by_url: HashMap<&str, &gold::GoldPage> =
        pages.iter().map(|p| (p.url.as_str(), p)).collect();
    let bodies: Vec<(&str, &[u8])> = pages
        .iter()
        .map(|p| (p.url.as_str(), p.html.as_slice()))
        .collect();
    let file = warc_file(name, &bodies);
    let mut per_host: BTreeMap<String, Removal> = BTreeMap::new();
    let mut account = |url: &str, dom: &Dom, inside: &[bool], template_size: u64| {
        let Some(gold_page) = by_url.get(url) else {
            panic!("page {url} not in the gold");
        };
        // A gold token is lost when removing the template text takes it away: compare
        // how many of the gold tokens the whole page and the page without templates hold
        // (multisets). A plain overlap with the template text would count every "the" of
        // a menu against the article.
        let gold_tokens = tokens(&gold_page.gold_text);
        let everything = visible_text(dom, &vec![false; inside.len()], false);
        let kept = visible_text(dom, inside, false);
        let (gold_all, gold_kept) = (
            overlap(&gold_tokens, &everything),
            overlap(&gold_tokens, &kept),
        );
        let other_all = tokens(&everything).len() as u64 - gold_all;
        let other_kept = tokens(&kept).len() as u64 - gold_kept;
        let entry = per_host.entry(gold_page.host.clone()).or_default();
        entry.gold_lost += gold_all - gold_kept;
        entry.gold += gold_tokens.len() as u64;
        entry.other_removed += other_all - other_kept;
        entry.other += other_all;
        entry.template_size = entry.template_size.max(template_size);
    };
    match method {
        Method::SiteLevel => site_level_over(
            std::slice::from_ref(&file),
            &Params::default(),
            Fingerprints::Subtrees,
            |page, dom, _, inside, model| {
                account(&page.url, dom, inside, model.template_count() as u64)
            },
        ),
        Method::Rtdm(max_pages) => rtdm_over(
            std::slice::from_ref(&file),
            max_pages,
            |page, dom, inside, template| {
                let size = template.map_or(0, |t| t.tree.len() as u64);
                account(&page.url, dom, inside, size)
            },
        ),
    }
    let _ = std::fs::remove_file(file);
    per_host
}

fn total(per_host: &BTreeMap<String, Removal>) -> Removal {
    per_host
        .values()
        .fold(Removal::default(), |sum, host| Removal {
            gold_lost: sum.gold_lost + host.gold_lost,
            gold: sum.gold + host.gold,
            other_removed: sum.other_removed + host.other_removed,
            other: sum.other + host.other,
            template_size: sum.template_size + host.template_size,
        })
}

fn share(part: u64, whole: u64) -> f64 {
    part as f64 / whole.max(1) as f64
}

/// The multi-page real hosts: dragnet's hosts with at least 10 pages and cleanportaleval, with
/// dragnet's page count per host; `None` (after a notice) when the shared data is absent.
fn multi_page_real_hosts() -> Option<(Vec<gold::GoldPage>, BTreeMap<String, usize>)> {
    let dragnet_dir = shared_dir("data/dragnet")?;
    let cpe_dir = shared_dir("data/cleanportaleval")?;
    let mut pages = gold::dragnet(&dragnet_dir, 10);
    let dragnet_hosts = gold::host_counts(&pages);
    pages.extend(gold::cleanportaleval(&cpe_dir));
    Some((pages, dragnet_hosts))
}

#[test]
fn real_sites_lose_at_most_two_percent_of_main_content_to_templates() {
    let Some((pages, dragnet_hosts)) = multi_page_real_hosts() else {
        return;
    };
    assert!(pages.len() > 450, "{} pages", pages.len());
    let per_host = removal_by_host(&pages, "real-sites.warc.gz", Method::SiteLevel);
    for (host, removal) in &per_host {
        eprintln!(
            "{host:32} gold tokens {:7}  in templates {:6} ({:5.2}%)  template hashes {}",
            removal.gold,
            removal.gold_lost,
            100.0 * share(removal.gold_lost, removal.gold),
            removal.template_size
        );
    }
    let all = total(&per_host);
    let lost = share(all.gold_lost, all.gold);
    eprintln!(
        "overall: {} of {} gold tokens in template text ({:.3}%); {:.1}% of the other text removed",
        all.gold_lost,
        all.gold,
        100.0 * lost,
        100.0 * share(all.other_removed, all.other)
    );
    assert!(
        lost <= 0.02,
        "{:.3}% of gold tokens lie in templates",
        100.0 * lost
    );
    // Every host with at least 10 pages gets some template.
    for (host, pages) in dragnet_hosts {
        let templates = per_host.get(&host).map_or(0, |r| r.template_size);
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
    for method in [Method::SiteLevel, Method::Rtdm(DEFAULT_SAMPLE_PAGES)] {
        let mut ok = 0;
        let mut exceptions = Vec::new();
        let mut not_in_text = 0;
        let mut check = |url: &str, dom: &Dom, inside: &[bool]| {
            let kept = collapse(&visible_text(dom, inside, false));
            let all = collapse(&visible_text(dom, &vec![false; inside.len()], false));
            let mut lost = Vec::new();
            for (attribute, value) in values[url] {
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
                exceptions.push(format!("{url}: {}", lost.join(", ")));
            }
        };
        match method {
            Method::SiteLevel => site_level_over(
                std::slice::from_ref(&file),
                &Params::default(),
                Fingerprints::Subtrees,
                |page, dom, _, inside, _| check(&page.url, dom, inside),
            ),
            Method::Rtdm(max_pages) => rtdm_over(
                std::slice::from_ref(&file),
                max_pages,
                |page, dom, inside, _| check(&page.url, dom, inside),
            ),
        }
        eprintln!(
            "swde-books, {method:?}: {ok} of 2000 pages keep all title/author/ISBN values \
             outside templates; {not_in_text} values are not in the visible text at all"
        );
        for exception in exceptions.iter().take(20) {
            eprintln!("  exception: {exception}");
        }
        assert!(ok >= 1980, "{method:?}: {ok} pages of 2000");
    }
    let _ = std::fs::remove_file(file);
}

#[test]
fn rtdm_templates_keep_main_content_and_remove_half_of_what_site_level_does() {
    let Some((pages, _)) = multi_page_real_hosts() else {
        return;
    };
    let site_level = total(&removal_by_host(
        &pages,
        "real-sites-sl.warc.gz",
        Method::SiteLevel,
    ));
    let per_host = removal_by_host(
        &pages,
        "real-sites-rtdm.warc.gz",
        Method::Rtdm(DEFAULT_SAMPLE_PAGES),
    );
    for (host, r) in &per_host {
        eprintln!(
            "{host:32} gold lost {:5.2}%  other text removed {:5.1}%  template nodes {}",
            100.0 * share(r.gold_lost, r.gold),
            100.0 * share(r.other_removed, r.other),
            r.template_size
        );
    }
    let rtdm = total(&per_host);
    let (lost, removed) = (
        share(rtdm.gold_lost, rtdm.gold),
        share(rtdm.other_removed, rtdm.other),
    );
    let site_level_removed = share(site_level.other_removed, site_level.other);
    eprintln!(
        "RTDM-TD: {:.3}% of gold tokens lost, {:.1}% of the other text removed \
         (SiteLevel: {:.3}% and {:.1}%)",
        100.0 * lost,
        100.0 * removed,
        100.0 * share(site_level.gold_lost, site_level.gold),
        100.0 * site_level_removed
    );
    assert!(
        lost <= 0.02,
        "RTDM-TD loses {:.3}% of gold tokens",
        100.0 * lost
    );
    assert!(
        removed >= 0.5 * site_level_removed,
        "RTDM-TD removes {removed:.3} of the other text, SiteLevel {site_level_removed:.3}"
    );
}
