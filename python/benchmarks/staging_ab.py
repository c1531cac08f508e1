#!/usr/bin/env python3
"""Pageable staging, A/B (issue 13; docs/PERF.md runs 109, 110, 119, 121, 122): transpose(a, out=b)
of a pageable f32 NumPy array against the same on pinned arrays (gt.empty_pinned), in one
process, at the default staging tiles and at 4M and 1M elements a tile; every result verified.
Run once per store kind to compare them:

  GT_STAGING_STORES=plain PYTHONPATH=build/python python3 python/benchmarks/staging_ab.py [SIDE]
  PYTHONPATH=build/python python3 python/benchmarks/staging_ab.py [SIDE]      # the plan's stores (default)

SIDE: the square's side (default 32768: 4 GiB). GT_AB_TILES: the tiles timed, in elements,
comma-separated, 0 for the default (default "0,4194304,1048576"). GT_STAGING_STORES=stream:
streaming stores into staging slots of any size (the rule before run 121; by default slots of up
to 8 MiB take plain stores, so that the DMA reads them from the cache). Needs a GPU (engine cuda).
"""
import os, sys, time, statistics
import numpy as np
import gtranspose as gt
n = 32768 if len(sys.argv) < 2 else int(sys.argv[1])
shape = (n, n)  # 4 GiB f32 by default
a = np.frombuffer(np.random.default_rng(1).bytes(shape[0] * shape[1] * 4), dtype=np.float32).reshape(shape)
want = np.ascontiguousarray(a.T)
t = gt.Transposer("cuda")
def timed(f, reps=7):
    f()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); out.append(time.perf_counter() - t0)
    return statistics.median(out), min(out)
out = np.empty_like(want); out.fill(0)
t.transpose(a, out=out); assert np.array_equal(out.view(np.uint8), want.view(np.uint8))
res = {}
tiles = [None if t in ("", "0") else int(t) for t in os.environ.get("GT_AB_TILES", "0,4194304,1048576").split(",")]
for tile in tiles:
    out.fill(0)
    res[tile] = timed(lambda: t.transpose(a, out=out, tile=tile))
    assert np.array_equal(out.view(np.uint8), want.view(np.uint8))
    res[tile] = res[tile] + (t.last_report,)
pa = gt.empty_pinned(shape, np.float32); pa[...] = a
po = gt.empty_pinned(want.shape, np.float32)
pn = timed(lambda: t.transpose(pa, out=po))
assert np.array_equal(po.view(np.uint8), want.view(np.uint8))
nb = a.nbytes
st = os.environ.get('GT_STAGING_STORES', 'plan')
print(f"PY stores={st} {shape}: pinned {pn[0]*1e3:.1f} ms ({nb/pn[0]/1e9:.2f} GB/s)")
for tile, pg in res.items():
    rep = pg[2]
    print(f"PY stores={st} tile={tile}: pageable {pg[0]*1e3:.1f} ms ({nb/pg[0]/1e9:.2f} GB/s, min {pg[1]*1e3:.1f}): {100*pn[0]/pg[0]:.1f}% of pinned")
    print("   report:", {k: rep[k] for k in rep if k in ("tiles", "tile_shape", "overlap", "bottleneck", "notes")})
