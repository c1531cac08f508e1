"""NumPy arrays (host memory): a Transposer keeps one library engine, and with
it the engine's pinned staging buffers, from call to call."""

import json
import threading

import numpy as np

from . import _core
from ._common import check_engine, element_size, run_args
from ._layout import layout, plan


def _host_array(a, what="a"):
    if not isinstance(a, np.ndarray):
        # A CPU tensor of another library is read where it lies (DLPack);
        # anything else (lists, objects with __array__) as NumPy makes it.
        a = np.from_dlpack(a) if hasattr(a, "__dlpack__") and hasattr(np, "from_dlpack") else np.asarray(a)
    if a.ndim != 2:
        raise _core.GtValueError(f"gtranspose transposes 2-D arrays: {what} is {a.ndim}-D (shape {a.shape})")
    return a


def _pointer(a):
    return a.__array_interface__["data"][0]


def _check_out(a, out):
    rows, cols = a.shape
    if not isinstance(out, np.ndarray):
        raise _core.GtValueError(f"out must be a NumPy array for a NumPy input, not {type(out).__name__}")
    if out.shape != (cols, rows):
        raise _core.GtValueError(f"out has shape {out.shape}: the transpose of a {rows}x{cols} array is "
                                 f"{(cols, rows)}")
    if out.dtype != a.dtype:
        raise _core.GtValueError(f"out has dtype {out.dtype}, a has {a.dtype}: gtranspose moves bytes and converts "
                                 "nothing, so give out a's dtype (byte order included)")
    if not out.flags.writeable:
        raise _core.GtValueError("out is read-only")
    if out.size and layout(out.shape, out.strides, out.dtype.itemsize) is None:
        raise _core.GtValueError(f"out (strides {out.strides}) has no axis of unit stride: give a C- or "
                                 "F-contiguous array, or a view of whole elements of one")
    if out.size and np.may_share_memory(a, out):
        raise _core.GtValueError("out overlaps a: give out its own memory (or use inplace=True on a square array)")


def new_array(shape, dtype):
    """np.empty(shape, dtype) with its pages faulted in on every core.

    A new array's pages are faulted in (and zeroed by the kernel) where they
    are first written; in a transpose that is the run's writer threads, one
    page at a time, in the run's time (for 4 GiB it took more than the
    transpose itself). Faulted in on all cores at once beforehand, they cost a
    fraction of that. The array is an ordinary NumPy array owning its memory."""
    out = np.empty(shape, dtype=dtype)
    if out.nbytes:
        _core.prefault(_pointer(out), out.nbytes)
    return out


class Transposer:
    """Transposes NumPy arrays with one library engine kept from call to call.

    The CUDA engine pins its staging buffers on its first call and keeps them,
    so later calls of the same size pay nothing for pinning (pinning costs
    about as much as writing the memory once). gtranspose.transpose() uses one
    Transposer per engine name; make your own to control when its buffers
    are freed (release(), or a with block)::

        with gtranspose.Transposer("cuda") as t:
            for a in arrays:
                b = t.transpose(a)
            print(t.last_report["rate_bytes_per_s"] / 1e9, "GB/s")

    One call runs at a time per Transposer; threads that share one wait their
    turn (the GIL is released while a call works).
    """

    def __init__(self, engine="auto"):
        self.engine = check_engine(engine)
        self._t = _core.Transposer(self.engine)
        #: The report of the last call that ran the library, as a dict (the
        #: CLI's --json fields: schema 1: engine, kernel, wall_s, rate_bytes_per_s, stages, notes ...).
        self.last_report = None

    @property
    def kind(self):
        """The engine that runs: "cuda" or "cpu" ("auto" resolved)."""
        return self._t.kind

    def transpose(self, a, out=None, *, inplace=False, kernel="auto", host_mem=None, device_mem=None, tile=None,
                  threads=None, streams=None, register=False):
        """out = a.T for a 2-D NumPy array; see gtranspose.transpose."""
        a = _host_array(a)
        args = run_args(host_mem, device_mem, tile, threads, streams, kernel)
        if not isinstance(register, bool):
            raise _core.GtValueError(f"register takes True or False, not {register!r}")
        if inplace:
            if out is not None:
                raise _core.GtValueError("inplace=True writes the result into a itself: drop out")
            if register:
                raise _core.GtValueError("register=True applies to out-of-place calls: drop it with inplace=True")
            return self._inplace(a, args)
        rows, cols = a.shape
        es = element_size(a.dtype)
        if out is None:
            out = new_array((cols, rows), a.dtype)
        else:
            _check_out(a, out)
        if a.size == 0:
            return out
        src = layout(a.shape, a.strides, es)
        if src is None:  # no unit-stride axis: stage through a C-contiguous copy
            a = np.ascontiguousarray(a)
            src = (False, cols)
        dst = layout(out.shape, out.strides, es)
        x = a.T if src[0] else a      # row-major, x.shape = (rows, cols) or (cols, rows)
        y = out.T if dst[0] else out  # row-major
        if plan(src, dst) == "copy":
            np.copyto(y, x)  # out = a.T is y = x here: whole rows, no transpose left to do
            return out
        report = self._t.transpose(_pointer(x), _pointer(y), x.shape[0], x.shape[1], es, src[1], dst[1], args,
                                   register, None)
        self.last_report = json.loads(report)
        return out

    def _inplace(self, a, args):
        rows, cols = a.shape
        if not a.flags.writeable:
            raise _core.GtValueError("inplace=True needs a writeable array: a is read-only")
        es = element_size(a.dtype)
        if a.size == 0:
            return a if rows == cols else a.reshape(cols, rows)
        if rows != cols:
            return self._inplace_rect(a, args, es)
        lay = layout(a.shape, a.strides, es)
        if lay is None:
            raise _core.GtValueError(f"inplace=True needs an axis of unit stride: a's strides are {a.strides} (use "
                                     "transpose(a) for a new array)")
        # A square matrix transposed in place is the same operation whether
        # it is read as X or as X.T.
        x = a.T if lay[0] else a
        self.last_report = json.loads(self._t.transpose_inplace(_pointer(x), rows, es, lay[1], args, None))
        return a

    def _inplace_rect(self, a, args, es):
        """A rectangle's transpose has rows of another length: its memory is
        reused whole, and the result is a new view of it, shape (cols, rows),
        in a's memory order (a itself keeps its shape over the moved bytes)."""
        rows, cols = a.shape
        if a.flags.c_contiguous:
            x, order = a, "C"
        elif a.flags.f_contiguous:
            x, order = a.T, "F"  # memory holds a.T row-major: transposing it gives a row-major
        else:
            raise _core.GtValueError(f"inplace=True on a {rows}x{cols} rectangle needs a contiguous array (C or "
                                     "Fortran order): its transpose fills the whole buffer (use transpose(a) for a "
                                     "new array)")
        r, c = x.shape
        self.last_report = json.loads(self._t.transpose_inplace_rect(_pointer(x), r, c, es, c, args, None))
        return a.reshape((cols, rows), order=order)

    def release(self):
        """Frees the pinned staging kept since the last call (the next call pins again)."""
        self._t.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False


_transposers = {}
_lock = threading.Lock()


def transposer(engine="auto"):
    """The Transposer gtranspose.transpose() uses for `engine` (made on first use)."""
    engine = check_engine(engine)
    with _lock:
        t = _transposers.get(engine)
        if t is None:
            t = Transposer(engine)
            # "auto" is "cuda" or "cpu": one engine (and one set of pinned
            # buffers) serves both names.
            t = _transposers.setdefault(t.kind, t)
            _transposers[engine] = t
        return t


def release():
    """Frees the pinned staging buffers that gtranspose.transpose() keeps
    between calls, and the engines holding them (the next call makes them
    again)."""
    with _lock:
        ts = {id(t): t for t in _transposers.values()}
        _transposers.clear()
    for t in ts.values():
        t.release()


def empty_pinned(shape, dtype=np.float32):
    """A new NumPy array in page-locked (pinned) host memory.

    The CUDA engine copies pinned arrays to and from the GPU by DMA directly,
    without staging: the fastest way in and out of transpose(). Pinning costs
    about as much as writing the memory once, so allocate once and reuse.
    Needs a CUDA build and a GPU (NoDeviceError otherwise). The memory is
    freed when the last array over it is gone."""
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in np.atleast_1d(shape))
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.empty(shape, dtype)
    buf = _core.PinnedBuffer(count * dtype.itemsize)
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)
