//! Mutation soak: feeds `stencil` hostile inputs made from real ones and fails on any input
//! that crashes it, hangs it or breaks the accounting of the `records` table.
//!
//! Run it (60 s by default; the debug build is fine for that):
//!
//! ```sh
//! cargo test -p stencil --test soak -- --nocapture
//! ```
//!
//! A long run with the release binary (what `docs/robustness.md` reports):
//!
//! ```sh
//! cargo build --release && STENCIL_SOAK_SECONDS=3600 STENCIL_SOAK_BIN=target/release/stencil \
//!     cargo test -p stencil --test soak -- --nocapture
//! ```
//!
//! Each input is a mutated `.warc.gz` (or plain `.warc`) or a bare `.html` (`.html.gz`), built
//! by `stencil_tests::mutate` (every mutation kind is described there and in
//! `docs/robustness.md`); WARC inputs go through `run` and one of `inspect` and `apply`
//! ([`warc_commands`]), pages through `clean`. The settings are environment variables
//! ([`config`]); what counts as a failure is [`Kind`].

#![cfg(unix)] // child processes are reaped with wait4 and killed by process group

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stencil_tests::mutate::{self, Mutated, PageDraft, Rng};

const DEFAULT_SEED: u64 = 0x5EED_0020;
/// At most this many failing inputs are kept per failure signature (the panic location, or
/// the kind and command): a common bug would otherwise fill the disk in a long run.
const KEEP_PER_SIGNATURE: usize = 20;

// ---------------------------------------------------------------------------------------------
// Configuration

struct Config {
    seconds: f64,
    seed: u64,
    only_iteration: Option<u64>,
    bin: PathBuf,
    keep: PathBuf,
    work: PathBuf,
}

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

fn from_root(value: &str) -> PathBuf {
    let path = PathBuf::from(value);
    if path.is_absolute() {
        path
    } else {
        workspace_root().join(path)
    }
}

fn parse_u64(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// The settings, from the environment:
/// - `STENCIL_SOAK_SECONDS` (60): time budget of the random part (the regression cases in
///   `jobs/tests/soak-cases/` are replayed first, outside the budget);
/// - `STENCIL_SOAK_SEED` (`0x5EED0020`, decimal or 0x-hex): the soak's seed; iteration i uses
///   `mutate::derive_seed(seed, i)`, so a run is reproducible and one iteration can be replayed
///   alone with `STENCIL_SOAK_ITERATION=i`;
/// - `STENCIL_SOAK_BIN` (this build's `stencil`): the binary under test;
/// - `STENCIL_SOAK_KEEP` (`target/soak-failures`): where failing inputs are kept, each with a
///   `.txt` saying what failed (relative paths in these two are relative to the workspace
///   root, whatever the test's working directory);
/// - `STENCIL_SHARED` / `STENCIL_REQUIRE_SHARED=1`: as for every test that uses
///   `../shared/data` (the seeds); without it the random part prints `NOTICE: skipping`.
fn config() -> Config {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let seconds = var("STENCIL_SOAK_SECONDS").map_or(60.0, |v| {
        v.trim()
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("STENCIL_SOAK_SECONDS={v} is not a number of seconds"))
    });
    let seed = var("STENCIL_SOAK_SEED").map_or(DEFAULT_SEED, |v| {
        parse_u64(&v).unwrap_or_else(|| panic!("STENCIL_SOAK_SEED={v} is not a number"))
    });
    let only_iteration = var("STENCIL_SOAK_ITERATION").map(|v| {
        parse_u64(&v).unwrap_or_else(|| panic!("STENCIL_SOAK_ITERATION={v} is not a number"))
    });
    let bin = var("STENCIL_SOAK_BIN")
        .map(|v| from_root(&v))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_stencil")));
    assert!(
        bin.is_file(),
        "STENCIL_SOAK_BIN: no binary at {}",
        bin.display()
    );
    let keep =
        from_root(&var("STENCIL_SOAK_KEEP").unwrap_or_else(|| "target/soak-failures".into()));
    let work = std::env::temp_dir().join(format!("stencil-soak-{}", std::process::id()));
    Config {
        seconds,
        seed,
        only_iteration,
        bin,
        keep,
        work,
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs and commands

#[derive(Clone, Copy, Debug)]
enum Cmd {
    Inspect,
    /// `spill`: `--memory-budget 1`, so every kept page goes through the spill file;
    /// `method`: the site-level method (`--method`).
    Run {
        workers: u32,
        spill: bool,
        method: &'static str,
    },
    Apply,
    Clean,
}

impl Cmd {
    fn label(self) -> String {
        match self {
            Cmd::Inspect => "inspect".into(),
            Cmd::Run {
                workers,
                spill,
                method,
            } => format!(
                "run -w {workers}{} --method {method}",
                if spill { " --memory-budget 1" } else { "" }
            ),
            Cmd::Apply => "apply".into(),
            Cmd::Clean => "clean".into(),
        }
    }
}

struct Input {
    /// File stem of the kept case: `i000012-<iteration seed>` or `case-<file stem>`.
    name: String,
    ext: String,
    bytes: Vec<u8>,
    /// Where it came from: iteration and seeds, or the regression case's path.
    origin: String,
    mutations: Vec<String>,
    commands: Vec<Cmd>,
}

// ---------------------------------------------------------------------------------------------
// Failures and statistics

/// How a command fails: one primary kind per command, the first of these that applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Still running after [`time_limit`]; it is killed.
    Hang,
    /// Killed by a signal, `panicked at` in its stderr, or a `records` row (or an
    /// `errors_by_kind` entry) whose reason is `panic` (per-page panics caught by the job).
    Panic,
    /// `run` / `apply` ended without writing `OUT/run.json`.
    NoRunJson,
    /// `OUT/records` (every part file) does not have exactly `records.records +
    /// records.read_errors` rows of `run.json`, `records.by_outcome` does not sum to that
    /// number, or (on a successful exit) the `page` rows are not the rows of `pages`; for
    /// `inspect --json`, `by_outcome` does not sum to `records + read_errors`.
    Reconcile,
    /// A non-zero exit without a `stencil:` error line, or any non-zero exit of `inspect`
    /// (only failing to open a file is an error there). `run` / `apply` may exit non-zero (a
    /// worker's failure is reported that way) only if `run.json` was still written and
    /// reconciles; `clean` may refuse garbage with a `stencil:` message.
    BadExit,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Hang => "hang",
            Kind::Panic => "panic",
            Kind::NoRunJson => "no run.json",
            Kind::Reconcile => "reconcile",
            Kind::BadExit => "bad exit",
        }
    }
}

/// What one command did, and what was wrong with it.
struct Checked {
    command_line: String,
    status: String,
    seconds: f64,
    max_rss_kb: i64,
    /// Every problem found, worst first; the first one's kind is the command's failure.
    problems: Vec<(Kind, String)>,
    /// Panic locations and messages (stderr, or `records` rows of reason `panic`).
    signatures: Vec<String>,
    stderr_tail: String,
}

#[derive(Default)]
struct Stats {
    inputs: u64,
    failing_inputs: u64,
    commands: u64,
    by_kind: BTreeMap<&'static str, u64>,
    peak_rss_kb: i64,
    peak_rss_what: String,
    kept: Vec<PathBuf>,
    not_kept: u64,
    /// Failure signature (where it panicked, or the kind and command) → failing commands,
    /// inputs kept, and the first panic message seen there.
    signatures: BTreeMap<String, (u64, usize, String)>,
    /// Mutation kind → random inputs it was applied to.
    mutations: BTreeMap<String, u64>,
}

impl Stats {
    fn count(&self, kind: Kind) -> u64 {
        self.by_kind.get(kind.name()).copied().unwrap_or(0)
    }
    fn failures(&self) -> u64 {
        self.by_kind.values().sum()
    }
    /// Failing commands by kind, as the summary and the final message say them.
    fn by_kind_text(&self) -> String {
        format!(
            "panics {}, hangs {}, reconciliation failures {}, no run.json {}, bad exits {}",
            self.count(Kind::Panic),
            self.count(Kind::Hang),
            self.count(Kind::Reconcile),
            self.count(Kind::NoRunJson),
            self.count(Kind::BadExit),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Running a child with a deadline, its peak RSS measured

enum Status {
    Exited(i32),
    Signaled(i32),
    TimedOut(f64),
}

impl Status {
    fn describe(&self) -> String {
        match self {
            Status::Exited(code) => format!("exit code {code}"),
            Status::Signaled(signal) => format!("killed by signal {signal}"),
            Status::TimedOut(limit) => format!("still running after {limit:.0} s: killed"),
        }
    }
}

struct Ran {
    status: Status,
    stdout: Vec<u8>,
    stderr: String,
    seconds: f64,
    max_rss_kb: i64,
}

/// Runs `bin args` in `dir` with stdout and stderr to files (no pipe to fill), in its own
/// process group, reaped with `wait4` for its own peak RSS; killed when past `limit`.
fn run_child(bin: &Path, args: &[String], dir: &Path, limit: Duration) -> Result<Ran, String> {
    let out_path = dir.join("stdout.txt");
    let err_path = dir.join("stderr.txt");
    let stdout = std::fs::File::create(&out_path).map_err(|e| format!("stdout file: {e}"))?;
    let stderr = std::fs::File::create(&err_path).map_err(|e| format!("stderr file: {e}"))?;
    let start = Instant::now();
    let child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .env("RUST_BACKTRACE", "0")
        .env("NO_COLOR", "1")
        .process_group(0)
        .spawn()
        .map_err(|e| format!("spawning {}: {e}", bin.display()))?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; wait4 only writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut pause = Duration::from_millis(2);
    let mut timed_out = false;
    loop {
        let flags = if timed_out { 0 } else { libc::WNOHANG };
        // SAFETY: pid is our child; status and usage are valid for writes.
        let reaped = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if reaped == pid {
            break;
        }
        if reaped < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("wait4: {error}"));
        }
        if !timed_out && start.elapsed() > limit {
            // SAFETY: signalling our child's process group (it was made its leader).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
            timed_out = true;
            continue;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    // The child is reaped by hand; `child` must not wait again.
    drop(child);
    let seconds = start.elapsed().as_secs_f64();
    let status = if timed_out {
        Status::TimedOut(limit.as_secs_f64())
    } else if libc::WIFSIGNALED(status) {
        Status::Signaled(libc::WTERMSIG(status))
    } else {
        Status::Exited(libc::WEXITSTATUS(status))
    };
    let stdout = std::fs::read(&out_path).unwrap_or_default();
    let stderr =
        String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default()).into_owned();
    Ok(Ran {
        status,
        stdout,
        stderr,
        seconds,
        max_rss_kb: usage.ru_maxrss,
    })
}

/// The wall-clock bound of a command on `input`: 20 s + 4 s per MB of the larger of its
/// stored and decompressed size (a .gz of repeated markup is small on disk).
fn time_limit(input: &Input) -> Duration {
    let mut size = input.bytes.len();
    if input.ext.ends_with("gz") {
        let mut sink = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(&input.bytes[..])
            .take(256 << 20)
            .read_to_end(&mut sink);
        size = size.max(sink.len());
    }
    Duration::from_secs_f64(20.0 + 4.0 * size as f64 / 1e6)
}

// ---------------------------------------------------------------------------------------------
// The checks

/// `thread 'x' panicked at src/a.rs:1:2:` and the message line after it.
fn panic_signatures(stderr: &str) -> Vec<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(p) = line.find("panicked at") {
            let place = line[p + "panicked at".len()..].trim().trim_end_matches(':');
            let message = lines.get(i + 1).copied().unwrap_or("").trim();
            let message: String = message.chars().take(200).collect();
            let signature = format!("{place}: {message}");
            if !out.contains(&signature) {
                out.push(signature);
            }
        }
    }
    out
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let from = all.len().saturating_sub(lines);
    all[from..]
        .iter()
        .map(|l| l.chars().take(400).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn json_u64(value: &serde_json::Value, path: &[&str]) -> Result<u64, String> {
    let mut v = value;
    for key in path {
        v = v
            .get(key)
            .ok_or_else(|| format!("no {} in the JSON", path.join(".")))?;
    }
    v.as_u64()
        .ok_or_else(|| format!("{} is not a count: {v}", path.join(".")))
}

/// The sum of a JSON object of counts (`by_outcome`).
fn json_counts(value: &serde_json::Value, path: &[&str]) -> Result<u64, String> {
    let mut v = value;
    for key in path {
        v = v
            .get(key)
            .ok_or_else(|| format!("no {} in the JSON", path.join(".")))?;
    }
    let map = v
        .as_object()
        .ok_or_else(|| format!("{} is not an object", path.join(".")))?;
    let mut sum = 0u64;
    for (key, count) in map {
        sum += count
            .as_u64()
            .ok_or_else(|| format!("{}.{key} is not a count", path.join(".")))?;
    }
    Ok(sum)
}

/// `panic` entries of an inventory's `errors_by_kind` / `skipped_by_reason`.
fn json_panics(inventory: &serde_json::Value) -> u64 {
    ["errors_by_kind", "skipped_by_reason"]
        .iter()
        .filter_map(|map| inventory.get(map)?.get("panic")?.as_u64())
        .sum()
}

/// What the `records` table holds: rows, rows by outcome, and the `detail` of rows whose
/// reason is `panic`.
struct RecordsTable {
    rows: u64,
    by_outcome: BTreeMap<String, u64>,
    panics: Vec<String>,
}

fn part_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("part-") && n.ends_with(".parquet"))
        })
        .collect();
    parts.sort();
    Ok(parts)
}

fn string_column<'a>(
    batch: &'a arrow_array::RecordBatch,
    name: &str,
) -> Option<&'a arrow_array::StringArray> {
    batch
        .column_by_name(name)?
        .as_any()
        .downcast_ref::<arrow_array::StringArray>()
}

fn read_records(out: &Path) -> Result<RecordsTable, String> {
    use arrow_array::Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let mut table = RecordsTable {
        rows: 0,
        by_outcome: BTreeMap::new(),
        panics: Vec::new(),
    };
    for part in part_files(&out.join("records"))? {
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", part.display());
        let file = std::fs::File::open(&part).map_err(|e| fail(&e))?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|e| fail(&e))?;
        for batch in reader {
            let batch = batch.map_err(|e| fail(&e))?;
            table.rows += batch.num_rows() as u64;
            let outcome =
                string_column(&batch, "outcome").ok_or_else(|| fail(&"no utf8 column outcome"))?;
            let reason =
                string_column(&batch, "reason").ok_or_else(|| fail(&"no utf8 column reason"))?;
            let detail = string_column(&batch, "detail");
            for row in 0..batch.num_rows() {
                let o = if outcome.is_null(row) {
                    "∅"
                } else {
                    outcome.value(row)
                };
                *table.by_outcome.entry(o.to_string()).or_default() += 1;
                if !reason.is_null(row) && reason.value(row) == "panic" {
                    let d = detail
                        .filter(|d| !d.is_null(row))
                        .map(|d| d.value(row).chars().take(300).collect::<String>())
                        .unwrap_or_default();
                    table.panics.push(d);
                }
            }
        }
    }
    Ok(table)
}

fn table_rows(out: &Path, table: &str) -> Result<u64, String> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let mut rows = 0;
    for part in part_files(&out.join(table))? {
        let file = std::fs::File::open(&part).map_err(|e| format!("{}: {e}", part.display()))?;
        let reader =
            SerializedFileReader::new(file).map_err(|e| format!("{}: {e}", part.display()))?;
        rows += reader.metadata().file_metadata().num_rows().max(0) as u64;
    }
    Ok(rows)
}

/// `run.json` against the tables of `out`: problems as (kind, detail), panic signatures.
fn check_run_output(out: &Path, success: bool) -> (Vec<(Kind, String)>, Vec<String>) {
    let mut problems = Vec::new();
    let mut signatures = Vec::new();
    let text = match std::fs::read_to_string(out.join("run.json")) {
        Ok(text) => text,
        Err(e) => {
            problems.push((Kind::NoRunJson, format!("OUT/run.json: {e}")));
            return (problems, signatures);
        }
    };
    let json: serde_json::Value = match serde_json::from_str(&text) {
        Ok(json) => json,
        Err(e) => {
            problems.push((Kind::Reconcile, format!("run.json does not parse: {e}")));
            return (problems, signatures);
        }
    };
    let panics = json_panics(&json["records"]).max(json_panics(&json["inventory"]));
    if panics > 0 {
        problems.push((
            Kind::Panic,
            format!("run.json counts {panics} records of reason panic"),
        ));
    }
    let expected = json_u64(&json, &["records", "records"])
        .and_then(|r| Ok(r + json_u64(&json, &["records", "read_errors"])?));
    let expected = match expected {
        Ok(n) => n,
        Err(e) => {
            problems.push((Kind::Reconcile, format!("run.json: {e}")));
            return (problems, signatures);
        }
    };
    match json_counts(&json, &["records", "by_outcome"]) {
        Ok(sum) if sum == expected => {}
        Ok(sum) => problems.push((
            Kind::Reconcile,
            format!(
                "run.json: records.by_outcome sums to {sum}, records + read_errors = {expected}"
            ),
        )),
        Err(e) => problems.push((Kind::Reconcile, format!("run.json: {e}"))),
    }
    match read_records(out) {
        Ok(table) => {
            if !table.panics.is_empty() {
                problems.push((
                    Kind::Panic,
                    format!("{} records rows of reason panic", table.panics.len()),
                ));
                for detail in &table.panics {
                    let signature = format!("records row reason=panic: {detail}");
                    if !signatures.contains(&signature) {
                        signatures.push(signature);
                    }
                }
            }
            if table.rows != expected {
                problems.push((
                    Kind::Reconcile,
                    format!(
                        "records table has {} rows, run.json records + read_errors = {expected}",
                        table.rows
                    ),
                ));
            }
            if success {
                let page_rows = table.by_outcome.get("page").copied().unwrap_or(0);
                match table_rows(out, "pages") {
                    Ok(pages) if pages == page_rows => {}
                    Ok(pages) => problems.push((
                        Kind::Reconcile,
                        format!("{page_rows} records rows of outcome page, {pages} rows in pages"),
                    )),
                    Err(e) => problems.push((Kind::Reconcile, format!("pages table: {e}"))),
                }
            }
        }
        Err(e) => problems.push((Kind::Reconcile, format!("records table: {e}"))),
    }
    (problems, signatures)
}

/// `inspect --json` output: outcomes sum to records + read errors, no panics.
fn check_inspect_output(stdout: &[u8]) -> Vec<(Kind, String)> {
    let json: serde_json::Value = match serde_json::from_slice(stdout) {
        Ok(json) => json,
        Err(e) => {
            return vec![(
                Kind::Reconcile,
                format!("inspect --json output does not parse: {e}"),
            )]
        }
    };
    let inv = &json["inventory"];
    let mut problems = Vec::new();
    let panics = json_panics(inv);
    if panics > 0 {
        problems.push((
            Kind::Panic,
            format!("inspect counts {panics} records of reason panic"),
        ));
    }
    let expected =
        json_u64(inv, &["records"]).and_then(|r| Ok(r + json_u64(inv, &["read_errors"])?));
    match (expected, json_counts(inv, &["by_outcome"])) {
        (Ok(expected), Ok(sum)) if expected == sum => {}
        (Ok(expected), Ok(sum)) => problems.push((
            Kind::Reconcile,
            format!("inspect: by_outcome sums to {sum}, records + read_errors = {expected}"),
        )),
        (Err(e), _) | (_, Err(e)) => problems.push((Kind::Reconcile, format!("inspect: {e}"))),
    }
    problems
}

fn run_command(config: &Config, cmd: Cmd, input: &Input, dir: &Path, file: &Path) -> Checked {
    let out = dir.join(format!("out-{}", cmd.label().replace(' ', "")));
    let file_arg = file.display().to_string();
    let out_arg = out.display().to_string();
    let args: Vec<String> = match cmd {
        Cmd::Inspect => vec!["inspect".into(), "--json".into(), file_arg],
        Cmd::Run {
            workers,
            spill,
            method,
        } => {
            let mut args = vec![
                "run".into(),
                file_arg,
                "--out".into(),
                out_arg,
                "-w".into(),
                workers.to_string(),
                "--method".into(),
                method.into(),
            ];
            if spill {
                args.extend(["--memory-budget".into(), "1".into()]);
            }
            args
        }
        Cmd::Apply => vec!["apply".into(), file_arg, "--out".into(), out_arg],
        Cmd::Clean => vec!["clean".into(), file_arg],
    };
    // As the kept case's report shows it: INPUT is the kept file, OUT any folder.
    let command_line = format!(
        "stencil {}",
        args.iter()
            .map(|a| {
                if *a == file.display().to_string() {
                    "INPUT"
                } else if *a == out.display().to_string() {
                    "OUT"
                } else {
                    a
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    );
    let limit = time_limit(input);
    let ran = match run_child(&config.bin, &args, dir, limit) {
        Ok(ran) => ran,
        Err(e) => panic!("the soak could not run {command_line}: {e}"),
    };
    let mut problems = Vec::new();
    let mut signatures = panic_signatures(&ran.stderr);
    let stencil_message = ran.stderr.lines().any(|l| l.starts_with("stencil: "));
    match ran.status {
        Status::TimedOut(_) => problems.push((Kind::Hang, ran.status.describe())),
        Status::Signaled(signal) => {
            problems.push((Kind::Panic, format!("crashed: killed by signal {signal}")));
            if signatures.is_empty() {
                signatures.push(format!("signal {signal} in {}", cmd.label()));
            }
        }
        Status::Exited(code) => {
            if !signatures.is_empty() {
                problems.push((Kind::Panic, format!("panicked (exit code {code})")));
            }
            match cmd {
                Cmd::Run { .. } | Cmd::Apply => {
                    let (found, found_signatures) = check_run_output(&out, code == 0);
                    problems.extend(found);
                    for s in found_signatures {
                        if !signatures.contains(&s) {
                            signatures.push(s);
                        }
                    }
                }
                Cmd::Inspect if code == 0 => problems.extend(check_inspect_output(&ran.stdout)),
                Cmd::Inspect => problems.push((
                    Kind::BadExit,
                    format!(
                        "inspect exited with code {code} (only an unopenable file may do that)"
                    ),
                )),
                Cmd::Clean => {}
            }
            if code != 0 && !stencil_message {
                problems.push((
                    Kind::BadExit,
                    format!("exit code {code} without a `stencil:` message"),
                ));
            }
        }
    }
    problems.sort_by_key(|(kind, _)| *kind);
    Checked {
        command_line,
        status: ran.status.describe(),
        seconds: ran.seconds,
        max_rss_kb: ran.max_rss_kb,
        problems,
        signatures,
        stderr_tail: tail(&ran.stderr, 40),
    }
}

// ---------------------------------------------------------------------------------------------
// One input through its commands; failing inputs kept

fn soak_input(config: &Config, input: &Input, stats: &mut Stats) {
    stats.inputs += 1;
    let dir = config.work.join(&input.name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("soak work folder");
    let file = dir.join(format!("input.{}", input.ext));
    std::fs::write(&file, &input.bytes).expect("writing the soak input");
    let mut failed: Vec<Checked> = Vec::new();
    for &cmd in &input.commands {
        let checked = run_command(config, cmd, input, &dir, &file);
        stats.commands += 1;
        if checked.max_rss_kb > stats.peak_rss_kb {
            stats.peak_rss_kb = checked.max_rss_kb;
            stats.peak_rss_what = format!("{} on {}.{}", cmd.label(), input.name, input.ext);
        }
        if let Some((kind, detail)) = checked.problems.first() {
            *stats.by_kind.entry(kind.name()).or_default() += 1;
            println!(
                "FAIL {}: {} on {}.{} [{}]: {detail}{}",
                kind.name(),
                cmd.label(),
                input.name,
                input.ext,
                input.mutations.join(", "),
                checked
                    .signatures
                    .first()
                    .map(|s| format!("\n     {s}"))
                    .unwrap_or_default()
            );
            let mut keys = Vec::new();
            for (key, example) in signatures_of(&checked) {
                if keys.contains(&key) {
                    continue;
                }
                let entry = stats.signatures.entry(key.clone()).or_default();
                entry.0 += 1;
                if entry.2.is_empty() {
                    entry.2 = example;
                }
                keys.push(key);
            }
            failed.push(checked);
        }
    }
    if !failed.is_empty() {
        stats.failing_inputs += 1;
        keep(config, input, &failed, stats);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The failure signatures of a command, each with a message: where it panicked (the source
/// location, which the message may not repeat: it often quotes the input), or its failure
/// kind and command.
fn signatures_of(checked: &Checked) -> Vec<(String, String)> {
    if checked.signatures.is_empty() {
        let kind = checked.problems.first().map_or("?", |(k, _)| k.name());
        let cmd = checked.command_line.split(' ').nth(1).unwrap_or("?");
        let detail = checked.problems.first().map_or("", |(_, d)| d.as_str());
        return vec![(format!("{kind} in {cmd}"), detail.to_string())];
    }
    checked
        .signatures
        .iter()
        .map(|signature| (signature_key(signature), signature.clone()))
        .collect()
}

/// `src/a.rs:1:2` of `src/a.rs:1:2: message`; `records row … (at src/a.rs:9)` for a
/// contained panic; the whole signature otherwise.
fn signature_key(signature: &str) -> String {
    if let Some(detail) = signature.strip_prefix("records row reason=panic: ") {
        if let Some(at) = detail.rfind("(at ") {
            return format!("records row reason=panic {}", &detail[at..]);
        }
        return signature.to_string();
    }
    match signature.find(": ") {
        Some(end) if signature[..end].contains(".rs:") => signature[..end].to_string(),
        _ => signature.to_string(),
    }
}

fn keep(config: &Config, input: &Input, failed: &[Checked], stats: &mut Stats) {
    // Kept if one of its signatures has been kept fewer than KEEP_PER_SIGNATURE times.
    let mut signatures: Vec<String> = failed
        .iter()
        .flat_map(signatures_of)
        .map(|(key, _)| key)
        .collect();
    signatures.sort();
    signatures.dedup();
    let mut keep_it = false;
    for signature in signatures {
        let entry = stats.signatures.entry(signature).or_default();
        if entry.1 < KEEP_PER_SIGNATURE {
            entry.1 += 1;
            keep_it = true;
        }
    }
    if !keep_it {
        stats.not_kept += 1;
        return;
    }
    if let Err(e) = std::fs::create_dir_all(&config.keep) {
        println!("could not create {}: {e}", config.keep.display());
        return;
    }
    let path = config.keep.join(format!("{}.{}", input.name, input.ext));
    let mut report = format!(
        "input: {} (INPUT below)\norigin: {}\nmutations: {}\nsize: {} bytes\n",
        path.display(),
        input.origin,
        if input.mutations.is_empty() {
            "none".to_string()
        } else {
            input.mutations.join(", ")
        },
        input.bytes.len()
    );
    for (i, checked) in failed.iter().enumerate() {
        report.push_str(&format!(
            "\n--- failure {}: {}\ncommand: {}\nstatus: {}\nseconds: {:.2}, peak RSS: {:.0} MB\n",
            i + 1,
            checked.problems.first().map_or("?", |(k, _)| k.name()),
            checked.command_line,
            checked.status,
            checked.seconds,
            checked.max_rss_kb as f64 / 1024.0
        ));
        for (kind, detail) in &checked.problems {
            report.push_str(&format!("problem ({}): {detail}\n", kind.name()));
        }
        for signature in &checked.signatures {
            report.push_str(&format!("panic: {signature}\n"));
        }
        report.push_str(&format!(
            "stderr (last 40 lines):\n{}\n",
            checked.stderr_tail
        ));
    }
    let written = std::fs::write(&path, &input.bytes).and_then(|()| {
        let text = config
            .keep
            .join(format!("{}.{}.txt", input.name, input.ext));
        std::fs::write(text, report)
    });
    match written {
        Ok(()) => stats.kept.push(path),
        Err(e) => println!("could not keep {}: {e}", path.display()),
    }
}

// ---------------------------------------------------------------------------------------------
// Seeds (real pages and WARCs from ../shared/data, read only) and the regression cases

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
}

fn html_seeds(data: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for folder in [
        "dragnet/HTML",
        "l3s-gn1/original",
        "cleanportaleval/input",
        "swde-books/testset",
        "wcxb-dev/html",
    ] {
        walk(&data.join(folder), &mut all);
    }
    all.retain(|p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        [".html", ".htm", ".html.gz", ".htm.gz"]
            .iter()
            .any(|ext| name.ends_with(ext))
    });
    all.sort();
    all
}

/// A seed page's bytes (gunzipped), empty if unreadable.
fn read_page(path: &Path) -> Vec<u8> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    if path.extension().is_some_and(|e| e == "gz") {
        let mut html = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(&bytes[..])
            .take(32 << 20)
            .read_to_end(&mut html);
        html
    } else {
        bytes
    }
}

struct Seeds {
    pages: Vec<PathBuf>,
    warcs: Vec<(String, Vec<u8>)>,
}

impl Seeds {
    fn page(&self, rng: &mut Rng) -> Vec<u8> {
        if self.pages.is_empty() {
            return b"<html><body><p>no seed pages</p></body></html>".to_vec();
        }
        read_page(&self.pages[rng.below(self.pages.len())])
    }
}

/// `run` with one worker and with two in turn (every other two-worker run spilling every
/// page), each site-level method in turn every fourth iteration, and `inspect` and `apply` in
/// turn, by iteration (so a replayed iteration runs the same commands).
fn warc_commands(index: u64) -> Vec<Cmd> {
    let workers = if index.is_multiple_of(2) { 1 } else { 2 };
    let spill = index % 4 == 3;
    let method = ["site-level", "rtdm", "etdm", "tree-regex"][(index / 4 % 4) as usize];
    let other = if (index / 2).is_multiple_of(2) {
        Cmd::Inspect
    } else {
        Cmd::Apply
    };
    vec![
        Cmd::Run {
            workers,
            spill,
            method,
        },
        other,
    ]
}

/// Iteration `index`'s inputs: one mutated WARC (plus, for a WARC built from mutated pages,
/// the first mutated page for `clean`), or one page for `clean`.
fn iteration_inputs(seeds: &Seeds, base: u64, index: u64) -> Vec<Input> {
    let seed = mutate::derive_seed(base, index);
    let mut rng = Rng::new(seed);
    let name = format!("i{index:06}-{seed:016x}");
    let origin = format!(
        "iteration {index} of STENCIL_SOAK_SEED={base:#x} (iteration seed {seed:#018x}); \
         replay alone with STENCIL_SOAK_SEED={base:#x} STENCIL_SOAK_ITERATION={index}"
    );
    let roll = rng.below(100);
    let has_warcs = !seeds.warcs.is_empty();
    let mutated: Mutated = if roll < 45 || (!has_warcs && roll < 85) {
        let n = rng.range(1, 12);
        let pages: Vec<Vec<u8>> = (0..n).map(|_| seeds.page(&mut rng)).collect();
        let donor = seeds.page(&mut rng);
        mutate::page_warc(&mut rng, pages, &donor)
    } else if roll < 70 {
        let (warc_name, bytes) = &seeds.warcs[rng.below(seeds.warcs.len())];
        let mut m = mutate::real_warc(&mut rng, bytes);
        m.mutations.insert(0, format!("seed:{warc_name}"));
        m
    } else if roll < 85 {
        let (plain, from) = if rng.chance(2, 3) {
            let (warc_name, bytes) = &seeds.warcs[rng.below(seeds.warcs.len())];
            (
                mutate::plain_records(&mut rng, bytes),
                format!("seed:{warc_name}"),
            )
        } else {
            let drafts: Vec<PageDraft> = (0..rng.range(1, 4))
                .map(|i| PageDraft {
                    url: format!("http://records.soak.example/{i}"),
                    content_type: "text/html; charset=utf-8".into(),
                    html: seeds.page(&mut rng),
                })
                .collect();
            (mutate::build_warc(&drafts, false), "seed:pages".to_string())
        };
        let mut m = mutate::record_warc(&mut rng, plain);
        m.mutations.insert(0, from);
        m
    } else {
        let html = seeds.page(&mut rng);
        let donor = seeds.page(&mut rng);
        mutate::html_page(&mut rng, html, &donor)
    };
    let mut inputs = Vec::new();
    let is_page = mutated.ext.starts_with("html");
    if let Some(html) = &mutated.page_html {
        inputs.push(Input {
            name: format!("{name}-page"),
            ext: "html".into(),
            bytes: html.clone(),
            origin: format!("{origin}; the first mutated page of {name}"),
            mutations: mutated.mutations.clone(),
            commands: vec![Cmd::Clean],
        });
    }
    inputs.insert(
        0,
        Input {
            name,
            ext: mutated.ext.to_string(),
            bytes: mutated.bytes,
            origin,
            mutations: mutated.mutations,
            commands: if is_page {
                vec![Cmd::Clean]
            } else {
                warc_commands(index)
            },
        },
    );
    inputs
}

/// Every file of `jobs/tests/soak-cases/`: pages through `clean` and, wrapped in a WARC,
/// through every WARC command; WARCs through every WARC command.
fn regression_inputs() -> Vec<Input> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/soak-cases");
    let mut files = Vec::new();
    walk(&dir, &mut files);
    files.sort();
    let all_warc = vec![
        Cmd::Inspect,
        Cmd::Run {
            workers: 1,
            spill: false,
            method: "site-level",
        },
        Cmd::Run {
            workers: 2,
            spill: true,
            method: "rtdm",
        },
        Cmd::Run {
            workers: 2,
            spill: false,
            method: "etdm",
        },
        Cmd::Run {
            workers: 1,
            spill: false,
            method: "tree-regex",
        },
        Cmd::Apply,
    ];
    let mut inputs = Vec::new();
    for path in files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if name.starts_with('.') || name.ends_with(".md") {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            println!("NOTICE: cannot read {}", path.display());
            continue;
        };
        let (stem, ext) = match name.find('.') {
            Some(dot) => (&name[..dot], &name[dot + 1..]),
            None => (name.as_str(), ""),
        };
        let origin = format!("regression case {}", path.display());
        match ext {
            "html" | "htm" | "html.gz" | "htm.gz" => {
                let html = read_page(&path);
                let warc = mutate::build_warc(
                    &[PageDraft {
                        url: format!("http://soak-case.example/{stem}"),
                        content_type: "text/html".into(),
                        html,
                    }],
                    true,
                );
                inputs.push(Input {
                    name: format!("case-{stem}"),
                    ext: ext.to_string(),
                    bytes,
                    origin: origin.clone(),
                    mutations: Vec::new(),
                    commands: vec![Cmd::Clean],
                });
                inputs.push(Input {
                    name: format!("case-{stem}"),
                    ext: "warc.gz".into(),
                    bytes: warc,
                    origin: format!("{origin}, as the response of a one-page .warc.gz"),
                    mutations: Vec::new(),
                    commands: all_warc.clone(),
                });
            }
            "warc" | "warc.gz" => inputs.push(Input {
                name: format!("case-{stem}"),
                ext: ext.to_string(),
                bytes,
                origin,
                mutations: Vec::new(),
                commands: all_warc.clone(),
            }),
            _ => println!(
                "NOTICE: {} is neither a page nor a WARC; not replayed",
                path.display()
            ),
        }
    }
    inputs
}

// ---------------------------------------------------------------------------------------------

#[test]
fn mutation_soak() {
    let config = config();
    let start = Instant::now();
    let mut stats = Stats::default();
    let _ = std::fs::remove_dir_all(&config.work);
    std::fs::create_dir_all(&config.work).expect("soak work folder");
    println!(
        "soak: binary {}, seed {:#x}, {} s, failures kept in {}",
        config.bin.display(),
        config.seed,
        config.seconds,
        config.keep.display()
    );

    let cases = regression_inputs();
    println!(
        "soak: replaying {} regression inputs from jobs/tests/soak-cases",
        cases.len()
    );
    for input in &cases {
        soak_input(&config, input, &mut stats);
    }

    let mut iterations = 0u64;
    let mut harness_bugs: Vec<String> = Vec::new();
    if let Some(data) = stencil_tests::shared_dir("data") {
        let pages = html_seeds(&data);
        let mut warc_paths = Vec::new();
        walk(&data.join("warc-samples"), &mut warc_paths);
        warc_paths.retain(|p| p.to_string_lossy().ends_with(".warc.gz"));
        warc_paths.sort();
        let warcs: Vec<(String, Vec<u8>)> = warc_paths
            .iter()
            .filter_map(|p| {
                let name = p.file_name()?.to_string_lossy().into_owned();
                Some((name, std::fs::read(p).ok()?))
            })
            .collect();
        println!(
            "soak: {} seed pages, {} seed WARCs",
            pages.len(),
            warcs.len()
        );
        let seeds = Seeds { pages, warcs };
        let loop_start = Instant::now();
        let mut index = config.only_iteration.unwrap_or(0);
        loop {
            // A bug in the mutation engine is the soak's own: it is reported and the soak goes
            // on with the next iteration, so one bad mutation does not end a long run.
            let made = std::panic::catch_unwind(|| iteration_inputs(&seeds, config.seed, index));
            let inputs = made.unwrap_or_else(|payload| {
                let message = stencil_operators::contain::payload_text(payload.as_ref());
                println!("HARNESS BUG: iteration {index}: making its input panicked: {message}");
                harness_bugs.push(format!("iteration {index}: {message}"));
                Vec::new()
            });
            if let Some(first) = inputs.first() {
                for m in &first.mutations {
                    if !m.starts_with("seed:") && !m.starts_with("window:") {
                        let kind = m.split('@').next().unwrap_or(m);
                        *stats.mutations.entry(kind.to_string()).or_default() += 1;
                    }
                }
            }
            for input in inputs {
                soak_input(&config, &input, &mut stats);
            }
            iterations += 1;
            index += 1;
            if iterations.is_multiple_of(25) {
                println!(
                    "soak: {iterations} iterations, {} commands, {} failures, {:.0} s",
                    stats.commands,
                    stats.failures(),
                    loop_start.elapsed().as_secs_f64()
                );
            }
            if config.only_iteration.is_some()
                || loop_start.elapsed().as_secs_f64() >= config.seconds
            {
                break;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&config.work);

    println!(
        "soak summary: inputs tried {} ({} iterations, {} regression inputs), commands run {}, \
         {}, peak RSS {:.0} MB ({}), {:.0} s",
        stats.inputs,
        iterations,
        cases.len(),
        stats.commands,
        stats.by_kind_text(),
        stats.peak_rss_kb as f64 / 1024.0,
        if stats.peak_rss_what.is_empty() {
            "-"
        } else {
            &stats.peak_rss_what
        },
        start.elapsed().as_secs_f64()
    );
    if !stats.mutations.is_empty() {
        let applied: Vec<String> = stats
            .mutations
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect();
        println!("mutations applied: {}", applied.join(", "));
    }
    for (signature, (commands, kept, example)) in &stats.signatures {
        println!("  {commands:>5} failing commands, {kept} inputs kept: {signature}");
        if example != signature {
            println!("        e.g. {example}");
        }
    }
    assert!(
        harness_bugs.is_empty(),
        "the mutation engine panicked (a bug in the soak, not in stencil):\n{}",
        harness_bugs.join("\n")
    );
    if stats.failures() > 0 {
        let kept: Vec<String> = stats.kept.iter().map(|p| p.display().to_string()).collect();
        panic!(
            "the soak found {} failing commands on {} inputs ({}); kept (each with a .txt \
             beside it){}:\n{}",
            stats.failures(),
            stats.failing_inputs,
            stats.by_kind_text(),
            if stats.not_kept > 0 {
                format!(
                    ", {} more not kept (over {KEEP_PER_SIGNATURE} per signature)",
                    stats.not_kept
                )
            } else {
                String::new()
            },
            kept.join("\n")
        );
    }
}
