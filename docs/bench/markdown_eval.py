#!/usr/bin/env python3
"""Headings and list items in Stencil's Markdown and in trafilatura's, on WCXB's dev pages.

Usage: python3 docs/bench/markdown_eval.py STENCIL_BINARY [--limit N]
(run with a Python that has trafilatura and lxml, e.g. the venv of ../shared/tools/setup-peers.sh)

A gold heading is an <h1>-<h6> of the page whose text (white space collapsed) is a whole line of
the gold main content, which keeps headings on lines of their own; a gold list item is a line of
the gold that starts with a list marker (`- `, `* `, `1. `), as WCXB's gold writes them. An extractor writes it when a line of its Markdown that starts
with `#` (or `-`, `*`, `+`, `1.`; after any `>` and indentation) has the same text, Markdown's
escapes and emphasis marks left out. Both extractors are measured the same way, on the same
pages; tests/tests/markdown.rs measures Stencil alone with the DOM's own reading of the texts.
"""
import gzip
import json
import re
import subprocess
import sys

import lxml.html
import trafilatura

args = sys.argv[1:]
stencil = args.pop(0)
limit = None
if '--limit' in args:
    limit = int(args[args.index('--limit') + 1])
data = '../shared/data/wcxb-dev'

def norm(text):
    return ' '.join(text.split())

def line_text(line):
    """A list line's text, after its marker, escapes and emphasis marks left out."""
    line = line.lstrip('> ').lstrip()
    m = re.match(r'^(\d+[.)]|[-*+])\s+', line)
    if m:
        line = line[m.end():]
    return norm(re.sub(r'[\\*`_]', '', line))

def heading_text(line):
    return norm(re.sub(r'[\\*`_]', '', line.lstrip('> ').lstrip().lstrip('#')))

def marked(markdown):
    headings, items = set(), set()
    for line in markdown.splitlines():
        bare = line.lstrip('> ').lstrip()
        if bare.startswith('#'):
            headings.add(heading_text(line))
        elif re.match(r'^(\d+[.)]|[-*+])\s', bare):
            items.add(line_text(line))
    return headings, items

def gold_structure(html, gold):
    lines = {norm(l) for l in gold.splitlines() if len(norm(l)) >= 3}
    tree = lxml.html.fromstring(html)
    headings = set()
    for el in tree.iter('h1', 'h2', 'h3', 'h4', 'h5', 'h6'):
        text = norm(el.text_content())
        if text in lines:
            headings.add(norm(re.sub(r'[\\*`_]', '', text)))
    items = {line_text(l) for l in gold.splitlines() if re.match(r'^\s*(\d+[.)]|[-*+])\s', l)}
    return headings, {i for i in items if len(i) >= 3}

totals = {'gold_h': 0, 'gold_li': 0}
for name in ('stencil', 'trafilatura'):
    totals[name + '_h'] = totals[name + '_li'] = 0
pages = 0
for row in list(open(f'{data}/manifest.tsv'))[1:]:
    fields = row.rstrip('\n').split('\t')
    page_id, url = fields[0], fields[-1]
    gold = json.load(open(f'{data}/ground-truth/{page_id}.json'))['ground_truth'].get('main_content')
    if not gold:
        continue
    html_bytes = gzip.open(f'{data}/html/{page_id}.html.gz').read()
    try:
        html = html_bytes.decode('utf-8')
        gold_h, gold_li = gold_structure(html, gold)
    except Exception:
        continue
    ours = subprocess.run([stencil, 'clean', '-', '--format', 'markdown', '--url', url],
                          input=html_bytes, capture_output=True).stdout.decode('utf-8', 'replace')
    theirs = trafilatura.extract(html, url=url, output_format='markdown', include_formatting=True,
                                 include_tables=True, include_links=False) or ''
    pages += 1
    totals['gold_h'] += len(gold_h)
    totals['gold_li'] += len(gold_li)
    for name, markdown in (('stencil', ours), ('trafilatura', theirs)):
        h, li = marked(markdown)
        totals[name + '_h'] += len(gold_h & h)
        totals[name + '_li'] += len(gold_li & li)
    if limit and pages >= limit:
        break

print(f'{pages} pages; gold headings {totals["gold_h"]}, gold list items {totals["gold_li"]}')
for name in ('stencil', 'trafilatura'):
    h = totals[name + '_h'] / max(1, totals['gold_h'])
    li = totals[name + '_li'] / max(1, totals['gold_li'])
    print(f'{name:12s} headings as headings {100 * h:.1f}%   list items as list items {100 * li:.1f}%')
