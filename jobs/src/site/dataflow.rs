//! The small dataflows of `stencil site` (and `run`), kept apart from the reading and
//! labelling so they stay thin. All are differential-dataflow collections at epoch 0, counted in
//! arrangements keyed by (host, …), except the template candidates of [`gather`], of which
//! only a minimum is wanted. SiteLevel(θ) takes two rounds ([`learn`]): every host's
//! sample first, then the fingerprints of the hosts whose sample is large enough for labels.
//!
//! What crosses workers is compact: per sampled page its host and URL key, and for the hosts
//! with labels its fingerprints (a state's pages: each (host, fingerprint) once, with the
//! number of pages it is on), or for RTDM-TD and the tree regular expressions its label tree
//! ([`learn_from_samples`]); per host its page count; on the way back, per host its model (or
//! template trees, or expressions). Never HTML.

use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use differential_dataflow::consolidation::consolidate;
use differential_dataflow::input::Input;
use differential_dataflow::VecCollection;
use serde::{Deserialize, Serialize};
use stencil_operators::site::clusters::find_templates;
use stencil_operators::site::etdm::template_of_key_page;
use stencil_operators::site::menu_graph::{key_page_and_cs, GraphPage};
use stencil_operators::site::rtdm::{Labelled, Limits, Tree, TreeParts};
use stencil_operators::site::site_level::{BottomK, Fingerprints, HostModel, Params};
use stencil_operators::site::templates::{HostTemplates, MappedHost, Method, RegexHost};
use stencil_operators::site::tree_regex::{learn_groups, Bounds, RegexParts, TreeRegex};
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::dataflow::operators::{Exchange, Inspect, Probe};
use timely::worker::Worker;

use crate::tables::{HostRow, TemplateRow};

/// What one worker read in the first pass: its share of the statistics' input.
#[derive(Default)]
pub struct LocalSample {
    /// Pages per host.
    pub pages: BTreeMap<String, u64>,
    /// This worker's bottom-k sample of each host. The global sample of a host is the bottom-k
    /// of the union, which is inside the union of the local ones: nothing else is sent.
    pub samples: BTreeMap<String, BottomK>,
    /// `run --state`: the state's sampled pages of the hosts whose bucket this worker owns,
    /// none of them fetched again tonight (a URL read again counts with tonight's copy). Their
    /// URL keys join the sample like tonight's; their fingerprints are counted on this worker
    /// and enter the counting as one weighted update per (host, fingerprint) instead of one
    /// per page and fingerprint, so the history a night carries costs it little.
    pub carried: BTreeMap<String, BottomK>,
}

/// Runs SiteLevel(θ) over all workers' samples and returns the model of every host this
/// worker holds pages of. Counting is spread by (host, URL key) and (host, fingerprint), so a
/// huge host does not land on one worker.
///
/// Two rounds: first every host's sample (its size and largest URL key), then the
/// fingerprints of the sampled pages of the hosts with enough of them for site-level labels.
/// A host with fewer sample pages than `min_host_pages` gets no labels and no template, so
/// counting its fingerprints would be wasted; and on a crawl most hosts are such (counted on
/// the benchmark corpus in docs/architecture.md), so the first round costs little and saves
/// most of the counting.
pub fn learn(
    worker: &mut Worker,
    local: &LocalSample,
    params: Params,
    kind: Fingerprints,
) -> HashMap<String, HostModel> {
    // Hosts travel as 64-bit hashes: sorting and joining on a u64 instead of a string is what
    // makes these dataflows cheap, and every worker maps the hashes of its own hosts back.
    let names = host_names(&local.pages);
    let mut models: HashMap<String, HostModel> = HashMap::new();
    // Per labelled host this worker holds: its key, the fewest sample pages a fingerprint must
    // be on to come back, and its largest sampled URL key.
    let mut labelled: BTreeMap<u64, (u32, u64)> = BTreeMap::new();
    for (host, (pages, sampled, largest)) in sample_sizes(worker, local, params.host_sample) {
        let Some(name) = names.get(&host) else {
            continue;
        };
        let model = HostModel {
            pages,
            pages_sampled: sampled,
            labelled: sampled >= params.min_host_pages,
            min_count: params.min_count(sampled),
            sample_max_key: largest,
            counts: HashMap::new(),
        };
        if model.labelled {
            labelled.insert(host, (kind.keep_from(model.min_count), largest));
        }
        models.insert(name.clone(), model);
    }
    for (host, (fingerprint, count)) in count_fingerprints(worker, local, &labelled) {
        if let Some(model) = names.get(&host).and_then(|name| models.get_mut(name)) {
            model.counts.insert(fingerprint, count);
        }
    }
    models
}

/// [`learn`]'s first round: per host (by key) its page count, the number of distinct URL keys
/// in its sample (the `k` smallest of all workers' candidates) and the largest of them, for
/// every host this worker holds pages of.
fn sample_sizes(
    worker: &mut Worker,
    local: &LocalSample,
    k: usize,
) -> impl Iterator<Item = (u64, (u64, u32, u64))> {
    let me = worker.index() as u64;
    let back: Back<(u64, u32, u64)> = Rc::default();
    let sink = back.clone();
    let (mut pages_in, mut candidates_in, mut holders_in, probe) =
        worker.dataflow::<u64, _, _>(|scope| {
            let (pages_in, pages) = scope.new_collection::<u64, isize>();
            let (candidates_in, candidates) = scope.new_collection::<(u64, u64), isize>();
            let (holders_in, holders) = scope.new_collection::<(u64, u64), isize>();
            // A host's sample: the k smallest distinct URL keys offered by any worker.
            let sizes = candidates.distinct().reduce(move |_host, keys, out| {
                let sample = &keys[..keys.len().min(k)];
                let largest = sample.last().map_or(0, |(key, _)| **key);
                out.push(((sample.len() as u32, largest), 1isize));
            });
            let sizes = pages
                .count()
                .join(sizes)
                .map(|(host, (total, (sampled, largest)))| {
                    (host, (total as u64, sampled, largest))
                });
            let probe = back_to_holders(sizes, holders, sink);
            (pages_in, candidates_in, holders_in, probe)
        });
    offer_hosts(&local.pages, |host, count| {
        holders_in.insert((host, me));
        pages_in.update(host, count);
    });
    for (host, sample) in local.samples.iter().chain(&local.carried) {
        let host = host_key(host);
        for key in sample.keys() {
            candidates_in.insert((host, key));
        }
    }
    pages_in.advance_to(1);
    candidates_in.advance_to(1);
    holders_in.advance_to(1);
    pages_in.flush();
    candidates_in.flush();
    holders_in.flush();
    crate::cluster::finish_round(worker, &probe);
    arrived(back)
}

/// [`learn`]'s second round: each fingerprint's count over the sampled pages of the labelled
/// hosts (`labelled`: host key → (the count a fingerprint must reach to come back, largest
/// sampled URL key), for this worker's hosts), sent back to every worker holding pages of the
/// host. A page of a worker's local sample is in the host's sample exactly when its key is at
/// most the sample's largest.
fn count_fingerprints(
    worker: &mut Worker,
    local: &LocalSample,
    labelled: &BTreeMap<u64, (u32, u64)>,
) -> impl Iterator<Item = (u64, (u64, u32))> {
    let me = worker.index() as u64;
    let back: Back<(u64, u32)> = Rc::default();
    let sink = back.clone();
    let (mut occurrences_in, mut carried_in, mut keep_in, mut holders_in, probe) = worker
        .dataflow::<u64, _, _>(|scope| {
            let (occurrences_in, occurrences) = scope.new_collection::<((u64, u64), u64), isize>();
            let (carried_in, carried) = scope.new_collection::<(u64, u64), isize>();
            let (keep_in, keep) = scope.new_collection::<(u64, u32), isize>();
            let (holders_in, holders) = scope.new_collection::<(u64, u64), isize>();
            // A URL read twice (by two workers) counts once: distinct before counting. The
            // state's pages are other URLs, already counted per (host, fingerprint). Every
            // holder of a host offers its threshold: distinct, so it joins once.
            let kept = occurrences
                .distinct()
                .map(|((host, _key), fingerprint)| (host, fingerprint))
                .concat(carried)
                .count()
                .map(|((host, fingerprint), count)| (host, (fingerprint, count as u32)))
                .join(keep.distinct())
                .filter(|(_, ((_, count), keep_from))| count >= keep_from)
                .map(|(host, (kept, _))| (host, kept));
            let probe = back_to_holders(kept, holders, sink);
            (occurrences_in, carried_in, keep_in, holders_in, probe)
        });
    for (&host, &(keep_from, _)) in labelled {
        keep_in.insert((host, keep_from));
        holders_in.insert((host, me));
    }
    for (host, sample) in &local.samples {
        let host = host_key(host);
        let Some(&(_, largest)) = labelled.get(&host) else {
            continue;
        };
        for (key, fingerprints) in sample.pages() {
            if key > largest {
                break;
            }
            for &fingerprint in fingerprints {
                occurrences_in.insert(((host, key), fingerprint));
            }
        }
    }
    for (host, sample) in &local.carried {
        let host = host_key(host);
        let Some(&(_, largest)) = labelled.get(&host) else {
            continue;
        };
        let mut counts: HashMap<u64, isize> = HashMap::new();
        for (_, fingerprints) in sample.pages().take_while(|(key, _)| *key <= largest) {
            for &fingerprint in fingerprints {
                *counts.entry(fingerprint).or_default() += 1;
            }
        }
        for (fingerprint, count) in counts {
            carried_in.update((host, fingerprint), count);
        }
    }
    occurrences_in.advance_to(1);
    carried_in.advance_to(1);
    keep_in.advance_to(1);
    holders_in.advance_to(1);
    occurrences_in.flush();
    carried_in.flush();
    keep_in.flush();
    holders_in.flush();
    crate::cluster::finish_round(worker, &probe);
    arrived(back)
}

/// What one worker read in the first pass for a mapping method: per host its page count and
/// the label trees of its pages with the smallest URL keys. As with [`LocalSample`], the
/// global sample of a host is inside the union of the local ones.
pub struct LocalTrees {
    pub pages: BTreeMap<String, u64>,
    /// Per host, the sample pages with the smallest URL keys.
    samples: BTreeMap<String, BTreeMap<u64, Tree>>,
    k: usize,
}

impl LocalTrees {
    pub fn new(k: usize) -> LocalTrees {
        LocalTrees {
            pages: BTreeMap::new(),
            samples: BTreeMap::new(),
            k,
        }
    }

    /// Whether a page with this key could enter the host's sample (its tree is worth making).
    pub fn wants(&self, host: &str, url_key: u64) -> bool {
        self.samples.get(host).is_none_or(|sample| {
            sample.len() < self.k || sample.last_key_value().is_some_and(|(&k, _)| url_key <= k)
        })
    }

    pub fn offer(&mut self, host: &str, url_key: u64, tree: Tree) {
        if !self.wants(host, url_key) {
            return;
        }
        let sample = self.samples.entry(host.to_string()).or_default();
        let tree = match sample.remove(&url_key) {
            Some(held) => smaller_tree(held, tree),
            None => tree,
        };
        sample.insert(url_key, tree);
        if sample.len() > self.k {
            sample.pop_last();
        }
    }
}

/// Orders two label trees of the same URL, so that which copy of a page fetched twice enters
/// the sample does not depend on which worker read which copy first.
fn smaller_tree(a: Tree, b: Tree) -> Tree {
    if b.parts() < a.parts() {
        b
    } else {
        a
    }
}

/// A label tree as it crosses workers: (URL key, the tree's parts).
type SentTree = (u64, TreeParts);
/// What a host's owner learned from its sample, as it comes back to the host's holders: (page
/// count, pages sampled, largest sampled URL key, the method's templates as sent).
pub type Learned<D> = (u64, u32, u64, D);

/// Runs a method that learns from a sample of label trees (RTDM-TD, the tree regular
/// expression) over all workers' samples, and returns what `learn` made of each host this
/// worker holds pages of. Each host is learned on the worker that owns its key, from the
/// `sample_pages` pages with the smallest URL keys of all workers' samples; a host with fewer
/// than `min_host_pages` (at least 2) is given `learn`'s answer for no page.
pub fn learn_from_samples<D, F>(
    worker: &mut Worker,
    local: LocalTrees,
    (min_host_pages, sample_pages): (u32, u32),
    learn: F,
) -> HashMap<String, Learned<D>>
where
    D: differential_dataflow::ExchangeData,
    F: Fn(Vec<Tree>) -> D + 'static,
{
    let names = host_names(&local.pages);
    let me = worker.index() as u64;
    let back: Back<(u64, u32, u64, D)> = Rc::default();
    let sink = back.clone();

    let (mut pages_in, mut trees_in, mut holders_in, probe) =
        worker.dataflow::<u64, _, _>(|scope| {
            let (pages_in, pages) = scope.new_collection::<u64, isize>();
            let (trees_in, trees) = scope.new_collection::<(u64, SentTree), isize>();
            let (holders_in, holders) = scope.new_collection::<(u64, u64), isize>();
            let k = sample_pages as usize;
            // A URL read twice (by two workers) counts once: values arrive sorted, so the
            // first tree of a key is the smallest copy, whoever read it.
            let templates = trees.reduce(move |_host, pages, out| {
                let mut sample: Vec<&SentTree> = pages.iter().map(|(page, _)| *page).collect();
                sample.dedup_by_key(|page| page.0);
                sample.truncate(k);
                let largest = sample.last().map_or(0, |page| page.0);
                let sampled = sample.len() as u32;
                let trees = match sampled >= min_host_pages.max(2) {
                    true => sample
                        .iter()
                        .filter_map(|(_, parts)| Tree::from_parts(parts.clone()).ok())
                        .collect(),
                    false => Vec::new(),
                };
                out.push(((sampled, largest, learn(trees)), 1isize));
            });
            let found = pages.count().join(templates).map(
                |(host, (total, (sampled, largest, template)))| {
                    (host, (total as u64, sampled, largest, template))
                },
            );
            let probe = back_to_holders(found, holders, sink);
            (pages_in, trees_in, holders_in, probe)
        });

    offer_hosts(&local.pages, |host, count| {
        holders_in.insert((host, me));
        pages_in.update(host, count);
    });
    for (host, sample) in local.samples {
        let host = host_key(&host);
        for (key, tree) in sample {
            trees_in.insert((host, (key, tree.to_parts())));
        }
    }
    pages_in.advance_to(1);
    trees_in.advance_to(1);
    holders_in.advance_to(1);
    pages_in.flush();
    trees_in.flush();
    holders_in.flush();
    crate::cluster::finish_round(worker, &probe);

    let mut learned = HashMap::new();
    for (host, found) in arrived(back) {
        if let Some(name) = names.get(&host) {
            learned.insert(name.clone(), found);
        }
    }
    learned
}

/// RTDM-TD over all workers' samples ([`learn_from_samples`]): a template per group of each
/// host's sample pages alike in structure (`groups`: the smallest group and the similarity).
pub fn learn_mapped(
    worker: &mut Worker,
    local: LocalTrees,
    min_host_pages: u32,
    (sample_pages, groups): (u32, (u32, f64)),
    limits: Limits,
) -> HashMap<String, HostTemplates> {
    let learn = move |trees: Vec<Tree>| -> Vec<(TreeParts, u32)> {
        find_templates(trees, groups, sample_pages, limits)
            .into_iter()
            .map(|t| (t.tree.to_parts(), t.pages_used))
            .collect()
    };
    let learned = learn_from_samples(worker, local, (min_host_pages, sample_pages), learn);
    let mut templates = HashMap::new();
    for (name, (pages, pages_sampled, sample_max_key, found)) in learned {
        let found: Vec<(Tree, u32)> = found
            .into_iter()
            .filter_map(|(parts, used)| Some((Tree::from_parts(parts).ok()?, used)))
            .collect();
        let host =
            MappedHost::of_groups(Method::Rtdm, (pages, sample_max_key), found, pages_sampled);
        templates.insert(name, HostTemplates::Mapped(host));
    }
    templates
}

/// Seed 003 over all workers' samples ([`learn_from_samples`]): a tree regular expression per
/// group of each host's sample pages alike in structure, learned from the group's first
/// `template_sample` pages.
pub fn learn_tree_regex(
    worker: &mut Worker,
    local: LocalTrees,
    (min_host_pages, sample_pages): (u32, u32),
    (groups, template_sample): ((u32, f64), u32),
) -> HashMap<String, HostTemplates> {
    let learn = move |trees: Vec<Tree>| -> Vec<(RegexParts, u32)> {
        learn_groups(trees, groups, template_sample, Bounds::default())
            .into_iter()
            .map(|(regex, used)| (regex.to_parts(), used))
            .collect()
    };
    let learned = learn_from_samples(worker, local, (min_host_pages, sample_pages), learn);
    let mut templates = HashMap::new();
    for (name, (pages, pages_sampled, sample_max_key, found)) in learned {
        let found: Vec<(TreeRegex, u32)> = found
            .into_iter()
            .filter_map(|(parts, used)| Some((TreeRegex::from_parts(parts).ok()?, used)))
            .collect();
        let host = RegexHost::of_groups((pages, sample_max_key), found, pages_sampled);
        templates.insert(name, HostTemplates::Regex(host));
    }
    templates
}

/// What one worker read in the first pass for ETDM, besides SiteLevel(θ)'s sample: every
/// page's place in its site's link graph.
#[derive(Default)]
pub struct LocalLinks {
    pub pages: Vec<(String, GraphPage)>,
}

/// ETDM's first dataflow: every host's pages' links meet on the host's owner, which picks the
/// key page and its complete subdigraph of `n` pages (seed 004, Algorithms 1 and 2: every
/// page's links cross workers, as keys, because any page may turn out to be the key page or
/// one of its CS) and sends them to every worker holding pages of the host.
pub fn learn_key_pages(
    worker: &mut Worker,
    local: LocalLinks,
    n: usize,
) -> HashMap<String, (u64, Vec<u64>)> {
    let names: HashMap<u64, String> = local
        .pages
        .iter()
        .map(|(host, _)| (host_key(host), host.clone()))
        .collect();
    let me = worker.index() as u64;
    let back: Back<(u64, Vec<u64>)> = Rc::default();
    let sink = back.clone();
    let (mut pages_in, mut holders_in, probe) = worker.dataflow::<u64, _, _>(|scope| {
        let (pages_in, pages) = scope.new_collection::<(u64, GraphPage), isize>();
        let (holders_in, holders) = scope.new_collection::<(u64, u64), isize>();
        // A URL read twice counts once: the first copy of a key in sorted order.
        let chosen = pages.reduce(move |_host, pages, out| {
            let mut firsts: Vec<&GraphPage> = pages.iter().map(|(page, _)| *page).collect();
            firsts.dedup_by_key(|page| page.key);
            let distinct: Vec<GraphPage> = firsts.into_iter().cloned().collect();
            if let Some(found) = key_page_and_cs(&distinct, n) {
                out.push((found, 1isize));
            }
        });
        let probe = back_to_holders(chosen, holders, sink);
        (pages_in, holders_in, probe)
    });
    for host in names.keys() {
        holders_in.insert((*host, me));
    }
    for (host, page) in local.pages {
        pages_in.insert((host_key(&host), page));
    }
    pages_in.advance_to(1);
    holders_in.advance_to(1);
    pages_in.flush();
    holders_in.flush();
    crate::cluster::finish_round(worker, &probe);
    arrived(back)
        .filter_map(|(host, chosen)| Some((names.get(&host)?.clone(), chosen)))
        .collect()
}

/// ETDM's second dataflow: the exact label trees of each host's key page (place 0) and CS
/// pages (places 1, 2, … in walk order) meet on the host's owner, which keeps the key page's
/// nodes mapped into at least `t` of the CS pages (seed 004, Algorithm 3) and sends the
/// template, with the CS pages mapped, to every worker holding pages of the host (`hosts`:
/// this worker's). A host gets none when its key page was not read or fewer than `t` CS
/// pages could be mapped.
pub fn learn_etdm<'a>(
    worker: &mut Worker,
    hosts: impl Iterator<Item = &'a String>,
    trees: Vec<(String, u32, Tree)>,
    t: u32,
    limits: Limits,
) -> HashMap<String, (Tree, u32)> {
    type Found = (TreeParts, u32);
    let names: HashMap<u64, String> = hosts.map(|host| (host_key(host), host.clone())).collect();
    let me = worker.index() as u64;
    let back: Back<Found> = Rc::default();
    let sink = back.clone();
    let (mut trees_in, mut holders_in, probe) = worker.dataflow::<u64, _, _>(|scope| {
        let (trees_in, trees) = scope.new_collection::<(u64, (u32, TreeParts)), isize>();
        let (holders_in, holders) = scope.new_collection::<(u64, u64), isize>();
        let templates = trees.reduce(move |_host, pages, out| {
            // One tree per place (a page read twice: the smallest copy).
            let mut chosen: Vec<&(u32, TreeParts)> = pages.iter().map(|(page, _)| *page).collect();
            chosen.dedup_by_key(|page| page.0);
            let tree = |(_, parts): &(u32, TreeParts)| Tree::from_parts(parts.clone()).ok();
            let Some(key) = chosen.first().filter(|p| p.0 == 0).and_then(|p| tree(p)) else {
                return;
            };
            let cs: Vec<Tree> = chosen.iter().skip(1).filter_map(|p| tree(p)).collect();
            let template = template_of_key_page(&key, &cs, t, limits);
            if template.pages_used >= t.max(1) && !template.tree.is_empty() {
                out.push(((template.tree.to_parts(), template.pages_used), 1isize));
            }
        });
        let probe = back_to_holders(templates, holders, sink);
        (trees_in, holders_in, probe)
    });
    for host in names.keys() {
        holders_in.insert((*host, me));
    }
    for (host, place, tree) in trees {
        trees_in.insert((host_key(&host), (place, tree.to_parts())));
    }
    trees_in.advance_to(1);
    holders_in.advance_to(1);
    trees_in.flush();
    holders_in.flush();
    crate::cluster::finish_round(worker, &probe);
    arrived(back)
        .filter_map(|(host, (parts, used))| {
            Some((
                names.get(&host)?.clone(),
                (Tree::from_parts(parts).ok()?, used),
            ))
        })
        .collect()
}

/// What comes back to a worker from a dataflow of [`back_to_holders`]: (host key, value) with
/// its multiplicity.
type Back<D> = Rc<RefCell<Vec<((u64, D), isize)>>>;

/// Sends each host's value in `found` to every worker holding pages of the host (`holders`:
/// (host key, worker)), where it lands in `sink`; the probe says when all has arrived.
fn back_to_holders<'scope, D>(
    found: VecCollection<'scope, u64, (u64, D)>,
    holders: VecCollection<'scope, u64, (u64, u64)>,
    sink: Back<D>,
) -> ProbeHandle<u64>
where
    D: differential_dataflow::ExchangeData,
{
    let (probe, _) = found
        .join(holders)
        .inner
        .exchange(|((_, (_, holder)), _, _)| *holder)
        .inspect(move |((host, (value, _)), _, diff)| {
            sink.borrow_mut().push(((*host, value.clone()), *diff))
        })
        .probe();
    probe
}

/// What [`back_to_holders`] delivered to this worker once its dataflow is done: each (host
/// key, value) that is present.
fn arrived<D: Ord>(back: Back<D>) -> impl Iterator<Item = (u64, D)> {
    let mut found = back.take();
    consolidate(&mut found);
    found
        .into_iter()
        .filter(|(_, diff)| *diff > 0)
        .map(|(found, _)| found)
}

/// Each host's name by its key ([`host_key`]), for the hosts a worker read.
fn host_names(pages: &BTreeMap<String, u64>) -> HashMap<u64, String> {
    pages
        .keys()
        .map(|host| (host_key(host), host.clone()))
        .collect()
}

/// Hands `offer` a worker's page count for each host it holds pages of, by host key: what the
/// dataflows take as the host's page count and its holders.
fn offer_hosts(pages: &BTreeMap<String, u64>, mut offer: impl FnMut(u64, isize)) {
    for (host, count) in pages {
        offer(host_key(host), *count as isize);
    }
}

/// A host's key in [`learn`]: 64 bits of xxh3, so a collision between two of a crawl's hosts
/// is about as likely as 2^-64 times the number of host pairs.
pub fn host_key(host: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(host.as_bytes())
}

/// One occurrence of a template, as a candidate for its row in `site_templates`: the row keeps
/// the smallest, i.e. the first occurrence on the sampled page with the smallest URL key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Occurrence {
    pub url_key: u64,
    /// The method that found the template (`Method::as_str`): ETDM falls back to SiteLevel(θ)
    /// host by host.
    pub method: String,
    pub node: u32,
    pub url: String,
    pub path: String,
    pub text_sample: String,
    pub pages_with: u32,
    pub pages_sampled: u32,
    /// The mapping method's template the page was cleaned by (`site_templates.cluster`).
    pub cluster: Option<u32>,
}

/// What a host row is made of: the host's model (sent by every worker holding the host, all
/// alike) and one entry per page with visible text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HostFact {
    Model {
        pages: u64,
        pages_sampled: u32,
        labelled: bool,
        min_count: u32,
        template_hashes: u64,
        /// The method whose templates the host has (`Method::as_str`); `None` in `apply`,
        /// which reads templates without knowing what made them.
        method: Option<String>,
    },
    /// Visible characters inside templates and in all, of one page.
    Page { templated: u64, total: u64 },
    /// The template fractions of one page (`stencil run`), as f64 bits, in
    /// `stencil_schemas::PAGE_FRACTIONS` order.
    Fractions([Option<u64>; 7]),
    /// One page too large to map against the host's mapped template.
    Unmapped,
    /// With `--state`: the night tonight is, and the host's mean templated fraction (bits) on
    /// the last night the state saw it (none for a host new tonight).
    Previous { night: u32, fraction: Option<u64> },
}

impl HostFact {
    /// The fact of a host's templates, whichever method found them.
    pub fn of_templates(templates: &HostTemplates) -> HostFact {
        HostFact::Model {
            pages: templates.pages(),
            pages_sampled: templates.pages_sampled(),
            labelled: templates.labelled(),
            min_count: templates.min_count(),
            template_hashes: templates.template_size(),
            method: Some(templates.method().as_str().to_string()),
        }
    }
}

/// What one worker found in the second pass.
#[derive(Default)]
pub struct LocalFindings {
    /// Per host, each template's smallest occurrence seen so far (looked up by `&str`, with
    /// no allocation: most candidates are refused).
    occurrences: HashMap<String, HashMap<u64, Occurrence>>,
    pub facts: Vec<(String, HostFact)>,
}

impl LocalFindings {
    /// Whether a candidate at `(url_key, node)` for this template could replace the one held:
    /// most cannot, and their paths and text samples cost, so they are only made when this
    /// says yes.
    pub fn could_take(&self, host: &str, hash: u64, (url_key, node): (u64, u32)) -> bool {
        self.occurrences
            .get(host)
            .and_then(|held| held.get(&hash))
            .is_none_or(|held| (url_key, node) <= (held.url_key, held.node))
    }

    /// Keeps the smaller of two candidates for the same template.
    pub fn offer(&mut self, host: &str, hash: u64, candidate: Occurrence) {
        if !self.occurrences.contains_key(host) {
            self.occurrences.insert(host.to_string(), HashMap::new());
        }
        if let Some(held) = self.occurrences.get_mut(host) {
            keep_smallest(held, hash, candidate);
        }
    }
}

/// Keeps in `held` the smaller of `candidate` and the occurrence held for `key`.
fn keep_smallest<K: std::hash::Hash + Eq>(
    held: &mut HashMap<K, Occurrence>,
    key: K,
    candidate: Occurrence,
) {
    match held.entry(key) {
        Entry::Occupied(mut best) if candidate < *best.get() => {
            best.insert(candidate);
        }
        Entry::Occupied(_) => {}
        Entry::Vacant(slot) => {
            slot.insert(candidate);
        }
    }
}

/// Gathers the second pass's findings by (host, hash) and by host and returns the
/// `site_templates` and `hosts` rows this worker owns.
pub fn gather(worker: &mut Worker, local: LocalFindings) -> (Vec<TemplateRow>, Vec<HostRow>) {
    let best: Rc<RefCell<HashMap<(String, u64), Occurrence>>> = Rc::default();
    let host_rows: Rc<RefCell<Vec<HostRow>>> = Rc::default();
    let (best_sink, host_sink) = (best.clone(), host_rows.clone());

    let (mut occurrences_in, mut facts_in, probe) = worker.dataflow::<u64, _, _>(|scope| {
        use timely::container::CapacityContainerBuilder;
        use timely::dataflow::channels::pact::Exchange;
        use timely::dataflow::operators::generic::operator::Operator;
        use timely::dataflow::operators::vec::Input as _;
        type Candidate = ((String, u64), Occurrence);
        let (occurrences_in, occurrences) = scope.new_input::<Candidate>();
        let (facts_in, facts) = scope.new_collection::<(String, HostFact), isize>();
        // A template's row is the smallest of its candidates: a minimum, kept as they arrive
        // at the worker owning (host, hash), so no arrangement of them is built (the hosts of
        // a large state can have millions).
        let route = Exchange::new(|((host, hash), _): &Candidate| host_key(host) ^ hash);
        let probe = occurrences
            .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(route, "Smallest", |_, _| {
                move |input, _| {
                    let mut best = best_sink.borrow_mut();
                    input.for_each(|_, candidates| {
                        for (key, candidate) in candidates.drain(..) {
                            keep_smallest(&mut best, key, candidate);
                        }
                    });
                }
            })
            .probe()
            .0;
        facts
            .reduce(|host, facts, out| out.push((host_row(host, facts), 1isize)))
            .inner
            .inspect(move |((_, row), _, diff)| {
                if *diff > 0 {
                    host_sink.borrow_mut().push(row.to_row());
                }
            })
            .probe_with(&probe);
        (occurrences_in, facts_in, probe)
    });
    for (host, held) in local.occurrences {
        for (hash, occurrence) in held {
            occurrences_in.send(((host.clone(), hash), occurrence));
        }
    }
    for fact in local.facts {
        facts_in.insert(fact);
    }
    occurrences_in.advance_to(1);
    drop(occurrences_in);
    facts_in.advance_to(1);
    facts_in.flush();
    crate::cluster::finish_round(worker, &probe);
    let mut template_rows: Vec<TemplateRow> = best
        .take()
        .into_iter()
        .map(|((host, hash), best)| TemplateRow {
            host,
            method: best.method,
            hash,
            pages_with: best.pages_with,
            pages_sampled: best.pages_sampled,
            path: best.path,
            text_sample: best.text_sample,
            url: best.url,
            node: best.node,
            cluster: best.cluster,
        })
        .collect();
    template_rows.sort_unstable_by(|a, b| (&a.host, a.hash).cmp(&(&b.host, b.hash)));
    (template_rows, host_rows.take())
}

/// A host row in a form differential can order (fractions as bits).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EncodedHostRow {
    host: String,
    model: Option<HostFact>,
    pages_with_text: u64,
    mean_bits: Option<u64>,
    median_bits: Option<u64>,
    /// Pages with a `Fractions` fact, and the mean of each fraction (bits).
    scored_pages: u64,
    mean_fraction_bits: [Option<u64>; 7],
    pages_unmapped: u64,
    /// `HostFact::Previous`: tonight's night and the previous fraction (bits).
    previous: Option<(u32, Option<u64>)>,
}

impl EncodedHostRow {
    fn to_row(&self) -> HostRow {
        let (pages, pages_sampled, labelled, min_count, template_hashes, method) = match &self.model
        {
            Some(HostFact::Model {
                pages,
                pages_sampled,
                labelled,
                min_count,
                template_hashes,
                method,
            }) => (
                // `stencil apply` with site templates: they come without page counts.
                if *pages == 0 {
                    self.scored_pages
                } else {
                    *pages
                },
                *pages_sampled,
                *labelled,
                *min_count,
                *template_hashes,
                method.clone(),
            ),
            // `stencil apply` without site templates: no statistics, only the scored pages.
            _ => (self.scored_pages, 0, false, 0, 0, None),
        };
        HostRow {
            host: self.host.clone(),
            pages,
            pages_sampled,
            site_level: labelled,
            reason: match (&self.model, labelled) {
                (_, true) => None,
                (Some(_), false) => Some("too_few_pages".to_string()),
                (None, false) => Some("no_site_statistics".to_string()),
            },
            min_count,
            template_hashes,
            pages_with_text: self.pages_with_text,
            mean_templated_fraction: self.mean_bits.map(f64::from_bits),
            median_templated_fraction: self.median_bits.map(f64::from_bits),
            mean_fractions: self.mean_fraction_bits.map(|bits| bits.map(f64::from_bits)),
            // Only a mapping method maps pages; SiteLevel(θ) and `apply` look blocks up.
            pages_unmapped: method
                .as_deref()
                .filter(|m| *m != Method::SiteLevel.as_str())
                .map(|_| self.pages_unmapped),
            method,
            night: self.previous.map(|(night, _)| night),
            previous_templated_fraction: self
                .previous
                .and_then(|(_, bits)| bits.map(f64::from_bits)),
        }
    }
}

/// Mean and median templated-text fraction of a host's pages, and the means of its pages'
/// fractions. The facts arrive sorted, so the sums run in the same order whatever the number
/// of workers: the floats agree to the bit.
fn host_row(host: &str, facts: &[(&HostFact, isize)]) -> EncodedHostRow {
    let mut model = None;
    let mut fractions: Vec<f64> = Vec::new();
    let mut scored_pages = 0u64;
    let mut pages_unmapped = 0u64;
    let mut previous = None;
    let mut sums = [(0.0f64, 0u64); 7];
    for (fact, multiplicity) in facts {
        match fact {
            HostFact::Model { .. } => model = Some((*fact).clone()),
            HostFact::Fractions(bits) => {
                for _ in 0..*multiplicity {
                    scored_pages += 1;
                    for (sum, bits) in sums.iter_mut().zip(bits) {
                        if let Some(bits) = bits {
                            sum.0 += f64::from_bits(*bits);
                            sum.1 += 1;
                        }
                    }
                }
            }
            HostFact::Unmapped => pages_unmapped += *multiplicity as u64,
            HostFact::Previous { night, fraction } => previous = Some((*night, *fraction)),
            HostFact::Page { templated, total } => {
                let fraction = *templated as f64 / (*total).max(1) as f64;
                for _ in 0..*multiplicity {
                    fractions.push(fraction);
                }
            }
        }
    }
    fractions.sort_by(f64::total_cmp);
    let n = fractions.len();
    let mean = (n > 0).then(|| fractions.iter().sum::<f64>() / n as f64);
    let median = (n > 0).then(|| {
        if n % 2 == 1 {
            fractions[n / 2]
        } else {
            (fractions[n / 2 - 1] + fractions[n / 2]) / 2.0
        }
    });
    EncodedHostRow {
        host: host.to_string(),
        model,
        pages_with_text: n as u64,
        mean_bits: mean.map(f64::to_bits),
        median_bits: median.map(f64::to_bits),
        scored_pages,
        mean_fraction_bits: sums.map(|(sum, n)| (n > 0).then(|| (sum / n as f64).to_bits())),
        pages_unmapped,
        previous,
    }
}
