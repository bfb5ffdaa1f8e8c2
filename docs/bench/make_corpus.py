#!/usr/bin/env python3
"""Build the benchmark WARC from the real pages in ../shared/data (nothing is copied into the
repository). Usage: python3 docs/bench/make_corpus.py OUT_DIR [--repeat K | --sites K]

Pages: dragnet (1,381), l3s-gn1 originals (621), wcxb-dev (1,358) = 3,360 pages, 531.6 MB of
HTML, written Common-Crawl style (one gzip member per record, hosts interleaved) by
../shared/tools/mkwarc.py. Duplicate URLs get a `dup=N` query so every record is distinct.

A larger crawl, two ways:
- `--repeat K`: each page K times on its own host (mkwarc.py's `?r=k` URLs): the same sites,
  K times as deep, so more of them reach `--min-host-pages` and every page repeats K times.
- `--sites K`: K copies of the whole set, copy k > 0 on hosts renamed `s{k}.{host}`: K times
  as many sites of the same depth, as a larger crawl of the web is.
"""
import csv, sys
from urllib.parse import urlsplit, urlunsplit

from corpus import data, dragnet_rows, write_warc

args = sys.argv[1:]
out = args.pop(0) if args and not args[0].startswith('--') else '/tmp/bench'
sites = 1
if '--sites' in args:
    at = args.index('--sites')
    sites = int(args[at + 1])
    del args[at:at + 2]
rows = dragnet_rows()
for r in csv.DictReader(open(f'{data}/l3s-gn1/manifest.tsv'), delimiter='\t'):
    rows.append((r['url'], f"{data}/l3s-gn1/original/{r['file']}"))
for r in csv.DictReader(open(f'{data}/wcxb-dev/manifest.tsv'), delimiter='\t'):
    rows.append((r['url'], f"{data}/wcxb-dev/html/{r['file_id']}.html.gz"))


def on_host_copy(url, k):
    """`url` with its host renamed for copy `k` (copy 0 keeps it)."""
    if k == 0:
        return url
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f's{k}.{parts.netloc}'))


rows = [(on_host_copy(url, k), path) for k in range(sites) for url, path in rows]
write_warc(rows, out, 'real.warc.gz', args)
