#!/usr/bin/env python3
"""NumPy's verdict on .npy headers, for gtranspose's header tests.

Reads cases from the file named by argv[1]: each is a 4-byte little-endian
length and that many bytes of a .npy file's start (magic, version, header
length, header). Prints one line per case, as NumPy's own reader
(numpy.lib.format: read_magic, _check_version, _read_array_header) sees it:
  ok SHAPE FORTRAN KIND ITEMSIZE ORDER PLAIN OLDER   (SHAPE as "3,4", "" for ())
  err
OLDER names an older Python's or NumPy's rule that opened it (older_rule).
A shape NumPy's header check lets through but no array can have (a negative
extent, one past a C long) is "err": np.load fails on it when it makes the
array. The header size limit is lifted (max_header_size), as for trusted
files (allow_pickle=True).
"""
import io
import re
import struct
import sys
import warnings

import numpy as np

try:  # NumPy 2 keeps the reader's private helpers here; numpy.lib.format re-exports only the public names
    from numpy.lib import _format_impl as npfmt
except ImportError:  # NumPy 1.x
    from numpy.lib import format as npfmt


def older_rule(data):
    """Which rule of an older Python or NumPy opened this header, where
    gtranspose follows the newer ones (Python 3.12, NumPy 2) and refuses:
      count1  a type string with a repeat count of 1 ('1f4'): NumPy 1.x reads
              the type, 2.x a subarray of one (not a plain type);
      blank   a version 1.0/2.0 header whose last line, after its final
              newline, is only blanks: Python 3.11's tokenize (NumPy's filter
              for such headers) dropped it, 3.12's refuses it.
    "-" where neither applies."""
    rules = []
    text = data[10:] if data[6] == 1 else data[12:]
    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        import ast
        header = text.decode("utf8" if data[6] >= 3 else "latin1", "replace")
        d = None
        for h in (header, None):
            try:
                d = ast.literal_eval(h if h is not None else npfmt._filter_header(header))
                break
            except Exception:
                continue
        descr = d.get("descr") if isinstance(d, dict) else None
        if isinstance(descr, str) and re.match(r"^[<>|=]?\s*\(?\s*1\s*\)?\s*[A-Za-z]", descr):
            rules.append("count1")
    if sys.version_info < (3, 12) and data[6] in (1, 2):
        tail = text[text.rfind(b"\n") + 1:] if b"\n" in text else b""
        if tail and not tail.strip(b" \t\f"):
            rules.append("blank")
    return ",".join(rules) or "-"


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
    return "ok %s %d %s %d %s %d %s" % (",".join(map(str, dims)), int(fortran), dtype.kind, dtype.itemsize, order, plain,
                                        older_rule(data))


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
