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
//! Both samples are by URL hash, so the same pages are chosen whatever the worker count.

use std::collections::{BTreeMap, HashMap};

use stencil_operators::dom::subtree::Subtree;
use stencil_operators::dom::Dom;
use stencil_operators::site::rtdm::{Limits, Tree};
use stencil_operators::site::rtdm_template::label_tree;
use stencil_operators::site::site_level::{fingerprints, BottomK, Fingerprints, Params};
use stencil_operators::site::templates::{HostTemplates, Method};
use timely::worker::Worker;

use super::dataflow::{self, LocalSample, LocalTrees};

/// How a job computes its site statistics.
#[derive(Clone, Copy, Debug)]
pub struct Statistics {
    pub method: Method,
    pub params: Params,
    pub kind: Fingerprints,
    /// RTDM-TD's sample pages per host (seed 002's MaxPages).
    pub sample_pages: u32,
    /// The work one tree mapping may do.
    pub limits: Limits,
}

/// What one worker keeps of the pages it reads.
pub enum Local {
    Counts(LocalSample),
    Trees(LocalTrees),
}

/// What one page adds to its host's sample, computed where a panic can be contained.
pub enum Offer {
    Fingerprints(Vec<u64>),
    Tree(Tree),
    /// The page counts toward its host's pages but is not in the sample.
    Counted,
}

impl Statistics {
    pub fn local(&self) -> Local {
        match self.method {
            Method::SiteLevel => Local::Counts(LocalSample::default()),
            Method::Rtdm => Local::Trees(LocalTrees::new(self.sample_pages as usize)),
        }
    }

    /// What the page at `url_key` of `host` offers. A label tree is built only for a page
    /// that can still enter this worker's sample of its host.
    pub fn prepare(
        &self,
        local: &Local,
        (host, url_key): (&str, u64),
        dom: &Dom,
        sums: &[Subtree],
    ) -> Offer {
        match local {
            Local::Counts(_) => Offer::Fingerprints(fingerprints(dom, sums, self.kind)),
            Local::Trees(trees) if trees.wants(host, url_key) => Offer::Tree(label_tree(dom)),
            Local::Trees(_) => Offer::Counted,
        }
    }

    /// Counts the page toward its host and adds what it offers to the host's sample.
    pub fn offer(&self, local: &mut Local, host: &str, url_key: u64, offer: Offer) {
        match (local, offer) {
            (Local::Counts(sample), Offer::Fingerprints(fingerprints)) => {
                *sample.pages.entry(host.to_string()).or_default() += 1;
                sample
                    .samples
                    .entry(host.to_string())
                    .or_insert_with(|| BottomK::new(self.params.host_sample))
                    .offer(url_key, fingerprints);
            }
            (Local::Counts(sample), _) => *sample.pages.entry(host.to_string()).or_default() += 1,
            (Local::Trees(trees), offer) => {
                *trees.pages.entry(host.to_string()).or_default() += 1;
                if let Offer::Tree(tree) = offer {
                    trees.offer(host, url_key, tree);
                }
            }
        }
    }

    /// The templates of every host this worker holds pages of, computed by all workers.
    pub fn learn(&self, worker: &mut Worker, local: Local) -> HashMap<String, HostTemplates> {
        match local {
            Local::Counts(sample) => dataflow::learn(worker, sample, self.params, self.kind)
                .into_iter()
                .map(|(host, model)| (host, HostTemplates::SiteLevel(model)))
                .collect(),
            Local::Trees(trees) => dataflow::learn_mapped(
                worker,
                trees,
                self.params.min_host_pages,
                self.sample_pages,
                self.limits,
            ),
        }
    }
}

impl Local {
    /// Hosts this worker read pages of.
    pub fn hosts(&self) -> usize {
        match self {
            Local::Counts(sample) => sample.pages.len(),
            Local::Trees(trees) => trees.pages.len(),
        }
    }
}

/// Orders two label trees of the same URL, so that which copy of a page fetched twice enters
/// the sample does not depend on which worker read which copy first.
pub(crate) fn smaller_tree(a: Tree, b: Tree) -> Tree {
    if b.parts() < a.parts() {
        b
    } else {
        a
    }
}

/// Sample pages per host of [`LocalTrees`]: the `k` smallest URL keys.
pub(crate) type TreeSample = BTreeMap<u64, Tree>;
