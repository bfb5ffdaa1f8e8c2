#!/usr/bin/env python3
"""Pages per second from Python, in one process on the same pages: Stencil's
`Cleaner.clean_many` (one thread) and `Cleaner.clean`, trafilatura's `extract` and
resiliparse's `extract_plain_text(main_content=True)`; and the binding's cost per call.

Usage (pin it to one core): taskset -c 0 python3 docs/bench/python_speed.py [--pages N]
Pages: wcxb-dev's (../shared/data), each given to every extractor as the same str.
"""
import gzip, os, sys, time

import stencil

here = os.path.dirname(os.path.abspath(__file__))
data = os.path.join(here, '..', '..', '..', 'shared', 'data', 'wcxb-dev')
limit = int(sys.argv[sys.argv.index('--pages') + 1]) if '--pages' in sys.argv else None
rows = [line.rstrip('\n').split('\t') for line in open(os.path.join(data, 'manifest.tsv'))][1:]
pages = []
for row in rows[:limit]:
    raw = gzip.open(os.path.join(data, 'html', row[0] + '.html.gz')).read()
    pages.append((raw.decode('utf-8', 'replace'), row[5]))
mb = sum(len(h.encode('utf-8')) for h, _ in pages) / 1e6


def timed(name, fn):
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    print(f'| {name} | {seconds:.2f} s | {len(pages) / seconds:,.1f} | {mb / seconds:.2f} |')
    return seconds


print(f'{len(pages)} pages, {mb:.1f} MB of HTML (UTF-8)\n')
print('| extractor, one core | time | pages/s | MB/s |\n|---|---:|---:|---:|')
cleaner = stencil.Cleaner()
cleaner.clean_many(pages[:50], threads=1)  # warm: the allocator's first pages, the caches
timed('Stencil `Cleaner.clean_many(pages, threads=1)`',
      lambda: cleaner.clean_many(pages, threads=1))
timed('Stencil `Cleaner.clean(html, url)`, a call per page',
      lambda: [cleaner.clean(h, u) for h, u in pages])
try:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree
    timed('resiliparse `extract_plain_text(main_content=True)`',
          lambda: [extract_plain_text(HTMLTree.parse(h), main_content=True) for h, _ in pages])
except ImportError:
    print('| resiliparse | not installed | | |')
try:
    import trafilatura
    timed('trafilatura `extract(html, url=url)`',
          lambda: [trafilatura.extract(h, url=u) for h, u in pages])
except ImportError:
    print('| trafilatura | not installed | | |')

tiny = '<html><body><p>x</p></body></html>'
n = 20000
start = time.perf_counter()
for _ in range(n):
    cleaner.clean(tiny)
per_call = (time.perf_counter() - start) / n
start = time.perf_counter()
cleaner.clean_many([tiny] * n, threads=1)
per_page = (time.perf_counter() - start) / n
print(f'\nA page of one word: {per_call * 1e6:.1f} µs a `clean` call, {per_page * 1e6:.1f} µs a page '
      'in `clean_many`: what the binding and the fixed work of a page cost.')
