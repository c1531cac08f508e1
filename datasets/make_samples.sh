#!/usr/bin/env bash
# Regenerates the checked-in samples (a developer's step, not a user's):
#   datasets/demo.h5   /measurements/temperature, 240x320 f32, chunked + gzip,
#                      with attributes (units, description, scale): the README's demo
#   datasets/small.npy 37x53 f64 (NumPy, C order)
#   datasets/small.raw 61x47 u16 (raw: --shape 61x47 --dtype u16)
# Every sample follows gt-gen's position pattern with seed 7, so
# `gt-gen --verify OUT --transposed --seed 7` checks a transpose of any of them.
# Needs a built gt-gen and /usr/bin/python3 with numpy and h5py.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gen=${GT_GEN:-$here/../build/gt-gen}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp/t.h5:/t" --shape 240x320 --dtype f32 --seed 7
/usr/bin/python3 - "$tmp/t.h5" "$here/demo.h5" <<'PY'
import sys, h5py
src, dst = sys.argv[1:]
with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
    g.attrs["title"] = "gtranspose demo: a 240x320 grid of pattern values"
    d = g.create_dataset("measurements/temperature", data=f["t"][...], chunks=(48, 64),
                         compression="gzip", shuffle=True)
    d.attrs["units"] = "kelvin"
    d.attrs["description"] = "element (r, c) is gt-gen's position pattern, seed 7"
    d.attrs["scale"] = [1.0, 0.5]
PY
"$gen" "$here/small.npy" --shape 37x53 --dtype f64 --seed 7 --force
"$gen" "$here/small.raw" --shape 61x47 --dtype u16 --seed 7 --force
ls -l "$here"/demo.h5 "$here"/small.npy "$here"/small.raw
