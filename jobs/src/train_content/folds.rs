//! How pages are dealt to folds: by a hash of the host, or a data set per fold
//! (`--hold-out-sources`), never a host on both sides of a split.

use std::collections::{BTreeSet, HashMap, HashSet};

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::TrainContentArgs;

/// How the held-out report deals pages to folds.
#[derive(Clone, Copy)]
pub(super) enum Folds {
    /// By a seeded hash of the host, into this many folds.
    Hosts { folds: usize, seed: u64 },
    /// One fold per source (data set).
    Sources,
}

impl Folds {
    pub(super) fn of(args: &TrainContentArgs) -> Folds {
        if args.hold_out_sources {
            Folds::Sources
        } else {
            Folds::Hosts {
                folds: args.folds,
                seed: args.fold_seed,
            }
        }
    }

    /// How the pages were held out, as the report's header says it.
    pub(super) fn how(self) -> &'static str {
        match self {
            Folds::Hosts { .. } => "host-disjoint",
            Folds::Sources => "by source, hosts disjoint",
        }
    }

    /// What a fold holds: the other pages a fit needs are of another one of these.
    pub(super) fn unit(self) -> &'static str {
        match self {
            Folds::Hosts { .. } => "host",
            Folds::Sources => "source",
        }
    }

    /// Each page's fold, from its (source, host): its host's hash fold, or its source's rank
    /// among the sources (sorted, so the folds do not depend on the pages' order).
    pub(super) fn deal(self, pages: &[(&str, &str)]) -> Vec<usize> {
        match self {
            Folds::Hosts { folds, seed } => (pages.iter())
                .map(|&(_, site)| fold_of(site, folds, seed))
                .collect(),
            Folds::Sources => {
                let sorted: BTreeSet<&str> = pages.iter().map(|&(source, _)| source).collect();
                let rank: HashMap<&str, usize> = (sorted.into_iter().enumerate())
                    .map(|(rank, source)| (source, rank))
                    .collect();
                pages.iter().map(|&(source, _)| rank[source]).collect()
            }
        }
    }
}

/// The pages `fold` holds out, and the pages its model is fitted on: every other page but
/// those of a host the held-out pages have (a host may appear in two sources).
pub(super) fn split(
    fold: usize,
    folds: &[usize],
    pages: &[(&str, &str)],
) -> (Vec<usize>, Vec<usize>) {
    let (held, train): (Vec<usize>, Vec<usize>) = (0..folds.len()).partition(|&p| folds[p] == fold);
    let held_sites: HashSet<&str> = held.iter().map(|&p| pages[p].1).collect();
    let train = (train.into_iter())
        .filter(|&p| !held_sites.contains(pages[p].1))
        .collect();
    (held, train)
}

fn fold_of(site: &str, folds: usize, seed: u64) -> usize {
    (xxh3_64_with_seed(site.as_bytes(), seed) % folds as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_seed_zero_deals_hosts_by_the_unseeded_hash() {
        // Seed 0 is the unseeded hash, the one the shipped model's held-out figures come from.
        for site in ["example.com", "www.nytimes.com", "docs.python.org", ""] {
            let unseeded = (xxhash_rust::xxh3::xxh3_64(site.as_bytes()) % 5) as usize;
            assert_eq!(fold_of(site, 5, 0), unseeded);
        }
        let moved = ["a.com", "b.com", "c.com", "d.com", "e.com", "f.com"]
            .iter()
            .filter(|s| fold_of(s, 5, 1) != fold_of(s, 5, 0))
            .count();
        assert!(moved > 0, "another seed deals hosts anew");
    }

    #[test]
    fn a_held_out_source_is_judged_by_a_model_that_never_saw_its_hosts() {
        let pages = [
            ("wcxb", "a.com"),
            ("dragnet", "b.com"),
            ("wcxb", "b.com"),
            ("dragnet", "c.com"),
            ("l3s", "d.com"),
        ];
        let folds = Folds::Sources.deal(&pages);
        // Sources in sorted order: dragnet 0, l3s 1, wcxb 2.
        assert_eq!(folds, vec![2, 0, 2, 0, 1]);
        let (held, train) = split(0, &folds, &pages);
        assert_eq!(held, vec![1, 3]);
        // b.com's wcxb page is left out of the fit that judges dragnet's b.com page.
        assert_eq!(train, vec![0, 4]);
        let (held, train) = split(2, &folds, &pages);
        assert_eq!((held, train), (vec![0, 2], vec![3, 4]));
        // By hosts, a host's pages share a fold, and the fit holds every other page.
        let folds = Folds::Hosts { folds: 3, seed: 0 }.deal(&pages);
        assert_eq!(folds[1], folds[2]);
        for fold in 0..3 {
            let (held, train) = split(fold, &folds, &pages);
            assert_eq!(held.len() + train.len(), pages.len());
        }
    }
}
