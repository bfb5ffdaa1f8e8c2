#!/usr/bin/env python3
"""Build the multi-page hosts' WARC the site-level methods are timed on (issue 19): dragnet's
hosts with 10 or more pages, cleanportaleval's 4 sites and swde-books' 2,000 pages of one site,
from ../shared/data (nothing is copied into the repository).
Usage: python3 docs/bench/make_multipage.py OUT_DIR"""
import collections, csv, glob, gzip, os, re, sys

from corpus import data, dragnet_rows, write_warc

out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/multipage'
rows = dragnet_rows()
hosts = collections.Counter(url.split('/')[2] for url, _ in rows)
rows = [(url, path) for url, path in rows if hosts[url.split('/')[2]] >= 10]
for r in csv.DictReader(open(f'{data}/cleanportaleval/manifest.tsv'), delimiter='\t'):
    rows.append((r['url'], f"{data}/cleanportaleval/input/{r['file']}.html"))
for path in sorted(glob.glob(f'{data}/swde-books/testset/book/*/*.htm.gz')):
    head = gzip.open(path).read(600).decode('utf-8', 'replace')
    base = re.search(r'<base href="([^"]+)"', head)
    if base:
        rows.append((base.group(1), path))
write_warc(rows, out, 'multipage.warc.gz')
