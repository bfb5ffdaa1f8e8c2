//! `stencil site` as a user runs it: the same tables (row order aside) with one worker, two
//! workers, and two processes of one worker talking over 127.0.0.1.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{assert_same_tables, check, crawl, rows, scratch, stencil, two_processes};

fn tables(out: &Path) -> BTreeMap<&'static str, Vec<String>> {
    ["site_templates", "hosts", "training"]
        .into_iter()
        .map(|table| (table, rows(out, table)))
        .collect()
}

fn site(files: &[PathBuf], out: &Path, extra: &[&str]) -> String {
    check(
        stencil()
            .arg("site")
            .args(files)
            .arg("--out")
            .arg(out)
            .args(extra)
            .output()
            .unwrap(),
    )
}

#[test]
fn same_tables_with_one_or_two_workers_and_two_processes() {
    let dir = scratch("workers");
    let files = crawl(&dir, 5);

    let one = dir.join("w1");
    let summary = site(&files, &one, &["-w", "1"]);
    assert!(summary.contains("243 pages"), "{summary}");
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
    assert!(reference["site_templates"].len() > 6 * 20);
    assert!(reference["training"]
        .iter()
        .any(|r| r.contains("\tnon_template\tpaper\t")));
    assert!(reference["training"]
        .iter()
        .any(|r| r.contains("\ttemplate\tpaper\t")));

    let two = dir.join("w2");
    site(&files, &two, &["-w", "2"]);
    assert_same_tables(&tables(&two), &reference, "-w 2 against -w 1");

    // More workers than files: workers share files record by record.
    let seven = dir.join("w7");
    site(&files, &seven, &["-w", "7"]);
    assert_same_tables(&tables(&seven), &reference, "-w 7 against -w 1");

    // Two processes of one worker each over 127.0.0.1.
    let cluster = dir.join("n2");
    two_processes("site", &files, &cluster, &[], 0);
    assert_same_tables(&tables(&cluster), &reference, "2 processes against -w 1");

    // A rerun into the same folder with fewer workers leaves no stale part files behind.
    site(&files, &two, &["-w", "1"]);
    assert_same_tables(&tables(&two), &reference, "a rerun with -w 1");
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
        stencil_operators::site::labels::BLOCK_TAGS.contains(&tag)
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
