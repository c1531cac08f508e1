#!/usr/bin/env python3
"""The h5py loop a user writes (the peer row of ../shared/ANCHORS.md): read 2048-row
stripes, write their transpose into a chunked output, then fsync.

    h5py_loop.py IN.h5 OUT.h5            transpose the file's first 2-D dataset
    h5py_loop.py --chunk IN.h5 OUT.h5 ROWS COLS
                                         copy it into a chunked (uncompressed) layout instead
Prints the seconds taken (fsync included).
"""
import os
import sys
import time

import h5py


def first_dataset(f):
    found = []
    f.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Dataset) and obj.ndim == 2 else None)
    if not found:
        sys.exit(f"{f.filename}: no 2-D dataset")
    return found[0]


def main():
    args = sys.argv[1:]
    chunk = args and args[0] == "--chunk"
    if chunk:
        args = args[1:]
    src, dst = args[0], args[1]
    t0 = time.time()
    with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
        name = first_dataset(f)
        x = f[name]
        rows, cols = x.shape
        s = 2048
        if chunk:
            cr, cc = int(args[2]), int(args[3])
            out = g.create_dataset(name, shape=(rows, cols), dtype=x.dtype, chunks=(cr, cc))
            for r in range(0, rows, s):
                out[r:r + s, :] = x[r:r + s, :]
        else:
            out = g.create_dataset(name, shape=(cols, rows), dtype=x.dtype, chunks=True)
            for r in range(0, rows, s):
                out[:, r:r + s] = x[r:r + s, :].T
    fd = os.open(dst, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    print(f"{time.time() - t0:.3f}")


if __name__ == "__main__":
    main()
