//! `stencil site` as a user runs it: the same tables (row order aside) with one worker, two
//! workers, and two processes of one worker talking over 127.0.0.1.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{assert_same_tables, check, crawl, crawl_of, rows, scratch, stencil, two_processes};
use stencil_operators::synth;

fn tables(out: &Path) -> BTreeMap<&'static str, Vec<String>> {
    ["site_templates", "hosts", "training"]
        .into_iter()
        .map(|table| (table, rows(out, table)))
        .collect()
}

fn site(files: &[PathBuf], out: &Path, extra: &[&str]) -> String {
    common::job("site", files, out, extra)
}

#[test]
fn same_tables_with_one_or_two_workers_and_two_processes() {
    same_tables_whatever_the_workers("workers", &[], 0, 6 * 20, synth::crawl(6, 40, 1));
}

#[test]
fn etdm_finds_templates_from_the_menu_pages_whatever_the_workers() {
    // Each host's home page and the section pages its menu links to are in the crawl: the
    // key page and a complete subdigraph exist, and every host's template is ETDM's.
    let pages = synth::crawl_with_menu_pages(6, 40, 1);
    let reference =
        same_tables_whatever_the_workers("etdm-workers", &["--method", "etdm"], 13, 6 * 4, pages);
    for row in &reference["site_templates"] {
        assert_eq!(row.split('\t').nth(1), Some("etdm"), "{row}");
    }
    // The menu's pages are mapped: key page and 3 CS pages, the template's nodes on at least
    // the key page and 2 of them.
    for row in &reference["hosts"] {
        if row.contains("\ttrue\t") {
            let columns: Vec<&str> = row.split('\t').collect();
            assert_eq!((columns[2], columns[5]), ("4", "3"), "{row}");
            // Method, then pages too large to map (none here), then the night and the previous
            // fraction (no state).
            assert!(row.ends_with("\tetdm\t0\t∅\t∅"), "{row}");
        }
    }

    // Without those pages (articles only), no host has a complete subdigraph: every host falls
    // back to SiteLevel(θ), and says so.
    let dir = scratch("etdm-fallback");
    let files = crawl(&dir, 2);
    let out = dir.join("out");
    site(&files, &out, &["--method", "etdm", "-w", "2"]);
    let rows = rows(&out, "site_templates");
    assert!(rows.len() > 6 * 20, "{} rows", rows.len());
    assert!(rows
        .iter()
        .all(|r| r.split('\t').nth(1) == Some("site-level")));
    // SiteLevel(θ)'s rows are of no cluster.
    assert!(rows.iter().all(|r| r.split('\t').nth(9) == Some("∅")));
    let hosts = common::rows(&out, "hosts");
    assert!(
        hosts.iter().all(|h| h.ends_with("\tsite-level\t∅\t∅\t∅")),
        "{hosts:#?}"
    );
}

#[test]
fn rtdm_gives_the_same_tables_whatever_the_workers() {
    // Fewer rows than SiteLevel(θ)'s: a mapped template block is a whole covered subtree (the
    // menu), where SiteLevel(θ) also counts every element inside it (each menu entry).
    let reference = same_tables_whatever_the_workers(
        "rtdm-workers",
        &["--method", "rtdm"],
        7,
        6 * 4,
        synth::crawl(6, 40, 1),
    );
    // Every template row says which method found it, and a mapped template is on every
    // sample page it was mapped from.
    for row in &reference["site_templates"] {
        let columns: Vec<&str> = row.split('\t').collect();
        assert_eq!(columns[1], "rtdm", "{row}");
        assert_eq!(columns[3], columns[4], "pages_with = pages_sampled: {row}");
        // The synthetic hosts have one template each: every row is of template 0.
        assert_eq!(columns[9], "0", "cluster: {row}");
    }
}

#[test]
fn tree_regex_gives_the_same_tables_whatever_the_workers() {
    // Hosts of two templates (articles and listings): a tree regular expression per design.
    let pages = synth::multi_template_crawl(6, 20, 1)
        .into_iter()
        .map(|(page, _)| page)
        .collect();
    let reference = same_tables_whatever_the_workers(
        "regex-workers",
        &["--method", "tree-regex"],
        23,
        6 * 4,
        pages,
    );
    let mut clusters = std::collections::BTreeSet::new();
    for row in &reference["site_templates"] {
        let columns: Vec<&str> = row.split('\t').collect();
        assert_eq!(columns[1], "tree-regex", "{row}");
        clusters.insert(columns[9].to_string());
    }
    // Rows of both designs' templates.
    assert_eq!(
        clusters,
        ["0", "1"].map(String::from).into(),
        "{clusters:?}"
    );
}

#[test]
fn a_page_too_large_to_map_is_counted_in_its_hosts_row() {
    // Six pages of one host share a list of 2,100 items; the page with the largest URL key
    // (outside a 5-page sample) has 2,100 other items, so that its list against the
    // template's is a 2,101 × 2,101 alignment, past the 4 M-cell limit.
    use stencil_operators::site::site_level::url_key;
    let urls: Vec<String> = (0..6)
        .map(|k| format!("http://wide.example/p{k}"))
        .collect();
    let odd = (0..6).max_by_key(|&k| url_key(&urls[k])).unwrap();
    let pages = urls
        .iter()
        .enumerate()
        .map(|(k, url)| {
            let word = if k == odd { "Other" } else { "Item" };
            let items: String = (0..2_100).map(|i| format!("<li>{word} {i}</li>")).collect();
            synth::SynthPage {
                url: url.clone(),
                html: format!(
                    "<html><body><h1>Story {k}</h1><p>Text of story {k}.</p>\
                     <ul>{items}</ul><footer>© Wide</footer></body></html>"
                ),
                template_paths: Vec::new(),
            }
        })
        .collect();
    let dir = scratch("unmapped");
    let files = crawl_of(&dir, 1, pages);
    let wide = |out: &Path| {
        let hosts = rows(out, "hosts");
        hosts
            .into_iter()
            .find(|h| h.starts_with("wide.example\t"))
            .expect("wide.example's row")
    };
    let out = dir.join("rtdm");
    site(
        &files,
        &out,
        &["--method", "rtdm", "--sample-pages", "5", "--no-training"],
    );
    let row = wide(&out);
    assert!(row.ends_with("\trtdm\t1\t∅\t∅"), "{row}");
    // The page is still a page of the host, with no site-level template.
    assert!(row.starts_with("wide.example\t6\t5\ttrue\t"), "{row}");
    let out = dir.join("site-level");
    site(&files, &out, &["--no-training"]);
    assert!(
        wide(&out).ends_with("\tsite-level\t∅\t∅\t∅"),
        "{}",
        wide(&out)
    );
}

/// Runs `stencil site` with `extra` flags on 5 files with 1, 2 and 7 workers and with 2
/// processes (ports chosen with `port_salt`), checks the tables are the same every time and
/// that the 6 hosts of enough pages have more than `min_template_rows` template rows in all,
/// and returns them.
fn same_tables_whatever_the_workers(
    name: &str,
    extra: &[&str],
    port_salt: u32,
    min_template_rows: usize,
    pages: Vec<synth::SynthPage>,
) -> BTreeMap<&'static str, Vec<String>> {
    let dir = scratch(name);
    let expected_pages = format!("{} pages", pages.len() + 3);
    let files = crawl_of(&dir, 5, pages);
    let with = |workers: &[&'static str]| [extra, workers].concat();

    let one = dir.join("w1");
    let summary = site(&files, &one, &with(&["-w", "1"]));
    assert!(summary.contains(&expected_pages), "{summary}");
    let reference = tables(&one);
    // 6 hosts labelled, tiny.example (3 pages) reported but not labelled.
    let hosts = &reference["hosts"];
    assert_eq!(hosts.len(), 7, "{hosts:#?}");
    assert!(
        hosts
            .iter()
            .any(|h| h.starts_with("tiny.example\t3\t3\tfalse\ttoo_few_pages")),
        "{hosts:#?}"
    );
    assert_eq!(
        hosts.iter().filter(|h| h.contains("\ttrue\t")).count(),
        6,
        "{hosts:#?}"
    );
    let template_rows = reference["site_templates"].len();
    assert!(template_rows > min_template_rows, "{template_rows} rows");
    assert!(reference["training"]
        .iter()
        .any(|r| r.contains("\tnon_template\tpaper\t")));
    assert!(reference["training"]
        .iter()
        .any(|r| r.contains("\ttemplate\tpaper\t")));

    let two = dir.join("w2");
    site(&files, &two, &with(&["-w", "2"]));
    assert_same_tables(&tables(&two), &reference, "-w 2 against -w 1");

    // More workers than files: workers share files record by record.
    let seven = dir.join("w7");
    site(&files, &seven, &with(&["-w", "7"]));
    assert_same_tables(&tables(&seven), &reference, "-w 7 against -w 1");

    // Two processes of one worker each over 127.0.0.1.
    let cluster = dir.join("n2");
    two_processes("site", &files, &cluster, extra, port_salt);
    assert_same_tables(&tables(&cluster), &reference, "2 processes against -w 1");

    // A rerun into the same folder with fewer workers leaves no stale part files behind.
    site(&files, &two, &with(&["-w", "1"]));
    assert_same_tables(&tables(&two), &reference, "a rerun with -w 1");
    reference
}

/// Whether a host has enough pages for labels (`--min-host-pages`, 5) is decided by its pages
/// on all workers together, before any fingerprint is counted: with one file per worker, no
/// worker holds more than one page of a host of 5, and that host is labelled all the same,
/// while one of 4 pages is not.
#[test]
fn a_host_is_labelled_by_its_pages_on_every_worker_together() {
    let dir = scratch("labelled-together");
    let mut pages = synth::crawl(2, 5, 3);
    // Pages alternate between the two hosts: drop the second host's last page.
    pages.pop();
    // Rows name a host by its site: without the `www.` of the synthetic URLs.
    let site_of = |page: &synth::SynthPage| {
        let host = page.url.split('/').nth(2).unwrap();
        host.trim_start_matches("www.").to_string()
    };
    let four = site_of(&pages[1]);
    let five = site_of(&pages[0]);
    let files = crawl_of(&dir, 5, pages);
    let one = dir.join("w1");
    site(&files, &one, &["-w", "1"]);
    let reference = tables(&one);
    let row = |site: &str| {
        reference["hosts"]
            .iter()
            .find(|row| row.starts_with(&format!("{site}\t")))
            .cloned()
            .unwrap_or_else(|| panic!("no row of {site}: {:#?}", reference["hosts"]))
    };
    assert!(row(&five).contains("\t5\t5\ttrue\t"), "{}", row(&five));
    assert!(
        row(&four).contains("\t4\t4\tfalse\ttoo_few_pages"),
        "{}",
        row(&four)
    );
    assert!(
        reference["site_templates"]
            .iter()
            .any(|r| r.starts_with(&format!("{five}\t"))),
        "{:#?}",
        reference["site_templates"]
    );
    let spread = dir.join("w5");
    site(&files, &spread, &["-w", "5"]);
    assert_same_tables(&tables(&spread), &reference, "-w 5 against -w 1");
}

#[test]
fn kolcz_labels_keep_confident_blocks_only() {
    let dir = scratch("kolcz");
    let files = crawl(&dir, 1);
    let out = dir.join("out");
    site(&files, &out, &["--labels", "kolcz", "-w", "2"]);
    let training = rows(&out, "training");
    let count = |label: &str| {
        training
            .iter()
            .filter(|r| r.contains(&format!("\t{label}\tkolcz\t")))
            .count()
    };
    // Templates: the cookie bar, menus, the sidebar, the footer... on each of 240 pages.
    assert!(count("template") >= 240 * 3, "{}", count("template"));
    // Non-templates: one top-most unique block per page at least (the article's container).
    assert!(count("non_template") >= 240, "{}", count("non_template"));
    // Kołcz & Yih's blocks have 40+ characters of text: no <a> or <p> rows.
    assert!(training.iter().all(|r| {
        let tag = r.split('\t').nth(4).unwrap();
        stencil_operators::site::blocks::BLOCK_TAGS.contains(&tag)
    }));
}

#[test]
fn synth_writes_its_gold_beside_the_crawl() {
    let dir = scratch("gold");
    let out = dir.join("crawl.warc.gz");
    check(
        stencil()
            .args(["synth", "--hosts", "2", "--pages", "3", "--out"])
            .arg(&out)
            .output()
            .unwrap(),
    );
    let gold = std::fs::read_to_string(dir.join("crawl.gold.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = gold
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    assert!(lines[0]["url"]
        .as_str()
        .unwrap()
        .starts_with("https://www.site000.example/"));
    assert!(lines[0]["template"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p == "1/3"));
}
