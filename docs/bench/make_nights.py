#!/usr/bin/env python3
"""Two nights of real pages for `stencil run --state` (nothing is copied into the repository).
Usage: python3 docs/bench/make_nights.py OUT_DIR [MIN_PAGES]

The dragnet hosts with at least MIN_PAGES (10) pages, each host's pages split in file order:
the first half is OUT_DIR/night1/night1.warc.gz, the second OUT_DIR/night2/night2.warc.gz.
Both nights together are one crawl, so a run over both is what the two nights with a state
must equal.
"""
import collections, sys

from corpus import dragnet_rows, write_warc

out = sys.argv[1]
min_pages = int(sys.argv[2]) if len(sys.argv) > 2 else 10
by_host = collections.defaultdict(list)
for url, path in dragnet_rows():
    by_host[url.split('/')[2]].append((url, path))
nights = ([], [])
for host, rows in sorted(by_host.items()):
    if len(rows) < min_pages or host == 'unknown.dragnet':
        continue
    rows.sort()
    half = len(rows) // 2
    nights[0].extend(rows[:half])
    nights[1].extend(rows[half:])
for n, rows in enumerate(nights, 1):
    write_warc(rows, f'{out}/night{n}', f'night{n}.warc.gz')
