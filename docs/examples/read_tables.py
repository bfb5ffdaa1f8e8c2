#!/usr/bin/env python3
"""Reads a `stencil run` output folder from pandas and DuckDB, as docs/schemas.md shows, and
prints what both tools see as JSON: each table's columns with their types, its row count, and
the answers of the documented queries. `jobs/tests/interop.rs` runs it and checks every
column's type against the Arrow schemas (`schemas/src/lib.rs`).
Usage: python3 docs/examples/read_tables.py OUT   (needs pyarrow and pandas; duckdb optional)"""
import json
import sys

import pandas as pd

TABLES = ["pages", "hosts", "segments", "site_templates", "training", "records"]


def with_pandas(out):
    """Each table as a DataFrame with Arrow-backed types (exact, nulls kept)."""
    seen = {}
    for table in TABLES:
        df = pd.read_parquet(f"{out}/{table}", dtype_backend="pyarrow")
        seen[table] = {
            "rows": len(df),
            "columns": {name: str(dtype) for name, dtype in df.dtypes.items()},
        }
    pages = pd.read_parquet(f"{out}/pages", dtype_backend="pyarrow")
    # The hosts with the most template text: the pages' templated share, by host.
    by_host = (
        pages.groupby("host")["site_template_text_fraction"].mean().sort_values(ascending=False)
    )
    seen["query"] = {"hosts": len(by_host), "pages": int(pages["url"].count())}
    return seen


def with_duckdb(out):
    """The same tables from DuckDB, which reads the part files with one glob per table."""
    import duckdb

    con = duckdb.connect()
    seen = {}
    for table in TABLES:
        source = f"read_parquet('{out}/{table}/*.parquet')"
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM {source}")
        columns = {name: kind for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall()}
        rows = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        seen[table] = {"rows": rows, "columns": columns}
    # Template volume by host, and the sections called template, joined on host.
    hosts, pages = con.execute(
        """
        SELECT count(DISTINCT p.host), count(*)
        FROM pages p JOIN hosts h USING (host)
        """
    ).fetchone()
    seen["query"] = {"hosts": hosts, "pages": pages}
    return seen


def main():
    out = sys.argv[1]
    report = {"pandas": with_pandas(out)}
    try:
        report["duckdb"] = with_duckdb(out)
    except ImportError:
        report["duckdb"] = None
    print(json.dumps(report))


if __name__ == "__main__":
    main()
