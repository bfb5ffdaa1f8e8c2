#!/usr/bin/env python3
"""How the content model reads a script written without spaces between words.

We have no gold pages in Chinese or Japanese, so this makes a stand-in from pages we do have:
every visible text of an evaluation-crawl page, and its gold, is rewritten as a script without
spaces. Each ASCII word becomes Han ideographs (one per 2.5 letters, at least one; the same
word always gives the same ideographs, so what repeats on a host still repeats), the spaces
between two ideographs go, and ASCII sentence punctuation before a space becomes full-width
(`.` -> `。`, `,` -> `，`, ...). The page keeps its markup, class names and links: what
changes is only what its text looks like, as between an English and a Chinese news site
built alike. docs/evaluation.md has the figures.

    unspaced.py make EVAL_WARC MANIFEST OUT_DIR [--groups article,l3s-gn1,...]
        writes OUT_DIR/{html,en,gold}/, OUT_DIR/unspaced.tsv and OUT_DIR/english.tsv
        (url, html_path, gold_path, group): the rewritten pages and the same pages as they
        were; build WARCs from the two manifests with ../shared/tools/mkwarc.py.
    unspaced.py score OUT_DIR MANIFEST PAGES
        macro and micro token F1 per group; PAGES is a `pages` table folder of `stencil run`
        (column cleaned_text) or a run_peer.py Parquet file (column text). Tokens: each
        ideograph is one, other runs of word characters as textf1.py reads them.

Needs lxml, warcio and pyarrow (the peers' environment of ../shared/tools/setup-peers.sh).
Dragnet pages are sampled (about a third, seeded) to keep the run short.
"""
import collections
import glob
import hashlib
import os
import random
import re
import statistics
import sys

WORD = re.compile(r"[A-Za-z]+")
FULL_WIDTH = {".": "。", ",": "，", "!": "！", "?": "？", ":": "：", ";": "；"}
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
HAN = "\u3400-\u9fff\uf900-\ufaff"
TOKEN = re.compile(rf"[{HAN}]|[^\W{HAN}]+")


def ideographs(word):
    h = int(hashlib.md5(word.lower().encode()).hexdigest(), 16)
    n = max(1, round(len(word) / 2.5))
    return "".join(chr(0x4E00 + ((h >> (13 * i)) % 20000)) for i in range(n))


def unspace(text):
    text = CONTROL.sub("", text)
    text = WORD.sub(lambda m: ideographs(m.group(0)), text)
    text = re.sub(rf"(?<=[{HAN}])[ \t]+(?=[{HAN}])", "", text)
    text = re.sub(r"[.,!?:;](?=\s|$)", lambda m: FULL_WIDTH[m.group(0)], text)
    return re.sub(r"(?<=[。，！？：；])[ \t]+", "", text)


def make(warc, manifest, out, groups):
    from lxml import etree
    from lxml import html as lh
    from warcio.archiveiterator import ArchiveIterator

    gold_of = {}
    for line in open(manifest).read().split("\n")[1:]:
        if line:
            url, gold, source, page_type = line.split("\t")
            gold_of[url] = (gold, page_type if source == "wcxb-dev" else source)
    for sub in ("html", "en", "gold"):
        os.makedirs(f"{out}/{sub}", exist_ok=True)
    sample = random.Random(7)
    rows = []
    for record in ArchiveIterator(open(warc, "rb")):
        if record.rec_type != "response":
            continue
        url = record.rec_headers.get_header("WARC-Target-URI")
        if url not in gold_of or gold_of[url][1] not in groups:
            continue
        gold, group = gold_of[url]
        if group == "dragnet" and sample.random() > 0.35:
            continue
        body = record.content_stream().read()
        try:
            doc = lh.fromstring(body)
        except (etree.ParserError, ValueError):
            continue
        for el in doc.iter():
            visible = isinstance(el.tag, str) and el.tag not in ("script", "style")
            if visible and el.text:
                el.text = unspace(el.text)
            if isinstance(el.tag, str) and el.tail:
                el.tail = unspace(el.tail)
        for meta in doc.iter("meta"):
            if meta.get("charset") is not None:
                meta.set("charset", "utf-8")
            if (meta.get("http-equiv") or "").lower() == "content-type":
                meta.set("content", "text/html; charset=utf-8")
        stem = os.path.basename(gold)[:-4]
        html = etree.tostring(doc, method="html", encoding="utf-8", doctype="<!DOCTYPE html>")
        open(f"{out}/html/{stem}.html", "wb").write(html)
        open(f"{out}/en/{stem}.html", "wb").write(body)
        open(f"{out}/gold/{stem}.txt", "w").write(unspace(open(gold, errors="replace").read()))
        rows.append((url, stem, os.path.dirname(gold), group))
    for name, html_dir in (("unspaced", "html"), ("english", "en")):
        with open(f"{out}/{name}.tsv", "w") as f:
            f.write("url\thtml_path\tgold_path\tgroup\n")
            for url, stem, gold_dir, group in rows:
                gold = f"gold/{stem}.txt" if name == "unspaced" else f"{gold_dir}/{stem}.txt"
                f.write(f"{url}\t{html_dir}/{stem}.html\t{gold}\t{group}\n")
    print(collections.Counter(row[3] for row in rows))


def tokens(text):
    return collections.Counter(TOKEN.findall(text.lower()))


def score(out, manifest, pages):
    import pyarrow.parquet as pq

    texts = {}
    files = [pages] if pages.endswith(".parquet") else sorted(glob.glob(f"{pages}/*.parquet"))
    for path in files:
        table = pq.read_table(path)
        column = "cleaned_text" if "cleaned_text" in table.column_names else "text"
        for url, text in zip(table.column("url").to_pylist(), table.column(column).to_pylist()):
            texts.setdefault(url, text or "")
    f1s = collections.defaultdict(list)
    counts = collections.defaultdict(collections.Counter)
    for line in open(os.path.join(out, manifest)).read().strip().split("\n")[1:]:
        url, _, gold_path, group = line.split("\t")
        gold_path = gold_path if gold_path.startswith("/") else os.path.join(out, gold_path)
        pred, gold = tokens(texts.get(url, "")), tokens(open(gold_path, errors="replace").read())
        tp = sum((pred & gold).values())
        np_, ng = sum(pred.values()), sum(gold.values())
        if not ng:
            f1 = 1.0 if not np_ else 0.0
        else:
            f1 = 2 * tp / (np_ + ng) if tp else 0.0
        for key in (group, "all"):
            f1s[key].append(f1)
            counts[key].update(tp=tp, pred=np_, gold=ng)
    for key in sorted(f1s):
        c = counts[key]
        micro = 2 * c["tp"] / max(1, c["pred"] + c["gold"])
        print(f"{key:15s} {len(f1s[key]):5d}  macro {statistics.mean(f1s[key]):.3f}  micro {micro:.3f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 4 and args[0] == "make":
        groups = "article,documentation,service,dragnet,l3s-gn1"
        if "--groups" in args:
            groups = args[args.index("--groups") + 1]
        make(args[1], args[2], args[3], set(groups.split(",")))
    elif len(args) == 4 and args[0] == "score":
        score(args[1], args[2], args[3])
    else:
        sys.exit(__doc__)
