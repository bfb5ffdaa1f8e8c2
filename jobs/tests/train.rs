//! `stencil train` and `stencil score` as a user runs them: the same model.json and the same
//! scores with one worker, two workers and two processes; the training table carries every
//! feature under the model's names; the shipped model scores a WARC with no training.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{assert_same_tables, check, crawl, rows, scratch, stencil, two_processes};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn train(files: &[PathBuf], out: &Path, extra: &[&str]) -> String {
    check(
        stencil()
            .arg("train")
            .args(files)
            .arg("--out")
            .arg(out)
            .args(["--score", "--sample-cap", "2000"])
            .args(extra)
            .output()
            .unwrap(),
    )
}

fn outputs(out: &Path) -> (String, BTreeMap<&'static str, Vec<String>>) {
    let model = std::fs::read_to_string(out.join("model.json")).unwrap();
    let tables = ["training", "node_scores"]
        .into_iter()
        .map(|table| (table, rows(out, table)))
        .collect();
    (model, tables)
}

#[test]
fn same_model_and_scores_with_one_or_two_workers_and_two_processes() {
    let dir = scratch("train");
    let files = crawl(&dir, 5);

    let one = dir.join("w1");
    let summary = train(&files, &one, &["-w", "1"]);
    assert!(summary.contains("host-disjoint AUC"), "{summary}");
    let (model, reference) = outputs(&one);
    let parsed = stencil_operators::page_models::model::Model::from_json(&model).unwrap();
    assert!(parsed.validation.is_some());
    // Every element of all 243 pages is scored, each score a probability.
    let scores = &reference["node_scores"];
    assert!(scores.len() > 243 * 50, "{} scores", scores.len());

    let two = dir.join("w2");
    train(&files, &two, &["-w", "2"]);
    let (model_two, tables_two) = outputs(&two);
    assert_eq!(model_two, model, "model.json of -w 2 differs from -w 1");
    assert_same_tables(&tables_two, &reference, "-w 2 against -w 1");

    // More workers than files: workers share files record by record.
    let seven = dir.join("w7");
    train(&files, &seven, &["-w", "7"]);
    let (model_seven, tables_seven) = outputs(&seven);
    assert_eq!(model_seven, model, "model.json of -w 7 differs from -w 1");
    assert_same_tables(&tables_seven, &reference, "-w 7 against -w 1");

    // Two processes: the model is fitted in process 0 and broadcast to process 1.
    let cluster = dir.join("n2");
    two_processes(
        "train",
        &files,
        &cluster,
        &["--score", "--sample-cap", "2000"],
        7919,
    );
    let (model_n2, tables_n2) = outputs(&cluster);
    assert_eq!(
        model_n2, model,
        "model.json of 2 processes differs from -w 1"
    );
    assert_same_tables(&tables_n2, &reference, "2 processes against -w 1");
}

#[test]
fn training_table_has_every_feature_column_named_as_in_the_model() {
    let dir = scratch("columns");
    let files = crawl(&dir, 1);
    let out = dir.join("out");
    train(&files, &out, &[]);
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    let names: Vec<&str> = model["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(names.len(), stencil_operators::page_models::features::COUNT);
    let part = out.join("training").join("part-00000.parquet");
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(part).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut rows = 0;
    for batch in reader {
        let batch = batch.unwrap();
        rows += batch.num_rows();
        let schema = batch.schema();
        let mut columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let all = columns.len();
        columns.sort_unstable();
        columns.dedup();
        assert_eq!(columns.len(), all, "column names are unique");
        for name in names
            .iter()
            .chain(&["area", "bucket", "label", "url", "path"])
        {
            let column = batch
                .column_by_name(name)
                .unwrap_or_else(|| panic!("no column {name}"));
            assert_eq!(column.null_count(), 0, "{name}");
        }
        // Features are real numbers: a template's anchor share and a page's text share are
        // fractions.
        let share = batch
            .column_by_name("anchor_text_share")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::Float32Array>()
            .unwrap();
        assert!(share.values().iter().all(|v| (0.0..=1.0).contains(v)));
    }
    assert!(rows > 1000, "{rows} training rows");
}

#[test]
fn score_uses_the_shipped_model_and_is_the_same_on_two_workers() {
    let dir = scratch("score");
    let files = crawl(&dir, 3);
    let score = |out: &Path, workers: &str| {
        check(
            stencil()
                .arg("score")
                .args(&files)
                .arg("--out")
                .arg(out)
                .args(["-w", workers])
                .output()
                .unwrap(),
        )
    };
    let one = dir.join("w1");
    let summary = score(&one, "1");
    assert!(summary.contains("scored 243 pages"), "{summary}");
    let two = dir.join("w2");
    score(&two, "2");
    assert_eq!(rows(&two, "node_scores"), rows(&one, "node_scores"));
    // Five workers on three files share them record by record.
    let five = dir.join("w5");
    let summary = score(&five, "5");
    assert!(summary.contains("scored 243 pages of 3 files"), "{summary}");
    assert_eq!(rows(&five, "node_scores"), rows(&one, "node_scores"));

    // The shipped model, trained on real sites, finds the synthetic cookie bar and keeps the
    // article's paragraphs; smoothing agrees, and makes each page's root element a section.
    let all = rows(&one, "node_scores");
    let schema = stencil_schemas::node_scores();
    let column = |name: &str| schema.index_of(name).unwrap();
    let (score, smoothed) = (column("score"), column("smoothed"));
    let (section, template, path) = (column("section"), column("template"), column("path"));
    let float = |row: &String, at: usize| -> f32 {
        let bits = row.split('\t').nth(at).unwrap();
        f32::from_bits(u32::from_str_radix(bits, 16).unwrap())
    };
    let cell = |row: &String, at: usize| row.split('\t').nth(at).unwrap().to_string();
    let picked = |needle: &str| -> Vec<&String> {
        let picked: Vec<&String> = all.iter().filter(|r| r.contains(needle)).collect();
        assert!(!picked.is_empty(), "{needle}");
        picked
    };
    let mean = |rows: &[&String], at: usize| {
        rows.iter().map(|r| float(r, at)).sum::<f32>() / rows.len() as f32
    };
    let (cookie, paragraphs) = (picked("div.cookie-bar\tdiv"), picked(">article>p\tp"));
    assert!(
        mean(&cookie, score) > 0.5 && mean(&paragraphs, score) < 0.5,
        "cookie bar {:.3}, article paragraphs {:.3}",
        mean(&cookie, score),
        mean(&paragraphs, score)
    );
    assert!(cookie
        .iter()
        .all(|r| float(r, smoothed) >= 0.5 && cell(r, template) == "true"));
    assert!(paragraphs
        .iter()
        .all(|r| float(r, smoothed) < 0.5 && cell(r, template) == "false"));
    let roots: Vec<&String> = all.iter().filter(|r| cell(r, path) == "html").collect();
    assert_eq!(roots.len(), 243, "one root element per page");
    assert!(roots.iter().all(|r| cell(r, section) == "true"));
    let sections = all.iter().filter(|r| cell(r, section) == "true").count();
    assert!(
        sections > roots.len() && sections < all.len() / 4,
        "{sections} sections in {} rows",
        all.len()
    );

    // A single HTML page needs no WARC: its nodes are scored like a crawled page's.
    let page = dir.join("one page.html");
    let synthetic = stencil_operators::synth::crawl(1, 1, 3);
    std::fs::write(&page, &synthetic[0].html).unwrap();
    let single = dir.join("single");
    let summary = check(
        stencil()
            .arg("score")
            .arg(&page)
            .arg("--out")
            .arg(&single)
            .output()
            .unwrap(),
    );
    assert!(summary.contains("scored 1 pages"), "{summary}");
    let scored = rows(&single, "node_scores");
    assert!(scored.len() > 50, "{} rows", scored.len());
    assert!(scored[0].starts_with("file://"), "{}", scored[0]);

    // A file that is not a model is refused with its name.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"format\": \"something else\"}").unwrap();
    let out = stencil()
        .arg("score")
        .args(&files)
        .arg("--out")
        .arg(dir.join("bad"))
        .arg("--model")
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.json"), "{stderr}");

    // Smoothing settings out of range are refused by name before any work.
    let out = stencil()
        .arg("score")
        .args(&files)
        .arg("--out")
        .arg(dir.join("bad"))
        .args(["--max-levels", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--max-levels"), "{stderr}");
}

#[test]
fn a_crawl_without_labels_fails_to_train_clearly_but_keeps_the_site_tables() {
    let dir = scratch("unlabelled");
    let mut writer = stencil_operators::reading::warc::write::WarcWriter::new(Vec::new(), true);
    for i in 0..3 {
        common::write_page(
            &mut writer,
            &format!("http://small.example/{i}"),
            "<p>three pages are too few for site-level labels</p>",
        );
    }
    let file = dir.join("small.warc.gz");
    std::fs::write(&file, writer.into_inner()).unwrap();
    let out = dir.join("out");
    let run = stencil()
        .arg("train")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .args(["-w", "2"])
        .output()
        .unwrap();
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("cannot train"), "{stderr}");
    assert!(!out.join("model.json").exists());
    let hosts = rows(&out, "hosts");
    assert_eq!(hosts.len(), 1, "{hosts:?}");
    assert!(hosts[0].contains("too_few_pages"), "{hosts:?}");
}
