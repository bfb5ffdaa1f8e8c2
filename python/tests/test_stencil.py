"""The Python package against the command line. Run by jobs/tests/python.rs (which gives
STENCIL_BIN, the `stencil` binary of the same checkout) with a Python where the package is
installed (`pip install ./python`); the dev pages are read from ../shared/data."""
import concurrent.futures
import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest

import stencil

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SHARED = Path(os.environ.get("STENCIL_SHARED", REPO.parent / "shared")) / "data"
BIN = os.environ.get("STENCIL_BIN")
REQUIRE = os.environ.get("STENCIL_REQUIRE_SHARED") == "1"


def need(path: Path) -> Path:
    if not path.exists():
        if REQUIRE:
            pytest.fail(f"{path} is missing (STENCIL_REQUIRE_SHARED=1)")
        pytest.skip(f"{path} is missing")
    return path


def cli(*args: str) -> str:
    if not BIN:
        pytest.skip("STENCIL_BIN is not set (jobs/tests/python.rs sets it)")
    done = subprocess.run([BIN, *args], capture_output=True, check=True)
    return done.stdout.decode("utf-8")


def manifest(path: Path):
    rows = (line.rstrip("\n").split("\t") for line in open(path, encoding="utf-8"))
    header = next(rows)
    return [dict(zip(header, row)) for row in rows]


def dev_pages():
    """(path, url) of every page with human gold in ../shared/data: wcxb-dev, dragnet (on the
    hosts its hosts_guess.tsv gives, as docs/bench/corpus.py names them), L3S-GN1's originals
    and CleanPortalEval."""
    wcxb, dragnet = need(SHARED / "wcxb-dev"), need(SHARED / "dragnet")
    l3s, portals = need(SHARED / "l3s-gn1"), need(SHARED / "cleanportaleval")
    pages = [(wcxb / "html" / f"{r['file_id']}.html.gz", r["url"])
             for r in manifest(wcxb / "manifest.tsv")]
    pages += [(dragnet / "HTML" / f"{r['file']}.html.gz",
               f"http://{r['host_guess'] or 'unknown.dragnet'}/dragnet/{r['file']}")
              for r in manifest(dragnet / "hosts_guess.tsv")]
    pages += [(l3s / "original" / r["file"], r["url"]) for r in manifest(l3s / "manifest.tsv")]
    pages += [(portals / "input" / f"{r['file']}.html", r["url"])
              for r in manifest(portals / "manifest.tsv")]
    pages = [(path, url) for path, url in pages if path.exists()]
    assert len(pages) > 3000, len(pages)
    return pages


def test_hello_world():
    assert stencil.clean("<html><body><p>Hello world.</p></body></html>") == "Hello world."


def test_every_dev_page_is_cleaned_as_the_command_line_cleans_it():
    pages = dev_pages()
    cleaner = stencil.Cleaner()

    def compare(page):
        path, url = page
        expected = cli("clean", str(path), "--url", url)
        # The command ends what it prints with a newline; the function gives the text.
        got = cleaner.clean(path.read_bytes(), url)
        return path.name, (got + "\n" if got and not got.endswith("\n") else got) == expected

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        differ = [name for name, same in pool.map(compare, pages) if not same]
    assert not differ, f"{len(differ)} of {len(pages)} pages differ, first {differ[:5]}"
    # And the many-pages call gives the same as one page at a time.
    some = pages[:64]
    many = cleaner.clean_many([(p.read_bytes(), u) for p, u in some], threads=2)
    assert many == [cleaner.clean(p.read_bytes(), u) for p, u in some]


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_markdown_and_json_as_the_command_line_prints_them(fmt):
    for path, url in dev_pages()[:40]:
        expected = cli("clean", str(path), "--url", url, "--format", fmt)
        got = stencil.clean(path.read_bytes(), url, fmt)
        if fmt == "json":
            assert got == json.loads(expected), path
        else:
            assert got + ("\n" if got and not got.endswith("\n") else "") == expected, path


def test_text_and_bytes_in_and_errors_out():
    html = "<html><body><p>Grüße aus Köln, eine Seite mit genug Wörtern für einen Block.</p></body></html>"
    assert stencil.clean(html) == stencil.clean(html.encode("utf-8"))
    assert stencil.clean(gzip.compress(html.encode("utf-8"))) == stencil.clean(html)
    with pytest.raises(stencil.StencilError, match="binary"):
        stencil.clean(bytes(range(256)) * 16)
    with pytest.raises(ValueError):
        stencil.clean(html, format="xml")
    with pytest.raises(ValueError):
        stencil.clean(12)
    with pytest.raises(stencil.StencilError, match="--bogus"):
        stencil.Cleaner(options=["--bogus"])
    cleaner = stencil.Cleaner()
    assert cleaner.clean_many([html, bytes(range(256)) * 16], errors="none") == [stencil.clean(html), None]
    with pytest.raises(stencil.StencilError, match="page 1"):
        cleaner.clean_many([html, bytes(range(256)) * 16])


def test_jobs_and_site_templates(tmp_path):
    crawl = tmp_path / "crawl.warc.gz"
    cli("synth", "--hosts", "12", "--pages", "12", "--out", str(crawl))
    ran = stencil.run(crawl, tmp_path / "run")
    assert ran.out == tmp_path / "run"
    assert ran.summary["rows"]["pages"] == 144
    assert (tmp_path / "run" / "pages").is_dir()
    applied = stencil.apply([crawl], tmp_path / "apply", site_templates=tmp_path / "run")
    assert applied.summary["rows"]["pages"] == 144
    with pytest.raises(stencil.StencilError, match="no-such"):
        stencil.run(tmp_path / "no-such.warc.gz", tmp_path / "bad")
    # A Cleaner with the run's site templates cleans each page as `apply --site-templates`
    # did, for both views of the text.
    parquet = pytest.importorskip("pyarrow.parquet")
    for view in ("content", "template"):
        flags = ["--cleaned-text", view]
        applied = stencil.apply([crawl], tmp_path / view, site_templates=tmp_path / "run",
                                options=flags)
        table = parquet.read_table(applied.out / "pages", columns=["url", "cleaned_text"])
        expected = dict(zip(table.column("url").to_pylist(),
                            table.column("cleaned_text").to_pylist()))
        cleaner = stencil.Cleaner(site_templates=tmp_path / "run", options=flags)
        assert cleaner.site_hosts == 12
        pages = crawl_pages(crawl)
        assert len(pages) == 144
        differ = [url for url, body in pages if cleaner.clean(body, url) != expected[url]]
        assert not differ, f"{view}: {len(differ)} pages differ from apply's, first {differ[:3]}"
        if view == "template":
            # The evidence matters there: without it some pages keep other blocks.
            plain = stencil.Cleaner(options=flags)
            assert any(plain.clean(body, url) != expected[url] for url, body in pages)

def test_a_datatrove_pipeline(tmp_path):
    try:
        from datatrove.executor import LocalPipelineExecutor
        from datatrove.pipeline.readers import WarcReader
        from datatrove.pipeline.writers import JsonlWriter
    except ImportError:
        if os.environ.get("STENCIL_REQUIRE_DATATROVE") == "1":
            pytest.fail("datatrove is not installed (STENCIL_REQUIRE_DATATROVE=1)")
        pytest.skip("datatrove is not installed")
    from stencil.datatrove import StencilExtractor

    warcs = need(SHARED / "warc-samples")
    out = tmp_path / "out"
    LocalPipelineExecutor(
        pipeline=[WarcReader(str(warcs), glob_pattern="pywb-iana.warc.gz"), StencilExtractor(),
                  JsonlWriter(str(out))],
        tasks=1, logging_dir=str(tmp_path / "logs")).run()
    docs = [json.loads(line) for f in out.glob("*.jsonl.gz") for line in gzip.open(f, "rt")]
    assert len(docs) >= 10
    home = [d for d in docs if d["metadata"].get("url") == "http://www.iana.org/"]
    assert home and "Internet Assigned Numbers Authority" in home[0]["text"]
    assert all(d["text"] for d in docs)


def crawl_pages(warc: Path):
    """(URL, HTML) of every response record of a synthetic crawl (uncompressed records, no
    Content-Encoding, as `stencil synth` writes them)."""
    data = gzip.decompress(warc.read_bytes())
    pages = []
    for record in data.split(b"WARC/1.")[1:]:
        head, _, rest = record.partition(b"\r\n\r\n")
        if b"WARC-Type: response" not in head:
            continue
        url = next(line.split(b": ", 1)[1].decode() for line in head.split(b"\r\n")
                   if line.startswith(b"WARC-Target-URI"))
        length = int(next(line.split(b": ", 1)[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")))
        _, _, body = rest[:length].partition(b"\r\n\r\n")
        pages.append((url, body))
    return pages
