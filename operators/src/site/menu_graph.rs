//! Which pages to compare a page with: the pages its menu links to, found in the site's link
//! graph (Alarte's thesis, seed 004 chapter 2).
//!
//! A menu is on every page it links to, so the pages a menu links to all link to one another:
//! they form a *complete subdigraph* (CS) of the site's link graph, and they share the
//! template with the page the menu is on (§2.2). Seed 004 starts from a *key page*
//! ([`key_page`]), ranks its links by how close their directories are to the key page's
//! ([`hyperlink_distance`], §2.2.2) and, among equally close links, by how far apart they sit
//! in the page ([`dom_distance`], §2.2.3), so that the pages compared are alike in template
//! and unlike in content ([`sort_links`], Algorithm 1). It then loads the linked pages in that
//! order until `n` of them link to each other both ways ([`complete_subdigraph`], Algorithm
//! 2). [`crate::site::etdm`] reads the key page's template off those pages.
//!
//! Links stay on the key page's site (seed 004 does so in its implementation: §2.2.5's
//! footnote and §4.2's), compared as SiteLevel compares hosts
//! ([`crate::site::site_level::site_of`]); URLs are compared as the `url` crate serializes
//! them, so a crawl keyed the same way is found by its links.

use std::collections::HashSet;

use url::Url;

use crate::dom::Dom;
use crate::site::site_level::{site_of, url_key};
use crate::FastMap;

/// A link of a page: where it points and which `<a>` element says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Resolved against the page, without its fragment.
    pub url: Url,
    /// The anchor's node in the page's [`Dom`] (for [`dom_distance`]).
    pub anchor: usize,
}

/// The page's distinct links within its own site, in document order (seed 004's `getLinks`:
/// non-repeated, without self-links, §2.2.5): each `<a href>` resolved against the page's URL
/// (or its first `<base href>`, as a browser does), without its fragment, kept when it is
/// http(s) on the same site (host without a leading `www.`), not the page itself (under
/// either scheme, with or without `www.`) and not seen before on the page. A link that does
/// not resolve is left out.
pub fn page_links(dom: &Dom, page_url: &Url) -> Vec<Link> {
    let Some(site) = page_url.host_str().map(site_of) else {
        return Vec::new();
    };
    // What makes a URL this page, whatever its scheme or `www.`.
    let page_of = |url: &Url| {
        (
            url.port(),
            url.path().to_string(),
            url.query().map(str::to_string),
        )
    };
    let this_page = page_of(page_url);
    let base = (0..dom.len())
        .find(|&i| dom.tag(i).is_some_and(|t| &**t == "base") && dom.href(i).is_some())
        .and_then(|i| dom.href(i))
        .and_then(|href| page_url.join(href).ok())
        .unwrap_or_else(|| page_url.clone());
    let mut seen: HashSet<String> = HashSet::new();
    let mut links = Vec::new();
    for anchor in 0..dom.len() {
        if dom.tag(anchor).map(|t| &**t) != Some("a") {
            continue;
        }
        let Some(mut url) = dom.href(anchor).and_then(|href| base.join(href).ok()) else {
            continue;
        };
        url.set_fragment(None);
        let same_site = url.host_str().map(site_of) == Some(site);
        if !matches!(url.scheme(), "http" | "https") || !same_site || page_of(&url) == this_page {
            continue;
        }
        if seen.insert(url.as_str().to_string()) {
            links.push(Link { url, anchor });
        }
    }
    links
}

/// A link as Definition 2.2.4 reads it: the sequence of its directories, the site first (host
/// without a leading `www.`), then the path's directories; the resource's name is left out.
/// The last path segment is a resource name when it has a dot (`index.html`, `pi.html`);
/// without one it is a directory, as in the thesis's examples, where `www.bbc.com/news` and
/// `…/formula1/26599556` are directories (Examples 2.2.6). Empty segments are skipped.
pub fn directories(url: &Url) -> Vec<&str> {
    let mut dirs = vec![site_of(url.host_str().unwrap_or(""))];
    if let Some(segments) = url.path_segments() {
        let segments: Vec<&str> = segments.collect();
        let last = segments.len().saturating_sub(1);
        for (k, &segment) in segments.iter().enumerate() {
            let file = k == last && segment.contains('.');
            if !segment.is_empty() && !file {
                dirs.push(segment);
            }
        }
    }
    dirs
}

/// Seed 004's hDistance from `h` to `h2` (Definition 2.2.5), over directory sequences
/// ([`directories`]): 0 for the same directory, `+k` when `h2` is `k` levels below `h`,
/// and `−k` when `h2` is elsewhere, `k` being how many of `h`'s levels must be climbed to
/// reach a common ancestor (all of `h` when they share no first word).
pub fn hyperlink_distance<S: AsRef<str>>(h: &[S], h2: &[S]) -> i64 {
    let common = h
        .iter()
        .zip(h2)
        .take_while(|(a, b)| a.as_ref() == b.as_ref())
        .count();
    if common == h.len() {
        (h2.len() - common) as i64
    } else {
        -((h.len() - common) as i64)
    }
}

/// Where a hyperlink distance ranks in seed 004's link relevance order (Definition 2.2.12):
/// the same directory first, then deeper and deeper subdirectories, then links outside, the
/// fewest levels up first. Smaller is more relevant; equal ranks are equally relevant.
pub fn link_relevance(distance: i64) -> (bool, u64) {
    (distance < 0, distance.unsigned_abs())
}

/// Seed 004's dDistance (Definition 2.2.10): the nodes on the two DOM paths below their last
/// common node, i.e. the number of edges between `a` and `b` through their lowest common
/// ancestor (Example 2.2.11: `body content div p span` and `body content div div img` are 6
/// apart). 0 for the same node; an ancestor is as many edges away as it is levels up.
pub fn dom_distance(dom: &Dom, a: usize, b: usize) -> u32 {
    let depth = |n: usize| dom.ancestors_or_self(n).count();
    let (mut a, mut b) = (a, b);
    let (mut da, mut db) = (depth(a), depth(b));
    let mut distance = 0u32;
    while da > db {
        let Some(p) = dom.parent(a) else { break };
        (a, da, distance) = (p, da - 1, distance + 1);
    }
    while db > da {
        let Some(p) = dom.parent(b) else { break };
        (b, db, distance) = (p, db - 1, distance + 1);
    }
    while a != b {
        let (Some(pa), Some(pb)) = (dom.parent(a), dom.parent(b)) else {
            break;
        };
        (a, b, distance) = (pa, pb, distance + 2);
    }
    distance
}

/// [`sort_links`] orders at most this many links (the first in the order given): its DOM
/// relevance compares every link with every link sorted before it, so its work is quadratic
/// in the links, and a menu is near the top of the page.
pub const MAX_SORTED_LINKS: usize = 1024;

/// Seed 004's Algorithm 1 over a key page's links (the first [`MAX_SORTED_LINKS`]): the order, as
/// indices into `links`, in which to load the pages they point to. Links are grouped by their
/// hyperlink distance from the key page's URL, groups in link relevance order ([`link_relevance`]);
/// within a group, the next link is the one farthest from the links already sorted (the largest
/// least `distance` between anchors, Definition 2.2.14), so that the pages compared differ in
/// content. While nothing is sorted yet, a link's farthest-ness is its least distance to every
/// other link of the page, as the thesis's bbc example computes it (Example 2.2.15). Remaining ties
/// go to the order of `links` ([`page_links`] gives document order). `distance` is the DOM distance
/// between two anchors (`|a, b| dom_distance(&dom, a, b)`).
pub fn sort_links(
    key_url: &Url,
    links: &[Link],
    distance: impl Fn(usize, usize) -> u32,
) -> Vec<usize> {
    let links = links.get(..MAX_SORTED_LINKS).unwrap_or(links);
    let key = directories(key_url);
    let relevance: Vec<(bool, u64)> = links
        .iter()
        .map(|l| link_relevance(hyperlink_distance(&key, &directories(&l.url))))
        .collect();
    let mut by_relevance: Vec<usize> = (0..links.len()).collect();
    by_relevance.sort_by_key(|&i| (relevance[i], i));
    let between = |i: usize, j: usize| distance(links[i].anchor, links[j].anchor);

    let mut order: Vec<usize> = Vec::with_capacity(links.len());
    for group in by_relevance.chunk_by(|&i, &j| relevance[i] == relevance[j]) {
        // The group's members in document order, each with its least distance to the
        // reference links.
        let mut members: Vec<usize> = group.to_vec();
        let mut nearest: Vec<u32> = members
            .iter()
            .map(|&m| {
                let least = if order.is_empty() {
                    (0..links.len())
                        .filter(|&l| l != m)
                        .map(|l| between(m, l))
                        .min()
                } else {
                    order.iter().map(|&l| between(m, l)).min()
                };
                least.unwrap_or(u32::MAX)
            })
            .collect();
        let mut nothing_sorted = order.is_empty();
        while !members.is_empty() {
            // The first of the farthest: `max_by_key` would keep the last.
            let mut pick = 0;
            for (k, &d) in nearest.iter().enumerate() {
                if d > nearest[pick] {
                    pick = k;
                }
            }
            let chosen = members.remove(pick);
            nearest.remove(pick);
            order.push(chosen);
            for (&m, d) in members.iter().zip(nearest.iter_mut()) {
                let to_chosen = between(m, chosen);
                *d = if nothing_sorted {
                    to_chosen
                } else {
                    (*d).min(to_chosen)
                };
            }
            nothing_sorted = false;
        }
    }
    order
}

/// The key page among one site's pages, each given with its links: the site's root page
/// (path `/`, no query) when the crawl has it (seed 004 starts from the page a user is on;
/// a crawl has no such page, and the home page carries the main menu), else the page the
/// most other pages link to. Ties go to the smallest [`url_key`]. `None` for no pages.
pub fn key_page<L: AsRef<[Url]>>(pages: &[(Url, L)]) -> Option<usize> {
    let tie = |i: usize| url_key(pages[i].0.as_str());
    let roots = (0..pages.len()).filter(|&i| {
        let url = &pages[i].0;
        matches!(url.path(), "" | "/") && url.query().is_none()
    });
    if let Some(root) = roots.min_by_key(|&i| (tie(i), i)) {
        return Some(root);
    }
    let mut index: FastMap<&str, usize> = FastMap::default();
    for (i, (url, _)) in pages.iter().enumerate() {
        index.entry(url.as_str()).or_insert(i);
    }
    let mut linked_from = vec![0u32; pages.len()];
    let mut targets = Vec::new();
    for (i, (_, links)) in pages.iter().enumerate() {
        // A page counts once per page that links to it, however often it is linked there.
        targets.clear();
        targets.extend(
            links
                .as_ref()
                .iter()
                .filter_map(|l| index.get(l.as_str()).copied())
                .filter(|&t| t != i),
        );
        targets.sort_unstable();
        targets.dedup();
        for &t in &targets {
            linked_from[t] += 1;
        }
    }
    (0..pages.len()).min_by_key(|&i| (std::cmp::Reverse(linked_from[i]), tie(i), i))
}

/// [`complete_subdigraph`] loads at most this many pages. The clique search is exact over the
/// pages loaded, and one page's links are a 64-bit mask; seed 004 finds its 3-CS (§5.2.2)
/// within the first few links.
pub const MAX_PROCESSED_LINKS: usize = 64;

/// Seed 004's Algorithm 2: `n` pages linked from the key page that all link to each other
/// both ways (an `n`-CS), or, when there are none, the largest such set found (`m < n`
/// pages, possibly none). The key page's links are walked in `key_links` order (the order of
/// [`sort_links`]); a page is loaded with `links_of`, which is `None` for a page the crawl
/// does not have: it is skipped, as a page that cannot be loaded. After each page loaded, the
/// largest set holding it whose members all link to one another is found (an exact maximum
/// clique search containing the new page, in the graph of links both ways between the pages
/// loaded); the walk stops at the first of size `n`. At most [`MAX_PROCESSED_LINKS`] pages
/// are loaded. The key page itself is not counted in `n` and need not be linked back (as in
/// the thesis, where `n = 1` is a single page and its pages come from the key page's links).
/// The pages are returned in walk order; the result is the same for the same input. Pages
/// are named by any key that tells them apart: their [`Url`]s, or hashes of them where the
/// link graph crosses workers.
pub fn complete_subdigraph<'a, P: Eq + std::hash::Hash + Clone + 'a>(
    key_links: &[P],
    links_of: impl Fn(&P) -> Option<&'a [P]>,
    n: usize,
) -> Vec<P> {
    if n == 0 {
        return Vec::new();
    }
    let mut reachable: FastMap<&P, usize> = FastMap::default();
    for (at, url) in key_links.iter().enumerate() {
        reachable.entry(url).or_insert(at);
    }
    // Per page loaded: its position in `key_links` and the positions it links to (sorted).
    let mut loaded: Vec<(usize, Vec<usize>)> = Vec::new();
    // Per page loaded: the pages loaded it links to both ways, as bits in load order.
    let mut mutual: Vec<u64> = Vec::new();
    let mut best: u64 = 0;
    for (at, url) in key_links.iter().enumerate() {
        if loaded.len() == MAX_PROCESSED_LINKS {
            break;
        }
        // A link repeated in the list is the page already loaded.
        if reachable.get(url) != Some(&at) {
            continue;
        }
        let Some(out) = links_of(url) else {
            continue;
        };
        let mut targets: Vec<usize> = out
            .iter()
            .filter_map(|l| reachable.get(l).copied())
            .filter(|&t| t != at)
            .collect();
        targets.sort_unstable();
        targets.dedup();
        let new = loaded.len();
        let mut bits = 0u64;
        for (k, (other, other_targets)) in loaded.iter().enumerate() {
            let both_ways =
                targets.binary_search(other).is_ok() && other_targets.binary_search(&at).is_ok();
            if both_ways {
                bits |= 1 << k;
                mutual[k] |= 1 << new;
            }
        }
        loaded.push((at, targets));
        mutual.push(bits);
        let clique = largest_clique_with(&mutual, new, n);
        if clique.count_ones() > best.count_ones() {
            best = clique;
        }
        if best.count_ones() as usize >= n {
            break;
        }
    }
    (0..loaded.len())
        .filter(|&k| best & (1 << k) != 0)
        .map(|k| key_links[loaded[k].0].clone())
        .collect()
}

/// The largest clique of the graph `adjacency` (bit masks, no self-loops, at most 64
/// vertices) that holds `vertex`, found exactly by branch and bound, stopping at the first of
/// `cap` vertices. Candidates are tried lowest first; among cliques of one size the first
/// found is kept, so the answer is deterministic. A greedy colouring of the candidates bounds
/// the clique they can add, which prunes the many equal cliques of dense graphs.
fn largest_clique_with(adjacency: &[u64], vertex: usize, cap: usize) -> u64 {
    let mut best = 1u64 << vertex;
    if cap <= 1 {
        return best;
    }
    let mut best_size = 1;
    // (clique, candidates adjacent to all of it): an explicit stack, no recursion.
    let mut stack = vec![(best, adjacency[vertex])];
    while let Some((clique, candidates)) = stack.pop() {
        let size = clique.count_ones();
        if size > best_size {
            (best, best_size) = (clique, size);
            if size as usize >= cap {
                break;
            }
        }
        if candidates == 0 || size + colours(adjacency, candidates) <= best_size {
            continue;
        }
        // A branch on a candidate leaves out the candidates before it: their own branches
        // hold every clique with them. Reversed so that the lowest is popped first.
        let start = stack.len();
        let mut rest = candidates;
        while rest != 0 {
            let v = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            stack.push((clique | 1 << v, rest & adjacency[v]));
        }
        stack[start..].reverse();
    }
    best
}

/// How many colours a greedy colouring of `vertices` takes: no clique among them is larger.
fn colours(adjacency: &[u64], vertices: u64) -> u32 {
    let mut uncoloured = vertices;
    let mut count = 0;
    while uncoloured != 0 {
        count += 1;
        // One colour class: vertices pairwise not adjacent.
        let mut available = uncoloured;
        while available != 0 {
            let v = available.trailing_zeros() as usize;
            available &= !(1 << v) & !adjacency[v];
            uncoloured &= !(1 << v);
        }
    }
    count
}

/// A page as the site's link graph knows it, compact enough to send to the worker that finds
/// its host's key page and complete subdigraph ([`key_page_and_cs`]): pages are named by
/// [`page_key`], so a link and the page it points to meet whichever worker read each.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct GraphPage {
    pub key: u64,
    /// The site's root page (path `/`, no query): the key page when the crawl has it.
    pub root: bool,
    /// Its links within the site, as page keys, in the order Algorithm 2 walks them: a root
    /// page's in Algorithm 1's order ([`sort_links`]); any other page's by link relevance,
    /// then in document order (Algorithm 1 without its DOM relevance, whose distances need
    /// the page's DOM: a page that is key page for want of a root is only known once every
    /// page has been counted, and sorting every page's links by DOM distance would cost more
    /// than all the rest of the method).
    pub links: Vec<u64>,
}

/// The key by which pages and links meet: the hash of the URL as the `url` crate serializes
/// it (so `HTTP://Example.com` and `http://example.com/` are one page).
pub fn page_key(url: &Url) -> u64 {
    url_key(url.as_str())
}

/// Whether `url` is its site's root page.
pub fn is_root(url: &Url) -> bool {
    matches!(url.path(), "" | "/") && url.query().is_none()
}

/// The page's node in its site's link graph ([`GraphPage`]).
pub fn graph_page(dom: &Dom, url: &Url) -> GraphPage {
    let links = page_links(dom, url);
    let root = is_root(url);
    let order: Vec<usize> = if root {
        sort_links(url, &links, |a, b| dom_distance(dom, a, b))
    } else {
        let here = directories(url);
        let mut order: Vec<usize> = (0..links.len()).collect();
        order.sort_by_cached_key(|&i| {
            let relevance = link_relevance(hyperlink_distance(&here, &directories(&links[i].url)));
            (relevance, i)
        });
        order
    };
    GraphPage {
        key: page_key(url),
        root,
        links: order.into_iter().map(|i| page_key(&links[i].url)).collect(),
    }
}

/// Seed 004's key page and its `n`-CS among one site's pages as the link graph knows them:
/// the root page when the crawl has it, else the page the most other pages link to (ties:
/// the smallest key), and [`complete_subdigraph`] over its links. `None` for no pages. The
/// CS may be smaller than `n`, or empty, when the crawl holds too few of the pages. `pages`
/// must have distinct keys.
pub fn key_page_and_cs(pages: &[GraphPage], n: usize) -> Option<(u64, Vec<u64>)> {
    let index: FastMap<u64, usize> = pages.iter().enumerate().map(|(i, p)| (p.key, i)).collect();
    let key = match pages.iter().filter(|p| p.root).min_by_key(|p| p.key) {
        Some(root) => index.get(&root.key).copied(),
        None => {
            let mut linked_from = vec![0u32; pages.len()];
            let mut targets: Vec<usize> = Vec::new();
            for (i, page) in pages.iter().enumerate() {
                targets.clear();
                targets.extend(page.links.iter().filter_map(|l| index.get(l).copied()));
                targets.retain(|&t| t != i);
                targets.sort_unstable();
                targets.dedup();
                for &t in &targets {
                    linked_from[t] += 1;
                }
            }
            (0..pages.len()).min_by_key(|&i| (std::cmp::Reverse(linked_from[i]), pages[i].key))
        }
    }?;
    let links_of = |k: &u64| index.get(k).map(|&i| pages[i].links.as_slice());
    let cs = complete_subdigraph(&pages[key].links, links_of, n);
    Some((pages[key].key, cs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse;
    use crate::xorshift;

    const DEPTH: usize = 512;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn dirs(s: &str) -> Vec<String> {
        directories(&url(s)).into_iter().map(String::from).collect()
    }

    #[test]
    fn hyperlink_distances_of_the_thesis() {
        // Each case: a link's target and its hyperlink distance from `from`'s directories.
        fn check(from: &[String], cases: &[(&str, i64)], directories: fn(&str) -> Vec<String>) {
            for &(to, expected) in cases {
                assert_eq!(hyperlink_distance(from, &directories(to)), expected, "{to}");
            }
        }
        // Figure 2.7, as directory sequences.
        fn h(s: &str) -> Vec<String> {
            s.split('/')
                .filter(|w| !w.is_empty())
                .map(String::from)
                .collect()
        }
        check(
            &h("research/maths/"),
            &[
                ("research/maths/", 0),
                ("research/maths/geometry/", 1),
                ("research/", -1),
                ("research/physics/dynamics", -1),
                ("www.upv.es/research/", -2),
            ],
            h,
        );
        // Example 2.2.3: the key page's file name is no directory.
        check(
            &dirs("http://www.upv.es/research/maths/index.html"),
            &[
                ("http://www.upv.es/research/maths/pi.html", 0),
                ("http://www.upv.es/sport/", -2),
                ("http://www.upv.es/research/maths/news/computers.html", 1),
                ("http://www.tesco.es/", -3),
            ],
            dirs,
        );
        // Examples 2.2.6 (the first is written the other way round in the thesis).
        check(
            &dirs("http://www.bbc.com/news"),
            &[
                ("http://www.bbc.com/news/technology", 1),
                ("http://www.bbc.com", -1),
                ("http://www.bbc.com/news/world/europe/", 2),
                ("http://www.bbc.com/weather", -1),
                ("http://www.bbc.com/sport/0/formula1/26599556", -1),
            ],
            dirs,
        );
        // Example 2.2.13.
        check(
            &dirs("http://www.bbc.com/news/"),
            &[
                ("http://www.bbc.com/news/world/europe/", 2),
                ("http://www.bbc.com", -1),
                ("http://www.bbc.com/news/uk/", 1),
                ("http://www.bbc.com/sport/0/football/28497920/", -1),
                ("http://www.bbc.com/news/also_in_the_news/", 1),
            ],
            dirs,
        );
        // Relevance: 0, then +1, +2, …, then −1, −2, ….
        let mut ranked = vec![-2, 3, -1, 0, 1];
        ranked.sort_by_key(|&d| link_relevance(d));
        assert_eq!(ranked, [0, 1, 3, -1, -2]);
    }

    /// Figure 2.16's links placed so that their DOM distances are Example 2.2.15's: A2 and A3
    /// near the top, A1, A4 and A5 in three branches of one block.
    const BBC: &str = "<html><body>\
        <a href=/>A2</a>\
        <div><a href=/news/uk/>A3</a></div>\
        <div><div>\
          <p><a href=/news/world/europe/>A1</a></p>\
          <p><span><a href=/sport/0/football/28497920/>A4</a></span></p>\
          <p><span><a href=/news/also_in_the_news/>A5</a></span></p>\
        </div></div></body></html>";

    fn anchor_text(dom: &Dom, link: &Link) -> String {
        dom.subtree(link.anchor)
            .find_map(|i| dom.text(i))
            .unwrap_or("")
            .to_string()
    }

    #[test]
    fn links_are_sorted_as_in_the_bbc_example() {
        let dom = parse(BBC, DEPTH);
        let key = url("http://www.bbc.com/news/");
        let links = page_links(&dom, &key);
        let names: Vec<String> = links.iter().map(|l| anchor_text(&dom, l)).collect();
        assert_eq!(names, ["A2", "A3", "A1", "A4", "A5"]);
        let by_name = |name: &str| links[names.iter().position(|n| n == name).unwrap()].anchor;
        for (a, b, expected) in [
            ("A3", "A1", 6),
            ("A3", "A2", 3),
            ("A3", "A4", 7),
            ("A3", "A5", 7),
            ("A5", "A1", 5),
            ("A5", "A2", 6),
            ("A5", "A4", 6),
            ("A2", "A1", 5),
            ("A4", "A1", 5),
            ("A2", "A2", 0),
        ] {
            assert_eq!(
                dom_distance(&dom, by_name(a), by_name(b)),
                expected,
                "{a} {b}"
            );
        }
        let order = sort_links(&key, &links, |a, b| dom_distance(&dom, a, b));
        let sorted: Vec<&str> = order.iter().map(|&i| names[i].as_str()).collect();
        assert_eq!(sorted, ["A5", "A3", "A1", "A4", "A2"]);
    }

    #[test]
    fn dom_distance_counts_edges_through_the_common_ancestor() {
        // Example 2.2.11's two paths, below the document and <html>.
        let dom = parse(
            "<body><section><div><p><span>s</span></p></div><div><div><img></div></div></section></body>",
            DEPTH,
        );
        let find = |tag: &str| (0..dom.len()).find(|&i| dom.tag(i).is_some_and(|t| &**t == tag));
        let (span, img, p) = (
            find("span").unwrap(),
            find("img").unwrap(),
            find("p").unwrap(),
        );
        assert_eq!(dom_distance(&dom, span, img), 6);
        assert_eq!(dom_distance(&dom, img, span), 6);
        assert_eq!(dom_distance(&dom, p, span), 1);
        assert_eq!(
            dom_distance(&dom, 0, span),
            dom.ancestors_or_self(span).count() as u32 - 1
        );
    }

    #[test]
    fn sorting_follows_given_distances_and_breaks_ties_by_document_order() {
        let key = url("http://s.org/a/");
        let links: Vec<Link> = ["/a/x", "/a/y", "/a/z", "/b/"]
            .iter()
            .enumerate()
            .map(|(anchor, p)| Link {
                url: key.join(p).unwrap(),
                anchor,
            })
            .collect();
        // x, y, z are one group (+1); /b/ is −1. Anchors 0 and 1 are close, 2 far from both.
        let table = [[0, 1, 9, 9], [1, 0, 9, 9], [9, 9, 0, 9], [9, 9, 9, 0]];
        let order = sort_links(&key, &links, |a, b| table[a][b]);
        assert_eq!(order, [2, 0, 1, 3]);
        // All equally far: document order.
        let order = sort_links(&key, &links, |a, b| u32::from(a != b));
        assert_eq!(order, [0, 1, 2, 3]);
    }

    #[test]
    fn page_links_resolve_and_filter() {
        let html = "<a href=\"/a#top\">1</a><a href=\"b\">2</a><a href=\"http://example.org/a\">3</a>\
            <a href=\"https://other.org/\">4</a><a href=\"mailto:x@example.org\">5</a>\
            <a href=\"#frag\">6</a><a href=\"http://[::1\">7</a><a>8</a>\
            <a href=\"http://example.org/dir/page?q=1#x\">9</a><a href=\"javascript:void(0)\">10</a>\
            <a href=\"https://www.example.org/dir/page?q=1\">9b</a>\
            <a href=\"HTTP://WWW.EXAMPLE.ORG/c\">11</a><a href=\"//example.org:8080/d\">12</a>\
            <a href=\"\u{2603}/é\">13</a>";
        let dom = parse(html, DEPTH);
        let page = url("http://www.example.org/dir/page?q=1");
        let links: Vec<String> = page_links(&dom, &page)
            .iter()
            .map(|l| l.url.to_string())
            .collect();
        assert_eq!(
            links,
            [
                "http://www.example.org/a",
                "http://www.example.org/dir/b",
                "http://example.org/a",
                "http://www.example.org/c",
                "http://example.org:8080/d",
                "http://www.example.org/dir/%E2%98%83/%C3%A9",
            ]
        );
        // A <base> moves where relative links point.
        let dom = parse("<head><base href=\"/docs/\"></head><a href=x>x</a>", DEPTH);
        let links = page_links(&dom, &url("http://example.org/p"));
        assert_eq!(links[0].url.as_str(), "http://example.org/docs/x");
        // A page without a host has no site links.
        assert!(page_links(&dom, &url("data:text/html,x")).is_empty());
    }

    #[test]
    fn the_key_page_is_the_root_else_the_most_linked() {
        let page = |u: &str, links: &[&str]| (url(u), links.iter().map(|l| url(l)).collect());
        let pages: Vec<(Url, Vec<Url>)> = vec![
            page("http://s.org/a", &["http://s.org/b"]),
            page("http://s.org/?x=1", &[]),
            page("http://s.org/", &["http://s.org/a"]),
            page("http://s.org/b", &["http://s.org/a", "http://s.org/a"]),
        ];
        assert_eq!(key_page(&pages), Some(2));
        // Without the root: `a` and `b` are linked from one page each (`b`'s repeated link
        // counts once, `?x=1`'s link to itself not at all); the tie goes to the smaller URL key.
        let mut pages = pages;
        pages.remove(2);
        pages[1].1 = vec![url("http://s.org/?x=1")];
        let a_first = url_key("http://s.org/a") < url_key("http://s.org/b");
        assert_eq!(key_page(&pages), Some(if a_first { 0 } else { 2 }));
        pages.push(page(
            "http://s.org/c",
            &["http://s.org/b", "http://s.org/c"],
        ));
        assert_eq!(key_page(&pages), Some(2));
        let none: &[(Url, Vec<Url>)] = &[];
        assert_eq!(key_page(none), None);
    }

    /// A site as (page, links) with `links_of` over it.
    fn site(edges: &[(&str, &[&str])]) -> FastMap<String, Vec<Url>> {
        edges
            .iter()
            .map(|(p, ls)| {
                let base = url("http://s.org/");
                (
                    base.join(p).unwrap().to_string(),
                    ls.iter().map(|l| base.join(l).unwrap()).collect(),
                )
            })
            .collect()
    }

    fn cs(site: &FastMap<String, Vec<Url>>, key_links: &[&str], n: usize) -> Vec<String> {
        let base = url("http://s.org/");
        let key_links: Vec<Url> = key_links.iter().map(|l| base.join(l).unwrap()).collect();
        complete_subdigraph(&key_links, |u| site.get(u.as_str()).map(Vec::as_slice), n)
            .iter()
            .map(|u| u.path().to_string())
            .collect()
    }

    #[test]
    fn a_3_cs_is_found_and_returned_at_once() {
        let site = site(&[
            ("a", &["b", "c", "d", "x"]),
            ("b", &["a", "c"]),
            ("c", &["a", "b", "d"]),
            ("d", &["a", "b", "c"]),
            ("e", &["a", "b", "c", "d"]),
        ]);
        // a, b, c link to each other both ways: found when c is loaded; d is never loaded.
        assert_eq!(cs(&site, &["a", "b", "c", "d", "e"], 3), ["/a", "/b", "/c"]);
        // b does not link to d: {a, c, d} is the 3-CS when b comes last.
        assert_eq!(cs(&site, &["a", "d", "c", "b"], 3), ["/a", "/d", "/c"]);
        // Asking for more returns the largest: {a, c, d} and {a, b, c} are 3, the first kept.
        assert_eq!(cs(&site, &["a", "d", "c", "b"], 4), ["/a", "/d", "/c"]);
        assert_eq!(cs(&site, &["a", "b"], 1), ["/a"]);
        assert!(cs(&site, &["a"], 0).is_empty());
    }

    #[test]
    fn only_a_2_cs_and_absent_pages() {
        let site = site(&[
            ("a", &["b", "c", "gone"]),
            ("b", &["a", "c"]),
            ("c", &["a"]),
        ]);
        // c links to a and a to c, but b and c only one way.
        assert_eq!(cs(&site, &["a", "b", "c"], 3), ["/a", "/b"]);
        // Pages the crawl does not have are skipped; links to them make no edge.
        assert_eq!(cs(&site, &["gone", "c", "gone", "a"], 3), ["/c", "/a"]);
        assert_eq!(cs(&site, &["gone", "other"], 3), Vec::<String>::new());
        // A page that links to none of the others is a 1-CS.
        assert_eq!(cs(&site, &["b", "gone"], 3), ["/b"]);
    }

    #[test]
    fn the_walk_loads_at_most_the_cap() {
        // A chain: no two pages link both ways, so every present page is loaded.
        let names: Vec<String> = (0..100).map(|k| format!("p{k}")).collect();
        let base = url("http://s.org/");
        let key_links: Vec<Url> = names.iter().map(|n| base.join(n).unwrap()).collect();
        let loads = std::cell::Cell::new(0);
        let empty: Vec<Url> = Vec::new();
        let found = complete_subdigraph(
            &key_links,
            |_| {
                loads.set(loads.get() + 1);
                Some(empty.as_slice())
            },
            3,
        );
        assert_eq!(loads.get(), MAX_PROCESSED_LINKS);
        assert_eq!(found, [key_links[0].clone()]);
    }

    fn random_graph(state: &mut u64, n: usize) -> Vec<u64> {
        let density = 1 + xorshift(state) % 9;
        let mut adjacency = vec![0u64; n];
        for a in 0..n {
            for b in a + 1..n {
                if xorshift(state) % 10 < density {
                    adjacency[a] |= 1 << b;
                    adjacency[b] |= 1 << a;
                }
            }
        }
        adjacency
    }

    fn is_clique(adjacency: &[u64], set: u64) -> bool {
        (0..adjacency.len())
            .filter(|&v| set & (1 << v) != 0)
            .all(|v| set & !(1 << v) & !adjacency[v] == 0)
    }

    #[test]
    fn clique_search_equals_brute_force_on_random_graphs() {
        let mut state = 0x1234_5678_9abc_def1;
        for round in 0..2_000 {
            let n = 1 + (xorshift(&mut state) % 12) as usize;
            let adjacency = random_graph(&mut state, n);
            let vertex = (xorshift(&mut state) % n as u64) as usize;
            let cap = 1 + (xorshift(&mut state) % 14) as usize;
            let largest = (0..1u64 << n)
                .filter(|&set| set & (1 << vertex) != 0 && is_clique(&adjacency, set))
                .map(u64::count_ones)
                .max()
                .unwrap() as usize;
            let found = largest_clique_with(&adjacency, vertex, cap);
            assert!(found & (1 << vertex) != 0, "round {round}");
            assert!(is_clique(&adjacency, found), "round {round}");
            assert_eq!(
                found.count_ones() as usize,
                largest.min(cap),
                "round {round}"
            );
        }
        // Dense graphs with many equal cliques (complete multipartite, parts of 3) stay fast.
        let adjacency: Vec<u64> = (0..63)
            .map(|v| {
                (0..63)
                    .filter(|&u| u / 3 != v / 3)
                    .fold(0, |m, u| m | 1u64 << u)
            })
            .collect();
        assert_eq!(largest_clique_with(&adjacency, 0, 64).count_ones(), 21);
    }

    #[test]
    fn the_key_page_is_the_root_and_its_menu_pages_are_the_cs() {
        let site = |path: &str, menu: &[&str]| {
            let links: String = menu
                .iter()
                .map(|m| format!("<li><a href=\"/{m}\">{m}</a></li>"))
                .collect();
            let html = format!("<html><body><ul>{links}</ul><p>{path}</p></body></html>");
            graph_page(
                &parse(&html, DEPTH),
                &url(&format!("https://www.s.example/{path}")),
            )
        };
        let menu = ["news", "sport", "tv", "about"];
        // The home page and three of its menu's pages (about is not in the crawl), plus an
        // article that only links to the home page.
        let mut pages = vec![
            site("news", &menu),
            site("", &menu),
            site("sport", &menu),
            site("tv", &menu),
            site("article/1", &[""]),
        ];
        assert!(pages[1].root && !pages[0].root);
        let (key, cs) = key_page_and_cs(&pages, 3).unwrap();
        assert_eq!(key, pages[1].key);
        let mut expected = vec![pages[0].key, pages[2].key, pages[3].key];
        let mut found = cs.clone();
        expected.sort_unstable();
        found.sort_unstable();
        assert_eq!(found, expected);
        // Without the home page, the most linked-to page is the key page; the other two menu
        // pages are its 2-CS.
        pages.remove(1);
        let (key, cs) = key_page_and_cs(&pages, 3).unwrap();
        // news, sport and tv are each linked from the other two: the smallest key wins.
        let smallest = pages[..3].iter().map(|p| p.key).min().unwrap();
        assert_eq!(key, smallest);
        assert!(!cs.contains(&key));
        assert_eq!(cs.len(), 2);
        assert!(key_page_and_cs(&[], 3).is_none());
    }
}
