#!/usr/bin/env python3
"""Step 1: read the eval WARC, keep dragnet / cleanportaleval pages of hosts with
>= 5 pages (per source), split each page's visible text into blocks, write
OUT_DIR/blocks.jsonl (one JSON line per page).

Block rule: lxml.html; script/style/noscript/template/head/comments (and their
text) are dropped (their tail text is kept, it belongs to the parent).  Each
block-level element owns the text whose nearest block-level ancestor is itself
(its own .text, inline descendants' text, and tails of its children, concatenated
as rendered, with a space before the tail of a nested block element or <br>); text of
nested block-level descendants goes to those descendants.  Whitespace collapsed.
Blocks with >= 2 words (whitespace-separated) are kept.  Tag path = tag names
from <body> down to the block element (no indices).  Local signature = the block's
own tag + the tags of its inline descendants (those whose nearest block ancestor
is the block), in document order: a stand-in for a subtree/content hash that
includes tags.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paths import EVAL, OUT_DIR  # noqa: E402
import json
import re
import sys
from collections import Counter, defaultdict

import lxml.html
from lxml import etree
from warcio.archiveiterator import ArchiveIterator

from textf1 import clean_url  # noqa: E402

MANIFEST = os.path.join(EVAL, "manifest.tsv")
WARC = os.path.join(EVAL, "eval.warc.gz")
OUT = os.path.join(OUT_DIR, "blocks.jsonl")
SOURCES = ("dragnet", "cleanportaleval")
MIN_PAGES = 5

BLOCK = set("""address article aside blockquote body caption center dd details dialog dir div dl dt
fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 header hgroup hr html
iframe legend li main menu nav noframes ol p pre section summary table tbody td tfoot th thead
tr ul option select textarea""".split())
SKIP = {"script", "style", "noscript", "template", "head"}
WS = re.compile(r"\s+")
META_CS = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)


def decode(body, ctype):
    cands = []
    m = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9_\-:.]+)", ctype or "", re.I)
    if m:
        cands.append(m.group(1))
    m = META_CS.search(body[:8192])
    if m:
        cands.append(m.group(1).decode("ascii", "ignore"))
    cands += ["utf-8"]
    for cs in cands:
        try:
            return body.decode(cs)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("cp1252", errors="replace")


def host_of(url):
    return url.split("/")[2].lower().split(":")[0]


def blocks_of(html):
    try:
        doc = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        # e.g. str with an XML encoding declaration
        doc = lxml.html.document_fromstring(html.encode("utf-8"),
                                            parser=lxml.html.HTMLParser(encoding="utf-8"))
    body = doc.find("body")
    if body is None:
        body = doc
    out = []  # (path, [text pieces]) in document order of block start

    def tagname(e):
        t = e.tag
        if not isinstance(t, str):
            return None
        if "}" in t:
            t = t.split("}", 1)[1]
        return t.lower()

    # iterative DFS to avoid recursion limits
    root_entry = ("body", [], ["body"])
    out.append(root_entry)
    stack = [("enter", body, root_entry, "body")]
    # body itself is the root block
    first = True
    while stack:
        op, e, cur, path = stack.pop()
        if op == "tail":
            if e.tail:
                t = tagname(e)
                # text pieces are concatenated as rendered; a nested block or <br>
                # separates the text before it from its tail
                cur[1].append((" " + e.tail) if t in BLOCK or t == "br" else e.tail)
            continue
        t = tagname(e)
        if first:
            first = False
            blk, p = cur, path
        else:
            # tail belongs to the parent's block -> push it before children so it
            # is handled after them
            stack.append(("tail", e, cur, path))
            if t is None or t in SKIP:
                continue
            p = path + "/" + t
            if t in BLOCK:
                blk = (p, [], [t])
                out.append(blk)
            else:
                blk = cur
                blk[2].append(t)
        if e.text and t not in SKIP:
            blk[1].append(e.text)
        for c in reversed(list(e)):
            stack.append(("enter", c, blk, p))
    res = []
    for path, pieces, tags in out:
        txt = WS.sub(" ", "".join(pieces)).strip()
        if len(txt.split()) >= 2:
            res.append((path, txt, "/".join(tags)))
    return res


def main():
    rows = [l.split("\t") for l in open(MANIFEST, encoding="utf-8").read().splitlines()[1:]]
    cnt = Counter((r[2], host_of(r[0])) for r in rows if r[2] in SOURCES)
    keep = {}
    for r in rows:
        if r[2] in SOURCES and cnt[(r[2], host_of(r[0]))] >= MIN_PAGES:
            pid = re.search(r"(\d+)\.txt$", r[1]).group(1)
            keep[r[0]] = (pid, r[2], host_of(r[0]))
            keep.setdefault(clean_url(r[0]), (pid, r[2], host_of(r[0])))
    found = {}
    with open(WARC, "rb") as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type != "response":
                continue
            u = rec.rec_headers.get_header("WARC-Target-URI")
            if u not in keep:
                continue
            pid, src, host = keep[u]
            if pid in found:
                continue
            body = rec.content_stream().read()
            ct = rec.http_headers.get_header("Content-Type") if rec.http_headers else ""
            html = decode(body, ct)
            try:
                blks = blocks_of(html)
            except Exception as ex:  # noqa: BLE001
                print("parse error", pid, u, ex, file=sys.stderr)
                blks = []
            found[pid] = {"id": pid, "url": u, "source": src, "host": host,
                          "blocks": blks}
    with open(OUT, "w", encoding="utf-8") as f:
        for pid in sorted(found):
            f.write(json.dumps(found[pid], ensure_ascii=False) + "\n")
    want = {v[0] for v in keep.values()}
    print("pages wanted", len(want), "found", len(found), "missing", sorted(want - set(found))[:20])


if __name__ == "__main__":
    main()
