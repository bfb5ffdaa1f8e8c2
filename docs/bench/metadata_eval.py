#!/usr/bin/env python3
"""Page metadata: Stencil's `pages` columns against WCXB's gold and against trafilatura.

Builds a WARC of WCXB's dev pages (shared/tools/mkwarc.py), runs `stencil run` on it, reads
the `pages` table, runs trafilatura's metadata extraction (`trafilatura.extract_metadata`,
which dates pages with htmldate) on the same HTML, and scores both:

  title   exact match, white space collapsed, case kept (and, as a second figure, with
          typographic quotes and dashes folded to ASCII: the gold writes "We've" for "We’ve")
  author  every word of the gold byline (letters and digits, case folded) in the output
  date    the same calendar day as the gold publish_date (a year-month gold: the same month)

on the pages whose gold has the field. Fields WCXB has no gold for (canonical URL, site name,
description, modified date, type, language) are compared between the two tools: how often
each gives one, and how often the two agree where both do. `lang` is also checked against the
pages that declare a language (`<html lang>` read with lxml), and `lang_detected` against it.

Usage (from the repo root; needs trafilatura, lxml and pyarrow, e.g. the venv that
shared/tools/setup-peers.sh makes):
    python3 docs/bench/metadata_eval.py [--stencil target/debug/stencil] [--data ../shared/data]
        [--work /tmp/metadata-eval] [--limit N] [--examples K]
"""

import argparse
import collections
import gzip
import json
import os
import re
import subprocess
import sys
import time
import unicodedata


def norm(text):
    return re.sub(r"\s+", " ", text or "").strip()


FOLD = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\xa0": " "})


def folded(text):
    return norm(unicodedata.normalize("NFC", text or "").translate(FOLD))


def words(text):
    return re.findall(r"\w+", (text or "").casefold())


def byline_ok(gold, got):
    have = set(words(got))
    need = words(gold)
    return bool(need) and all(w in have for w in need)


def day(value):
    """The calendar day of an ISO-like date ("2024-03-01T..." -> "2024-03-01")."""
    m = re.match(r"(\d{4})-(\d{2})(?:-(\d{2}))?", (value or "").strip())
    return m.groups() if m else None


def date_ok(gold, got):
    g, o = day(gold), day(got)
    if not g or not o:
        return False
    return g[:2] == o[:2] and (g[2] is None or g[2] == o[2])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser()
    ap.add_argument("--stencil", default=os.path.join(repo, "target", "debug", "stencil"))
    ap.add_argument("--data", default=os.path.join(repo, "..", "shared", "data"))
    ap.add_argument("--tools", default=None, help="shared/tools (default: beside --data)")
    ap.add_argument("--work", default="/tmp/metadata-eval")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--examples", type=int, default=0, help="print K disagreements per field")
    args = ap.parse_args()

    import lxml.html
    import pyarrow.parquet as pq
    import trafilatura
    from trafilatura.metadata import extract_metadata

    wcxb = os.path.join(args.data, "wcxb-dev")
    tools = args.tools or os.path.join(os.path.dirname(os.path.abspath(args.data)), "tools")
    os.makedirs(args.work, exist_ok=True)
    rows = []
    with open(os.path.join(wcxb, "manifest.tsv")) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            rows.append(dict(zip(header, line.rstrip("\n").split("\t"))))
    # A WARC names each page by its URL: pages without one, or repeating one, are left out.
    seen = set()
    rows = [r for r in rows if r.get("url") and not (r["url"] in seen or seen.add(r["url"]))]
    if args.limit:
        rows = rows[: args.limit]
    manifest = os.path.join(args.work, "manifest.tsv")
    with open(manifest, "w") as f:
        f.write("url\thtml_path\n")
        for r in rows:
            f.write(f"{r['url']}\t{os.path.join(wcxb, 'html', r['file_id'] + '.html.gz')}\n")
    warc = os.path.join(args.work, "wcxb-dev.warc.gz")
    subprocess.run([sys.executable, os.path.join(tools, "mkwarc.py"), manifest, warc], check=True,
                   stdout=subprocess.DEVNULL)
    out = os.path.join(args.work, "out")
    subprocess.run(["rm", "-rf", out], check=True)
    started = time.time()
    subprocess.run([args.stencil, "run", "--out", out, warc], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stencil_seconds = time.time() - started
    table = pq.read_table(os.path.join(out, "pages")).to_pylist()
    ours = {r["url"]: r for r in table}

    fields = ["title", "author", "date", "canonical", "site_name", "description", "modified",
              "type", "lang"]
    score = collections.defaultdict(lambda: collections.Counter())
    examples = collections.defaultdict(list)
    traf_seconds = 0.0
    for r in rows:
        fid, url = r["file_id"], r["url"]
        html = gzip.open(os.path.join(wcxb, "html", fid + ".html.gz")).read().decode("utf-8", "replace")
        gold = json.load(open(os.path.join(wcxb, "ground-truth", fid + ".json")))["ground_truth"]
        s = ours.get(url)
        if s is None:
            score["missing"]["stencil"] += 1
            s = {}
        t0 = time.time()
        try:
            tm = extract_metadata(html, default_url=url)
        except Exception:  # a page trafilatura cannot read counts as giving nothing
            tm = None
        traf_seconds += time.time() - t0
        t = {
            "title": getattr(tm, "title", None),
            "author": getattr(tm, "author", None),
            "date": getattr(tm, "date", None),
            "canonical": getattr(tm, "url", None),
            "site_name": getattr(tm, "sitename", None),
            "description": getattr(tm, "description", None),
            "type": getattr(tm, "pagetype", None),
        }
        st = {
            "title": s.get("page_title"),
            "author": s.get("author"),
            "date": s.get("published"),
            "canonical": s.get("canonical_url"),
            "site_name": s.get("site_name"),
            "description": s.get("description"),
            "modified": s.get("modified"),
            "type": s.get("page_type"),
            "lang": s.get("lang"),
        }
        # Gold-scored fields.
        checks = [
            ("title", gold.get("title"), lambda g, o: norm(g) == norm(o)),
            ("title_folded", gold.get("title"), lambda g, o: folded(g) == folded(o)),
            ("author", gold.get("author"), byline_ok),
            ("date", gold.get("publish_date"), date_ok),
        ]
        for name, g, ok in checks:
            if not g:
                continue
            key = "title" if name == "title_folded" else name
            score[name]["gold"] += 1
            so, to = bool(st[key]) and ok(g, st[key]), bool(t[key]) and ok(g, t[key])
            score[name]["stencil"] += so
            score[name]["trafilatura"] += to
            if so != to and len(examples[name]) < args.examples:
                examples[name].append((fid, g, st[key], t[key]))
        for name in ("author", "date"):
            key = {"date": "publish_date"}.get(name, name)
            if not gold.get(key):
                score[name]["no_gold"] += 1
                score[name]["stencil_gives_none_gold"] += bool(st[name])
                score[name]["trafilatura_gives_none_gold"] += bool(t[name])
        # Agreement where there is no gold.
        for name in ("canonical", "site_name", "description", "type"):
            a, b = st[name], t[name]
            score["agree_" + name]["stencil_gives"] += bool(a)
            score["agree_" + name]["trafilatura_gives"] += bool(b)
            if a and b:
                score["agree_" + name]["both"] += 1
                same = (a.rstrip("/") == b.rstrip("/")) if name == "canonical" \
                    else norm(a).casefold() == norm(b).casefold()
                score["agree_" + name]["agree"] += same
                if not same and len(examples[name]) < args.examples:
                    examples[name].append((fid, None, a, b))
        score["agree_modified"]["stencil_gives"] += bool(st["modified"])
        # Language: what the page declares (lxml), what Stencil reports and detects.
        try:
            declared = lxml.html.fromstring(html.encode()).get("lang")
        except Exception:
            declared = None
        if declared and declared.strip():
            score["lang"]["declared"] += 1
            score["lang"]["stencil"] += bool(st["lang"])
        detected = s.get("lang_detected")
        score["lang_detected"]["pages"] += 1
        score["lang_detected"]["gives"] += bool(detected)
        if detected and st["lang"]:
            score["lang_detected"]["both"] += 1
            score["lang_detected"]["agree"] += detected == st["lang"].split("-")[0]
            if detected != st["lang"].split("-")[0] and len(examples["lang_detected"]) < args.examples:
                examples["lang_detected"].append((fid, None, st["lang"], detected))

    pct = lambda a, b: f"{100.0 * a / b:.1f}%" if b else "n/a"
    print(f"pages {len(rows)}; stencil rows {len(ours)}; trafilatura {trafilatura.__version__}")
    print(f"time: stencil run {stencil_seconds:.1f} s (whole job), trafilatura metadata "
          f"{traf_seconds:.1f} s")
    for name in ("title", "title_folded", "author", "date"):
        c = score[name]
        print(f"{name:13s} gold {c['gold']:5d}  stencil {pct(c['stencil'], c['gold']):>6s}  "
              f"trafilatura {pct(c['trafilatura'], c['gold']):>6s}")
    for name in ("author", "date"):
        c = score[name]
        print(f"{name:13s} pages without gold {c['no_gold']}: stencil gives one on "
              f"{c['stencil_gives_none_gold']}, trafilatura on {c['trafilatura_gives_none_gold']}")
    for name in ("canonical", "site_name", "description", "type"):
        c = score["agree_" + name]
        print(f"{name:13s} stencil gives {pct(c['stencil_gives'], len(rows)):>6s}  trafilatura "
              f"{pct(c['trafilatura_gives'], len(rows)):>6s}  agree where both "
              f"{pct(c['agree'], c['both']):>6s} of {c['both']}")
    print(f"modified      stencil gives {pct(score['agree_modified']['stencil_gives'], len(rows))}"
          f" (trafilatura gives no modified date)")
    c = score["lang"]
    print(f"lang          pages declaring <html lang> {c['declared']}: stencil gives lang on "
          f"{pct(c['stencil'], c['declared'])} (trafilatura gives none)")
    c = score["lang_detected"]
    print(f"lang_detected gives {pct(c['gives'], c['pages'])}; same language as declared "
          f"{pct(c['agree'], c['both'])} of {c['both']}")
    for name, items in examples.items():
        print(f"\n== {name}: stencil vs trafilatura (file, gold, stencil, trafilatura)")
        for item in items:
            print("  ", item)


if __name__ == "__main__":
    main()
