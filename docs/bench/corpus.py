"""Shared by the scripts that turn ../shared/data pages into a WARC (make_corpus.py for the
benchmarks, ../model/make_dev_crawl.py for the shipped model's training crawl)."""
import csv, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
shared = os.path.abspath(os.path.join(here, '..', '..', '..', 'shared'))
data = os.path.join(shared, 'data')


def dragnet_rows():
    """(url, html path) of every dragnet page, on the host its hosts_guess.tsv gives."""
    rows = []
    for r in csv.DictReader(open(f'{data}/dragnet/hosts_guess.tsv'), delimiter='\t'):
        host = r['host_guess'] or 'unknown.dragnet'
        rows.append((f"http://{host}/dragnet/{r['file']}",
                     f"{data}/dragnet/HTML/{r['file']}.html.gz"))
    return rows


def write_warc(rows, out, name, extra=()):
    """Writes OUT/manifest.tsv from (url, html path) rows (missing files left out, a repeated
    URL given a `dup=N` query so every record is distinct) and OUT/NAME with
    ../shared/tools/mkwarc.py, Common-Crawl style, hosts interleaved with seed 1."""
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
                    os.path.join(out, name), '--interleave', '--seed', '1', *extra], check=True)
