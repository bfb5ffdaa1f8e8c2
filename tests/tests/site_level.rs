//! SiteLevel(θ) against gold: the synthetic crawl's own gold, human main-content gold on real
//! sites (dragnet, cleanportaleval), and SWDE's attribute values, which must survive.
//!
//! RTDM-TD (seed 002) and ETDM over a menu's complete subdigraph (seed 004) are measured beside
//! SiteLevel(θ) on the same gold.
//!
//! These run the library path (`stencil_tests::site_level_over`); `jobs/tests/site.rs` checks
//! that the timely job produces the same tables whatever the workers and processes.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use stencil_operators::dom::Dom;
use stencil_operators::reading::page::Page;
use stencil_operators::site::rtdm::Labelled;
use stencil_operators::site::rtdm_template::{Template, DEFAULT_SAMPLE_PAGES};
use stencil_operators::site::sections::Section;
use stencil_operators::site::site_level::{Fingerprints, HostModel, Params};
use stencil_operators::site::templates::RegexHost;
use stencil_operators::site::tree_regex::DEFAULT_TEMPLATE_SAMPLE;
use stencil_operators::synth;
use stencil_tests::gold::{self, tokens};
use stencil_tests::{
    etdm_apply, etdm_crawl, etdm_over, etdm_templates, regex_over, rtdm_over, shared_dir,
    site_level_over, warc_file, EtdmCs, EtdmHost,
};

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
    // With each host's home page and the section pages its menu links to, as a crawl that
    // follows the menu has them: seed 004's key page and complete subdigraph exist.
    let crawl = synth::crawl_with_menu_pages(20, 30, 7);
    let gold: HashMap<String, Vec<Vec<usize>>> = crawl
        .iter()
        .map(|p| (p.url.clone(), p.template_paths.clone()))
        .collect();
    let pages: Vec<(&str, &[u8])> = crawl
        .iter()
        .map(|p| (p.url.as_str(), p.html.as_bytes()))
        .collect();
    let file = warc_file("synthetic.warc.gz", &pages);
    for method in [
        Method::SiteLevel,
        Method::Rtdm(DEFAULT_SAMPLE_PAGES),
        ETDM,
        ETDM_STAND_IN,
        TREE_REGEX,
    ] {
        let (mut tp, mut fp, mut fn_) = (0u64, 0u64, 0u64);
        let mut seen = 0;
        let mut etdm_hosts: BTreeMap<String, EtdmHost> = BTreeMap::new();
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
        method.over(&file, |page, dom, inside, host| {
            match host {
                HostRun::SiteLevel(model) => assert!(model.labelled, "{}", page.host),
                HostRun::Rtdm(found) => assert!(!found.is_empty(), "{}", page.host),
                HostRun::TreeRegex(found, _) => assert!(found.is_some(), "{}", page.host),
                HostRun::Etdm(host) => {
                    etdm_hosts.insert(page.host.clone(), host.clone());
                }
            }
            count(&page.url, dom, inside)
        });
        assert_eq!(seen, crawl.len());
        if let Method::Etdm { .. } = method {
            // The home page is every host's key page and its menu's section pages link to
            // one another: every host has its n-CS and an ETDM template. (Without the menu's
            // pages, `synth::crawl`'s articles alone, no host has a CS: the jobs' tests check
            // the fallback to SiteLevel(θ).)
            let with_etdm = etdm_hosts.values().filter(|h| h.etdm).count();
            let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
            for host in etdm_hosts.values() {
                *sizes.entry(host.cs_pages).or_default() += 1;
            }
            eprintln!(
                "synthetic, {method:?}: {with_etdm} of {} hosts have an ETDM template, the others \
                 SiteLevel's; hosts by CS size m: {sizes:?}",
                etdm_hosts.len()
            );
            assert_eq!(etdm_hosts.len(), 20);
            assert_eq!(with_etdm, 20);
        }
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    SiteLevel,
    /// RTDM-TD with at most this many sample pages per host.
    Rtdm(u32),
    /// Seed 003's tree regular expressions: (sample pages per host, pages a group's template
    /// is learned from).
    TreeRegex(u32, u32),
    /// ETDM over the key page's n pages `cs` chooses (seed 004's n-CS or a stand-in) with
    /// threshold t; SiteLevel on hosts without a CS.
    Etdm {
        n: usize,
        t: u32,
        cs: EtdmCs,
    },
}

/// What a method's run says of a page's host.
enum HostRun<'a> {
    SiteLevel(&'a HostModel),
    /// The host's RTDM-TD templates (none, or one per group of its sample pages).
    Rtdm(&'a [Template]),
    Etdm(&'a EtdmHost),
    /// The host's tree regular expressions, if any, and the page's sections.
    TreeRegex(Option<&'a RegexHost>, &'a [Section]),
}

impl Method {
    /// Runs the method over the WARC `file` as the library computes it, and gives `visit`
    /// every page with its DOM, its inside-template mask and what the run says of its host.
    fn over(self, file: &Path, mut visit: impl FnMut(&Page, &Dom, &[bool], HostRun<'_>)) {
        let files = [file.to_path_buf()];
        match self {
            Method::SiteLevel => site_level_over(
                &files,
                &Params::default(),
                Fingerprints::Subtrees,
                |page, dom, _, inside, model| visit(page, dom, inside, HostRun::SiteLevel(model)),
            ),
            Method::Rtdm(max_pages) => rtdm_over(&files, max_pages, |page, dom, inside, t| {
                visit(page, dom, inside, HostRun::Rtdm(t))
            }),
            Method::Etdm { n, t, cs } => etdm_over(&files, n, t, cs, |page, dom, inside, host| {
                visit(page, dom, inside, HostRun::Etdm(host))
            }),
            Method::TreeRegex(max_pages, k) => regex_over(
                &files,
                (max_pages, k),
                |page, dom, inside, host, sections| {
                    visit(page, dom, inside, HostRun::TreeRegex(host, sections))
                },
            ),
        }
    }
}

/// Seed 003's method as the job runs it by default: 25 sample pages a host, a group's template
/// learned from 15.
const TREE_REGEX: Method = Method::TreeRegex(DEFAULT_SAMPLE_PAGES, DEFAULT_TEMPLATE_SAMPLE);

/// Seed 004's configuration (§5.2.2: n = 3, t = 2).
const ETDM: Method = Method::Etdm {
    n: 3,
    t: 2,
    cs: EtdmCs::Links,
};

/// Seed 004's configuration over the stand-in CS ([`EtdmCs::Sample`]): the test data's pages
/// do not link to one another, so this is how ETDM's own template is measured on them.
const ETDM_STAND_IN: Method = Method::Etdm {
    n: 3,
    t: 2,
    cs: EtdmCs::Sample,
};

/// What removing a host's templates takes from its pages, summed over them.
#[derive(Clone, Copy, Debug, Default)]
struct Removal {
    /// Gold main-content tokens the page holds and its text without its templates does not.
    gold_lost: u64,
    gold: u64,
    /// Tokens of the page that are not gold (multiset difference), and those removed.
    other_removed: u64,
    other: u64,
    /// The host's template size (hashes for SiteLevel, nodes for RTDM and ETDM), 0 when it
    /// has none.
    template_size: u64,
    /// ETDM only: 1 when the host's template is ETDM's (summed: hosts), 0 when SiteLevel
    /// stood in; and the size m of the host's complete subdigraph.
    etdm_hosts: u64,
    cs_pages: u64,
    /// The host's templates (RTDM-TD's and seed 003's groups).
    templates: u64,
    /// Pages and their sections (seed 003's method only).
    pages: u64,
    sections: u64,
}

impl Removal {
    /// The share of the tokens removed with the templates that are not gold: the noise call's
    /// precision by gold tokens.
    fn precision(&self) -> f64 {
        share(self.other_removed, self.other_removed + self.gold_lost)
    }

    /// The share of gold main-content tokens lost with the templates.
    fn lost(&self) -> f64 {
        share(self.gold_lost, self.gold)
    }

    /// The share of the other tokens removed with the templates.
    fn removed(&self) -> f64 {
        share(self.other_removed, self.other)
    }
}

/// [`Removal`] per host (as the gold names it), page by page.
struct Accounts<'a> {
    by_url: HashMap<&'a str, &'a gold::GoldPage>,
    per_host: BTreeMap<String, Removal>,
    /// Per URL, what does not depend on the templates: the gold's tokens, and how many gold
    /// and other tokens the whole page holds (kept across runs over the same pages).
    whole: HashMap<String, (Vec<String>, u64, u64)>,
}

impl<'a> Accounts<'a> {
    fn new(pages: &'a [gold::GoldPage]) -> Self {
        Accounts {
            by_url: pages.iter().map(|p| (p.url.as_str(), p)).collect(),
            per_host: BTreeMap::new(),
            whole: HashMap::new(),
        }
    }

    fn account(&mut self, url: &str, dom: &Dom, inside: &[bool], template_size: u64) {
        let Some(gold_page) = self.by_url.get(url) else {
            panic!("page {url} not in the gold");
        };
        // A gold token is lost when removing the template text takes it away: compare
        // how many of the gold tokens the whole page and the page without templates hold
        // (multisets). A plain overlap with the template text would count every "the" of
        // a menu against the article.
        let (gold_tokens, gold_all, other_all) =
            self.whole.entry(url.to_string()).or_insert_with(|| {
                let gold_tokens = tokens(&gold_page.gold_text);
                let everything = visible_text(dom, &vec![false; inside.len()], false);
                let gold_all = overlap(&gold_tokens, &everything);
                let other_all = tokens(&everything).len() as u64 - gold_all;
                (gold_tokens, gold_all, other_all)
            });
        let (gold_all, other_all) = (*gold_all, *other_all);
        let kept = visible_text(dom, inside, false);
        let gold_kept = overlap(gold_tokens, &kept);
        let other_kept = tokens(&kept).len() as u64 - gold_kept;
        let entry = self.per_host.entry(gold_page.host.clone()).or_default();
        entry.gold_lost += gold_all - gold_kept;
        entry.gold += gold_tokens.len() as u64;
        entry.other_removed += other_all - other_kept;
        entry.other += other_all;
        entry.template_size = entry.template_size.max(template_size);
    }

    /// Sets the host's number of templates.
    fn templates(&mut self, url: &str, templates: u64) {
        let Some(gold_page) = self.by_url.get(url) else {
            panic!("page {url} not in the gold");
        };
        self.per_host
            .entry(gold_page.host.clone())
            .or_default()
            .templates = templates;
    }

    /// Counts a page's sections toward its host.
    fn sections(&mut self, url: &str, sections: u64) {
        let Some(gold_page) = self.by_url.get(url) else {
            panic!("page {url} not in the gold");
        };
        let entry = self.per_host.entry(gold_page.host.clone()).or_default();
        entry.pages += 1;
        entry.sections += sections;
    }

    /// [`Accounts::account`] for a page of an ETDM run.
    fn account_etdm(&mut self, url: &str, dom: &Dom, inside: &[bool], host: &EtdmHost) {
        let size = if host.etdm {
            host.template_nodes
        } else {
            host.site_level_templates
        };
        self.account(url, dom, inside, size as u64);
        let Some(gold_page) = self.by_url.get(url) else {
            panic!("page {url} not in the gold");
        };
        let entry = self.per_host.entry(gold_page.host.clone()).or_default();
        entry.etdm_hosts = u64::from(host.etdm);
        entry.cs_pages = host.cs_pages as u64;
    }
}

/// Per host (as the gold names it), what removing `method`'s templates takes away.
fn removal_by_host(
    pages: &[gold::GoldPage],
    name: &str,
    method: Method,
) -> BTreeMap<String, Removal> {
    let file = gold_warc(pages, name);
    let mut accounts = Accounts::new(pages);
    method.over(&file, |page, dom, inside, host| match host {
        HostRun::SiteLevel(model) => {
            accounts.account(&page.url, dom, inside, model.template_count() as u64)
        }
        HostRun::Rtdm(found) => {
            let size = found.iter().map(|t| t.tree.len() as u64).sum();
            accounts.account(&page.url, dom, inside, size);
            accounts.templates(&page.url, found.len() as u64);
        }
        HostRun::Etdm(host) => accounts.account_etdm(&page.url, dom, inside, host),
        HostRun::TreeRegex(host, sections) => {
            let size = host.map_or(0, |h| h.templates.iter().map(|(r, _)| r.len() as u64).sum());
            accounts.account(&page.url, dom, inside, size);
            accounts.sections(&page.url, sections.len() as u64);
            accounts.templates(&page.url, host.map_or(0, |h| h.templates.len() as u64));
        }
    });
    let _ = std::fs::remove_file(file);
    accounts.per_host
}

/// The gold pages as a WARC file named `name`.
fn gold_warc(pages: &[gold::GoldPage], name: &str) -> std::path::PathBuf {
    let bodies: Vec<(&str, &[u8])> = pages
        .iter()
        .map(|p| (p.url.as_str(), p.html.as_slice()))
        .collect();
    warc_file(name, &bodies)
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
            etdm_hosts: sum.etdm_hosts + host.etdm_hosts,
            cs_pages: sum.cs_pages + host.cs_pages,
            pages: sum.pages + host.pages,
            templates: sum.templates + host.templates,
            sections: sum.sections + host.sections,
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
            100.0 * removal.lost(),
            removal.template_size
        );
    }
    let all = total(&per_host);
    let lost = all.lost();
    eprintln!(
        "overall: {} of {} gold tokens in template text ({:.3}%); {:.1}% of the other text \
         removed; precision {:.3}",
        all.gold_lost,
        all.gold,
        100.0 * lost,
        100.0 * all.removed(),
        all.precision()
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
    for method in [
        Method::SiteLevel,
        Method::Rtdm(DEFAULT_SAMPLE_PAGES),
        ETDM,
        ETDM_STAND_IN,
        TREE_REGEX,
    ] {
        let mut ok = 0;
        let mut etdm_hosts: BTreeMap<String, EtdmHost> = BTreeMap::new();
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
        method.over(&file, |page, dom, inside, host| {
            if let HostRun::Etdm(host) = host {
                etdm_hosts.insert(page.host.clone(), host.clone());
            }
            check(&page.url, dom, inside)
        });
        // SWDE's links carry a session id (`/books?id=4779530069995`) and reach no page of
        // the crawl: over the n-CS the site has no CS and SiteLevel stands in; the stand-in
        // CS measures ETDM's template.
        for (host, info) in &etdm_hosts {
            eprintln!("swde-books, {method:?}: {host}: {info:?}");
        }
        if method == ETDM_STAND_IN {
            assert!(etdm_hosts.values().all(|h| h.etdm), "{etdm_hosts:?}");
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
            100.0 * r.lost(),
            100.0 * r.removed(),
            r.template_size
        );
    }
    let rtdm = total(&per_host);
    let (lost, removed) = (rtdm.lost(), rtdm.removed());
    let site_level_removed = site_level.removed();
    eprintln!(
        "RTDM-TD: {:.3}% of gold tokens lost, {:.1}% of the other text removed, precision \
         {:.3} (SiteLevel: {:.3}% and {:.1}%)",
        100.0 * lost,
        100.0 * removed,
        rtdm.precision(),
        100.0 * site_level.lost(),
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

/// Hosts with two templates each: dragnet's hosts with at least 10 pages, sorted and mixed
/// in pairs under one name (`docs/bench/make_mixed.py` builds the same crawl). RTDM-TD over
/// all of a mixed host's pages keeps nothing below `<html>`; grouping the sample pages by
/// structure first gives each design its template, for RTDM-TD and for tree regular
/// expressions alike.
#[test]
fn mapping_methods_find_a_template_for_each_design_of_hosts_mixed_in_pairs() {
    let Some(dir) = shared_dir("data/dragnet") else {
        return;
    };
    let mut pages = gold::dragnet(&dir, 10);
    let hosts: Vec<String> = gold::host_counts(&pages).into_keys().collect();
    let mixed: BTreeMap<&str, String> = hosts
        .iter()
        .enumerate()
        .filter(|(i, _)| i / 2 < hosts.len() / 2)
        .map(|(i, host)| (host.as_str(), format!("mix{}.example", i / 2)))
        .collect();
    pages.retain(|p| mixed.contains_key(p.host.as_str()));
    for page in &mut pages {
        let name = mixed[page.host.as_str()].clone();
        let path = page.url.split_once("://").map_or("", |(_, rest)| rest);
        page.url = format!("http://{name}/{path}");
        page.host = name;
    }
    assert!(pages.len() > 300, "{} pages", pages.len());
    for method in [Method::Rtdm(DEFAULT_SAMPLE_PAGES), TREE_REGEX] {
        mixed_hosts_by(&pages, method, hosts.len() / 2);
    }
}

/// What [`mapping_methods_find_a_template_for_each_design_of_hosts_mixed_in_pairs`] asks of
/// one method over the `mixed` hosts' pages.
fn mixed_hosts_by(pages: &[gold::GoldPage], method: Method, mixed: usize) {
    let per_host = removal_by_host(pages, "mixed.warc.gz", method);
    for (host, r) in &per_host {
        eprintln!(
            "{method:?} {host:18} gold lost {:5.2}%  other text removed {:5.1}%  templates {} \
             ({} nodes)",
            100.0 * r.lost(),
            100.0 * r.removed(),
            r.templates,
            r.template_size
        );
    }
    assert_eq!(per_host.len(), mixed);
    for (host, r) in &per_host {
        // Each of the two designs has at least 2 × --min-cluster-pages pages.
        assert!(
            r.templates >= 2,
            "{method:?} {host}: {} templates",
            r.templates
        );
    }
    let all = total(&per_host);
    eprintln!(
        "mixed hosts, {method:?}: {:.3}% of gold tokens lost, {:.1}% of the other text removed",
        100.0 * all.lost(),
        100.0 * all.removed()
    );
    assert!(
        all.lost() <= 0.03,
        "{:.3}% of gold lost",
        100.0 * all.lost()
    );
    assert!(
        all.removed() >= 0.2,
        "{:.3} of the other text removed",
        all.removed()
    );
}

/// `per_host` restricted to the hosts `keep` says.
fn hosts_where(
    per_host: &BTreeMap<String, Removal>,
    keep: impl Fn(&str) -> bool,
) -> BTreeMap<String, Removal> {
    per_host
        .iter()
        .filter(|(host, _)| keep(host))
        .map(|(host, r)| (host.clone(), *r))
        .collect()
}

/// Seed 004's ETDM (n = 3, t = 2) on the multi-page real hosts, against SiteLevel(θ), and over
/// the stand-in CS.
///
/// The real hosts hardly have a CS: dragnet's pages come without URLs (the loader names them
/// `https://{host}/dragnet/{id}`), so no page's link can reach another; of cleanportaleval's
/// sites only bbc.co.uk's key page reaches a 3-CS (washingtonpost's reaches one page of the
/// crawl). 38 of the 40 gold hosts fall back to SiteLevel, so the overall figures are
/// SiteLevel's; the stand-in CS measures ETDM's own template on every host. On bbc.co.uk, with
/// its real CS, ETDM removes over half of the non-gold text and no gold (docs/evaluation.md)
/// because nodes are equal on tag and id: with classes compared too, its key page's
/// `<body class="news disable-wide-advert">` is not its CS pages' `<body class="news">` and
/// nothing below the body is shared.
#[test]
fn etdm_templates_on_real_hosts() {
    let Some((pages, _)) = multi_page_real_hosts() else {
        return;
    };
    let site_level = removal_by_host(&pages, "real-sites-sl-etdm.warc.gz", Method::SiteLevel);
    let per_host = removal_by_host(&pages, "real-sites-etdm.warc.gz", ETDM);
    let sampled = removal_by_host(&pages, "real-sites-etdm-sample.warc.gz", ETDM_STAND_IN);
    eprintln!(
        "{:32} {:8} {:>2} {:>9} {:>9} {:>9} | stand-in: {:>9} {:>9} {:>8}",
        "host",
        "method",
        "m",
        "gold lost",
        "removed",
        "template",
        "gold lost",
        "removed",
        "template"
    );
    for (host, r) in &per_host {
        let s = &sampled[host];
        eprintln!(
            "{host:32} {:8} {:2} {:8.2}% {:8.1}% {:9} | stand-in: {:8.2}% {:8.1}% {:8}",
            if r.etdm_hosts == 1 {
                "etdm"
            } else {
                "fallback"
            },
            r.cs_pages,
            100.0 * r.lost(),
            100.0 * r.removed(),
            r.template_size,
            100.0 * s.lost(),
            100.0 * s.removed(),
            s.template_size
        );
    }
    let all = total(&per_host);
    let hosts = per_host.len() as u64;
    let sl = total(&site_level);
    let (lost, removed) = (all.lost(), all.removed());
    let site_level_removed = sl.removed();
    eprintln!(
        "{ETDM:?}: {} of {hosts} hosts have a CS and an ETDM template, {:.0}% have none and \
         fall back to SiteLevel; overall {:.3}% of gold tokens lost, {:.1}% of the other text \
         removed, precision {:.3} (SiteLevel: {:.3}% and {:.1}%)",
        all.etdm_hosts,
        100.0 * share(hosts - all.etdm_hosts, hosts),
        100.0 * lost,
        100.0 * removed,
        all.precision(),
        100.0 * sl.lost(),
        100.0 * site_level_removed
    );
    let with_etdm = |host: &str| per_host[host].etdm_hosts == 1;
    let (etdm_only, site_level_there) = (
        total(&hosts_where(&per_host, with_etdm)),
        total(&hosts_where(&site_level, with_etdm)),
    );
    eprintln!(
        "  on the {} hosts with an ETDM template: ETDM {:.3}% gold lost, {:.1}% other removed; \
         SiteLevel {:.3}% and {:.1}%",
        all.etdm_hosts,
        100.0 * etdm_only.lost(),
        100.0 * etdm_only.removed(),
        100.0 * site_level_there.lost(),
        100.0 * site_level_there.removed()
    );
    let stand_in = total(&sampled);
    let (stand_in_lost, stand_in_removed) = (stand_in.lost(), stand_in.removed());
    eprintln!(
        "{ETDM_STAND_IN:?} (not seed 004's CS): {} of {hosts} hosts with an ETDM template; \
         {:.3}% of gold tokens lost, {:.1}% of the other text removed, precision {:.3}",
        stand_in.etdm_hosts,
        100.0 * stand_in_lost,
        100.0 * stand_in_removed,
        stand_in.precision()
    );
    // The CS search does find bbc.co.uk's (its gold names two hosts, one site).
    assert!(all.etdm_hosts >= 1, "no real host has a CS");
    // The bars hold for the method as specified, but mostly through SiteLevel standing in.
    assert!(
        lost <= 0.02,
        "ETDM loses {:.3}% of gold tokens",
        100.0 * lost
    );
    assert!(
        removed >= 0.5 * site_level_removed,
        "ETDM removes {removed:.3} of the other text, SiteLevel {site_level_removed:.3}"
    );
    // ETDM's own template meets the bars too (the figures are printed above; docs/evaluation.md
    // has them). Pages of two templates on one site (washingtonpost.com) stop the mapping at
    // `<html>`; online.wsj.com's stops high too.
    assert!(
        stand_in_lost <= 0.02,
        "ETDM (stand-in CS) loses {:.3}% of gold tokens",
        100.0 * stand_in_lost
    );
    assert!(
        stand_in_removed >= 0.5 * site_level_removed,
        "ETDM (stand-in CS) removes {stand_in_removed:.3} of the other text, SiteLevel \
         {site_level_removed:.3}"
    );
}

/// Seed 004 §5.2.2's trade-off on the multi-page real hosts: ETDM's removal for n in 2..=5
/// and t in 1..=3 (t ≤ n), over the n-CS (hosts without one fall back to SiteLevel) and over
/// the stand-in CS, which every host has.
#[test]
fn etdm_n_and_t_trade_off_on_real_hosts() {
    let Some((pages, _)) = multi_page_real_hosts() else {
        return;
    };
    let file = gold_warc(&pages, "real-sites-etdm-sweep.warc.gz");
    let files = std::slice::from_ref(&file);
    let crawl = etdm_crawl(files);
    let mut accounts = Accounts::new(&pages);
    type Row = (f64, f64, u64, f64, f64);
    // Per CS choice, (n, t) → (gold lost, other removed, hosts with an ETDM template, and the
    // first two on those hosts only).
    let mut table: BTreeMap<(bool, usize, u32), Row> = BTreeMap::new();
    // The removal is a function of the sites' templates: configurations that find the same
    // templates (most of the n-CS rows: only two sites have a CS) are measured once.
    let mut measured: Vec<(Vec<Option<stencil_operators::site::rtdm::Tree>>, Row)> = Vec::new();
    for cs in [EtdmCs::Links, EtdmCs::Sample] {
        eprintln!(
            "{cs:?}:  n  t | gold lost  other removed | ETDM hosts | on them: gold lost  \
             other removed"
        );
        for n in 2..=5usize {
            for t in 1..=3u32 {
                if t as usize > n {
                    continue;
                }
                let templates = etdm_templates(&crawl, n, t, cs);
                let key: Vec<_> = templates.hosts.values().map(|(_, t)| t.clone()).collect();
                let row = match measured.iter().find(|(k, _)| *k == key) {
                    Some(&(_, row)) => row,
                    None => {
                        etdm_apply(files, &crawl, &templates, |page, dom, inside, host| {
                            accounts.account_etdm(&page.url, dom, inside, host)
                        });
                        let per_host = std::mem::take(&mut accounts.per_host);
                        let all = total(&per_host);
                        let on = total(&hosts_where(&per_host, |h| per_host[h].etdm_hosts == 1));
                        let row = (
                            all.lost(),
                            all.removed(),
                            all.etdm_hosts,
                            on.lost(),
                            on.removed(),
                        );
                        measured.push((key, row));
                        row
                    }
                };
                eprintln!(
                    "        {n}  {t} | {:8.3}%  {:12.1}% | {:10} | {:17.3}%  {:12.1}%",
                    100.0 * row.0,
                    100.0 * row.1,
                    row.2,
                    100.0 * row.3,
                    100.0 * row.4
                );
                table.insert((cs == EtdmCs::Sample, n, t), row);
            }
        }
    }
    eprintln!("{} distinct sets of templates measured", measured.len());
    let _ = std::fs::remove_file(file);
    assert_eq!(table.len(), 2 * 11);
    assert!(table.contains_key(&(false, 3, 2)) && table.contains_key(&(true, 3, 2)));
    for (&(_, n, t), &(lost, ..)) in &table {
        assert!(lost <= 0.02, "n {n} t {t}: {:.3}% gold lost", 100.0 * lost);
    }
    // Over the stand-in every host has an ETDM template, and a larger t keeps fewer nodes
    // (a node mapped onto t + 1 pages is mapped onto t), so less is removed and less gold
    // lost. With t = 1 the template is what any of the n pages shares, and the stand-in's n
    // pages are among its n + 1: removal grows with n. (Over the n-CS neither need hold: a
    // larger t sends more hosts to SiteLevel, which removes more.)
    for n in 2..=5usize {
        let hosts = table[&(true, n, 1)].2;
        assert_eq!(hosts, 40, "n {n}");
        for t in 2..=(n.min(3) as u32) {
            let (less, more) = (table[&(true, n, t)], table[&(true, n, t - 1)]);
            assert!(
                less.0 <= more.0 && less.1 <= more.1,
                "n {n}: t {t} {less:?} against t {} {more:?}",
                t - 1
            );
        }
        if n > 2 {
            let (now, before) = (table[&(true, n, 1)], table[&(true, n - 1, 1)]);
            assert!(
                now.1 >= before.1,
                "t 1: n {n} {now:?} against n {} {before:?}",
                n - 1
            );
        }
    }
}

/// Seed 003's tree regular expressions on the multi-page real hosts: the noise sections' tokens
/// are not gold (precision by gold tokens at least the seed's 0.91 less a point), and little
/// gold is lost.
#[test]
fn tree_regex_noise_is_not_main_content() {
    let Some((pages, _)) = multi_page_real_hosts() else {
        return;
    };
    let per_host = removal_by_host(&pages, "real-sites-regex.warc.gz", TREE_REGEX);
    for (host, r) in &per_host {
        eprintln!(
            "{host:32} gold lost {:5.2}%  other text removed {:5.1}%  precision {:.3}  \
             sections/page {:5.1}  template nodes {}",
            100.0 * r.lost(),
            100.0 * r.removed(),
            r.precision(),
            share(r.sections, r.pages),
            r.template_size
        );
    }
    let all = total(&per_host);
    let with_template = per_host.values().filter(|r| r.template_size > 0).count();
    eprintln!(
        "tree-regex: {:.3}% of gold tokens lost, {:.1}% of the other text removed, precision \
         {:.3}, {:.1} sections a page, {with_template} of {} hosts with a template",
        100.0 * all.lost(),
        100.0 * all.removed(),
        all.precision(),
        share(all.sections, all.pages),
        per_host.len()
    );
    assert!(
        all.lost() <= 0.02,
        "{:.3}% of gold lost",
        100.0 * all.lost()
    );
    assert!(all.precision() >= 0.9, "precision {:.3}", all.precision());
    assert_eq!(with_template, per_host.len());
}

/// A synthetic crawl whose hosts have two templates (articles, and listings of 3 to 12 cards
/// with an optional "featured" block): the groups are the generator's designs, and the
/// listing's expression has a `*` whose items are each page's cards and a `?` over the
/// featured block, on as many sample pages as have it.
#[test]
fn tree_regex_recovers_the_generators_designs_lists_and_optional_blocks() {
    use stencil_operators::site::clusters::{DEFAULT_MIN_CLUSTER_PAGES, DEFAULT_THRESHOLD};
    use stencil_operators::site::rtdm::NONE;
    use stencil_operators::site::site_level::url_key;
    use stencil_operators::site::tree_regex::{learn_groups, page_tree, Bounds, Op};
    let crawl = synth::multi_template_crawl(6, 12, 5);
    let mut hosts: BTreeMap<
        String,
        Vec<(
            u64,
            synth::Design,
            Dom,
            stencil_operators::site::tree_regex::RegexPage,
        )>,
    > = BTreeMap::new();
    for (page, design) in &crawl {
        let host = page.url.split('/').nth(2).unwrap_or("").to_string();
        let dom = stencil_operators::dom::parse(&page.html, 512);
        let sums = stencil_operators::dom::subtree::summarize(&dom, &host);
        let tree = page_tree(&dom, &sums);
        hosts
            .entry(host)
            .or_default()
            .push((url_key(&page.url), *design, dom, tree));
    }
    assert_eq!(hosts.len(), 6);
    for (host, mut pages) in hosts {
        // The job's sample order: by URL key.
        pages.sort_by_key(|(key, ..)| *key);
        let trees: Vec<_> = pages.iter().map(|(_, _, _, p)| p.tree.clone()).collect();
        let groups = (DEFAULT_MIN_CLUSTER_PAGES, DEFAULT_THRESHOLD);
        let found = learn_groups(trees, groups, DEFAULT_TEMPLATE_SAMPLE, Bounds::default());
        assert_eq!(found.len(), 2, "{host}: one template per design");
        let regex_host = RegexHost::of_groups((0, 0), found, 0);
        // Every page of a design is cleaned by the same template, the two designs by two.
        let mut number_of: BTreeMap<bool, std::collections::BTreeSet<u32>> = BTreeMap::new();
        for (_, design, _, page) in &pages {
            let number = regex_host
                .template_number(&page.tree)
                .expect("a template fits");
            number_of.entry(design.listing).or_default().insert(number);
        }
        let (articles, listings) = (&number_of[&false], &number_of[&true]);
        assert!(
            articles.len() == 1 && listings.len() == 1 && articles != listings,
            "{host}: {number_of:?}"
        );
        let listing = *listings.iter().next().expect("a number");
        let regex = &regex_host.templates[listing as usize].0;
        let listing_pages: Vec<_> = pages.iter().filter(|(_, d, ..)| d.listing).collect();
        // A `*` whose items on every listing page are its cards.
        let mut cards_star: Option<u32> = None;
        for (_, design, _, page) in &listing_pages {
            let matched = regex.matched(&page.tree);
            assert!(matched.fits(), "{host}: a listing page fits its template");
            let mut items: BTreeMap<u32, usize> = BTreeMap::new();
            for &star in matched.star.iter().filter(|&&s| s != NONE) {
                *items.entry(star).or_default() += 1;
            }
            let candidates: Vec<u32> = items
                .iter()
                .filter(|(_, &n)| n == design.cards)
                .map(|(&s, _)| s)
                .collect();
            match cards_star {
                None => cards_star = candidates.first().copied(),
                Some(s) => assert!(
                    candidates.contains(&s),
                    "{host}: {items:?} for {} cards",
                    design.cards
                ),
            }
        }
        assert!(cards_star.is_some(), "{host}: no star over the cards");
        // The featured block: optional, on as many of the pages learned from as have it.
        let learned_from =
            &listing_pages[..listing_pages.len().min(DEFAULT_TEMPLATE_SAMPLE as usize)];
        let featured = learned_from.iter().filter(|(_, d, ..)| d.featured).count() as u32;
        assert!(
            featured > 0 && featured < learned_from.len() as u32,
            "{host}: {featured}"
        );
        let (_, _, dom, page) = learned_from
            .iter()
            .find(|(_, d, ..)| d.featured)
            .expect("a featured page");
        let block = (0..dom.len())
            .find(|&i| dom.tag(i).is_some_and(|t| &**t == "section"))
            .expect("the featured block");
        let at = page
            .dom
            .iter()
            .position(|&d| d as usize == block)
            .expect("it shows") as u32;
        let node = regex.matched(&page.tree).image[at as usize];
        assert_ne!(node, NONE);
        assert_eq!(
            regex.support(node),
            featured,
            "{host}: the featured block's page support"
        );
        let parent = regex.parent(node).expect("a parent");
        assert_eq!(
            regex.op(parent),
            Op::Opt,
            "{host}: the featured block is optional"
        );
        eprintln!(
            "{host}: 2 templates; the listing's has {} nodes, (*, ?, |) = {:?}; featured on {featured} of {}",
            regex.len(),
            regex.operators(),
            learned_from.len()
        );
    }
}
