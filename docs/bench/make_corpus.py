#!/usr/bin/env python3
"""Build the benchmark WARC from the real pages in ../shared/data (nothing is copied into the
repository). Usage: python3 docs/bench/make_corpus.py OUT_DIR [--repeat K]

Pages: dragnet (1,381), l3s-gn1 originals (621), wcxb-dev (1,358) = 3,360 pages, 531.6 MB of
HTML, written Common-Crawl style (one gzip member per record, hosts interleaved) by
../shared/tools/mkwarc.py. Duplicate URLs get a `dup=N` query so every record is distinct.
"""
import csv, os, sys

from corpus import data, dragnet_rows, write_warc

out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/bench'
rows = dragnet_rows()
for r in csv.DictReader(open(f'{data}/l3s-gn1/manifest.tsv'), delimiter='\t'):
    rows.append((r['url'], f"{data}/l3s-gn1/original/{r['file']}"))
for r in csv.DictReader(open(f'{data}/wcxb-dev/manifest.tsv'), delimiter='\t'):
    rows.append((r['url'], f"{data}/wcxb-dev/html/{r['file_id']}.html.gz"))
write_warc(rows, out, 'real.warc.gz', sys.argv[2:])
