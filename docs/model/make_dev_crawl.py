#!/usr/bin/env python3
"""Build the dev crawl the shipped model is trained on, from ../shared/data (nothing is copied
into the repository). Usage: python3 docs/model/make_dev_crawl.py OUT_DIR

Pages: every site-level set with several pages per host: dragnet (1,381 pages, hosts from
hosts_guess.tsv), cleanportaleval (71 pages, 4 sites) and swde-books (2,000 pages, 1 site).
l3s-gn1 and wcxb-dev are left out on purpose: they are the page-level sets the model is judged
on (sites it never saw). Data-set wrappers are stripped (CleanEval's <text id=...> lines,
SWDE's <base href> line) into OUT_DIR/pages, then ../shared/tools/mkwarc.py writes
OUT_DIR/dev.warc.gz, Common-Crawl style, hosts interleaved with seed 1.
"""
import csv, gzip, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench'))
from corpus import data, dragnet_rows, write_warc  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/dev'
pages = os.path.join(out, 'pages')
os.makedirs(pages, exist_ok=True)


def read(path):
    with open(path, 'rb') as f:
        raw = f.read()
    return gzip.decompress(raw) if path.endswith('.gz') else raw


rows = dragnet_rows()
for r in csv.DictReader(open(f'{data}/cleanportaleval/manifest.tsv'), delimiter='\t'):
    src = f"{data}/cleanportaleval/input/{r['file']}.html"
    raw = read(src if os.path.exists(src) else src + '.gz')
    lines = raw.split(b'\n')
    if lines and lines[0].startswith(b'<text'):
        lines = lines[1:]
    while lines and lines[-1].strip() in (b'', b'</text>'):
        lines = lines[:-1]
    path = os.path.join(pages, 'cpe_' + r['file'] + '.html')
    open(path, 'wb').write(b'\n'.join(lines))
    rows.append((r['url'], path))
swde = f'{data}/swde-books/testset/book/book-booksamillion-2000'
for name in sorted(os.listdir(swde)):
    raw = read(os.path.join(swde, name))
    first, _, rest = raw.partition(b'\n')
    start = first.find(b'href="')
    url = first[start + 6:first.find(b'"', start + 6)].decode() if start >= 0 else ''
    if not url:
        continue
    bom = b'\xef\xbb\xbf' if first.startswith(b'\xef\xbb\xbf') else b''
    path = os.path.join(pages, 'swde_' + name.replace('.gz', ''))
    open(path, 'wb').write(bom + rest)
    rows.append((url, path))

write_warc(rows, out, 'dev.warc.gz')
print(f'{len(rows)} pages -> {os.path.join(out, "dev.warc.gz")}')
