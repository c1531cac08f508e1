#!/usr/bin/env python3
"""NumPy's verdict on .npy headers, for gtranspose's header tests.

Reads cases from the file named by argv[1]: each is a 4-byte little-endian
length and that many bytes of a .npy file's start (magic, version, header
length, header). Prints one line per case, as NumPy's own reader
(numpy.lib.format: read_magic, _check_version, _read_array_header) sees it:
  ok SHAPE FORTRAN KIND ITEMSIZE ORDER PLAIN   (SHAPE as "3,4", "" for ())
  err
A shape NumPy's header check lets through but no array can have (a negative
extent, one past a C long) is "err": np.load fails on it when it makes the
array. The header size limit is lifted (max_header_size), as for trusted
files (allow_pickle=True).
"""
import io
import struct
import sys
import warnings

import numpy as np
from numpy.lib import format as npfmt


def verdict(data):
    fp = io.BytesIO(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            version = npfmt.read_magic(fp)
            npfmt._check_version(version)
            shape, fortran, dtype = npfmt._read_array_header(fp, version, max_header_size=1 << 40)
    except Exception:  # NumPy raises ValueError, SyntaxError, TypeError, UnicodeError, ...
        return "err"
    dims = [int(x) for x in shape]
    if any(d < 0 or d > 2**63 - 1 for d in dims):
        return "err"
    order = {"=": "<", "<": "<", ">": ">", "|": "|"}[dtype.byteorder]
    plain = int(dtype.fields is None and dtype.subdtype is None)
    return "ok %s %d %s %d %s %d" % (",".join(map(str, dims)), int(fortran), dtype.kind, dtype.itemsize, order, plain)


def main():
    with open(sys.argv[1], "rb") as f:
        blob = f.read()
    pos, out = 0, []
    while pos < len(blob):
        (n,) = struct.unpack_from("<I", blob, pos)
        out.append(verdict(blob[pos + 4:pos + 4 + n]))
        pos += 4 + n
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
