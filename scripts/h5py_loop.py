#!/usr/bin/env python3
"""The h5py loop a user writes (the peer row of ../shared/ANCHORS.md): read 2048-row
stripes, write their transpose, then fsync. The output keeps the input's storage as
h5py's users do: a chunked input gives a chunked output with the same filters (gzip,
shuffle, registered filters through hdf5plugin) and the transposed chunk shape; a
contiguous input gives h5py's auto-chunked output. Both files get a 64 MiB chunk cache,
so the loop is not held back by HDF5's 1 MiB default.

    h5py_loop.py IN.h5 OUT.h5            transpose the file's first 2-D dataset
    h5py_loop.py --chunk IN.h5 OUT.h5 ROWS COLS
                                         copy it into a chunked (uncompressed) layout instead
Prints the seconds taken (fsync included).
"""
import os
import sys
import time

import h5py

try:  # registers the filters Debian's HDF5 plugins do not bring (where installed)
    import hdf5plugin  # noqa: F401
except ImportError:
    pass

CACHE = 64 << 20


def first_dataset(f):
    found = []
    f.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Dataset) and obj.ndim == 2 else None)
    if not found:
        sys.exit(f"{f.filename}: no 2-D dataset")
    return found[0]


def transposed_like(g, name, x):
    """An output dataset for x's transpose with x's own pipeline, chunks transposed."""
    rows, cols = x.shape
    if x.chunks is None:
        return g.create_dataset(name, shape=(cols, rows), dtype=x.dtype, chunks=True)
    dcpl = x.id.get_create_plist()  # the filters exactly as stored, parameters and order
    dcpl.set_chunk((x.chunks[1], x.chunks[0]))
    space = h5py.h5s.create_simple((cols, rows))
    h5py.h5d.create(g.id, name.encode(), x.id.get_type(), space, dcpl=dcpl)
    return g[name]


def main():
    args = sys.argv[1:]
    chunk = args and args[0] == "--chunk"
    if chunk:
        args = args[1:]
    src, dst = args[0], args[1]
    t0 = time.time()
    with h5py.File(src, "r", rdcc_nbytes=CACHE) as f, h5py.File(dst, "w", rdcc_nbytes=CACHE) as g:
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
            out = transposed_like(g, name, x)
            for r in range(0, rows, s):
                out[:, r:r + s] = x[r:r + s, :].T
    fd = os.open(dst, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    print(f"{time.time() - t0:.3f}")


if __name__ == "__main__":
    main()
