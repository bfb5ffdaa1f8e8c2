#!/usr/bin/env python3
"""Steps 2-6: host-level recurrence of text blocks vs gold, on blocks.jsonl
(written by extract_blocks.py).  Prints markdown tables to stdout and writes
OUT_DIR/results.json.

Rules
-----
norm N1: lower-case, whitespace collapsed.
norm N2: lower-case, every run of non-letters ([\\W\\d_]+) -> one space, collapsed
         (digits and punctuation stripped); blocks whose N2 is empty never recur.
recurrence of a block on page p of host h: n_other = number of OTHER pages of h
         that have a block (any element, any position) with the same norm.
         R1: n_other >= 1.   R20: n_other >= 1 and n_other >= 0.2 * (pages(h) - 1).
same-structure: n_same = number of other pages of h having a block with the same
         norm AND the same tag path (tag names body/.../tag, no indices).
         S1 / S20 as above with n_same.  "other-structure only" = R but not S.
gold rule A (lenient, as suggested in the brief): tokens (textf1: lower, \\w+) of the block; the block is gold
         when |Counter(block) & Counter(gold page)| >= 0.5 * |block tokens|.
gold rule B (strict): the block's token sequence occurs as a contiguous token
         subsequence of the gold page's token sequence.
prediction lines: non-empty stripped lines of PRED_DIR/ID.txt; labelled
         with the same rules; recurrence of a line = its norm found as a block of
         another page of the host (same-structure: a block with that norm and one
         of the line's own-page block paths; lines with no exactly matching block
         on their own page can only count as other-structure).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paths import EVAL, OUT_DIR, PRED_DIR  # noqa: E402
import json
import os
import re
import sys
from collections import Counter, defaultdict

from textf1 import bag, page_scores, read_text, tokenize  # noqa: E402

BLOCKS = os.path.join(OUT_DIR, "blocks.jsonl")
GOLD = os.path.join(EVAL, "gold/%s.txt")
PRED = os.path.join(PRED_DIR, "%s.txt")
WS = re.compile(r"\s+")
NONLET = re.compile(r"[\W\d_]+", re.UNICODE)


def n1(s):
    return WS.sub(" ", s.lower()).strip()


def n2(s):
    return NONLET.sub(" ", s.lower()).strip()


NORMS = {"N1": n1, "N2": n2}


def gold_a(toks, gbag):
    if not toks:
        return False
    c = Counter(toks)
    return sum((c & gbag).values()) >= 0.5 * len(toks)


def gold_b(toks, gseq):
    if not toks:
        return False
    return (" " + " ".join(toks) + " ") in gseq


def shingles(toks, n=3):
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def gold_c(toks, gseq, gsh):
    """rule C: < 3 tokens -> rule B; else >= 50% of the block's distinct token
    3-grams occur in the gold page's token 3-grams."""
    if len(toks) < 3:
        return gold_b(toks, gseq)
    sh = shingles(toks)
    return sum(1 for x in sh if x in gsh) >= 0.5 * len(sh)


def label(toks, pg):
    return {"A": gold_a(toks, pg["gbag"]), "B": gold_b(toks, pg["gseq"]),
            "C": gold_c(toks, pg["gseq"], pg["gsh"])}


def load():
    pages = [json.loads(l) for l in open(BLOCKS, encoding="utf-8")]
    for pg in pages:
        g = read_text(GOLD % pg["id"])
        pg["gold"] = g
        pg["gbag"] = bag(g)
        gt = tokenize(g)
        pg["gseq"] = " " + " ".join(gt) + " "
        pg["gsh"] = shingles(gt)
        pp = PRED % pg["id"]
        pg["pred"] = read_text(pp) if os.path.exists(pp) else None
    return pages


def build_index(pages, norm, which=0):
    """host -> norm -> page id -> set(paths) (which=0) or set(local signatures) (which=2)"""
    idx = defaultdict(lambda: defaultdict(lambda: defaultdict(set)))
    for pg in pages:
        for blk in pg["blocks"]:
            path, txt = blk[which], blk[1]
            k = norm(txt)
            if k:
                idx[pg["host"]][k][pg["id"]].add(path)
    return idx


def recur(idx_h, pid, key, paths):
    """n_other, n_same for text key on page pid whose own paths are `paths`."""
    if not key or key not in idx_h:
        return 0, 0
    d = idx_h[key]
    n_other = n_same = 0
    for q, qp in d.items():
        if q == pid:
            continue
        n_other += 1
        if paths and (qp & paths):
            n_same += 1
    return n_other, n_same


def flags(n_other, n_same, hp):
    thr = 0.2 * (hp - 1)
    return {"R1": n_other >= 1, "R20": n_other >= 1 and n_other >= thr,
            "S1": n_same >= 1, "S20": n_same >= 1 and n_same >= thr}


def pct(a, b):
    return 100.0 * a / b if b else float("nan")


def block_records(pages, hostpages, idx, norm, idx_sig):
    """Per-block records: (chars, {rule: gold}, flags, host).  flags L1/L20: recurs
    with the same local signature (own tag + inline descendant tags)."""
    recs = []
    for pg in pages:
        hp = hostpages[pg["host"]]
        own = idx[pg["host"]]
        for path, txt, sig in pg["blocks"]:
            toks = tokenize(txt)
            no, ns = recur(own, pg["id"], norm(txt), {path})
            fl = flags(no, ns, hp)
            _, nl = recur(idx_sig[pg["host"]], pg["id"], norm(txt), {sig})
            fl2 = flags(no, nl, hp)
            fl["L1"], fl["L20"] = fl2["S1"], fl2["S20"]
            recs.append((len(txt), label(toks, pg), fl, pg["host"]))
    return recs


def summarize_blocks(recs0, rule):
    recs = [(r[0], r[1][rule], r[2]) for r in recs0]
    out = {}
    nb = len(recs)
    ch = sum(r[0] for r in recs)
    gb = [r for r in recs if r[1]]
    ng = [r for r in recs if not r[1]]
    C = lambda rs: sum(r[0] for r in rs)  # noqa: E731
    out["blocks"] = nb
    out["chars"] = ch
    out["gold_blocks_pct"] = pct(len(gb), nb)
    out["gold_chars_pct"] = pct(C(gb), ch)
    for f in ("R1", "R20", "S1", "S20", "L1", "L20"):
        rr = [r for r in recs if r[2][f]]
        out[f] = {
            "blocks": len(rr),
            "blocks_pct_of_all": pct(len(rr), nb),
            "chars_pct_of_all": pct(C(rr), ch),
            "gold_share_blocks": pct(sum(1 for r in rr if r[1]), len(rr)),
            "gold_share_chars": pct(C(r for r in rr if r[1]), C(rr)),
            "gold_recurring_blocks_pct": pct(sum(1 for r in gb if r[2][f]), len(gb)),
            "gold_recurring_chars_pct": pct(C(r for r in gb if r[2][f]), C(gb)),
            "nongold_recurring_blocks_pct": pct(sum(1 for r in ng if r[2][f]), len(ng)),
            "nongold_recurring_chars_pct": pct(C(r for r in ng if r[2][f]), C(ng)),
        }
    for r_, s_ in (("R1", "S1"), ("R20", "S20"), ("R1", "L1"), ("R20", "L20")):
        rr = [r for r in recs if r[2][r_]]
        oo = [r for r in rr if not r[2][s_]]
        out[r_ + "_not_" + s_] = {
            "blocks_pct_of_recurring": pct(len(oo), len(rr)),
            "chars_pct_of_recurring": pct(C(oo), C(rr)),
            "nongold_chars_pct_of_recurring_nongold": pct(
                C(r for r in oo if not r[1]), C(r for r in rr if not r[1])),
            "nongold_chars_pct_of_all_nongold": pct(C(r for r in oo if not r[1]), C(ng)),
            "gold_chars_pct_of_recurring_gold": pct(C(r for r in oo if r[1]), C(r for r in rr if r[1])),
            "gold_chars_pct_of_all_gold": pct(C(r for r in oo if r[1]), C(gb)),
            "gold_share_chars_of_these": pct(C(r for r in oo if r[1]), C(oo)),
        }
    return out




def line_records(pages, hostpages, idx, norm):
    """Prediction lines: (chars, {rule: gold}, flags_exact, flags_sub, matched_own, pid, text)."""
    byhost = defaultdict(list)
    for pg in pages:
        byhost[pg["host"]].append(pg)
    # per page: list of (norm, path) and joined text for fast substring pre-check
    pblocks = {}
    for pg in pages:
        lst = [(norm(t), p) for p, t, _ in pg["blocks"]]
        lst = [(k, p) for k, p in lst if k]
        pblocks[pg["id"]] = (lst, "\x01" + "\x01".join(k for k, _ in lst) + "\x01")
    recs = []
    for pg in pages:
        hp = hostpages[pg["host"]]
        own = idx[pg["host"]]
        others = [q["id"] for q in byhost[pg["host"]] if q["id"] != pg["id"]]
        for l in (pg["pred"] or "").split("\n"):
            l = l.strip()
            if not l:
                continue
            k = norm(l)
            toks = tokenize(l)
            paths = set(own[k][pg["id"]]) if k and k in own and pg["id"] in own[k] else set()
            no, ns = recur(own, pg["id"], k, paths)
            fe = flags(no, ns, hp)
            # substring variant: line (>= 3 words) inside a block at word boundaries
            if k and len(k.split()) >= 3:
                rx = re.compile(r"(?<!\w)" + re.escape(k) + r"(?!\w)")
                lst, joined = pblocks[pg["id"]]
                spaths = {p for kk, p in lst if kk == k or (k in kk and rx.search(kk))}
                so = ss = 0
                for q in others:
                    lst, joined = pblocks[q]
                    if k not in joined or not rx.search(joined):
                        continue
                    qp = {p for kk, p in lst if kk == k or (k in kk and rx.search(kk))}
                    if qp:
                        so += 1
                        if qp & spaths:
                            ss += 1
                fs = flags(so, ss, hp)
            else:
                fs = fe
            recs.append((len(l), label(toks, pg), fe, fs, bool(paths), pg["id"], l))
    return recs


REMOVE = ("none", "R1", "R20", "S1", "S20", "subR1", "subR20", "subS20")


def summarize_lines(recs, pages, rule):
    out = {"lines": len(recs), "pred_missing_pages": sum(1 for p in pages if p["pred"] is None)}
    C = lambda rs: sum(x[0] for x in rs)  # noqa: E731
    ch = C(recs)
    out["pred_chars"] = ch
    out["line_chars_exactly_matching_own_block_pct"] = pct(C(x for x in recs if x[4]), ch)
    gl = [x for x in recs if x[1][rule]]
    nl = [x for x in recs if not x[1][rule]]
    out["nongold_kept_chars_pct"] = pct(C(nl), ch)
    for f in ("R1", "R20", "S1", "S20"):
        for var, j in (("exact", 2), ("sub", 3)):
            out["%s_%s" % (var, f)] = {
                "nongold_kept_chars_recurring_pct": pct(C(x for x in nl if x[j][f]), C(nl)),
                "gold_kept_chars_recurring_pct": pct(C(x for x in gl if x[j][f]), C(gl)),
                "removed_chars_gold_share_pct": pct(C(x for x in gl if x[j][f]), C(x for x in recs if x[j][f])),
                "R_not_S_nongold_chars_pct": pct(C(x for x in nl if x[j][f] and f[0] == "R"
                                                   and not x[j]["S" + f[1:]]), C(nl)),
            }
    return out


def f1_after_removal(recs, pages):
    bypage = defaultdict(list)
    for x in recs:
        bypage[x[5]].append(x)
    res = {}
    for r in REMOVE:
        sg = sp = st = 0
        for pg in pages:
            kept = []
            for x in bypage.get(pg["id"], []):
                if r == "none":
                    drop = False
                elif r.startswith("sub"):
                    drop = x[3][r[3:]]
                else:
                    drop = x[2][r]
                if not drop:
                    kept.append(x[6])
            ng, np_, tp, *_ = page_scores(bag("\n".join(kept)), pg["gbag"])
            sg += ng
            sp += np_
            st += tp
        p = st / sp if sp else 0.0
        rc = st / sg if sg else 0.0
        res[r] = {"P": p, "R": rc, "F1": 2 * p * rc / (p + rc) if p + rc else 0.0,
                  "pred_tokens": sp, "tp": st, "gold_tokens": sg}
    return res


def main():
    pages = load()
    res = {}
    for src in ("dragnet", "cleanportaleval"):
        sp = [p for p in pages if p["source"] == src]
        hostpages = Counter(p["host"] for p in sp)
        res[src] = {"hosts": len(hostpages), "pages": len(sp),
                    "pages_per_host": dict(sorted(hostpages.items()))}
        for nn, norm in NORMS.items():
            idx = build_index(sp, norm)
            brecs = block_records(sp, hostpages, idx, norm, build_index(sp, norm, 2))
            lrecs = line_records(sp, hostpages, idx, norm)
            res[src][nn] = {"f1": f1_after_removal(lrecs, sp)}
            for rule in ("A", "B", "C"):
                res[src][nn][rule] = {"blocks": summarize_blocks(brecs, rule),
                                      "pred": summarize_lines(lrecs, sp, rule)}
            if nn == "N1":
                ph = {}
                for h in sorted(hostpages):
                    hr = [r for r in brecs if r[3] == h]
                    ng = [r for r in hr if not r[1]["C"]]
                    gb = [r for r in hr if r[1]["C"]]
                    C = lambda rs: sum(r[0] for r in rs)  # noqa: E731
                    ph[h] = {"pages": hostpages[h], "blocks": len(hr),
                             "gold_chars": C(gb), "nongold_chars": C(ng),
                             "nongold_chars_R20_pct": pct(C(r for r in ng if r[2]["R20"]), C(ng)),
                             "gold_chars_R20_pct": pct(C(r for r in gb if r[2]["R20"]), C(gb)),
                             "nongold_chars_R20_not_S20_pct": pct(
                                 C(r for r in ng if r[2]["R20"] and not r[2]["S20"]), C(ng))}
                res[src]["per_host_N1_C"] = ph
                # examples of removed gold (rule C) prediction lines and of
                # other-structure-only recurring blocks, for the report
                ex_gold = sorted([(x[0], x[5], x[6][:160]) for x in lrecs
                                  if x[1]["C"] and x[2]["R20"]], reverse=True)[:15]
                ex_ng = sorted([(x[0], x[5], x[6][:160]) for x in lrecs
                                if not x[1]["C"] and x[2]["R20"]], reverse=True)[:15]
                ex_os = []
                for pg in sp:
                    for path, txt, _ in pg["blocks"]:
                        no, ns = recur(idx[pg["host"]], pg["id"], n1(txt), {path})
                        fl = flags(no, ns, hostpages[pg["host"]])
                        if fl["R20"] and not fl["S20"]:
                            ex_os.append((len(txt), pg["host"], pg["id"], path[-50:], txt[:120]))
                ex_os.sort(reverse=True)
                res[src]["examples"] = {"pred_gold_lines_removed_R20": ex_gold,
                                        "pred_nongold_lines_removed_R20": ex_ng,
                                        "blocks_R20_not_S20": ex_os[:25]}
    with open(os.path.join(OUT_DIR, "results.json"), "w") as f:
        json.dump(res, f, indent=1, ensure_ascii=False)
    print("written", os.path.join(OUT_DIR, "results.json"))


if __name__ == "__main__":
    main()
