"""How a 2-D array lies in memory, as the library wants it: a row-major
matrix with a leading dimension, or the transpose of one.

The library transposes row-major matrices whose rows may lie apart (a leading
dimension, in elements). A 2-D array with a unit stride in its second axis is
one (a C-contiguous array, or a slice of one's rows and columns); an array
with a unit stride in its first axis is the transpose of one (a Fortran
array, or `b.T` of a C array). An array with neither is staged through a
C-contiguous copy first.
"""


def layout(shape, strides, itemsize):
    """(transposed, ld) for an array of `shape` and byte `strides`:

    - (False, ld): the array is X, rows x cols, row-major, row i at i*ld elements;
    - (True, ld):  the array is X.T, where X (cols x rows) is row-major with ld;
    - None:        neither axis has a unit stride (or the rows overlap, or
                   run backwards): stage it through a contiguous copy.

    The stride of an axis of length 1 is never used, so it does not count."""
    rows, cols = shape
    s0, s1 = strides

    def ld_of(stride, width, count):
        if count == 1:
            return width
        if stride % itemsize == 0 and stride >= width * itemsize:
            return stride // itemsize
        return None

    if cols == 1 or s1 == itemsize:
        ld = ld_of(s0, cols, rows)
        if ld is not None:
            return False, ld
    if rows == 1 or s0 == itemsize:
        ld = ld_of(s1, rows, cols)
        if ld is not None:
            return True, ld
    return None


def plan(a_layout, out_layout):
    """What out = a.T is, once each side is known as a row-major X (a == X,
    or a == X.T) and Y (out == Y, or out == Y.T):

    - a == X,   out == Y:   Y = X.T, a transpose of X into Y;
    - a == X.T, out == Y.T: Y.T = X, so Y = X.T, a transpose again;
    - otherwise:            Y = X, a copy of rows (no transpose at all).

    Returns "transpose" or "copy"."""
    return "transpose" if a_layout[0] == out_layout[0] else "copy"
