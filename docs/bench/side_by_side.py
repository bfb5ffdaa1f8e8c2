#!/usr/bin/env python3
"""Score several extractors side by side on the evaluation crawl, per data set and page type.

    python3 docs/bench/side_by_side.py --manifest EVAL/manifest.tsv \\
        --system stencil=EVAL/out/pages --system trafilatura=/tmp/peers/trafilatura.parquet \\
        --system rs-trafilatura=/tmp/peers/rs-trafilatura/ [--markdown] [--per-page OUT.tsv]

The manifest is what `stencil_tests::end_to_end::build` writes (`jobs/tests/end_to_end.rs`
with `STENCIL_EVAL_DIR`): a header, then `url`, `gold_path`, `source` and `page_type` (WCXB's
page type, `-` elsewhere) per page with gold text. Relative gold paths are resolved against the
manifest's folder.

A system's PATH is one of:
  * a Parquet file, or a folder of Parquet part files (read recursively, all of them, as
    `stencil run`'s `pages/` table), with a `url` column and a `text` column (else
    `cleaned_text`): the prediction of the manifest row with that URL (first row wins when a URL
    repeats; a URL that does not match is also tried percent-encoded as mkwarc.py writes it);
  * a folder of `<gold stem>.txt` files (textf1.py --pred-dir, rspeers with a manifest,
    `stencil train-content --predictions`): the prediction of the row whose gold file has that
    stem.
A page a system has no prediction for scores as an empty prediction.

Metric: `../shared/tools/textf1.py`'s, imported from there when it can be found
(`--textf1`, `$STENCIL_SHARED/tools`, `../shared/tools` beside the repository), else the mirror
below (the same code): lower-cased `re.findall(r"\\w+")` tokens, per page bag-of-words
P = tp/|pred|, R = tp/|gold|, F1; an empty gold scores 1 when the prediction is empty too, else
0; an empty prediction on a non-empty gold scores 0.

Per group (each data set, `all`, and each WCXB page type as `wcxb-dev/<type>`):
  pages       gold pages in the group
  micro P/R/F1  from tp, |pred|, |gold| summed over the group's pages
  macro F1    mean page F1
  gold lost   share of the group's gold tokens missing from the predictions (= 1 - micro R)
  emptied     pages whose prediction has no token while their gold has some
  missing     (plain tables only) pages the system gave no prediction for (among `emptied`
              when their gold has tokens)

Output: one plain table per system; with --markdown, also one markdown table per metric
(--metrics, default macro and micro F1) with the systems as columns. --per-page writes url,
source, page_type, system, p, r, f1 per page and system.
"""
import argparse
import csv
import importlib.util
import os
import re
import sys
from collections import Counter, OrderedDict

csv.field_size_limit(1 << 30)

SOURCES = ["dragnet", "cleanportaleval", "l3s-gn1", "wcxb-dev"]
PAGE_TYPES = ["article", "forum", "product", "collection", "listing", "documentation", "service"]
TYPED_SOURCE = "wcxb-dev"


# ------------------------------------------------------------------------------------------
# textf1.py: imported, or mirrored (same code as textf1.py's tokenize, bag, read_text,
# page_scores, clean_url)

class _Mirror:
    _TOKEN = re.compile(r"\w+", re.UNICODE)
    _UNSAFE = re.compile(r"[\x00-\x20\x7f-\U0010ffff\"<>\\^`{|}]")

    @staticmethod
    def clean_url(url):
        url = url.strip()
        return _Mirror._UNSAFE.sub(
            lambda m: "".join("%%%02X" % b for b in m.group(0).encode("utf-8")), url)

    @staticmethod
    def tokenize(text, lower=True):
        if not text:
            return []
        return _Mirror._TOKEN.findall(text.lower() if lower else text)

    @staticmethod
    def bag(text, n=1, lower=True):
        assert n == 1
        return Counter(_Mirror.tokenize(text, lower))

    @staticmethod
    def read_text(path):
        with open(path, "rb") as f:
            b = f.read()
        try:
            return b.decode("utf-8-sig")
        except UnicodeDecodeError:
            return b.decode("cp1252", errors="replace")

    @staticmethod
    def page_scores(pred, gold):
        ng, np_ = sum(gold.values()), sum(pred.values())
        tp = sum((pred & gold).values()) if ng and np_ else 0
        if ng == 0:
            s = 1.0 if np_ == 0 else 0.0
            return ng, np_, tp, s, s, s
        if np_ == 0:
            return ng, np_, 0, 0.0, 0.0, 0.0
        p, r = tp / np_, tp / ng
        f = 2 * p * r / (p + r) if p + r else 0.0
        return ng, np_, tp, p, r, f


def load_textf1(explicit):
    """textf1.py as a module, or the mirror; and where it came from."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [explicit] if explicit else []
    if os.environ.get("STENCIL_SHARED"):
        candidates.append(os.path.join(os.environ["STENCIL_SHARED"], "tools", "textf1.py"))
    candidates.append(os.path.join(here, "..", "..", "..", "shared", "tools", "textf1.py"))
    for path in candidates:
        if path and os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("textf1", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module, os.path.normpath(path)
    if explicit:
        raise SystemExit("--textf1 %s: no such file" % explicit)
    return _Mirror, "built-in mirror of textf1.py"


# ------------------------------------------------------------------------------------------
# inputs

def read_manifest(path, t):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise SystemExit("%s: no rows" % path)
    for col in ("url", "gold_path"):
        if col not in rows[0]:
            raise SystemExit("%s: no %r column" % (path, col))
    base = os.path.dirname(os.path.abspath(path))
    pages = []
    for r in rows:
        gp = r["gold_path"]
        if not os.path.isabs(gp):
            gp = os.path.join(base, gp)
        page_type = (r.get("page_type") or "").strip()
        pages.append({
            "url": r["url"],
            "gold_path": gp,
            "stem": os.path.splitext(os.path.basename(gp))[0],
            "source": (r.get("source") or "").strip() or "?",
            "page_type": "" if page_type == "-" else page_type,
            "gold": t.bag(t.read_text(gp)),
        })
    return pages


def parquet_files(path):
    if os.path.isfile(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".parquet")]
    return found


def load_system(path, pages, t):
    """url -> text (Parquet) or stem -> text (.txt folder), as page index -> text."""
    if not os.path.exists(path):
        raise SystemExit("%s: no such file or folder" % path)
    files = parquet_files(path) if (os.path.isfile(path) or os.path.isdir(path)) else []
    if files:
        import pyarrow.parquet as papq
        preds, dup = {}, 0
        for file in files:
            names = papq.read_schema(file).names
            text_col = next((c for c in ("text", "cleaned_text") if c in names), None)
            if "url" not in names or text_col is None:
                raise SystemExit("%s: needs columns url and text (or cleaned_text); has %s"
                                 % (file, ", ".join(names)))
            table = papq.read_table(file, columns=["url", text_col])
            for u, x in zip(table.column("url").to_pylist(),
                            table.column(text_col).to_pylist()):
                if u in preds:
                    dup += 1
                    continue
                preds[u] = x or ""
        if dup:
            print("warning: %s: %d duplicate url(s); first row used" % (path, dup),
                  file=sys.stderr)
        out = []
        for p in pages:
            pred = preds.get(p["url"])
            if pred is None:
                pred = preds.get(t.clean_url(p["url"]))
            out.append(pred)
        return out
    if os.path.isdir(path):
        out = []
        for p in pages:
            f = os.path.join(path, p["stem"] + ".txt")
            out.append(t.read_text(f) if os.path.exists(f) else None)
        return out
    raise SystemExit("%s: neither Parquet nor a folder" % path)


# ------------------------------------------------------------------------------------------
# scoring

def groups_of(page):
    keys = [page["source"], "all"]
    if page["source"] == TYPED_SOURCE and page["page_type"]:
        keys.append("%s/%s" % (TYPED_SOURCE, page["page_type"]))
    return keys


def group_order(pages):
    present = OrderedDict()
    for p in pages:
        for g in groups_of(p):
            present[g] = True
    order = [s for s in SOURCES if s in present]
    order += sorted(g for g in present if g not in SOURCES and g != "all" and "/" not in g)
    order.append("all")
    typed = [g for g in present if g.startswith(TYPED_SOURCE + "/")]
    order += ["%s/%s" % (TYPED_SOURCE, pt) for pt in PAGE_TYPES
              if "%s/%s" % (TYPED_SOURCE, pt) in present]
    order += sorted(g for g in typed if g not in order)
    return order


def aggregate(rows):
    """rows: (n_gold, n_pred, tp, p, r, f1, missing)."""
    n = len(rows)
    sg = sum(r[0] for r in rows)
    sp = sum(r[1] for r in rows)
    st = sum(r[2] for r in rows)
    mp = st / sp if sp else 0.0
    mr = st / sg if sg else 0.0
    return {
        "pages": n,
        "micro_p": mp,
        "micro_r": mr,
        "micro_f1": 2 * mp * mr / (mp + mr) if mp + mr else 0.0,
        "macro_f1": sum(r[5] for r in rows) / n if n else 0.0,
        "gold_lost": (sg - st) / sg if sg else 0.0,
        "emptied": sum(1 for r in rows if r[0] and not r[1]),
        "missing": sum(1 for r in rows if r[6]),
    }


def score(pages, preds, t):
    rows = []
    for page, pred in zip(pages, preds):
        ng, np_, tp, p, r, f = t.page_scores(t.bag(pred or ""), page["gold"])
        rows.append((ng, np_, tp, p, r, f, pred is None))
    return rows


# ------------------------------------------------------------------------------------------
# output

METRICS = OrderedDict([
    ("macro_f1", ("macro F1", "%.3f")),
    ("micro_f1", ("micro F1", "%.3f")),
    ("micro_p", ("micro P", "%.3f")),
    ("micro_r", ("micro R", "%.3f")),
    ("gold_lost", ("gold lost", "%.3f")),
    ("emptied", ("pages emptied", "%d")),
])


def plain_table(name, stats, order):
    lines = ["== %s" % name,
             "%-24s %6s  %7s %7s %7s  %8s  %9s  %7s  %7s" % (
                 "", "pages", "micro P", "micro R", "micro F1", "macro F1", "gold lost",
                 "emptied", "missing")]
    for g in order:
        s = stats[g]
        label = g if "/" not in g else "  " + g
        lines.append("%-24s %6d  %7.4f %7.4f %8.4f  %8.4f  %9.4f  %7d  %7d" % (
            label[:24], s["pages"], s["micro_p"], s["micro_r"], s["micro_f1"],
            s["macro_f1"], s["gold_lost"], s["emptied"], s["missing"]))
    return "\n".join(lines)


def markdown_table(metric, systems, all_stats, order):
    title, fmt = METRICS[metric]
    lines = ["**%s**" % title, "",
             "| group | pages | " + " | ".join(systems) + " |",
             "|---|---:|" + "---:|" * len(systems)]
    for g in order:
        pages = all_stats[systems[0]][g]["pages"]
        cells = []
        best = None
        values = [all_stats[s][g][metric] for s in systems]
        if len(systems) > 1 and metric != "emptied":
            best = (min(values) if metric == "gold_lost" else max(values))
        elif len(systems) > 1:
            best = min(values)
        for v in values:
            cell = fmt % v
            if best is not None and v == best:
                cell = "**%s**" % cell
            cells.append(cell)
        label = g if "/" not in g else "&nbsp;&nbsp;" + g
        lines.append("| %s | %d | %s |" % (label, pages, " | ".join(cells)))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--system", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--markdown", action="store_true",
                    help="also print one markdown table per metric, systems as columns")
    ap.add_argument("--metrics", default="macro_f1,micro_f1",
                    help="markdown tables to print (of: %s)" % ", ".join(METRICS))
    ap.add_argument("--per-page", metavar="OUT.tsv")
    ap.add_argument("--textf1", help="path of textf1.py (default: found beside the repo)")
    ap.add_argument("--gold-text-only", action="store_true",
                    help="leave out pages whose gold is empty: textf1 scores such a page 1 for "
                         "an empty prediction and 0 for any other, so each is a coin flip worth "
                         "a whole page (21 of the evaluation crawl's 3,419; six of its 92 "
                         "products, three of them one AliExpress shell)")
    a = ap.parse_args(argv)

    metrics = [m.strip() for m in a.metrics.split(",") if m.strip()]
    for m in metrics:
        if m not in METRICS:
            ap.error("unknown metric %r" % m)
    systems = OrderedDict()
    for spec in a.system:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            ap.error("--system wants NAME=PATH, got %r" % spec)
        if name in systems:
            ap.error("system %r given twice" % name)
        systems[name] = path

    t, origin = load_textf1(a.textf1)
    print("metric: %s" % origin, file=sys.stderr)
    pages = read_manifest(a.manifest, t)
    if a.gold_text_only:
        kept = [p for p in pages if p["gold"]]
        print("gold text only: %d of %d pages" % (len(kept), len(pages)), file=sys.stderr)
        pages = kept
    order = group_order(pages)

    all_stats, per_page = OrderedDict(), []
    for name, path in systems.items():
        rows = score(pages, load_system(path, pages, t), t)
        by_group = {g: [] for g in order}
        for page, row in zip(pages, rows):
            for g in groups_of(page):
                by_group[g].append(row)
        all_stats[name] = {g: aggregate(by_group[g]) for g in order}
        per_page.append((name, rows))
        print(plain_table("%s  (%s)" % (name, path), all_stats[name], order))
        print()

    if a.markdown:
        names = list(systems)
        for m in metrics:
            print(markdown_table(m, names, all_stats, order))
            print()

    if a.per_page:
        with open(a.per_page, "w", encoding="utf-8", newline="") as f:
            f.write("url\tsource\tpage_type\tsystem\tp\tr\tf1\n")
            for name, rows in per_page:
                for page, r in zip(pages, rows):
                    f.write("%s\t%s\t%s\t%s\t%.4f\t%.4f\t%.4f\n" % (
                        page["url"], page["source"], page["page_type"] or "-", name,
                        r[3], r[4], r[5]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
