//! Other tools read a run's tables without glue: `docs/examples/read_tables.py` (the pandas and
//! DuckDB session of docs/schemas.md) over a `stencil run` output, every column seen with the
//! type docs/schemas.md gives for it, and every table with the rows `run.json` counts. Where
//! Python with pyarrow and pandas is not installed the test says so and checks nothing; DuckDB
//! is checked where it is installed.

mod common;

use std::path::Path;
use std::process::Command;

use arrow_schema::{DataType, SchemaRef};
use common::{crawl, scratch};

/// The type pandas (with `dtype_backend="pyarrow"`) and DuckDB give an Arrow type, as the
/// table in docs/schemas.md lists them.
fn seen_as(data_type: &DataType) -> (&'static str, &'static str) {
    match data_type {
        DataType::Utf8 => ("string[pyarrow]", "VARCHAR"),
        DataType::Boolean => ("bool[pyarrow]", "BOOLEAN"),
        DataType::UInt8 => ("uint8[pyarrow]", "UTINYINT"),
        DataType::UInt16 => ("uint16[pyarrow]", "USMALLINT"),
        DataType::UInt32 => ("uint32[pyarrow]", "UINTEGER"),
        DataType::UInt64 => ("uint64[pyarrow]", "UBIGINT"),
        DataType::Float32 => ("float[pyarrow]", "FLOAT"),
        DataType::Float64 => ("double[pyarrow]", "DOUBLE"),
        other => panic!("docs/schemas.md gives no pandas or DuckDB type for {other}"),
    }
}

fn python_reads_parquet() -> bool {
    Command::new("python3")
        .args(["-c", "import pyarrow, pandas"])
        .output()
        .is_ok_and(|out| out.status.success())
}

#[test]
fn pandas_and_duckdb_read_every_table_with_the_documented_types() {
    if !python_reads_parquet() {
        eprintln!("notice: python3 with pyarrow and pandas is not installed; interop not checked");
        return;
    }
    let dir = scratch("interop");
    let files = crawl(&dir, 2);
    let out = dir.join("out");
    common::job("run", &files, &out, &["-w", "2"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/examples/read_tables.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let seen: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let schemas: [(&str, SchemaRef); 6] = [
        ("pages", stencil_schemas::pages()),
        ("hosts", stencil_schemas::hosts()),
        ("segments", stencil_schemas::segments()),
        ("site_templates", stencil_schemas::site_templates()),
        ("training", stencil_schemas::training()),
        ("records", stencil_schemas::records()),
    ];
    let tools: Vec<(&str, usize)> = match seen["duckdb"].is_null() {
        true => {
            eprintln!("notice: duckdb is not installed for python3; pandas checked alone");
            vec![("pandas", 0)]
        }
        false => vec![("pandas", 0), ("duckdb", 1)],
    };
    for (tool, which) in tools {
        for (table, schema) in &schemas {
            let columns = &seen[tool][table]["columns"];
            let names: Vec<&str> = columns
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(
                names.len(),
                schema.fields().len(),
                "{tool} {table}: {names:?}"
            );
            for field in schema.fields() {
                let types = seen_as(field.data_type());
                let expected = [types.0, types.1][which];
                assert_eq!(
                    columns[field.name()].as_str(),
                    Some(expected),
                    "{tool}: {table}.{}",
                    field.name()
                );
            }
            assert_eq!(
                seen[tool][table]["rows"], run["rows"][table],
                "{tool}: rows of {table}"
            );
        }
        // The documented query: every page's host has a `hosts` row.
        assert_eq!(seen[tool]["query"]["pages"], run["rows"]["pages"], "{tool}");
        assert_eq!(seen[tool]["query"]["hosts"], run["rows"]["hosts"], "{tool}");
    }
}
