//! `stencil site` as a user runs it: the same tables (row order aside) with one worker, two
//! workers, and two processes of one worker talking over 127.0.0.1.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use arrow_array::{Array, BooleanArray, Float64Array, StringArray, UInt32Array, UInt64Array};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn stencil() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stencil"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stencil-site-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn check(out: std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    stderr
}

/// A synthetic crawl split into `files` WARC files (so workers have something to split),
/// plus a host too small to label.
fn crawl(dir: &Path, files: usize) -> Vec<PathBuf> {
    // The pages round-robin over several files, written with the library writer.
    let pages = stencil_operators::synth::crawl(6, 40, 1);
    let mut out = Vec::new();
    for f in 0..files {
        let mut writer = stencil_operators::warc::write::WarcWriter::new(Vec::new(), true);
        for page in pages.iter().skip(f).step_by(files) {
            write_page(&mut writer, &page.url, &page.html);
        }
        if f == 0 {
            for i in 0..3 {
                write_page(
                    &mut writer,
                    &format!("http://tiny.example/{i}"),
                    "<p>tiny</p>",
                );
            }
        }
        let path = dir.join(format!("part-{f}.warc.gz"));
        std::fs::write(&path, writer.into_inner()).unwrap();
        out.push(path);
    }
    out
}

fn write_page(
    writer: &mut stencil_operators::warc::write::WarcWriter<Vec<u8>>,
    url: &str,
    html: &str,
) {
    let block = stencil_operators::warc::write::http_response(
        200,
        &[("Content-Type", "text/html; charset=utf-8")],
        html.as_bytes(),
    );
    writer
        .write(&stencil_operators::warc::write::NewRecord {
            record_type: "response",
            target_uri: Some(url),
            date: "2026-11-21T00:00:00Z",
            content_type: "application/http; msgtype=response",
            block: &block,
        })
        .unwrap();
}

/// Every row of every part file of `table`, each rendered as text, sorted.
fn rows(out: &Path, table: &str) -> Vec<String> {
    let mut rows = Vec::new();
    let dir = out.join(table);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name.starts_with("part-") && name.ends_with(".parquet"),
            "stray file {name}"
        );
        let file = std::fs::File::open(&path).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            for row in 0..batch.num_rows() {
                let cells: Vec<String> = batch
                    .columns()
                    .iter()
                    .map(|column| cell(column.as_ref(), row))
                    .collect();
                rows.push(cells.join("\t"));
            }
        }
    }
    rows.sort();
    rows
}

fn cell(column: &dyn Array, row: usize) -> String {
    if column.is_null(row) {
        return "∅".to_string();
    }
    let any = column.as_any();
    match column.data_type() {
        DataType::Utf8 => any
            .downcast_ref::<StringArray>()
            .unwrap()
            .value(row)
            .to_string(),
        DataType::UInt64 => any
            .downcast_ref::<UInt64Array>()
            .unwrap()
            .value(row)
            .to_string(),
        DataType::UInt32 => any
            .downcast_ref::<UInt32Array>()
            .unwrap()
            .value(row)
            .to_string(),
        // Bits, not a rounded rendering: the floats must agree exactly.
        DataType::Float64 => format!(
            "{:x}",
            any.downcast_ref::<Float64Array>()
                .unwrap()
                .value(row)
                .to_bits()
        ),
        DataType::Boolean => any
            .downcast_ref::<BooleanArray>()
            .unwrap()
            .value(row)
            .to_string(),
        other => panic!("unexpected column type {other}"),
    }
}

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
    assert_eq!(tables(&two), reference, "-w 2 differs from -w 1");

    // Two processes of one worker each over 127.0.0.1: process 1 first, it waits for 0.
    let base = 20000 + (std::process::id() % 20000) as u16;
    let hostfile = dir.join("hosts.txt");
    std::fs::write(
        &hostfile,
        format!("127.0.0.1:{base}\n127.0.0.1:{}\n", base + 1),
    )
    .unwrap();
    let cluster = dir.join("n2");
    let spawn = |process: &str| {
        stencil()
            .arg("site")
            .args(&files)
            .arg("--out")
            .arg(&cluster)
            .args(["-n", "2", "-p", process, "--hostfile"])
            .arg(&hostfile)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let second = spawn("1");
    let first = spawn("0");
    check(first.wait_with_output().unwrap());
    check(second.wait_with_output().unwrap());
    assert_eq!(tables(&cluster), reference, "2 processes differ from -w 1");

    // A rerun into the same folder with fewer workers leaves no stale part files behind.
    site(&files, &two, &["-w", "1"]);
    assert_eq!(tables(&two), reference);
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
        stencil_operators::labels::BLOCK_TAGS.contains(&tag)
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
