//! Helpers shared by the job tests: running the binary, a synthetic crawl split over files,
//! and reading a table back as sorted text rows.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use arrow_array::{
    Array, BooleanArray, Float32Array, Float64Array, StringArray, UInt16Array, UInt32Array,
    UInt64Array, UInt8Array,
};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// The tables `stencil run` writes.
pub const RUN_TABLES: [&str; 6] = [
    "pages",
    "hosts",
    "segments",
    "site_templates",
    "training",
    "records",
];

pub fn stencil() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stencil"))
}

/// A test's own folder under the temporary directory (`stencil-job-<pid>-<name>`), made empty.
/// It is removed when the test passes: the end-to-end test alone writes a large crawl and its
/// tables there, and a folder kept per test and run would fill `/tmp`. A failing test keeps it
/// and names it on stderr, for a look at what the job wrote.
pub fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("stencil-job-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch {
        path: dir,
        remove: true,
    }
}

/// A folder a test writes in: see [`scratch`].
pub struct Scratch {
    path: PathBuf,
    remove: bool,
}

impl Scratch {
    /// A folder the caller chose (`STENCIL_EVAL_DIR`, say): kept whatever happens.
    pub fn kept(path: PathBuf) -> Scratch {
        Scratch {
            path,
            remove: false,
        }
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} (the test failed)", self.path.display());
        } else if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Runs `stencil SUBCOMMAND FILES --out OUT EXTRA...` and returns its stderr, failing the
/// test if it fails.
pub fn job(subcommand: &str, files: &[PathBuf], out: &Path, extra: &[&str]) -> String {
    check(
        stencil()
            .arg(subcommand)
            .args(files)
            .arg("--out")
            .arg(out)
            .args(extra)
            .output()
            .unwrap(),
    )
}

pub fn check(out: std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    stderr
}

/// A synthetic crawl split into `files` WARC files (so workers have something to split),
/// plus a host too small to label.
pub fn crawl(dir: &Path, files: usize) -> Vec<PathBuf> {
    crawl_of(dir, files, stencil_operators::synth::crawl(6, 40, 1))
}

/// `pages` round-robin over `files` files, and tiny.example's 3 pages in the first.
pub fn crawl_of(
    dir: &Path,
    files: usize,
    pages: Vec<stencil_operators::synth::SynthPage>,
) -> Vec<PathBuf> {
    // The pages round-robin over several files, written with the library writer.
    let mut out = Vec::new();
    for f in 0..files {
        let mut writer = stencil_operators::reading::warc::write::WarcWriter::new(Vec::new(), true);
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

/// Night `night` of the generator's drifting crawl of 6 hosts of 30 pages (`stencil synth
/// --night`, some hosts redesigned from night to night), written as DIR/night-N.warc.gz.
pub fn synth_night(dir: &Path, night: u32) -> PathBuf {
    let crawl = dir.join(format!("night-{night}.warc.gz"));
    check(
        stencil()
            .args(["synth", "--hosts", "6", "--pages", "30", "--night"])
            .arg(night.to_string())
            .arg("--out")
            .arg(&crawl)
            .output()
            .unwrap(),
    );
    crawl
}

/// Cuts a WARC file in the middle of a gzip member: a damaged input whose records after the cut
/// are an unreadable stretch.
pub fn cut_in_a_member(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, &bytes[..bytes.len() / 2 + 7]).unwrap();
}

pub fn write_page(
    writer: &mut stencil_operators::reading::warc::write::WarcWriter<Vec<u8>>,
    url: &str,
    html: &str,
) {
    let block = stencil_operators::reading::warc::write::http_response(
        200,
        &[("Content-Type", "text/html; charset=utf-8")],
        html.as_bytes(),
    );
    writer
        .write(&stencil_operators::reading::warc::write::NewRecord {
            record_type: "response",
            target_uri: Some(url),
            date: "2026-11-21T00:00:00Z",
            content_type: "application/http; msgtype=response",
            block: &block,
        })
        .unwrap();
}

/// The record batches of every part file of `table` under `out` (none when the folder is
/// absent), failing on any other file there.
pub fn batches(out: &Path, table: &str) -> Vec<arrow_array::RecordBatch> {
    let Ok(entries) = std::fs::read_dir(out.join(table)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut batches = Vec::new();
    for path in paths {
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
        batches.extend(reader.map(|batch| batch.unwrap()));
    }
    batches
}

/// Every row of every part file of `table`, each rendered as text, sorted.
pub fn rows(out: &Path, table: &str) -> Vec<String> {
    let mut rows = Vec::new();
    for batch in batches(out, table) {
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = batch
                .columns()
                .iter()
                .map(|column| cell(column.as_ref(), row))
                .collect();
            rows.push(cells.join("\t"));
        }
    }
    rows.sort();
    rows
}

/// Every row of `table` under `dir`, as a map from column name to its text (floats as bits).
pub fn named_rows(dir: &Path, table: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut rows = Vec::new();
    for batch in batches(dir, table) {
        for row in 0..batch.num_rows() {
            let mut cells = std::collections::BTreeMap::new();
            for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
                let text = match column.data_type() {
                    arrow_schema::DataType::List(_) => {
                        let list = column
                            .as_any()
                            .downcast_ref::<arrow_array::ListArray>()
                            .unwrap();
                        let values = list.value(row);
                        let values = values
                            .as_any()
                            .downcast_ref::<arrow_array::UInt64Array>()
                            .unwrap();
                        format!("{:?}", values.values())
                    }
                    _ => cell(column.as_ref(), row),
                };
                cells.insert(field.name().clone(), text);
            }
            rows.push(cells);
        }
    }
    rows
}

pub fn cell(column: &dyn Array, row: usize) -> String {
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
        DataType::Float32 => format!(
            "{:x}",
            any.downcast_ref::<Float32Array>()
                .unwrap()
                .value(row)
                .to_bits()
        ),
        DataType::UInt16 => any
            .downcast_ref::<UInt16Array>()
            .unwrap()
            .value(row)
            .to_string(),
        DataType::UInt8 => any
            .downcast_ref::<UInt8Array>()
            .unwrap()
            .value(row)
            .to_string(),
        DataType::Boolean => any
            .downcast_ref::<BooleanArray>()
            .unwrap()
            .value(row)
            .to_string(),
        other => panic!("unexpected column type {other}"),
    }
}

/// Asserts two sets of tables are equal, reporting the first difference of each table rather
/// than every row.
pub fn assert_same_tables(
    got: &std::collections::BTreeMap<&'static str, Vec<String>>,
    want: &std::collections::BTreeMap<&'static str, Vec<String>>,
    what: &str,
) {
    for (table, want_rows) in want {
        let got_rows = &got[table];
        if let Some((g, w)) = got_rows.iter().zip(want_rows).find(|(g, w)| g != w) {
            panic!("{what}: table {table} differs first at\n got  {g}\n want {w}");
        }
        assert_eq!(got_rows.len(), want_rows.len(), "{what}: rows of {table}");
    }
    assert_eq!(got.len(), want.len(), "{what}: tables");
}

/// Runs `stencil SUBCOMMAND FILES --out OUT EXTRA...` as two processes of one worker each over
/// 127.0.0.1 (`port_salt` keeps concurrent tests off each other's ports). Process 1 starts
/// first and waits for process 0.
pub fn two_processes(
    subcommand: &str,
    files: &[PathBuf],
    out: &Path,
    extra: &[&str],
    port_salt: u32,
) {
    let base = 20000 + ((std::process::id() + port_salt) % 20000) as u16;
    let hostfile = out.with_extension("hosts.txt");
    std::fs::write(
        &hostfile,
        format!("127.0.0.1:{base}\n127.0.0.1:{}\n", base + 1),
    )
    .unwrap();
    let spawn = |process: &str| {
        stencil()
            .arg(subcommand)
            .args(files)
            .arg("--out")
            .arg(out)
            .args(extra)
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
}
