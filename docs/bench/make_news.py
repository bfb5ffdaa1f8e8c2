#!/usr/bin/env python3
"""Build the news corpus of docs/benchmarks.md from ../shared/data (nothing is copied into the
repository): dragnet's 8 hosts with the most pages (128 pages of news sites and blogs), each
page written K times on its host (mkwarc.py's `?r=k` URLs), Common-Crawl style.

Usage: python3 docs/bench/make_news.py OUT_DIR [--repeat K]   (K = 4 by default: 512 pages,
44.7 MB of HTML; `--repeat 64` is 16 times that)

Every host has enough pages for site-level statistics and fewer than --host-sample, so every
page is sampled and gives `training` rows: the case where `run`'s labels cost most per byte.
"""
import collections, sys

from corpus import dragnet_rows, write_warc

args = sys.argv[1:]
out = args.pop(0) if args and not args[0].startswith('--') else '/tmp/news'
repeat = args[args.index('--repeat') + 1] if '--repeat' in args else '4'
rows = dragnet_rows()
hosts = collections.Counter(url.split('/')[2] for url, _ in rows)
top = {host for host, _ in hosts.most_common(8)}
write_warc([r for r in rows if r[0].split('/')[2] in top], out, 'news.warc.gz',
           ['--repeat', repeat])
