"""Arrays in GPU memory: CuPy arrays, anything with __cuda_array_interface__,
and anything whose __dlpack__ gives a CUDA tensor. The registry's kernel
runs in the array's own memory, on its stream, and the result is an array of
the same kind (CuPy in, CuPy out)."""

import sys

import numpy as np

from . import _core
from ._common import element_size
from ._layout import layout, plan

# DLPack device types (dlpack.h) whose memory the kernels can read.
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
# The stream handles CUDA reserves: the legacy default stream.
_LEGACY_STREAM = 1


def _cupy_array(a):
    cupy = sys.modules.get("cupy")  # never imported here: a CuPy array means CuPy is loaded
    return cupy is not None and isinstance(a, cupy.ndarray)


def is_device_array(a):
    """True for an array in GPU memory that transpose() runs on the GPU."""
    if isinstance(a, np.ndarray):
        return False
    if hasattr(a, "__cuda_array_interface__"):
        return True
    if hasattr(a, "__dlpack_device__") and hasattr(a, "__dlpack__"):
        try:
            kind, _ = a.__dlpack_device__()
        except Exception:  # a producer that cannot say is not a device array we can use
            return False
        return int(kind) in (_DL_CUDA, _DL_CUDA_MANAGED)
    return False


class _View:
    """Pointer, shape, byte strides and dtype of a device array, and what
    keeps its memory alive while they are used."""

    def __init__(self, a, stream):
        self.keep = None
        if _cupy_array(a):  # its attributes directly: no interface dict to build on every call
            self.ptr, self.readonly, self.shape, self.dtype = a.data.ptr, False, a.shape, a.dtype
            strides = a.strides
            self.stream = stream
        elif hasattr(a, "__cuda_array_interface__"):
            cai = a.__cuda_array_interface__
            self.ptr = int(cai["data"][0])
            self.readonly = bool(cai["data"][1])
            self.shape = tuple(cai["shape"])
            structured = _descr(cai)
            self.dtype = structured if structured is not None else np.dtype(cai["typestr"])
            strides = cai.get("strides")
            # The interface's own stream (v3), unless the caller named one.
            self.stream = stream if stream is not None else _cai_stream(cai)
        else:
            dl_stream = stream if stream is not None else _LEGACY_STREAM
            try:
                capsule = a.__dlpack__(stream=dl_stream)
            except TypeError:  # a producer older than the stream argument
                capsule = a.__dlpack__()
            self.keep = _core.DLPackView(capsule)
            self.ptr = self.keep.ptr
            self.readonly = False
            self.shape = tuple(self.keep.shape)
            code, bits, lanes = self.keep.dtype
            self.dtype = getattr(a, "dtype", None)
            if not isinstance(self.dtype, np.dtype):
                self.dtype = np.dtype(f"V{bits * lanes // 8}")
            strides = self.keep.strides
            if strides is not None:
                strides = tuple(s * (bits * lanes // 8) for s in strides)
            self.stream = dl_stream
        if len(self.shape) != 2:
            raise _core.GtValueError(f"gtranspose transposes 2-D arrays: this one is {len(self.shape)}-D "
                                     f"(shape {self.shape})")
        es = self.dtype.itemsize
        self.strides = tuple(strides) if strides is not None else (self.shape[1] * es, es)


def _descr(cai):
    """A structured dtype from the interface's descr, where it is more than the typestr."""
    descr = cai.get("descr")
    if not descr or (len(descr) == 1 and descr[0][0] == ""):
        return None
    return np.dtype([tuple(f) for f in descr])


def _cai_stream(cai):
    s = cai.get("stream")
    # None: the producer needs no ordering; the legacy default stream orders
    # this launch after the work of every blocking stream, the safe choice.
    return _LEGACY_STREAM if s is None else int(s)


def _stream_of(a, stream):
    """The stream to run on: the caller's, CuPy's current one for a CuPy
    array (where CuPy runs its own kernels), else the array's own."""
    if stream is not None:
        return int(getattr(stream, "ptr", stream))
    if _cupy_array(a):
        return sys.modules["cupy"].cuda.get_current_stream().ptr
    return None


def _empty_like_kind(a, shape):
    """A new array of a's kind, dtype and GPU, of `shape`."""
    if _cupy_array(a):
        cupy = sys.modules["cupy"]
        with a.device:
            return cupy.empty(shape, dtype=a.dtype)
    if hasattr(a, "__array_namespace__"):
        return a.__array_namespace__().empty(shape, dtype=a.dtype, device=a.device)
    if hasattr(a, "new_empty"):  # PyTorch tensors: same dtype and device
        return a.new_empty(shape)
    raise _core.GtValueError(f"gtranspose cannot make a {type(a).__name__} for the result: pass out=, an array of "
                             f"shape {shape} on the same GPU")


def _staged(a, view):
    """A copy of a with a unit-stride axis, where a has none."""
    if _cupy_array(a):
        return sys.modules["cupy"].ascontiguousarray(a)
    raise _core.GtValueError(f"this {type(a).__name__} (strides {view.strides}) has no axis of unit stride: pass a "
                             "contiguous array")


def _inplace_rect(a, view, es, kernel):
    """A rectangle in place (inplace-rect): its memory is reused whole and
    the result is a new view of it, shape (cols, rows), in a's memory order."""
    rows, cols = view.shape
    lay = layout(view.shape, view.strides, es)
    if rows == 1 or cols == 1:
        order = "C"  # a row or a column: its own transpose in memory, whatever its strides
    elif lay in ((False, cols), (True, rows)):
        order = "F" if lay[0] else "C"
    else:
        raise _core.GtValueError(f"inplace=True on a {rows}x{cols} rectangle needs a contiguous array (C or Fortran "
                                 f"order), not strides {view.strides}: its transpose fills the whole buffer (use "
                                 "transpose(a) for a new array)")
    # The result is a view of a's memory with another shape: made by a's own
    # reshape (CuPy, or a C-ordered array of a kind that has one).
    if not (_cupy_array(a) or (order == "C" and hasattr(a, "reshape"))):
        raise _core.GtValueError(f"inplace=True on a rectangle returns a view of new shape, which gtranspose can "
                                 f"make for CuPy arrays and C-ordered arrays with reshape(), not this "
                                 f"{type(a).__name__}: use transpose(a) for a new array")
    r, c = (rows, cols) if order == "C" else (cols, rows)  # F order: memory holds a.T row-major
    if rows and cols:
        _core.transpose_device_inplace_rect(view.ptr, r, c, es, view.stream, kernel)
    if _cupy_array(a):
        return a.reshape((cols, rows), order=order)
    return a.reshape((cols, rows))


def transpose(a, out=None, *, inplace=False, kernel="auto", stream=None):
    """out = a.T on the GPU; see gtranspose.transpose."""
    if _cupy_array(a):
        with a.device:  # CuPy allocates, copies and names its stream on the current device
            return _transpose(a, out, inplace, kernel, stream)
    return _transpose(a, out, inplace, kernel, stream)


def _transpose(a, out, inplace, kernel, stream):
    view = _View(a, _stream_of(a, stream))
    es = element_size(view.dtype)
    rows, cols = view.shape
    if inplace:
        if out is not None:
            raise _core.GtValueError("inplace=True writes the result into a itself: drop out")
        if view.readonly:
            raise _core.GtValueError("inplace=True needs a writeable array: a is read-only")
        if rows != cols:
            return _inplace_rect(a, view, es, kernel)
        lay = layout(view.shape, view.strides, es)
        if lay is None:
            raise _core.GtValueError(f"inplace=True needs an axis of unit stride: a's strides are {view.strides}")
        if rows:
            _core.transpose_device_inplace(view.ptr, rows, es, lay[1], view.stream, kernel)
        return a
    src = layout(view.shape, view.strides, es)
    if src is None:
        a = _staged(a, view)
        view = _View(a, view.stream)
        src = layout(view.shape, view.strides, es)
    if out is None:
        out = _empty_like_kind(a, (cols, rows))
    elif not is_device_array(out):
        raise _core.GtValueError(f"out must be a GPU array for a GPU input, not {type(out).__name__}")
    ov = _View(out, view.stream)
    if ov.shape != (cols, rows):
        raise _core.GtValueError(f"out has shape {ov.shape}: the transpose of a {rows}x{cols} array is {(cols, rows)}")
    # A dtype read from DLPack alone is only its size (void); the rest must match.
    unknown = "V" in (ov.dtype.kind, view.dtype.kind) and not (ov.dtype.names or view.dtype.names)
    if ov.dtype.itemsize != es or (ov.dtype != view.dtype and not unknown):
        raise _core.GtValueError(f"out has dtype {ov.dtype}, a has {view.dtype}: give out a's dtype")
    dst = layout(ov.shape, ov.strides, es)
    if dst is None:
        raise _core.GtValueError(f"out (strides {ov.strides}) has no axis of unit stride: give a contiguous array")
    if rows == 0 or cols == 0:
        return out
    # x and y are the row-major matrices behind a and out (_layout.plan).
    xr, xc = (cols, rows) if src[0] else (rows, cols)
    if plan(src, dst) == "copy":
        _core.copy_device(view.ptr, ov.ptr, xr, xc, es, src[1], dst[1], view.stream)
    else:
        _core.transpose_device(view.ptr, ov.ptr, xr, xc, es, src[1], dst[1], view.stream, kernel)
    return out
