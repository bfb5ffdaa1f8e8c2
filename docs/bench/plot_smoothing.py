#!/usr/bin/env python3
"""Plot `stencil bench --smoothing-scaling` output: time against size, log-log, as an SVG.

Usage: python3 docs/bench/plot_smoothing.py SCALING.tsv OUT.svg

The SVG is written by hand (no matplotlib on the benchmark machine). Every measurement is a
point; each series' line joins the medians of its sizes (pages come in several seeds per
size). Also prints the least-squares slope of log10(seconds) against log10(nodes) per series:
about 1 means linear in n, as expected for a fixed number of levels K.
"""
import csv
import math
import sys
from collections import defaultdict

LABELS = {
    'page/parse': 'page: HTML parse (html5ever, one run), x = DOM nodes',
    'page/model-scores': 'page: segment(), shipped model scores',
    'page/random-scores': 'page: segment(), distinct random scores',
    'solver/random-tree': 'solver alone: random tree, x = problem nodes',
    'solver/chain-with-leaves': 'solver alone: chain with leaves',
}
COLORS = ['#888888', '#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b']
# Slopes are also given from this size up, where fixed per-call costs no longer dominate.
LARGE = 10_000

W, H = 860, 560
LEFT, RIGHT, TOP, BOTTOM = 90, 30, 50, 70


def read(path):
    with open(path) as f:
        lines = [line for line in f if not line.startswith('#')]
    series = defaultdict(list)
    for row in csv.DictReader(lines, delimiter='\t'):
        x, y = int(row['x_nodes']), float(row['seconds'])
        # A log axis cannot show a zero; a zero time only means the clock was too coarse.
        if x > 0 and y > 0:
            series[row['series']].append((int(row['target']), x, y))
    return series


def fit(points):
    """Least squares of log10(y) on log10(x): (slope, intercept), or None if degenerate."""
    xs = [math.log10(x) for x, _ in points]
    ys = [math.log10(y) for _, y in points]
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def decades(lo, hi):
    return math.floor(math.log10(lo)), math.ceil(math.log10(hi))


def power_label(x, y, exponent, anchor):
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="13">10'
            f'<tspan dy="-6" font-size="10">{exponent}</tspan></text>')


def plot(series, out):
    xs = [x for pts in series.values() for _, x, _ in pts]
    ys = [y for pts in series.values() for _, _, y in pts]
    x0, x1 = decades(min(xs), max(xs))
    y0, y1 = decades(min(ys), max(ys))
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x):
        return LEFT + (math.log10(x) - x0) / (x1 - x0) * pw

    def py(y):
        return TOP + ph - (math.log10(y) - y0) / (y1 - y0) * ph

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="28" text-anchor="middle" font-size="16">'
           'Smoothing time against size (log–log; stencil bench --smoothing-scaling)</text>']
    # Grid: decades solid, 2..9 within a decade faint.
    for e in range(x0, x1 + 1):
        for m in range(1, 10):
            if e == x1 and m > 1:
                break
            x = px(m * 10.0 ** e)
            stroke = '#cccccc' if m == 1 else '#eeeeee'
            svg.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + ph}" stroke="{stroke}"/>')
        svg.append(f'<line x1="{px(10.0 ** e):.1f}" y1="{TOP + ph}" x2="{px(10.0 ** e):.1f}" '
                   f'y2="{TOP + ph + 6}" stroke="black"/>')
        svg.append(power_label(px(10.0 ** e), TOP + ph + 24, e, 'middle'))
    for e in range(y0, y1 + 1):
        for m in range(1, 10):
            if e == y1 and m > 1:
                break
            y = py(m * 10.0 ** e)
            stroke = '#cccccc' if m == 1 else '#eeeeee'
            svg.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="{stroke}"/>')
        svg.append(f'<line x1="{LEFT - 6}" y1="{py(10.0 ** e):.1f}" x2="{LEFT}" '
                   f'y2="{py(10.0 ** e):.1f}" stroke="black"/>')
        svg.append(power_label(LEFT - 10, py(10.0 ** e) + 5, e, 'end'))
    svg.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>')
    svg.append(f'<text x="{LEFT + pw / 2}" y="{H - 18}" text-anchor="middle" font-size="14">'
               'nodes (DOM nodes for pages, problem nodes for the solver alone)</text>')
    svg.append(f'<text x="22" y="{TOP + ph / 2}" text-anchor="middle" font-size="14" '
               f'transform="rotate(-90 22 {TOP + ph / 2})">seconds (smoothing: best of 3)</text>')

    # A slope-1 guide through the middle of the data, to read the other slopes against.
    gx = math.sqrt(min(xs) * max(xs))
    gy = math.sqrt(min(ys) * max(ys))
    lo, hi = 10.0 ** x0, 10.0 ** x1
    a, b = max(lo, gx * 10.0 ** y0 / gy), min(hi, gx * 10.0 ** y1 / gy)
    svg.append(f'<line x1="{px(a):.1f}" y1="{py(gy * a / gx):.1f}" x2="{px(b):.1f}" '
               f'y2="{py(gy * b / gx):.1f}" stroke="#999999" stroke-dasharray="6 5"/>')
    svg.append(f'<text x="{px(b) - 4:.1f}" y="{py(gy * b / gx) + 24:.1f}" text-anchor="end" '
               'font-size="12" fill="#777777">slope 1 (∝ n)</text>')

    names = sorted(series, key=lambda s: (list(LABELS).index(s) if s in LABELS else 99, s))
    for i, name in enumerate(names):
        color = COLORS[i % len(COLORS)]
        by_target = defaultdict(list)
        for target, x, y in series[name]:
            by_target[target].append((x, y))
        line = [(median([x for x, _ in v]), median([y for _, y in v]))
                for _, v in sorted(by_target.items())]
        path = ' '.join(f'{px(x):.1f},{py(y):.1f}' for x, y in line)
        svg.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for _, x, y in series[name]:
            svg.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{color}" '
                       'fill-opacity="0.8"/>')

    # Legend, top left, where small sizes and short times leave room.
    lx, ly = LEFT + 14, TOP + 14
    svg.append(f'<rect x="{lx - 8}" y="{ly - 6}" width="380" height="{22 * len(names) + 8}" '
               'fill="white" fill-opacity="0.9" stroke="#bbbbbb"/>')
    for i, name in enumerate(names):
        color = COLORS[i % len(COLORS)]
        y = ly + 10 + 22 * i
        svg.append(f'<line x1="{lx}" y1="{y}" x2="{lx + 26}" y2="{y}" stroke="{color}" stroke-width="2"/>')
        svg.append(f'<circle cx="{lx + 13}" cy="{y}" r="3.5" fill="{color}"/>')
        svg.append(f'<text x="{lx + 34}" y="{y + 4}" font-size="12">{LABELS.get(name, name)}</text>')
    svg.append('</svg>')
    with open(out, 'w') as f:
        f.write('\n'.join(svg) + '\n')
    return names


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    try:
        series = read(sys.argv[1])
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f'{sys.argv[1]}: not a --smoothing-scaling TSV ({e!r})')
    if not series:
        sys.exit(f'{sys.argv[1]}: no measurements')
    names = plot(series, sys.argv[2])
    print(f'wrote {sys.argv[2]}\n')
    print(f'| series | points | slope (all sizes) | slope (x ≥ {LARGE:,}) |')
    print('|---|---:|---:|---:|')
    for name in names:
        points = [(x, y) for _, x, y in series[name]]
        large = [(x, y) for x, y in points if x >= LARGE]
        slopes = [fit(p) for p in (points, large)]
        cells = ['—' if s is None else f'{s[0]:.3f}' for s in slopes]
        print(f'| {name} | {len(points)} | {cells[0]} | {cells[1]} |')


if __name__ == '__main__':
    main()
