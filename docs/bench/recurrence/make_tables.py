#!/usr/bin/env python3
"""Render the tables of REPORT.md from results.json (stdout)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paths import OUT_DIR  # noqa: E402
import json  # noqa: E402
r = json.load(open(os.path.join(OUT_DIR, "results.json")))
S = ("dragnet", "cleanportaleval")
f = lambda x: "%.1f" % x  # noqa: E731


def t_blocks(nn, rule):
    print("\n**Blocks, norm %s, gold rule %s**\n" % (nn, rule))
    print("| set | hosts | pages | blocks | gold blocks % | gold chars % | recur | recurring blocks (% of all) | recurring chars % of all | gold share of recurring (blocks) | gold share of recurring (chars) | gold blocks that recur % | gold chars that recur % | non-gold chars that recur % |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in S:
        b = r[s][nn][rule]["blocks"]
        for k in ("R1", "R20"):
            x = b[k]
            print("| %s | %d | %d | %d | %s | %s | %s | %d (%s) | %s | %s | %s | %s | %s | %s |" % (
                s, r[s]["hosts"], r[s]["pages"], b["blocks"], f(b["gold_blocks_pct"]), f(b["gold_chars_pct"]),
                k, x["blocks"], f(x["blocks_pct_of_all"]), f(x["chars_pct_of_all"]), f(x["gold_share_blocks"]),
                f(x["gold_share_chars"]), f(x["gold_recurring_blocks_pct"]), f(x["gold_recurring_chars_pct"]),
                f(x["nongold_recurring_chars_pct"])))


def t_struct(nn, rule):
    print("\n**Same vs other structure, norm %s, gold rule %s** (S = same tag path from body; L = same local signature: own tag + inline descendant tags)\n" % (nn, rule))
    print("| set | split | recurring chars only visible in another structure % | non-gold recurring chars: only other structure % | = % of all non-gold chars | gold recurring chars: only other structure % | gold share of those chars % |")
    print("|---|---|---|---|---|---|---|")
    for s in S:
        b = r[s][nn][rule]["blocks"]
        for k in ("R1_not_S1", "R20_not_S20", "R1_not_L1", "R20_not_L20"):
            x = b[k]
            print("| %s | %s | %s | %s | %s | %s | %s |" % (s, k.replace("_not_", " but not "), f(x["chars_pct_of_recurring"]),
                  f(x["nongold_chars_pct_of_recurring_nongold"]), f(x["nongold_chars_pct_of_all_nongold"]),
                  f(x["gold_chars_pct_of_recurring_gold"]), f(x["gold_share_chars_of_these"])))


def t_pred(nn, rule):
    print("\n**Prediction lines, norm %s, gold rule %s**\n" % (nn, rule))
    print("| set | lines | pred chars | line chars = an own-page block % | non-gold kept chars % | match | recur | non-gold kept chars that recur % | gold kept chars that recur % | gold share of chars a removal would drop % | non-gold kept chars recurring only in another path % |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in S:
        p = r[s][nn][rule]["pred"]
        for var in ("exact", "sub"):
            for k in ("R1", "R20", "S20"):
                x = p["%s_%s" % (var, k)]
                print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    s, p["lines"], p["pred_chars"], f(p["line_chars_exactly_matching_own_block_pct"]),
                    f(p["nongold_kept_chars_pct"]), var, k, f(x["nongold_kept_chars_recurring_pct"]),
                    f(x["gold_kept_chars_recurring_pct"]), f(x["removed_chars_gold_share_pct"]),
                    f(x["R_not_S_nongold_chars_pct"]) if k[0] == "R" else "-"))


def t_f1():
    print("\n**Token micro P/R/F1 (textf1 tokenisation) of the predictions, before and after dropping recurring lines**\n")
    print("| set | norm | removal | P | R | F1 | ΔF1 | pred tokens |")
    print("|---|---|---|---|---|---|---|---|")
    for s in S:
        for nn in ("N1", "N2"):
            F = r[s][nn]["f1"]
            base = F["none"]["F1"]
            for k, v in F.items():
                if nn == "N2" and k == "none":
                    continue
                print("| %s | %s | %s | %.4f | %.4f | %.4f | %+.4f | %d |" % (s, nn, k, v["P"], v["R"], v["F1"], v["F1"] - base, v["pred_tokens"]))


def t_hosts():
    for s in S:
        print("\n**Per host (%s, N1, rule C, blocks)**\n" % s)
        print("| host | pages | blocks | non-gold chars recurring R20 % | … only in another path % | gold chars recurring R20 % |")
        print("|---|---|---|---|---|---|")
        for h, x in sorted(r[s]["per_host_N1_C"].items(), key=lambda kv: -kv[1]["pages"]):
            print("| %s | %d | %d | %s | %s | %s |" % (h, x["pages"], x["blocks"], f(x["nongold_chars_R20_pct"]),
                  f(x["nongold_chars_R20_not_S20_pct"]), f(x["gold_chars_R20_pct"])))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "main"
    if what == "main":
        t_blocks("N1", "C"); t_blocks("N2", "C"); t_blocks("N1", "A"); t_blocks("N1", "B")
        t_struct("N1", "C")
        t_pred("N1", "C"); t_pred("N2", "C"); t_pred("N1", "A")
        t_f1()
    else:
        t_hosts()
