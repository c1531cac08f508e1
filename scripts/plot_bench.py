#!/usr/bin/env python3
"""Plot `gtranspose --bench --json` results as SVG, with the Python standard library only.

For each element type found in the JSON files it writes, into DIR (default: the
current directory):

  bench_size_<dtype>.svg    GB/s (or % of the D2D copy) against matrix size, one
                            line per kernel and peer, log2 x axis in bytes. Only
                            square shapes with no block-shape config count: that
                            is what `--bench --sweep` measures over 2^lo..2^hi.
  bench_blocks_<dtype>.svg  one bar per kernel and block shape ("32x8"), when
                            the JSON holds rows of the block-shape sweep.

Rows that failed verification are drawn with a red cross; rows that never ran
(skipped, failed) are left out. When several files hold the same dtype, each
line's name says which file it came from.

example:
  gtranspose --bench --sweep --dtype f32 --json f32.json
  scripts/plot_bench.py -o plots f32.json
"""
import argparse
import json
import math
import os
import sys
from collections import OrderedDict
from xml.sax.saxutils import escape

# Matplotlib's tab20 colours: distinct enough for a catalogue of ~20 lines.
PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
    "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
]
REFERENCE_COLOUR = "#000000"
PEER_PREFIXES = ("cublas", "cuBLAS")


def load(paths):
    """(rows, device, reference) with each row tagged with the file it came from."""
    rows, devices, references = [], [], []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"plot_bench: cannot read {path}: {e}")
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            sys.exit(f"plot_bench: {path} is not a gtranspose bench JSON (no 'rows' list)")
        stem = os.path.splitext(os.path.basename(path))[0]
        for r in doc["rows"]:
            r = dict(r)
            r["_file"] = stem
            rows.append(r)
        devices.append(doc.get("device", ""))
        references.append(doc.get("reference", ""))
    device = ", ".join(sorted({d for d in devices if d}))
    reference = next((r for r in references if r), "cudaMemcpy D2D")
    return rows, device, reference


def ran(r):
    return r.get("ran", (r.get("median_ms") or 0) > 0) and (r.get("gbps") or 0) > 0


def value(r, metric):
    return r.get("pct_of_copy") if metric == "pct" else r.get("gbps")


def nice_ceiling(v):
    """A round axis maximum a little above v."""
    if v <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(v))
    for step in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if step * mag >= v * 1.05:
            return step * mag
    return 10 * mag


def fmt_bytes(b):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            v = b / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{b} B"


class Svg:
    def __init__(self, width, height):
        self.w, self.h, self.parts = width, height, []

    def add(self, s):
        self.parts.append(s)

    def text(self, x, y, s, size=12, anchor="start", colour="#000", weight="normal", rotate=None):
        tr = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate is not None else ""
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{colour}" '
                 f'font-weight="{weight}"{tr}>{escape(str(s))}</text>')

    def line(self, x1, y1, x2, y2, colour="#000", width=1, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" '
                 f'stroke-width="{width}"{d}/>')

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.w}" height="{self.h}" '
                    f'viewBox="0 0 {self.w} {self.h}" font-family="sans-serif">\n')
            f.write(f'<rect width="{self.w}" height="{self.h}" fill="#fff"/>\n')
            f.write("\n".join(self.parts))
            f.write("\n</svg>\n")


def series_key(r, multi_file):
    return f'{r["name"]} ({r["_file"]})' if multi_file else r["name"]


def style_for(name, reference, index):
    if name.startswith(reference):
        return REFERENCE_COLOUR, 2.5, None
    if name.startswith(PEER_PREFIXES):
        return PALETTE[index % len(PALETTE)], 2, "6 4"
    return PALETTE[index % len(PALETTE)], 1.6, None


def plot_sizes(rows, dtype, device, reference, metric, title, path):
    pts = [r for r in rows if r.get("dtype") == dtype and not r.get("config") and ran(r)
           and r.get("rows") == r.get("cols") and (r.get("bytes") or 0) > 0]
    if not pts:
        return False
    multi_file = len({r["_file"] for r in pts}) > 1
    series = OrderedDict()
    for r in pts:
        series.setdefault(series_key(r, multi_file), {})[r["bytes"]] = r
    xs = sorted({r["bytes"] for r in pts})
    lo, hi = math.log2(xs[0]), math.log2(xs[-1])
    if hi == lo:
        lo, hi = lo - 1, hi + 1
    ymax = nice_ceiling(max(value(r, metric) for r in pts))

    legend_rows = len(series)
    W, left, right, top, bottom = 1040, 80, 320, 60, 70
    H = max(520, top + bottom + 18 * legend_rows + 20)
    pw, ph = W - left - right, H - top - bottom
    X = lambda b: left + (math.log2(b) - lo) / (hi - lo) * pw
    Y = lambda v: top + ph - (v / ymax) * ph
    svg = Svg(W, H)
    ylabel = "% of " + reference if metric == "pct" else "GB/s (bytes read + written)"
    svg.text(W / 2, 28, title or f"gtranspose --bench: {dtype}, {ylabel} against matrix size", 16, "middle",
             weight="bold")
    if device:
        svg.text(W / 2, 46, device, 12, "middle", "#444")
    for i in range(6):
        v = ymax * i / 5
        svg.line(left, Y(v), left + pw, Y(v), "#ddd")
        svg.text(left - 8, Y(v) + 4, f"{v:g}", 11, "end")
    for b in xs:
        svg.line(X(b), top, X(b), top + ph, "#eee")
        side = int(round(math.sqrt(b / max(1, _elem_size(pts, b)))))
        svg.text(X(b), top + ph + 16, fmt_bytes(b), 10, "middle")
        svg.text(X(b), top + ph + 30, f"{side}²", 10, "middle", "#666")
    svg.line(left, top, left, top + ph)
    svg.line(left, top + ph, left + pw, top + ph)
    svg.text(left + pw / 2, H - 18, "matrix size (bytes, log2 scale; side² below)", 12, "middle")
    svg.text(20, top + ph / 2, ylabel, 12, "middle", rotate=-90)

    any_bad = False
    for i, (name, by_x) in enumerate(series.items()):
        colour, width, dash = style_for(name, reference, i)
        pts_s = [(X(b), Y(value(by_x[b], metric)), by_x[b]) for b in sorted(by_x)]
        path_d = " ".join(f"{'M' if j == 0 else 'L'}{x:.1f},{y:.1f}" for j, (x, y, _) in enumerate(pts_s))
        d = f' stroke-dasharray="{dash}"' if dash else ""
        svg.add(f'<path d="{path_d}" fill="none" stroke="{colour}" stroke-width="{width}"{d}>'
                f'<title>{escape(name)}</title></path>')
        for x, y, r in pts_s:
            tip = escape(f'{name} {r.get("shape")}: {r.get("gbps", 0):.1f} GB/s, '
                         f'{r.get("pct_of_copy", 0):.1f}% of copy, {r.get("median_ms", 0):.4f} ms')
            if r.get("verified"):
                svg.add(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{tip}</title></circle>')
            else:
                any_bad = True
                svg.add(f'<path d="M{x-4:.1f},{y-4:.1f} L{x+4:.1f},{y+4:.1f} M{x-4:.1f},{y+4:.1f} '
                        f'L{x+4:.1f},{y-4:.1f}" stroke="#d00" stroke-width="2"><title>UNVERIFIED {tip}</title></path>')
        ly = top + 10 + 18 * i
        svg.line(left + pw + 16, ly, left + pw + 40, ly, colour, width, dash)
        svg.text(left + pw + 46, ly + 4, name, 11)
    if any_bad:
        svg.text(left + pw + 16, top + 18 * legend_rows + 24, "red x: failed verification", 11, colour="#d00")
    svg.save(path)
    return True


def _elem_size(rows, b):
    for r in rows:
        if r["bytes"] == b and r.get("rows") and r.get("cols"):
            return r["bytes"] // (r["rows"] * r["cols"])
    return 1


def plot_blocks(rows, dtype, device, metric, title, path):
    pts = [r for r in rows if r.get("dtype") == dtype and r.get("config") and ran(r)]
    if not pts:
        return False
    multi_file = len({r["_file"] for r in pts}) > 1
    groups = OrderedDict()
    for r in pts:
        groups.setdefault(series_key(r, multi_file), []).append(r)
    # Each kernel's tuned default (the row with no config at the same shape)
    # joins its group, so a sweep shows whether any block shape beats it.
    swept = {(r["name"], r["_file"], r.get("shape")) for r in pts}
    for r in rows:
        key = (r["name"], r["_file"], r.get("shape"))
        if r.get("dtype") == dtype and not r.get("config") and ran(r) and key in swept:
            swept.discard(key)  # the main table and the size sweep may both hold it: the first wins
            d = dict(r)
            d["config"] = "default"
            groups[series_key(r, multi_file)].append(d)
            pts.append(d)
    bars = sum(len(g) for g in groups.values())
    W, left, right, top, bar_h, gap = 980, 230, 90, 70, 16, 10
    H = top + bars * (bar_h + 2) + gap * len(groups) + 60
    pw = W - left - right
    vmax = nice_ceiling(max(value(r, metric) for r in pts))
    unit = "% of copy" if metric == "pct" else "GB/s"
    svg = Svg(W, H)
    shape = pts[0].get("shape", "")
    svg.text(W / 2, 28, title or f"gtranspose --bench --sweep: block shapes, {dtype} {shape}", 16, "middle",
             weight="bold")
    if device:
        svg.text(W / 2, 46, device, 12, "middle", "#444")
    bottom = H - 40
    for i in range(6):
        v = vmax * i / 5
        x = left + v / vmax * pw
        svg.line(x, top - 6, x, bottom, "#e5e5e5")
        svg.text(x, bottom + 16, f"{v:g}", 11, "middle")
    svg.text(left + pw / 2, H - 8, unit + " (bytes read + written)" if metric == "gbps" else unit, 12, "middle")
    y = top
    for gi, (name, rs) in enumerate(groups.items()):
        colour = PALETTE[gi % len(PALETTE)]
        best = max(value(r, metric) for r in rs)
        for r in sorted(rs, key=lambda r: -value(r, metric)):
            v = value(r, metric)
            wbar = v / vmax * pw
            fill = colour if r.get("verified") else "#d00"
            svg.add(f'<rect x="{left}" y="{y:.1f}" width="{wbar:.1f}" height="{bar_h}" fill="{fill}" '
                    f'opacity="{1.0 if v == best else 0.6}"><title>{escape(name)} {escape(r["config"])}: '
                    f'{r.get("gbps", 0):.1f} GB/s, {r.get("pct_of_copy", 0):.1f}% of copy</title></rect>')
            svg.text(left - 6, y + bar_h - 4, f'{name}  {r["config"]}', 11, "end")
            label = f"{v:.1f}" + ("" if r.get("verified") else " UNVERIFIED")
            svg.text(left + wbar + 4, y + bar_h - 4, label, 10)
            y += bar_h + 2
        y += gap
    svg.save(path)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("example:")[0].strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [-h] [-o DIR] [--metric {gbps,pct}] [--title TEXT] JSON [JSON ...]",
        epilog="example:\n  gtranspose --bench --sweep --dtype f32 --json f32.json\n"
               "  scripts/plot_bench.py -o plots f32.json")
    ap.add_argument("json", nargs="+", metavar="JSON", help="files written by gtranspose --bench --json")
    ap.add_argument("-o", "--out", default=".", metavar="DIR", help="folder for the SVG files (created if missing)")
    ap.add_argument("--metric", choices=("gbps", "pct"), default="gbps",
                    help="y axis: GB/s (default) or percent of the D2D copy measured in the same run")
    ap.add_argument("--title", default="", help="replace the generated plot titles")
    a = ap.parse_args(argv)

    rows, device, reference = load(a.json)
    os.makedirs(a.out, exist_ok=True)
    written = []
    for dtype in OrderedDict.fromkeys(r.get("dtype", "") for r in rows):
        p = os.path.join(a.out, f"bench_size_{dtype}.svg")
        if plot_sizes(rows, dtype, device, reference, a.metric, a.title, p):
            written.append(p)
        p = os.path.join(a.out, f"bench_blocks_{dtype}.svg")
        if plot_blocks(rows, dtype, device, a.metric, a.title, p):
            written.append(p)
    if not written:
        sys.exit("plot_bench: nothing to plot (no rows that ran)")
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
