#!/usr/bin/env python3
"""A crawl whose hosts have two templates each, from real pages (nothing is copied into the
repository): dragnet's hosts with at least 10 pages, sorted by name and mixed in pairs, the
pages of hosts 2k and 2k+1 under one host name `mixK.example` (each keeps its own path).
Usage: python3 docs/bench/make_mixed.py OUT_DIR"""
import collections, sys
from urllib.parse import urlsplit, urlunsplit

from corpus import dragnet_rows, write_warc

out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/mixed'
by_host = collections.defaultdict(list)
for url, path in dragnet_rows():
    by_host[urlsplit(url).netloc].append((url, path))
hosts = sorted(h for h, rows in by_host.items() if len(rows) >= 10 and h != 'unknown.dragnet')
rows = []
for k in range(len(hosts) // 2):
    for host in hosts[2 * k:2 * k + 2]:
        for url, path in by_host[host]:
            parts = urlsplit(url)
            mixed = parts._replace(netloc=f'mix{k}.example', path=f'/{host}{parts.path}')
            rows.append((urlunsplit(mixed), path))
write_warc(rows, out, 'mixed.warc.gz')
