#!/usr/bin/env python3
"""Plot `gtranspose --bench --random-shapes N --json FILE` as an SVG.

    scripts/plot-shapes.py SHAPES.json OUT.svg [TITLE]

One point per shape and kernel: x is the matrix's size in bytes (log scale),
y its rate as % of a device-to-device copy of the same bytes measured in the
same run; `padded` and each peer (cuBLAS geam, cuBLASLt) on the same axes,
and a line at each one's median. Only the standard library: the plot has to
be made on machines without matplotlib.
"""
import json
import math
import statistics
import sys

COLOURS = {"padded": "#d62728", "cublasSgeam": "#1f77b4", "cublasDgeam": "#1f77b4", "cublasHgeam": "#1f77b4",
           "cublasCgeam": "#1f77b4", "cublasZgeam": "#1f77b4", "cublasLtMatrixTransform": "#2ca02c"}
W, H, L, R, T, B = 900, 520, 70, 200, 40, 60


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: plot-shapes.py SHAPES.json OUT.svg [TITLE]")
    doc = json.load(open(sys.argv[1]))
    rows = [r for r in doc.get("shape_rows", []) if r.get("ran") and r["name"] != "cudaMemcpy D2D"]
    if not rows:
        sys.exit(sys.argv[1] + ": no shape_rows (run --bench --random-shapes N --json FILE)")
    names = sorted({r["name"] for r in rows}, key=lambda n: (n != "padded", n))
    xs = [math.log10(r["bytes"]) for r in rows]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y1 = max(100.0, math.ceil(max(r["pct_of_copy"] for r in rows) / 20) * 20)
    px = lambda v: L + (v - x0) / max(1e-9, x1 - x0) * (W - L - R)
    py = lambda v: T + (1 - v / y1) * (H - T - B)
    dtype = rows[0]["dtype"]
    title = sys.argv[3] if len(sys.argv) > 3 else (
        "%s: %% of a D2D copy over %d random shapes (seed %s), %s" % (dtype, len({r['shape'] for r in rows}),
                                                                   doc.get("seed"), doc.get("device", "")))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="12">' % (W, H), '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="14">%s</text>' % (L, title)]
    for y in range(0, int(y1) + 1, 20):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (L, W - R, py(y), py(y)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d%%</text>' % (L - 6, py(y) + 4, y))
    for e in range(x0, x1 + 1):
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>' % (px(e), px(e), T, H - B))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">1e%d B</text>' % (px(e), H - B + 18, e))
    out.append('<text x="%d" y="%d" text-anchor="middle">matrix size (bytes, log scale)</text>' %
               ((L + W - R) // 2, H - 15))
    for i, n in enumerate(names):
        c = COLOURS.get(n, "#7f7f7f")
        pts = [r for r in rows if r["name"] == n]
        for r in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="2.6" fill="%s" fill-opacity="0.6"/>' %
                       (px(math.log10(r["bytes"])), py(r["pct_of_copy"]), c))
        med = statistics.median(r["pct_of_copy"] for r in pts)
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="5,3"/>' %
                   (L, W - R, py(med), py(med), c))
        out.append('<circle cx="%d" cy="%d" r="4" fill="%s"/>' % (W - R + 15, T + 20 + 34 * i, c))
        out.append('<text x="%d" y="%d">%s</text>' % (W - R + 25, T + 24 + 34 * i, n))
        out.append('<text x="%d" y="%d" fill="#555">median %.1f, min %.1f</text>' %
                   (W - R + 25, T + 38 + 34 * i, med, min(r["pct_of_copy"] for r in pts)))
    out.append("</svg>")
    open(sys.argv[2], "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
