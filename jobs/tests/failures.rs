//! What a failure costs: a page that panics costs that page (an `error` row of kind `panic` in
//! `records`, no row elsewhere, the job goes on); a worker or process that dies stops the
//! whole job at once, non-zero, naming where it was, instead of leaving the others waiting.
//! Panics are injected with the test-only `STENCIL_INJECT_PANIC` switch (`jobs/src/crash.rs`).

mod common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{crawl, rows, scratch, stencil, write_page};

/// The bar: a job with a dead worker ends within this.
const STOP_WITHIN: Duration = Duration::from_secs(10);

fn run_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

/// Waits for `child` at most `limit` (then kills it and fails), returning its output and how
/// long it took from `started`.
fn wait_bounded(mut child: Child, started: Instant, limit: Duration) -> (Output, Duration) {
    loop {
        if child.try_wait().unwrap().is_some() {
            let took = started.elapsed();
            return (child.wait_with_output().unwrap(), took);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `command`, which must fail within `STOP_WITHIN`; returns its stderr.
fn fails_within_seconds(command: &mut Command) -> String {
    let started = Instant::now();
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (output, took) = wait_bounded(child, started, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(!output.status.success(), "{stderr}");
    assert!(took < STOP_WITHIN, "took {took:?}: {stderr}");
    stderr
}

/// The rows of `records`, split into their columns.
fn records_of(out: &Path) -> Vec<Vec<String>> {
    rows(out, "records")
        .iter()
        .map(|r| r.split('\t').map(String::from).collect())
        .collect()
}

/// The records columns, in schema order.
const OUTCOME: usize = 8;
const REASON: usize = 9;
const DETAIL: usize = 10;
const TARGET_URI: usize = 4;

#[test]
fn a_page_that_panics_in_any_stage_is_an_error_row_and_the_job_goes_on() {
    let dir = scratch("fail-page");
    let files = crawl(&dir, 2);
    // Pages of a labelled host (article 1 and 10-19), so they go through every stage.
    let victim = "www.site003.example/article/1";
    for (command, stage, workers) in [
        ("run", "hashes", "2"),
        ("run", "labels", "1"),
        ("run", "features", "2"),
        ("run", "smoothing", "1"),
        ("apply", "scoring", "2"),
        ("apply", "cleaned text", "1"),
    ] {
        let out = dir.join(format!("{command}-{}", stage.replace(' ', "-")));
        let output = stencil()
            .arg(command)
            .args(&files)
            .arg("--out")
            .arg(&out)
            .args(["-w", workers])
            .env("STENCIL_INJECT_PANIC", format!("page:{victim}:{stage}"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{command} {stage}: {stderr}");
        let what = format!("{command}, panic in {stage}");
        let json = run_json(&out);
        let records = records_of(&out);
        let failed: Vec<&Vec<String>> = records.iter().filter(|r| r[REASON] == "panic").collect();
        let victims = records
            .iter()
            .filter(|r| r[TARGET_URI].contains(victim))
            .count();
        assert!(victims >= 1, "{what}: the crawl has such pages");
        assert_eq!(failed.len(), victims, "{what}: every such page failed");
        for row in &failed {
            assert_eq!(row[OUTCOME], "error", "{what}");
            assert!(
                row[DETAIL].starts_with(&format!("{stage}: injected panic in {stage}")),
                "{what}: {}",
                row[DETAIL]
            );
        }
        assert!(
            stderr.contains(&format!("{victims} pages failed with a panic")),
            "{what}: the summary says so: {stderr}"
        );
        // No row elsewhere, every record accounted for, and the counts agree.
        let pages = rows(&out, "pages");
        assert!(!pages.iter().any(|r| r.contains(victim)), "{what}");
        assert_eq!(pages.len() + victims, 243, "{what}");
        assert_eq!(records.len(), 243, "{what}");
        let counts = &json["records"];
        assert_eq!(counts["errors_by_kind"]["panic"], victims as u64, "{what}");
        assert_eq!(counts["by_outcome"]["page"], pages.len() as u64, "{what}");
        assert_eq!(json["rows"]["pages"], pages.len() as u64, "{what}");
        assert_eq!(json["rows"]["records"], records.len() as u64, "{what}");
        if command == "run" {
            let training = rows(&out, "training");
            assert!(!training.is_empty());
            assert!(
                stage == "features"
                    || stage == "smoothing"
                    || !training.iter().any(|r| r.contains(victim)),
                "{what}: a page that failed before its labels gives no training rows"
            );
        }
    }
}

#[test]
fn a_worker_that_dies_stops_the_job_within_seconds_naming_where_it_was() {
    let dir = scratch("fail-worker");
    let files = crawl(&dir, 2);
    // `run` panics at its first record, `site` before it.
    for (command, stage, place) in [
        ("run", "read and parse", "last record read at offset 0"),
        ("site", "fingerprints", "before its first record"),
    ] {
        let out = dir.join(command);
        let stderr = fails_within_seconds(
            stencil()
                .arg(command)
                .args(&files)
                .arg("--out")
                .arg(&out)
                .args(["-w", "2"])
                .env("STENCIL_INJECT_PANIC", "worker:1"),
        );
        assert!(
            stderr.contains(&format!("stencil: worker 1 (stage: {stage}; file "))
                && stderr.contains(&format!("part-1.warc.gz, {place})"))
                && stderr.contains("stopping the job"),
            "{command}: {stderr}"
        );
        assert!(stderr.contains("meanwhile worker 0 (stage: "), "{stderr}");
        assert!(
            !out.join("run.json").exists(),
            "no run.json for a failed job"
        );
    }
}

#[test]
fn a_process_that_dies_stops_the_other_process_within_seconds() {
    let dir = scratch("fail-process");
    let files = crawl(&dir, 2);
    let out = dir.join("out");
    let base = 30000 + (std::process::id() % 20000) as u16;
    let hostfile = dir.join("hosts.txt");
    std::fs::write(
        &hostfile,
        format!("127.0.0.1:{base}\n127.0.0.1:{}\n", base + 1),
    )
    .unwrap();
    let spawn = |process: &str| -> Child {
        let mut command: Command = stencil();
        command
            .arg("run")
            .args(&files)
            .arg("--out")
            .arg(&out)
            .args(["-n", "2", "-p", process, "--hostfile"])
            .arg(&hostfile)
            // Worker 1 is process 1's only worker.
            .env("STENCIL_INJECT_PANIC", "worker:1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command.spawn().unwrap()
    };
    let started = Instant::now();
    let second = spawn("1");
    let first = spawn("0");
    let (first, first_took) = wait_bounded(first, started, Duration::from_secs(120));
    let (second, second_took) = wait_bounded(second, started, Duration::from_secs(120));
    let (first_err, second_err) = (
        String::from_utf8_lossy(&first.stderr),
        String::from_utf8_lossy(&second.stderr),
    );
    assert!(!second.status.success(), "{second_err}");
    assert!(
        second_err.contains("stencil: worker 1 (stage: read and parse"),
        "{second_err}"
    );
    assert!(!first.status.success(), "{first_err}");
    assert!(
        first_err.contains("lost the connection to a peer process"),
        "{first_err}"
    );
    assert!(
        first_err.contains("meanwhile worker 0 (stage: "),
        "{first_err}"
    );
    assert!(first_took < STOP_WITHIN, "{first_took:?}: {first_err}");
    assert!(second_took < STOP_WITHIN, "{second_took:?}: {second_err}");
}

#[test]
fn a_process_whose_peer_never_starts_gives_up_after_the_connect_timeout() {
    let dir = scratch("fail-connect");
    let files = crawl(&dir, 1);
    let base = 30000 + ((std::process::id() + 7) % 20000) as u16;
    let hostfile = dir.join("hosts.txt");
    std::fs::write(
        &hostfile,
        format!("127.0.0.1:{base}\n127.0.0.1:{}\n", base + 1),
    )
    .unwrap();
    // Process 0 of 2, and process 1 is never started.
    let stderr = fails_within_seconds(
        stencil()
            .arg("run")
            .args(&files)
            .arg("--out")
            .arg(dir.join("out"))
            .args(["-n", "2", "-p", "0", "--connect-timeout", "2", "--hostfile"])
            .arg(&hostfile),
    );
    assert!(
        stderr.contains("process 0 of 2: the other processes did not all connect within 2 s"),
        "{stderr}"
    );
}

/// A raw Unicode host in a link (docs/robustness.md).
const IDN_PAGE: &str = "<html><body><p>Hello world, a page with a link.</p>\
    <a href=\"http://日本語.jp/\">日本</a></body></html>";

#[test]
fn a_raw_unicode_link_is_cleaned_and_run_on_two_workers() {
    let dir = scratch("fail-idn");
    let page = dir.join("idn.html");
    std::fs::write(&page, IDN_PAGE).unwrap();
    let output = stencil().arg("clean").arg(&page).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("Hello world"), "{stdout}");

    let mut writer = stencil_operators::reading::warc::write::WarcWriter::new(Vec::new(), true);
    write_page(&mut writer, "http://www.例え.jp/ページ", IDN_PAGE);
    write_page(&mut writer, "http://ww本.jp/", IDN_PAGE);
    let warc = dir.join("idn.warc.gz");
    std::fs::write(&warc, writer.into_inner()).unwrap();
    let out = dir.join("out");
    let started = Instant::now();
    let child = stencil()
        .args(["run"])
        .arg(&warc)
        .arg("--out")
        .arg(&out)
        .args(["-w", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (output, _) = wait_bounded(child, started, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let pages = rows(&out, "pages");
    assert_eq!(pages.len(), 2, "{stderr}");
    assert!(pages.iter().all(|p| p.contains("Hello world")), "{pages:?}");
    let json = run_json(&out);
    assert_eq!(json["records"]["by_outcome"]["page"], 2);
}

#[test]
fn site_and_score_count_a_panicking_page_as_an_error_and_go_on() {
    let dir = scratch("fail-site-score");
    let files = crawl(&dir, 2);
    let victim = "www.site003.example/article/1";
    for (command, stage, table) in [
        ("site", "labels", "training"),
        ("score", "features", "node_scores"),
    ] {
        let out = dir.join(command);
        let output = stencil()
            .arg(command)
            .args(&files)
            .arg("--out")
            .arg(&out)
            .args(["-w", "2"])
            .env("STENCIL_INJECT_PANIC", format!("page:{victim}:{stage}"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{command}: {stderr}");
        // Article 1 and 10-19 of the 40 pages of host 3.
        assert!(
            stderr.contains("warning: 11 pages failed with a panic"),
            "{command}: {stderr}"
        );
        let rows = rows(&out, table);
        assert!(rows.len() > 1000, "{command}: {} rows", rows.len());
        assert!(!rows.iter().any(|r| r.contains(victim)), "{command}");
        let neighbour = "www.site003.example/article/2\t";
        assert!(rows.iter().any(|r| r.contains(neighbour)), "{command}");
    }
}
