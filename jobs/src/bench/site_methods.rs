//! The site-level methods side by side (docs/benchmarks.md has the figures): what finding a
//! host's template costs per host, what removing it costs per page, and what each method keeps
//! per host while the input is read, for SiteLevel(θ), RTDM-TD and ETDM.
//!
//! Hosts are sites (`site_of`), pages are sampled by `url_key`, and only hosts with at least
//! `min_host_pages` distinct URLs get a template, as in `stencil site`, so that the methods
//! are measured on the same hosts the job would learn templates for.

use std::collections::BTreeMap;
use std::time::Instant;

use stencil_operators::dom::subtree::{self, Subtree};
use stencil_operators::dom::Dom;
use stencil_operators::reading::page::Page;
use stencil_operators::site::embedding::embedded_roots;
use stencil_operators::site::etdm::{label_tree_exact, template_of_key_page};
use stencil_operators::site::rtdm::{covered_roots, covered_roots_exact, Labelled, Limits, Tree};
use stencil_operators::site::rtdm_template::{
    find_template, label_tree, PageTree, DEFAULT_SAMPLE_PAGES,
};
use stencil_operators::site::site_level::{
    self, BottomK, Fingerprints, HostModel, PageFingerprints, Params,
};

/// Pages ETDM's stand-in template is built from: the key page and the pages it is mapped onto.
const ETDM_PAGES: usize = 4;
/// Of the `ETDM_PAGES - 1` pages mapped, how many must share a node for it to be template.
const ETDM_THRESHOLD: u32 = 2;
/// A tree node as `rtdm::Tree` stores it: a u64 label, a u32 subtree end and a u64 key.
const TREE_NODE_BYTES: usize = 20;
/// A kept fingerprint's count as `HostModel::counts` stores it, hash-table overhead left out.
const COUNT_ENTRY_BYTES: usize = 12;

struct Host<'a> {
    name: &'a str,
    /// Page indices by URL key, one per distinct URL (the smallest index of its copies):
    /// the order every method samples in.
    distinct: Vec<usize>,
    /// Every page index, copies included: removal runs on each page read.
    all: Vec<usize>,
}

impl Host<'_> {
    fn learned(&self, params: &Params) -> bool {
        self.distinct.len() >= params.min_host_pages.max(2) as usize
    }
}

/// Per host, the fastest of the rounds.
fn keep_min(best: &mut [f64], round: &[f64]) {
    for (b, r) in best.iter_mut().zip(round) {
        *b = b.min(*r);
    }
}

/// A removal stage's figures for one round.
#[derive(Default)]
struct Removal {
    seconds: f64,
    label_seconds: f64,
    pages: usize,
    bytes: u64,
    too_large: usize,
}

/// A mapping method's detection, per host.
/// A detection stage's figures: the fastest round's seconds, each host's fastest seconds,
/// and what the last round found.
struct Detection {
    seconds: f64,
    host_seconds: Vec<f64>,
    /// Each host's template, if it has one.
    templates: Vec<Option<Tree>>,
    too_large: u32,
}

pub fn run(pages: &[Page], doms: &[Dom], rounds: usize) {
    let params = Params::default();
    let limits = Limits::default();
    let mut by_site: BTreeMap<&str, Vec<(u64, usize)>> = BTreeMap::new();
    for (k, page) in pages.iter().enumerate() {
        by_site
            .entry(site_level::site_of(&page.host))
            .or_default()
            .push((site_level::url_key(&page.url), k));
    }
    let mut host_of = vec![0usize; pages.len()];
    let hosts: Vec<Host> = by_site
        .into_iter()
        .enumerate()
        .map(|(h, (name, mut keyed))| {
            keyed.sort_unstable();
            let all: Vec<usize> = keyed.iter().map(|&(_, k)| k).collect();
            for &k in &all {
                host_of[k] = h;
            }
            keyed.dedup_by_key(|&mut (key, _)| key);
            Host {
                name,
                distinct: keyed.into_iter().map(|(_, k)| k).collect(),
                all,
            }
        })
        .collect();
    let learned = hosts.iter().filter(|h| h.learned(&params)).count();
    // Every page's content hashes and aggregates, which every page gets before any method
    // runs (the stages before are measured already): outside the timed parts. The per-page
    // stages below compute them again just before their timed part, as the job does.
    let sums: Vec<Vec<Subtree>> = doms
        .iter()
        .zip(pages)
        .map(|(d, p)| subtree::summarize(d, &p.host))
        .collect();

    // SiteLevel(θ) as the job runs it: pages offered in input order to their host's sample,
    // one sample counted per host, the model applied to every page. Each page's aggregates
    // are computed outside the timed parts, as the stages before them are measured already.
    let mut fingerprint_s = f64::INFINITY;
    let mut count_s = f64::INFINITY;
    let mut apply_s = f64::INFINITY;
    let mut sitelevel_host_s = vec![f64::INFINITY; hosts.len()];
    let mut models: Vec<Option<HostModel>> = Vec::new();
    let mut sample_bytes = vec![0usize; hosts.len()];
    for _ in 0..rounds.max(1) {
        let mut host_s = vec![0.0; hosts.len()];
        let mut samples: Vec<BottomK> = hosts
            .iter()
            .map(|_| BottomK::new(params.host_sample))
            .collect();
        let mut f_s = 0.0;
        for (k, (d, p)) in doms.iter().zip(pages).enumerate() {
            // Computed just before, as the job does: hot in cache, as the removal's are.
            let sums = subtree::summarize(d, &p.host);
            let start = Instant::now();
            let fingerprints = site_level::fingerprints(d, &sums, Fingerprints::Subtrees);
            samples[host_of[k]].offer(site_level::url_key(&p.url), fingerprints);
            let elapsed = start.elapsed().as_secs_f64();
            f_s += elapsed;
            host_s[host_of[k]] += elapsed;
        }
        let mut c_s = 0.0;
        models = Vec::with_capacity(hosts.len());
        for (h, (host, sample)) in hosts.iter().zip(samples).enumerate() {
            let start = Instant::now();
            let sampled: Vec<PageFingerprints> = sample
                .into_pages()
                .map(|(url_key, fingerprints)| PageFingerprints {
                    host: host.name.to_string(),
                    url_key,
                    fingerprints,
                })
                .collect();
            sample_bytes[h] = 8 * sampled.iter().map(|p| p.fingerprints.len()).sum::<usize>();
            // `learn` re-offers the sample to a bottom-k of its own: at most `host_sample`
            // pages, nothing next to the fingerprints.
            let model = site_level::learn(sampled, &params, Fingerprints::Subtrees)
                .into_values()
                .next();
            let elapsed = start.elapsed().as_secs_f64();
            c_s += elapsed;
            host_s[h] += elapsed;
            models.push(model);
        }
        let mut a_s = 0.0;
        for (k, (d, p)) in doms.iter().zip(pages).enumerate() {
            let Some(model) = &models[host_of[k]] else {
                continue;
            };
            let sums = subtree::summarize(d, &p.host);
            let start = Instant::now();
            let roots = site_level::template_roots(d, &sums, model, Fingerprints::Subtrees);
            let inside = site_level::inside_templates(d, &roots);
            a_s += start.elapsed().as_secs_f64();
            std::hint::black_box((roots, inside));
        }
        fingerprint_s = fingerprint_s.min(f_s);
        count_s = count_s.min(c_s);
        apply_s = apply_s.min(a_s);
        keep_min(&mut sitelevel_host_s, &host_s);
    }

    // RTDM-TD as the job runs it: every host's sample labelled (the job cannot know a host
    // will stay small), FindTemplate for the hosts with enough pages. Only the final sample
    // is labelled here; the job also labels pages that a smaller key later evicts.
    let mut rtdm_sample_bytes = vec![0usize; hosts.len()];
    let rtdm = best_detection(rounds, &hosts, |h, host| {
        let sample = &host.distinct[..host.distinct.len().min(DEFAULT_SAMPLE_PAGES as usize)];
        let trees: Vec<Tree> = sample
            .iter()
            .map(|&k| label_tree(&doms[k], &sums[k]))
            .collect();
        rtdm_sample_bytes[h] = TREE_NODE_BYTES * trees.iter().map(Tree::len).sum::<usize>();
        let template = host
            .learned(&params)
            .then(|| find_template(trees, DEFAULT_SAMPLE_PAGES, limits))
            .flatten();
        let too_large = template.as_ref().map_or(0, |t| t.pages_too_large);
        (template.map(|t| t.tree), too_large)
    });
    // The page is read in place, labelled by the content hashes it has: nothing to label.
    let rtdm_removal_by = |find: &dyn Fn(&Tree, &PageTree) -> Option<Vec<u32>>| {
        best_removal(
            rounds,
            &hosts,
            &rtdm.templates,
            pages,
            |k| subtree::summarize(&doms[k], &pages[k].host),
            |template, k, sums| (0.0, find(template, &PageTree::new(&doms[k], sums))),
        )
    };
    let rtdm_removal =
        rtdm_removal_by(&|template, page| covered_roots(template, page, limits).ok());
    let embedded_removal =
        rtdm_removal_by(&|template, page| embedded_roots(template, page, limits.max_cells).ok());
    let rtdm_agreement = embedding_agreement(
        &hosts,
        &rtdm.templates,
        doms,
        &sums,
        limits,
        |k| PageTree::new(&doms[k], &sums[k]),
        |template, page| covered_roots(template, page, limits).ok(),
    );

    // Not seed 004's template: its key page and complete subdigraph need the link graph. The
    // first pages by URL key cost the same to map, which is what is measured here.
    let etdm = best_detection(rounds, &hosts, |_, host| {
        if !host.learned(&params) {
            return (None, 0);
        }
        let trees: Vec<Tree> = host
            .distinct
            .iter()
            .take(ETDM_PAGES)
            .map(|&k| label_tree_exact(&doms[k]))
            .collect();
        let template = trees
            .split_first()
            .map(|(key, cs)| template_of_key_page(key, cs, ETDM_THRESHOLD, limits));
        let too_large = template.as_ref().map_or(0, |t| t.pages_too_large);
        (
            template.map(|t| t.tree).filter(|t| !t.is_empty()),
            too_large,
        )
    });
    // ETDM's pages are labelled by tag and id, which the content hashes do not follow: each
    // page is labelled first, inside the timed part.
    let etdm_removal_by = |find: &dyn Fn(&Tree, &Tree) -> Option<Vec<u32>>| {
        best_removal(
            rounds,
            &hosts,
            &etdm.templates,
            pages,
            |_| (),
            |template, k, _| {
                let labelled = Instant::now();
                let tree = label_tree_exact(&doms[k]);
                let label_s = labelled.elapsed().as_secs_f64();
                (label_s, find(template, &tree))
            },
        )
    };
    let etdm_removal =
        etdm_removal_by(&|template, tree| covered_roots_exact(template, tree, limits).ok());
    let etdm_embedded_removal =
        etdm_removal_by(&|template, tree| embedded_roots(template, tree, limits.max_cells).ok());
    let etdm_agreement = embedding_agreement(
        &hosts,
        &etdm.templates,
        doms,
        &sums,
        limits,
        |k| label_tree_exact(&doms[k]),
        |template, page| covered_roots_exact(template, page, limits).ok(),
    );

    let all_bytes: u64 = pages.iter().map(|p| p.html.len() as u64).sum();
    println!(
        "\nsite-level methods: {} sites, {learned} with ≥ {} distinct URLs (the hosts that get a \
         template, as in `stencil site`)\n",
        hosts.len(),
        params.min_host_pages
    );
    println!("| stage (one thread) | pages | seconds | MB/s of HTML | pages/s | pages too large |");
    println!("|---|---:|---:|---:|---:|---:|");
    let row = |name: &str, s: f64, pages: usize, bytes: u64, too_large: Option<usize>| {
        println!(
            "| {name} | {pages} | {s:.3} | {:.1} | {:.0} | {} |",
            bytes as f64 / 1e6 / s,
            pages as f64 / s,
            too_large.map_or("—".to_string(), |n| n.to_string())
        )
    };
    let n = pages.len();
    row(
        "SiteLevel(θ) statistics: fingerprints + bottom-k samples",
        fingerprint_s,
        n,
        all_bytes,
        None,
    );
    row(
        "SiteLevel(θ) statistics: counting (learn)",
        count_s,
        n,
        all_bytes,
        None,
    );
    row(
        "SiteLevel(θ) statistics pass",
        fingerprint_s + count_s,
        n,
        all_bytes,
        None,
    );
    row(
        "SiteLevel(θ) removal: template roots + inside",
        apply_s,
        n,
        all_bytes,
        None,
    );
    for (name, removal) in [
        (
            "RTDM-TD removal: map the template onto the page in place + roots",
            &rtdm_removal,
        ),
        (
            "RTDM-TD removal: the template found in the page top-down in one pass + roots",
            &embedded_removal,
        ),
        (
            "ETDM removal (template from the first 4 pages by URL key, not the n-CS): label \
             tree + exact map + roots",
            &etdm_removal,
        ),
        (
            "ETDM removal (same template): label tree + the template found in one pass + roots",
            &etdm_embedded_removal,
        ),
    ] {
        row(
            name,
            removal.seconds,
            removal.pages,
            removal.bytes,
            Some(removal.too_large),
        );
    }
    println!(
        "ETDM removal: labelling is {:.1}% of it",
        100.0 * etdm_removal.label_seconds / etdm_removal.seconds
    );

    rtdm_agreement.print("RTDM-TD");
    etdm_agreement.print("ETDM");

    let is_learned: Vec<bool> = hosts.iter().map(|h| h.learned(&params)).collect();
    println!(
        "\n| detection (one thread) | seconds | ms per host, mean | ms per host, max | max host | \
         hosts with a template | template size, mean | sample pages too large |"
    );
    println!("|---|---:|---:|---:|---|---:|---:|---:|");
    let detection = |name: &str, total_s: f64, host_s: &[f64], with: usize, size: String, tl| {
        // Per host over the hosts that get a template: the rest cost what their pages cost
        // (fingerprints, a label tree), which the total includes.
        let learned_s: Vec<(f64, &str)> = host_s
            .iter()
            .zip(&hosts)
            .zip(&is_learned)
            .filter(|(_, &l)| l)
            .map(|((&s, h), _)| (s, h.name))
            .collect();
        let mean = learned_s.iter().map(|(s, _)| s).sum::<f64>() / learned_s.len() as f64;
        let (max, max_host) = learned_s
            .iter()
            .copied()
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((f64::NAN, "—"));
        println!(
            "| {name} | {total_s:.3} | {:.2} | {:.2} | {max_host} | {with} | {size} | {tl} |",
            mean * 1e3,
            max * 1e3
        );
    };
    let labelled_models: Vec<&HostModel> = models
        .iter()
        .flatten()
        .filter(|m| m.template_count() > 0)
        .collect();
    detection(
        "SiteLevel(θ) statistics pass (fingerprints of every page + counting)",
        fingerprint_s + count_s,
        &sitelevel_host_s,
        labelled_models.len(),
        format!(
            "{:.0} fingerprints",
            mean_of(labelled_models.iter().map(|m| m.template_count()))
        ),
        "—".to_string(),
    );
    for (name, found) in [
        (
            "RTDM-TD detection (≤ 25 sample trees labelled + FindTemplate)",
            &rtdm,
        ),
        (
            "ETDM detection (template from the first 4 pages by URL key, not the n-CS)",
            &etdm,
        ),
    ] {
        let templates: Vec<&Tree> = found.templates.iter().flatten().collect();
        detection(
            name,
            found.seconds,
            &found.host_seconds,
            templates.len(),
            format!("{:.0} nodes", mean_of(templates.iter().map(|t| t.len()))),
            found.too_large.to_string(),
        );
    }

    println!("\n| kept per host | hosts | bytes per host, mean | bytes per host, max | max host | total MB |");
    println!("|---|---:|---:|---:|---|---:|");
    let memory = |name: &str, bytes: Vec<(usize, &str)>| {
        let total: usize = bytes.iter().map(|(b, _)| b).sum();
        let (max, max_host) = bytes
            .iter()
            .copied()
            .max_by_key(|(b, _)| *b)
            .unwrap_or((0, "—"));
        println!(
            "| {name} | {} | {:.0} | {max} | {max_host} | {:.1} |",
            bytes.len(),
            total as f64 / bytes.len().max(1) as f64,
            total as f64 / 1e6
        );
    };
    let names = || hosts.iter().map(|h| h.name);
    memory(
        "SiteLevel(θ) sample (fingerprints × 8 B, ≤ 200 pages)",
        sample_bytes.iter().copied().zip(names()).collect(),
    );
    memory(
        "SiteLevel(θ) model (kept counts × 12 B, table overhead left out)",
        models
            .iter()
            .zip(names())
            .filter_map(|(m, name)| Some((COUNT_ENTRY_BYTES * m.as_ref()?.counts.len(), name)))
            .collect(),
    );
    memory(
        "RTDM-TD sample trees (nodes × 20 B, ≤ 25 pages)",
        rtdm_sample_bytes.iter().copied().zip(names()).collect(),
    );
    memory(
        "RTDM-TD template tree (nodes × 20 B; hosts with a template)",
        rtdm.templates
            .iter()
            .zip(names())
            .filter_map(|(t, name)| Some((TREE_NODE_BYTES * t.as_ref()?.len(), name)))
            .collect(),
    );
}

/// The fastest of `rounds` detections over every host: `detect` finds host `h`'s template,
/// with the sample pages it left out as too large to map.
fn best_detection(
    rounds: usize,
    hosts: &[Host],
    mut detect: impl FnMut(usize, &Host) -> (Option<Tree>, u32),
) -> Detection {
    let mut best = Detection {
        seconds: f64::INFINITY,
        host_seconds: vec![f64::INFINITY; hosts.len()],
        templates: Vec::new(),
        too_large: 0,
    };
    for _ in 0..rounds.max(1) {
        let mut round_seconds = vec![0.0; hosts.len()];
        let (mut templates, mut too_large) = (Vec::with_capacity(hosts.len()), 0);
        for (h, host) in hosts.iter().enumerate() {
            let start = Instant::now();
            let (template, left_out) = detect(h, host);
            round_seconds[h] = start.elapsed().as_secs_f64();
            too_large += left_out;
            templates.push(template);
        }
        best.seconds = best.seconds.min(round_seconds.iter().sum());
        keep_min(&mut best.host_seconds, &round_seconds);
        (best.templates, best.too_large) = (templates, too_large);
    }
    best
}

/// The fastest round of a removal over every page of every host with a template. `given`
/// computes, untimed, what page `k` has before the removal runs; `remove` labels page `k`
/// (returning the labelling's seconds) and maps `template` onto it: `None` when the mapping
/// passed the limits.
fn best_removal<P>(
    rounds: usize,
    hosts: &[Host],
    templates: &[Option<Tree>],
    pages: &[Page],
    mut given: impl FnMut(usize) -> P,
    mut remove: impl FnMut(&Tree, usize, &P) -> (f64, Option<Vec<u32>>),
) -> Removal {
    let mut best = Removal {
        seconds: f64::INFINITY,
        ..Removal::default()
    };
    for _ in 0..rounds.max(1) {
        let mut round = Removal::default();
        for (host, template) in hosts.iter().zip(templates) {
            let Some(template) = template else {
                continue;
            };
            for &k in &host.all {
                let before = given(k);
                let start = Instant::now();
                let (label_s, roots) = remove(template, k, &before);
                round.seconds += start.elapsed().as_secs_f64();
                round.label_seconds += label_s;
                round.pages += 1;
                round.bytes += pages[k].html.len() as u64;
                round.too_large += usize::from(roots.is_none());
                std::hint::black_box(roots);
            }
        }
        if round.seconds < best.seconds {
            best = round;
        }
    }
    best
}

/// Visible characters covered by the least-cost mapping's roots, by the one-pass removal's,
/// and by both, over every page of every host with a template.
#[derive(Default)]
struct Agreement {
    pages: usize,
    same_pages: usize,
    mapped: u64,
    embedded: u64,
    both: u64,
}

/// How close the one-pass removal comes to the least-cost mapping's over `templates`: `page`
/// gives page `k` as the method labels it, `mapped` the mapping's roots.
fn embedding_agreement<P: Labelled>(
    hosts: &[Host],
    templates: &[Option<Tree>],
    doms: &[Dom],
    sums: &[Vec<Subtree>],
    limits: Limits,
    page: impl Fn(usize) -> P,
    mapped: impl Fn(&Tree, &P) -> Option<Vec<u32>>,
) -> Agreement {
    let mut agreement = Agreement::default();
    for (host, template) in hosts.iter().zip(templates) {
        let Some(template) = template else {
            continue;
        };
        for &k in &host.all {
            let page = page(k);
            let (Some(mapped), Ok(embedded)) = (
                mapped(template, &page),
                embedded_roots(template, &page, limits.max_cells),
            ) else {
                continue;
            };
            let (m, e) = (
                doms[k].inside_subtrees(&mapped),
                doms[k].inside_subtrees(&embedded),
            );
            let mut same = true;
            for (i, sum) in sums[k].iter().enumerate() {
                if doms[k].text(i).is_none() {
                    continue;
                }
                let chars = u64::from(sum.text_chars);
                agreement.mapped += chars * u64::from(m[i]);
                agreement.embedded += chars * u64::from(e[i]);
                agreement.both += chars * u64::from(m[i] && e[i]);
                same &= chars == 0 || m[i] == e[i];
            }
            agreement.pages += 1;
            agreement.same_pages += usize::from(same);
        }
    }
    agreement
}

impl Agreement {
    fn print(&self, method: &str) {
        println!(
            "{method} removal in one pass against the least-cost mapping, over {} pages: of the \
             visible characters the mapping covers, the pass covers {:.2}%; of those the pass \
             covers, the mapping covers {:.2}%; pages with the same covered text: {} ({:.1}%)",
            self.pages,
            100.0 * self.both as f64 / self.mapped as f64,
            100.0 * self.both as f64 / self.embedded as f64,
            self.same_pages,
            100.0 * self.same_pages as f64 / self.pages as f64,
        );
    }
}

/// NaN when empty, which prints as such rather than as a made-up zero.
fn mean_of(values: impl Iterator<Item = usize>) -> f64 {
    let (sum, n) = values.fold((0usize, 0usize), |(s, n), v| (s + v, n + 1));
    sum as f64 / n as f64
}
