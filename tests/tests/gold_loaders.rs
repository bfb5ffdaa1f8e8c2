//! The gold loaders find what the data sets' READMEs promise (`../shared/data/*/README.txt`).
//! Each test skips with a notice when its folder is absent.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use stencil_tests::gold::{
    self, cleanportaleval_with_skips, dragnet_with_skips, host_counts, l3s_gn1_with_skips,
    swde_books_with_skips, tokens, GoldPage,
};
use stencil_tests::l3s::{self, parse_page, text_node_classes};
use stencil_tests::shared_dir;

fn assert_urls_unique<'a>(urls: impl IntoIterator<Item = &'a str>) {
    let mut seen = BTreeSet::new();
    for url in urls {
        assert!(seen.insert(url), "duplicate URL {url}");
    }
}

fn assert_urls_on_host(pages: &[GoldPage]) {
    for p in pages {
        let rest = p.url.split_once("://").expect("absolute URL").1;
        let host = rest.split('/').next().unwrap().to_ascii_lowercase();
        assert_eq!(
            host.strip_prefix("www.").unwrap_or(&host),
            p.host.strip_prefix("www.").unwrap_or(&p.host),
            "{}: URL {} not on host {}",
            p.id,
            p.url,
            p.host
        );
    }
}

/// host → page count straight from hosts_guess.tsv, for hosts with >= `min` pages.
fn tsv_hosts(dir: &Path, min: usize) -> BTreeMap<String, usize> {
    let text = fs::read_to_string(dir.join("hosts_guess.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = header.iter().position(|&h| h == "host_guess").unwrap();
    let mut counts = BTreeMap::new();
    for line in lines {
        let host = line.split('\t').nth(col).unwrap_or("").trim();
        if !host.is_empty() {
            *counts.entry(host.to_string()).or_insert(0) += 1;
        }
    }
    counts.retain(|_, n| *n >= min);
    counts
}

#[test]
fn dragnet_hosts_with_ten_pages() {
    let Some(dir) = shared_dir("data/dragnet") else {
        return;
    };
    let loaded = dragnet_with_skips(&dir, 10);
    assert!(loaded.skipped.is_empty(), "skipped: {:?}", loaded.skipped);
    let pages = loaded.pages;
    let counts = host_counts(&pages);
    assert_eq!(counts, tsv_hosts(&dir, 10));
    // README.txt: "36 hosts with >=10 pages (411 pages)".
    assert_eq!(counts.len(), 36);
    assert_eq!(pages.len(), 411);
    assert_eq!(counts["blogs.nfl.com"], 23);
    assert_urls_unique(pages.iter().map(|p| p.url.as_str()));
    assert_urls_on_host(&pages);
    for p in &pages {
        assert!(!tokens(&p.gold_text).is_empty(), "{}: empty gold", p.id);
        assert!(
            !p.gold_text.contains("@#$%^&*()"),
            "{}: comments separator kept",
            p.id
        );
        assert!(!p.gold_text.contains('\0'), "{}: UTF-16 not decoded", p.id);
        assert!(
            p.html.len() > 1000 && p.html.contains(&b'<'),
            "{}: no HTML",
            p.id
        );
    }
}

#[test]
fn dragnet_all_and_five_page_hosts() {
    let Some(dir) = shared_dir("data/dragnet") else {
        return;
    };
    // Every page but R427, which has no host guess.
    let all = gold::dragnet(&dir, 0);
    assert_eq!(all.len(), 1380);
    // README.txt says 499 distinct hosts: that counts R427's empty host_guess.
    assert_eq!(host_counts(&all).len(), 498);
    assert!(all.iter().all(|p| p.id != "R427"));
    assert!(all.iter().all(|p| !tokens(&p.gold_text).is_empty()));
    assert_urls_unique(all.iter().map(|p| p.url.as_str()));
    // README.txt: "805 pages on hosts with >= 5 pages".
    assert_eq!(gold::dragnet(&dir, 5).len(), 805);

    // The comments part is cut off (131: 11 article lines, separator on line 12 of 888),
    // and the UTF-16 file 27 decodes.
    let by_id: BTreeMap<&str, &GoldPage> = all.iter().map(|p| (p.id.as_str(), p)).collect();
    let full_131 = fs::read_to_string(dir.join("Corrected/131.html.corrected.txt")).unwrap();
    let (article, comments) = full_131.split_once("!@#$%^&*()  COMMENTS").unwrap();
    assert_eq!(by_id["131"].gold_text, article.trim());
    assert!(comments.len() > 10 * article.len());
    assert!(by_id["100"].gold_text.starts_with("July 24, 2012 12:11 AM"));
    assert!(tokens(&by_id["27"].gold_text).len() > 100);
}

#[test]
fn cleanportaleval_71_pages_on_4_hosts() {
    let Some(dir) = shared_dir("data/cleanportaleval") else {
        return;
    };
    let loaded = cleanportaleval_with_skips(&dir);
    assert!(loaded.skipped.is_empty(), "skipped: {:?}", loaded.skipped);
    let pages = loaded.pages;
    assert_eq!(pages.len(), 71);
    let expected: BTreeMap<String, usize> = [
        ("bbc.co.uk", 12),
        ("blogs.wsj.com", 14),
        ("tv.msnbc.com", 30),
        ("washingtonpost.com", 15),
    ]
    .into_iter()
    .map(|(h, n)| (h.to_string(), n))
    .collect();
    assert_eq!(host_counts(&pages), expected);
    assert_urls_unique(pages.iter().map(|p| p.url.as_str()));
    assert_urls_on_host(&pages);

    // URLs are manifest.tsv's (file, site_group, host, url).
    let manifest = fs::read_to_string(dir.join("manifest.tsv")).unwrap();
    let urls: BTreeMap<&str, &str> = manifest
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((*f.first()?, *f.get(3)?))
        })
        .collect();
    assert_eq!(urls.len(), 71);
    let mut empty_gold = Vec::new();
    for p in &pages {
        assert_eq!(urls.get(p.id.as_str()).copied(), Some(p.url.as_str()));
        let head = String::from_utf8_lossy(&p.html[..p.html.len().min(200)]).to_lowercase();
        assert!(!head.contains("<text"), "{}: wrapper kept", p.id);
        let tail = String::from_utf8_lossy(&p.html[p.html.len().saturating_sub(200)..]);
        assert!(!tail.contains("</text>"), "{}: wrapper kept", p.id);
        assert!(tail.contains("</html>"), "{}: page cut", p.id);
        for marker in ["<p>", "<h>", "<l>", "URL:", "&#", "<!--"] {
            assert!(!p.gold_text.contains(marker), "{}: {marker} in gold", p.id);
        }
        if tokens(&p.gold_text).is_empty() {
            empty_gold.push(p.id.as_str());
        }
    }
    // Two index pages have no main content; the gold says so.
    assert_eq!(empty_gold, ["bbc.co.uk_news_04", "bbc.co.uk_news_05"]);
}

#[test]
fn swde_books_2000_pages_with_values() {
    let Some(dir) = shared_dir("data/swde-books") else {
        return;
    };
    let loaded = swde_books_with_skips(&dir);
    assert!(loaded.skipped.is_empty(), "skipped: {:?}", loaded.skipped);
    let pages = loaded.pages;
    assert_eq!(pages.len(), 2000);
    assert_urls_unique(pages.iter().map(|p| p.url.as_str()));
    let mut per_attr: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &pages {
        assert!(
            p.url.starts_with("http://www.booksamillion.com/"),
            "{}",
            p.url
        );
        // The BOM stays, the <base> line goes, the doctype follows.
        assert!(
            p.html.starts_with(b"\xef\xbb\xbf<!DOCTYPE"),
            "{}: {:?}",
            p.id,
            String::from_utf8_lossy(&p.html[..40])
        );
        let count = |attr: &str| p.values.iter().filter(|(a, _)| a == attr).count();
        assert_eq!(count("title"), 1, "{}", p.id);
        assert!((1..=4).contains(&count("author")), "{}", p.id);
        assert_eq!(count("isbn_13"), 1, "{}", p.id);
        for (attr, value) in &p.values {
            *per_attr.entry(attr.as_str()).or_insert(0) += 1;
            assert!(
                !value.is_empty() && !value.starts_with(':') && value != "<NULL>",
                "{}: {attr} {value:?}",
                p.id
            );
        }
        // The ISBN is in the page bytes (in the URL and the details list).
        let isbn = &p.values.iter().find(|(a, _)| a == "isbn_13").unwrap().1;
        assert!(
            p.html.windows(isbn.len()).any(|w| w == isbn.as_bytes()),
            "{}: {isbn} not in page",
            p.id
        );
    }
    // Line 2 of each ground-truth file: #pages #pages_with_value #values #distinct.
    let expected: BTreeMap<&str, usize> = [
        ("author", 2645),
        ("isbn_13", 2000),
        ("publication_date", 2000),
        ("publisher", 2000),
        ("title", 2000),
    ]
    .into_iter()
    .collect();
    assert_eq!(per_attr, expected);
}

#[test]
fn l3s_gn1_621_pages_with_labels() {
    let Some(dir) = shared_dir("data/l3s-gn1") else {
        return;
    };
    let loaded = l3s_gn1_with_skips(&dir);
    assert!(loaded.skipped.is_empty(), "skipped: {:?}", loaded.skipped);
    let pages = loaded.pages;
    // README.txt: "621 pages, 407 hosts (max 12 per host: news.com.au ...)".
    assert_eq!(pages.len(), 621);
    let mut hosts: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &pages {
        *hosts.entry(p.host.as_str()).or_insert(0) += 1;
    }
    assert_eq!(hosts.len(), 407);
    assert_eq!(hosts.values().max(), Some(&12));
    assert_eq!(hosts["www.news.com.au"], 12);
    assert_urls_unique(pages.iter().map(|p| p.url.as_str()));
    for p in &pages {
        assert!(
            p.id.len() == 36 && p.id.matches('-').count() == 4,
            "{}: not a uuid",
            p.id
        );
        let host = p
            .url
            .split_once("://")
            .unwrap()
            .1
            .split('/')
            .next()
            .unwrap();
        assert_eq!(host, p.host, "{}", p.id);
        assert!(p.original.len() > 1000, "{}: no original", p.id);
        let marker = b"x-nc-sel";
        assert!(
            p.annotated.windows(marker.len()).any(|w| w == marker),
            "{}: annotated page without labels",
            p.id
        );
    }

    // The labels carry over to the original pages: all but 9 whose originals lost bytes in
    // their <head> (see the l3s module), and each of those has some main content.
    let mut mapped = 0;
    let mut unmapped = Vec::new();
    let mut nodes_per_class = [0usize; 6];
    let mut headline_checked = false;
    for p in &pages {
        let (original, original_sums) = parse_page(&p.original, &p.host);
        let (annotated, annotated_sums) = parse_page(&p.annotated, &p.host);
        let Some(classes) =
            text_node_classes(&original, &original_sums, &annotated, &annotated_sums)
        else {
            unmapped.push(p.id.as_str());
            continue;
        };
        mapped += 1;
        assert_eq!(classes.len(), original.len());
        let mut main_content = false;
        for (node, class) in classes.iter().enumerate() {
            let Some(class) = *class else { continue };
            assert!(original.visible_text(node).is_some(), "{}: {node}", p.id);
            nodes_per_class[usize::from(class)] += 1;
            main_content |= (1..=3).contains(&class);
        }
        assert!(
            main_content,
            "{}: no headline, full text or supplemental",
            p.id
        );
        if p.id == "01ccc7c5-a1d1-46e1-a5f7-43310df16575" {
            let headline: Vec<&str> = (0..original.len())
                .filter(|&i| classes[i] == Some(1))
                .filter_map(|i| original.visible_text(i))
                .map(str::trim)
                .collect();
            assert_eq!(
                headline,
                ["No agreement reached on Kosovo\u{2019}s future status in Security Council"]
            );
            headline_checked = true;
        }
    }
    assert!(headline_checked);
    // 612 of the 621 map: all but the 9 above.
    assert!(
        mapped * 100 >= pages.len() * 98,
        "only {mapped} pages map; not: {unmapped:?}"
    );
    for (class, &n) in nodes_per_class.iter().enumerate() {
        assert!(
            n > 0,
            "no text node of class {class} ({})",
            l3s::CLASS_NAMES[class]
        );
    }
}
