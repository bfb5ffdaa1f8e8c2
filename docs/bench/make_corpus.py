#!/usr/bin/env python3
"""Build the benchmark WARC from the real pages in ../shared/data (nothing is copied into the
repository). Usage: python3 docs/bench/make_corpus.py OUT_DIR [--repeat K]

Pages: dragnet (1,381), l3s-gn1 originals (621), wcxb-dev (1,358) = 3,360 pages, 531.6 MB of
HTML, written Common-Crawl style (one gzip member per record, hosts interleaved) by
../shared/tools/mkwarc.py. Duplicate URLs get a `dup=N` query so every record is distinct.
"""
import csv, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
shared = os.path.abspath(os.path.join(here, '..', '..', '..', 'shared'))
out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/bench'
extra = sys.argv[2:]
data = os.path.join(shared, 'data')
rows = []
for r in csv.DictReader(open(f'{data}/dragnet/hosts_guess.tsv'), delimiter='\t'):
    host = r['host_guess'] or 'unknown.dragnet'
    rows.append((f"http://{host}/dragnet/{r['file']}", f"{data}/dragnet/HTML/{r['file']}.html.gz"))
for r in csv.DictReader(open(f'{data}/l3s-gn1/manifest.tsv'), delimiter='\t'):
    rows.append((r['url'], f"{data}/l3s-gn1/original/{r['file']}"))
for r in csv.DictReader(open(f'{data}/wcxb-dev/manifest.tsv'), delimiter='\t'):
    rows.append((r['url'], f"{data}/wcxb-dev/html/{r['file_id']}.html.gz"))
os.makedirs(out, exist_ok=True)
seen = set()
manifest = os.path.join(out, 'manifest.tsv')
with open(manifest, 'w') as f:
    f.write('url\thtml_path\n')
    for url, path in rows:
        if not os.path.exists(path):
            continue
        key, n = url, 1
        while key in seen:
            n += 1
            key = url + ('&' if '?' in url else '?') + f'dup={n}'
        seen.add(key)
        f.write(f'{key}\t{path}\n')
subprocess.run([sys.executable, os.path.join(shared, 'tools', 'mkwarc.py'), manifest,
                os.path.join(out, 'real.warc.gz'), '--interleave', '--seed', '1', *extra], check=True)
