//! `--resume`: a job killed with SIGKILL anywhere and run again with `--resume` gives the tables
//! of an uninterrupted job; `apply` does not read its finished files again; a folder made by
//! another job is refused. The kills are real SIGKILLs: at named points, from the test-only
//! `STENCIL_INJECT_KILL` switch (`jobs/src/crash.rs`), and from this process at timed moments.

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Instant;

use common::{assert_same_tables, crawl, rows, scratch, stencil, RUN_TABLES};

const APPLY_TABLES: [&str; 4] = ["pages", "hosts", "segments", "records"];

/// `stencil COMMAND FILES --out OUT ARGS...`, with `STENCIL_INJECT_KILL=kill` when given.
fn job(command: &str, files: &[PathBuf], out: &Path, args: &[&str], kill: Option<&str>) -> Output {
    let mut job = stencil();
    job.arg(command)
        .args(files)
        .arg("--out")
        .arg(out)
        .args(args);
    if let Some(point) = kill {
        job.env("STENCIL_INJECT_KILL", point);
    }
    job.output().unwrap()
}

/// An uninterrupted job's tables, in `DIR/NAME`.
fn uninterrupted(dir: &Path, name: &str, (command, files, args): Job<'_>) -> PathBuf {
    let out = dir.join(name);
    succeeded(job(command, files, &out, args, None), name);
    out
}

/// A command, its inputs and its arguments.
type Job<'a> = (&'a str, &'a [PathBuf], &'a [&'a str]);

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).to_string()
}

fn succeeded(output: Output, what: &str) -> String {
    let text = stderr(&output);
    assert!(output.status.success(), "{what}: {text}");
    text
}

fn was_killed(output: &Output, what: &str) {
    assert_eq!(
        output.status.signal(),
        Some(libc::SIGKILL),
        "{what}: the job was to be killed: {}",
        stderr(output)
    );
}

fn tables(out: &Path, names: &[&'static str]) -> BTreeMap<&'static str, Vec<String>> {
    names.iter().map(|&t| (t, rows(out, t))).collect()
}

fn run_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

/// What a reader may pick up after a kill: every `part-*.parquet` is a whole Parquet file
/// (`rows` reads it), whatever else is left beside it.
fn readable_parts(out: &Path, names: &[&'static str]) {
    for table in names {
        let Ok(entries) = std::fs::read_dir(out.join(table)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with("part-") && name.ends_with(".parquet") {
                let file = std::fs::File::open(entry.path()).unwrap();
                parquet::file::reader::SerializedFileReader::new(file)
                    .unwrap_or_else(|e| panic!("{table}/{name} is not whole: {e}"));
            }
        }
    }
}

/// The counts of `run.json` that must not depend on a kill: records by outcome, rows per
/// table, hosts.
fn counts(json: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "records": json["records"],
        "inventory": json["inventory"],
        "rows": json["rows"],
        "hosts_with_site_level": json["hosts_with_site_level"],
        "pages_on_quantized_levels": json["pages_on_quantized_levels"],
        "model": json["model"]["source"],
    })
}

/// Kills `command` at each point, resumes it, and compares its tables and counts with an
/// uninterrupted job's in `reference`. Returns each resumed job's `run.json`.
fn kill_and_resume(
    dir: &Path,
    (command, files, args): Job<'_>,
    names: &[&'static str],
    reference: &Path,
    points: &[&str],
) -> Vec<serde_json::Value> {
    let want = tables(reference, names);
    let want_counts = counts(&run_json(reference));
    let mut resumed = Vec::new();
    for point in points {
        let what = format!("{command} {args:?} killed at {point}");
        let out = dir.join(format!("{command}-{}", point.replace([':', ' ', ','], "-")));
        let killed = job(command, files, &out, args, Some(point));
        was_killed(&killed, &what);
        assert!(!out.join("run.json").exists(), "{what}: no run.json");
        readable_parts(&out, names);
        let mut again: Vec<&str> = args.to_vec();
        again.push("--resume");
        let text = succeeded(job(command, files, &out, &again, None), &what);
        assert!(text.contains("holds the same job"), "{what}: {text}");
        // `rows` also fails on any file but a finished part: nothing a killed job was
        // writing is left.
        assert_same_tables(&tables(&out, names), &want, &what);
        let json = run_json(&out);
        assert_eq!(counts(&json), want_counts, "{what}");
        let model = |dir: &Path| std::fs::read(dir.join("model.json")).ok();
        assert_eq!(model(&out), model(reference), "{what}: model.json");
        resumed.push(json);
    }
    resumed
}

#[test]
fn apply_killed_anywhere_resumes_to_the_tables_of_an_uninterrupted_job() {
    let dir = scratch("resume-apply");
    let files = crawl(&dir, 4);
    let reference = uninterrupted(&dir, "reference", ("apply", &files, &[]));
    let points = [
        // Reading the first file, then the third.
        "record:30",
        "record:150",
        // Between files: two entries written.
        "entry:2",
        // A part complete under its temporary name (file 1's `records`, the 4th part), and
        // file 1's `pages` renamed but not its `segments`, nor its entry.
        "part-closed:4",
        "part-renamed:5",
        // Every file done, `hosts` not yet written; then every table written.
        "stage:hosts and tables",
        "run-json",
    ];
    let resumed = kill_and_resume(
        &dir,
        ("apply", &files, &[]),
        &APPLY_TABLES,
        &reference,
        &points,
    );
    let shares: Vec<u64> = resumed
        .iter()
        .map(|json| json["resumed"]["file_shares"].as_u64().unwrap())
        .collect();
    assert_eq!(shares, [0, 2, 2, 1, 1, 4, 4], "finished shares kept");
}

#[test]
fn apply_on_several_workers_with_shared_files_site_templates_and_a_damaged_file_resumes() {
    let dir = scratch("resume-apply-w2");
    let files = crawl(&dir, 3);
    // The last file cut in the middle of a gzip member: its `error` rows and unreadable
    // stretch must be counted once too.
    common::cut_in_a_member(&files[2]);
    // The site templates of a `run`, so that `hosts` has the site-level columns too.
    let templates = uninterrupted(&dir, "templates", ("run", &files, &[]));
    let templates = templates.to_string_lossy().to_string();
    for workers in ["2", "5"] {
        // 3 files on 2 workers are whole files; on 5, two workers share each of two files.
        let args = ["-w", workers, "--site-templates", templates.as_str()];
        let name = format!("reference-w{workers}");
        let reference = uninterrupted(&dir, &name, ("apply", &files, &args));
        let errors = rows(&reference, "records");
        assert!(
            errors.iter().any(|r| r.contains("\terror\t")),
            "the damage shows"
        );
        let json = kill_and_resume(
            &dir.join(format!("w{workers}")),
            ("apply", &files, &args),
            &APPLY_TABLES,
            &reference,
            &["record:100", "entry:1", "part-renamed:2"],
        );
        assert!(json[1]["resumed"]["file_shares"].as_u64() >= Some(1));
    }
}

#[test]
fn run_killed_anywhere_restarts_to_the_tables_of_an_uninterrupted_run() {
    let dir = scratch("resume-run");
    let files = crawl(&dir, 3);
    // Few hosts: trained on them all the same, so that a model is fitted and written.
    let train = ["--min-training-hosts", "3"];
    let reference = uninterrupted(&dir, "reference", ("run", &files, &train));
    assert!(reference.join("model.json").exists());
    let points = [
        "record:100",
        "stage:site statistics",
        "stage:labels",
        "stage:training",
        "stage:scoring, smoothing and cleaning pages",
        // model.json written, `site_templates` renamed, the other parts not.
        "part-renamed:1",
        "run-json",
    ];
    kill_and_resume(
        &dir,
        ("run", &files, &train),
        &RUN_TABLES,
        &reference,
        &points,
    );
    // Two workers, with every page spilled to disk.
    let args = [
        "-w",
        "2",
        "--memory-budget",
        "1",
        "--min-training-hosts",
        "3",
    ];
    kill_and_resume(
        &dir.join("w2"),
        ("run", &files, &args),
        &RUN_TABLES,
        &reference,
        &["stage:labels", "part-closed:3"],
    );
    // Killed with its pages spilled, resumed on fewer workers (the tables do not depend on
    // them): the spill file of the worker it no longer has is removed.
    let out = dir.join("spilled");
    let killed = job("run", &files, &out, &args, Some("stage:labels"));
    was_killed(&killed, "spilled");
    assert!(out.join(".spill/worker-00001").exists());
    let again = [
        "-w",
        "1",
        "--memory-budget",
        "1",
        "--min-training-hosts",
        "3",
    ];
    let again = [&again[..], &["--resume"]].concat();
    succeeded(job("run", &files, &out, &again, None), "spilled");
    assert!(
        !out.join(".spill").exists(),
        "stale spill files are removed"
    );
    assert_same_tables(
        &tables(&out, &RUN_TABLES),
        &tables(&reference, &RUN_TABLES),
        "spilled",
    );
}

#[test]
fn a_job_killed_from_outside_at_timed_moments_resumes() {
    let dir = scratch("resume-timed");
    let files = crawl(&dir, 4);
    for (command, names) in [("apply", &APPLY_TABLES[..]), ("run", &RUN_TABLES[..])] {
        let reference = dir.join(format!("{command}-reference"));
        let started = Instant::now();
        succeeded(job(command, &files, &reference, &[], None), "reference");
        let whole = started.elapsed();
        let want = tables(&reference, names);
        // At a fifth, half and four fifths of an uninterrupted job's time.
        for fifths in [1u32, 2, 4] {
            let what = format!("{command} killed after {fifths}/5 of its time");
            let out = dir.join(format!("{command}-{fifths}"));
            let mut child = stencil()
                .arg(command)
                .args(&files)
                .arg("--out")
                .arg(&out)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(whole * fifths / 5);
            // SIGKILL: `Child::kill` sends it on Unix.
            let _ = child.kill();
            let _ = child.wait().unwrap();
            let resumed = job(command, &files, &out, &["--resume"], None);
            succeeded(resumed, &what);
            assert_same_tables(&tables(&out, names), &want, &what);
        }
    }
}

#[test]
fn a_resumed_apply_does_not_read_its_finished_files_again() {
    let dir = scratch("resume-skip");
    let files = crawl(&dir, 4);
    let reference = uninterrupted(&dir, "reference", ("apply", &files, &[]));
    let out = dir.join("out");
    was_killed(&job("apply", &files, &out, &[], Some("entry:2")), "kill");
    // A page of the first file panics if it is read again: it would become an `error` row.
    // (The switch picks pages by a part of their URL: one no other page's URL contains.)
    let pages = rows(&reference, "pages");
    let column = |row: &str, k: usize| row.split('\t').nth(k).unwrap_or("").to_string();
    let urls: Vec<String> = pages.iter().map(|p| column(p, 0)).collect();
    let first_file = files[0].display().to_string();
    let url = pages
        .iter()
        .filter(|p| column(p, 2) == first_file)
        .map(|p| column(p, 0))
        .find(|url| urls.iter().filter(|u| u.contains(url.as_str())).count() == 1)
        .unwrap();
    let resumed = stencil()
        .arg("apply")
        .args(&files)
        .arg("--out")
        .arg(&out)
        .arg("--resume")
        .env("STENCIL_INJECT_PANIC", format!("page:{url}:features"))
        .output()
        .unwrap();
    let text = succeeded(resumed, "resume");
    assert!(text.contains("2 file shares are done"), "{text}");
    assert!(!text.contains("failed with a panic"), "{text}");
    let records = rows(&out, "records");
    let mut distinct = records.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), records.len(), "no record twice");
    assert_same_tables(
        &tables(&out, &APPLY_TABLES),
        &tables(&reference, &APPLY_TABLES),
        "resumed",
    );
    let json = run_json(&out);
    assert_eq!(json["resumed"]["file_shares"], 2);
    assert_eq!(counts(&json), counts(&run_json(&reference)));

    // Without --resume the job starts over: the entries go, and the file is read again.
    let fresh = stencil()
        .arg("apply")
        .args(&files)
        .arg("--out")
        .arg(&out)
        .env("STENCIL_INJECT_PANIC", format!("page:{url}:features"))
        .output()
        .unwrap();
    let text = succeeded(fresh, "fresh");
    assert!(text.contains("1 pages failed with a panic"), "{text}");
    assert_eq!(run_json(&out)["resumed"]["file_shares"], 0);
}

#[test]
fn resume_refuses_another_jobs_folder_naming_what_differs() {
    let dir = scratch("resume-refuse");
    let files = crawl(&dir, 3);
    let out = dir.join("apply");
    was_killed(&job("apply", &files, &out, &[], Some("entry:1")), "kill");
    let refused = |args: &[&str], files: &[PathBuf], expected: &str| {
        let mut again = args.to_vec();
        again.push("--resume");
        let output = job("apply", files, &out, &again, None);
        let text = stderr(&output);
        assert!(!output.status.success(), "{args:?}: {text}");
        assert!(
            text.contains("cannot resume") && text.contains(expected),
            "{args:?}: {text}"
        );
        assert!(!out.join("run.json").exists());
    };
    refused(
        &["--threshold", "0.6"],
        &files,
        "threshold: 0.5 then, 0.6 now",
    );
    let name = files[2].display().to_string();
    refused(
        &[],
        &files[..2],
        &format!("input {name} is not among this job's"),
    );
    // 3 files on 5 workers are split by record: other parts.
    refused(
        &["-w", "5"],
        &files,
        "whole files then, files split by record",
    );
    // The finished share survived every refusal.
    let text = succeeded(job("apply", &files, &out, &["--resume"], None), "resume");
    assert!(text.contains("1 file shares are done"), "{text}");

    // `run` refuses a changed option too; on a folder with no job it simply runs.
    let run_out = dir.join("run");
    was_killed(
        &job("run", &files, &run_out, &[], Some("stage:labels")),
        "kill run",
    );
    let output = job(
        "run",
        &files,
        &run_out,
        &["--theta", "0.2", "--resume"],
        None,
    );
    let text = stderr(&output);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("theta: 0.1 then, 0.2 now"), "{text}");
    let fresh = dir.join("nothing-yet");
    let text = succeeded(job("run", &files, &fresh, &["--resume"], None), "fresh");
    assert!(text.contains("holds no job to resume"), "{text}");
    assert!(fresh.join("run.json").exists());
}
