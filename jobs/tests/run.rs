//! `stencil run`, `apply` and `clean` as a user runs them: the same tables whatever the workers,
//! processes or memory budget; the shipped-model fallback; the nightly mode reusing an earlier
//! run's site templates; and one page cleaned from standard input.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{assert_same_tables, crawl, rows, scratch, stencil, two_processes};

const TABLES: [&str; 6] = common::RUN_TABLES;

fn tables(out: &Path, names: &[&'static str]) -> BTreeMap<&'static str, Vec<String>> {
    names.iter().map(|&t| (t, rows(out, t))).collect()
}

use common::job as run;

fn run_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

/// Column `name` of every row of a table, as `common::cell` renders it, except that floats
/// are plain numbers and nulls are "null".
fn column(out: &Path, table: &str, name: &str) -> Vec<String> {
    use arrow_array::{Array, Float64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let mut values = Vec::new();
    let mut parts: Vec<PathBuf> = std::fs::read_dir(out.join(table))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    parts.sort();
    for part in parts {
        let file = std::fs::File::open(&part).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            let column = batch.column_by_name(name).unwrap();
            for row in 0..batch.num_rows() {
                values.push(if column.is_null(row) {
                    "null".to_string()
                } else if let Some(floats) = column.as_any().downcast_ref::<Float64Array>() {
                    floats.value(row).to_string()
                } else {
                    common::cell(column.as_ref(), row)
                });
            }
        }
    }
    values
}

#[test]
fn same_tables_with_one_or_two_workers_two_processes_and_spilling() {
    let dir = scratch("run-workers");
    let files = crawl(&dir, 5);
    // Six labelled hosts: let them train, so the fitted model is part of what must agree.
    let train = ["--min-training-hosts", "2"];

    let one = dir.join("w1");
    let summary = run("run", &files, &one, &[&train[..], &["-w", "1"]].concat());
    assert!(summary.contains("model: trained"), "{summary}");
    let reference = tables(&one, &TABLES);
    assert_eq!(reference["pages"].len(), 243);
    assert_eq!(reference["records"].len(), 243);
    assert!(reference["segments"].len() > 243 * 3);
    assert_eq!(reference["hosts"].len(), 7);
    assert!(one.join("model.json").exists());
    let json = run_json(&one);
    assert_eq!(json["model"]["source"], "trained");
    assert_eq!(json["records"]["by_outcome"]["page"], 243);
    assert_eq!(json["rows"]["pages"], 243);
    // Settings read back as they were given, not as their f32 approximations.
    assert_eq!(json["configuration"]["hidden_threshold"], 0.8);
    assert_eq!(json["configuration"]["site_weight"], 0.4);
    assert_eq!(json["configuration"]["smoothing_c"], 0.01);

    let two = dir.join("w2");
    run("run", &files, &two, &[&train[..], &["-w", "2"]].concat());
    assert_same_tables(&tables(&two, &TABLES), &reference, "-w 2 against -w 1");

    // More workers than files: workers share files record by record.
    let seven = dir.join("w7");
    run("run", &files, &seven, &[&train[..], &["-w", "7"]].concat());
    assert_same_tables(&tables(&seven, &TABLES), &reference, "-w 7 against -w 1");
    assert_eq!(run_json(&seven)["inventory"]["files"], 5);

    let processes = dir.join("p2");
    two_processes("run", &files, &processes, &train, 41);
    assert_same_tables(
        &tables(&processes, &TABLES),
        &reference,
        "2 processes × 1 worker against 1 × 1",
    );
    assert_eq!(run_json(&processes)["rows"]["pages"], 243);

    // A budget of one byte: every page goes through the spill file and comes back.
    let spilled = dir.join("spill");
    let summary = run(
        "run",
        &files,
        &spilled,
        &[&train[..], &["-w", "2", "--memory-budget", "1"]].concat(),
    );
    assert!(
        summary.contains("243 pages (") && summary.contains("spilled"),
        "{summary}"
    );
    assert_same_tables(&tables(&spilled, &TABLES), &reference, "spilled");
    assert!(!spilled.join(".spill").exists(), "spill files are removed");
}

#[test]
fn pages_carry_fractions_and_cleaned_text() {
    let dir = scratch("run-pages");
    let files = crawl(&dir, 2);
    let out = dir.join("out");
    run("run", &files, &out, &["--min-training-hosts", "2"]);
    let text = column(&out, "pages", "template_text_fraction");
    let site = column(&out, "pages", "site_template_text_fraction");
    let hosts = column(&out, "pages", "host");
    for ((text, site), host) in text.iter().zip(&site).zip(&hosts) {
        let fraction: f64 = text.parse().unwrap();
        assert!((0.0..=1.0).contains(&fraction), "{text}");
        // tiny.example has too few pages for site-level statistics.
        assert_eq!(site == "null", host == "tiny.example", "{host}: {site}");
    }
    let mean: f64 = text.iter().map(|t| t.parse::<f64>().unwrap()).sum::<f64>() / 243.0;
    assert!(mean > 0.1 && mean < 0.6, "mean templated text {mean}");
    let cleaned = column(&out, "pages", "cleaned_text");
    // The synthetic cookie bar is template everywhere; articles keep their paragraphs.
    assert!(
        cleaned.iter().all(|t| !t.contains("cookies")),
        "{:?}",
        &cleaned[0]
    );
    assert!(cleaned.iter().filter(|t| t.len() > 200).count() > 200);
}

#[test]
fn training_rows_come_from_the_sampled_pages_unless_all_are_asked_for() {
    let dir = scratch("run-training-rows");
    let files = crawl(&dir, 2);
    let settings = ["--min-training-hosts", "2", "--host-sample", "10"];
    let sampled = dir.join("sampled");
    run("run", &files, &sampled, &settings);
    let all = dir.join("all");
    run(
        "run",
        &files,
        &all,
        &[&settings[..], &["--all-training-rows"]].concat(),
    );

    let pages_per_host = |out: &Path| {
        let mut pages: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
        let urls = column(out, "training", "url");
        for (host, url) in column(out, "training", "host").into_iter().zip(urls) {
            pages.entry(host).or_default().insert(url);
        }
        pages
    };
    let from_sample = pages_per_host(&sampled);
    let from_all = pages_per_host(&all);
    assert!(from_sample.len() >= 2, "{from_sample:?}");
    assert_eq!(
        from_sample.keys().collect::<Vec<_>>(),
        from_all.keys().collect::<Vec<_>>()
    );
    for (host, urls) in &from_sample {
        assert!(urls.len() <= 10, "{host}: {} pages", urls.len());
        assert!(urls.is_subset(&from_all[host]));
        assert!(
            from_all[host].len() > 10,
            "{host}: {}",
            from_all[host].len()
        );
    }
    let mut subset = rows(&sampled, "training");
    let mut superset = rows(&all, "training");
    subset.sort();
    superset.sort();
    assert!(subset.iter().all(|row| superset.binary_search(row).is_ok()));
    // The classifier learns from the sampled pages either way.
    let buckets = |out: &Path| {
        let model: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("model.json")).unwrap())
                .unwrap();
        model["buckets"].clone()
    };
    assert_eq!(buckets(&sampled), buckets(&all));
}

#[test]
fn a_crawl_too_small_to_train_falls_back_to_the_shipped_model() {
    let dir = scratch("run-fallback");
    let files = crawl(&dir, 1);
    let out = dir.join("out");
    let summary = run("run", &files, &out, &[]);
    assert!(summary.contains("model: shipped"), "{summary}");
    assert!(
        summary.contains("fewer than --min-training-hosts 10"),
        "{summary}"
    );
    let json = run_json(&out);
    assert_eq!(json["model"]["source"], "shipped");
    assert!(json["model"]["fallback_reason"]
        .as_str()
        .unwrap()
        .contains("6 hosts"));
    assert!(!out.join("model.json").exists());
    assert_eq!(rows(&out, "pages").len(), 243);
}

#[test]
fn apply_cleans_new_shards_with_an_earlier_runs_site_templates() {
    let dir = scratch("run-apply");
    let files = crawl(&dir, 2);
    let first = dir.join("first");
    // Last month's run saw the hosts of tonight's shard (the synthetic crawl puts each host in
    // one file, so the run reads both).
    run("run", &files, &first, &["--min-training-hosts", "2"]);

    let bare = dir.join("bare");
    let summary = run("apply", &files[1..], &bare, &[]);
    assert!(summary.contains("model: shipped"), "{summary}");
    assert!(!bare.join("training").exists() && !bare.join("site_templates").exists());
    let site = column(&bare, "pages", "site_template_text_fraction");
    assert!(site.iter().all(|s| s == "null"));

    let with = dir.join("with");
    let model = first.join("model.json");
    run(
        "apply",
        &files[1..],
        &with,
        &[
            "--model",
            model.to_str().unwrap(),
            "--site-templates",
            first.to_str().unwrap(),
        ],
    );
    let site = column(&with, "pages", "site_template_text_fraction");
    let known = site.iter().filter(|s| *s != "null").count();
    assert!(known > 100, "{known} pages got site-level fractions");
    let fractions: Vec<f64> = site.iter().filter_map(|s| s.parse().ok()).collect();
    assert!(fractions.iter().any(|&f| f > 0.05), "{fractions:?}");
    let site_level = column(&with, "hosts", "site_level");
    // The shard holds three of the six hosts, all with templates from the earlier run.
    assert_eq!(site_level, ["true", "true", "true"]);
    // Every page of the shard is in `pages`, and every record in `records`.
    assert_eq!(
        column(&with, "records", "outcome")
            .iter()
            .filter(|o| *o == "page")
            .count(),
        rows(&with, "pages").len()
    );
}

#[test]
fn clean_prints_one_pages_text_from_standard_input() {
    let page = stencil_operators::synth::crawl(1, 1, 3).remove(0);
    let mut child = stencil()
        .args(["clean", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(page.html.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() > 3, "{text}");
    assert!(!text.contains("cookies"), "{text}");
    let missing = stencil()
        .args(["clean", "/no/such/page.html"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/no/such/page.html"));
}

#[test]
fn a_missing_or_damaged_input_file_fails_the_run_by_name_and_keeps_its_records() {
    let dir = scratch("run-bad-file");
    let files = crawl(&dir, 2);
    // Cut the second file in the middle of a gzip member.
    common::cut_in_a_member(&files[1]);
    // One worker per file, then three workers sharing each file's records.
    let mut reference: Option<Vec<String>> = None;
    for workers in ["1", "3"] {
        let out = dir.join(format!("out-w{workers}"));
        let result = stencil()
            .arg("run")
            .args(&files)
            .arg("--out")
            .arg(&out)
            .args(["-w", workers])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&result.stderr);
        // A truncated member is an error record, not a failed file: the run completes.
        assert!(result.status.success(), "{stderr}");
        let outcomes = column(&out, "records", "outcome");
        assert!(outcomes.iter().any(|o| o == "error"), "{outcomes:?}");
        let json = run_json(&out);
        let counted = json["records"]["records"].as_u64().unwrap()
            + json["records"]["read_errors"].as_u64().unwrap();
        assert_eq!(outcomes.len() as u64, counted);
        assert_eq!(json["inventory"]["files"], 2);
        let mut records = rows(&out, "records");
        records.sort();
        match &reference {
            None => reference = Some(records),
            Some(reference) => assert_eq!(&records, reference, "-w {workers} against -w 1"),
        }
    }

    let missing = stencil()
        .arg("run")
        .arg(&files[0])
        .arg(dir.join("nothing-here.warc.gz"))
        .arg("--out")
        .arg(dir.join("out2"))
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nothing-here.warc.gz"));
}

#[test]
fn records_reconcile_with_an_independent_count_of_the_real_warc_fixtures() {
    let Some(dir) = stencil_tests::shared_dir("data/warc-samples") else {
        return;
    };
    let files: Vec<PathBuf> = stencil_tests::warc_samples::EXPECTED
        .iter()
        .map(|e| dir.join(e.file))
        .collect();
    // Two workers read whole files; five share them record by record.
    for workers in ["2", "5"] {
        let dir = scratch(&format!("run-fixtures-w{workers}"));
        let out = dir.join("out");
        run("run", &files, &out, &["-w", workers]);
        reconcile(&files, &out);
    }
}

/// The `records` and `pages` tables of a run over the WARC fixtures against the counts made
/// independently (with warcio) in `stencil_tests::warc_samples`.
fn reconcile(files: &[PathBuf], out: &Path) {
    let warc_files = column(out, "records", "warc_file");
    let types = column(out, "records", "record_type");
    let outcomes = column(out, "records", "outcome");
    let offsets = column(out, "records", "warc_offset");
    let page_files = column(out, "pages", "warc_file");
    for (expected, path) in stencil_tests::warc_samples::EXPECTED.iter().zip(files) {
        let name = path.display().to_string();
        let mine: Vec<usize> = (0..warc_files.len())
            .filter(|&i| warc_files[i] == name)
            .collect();
        let mut by_type: BTreeMap<&str, u64> = BTreeMap::new();
        for &i in &mine {
            *by_type.entry(types[i].as_str()).or_default() += 1;
        }
        let want: BTreeMap<&str, u64> = expected.types.iter().copied().collect();
        assert_eq!(by_type, want, "{}", expected.file);
        let offset_sum: u64 = mine
            .iter()
            .map(|&i| offsets[i].parse::<u64>().unwrap())
            .sum();
        assert_eq!(offset_sum, expected.offset_sum, "{}", expected.file);
        let pages = mine.iter().filter(|&&i| outcomes[i] == "page").count() as u64;
        assert_eq!(pages, expected.pages, "{}", expected.file);
        let rows = page_files.iter().filter(|f| **f == name).count() as u64;
        assert_eq!(rows, expected.pages, "pages rows of {}", expected.file);
    }
    let total: u64 = stencil_tests::warc_samples::EXPECTED
        .iter()
        .flat_map(|e| e.types.iter().map(|(_, n)| n))
        .sum();
    assert_eq!(warc_files.len() as u64, total, "nothing more, nothing less");
    let json = run_json(out);
    assert_eq!(json["records"]["records"].as_u64(), Some(total));
    assert_eq!(json["records"]["read_errors"].as_u64(), Some(0));
}

/// `run --method tree-regex`: the pages of a host with a tree regular expression get seed 003's
/// sections in `segments`, each with its importance, the noise ones (below 0.25) template; the
/// pages of a host without one keep the smoothed segmentation.
#[test]
fn tree_regex_sections_are_segments_with_their_importance() {
    let dir = scratch("run-tree-regex");
    let pages = stencil_operators::synth::multi_template_crawl(6, 10, 2)
        .into_iter()
        .map(|(page, _)| page)
        .collect();
    let files = common::crawl_of(&dir, 2, pages);
    let out = dir.join("out");
    run("run", &files, &out, &["--method", "tree-regex", "-w", "2"]);
    let importance = column(&out, "segments", "importance");
    let template = column(&out, "segments", "template");
    let hosts = column(&out, "segments", "host");
    let siblings = column(&out, "segments", "siblings");
    let (mut noise, mut kept) = (0, 0);
    for (((importance, template), host), siblings) in
        importance.iter().zip(&template).zip(&hosts).zip(&siblings)
    {
        if host == "tiny.example" {
            // Too few pages for a template: smoothed sections.
            assert_eq!((importance.as_str(), siblings.as_str()), ("null", "1"));
            continue;
        }
        // Float32 cells are rendered as their bits.
        let bits =
            u32::from_str_radix(importance, 16).unwrap_or_else(|_| panic!("{host}: {importance}"));
        let value = f32::from_bits(bits);
        assert!((0.0..=1.0).contains(&value));
        assert_eq!(template == "true", value < 0.25, "{importance} {template}");
        match value < 0.25 {
            true => noise += 1,
            false => kept += 1,
        }
    }
    assert!(noise > 0 && kept > 0, "{noise} noise, {kept} kept");
    // The site-level fractions are the noise sections'.
    let fractions = column(&out, "pages", "site_template_text_fraction");
    assert!(
        fractions.iter().any(|f| f != "null" && f != "0"),
        "{fractions:?}"
    );
    let json = run_json(&out);
    assert_eq!(json["configuration"]["method"], "tree-regex");
    assert_eq!(json["configuration"]["template_sample"], 15);
}
