//! The site statistics of whichever method `--method` names, as `site` and `run` both compute
//! them: what a worker keeps of each page it reads (pass 1), and the dataflow that turns every
//! worker's share into the templates of each host it holds pages of.
//!
//! - **SiteLevel(θ)**: a bottom-k sample of each host's fingerprint sets
//!   ([`dataflow::learn`]).
//! - **RTDM-TD**: a bottom-k sample of each host's label trees, k = `--sample-pages`
//!   ([`dataflow::learn_mapped`]). A label tree is the page as the mapping sees it (a 64-bit
//!   label and a subtree end per node, 12 bytes a node), not its DOM: it is what the host's
//!   owner needs, it is smaller than `Dom::encode`'s arena, and no HTML crosses workers.
//!
//! - **Tree regular expressions** (seed 003): the same sample of RTDM-TD's, of each page's
//!   visible structure with its content features ([`tree_regex::page_tree`]) instead
//!   ([`dataflow::learn_tree_regex`]).
//!
//!   Both keep SiteLevel(θ)'s sample beside their trees: a page that fits none of its host's
//!   templates (a design with too few sample pages for a group) keeps SiteLevel(θ)'s call,
//!   and a host they find no template for keeps SiteLevel(θ)'s templates.
//!
//! - **ETDM**: SiteLevel(θ)'s sample, for the hosts that have no complete subdigraph, and every
//!   page's links as keys ([`GraphPage`]). Two more dataflows follow: the links meet on each
//!   host's owner, which picks the key page and its complete subdigraph
//!   ([`dataflow::learn_key_pages`]); then the workers holding those pages send their exact
//!   label trees, and the owner maps them ([`dataflow::learn_etdm`]). Between the two, `run`
//!   takes the trees from the pages it keeps and `site` reads its files once more.
//!
//! Samples are by URL hash and ties are broken by key, so the same pages are chosen whatever
//! the worker count.

use std::collections::HashMap;

use stencil_operators::dom::subtree::Subtree;
use stencil_operators::dom::Dom;
use stencil_operators::site::clusters::DEFAULT_THRESHOLD;
use stencil_operators::site::menu_graph::{graph_page, page_key, GraphPage};
use stencil_operators::site::rtdm::{Limits, Tree};
use stencil_operators::site::rtdm_template::label_tree;
use stencil_operators::site::site_level::{fingerprints, BottomK, Fingerprints, Params};
use stencil_operators::site::templates::{HostTemplates, MappedHost, MappedTemplate, Method};
use stencil_operators::site::tree_regex;
use timely::worker::Worker;
use url::Url;

use super::dataflow::{self, LocalLinks, LocalSample, LocalTrees};

/// How a job computes its site statistics.
#[derive(Clone, Copy, Debug)]
pub struct Statistics {
    pub method: Method,
    pub params: Params,
    pub kind: Fingerprints,
    /// RTDM-TD's sample pages per host (seed 002's MaxPages).
    pub sample_pages: u32,
    /// RTDM-TD's smallest group of sample pages alike in structure that a template is learned
    /// from ([`stencil_operators::site::clusters::find_templates`]).
    pub min_cluster_pages: u32,
    /// Seed 003's k: the pages of a group a tree regular expression is learned from.
    pub template_sample: u32,
    /// ETDM's complete subdigraph size n and threshold t (seed 004, Algorithm 3).
    pub cs_size: u32,
    pub cs_threshold: u32,
    /// The work one tree mapping may do.
    pub limits: Limits,
}

/// What one worker keeps of the pages it reads.
pub enum Local {
    Counts(LocalSample),
    /// RTDM-TD and tree-regex: SiteLevel(θ)'s sample, for the pages that fit none of their
    /// host's templates, and the label trees of each host's sample pages.
    Trees(LocalSample, LocalTrees),
    /// ETDM: SiteLevel(θ)'s sample, for the hosts with no complete subdigraph, and every
    /// page's place in its site's link graph.
    Links(LocalSample, LocalLinks),
}

/// What one page adds to its host's statistics, computed where a panic can be contained.
pub enum Offer {
    Fingerprints(Vec<u64>),
    /// A page's fingerprints, and its label tree when it can enter its host's sample.
    Tree(Vec<u64>, Option<Tree>),
    Links(Vec<u64>, Option<GraphPage>),
}

/// The site statistics of a method once every worker's share has met: the templates, or,
/// for ETDM, what is wanted of the pages before they can be found ([`PendingEtdm`]).
pub enum Learned {
    Templates(HashMap<String, HostTemplates>),
    Etdm(PendingEtdm),
}

impl Statistics {
    pub fn local(&self) -> Local {
        match self.method {
            Method::SiteLevel => Local::Counts(LocalSample::default()),
            Method::Rtdm | Method::TreeRegex => Local::Trees(
                LocalSample::default(),
                LocalTrees::new(self.sample_pages as usize),
            ),
            Method::Etdm => Local::Links(LocalSample::default(), LocalLinks::default()),
        }
    }

    /// What the page at `url` (its `host` and `url_key`) offers. A label tree is built only
    /// for a page that can still enter this worker's sample of its host.
    pub fn prepare(
        &self,
        local: &Local,
        (url, host, url_key): (&str, &str, u64),
        dom: &Dom,
        sums: &[Subtree],
    ) -> Offer {
        match local {
            Local::Counts(_) => Offer::Fingerprints(fingerprints(dom, sums, self.kind)),
            Local::Trees(_, trees) => {
                let tree = trees.wants(host, url_key).then(|| match self.method {
                    Method::TreeRegex => tree_regex::page_tree(dom, sums).tree,
                    _ => label_tree(dom, sums),
                });
                Offer::Tree(fingerprints(dom, sums, self.kind), tree)
            }
            Local::Links(..) => Offer::Links(
                fingerprints(dom, sums, self.kind),
                Url::parse(url).ok().map(|url| graph_page(dom, &url)),
            ),
        }
    }

    /// Counts the page toward its host and adds what it offers to the host's sample.
    pub fn offer(&self, local: &mut Local, host: &str, url_key: u64, offer: Offer) {
        let count = |sample: &mut LocalSample, fingerprints: Option<Vec<u64>>| {
            *sample.pages.entry(host.to_string()).or_default() += 1;
            if let Some(fingerprints) = fingerprints {
                sample
                    .samples
                    .entry(host.to_string())
                    .or_insert_with(|| BottomK::new(self.params.host_sample))
                    .offer(url_key, fingerprints);
            }
        };
        match (local, offer) {
            (Local::Counts(sample), Offer::Fingerprints(fingerprints)) => {
                count(sample, Some(fingerprints))
            }
            (Local::Links(sample, links), Offer::Links(fingerprints, page)) => {
                count(sample, Some(fingerprints));
                if let Some(page) = page {
                    links.pages.push((host.to_string(), page));
                }
            }
            (Local::Trees(sample, trees), offer) => {
                *trees.pages.entry(host.to_string()).or_default() += 1;
                match offer {
                    Offer::Tree(fingerprints, tree) => {
                        count(sample, Some(fingerprints));
                        if let Some(tree) = tree {
                            trees.offer(host, url_key, tree);
                        }
                    }
                    _ => count(sample, None),
                }
            }
            (Local::Counts(sample) | Local::Links(sample, _), _) => count(sample, None),
        }
    }

    /// The templates of every host this worker holds pages of, computed by all workers; for
    /// ETDM, the first half of that ([`PendingEtdm::finish`] is the second). SiteLevel(θ)'s
    /// sample comes back too: `--state` keeps it for the next night.
    pub fn learn(&self, worker: &mut Worker, local: Local) -> (Learned, Option<LocalSample>) {
        match local {
            Local::Counts(sample) => {
                let templates = self.site_level(worker, &sample);
                (Learned::Templates(templates), Some(sample))
            }
            Local::Trees(sample, trees) => {
                let fallback = self.site_level(worker, &sample);
                let mapped = match self.method {
                    Method::TreeRegex => dataflow::learn_tree_regex(
                        worker,
                        trees,
                        (self.params.min_host_pages, self.sample_pages),
                        (
                            (self.min_cluster_pages, DEFAULT_THRESHOLD),
                            self.template_sample,
                        ),
                    ),
                    _ => dataflow::learn_mapped(
                        worker,
                        trees,
                        self.params.min_host_pages,
                        (
                            self.sample_pages,
                            (self.min_cluster_pages, DEFAULT_THRESHOLD),
                        ),
                        self.limits,
                    ),
                };
                (Learned::Templates(with_fallback(mapped, fallback)), None)
            }
            Local::Links(sample, links) => {
                let fallback = self.site_level(worker, &sample);
                let chosen = dataflow::learn_key_pages(worker, links, self.cs_size as usize);
                let pending = PendingEtdm {
                    fallback,
                    chosen,
                    statistics: *self,
                };
                (Learned::Etdm(pending), None)
            }
        }
    }

    fn site_level(
        &self,
        worker: &mut Worker,
        sample: &LocalSample,
    ) -> HashMap<String, HostTemplates> {
        dataflow::learn(worker, sample, self.params, self.kind)
            .into_iter()
            .map(|(host, model)| (host, HostTemplates::SiteLevel(model)))
            .collect()
    }
}

/// Each host's mapped templates, with SiteLevel(θ)'s model for its pages that fit none of
/// them; a host the method found no template for keeps SiteLevel(θ)'s templates alone, if it
/// has any.
fn with_fallback(
    mapped: HashMap<String, HostTemplates>,
    mut fallback: HashMap<String, HostTemplates>,
) -> HashMap<String, HostTemplates> {
    let mut templates = HashMap::with_capacity(mapped.len());
    for (host, mut found) in mapped {
        let model = match fallback.remove(&host) {
            Some(HostTemplates::SiteLevel(model)) => model,
            _ => Default::default(),
        };
        match (found.labelled(), model.labelled) {
            (false, true) => {
                templates.insert(host, HostTemplates::SiteLevel(model));
            }
            (false, false) => {
                templates.insert(host, found);
            }
            (true, _) => {
                found.set_fallback(model);
                templates.insert(host, found);
            }
        }
    }
    templates.extend(fallback);
    templates
}

/// ETDM between its two dataflows: every host's key page and complete subdigraph are known;
/// their exact label trees, which only the workers holding those pages can make, are wanted.
pub struct PendingEtdm {
    /// SiteLevel(θ)'s templates, for every host of this worker.
    fallback: HashMap<String, HostTemplates>,
    /// Per host of this worker: its key page and CS pages, by [`menu_graph::page_key`].
    chosen: HashMap<String, (u64, Vec<u64>)>,
    statistics: Statistics,
}

impl PendingEtdm {
    /// The page's place among its host's chosen pages (0 for the key page, then the CS pages
    /// in walk order), when it is one of them.
    pub fn wanted(&self, url: &str, host: &str) -> Option<u32> {
        let (key, cs) = self.chosen.get(host)?;
        let page = page_key(&Url::parse(url).ok()?);
        if page == *key {
            return Some(0);
        }
        cs.iter().position(|&k| k == page).map(|at| at as u32 + 1)
    }

    /// ETDM's template of every host whose key page and at least t CS pages were read, and
    /// SiteLevel(θ)'s templates for every other host. `trees`: this worker's chosen pages as
    /// (host, place from [`PendingEtdm::wanted`], exact label tree).
    pub fn finish(
        self,
        worker: &mut Worker,
        trees: Vec<(String, u32, Tree)>,
    ) -> HashMap<String, HostTemplates> {
        let Statistics {
            cs_threshold,
            limits,
            ..
        } = self.statistics;
        let hosts = self.fallback.keys();
        let found = dataflow::learn_etdm(worker, hosts, trees, cs_threshold, limits);
        let mut templates = self.fallback;
        for (host, (template, pages_used)) in found {
            let Some(HostTemplates::SiteLevel(model)) = templates.get(&host) else {
                continue;
            };
            // The classifier's examples come from SiteLevel(θ)'s sample whatever the method,
            // so a host gives as many as it would by default.
            let mapped = MappedHost {
                method: Method::Etdm,
                pages: model.pages,
                sample_max_key: model.sample_max_key,
                templates: vec![MappedTemplate::new(template)],
                // The key page and the CS pages mapped.
                pages_used: pages_used + 1,
                min_count: cs_threshold + 1,
                // One template: every page is cleaned by it.
                fallback: None,
            };
            templates.insert(host, HostTemplates::Mapped(mapped));
        }
        templates
    }
}

impl Local {
    /// SiteLevel(θ)'s sample, which `--state` adds the state's pages to.
    pub fn sample_mut(&mut self) -> Option<&mut LocalSample> {
        match self {
            Local::Counts(sample) => Some(sample),
            _ => None,
        }
    }

    /// Hosts this worker read pages of.
    pub fn hosts(&self) -> usize {
        match self {
            Local::Counts(sample) | Local::Links(sample, _) | Local::Trees(sample, _) => {
                sample.pages.len()
            }
        }
    }
}
