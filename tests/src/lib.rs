//! Helpers shared by the workspace integration tests.

pub mod clustering;
pub mod end_to_end;
pub mod gold;
pub mod l3s;
pub mod markdown;
pub mod mutate;
pub mod warc_samples;

use std::io::{BufReader, Cursor, Write};
use std::path::PathBuf;

use stencil_operators::reading::page::{to_page, Outcome};
use stencil_operators::reading::warc::write::{http_response, NewRecord, WarcWriter};
use stencil_operators::reading::warc::{self, FileSummary, Limits, ReadItem};
use stencil_operators::site::templates::{HostTemplates, MappedHost, Method};

/// `../shared` beside the repository (or `$STENCIL_SHARED`). When it is missing, tests that
/// need it print a notice and skip — unless `STENCIL_REQUIRE_SHARED=1` (CI), where a missing
/// folder is a failure.
pub fn shared_dir(what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("STENCIL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    let wanted = dir.join(what);
    if wanted.exists() {
        return Some(wanted);
    }
    if std::env::var("STENCIL_REQUIRE_SHARED").as_deref() == Ok("1") {
        panic!(
            "STENCIL_REQUIRE_SHARED=1 but {} is missing",
            wanted.display()
        );
    }
    eprintln!(
        "NOTICE: skipping, {} is not there (fresh clone without ../shared)",
        wanted.display()
    );
    None
}

/// Everything read from a WARC held in memory, in order.
pub struct ReadBack {
    pub items: Vec<ReadItem>,
    pub summary: FileSummary,
}

impl ReadBack {
    pub fn records(&self) -> impl Iterator<Item = &warc::Record> {
        self.items.iter().filter_map(|i| match i {
            ReadItem::Record(r) => Some(r),
            ReadItem::Error(_) => None,
        })
    }
    pub fn errors(&self) -> impl Iterator<Item = &warc::ReadError> {
        self.items.iter().filter_map(|i| match i {
            ReadItem::Error(e) => Some(e),
            ReadItem::Record(_) => None,
        })
    }
    pub fn target_uris(&self) -> Vec<String> {
        self.records()
            .filter_map(|r| r.head.target_uri.clone())
            .collect()
    }
}

pub fn read_bytes(bytes: &[u8], limits: &Limits) -> ReadBack {
    let mut items = Vec::new();
    let summary = warc::read(
        BufReader::new(Cursor::new(bytes.to_vec())),
        limits,
        |item| items.push(item),
    )
    .expect("reading from memory cannot fail to start");
    ReadBack { items, summary }
}

/// One response record: URL, extra HTTP headers, body.
pub struct TestPage<'a> {
    pub url: &'a str,
    pub headers: Vec<(&'a str, &'a str)>,
    pub body: Vec<u8>,
}

impl<'a> TestPage<'a> {
    pub fn html(url: &'a str, body: &str) -> Self {
        TestPage {
            url,
            headers: vec![("Content-Type", "text/html")],
            body: body.as_bytes().to_vec(),
        }
    }
}

/// A warcinfo record followed by one response per page, each record its own gzip member
/// (Common Crawl style) or all plain.
pub fn build_warc(pages: &[TestPage<'_>], gzip: bool) -> Vec<u8> {
    let mut writer = WarcWriter::new(Vec::new(), gzip);
    writer
        .write(&NewRecord {
            record_type: "warcinfo",
            target_uri: None,
            date: "2026-11-21T00:00:00Z",
            content_type: "application/warc-fields",
            block: b"software: stencil-tests\r\n",
        })
        .expect("writing to memory");
    for page in pages {
        let block = http_response(200, &page.headers, &page.body);
        writer
            .write(&NewRecord {
                record_type: "response",
                target_uri: Some(page.url),
                date: "2026-11-21T00:00:00Z",
                content_type: "application/http; msgtype=response",
                block: &block,
            })
            .expect("writing to memory");
    }
    writer.into_inner()
}

/// Gzips a whole file as one stream (how many tools other than Common Crawl compress WARCs).
pub fn gzip_whole(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

/// The outcome of every record, in order.
pub fn outcomes(read: ReadBack, limits: &Limits) -> Vec<Outcome> {
    read.items
        .into_iter()
        .filter_map(|item| match item {
            ReadItem::Record(record) => Some(to_page(record, limits).1),
            ReadItem::Error(_) => None,
        })
        .collect()
}

/// The decoded HTML of every page, in order.
pub fn page_html(read: ReadBack, limits: &Limits) -> Vec<String> {
    outcomes(read, limits)
        .into_iter()
        .filter_map(|o| match o {
            Outcome::Page(p) => Some(p.html),
            _ => None,
        })
        .collect()
}

/// SiteLevel(θ)'s model of every host of WARC `files` (by `site_of`), learned in memory.
fn site_level_models(
    files: &[PathBuf],
    params: &stencil_operators::site::site_level::Params,
    kind: stencil_operators::site::site_level::Fingerprints,
) -> std::collections::BTreeMap<String, stencil_operators::site::site_level::HostModel> {
    use stencil_operators::dom::subtree::summarize;
    use stencil_operators::site::site_level::{self as sl, PageFingerprints};
    let mut pages = Vec::new();
    for_each_page_of(files, |page, dom| {
        let sums = summarize(dom, &page.host);
        pages.push(PageFingerprints {
            host: sl::site_of(&page.host).to_string(),
            url_key: sl::url_key(&page.url),
            fingerprints: sl::fingerprints(dom, &sums, kind),
        });
    });
    sl::learn(pages, params, kind)
}

/// SiteLevel(θ) over WARC files as `stencil site` computes it — a first pass that learns each
/// host's model, a second that looks at every page against it — without the dataflow. `visit`
/// gets each page of the second pass with its DOM, subtree sums, inside-template mask and
/// host model.
pub fn site_level_over(
    files: &[PathBuf],
    params: &stencil_operators::site::site_level::Params,
    kind: stencil_operators::site::site_level::Fingerprints,
    mut visit: impl FnMut(
        &stencil_operators::reading::page::Page,
        &stencil_operators::dom::Dom,
        &[stencil_operators::dom::subtree::Subtree],
        &[bool],
        &stencil_operators::site::site_level::HostModel,
    ),
) {
    use stencil_operators::dom::subtree::summarize;
    use stencil_operators::site::site_level as sl;
    let models = site_level_models(files, params, kind);
    for_each_page_of(files, |page, dom| {
        let model = &models[sl::site_of(&page.host)];
        let sums = summarize(dom, &page.host);
        let roots = sl::template_roots(dom, &sums, model, kind);
        let inside = sl::inside_templates(dom, &roots);
        visit(page, dom, &sums, &inside, model);
    });
}

/// RTDM-TD (seed 002) over WARC files as the library computes it: a first pass keeps, per host,
/// the label trees of its `max_pages` pages with the smallest URL keys (SiteLevel's sample
/// order) and finds the host's template from them; a second maps every page against its
/// host's template. `visit` gets each page with its DOM, its inside-template mask (below a
/// wholly covered node, as SiteLevel marks templates) and its host's template, if any.
pub fn rtdm_over(
    files: &[PathBuf],
    max_pages: u32,
    mut visit: impl FnMut(
        &stencil_operators::reading::page::Page,
        &stencil_operators::dom::Dom,
        &[bool],
        &[stencil_operators::site::rtdm_template::Template],
    ),
) {
    use std::collections::BTreeMap;
    use stencil_operators::site::clusters::{
        find_templates, DEFAULT_MIN_CLUSTER_PAGES, DEFAULT_THRESHOLD,
    };
    use stencil_operators::site::rtdm::Limits as MapLimits;
    use stencil_operators::site::rtdm_template::label_tree;
    use stencil_operators::site::site_level::{site_of, Fingerprints};
    let samples = samples_of(files, max_pages, label_tree);
    let templates: BTreeMap<String, _> = samples
        .into_iter()
        .map(|(host, pages)| {
            let groups = (DEFAULT_MIN_CLUSTER_PAGES, DEFAULT_THRESHOLD);
            (
                host,
                find_templates(pages, groups, max_pages, MapLimits::default()),
            )
        })
        .filter(|(_, found)| !found.is_empty())
        .collect();
    // As the job: a page that fits none of its host's templates keeps SiteLevel(θ)'s call.
    let models = site_level_models(files, &Default::default(), Fingerprints::Subtrees);
    let mapped: BTreeMap<&str, HostTemplates> = templates
        .iter()
        .map(|(host, found)| {
            let trees = found.iter().map(|t| (t.tree.clone(), t.pages_used));
            let mut held = mapped_host(Method::Rtdm, trees);
            held.set_fallback(models.get(host).cloned().unwrap_or_default());
            (host.as_str(), held)
        })
        .collect();
    for_each_page_of(files, |page, dom| {
        let site = site_of(&page.host);
        let inside = match mapped.get(site) {
            Some(host) => inside_of(page, dom, host),
            None => vec![false; dom.len()],
        };
        let found = templates
            .get(site)
            .map_or(&[][..], |found| found.as_slice());
        visit(page, dom, &inside, found);
    });
}

/// Seed 003 over WARC files as the library computes it: a first pass keeps, per host, the
/// visible structures of its `max_pages` pages with the smallest URL keys (the job's sample),
/// groups them and learns a tree regular expression from the first `template_sample` pages of
/// each group; a second cuts every page into sections by the template it fits. `visit` gets
/// each page with its DOM, its inside-template mask (below a noise section's roots), its host's
/// templates (if any) and its sections.
pub fn regex_over(
    files: &[PathBuf],
    (max_pages, template_sample): (u32, u32),
    mut visit: impl FnMut(
        &stencil_operators::reading::page::Page,
        &stencil_operators::dom::Dom,
        &[bool],
        Option<&stencil_operators::site::templates::RegexHost>,
        &[stencil_operators::site::sections::Section],
    ),
) {
    use std::collections::BTreeMap;
    use stencil_operators::site::clusters::{DEFAULT_MIN_CLUSTER_PAGES, DEFAULT_THRESHOLD};
    use stencil_operators::site::rtdm::Limits as MapLimits;
    use stencil_operators::site::site_level::{inside_templates, site_of, Fingerprints};
    use stencil_operators::site::templates::RegexHost;
    use stencil_operators::site::tree_regex::{learn_groups, page_tree, Bounds};
    let samples = samples_of(files, max_pages, |dom, sums| page_tree(dom, sums).tree);
    // As the job: a page that fits none of its host's templates keeps SiteLevel(θ)'s call.
    let models = site_level_models(files, &Default::default(), Fingerprints::Subtrees);
    let hosts: BTreeMap<String, HostTemplates> = samples
        .into_iter()
        .map(|(host, pages)| {
            let groups = (DEFAULT_MIN_CLUSTER_PAGES, DEFAULT_THRESHOLD);
            let found = learn_groups(pages, groups, template_sample, Bounds::default());
            let mut held = HostTemplates::Regex(RegexHost::of_groups((0, 0), found, 0));
            held.set_fallback(models.get(&host).cloned().unwrap_or_default());
            (host, held)
        })
        .filter(|(_, host)| host.labelled())
        .collect();
    for_each_page_of(files, |page, dom| {
        let sums = stencil_operators::dom::subtree::summarize(dom, &page.host);
        let held = hosts.get(site_of(&page.host));
        let (inside, sections) = match held {
            Some(host) => {
                let call = host
                    .call(dom, &sums, Fingerprints::Subtrees, MapLimits::default())
                    .unwrap_or_default();
                let roots = match call.roots.len() == dom.len() {
                    true => call.roots,
                    false => vec![None; dom.len()],
                };
                (inside_templates(dom, &roots), call.sections)
            }
            None => (vec![false; dom.len()], Vec::new()),
        };
        let regex = match held {
            Some(HostTemplates::Regex(host)) => Some(host),
            _ => None,
        };
        visit(page, dom, &inside, regex, &sections);
    });
}

/// Per host (as `site_of` names it), what `make` makes of its `max_pages` pages with the
/// smallest URL keys (the jobs' sample order), in that order.
fn samples_of<T>(
    files: &[PathBuf],
    max_pages: u32,
    mut make: impl FnMut(&stencil_operators::dom::Dom, &[stencil_operators::dom::subtree::Subtree]) -> T,
) -> std::collections::BTreeMap<String, Vec<T>> {
    use std::collections::BTreeMap;
    use stencil_operators::site::site_level::{site_of, url_key};
    let mut samples: BTreeMap<String, BTreeMap<(u64, String), T>> = BTreeMap::new();
    for_each_page_of(files, |page, dom| {
        let host = samples.entry(site_of(&page.host).to_string()).or_default();
        let sums = stencil_operators::dom::subtree::summarize(dom, &page.host);
        host.insert((url_key(&page.url), page.url.clone()), make(dom, &sums));
        while host.len() > max_pages as usize {
            host.pop_last();
        }
    });
    samples
        .into_iter()
        .map(|(host, pages)| (host, pages.into_values().collect()))
        .collect()
}

/// What [`etdm_over`] did for one host (the site, as [`site_level::site_of`] names it).
///
/// [`site_level::site_of`]: stencil_operators::site::site_level::site_of
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EtdmHost {
    /// Whether the host's template is ETDM's; `false` when the host had no complete
    /// subdigraph to learn from and SiteLevel(θ) stood in.
    pub etdm: bool,
    /// The key page's URL, as the `url` crate serializes it (`None` when no page of the host
    /// has a URL that parses).
    pub key: Option<String>,
    /// m: the pages of the complete subdigraph found (n when an n-CS was).
    pub cs_pages: usize,
    /// Of those, the pages ETDM mapped the key page onto (the others passed the limits).
    pub pages_used: u32,
    /// Nodes of the ETDM template (0 on fallback).
    pub template_nodes: usize,
    /// SiteLevel(θ)'s template hashes on fallback (0 when ETDM's template is used).
    pub site_level_templates: usize,
}

/// Which pages [`etdm_apply`] maps a site's key page onto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtdmCs {
    /// Seed 004's: the key page's n-CS in the crawl's link graph (Algorithm 2).
    Links,
    /// A stand-in that needs no links: the n pages of the site other than the key page whose
    /// URLs have the smallest [`url_key`] (SiteLevel's sample order). It measures Algorithm 3
    /// and the removal on crawls whose pages do not link to one another (dragnet's pages have
    /// no URLs, SWDE's links carry session ids), not seed 004's method.
    ///
    /// [`url_key`]: stencil_operators::site::site_level::url_key
    Sample,
}

/// One site's pages as [`etdm_over`]'s first pass keeps them, sorted by URL: each page's URL
/// (without fragment) with its same-site links, its exact label tree and its HTML (to parse
/// the key page again, which is only known once every page has been seen).
struct EtdmSite {
    pages: Vec<(url::Url, Vec<url::Url>)>,
    trees: Vec<stencil_operators::site::rtdm::Tree>,
    html: Vec<String>,
    index: std::collections::HashMap<String, usize>,
}

/// A crawl after [`etdm_over`]'s first pass: what every choice of `n` and `t` starts from.
pub struct EtdmCrawl {
    sites: std::collections::BTreeMap<String, EtdmSite>,
    /// SiteLevel(θ) (default parameters, subtree fingerprints) for the hosts without a CS.
    site_level: std::collections::BTreeMap<String, stencil_operators::site::site_level::HostModel>,
}

/// [`etdm_over`]'s first pass over `files`: per site, every page with a URL that parses (the
/// first record of a URL kept), and SiteLevel(θ)'s models for the fallback.
pub fn etdm_crawl(files: &[PathBuf]) -> EtdmCrawl {
    use std::collections::{BTreeMap, HashMap};
    use stencil_operators::dom::subtree::summarize;
    use stencil_operators::site::etdm::label_tree_exact;
    use stencil_operators::site::menu_graph::page_links;
    use stencil_operators::site::site_level::{self as sl, Fingerprints, PageFingerprints, Params};
    type Kept = (Vec<url::Url>, stencil_operators::site::rtdm::Tree, String);
    let mut kept: BTreeMap<String, BTreeMap<String, (url::Url, Kept)>> = BTreeMap::new();
    let mut fingerprints = Vec::new();
    for_each_page_of(files, |page, dom| {
        let site = sl::site_of(&page.host).to_string();
        let sums = summarize(dom, &page.host);
        fingerprints.push(PageFingerprints {
            host: site.clone(),
            url_key: sl::url_key(&page.url),
            fingerprints: sl::fingerprints(dom, &sums, Fingerprints::Subtrees),
        });
        // Keyed as links are (`page_links` drops fragments), so that links find the page.
        let Ok(mut url) = url::Url::parse(&page.url) else {
            return;
        };
        url.set_fragment(None);
        let pages = kept.entry(site).or_default();
        if !pages.contains_key(url.as_str()) {
            let links = page_links(dom, &url).into_iter().map(|l| l.url).collect();
            let entry = (links, label_tree_exact(dom), page.html.clone());
            pages.insert(url.as_str().to_string(), (url, entry));
        }
    });
    let sites = kept
        .into_iter()
        .map(|(site, pages)| {
            let mut etdm = EtdmSite {
                pages: Vec::with_capacity(pages.len()),
                trees: Vec::with_capacity(pages.len()),
                html: Vec::with_capacity(pages.len()),
                index: HashMap::with_capacity(pages.len()),
            };
            for (key, (url, (links, tree, html))) in pages {
                etdm.index.insert(key, etdm.pages.len());
                etdm.pages.push((url, links));
                etdm.trees.push(tree);
                etdm.html.push(html);
            }
            (site, etdm)
        })
        .collect();
    let site_level = sl::learn(fingerprints, &Params::default(), Fingerprints::Subtrees);
    EtdmCrawl { sites, site_level }
}

/// One site's ETDM template with `n` and `t` (`None` when it has no CS): see
/// [`etdm_templates`].
fn etdm_site_template(
    site: &EtdmSite,
    n: usize,
    t: u32,
    choice: EtdmCs,
) -> (EtdmHost, Option<stencil_operators::site::rtdm::Tree>) {
    use stencil_operators::site::etdm::template_of_key_page;
    use stencil_operators::site::menu_graph::{
        complete_subdigraph, dom_distance, key_page, page_links, sort_links,
    };
    use stencil_operators::site::rtdm::{Labelled, Limits as MapLimits};
    use stencil_operators::site::site_level::url_key;
    let mut host = EtdmHost::default();
    let Some(k) = key_page(&site.pages) else {
        return (host, None);
    };
    let key_url = &site.pages[k].0;
    host.key = Some(key_url.to_string());
    let cs: Vec<usize> = match choice {
        EtdmCs::Links => {
            // The first pass kept the HTML, not the DOM: parsed again as the reader parses it.
            let dom = stencil_operators::dom::parse(&site.html[k], Limits::default().max_dom_depth);
            let links = page_links(&dom, key_url);
            let order = sort_links(key_url, &links, |a, b| dom_distance(&dom, a, b));
            let key_links: Vec<url::Url> = order.iter().map(|&i| links[i].url.clone()).collect();
            let links_of = |u: &url::Url| {
                let &i = site.index.get(u.as_str())?;
                Some(site.pages[i].1.as_slice())
            };
            complete_subdigraph(&key_links, links_of, n)
                .iter()
                .filter_map(|u| site.index.get(u.as_str()).copied())
                .collect()
        }
        EtdmCs::Sample => {
            let mut others: Vec<usize> = (0..site.pages.len()).filter(|&i| i != k).collect();
            others.sort_by_cached_key(|&i| (url_key(site.pages[i].0.as_str()), i));
            others.truncate(n);
            others
        }
    };
    host.cs_pages = cs.len();
    let cs_trees: Vec<_> = cs.iter().map(|&i| site.trees[i].clone()).collect();
    let template = template_of_key_page(&site.trees[k], &cs_trees, t, MapLimits::default());
    host.pages_used = template.pages_used;
    if template.pages_used < t.max(1) {
        return (host, None);
    }
    host.etdm = true;
    host.template_nodes = template.tree.len();
    (host, Some(template.tree))
}

/// Seed 004's ETDM over WARC files as the library computes it: [`etdm_crawl`]'s first pass,
/// each site's template over the pages `cs` chooses (the key page's n-CS, as the job does, or
/// a stand-in) with threshold `t` ([`etdm_templates`]), then [`etdm_apply`]'s second pass.
pub fn etdm_over(
    files: &[PathBuf],
    n: usize,
    t: u32,
    cs: EtdmCs,
    visit: impl FnMut(
        &stencil_operators::reading::page::Page,
        &stencil_operators::dom::Dom,
        &[bool],
        &EtdmHost,
    ),
) {
    let crawl = etdm_crawl(files);
    let templates = etdm_templates(&crawl, n, t, cs);
    etdm_apply(files, &crawl, &templates, visit);
}

/// Every site's ETDM template (`None` for a site without a CS) and what finding it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtdmTemplates {
    pub hosts:
        std::collections::BTreeMap<String, (EtdmHost, Option<stencil_operators::site::rtdm::Tree>)>,
}

/// Each site's template with `n` and `t`: the key page ([`key_page`]), then with
/// [`EtdmCs::Links`] its links in Algorithm 1's order ([`sort_links`] with [`dom_distance`] on
/// the key page's DOM) and Algorithm 2's n-CS among the pages of the crawl
/// ([`complete_subdigraph`]: a linked page the crawl does not have cannot be loaded), and
/// Algorithm 3's template over those pages ([`template_of_key_page`]).
///
/// "No CS" is fewer than `t` pages mapped (`t` taken as at least 1): below that no node can
/// reach the threshold and the template would be empty, so the site gets SiteLevel(θ)'s
/// templates instead. With `t = 1` one page is enough, as in the thesis's `n = 1` column
/// (§5.2.2).
///
/// [`key_page`]: stencil_operators::site::menu_graph::key_page
/// [`sort_links`]: stencil_operators::site::menu_graph::sort_links
/// [`dom_distance`]: stencil_operators::site::menu_graph::dom_distance
/// [`complete_subdigraph`]: stencil_operators::site::menu_graph::complete_subdigraph
/// [`template_of_key_page`]: stencil_operators::site::etdm::template_of_key_page
pub fn etdm_templates(crawl: &EtdmCrawl, n: usize, t: u32, cs: EtdmCs) -> EtdmTemplates {
    let hosts = crawl
        .sites
        .iter()
        .map(|(site, pages)| {
            let (mut host, template) = etdm_site_template(pages, n, t, cs);
            if template.is_none() {
                host.site_level_templates = crawl.site_level.get(site).map_or(
                    0,
                    stencil_operators::site::site_level::HostModel::template_count,
                );
            }
            (site.clone(), (host, template))
        })
        .collect();
    EtdmTemplates { hosts }
}

/// [`etdm_over`]'s second pass over every page of `files`. On a site with an ETDM template
/// ([`etdm_templates`]) the page's template nodes are those a largest ETDM of the template
/// onto the page maps ([`template_nodes_exact`]); on the others, SiteLevel(θ)'s. `visit` gets
/// each page with its DOM, its inside-template mask (below a wholly covered node, as
/// [`rtdm_over`] marks them) and what was done for its host.
///
/// [`template_nodes_exact`]: stencil_operators::site::etdm::template_nodes_exact
pub fn etdm_apply(
    files: &[PathBuf],
    crawl: &EtdmCrawl,
    templates: &EtdmTemplates,
    mut visit: impl FnMut(
        &stencil_operators::reading::page::Page,
        &stencil_operators::dom::Dom,
        &[bool],
        &EtdmHost,
    ),
) {
    use stencil_operators::site::site_level::{self as sl, HostModel};
    // Each site's templates as the job holds them: ETDM's, or SiteLevel(θ)'s where it stood in.
    let held: std::collections::BTreeMap<&str, HostTemplates> = crawl
        .sites
        .keys()
        .chain(crawl.site_level.keys())
        .map(|site| {
            let held = match templates.hosts.get(site) {
                Some((host, Some(template))) => mapped_host(
                    Method::Etdm,
                    std::iter::once((template.clone(), host.pages_used)),
                ),
                _ => HostTemplates::SiteLevel(
                    crawl.site_level.get(site).cloned().unwrap_or_default(),
                ),
            };
            (site.as_str(), held)
        })
        .collect();
    let unlabelled = HostTemplates::SiteLevel(HostModel::default());
    let no_url = EtdmHost::default();
    for_each_page_of(files, |page, dom| {
        let site = sl::site_of(&page.host);
        let host = templates.hosts.get(site).map_or(&no_url, |(h, _)| h);
        let inside = inside_of(page, dom, held.get(site).unwrap_or(&unlabelled));
        visit(page, dom, &inside, host);
    });
}

/// A mapping method's templates for one host (each with the pages it was found from), as the
/// job holds them.
fn mapped_host(
    method: Method,
    found: impl Iterator<Item = (stencil_operators::site::rtdm::Tree, u32)>,
) -> HostTemplates {
    HostTemplates::Mapped(MappedHost::of_groups(method, (0, 0), found.collect(), 0))
}

/// The page's inside-template mask under its host's templates, computed as the job computes
/// it (`HostTemplates::roots`, then `inside_templates`); a page too large to map keeps all
/// its text.
fn inside_of(
    page: &stencil_operators::reading::page::Page,
    dom: &stencil_operators::dom::Dom,
    host: &HostTemplates,
) -> Vec<bool> {
    use stencil_operators::site::rtdm::Limits as MapLimits;
    use stencil_operators::site::site_level::{inside_templates, Fingerprints};
    let sums = stencil_operators::dom::subtree::summarize(dom, &page.host);
    let roots = host
        .roots(dom, &sums, Fingerprints::Subtrees, MapLimits::default())
        .unwrap_or_else(|_| vec![None; dom.len()]);
    inside_templates(dom, &roots)
}

/// Every page of test WARC `files`, parsed with the default limits.
fn for_each_page_of(
    files: &[PathBuf],
    mut visit: impl FnMut(&stencil_operators::reading::page::Page, &stencil_operators::dom::Dom),
) {
    let mut inventory = stencil_operators::inventory::Inventory::default();
    for file in files {
        stencil_operators::inventory::for_each_page(
            file,
            &Limits::default(),
            stencil_operators::inventory::Share::WHOLE,
            &mut inventory,
            &mut visit,
            |_| {},
        )
        .expect("readable test WARC");
    }
}

/// Writes `pages` (URL, raw bytes) as a Common-Crawl-style WARC in a temporary folder.
pub fn warc_file(name: &str, pages: &[(&str, &[u8])]) -> PathBuf {
    let test_pages: Vec<TestPage<'_>> = pages
        .iter()
        .map(|(url, body)| TestPage {
            url,
            headers: vec![("Content-Type", "text/html")],
            body: body.to_vec(),
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("stencil-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, build_warc(&test_pages, true)).expect("write test WARC");
    path
}
