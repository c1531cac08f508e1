"""GPU arrays: CuPy, __cuda_array_interface__ and DLPack. The CuPy tests need
a GPU and CuPy and skip with the reason elsewhere; the protocol readers and
the refusals run everywhere."""

import sys

import numpy as np
import pytest
from conftest import SIZED, gpu_reason, pattern, same_bytes

import gtranspose as gt
from gtranspose import _core


class CaiOnly:
    """An array known only by its __cuda_array_interface__ (as Numba's and
    PyTorch's are): wraps another one's interface, or host memory for the
    refusal tests."""

    def __init__(self, interface, keep=None):
        self.__cuda_array_interface__ = interface
        self.keep = keep


def host_cai(a):
    return CaiOnly({"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False), "version": 3,
                    "strides": a.strides, "stream": None}, keep=a)


class DLPackOnly:
    """An array known only by __dlpack__ and __dlpack_device__ (as JAX's are)."""

    def __init__(self, inner):
        self.inner = inner
        self.dtype = inner.dtype

    def __dlpack__(self, stream=None):
        return self.inner.__dlpack__(stream=stream) if stream is not None else self.inner.__dlpack__()

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


# ---- the protocols, read on the host --------------------------------------

def test_dlpack_view_reads_numpy_capsules():
    a = pattern((5, 7), np.float32)
    v = _core.DLPackView(a.__dlpack__())
    assert v.ptr == a.ctypes.data and v.shape == (5, 7) and v.strides in (None, (7, 1))
    assert v.dtype == (2, 32, 1) and v.device == (1, 0)
    s = pattern((6, 9), np.int16)[1:, ::2]
    v = _core.DLPackView(s.__dlpack__())
    assert v.ptr == s.ctypes.data and v.shape == (5, 5) and v.strides == (9, 2) and v.dtype == (0, 16, 1)
    for dt, code in [(np.uint8, 1), (np.float16, 2), (np.complex64, 5)]:
        assert _core.DLPackView(np.zeros((2, 2), dt).__dlpack__()).dtype[0] == code


def test_dlpack_capsule_is_consumed_once_and_released():
    a = pattern((3, 3), np.float64)
    refs = sys.getrefcount(a)
    cap = a.__dlpack__()
    v = _core.DLPackView(cap)
    with pytest.raises(ValueError, match="unused DLPack capsule"):
        _core.DLPackView(cap)
    assert sys.getrefcount(a) > refs  # the producer keeps a alive for the view
    del v, cap
    assert sys.getrefcount(a) == refs  # and lets it go with the view


def test_device_arrays_recognised():
    assert not gt.is_device_array(np.zeros((2, 2)))
    assert not gt.is_device_array(DLPackOnly(np.zeros((2, 2))))  # a CPU tensor goes the host way
    assert gt.is_device_array(host_cai(np.zeros((2, 2))))

    class OnGpu:
        def __dlpack__(self, stream=None):
            raise AssertionError("not called to recognise it")

        def __dlpack_device__(self):
            return (2, 0)

    assert gt.is_device_array(OnGpu())


def test_cpu_dlpack_tensors_go_through_numpy():
    a = pattern((9, 4), np.float32)
    b = gt.transpose(DLPackOnly(a))
    assert isinstance(b, np.ndarray) and same_bytes(b, np.ascontiguousarray(a.T))
    s = pattern((12, 10), np.int16)[::2, 1:]  # strided: read where it lies, through DLPack
    assert same_bytes(gt.transpose(DLPackOnly(s)), np.ascontiguousarray(s.T))


def test_device_entry_point_refuses_host_memory():
    a = pattern((8, 6), np.float32)
    out = np.zeros((6, 8), np.float32)
    why = gpu_reason()
    if not gt.built_with_cuda():
        with pytest.raises(gt.NoDeviceError, match="built without CUDA: device arrays need a CUDA build"):
            gt.transpose(host_cai(a), out=host_cai(out))
    elif why:
        with pytest.raises(gt.NoDeviceError, match="gt::transpose_device: "):
            gt.transpose(host_cai(a), out=host_cai(out))
    else:
        with pytest.raises(gt.GtValueError, match="in is not GPU memory"):
            gt.transpose(host_cai(a), out=host_cai(out))
    assert not out.any()


def test_device_refusals():
    a = host_cai(pattern((8, 6), np.float32))
    with pytest.raises(gt.GtValueError, match="cannot make a CaiOnly for the result: pass out="):
        gt.transpose(a)
    with pytest.raises(gt.GtValueError, match="host_mem applies to host arrays"):
        gt.transpose(a, host_mem="1G")
    with pytest.raises(gt.GtValueError, match="register applies to host arrays"):
        gt.transpose(a, register=True)
    with pytest.raises(gt.GtValueError, match="engine cpu cannot take a GPU array"):
        gt.transpose(a, engine="cpu")
    with pytest.raises(gt.GtValueError, match="2-D arrays: this one is 3-D"):
        gt.transpose(host_cai(np.zeros((2, 2, 2))))
    with pytest.raises(gt.GtValueError, match="out has shape"):
        gt.transpose(a, out=host_cai(np.zeros((8, 6), np.float32)))
    with pytest.raises(gt.GtValueError, match="out must be a GPU array for a GPU input, not ndarray"):
        gt.transpose(a, out=np.zeros((6, 8), np.float32))
    with pytest.raises(gt.GtValueError, match="out has dtype int32"):
        gt.transpose(a, out=host_cai(np.zeros((6, 8), np.int32)))
    with pytest.raises(gt.GtValueError, match="returns a view of new shape, which gtranspose can make for CuPy arrays"):
        gt.transpose(a, inplace=True)
    with pytest.raises(gt.GtValueError, match="8x6 rectangle needs a contiguous array"):
        gt.transpose(host_cai(pattern((8, 12), np.float32)[:, ::2]), inplace=True)
    with pytest.raises(gt.GtValueError, match="no axis of unit stride: pass a contiguous array"):
        gt.transpose(host_cai(np.zeros((8, 8), np.float32)[::2, ::2]))


# ---- CuPy, on a GPU --------------------------------------------------------

def to_cupy(cupy, a):
    return cupy.asarray(a)


def check(cupy, a_host, view=lambda x: x, **kw):
    a = view(to_cupy(cupy, a_host))
    b = gt.transpose(a, **kw)
    assert isinstance(b, cupy.ndarray) and b.flags.c_contiguous and b.dtype == a.dtype
    want = np.ascontiguousarray(view(a_host).T)
    assert same_bytes(cupy.asnumpy(b), want)
    return b


@pytest.mark.parametrize("size", sorted(SIZED))
@pytest.mark.parametrize("shape", [(1, 1), (1, 33), (33, 1), (67, 131), (1024, 96), (255, 1000)])
def test_cupy_every_size_and_shape(cupy, size, shape):
    check(cupy, pattern(shape, SIZED[size]))


@pytest.mark.parametrize("dtype", ["i1", "i2", "f2", "i4", "u4", "i8", "u8", "c8", "?"])
def test_cupy_dtypes(cupy, dtype):
    check(cupy, pattern((70, 90), dtype))


VIEWS = {
    "rows": lambda b: b[3:90],
    "columns (ld)": lambda b: b[:, 5:77],
    "block (ld)": lambda b: b[7:50, 11:90],
    "transposed (copy)": lambda b: b.T,
    "transposed block (copy)": lambda b: b[4:60, 10:99].T,
    "column stride 3 (staged)": lambda b: b[:, ::3],
    "reversed (staged)": lambda b: b[::-1],
}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("size", sorted(SIZED))
def test_cupy_views(cupy, view, size):
    check(cupy, pattern((120, 150), SIZED[size]), VIEWS[view])


def test_cupy_out(cupy):
    a_host = pattern((70, 45), np.float32)
    a = to_cupy(cupy, a_host)
    want = np.ascontiguousarray(a_host.T)
    for out in [cupy.empty((45, 70), np.float32), cupy.empty((45, 70), np.float32, order="F")]:
        assert gt.transpose(a, out=out) is out and same_bytes(cupy.asnumpy(out), want)
    big = cupy.zeros((60, 90), np.float32)
    gt.transpose(a, out=big[5:50, 10:80])
    got = cupy.asnumpy(big)
    assert same_bytes(np.ascontiguousarray(got[5:50, 10:80]), want) and got[:5].sum() == 0
    with pytest.raises(gt.GtValueError, match="in and out overlap"):
        sq = cupy.zeros((8, 8), np.float32)
        gt.transpose(sq, out=sq)


@pytest.mark.parametrize("size", sorted(SIZED))
def test_cupy_inplace(cupy, size):
    for n in (1, 31, 256, 1000):
        a_host = pattern((n, n), SIZED[size])
        a = to_cupy(cupy, a_host)
        assert gt.transpose(a, inplace=True) is a
        assert same_bytes(cupy.asnumpy(a), np.ascontiguousarray(a_host.T))
    base_host = pattern((50, 70), np.float64)
    base = to_cupy(cupy, base_host)
    gt.transpose(base[5:45, 20:60], inplace=True)
    want = base_host.copy()
    want[5:45, 20:60] = base_host[5:45, 20:60].T
    assert same_bytes(cupy.asnumpy(base), want)


@pytest.mark.parametrize("size", sorted(SIZED))
def test_cupy_inplace_rectangles(cupy, size):
    # c = 1, c > 1, one side dividing the other, long rows (a cluster's),
    # and a row that is its own transpose.
    for shape in ((2, 3), (31, 33), (1000, 999), (96, 256), (256, 96), (7, 5000), (40000, 3), (1, 50)):
        a_host = pattern(shape, SIZED[size])
        a = to_cupy(cupy, a_host)
        ptr = a.data.ptr
        b = gt.transpose(a, inplace=True)
        assert isinstance(b, cupy.ndarray) and b.shape == shape[::-1] and b.data.ptr == ptr and b.flags.c_contiguous
        assert same_bytes(cupy.asnumpy(b), np.ascontiguousarray(a_host.T)), shape
        f = cupy.asfortranarray(to_cupy(cupy, a_host))
        # CuPy's copy into Fortran order may quiet signalling NaNs: the
        # expected bytes are f's own, read before the transpose.
        f_host = cupy.asnumpy(f)
        g = gt.transpose(f, inplace=True)
        assert g.shape == shape[::-1] and g.flags.f_contiguous and g.data.ptr == f.data.ptr
        got, want = np.ascontiguousarray(cupy.asnumpy(g)), np.ascontiguousarray(f_host.T)
        wrong = np.flatnonzero((got.view(np.uint8) != want.view(np.uint8)).reshape(got.shape[0], -1).any(axis=1))
        assert same_bytes(got, want), (shape, f"{len(wrong)} rows differ, first {wrong[:5]}")
    with pytest.raises(gt.GtValueError, match="needs a contiguous array"):
        gt.transpose(to_cupy(cupy, pattern((8, 12), np.float32))[:, ::2], inplace=True)


def test_cupy_streams(cupy):
    a_host = pattern((2048, 1536), np.float32)
    want = np.ascontiguousarray(a_host.T)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        a = to_cupy(cupy, a_host)
        b = gt.transpose(a)  # on s, CuPy's current stream
        got = cupy.asnumpy(b, stream=s)
    s.synchronize()
    assert same_bytes(got, want)
    s2 = cupy.cuda.Stream(non_blocking=True)
    a = to_cupy(cupy, a_host)
    cupy.cuda.get_current_stream().synchronize()
    b = gt.transpose(a, stream=s2)
    s2.synchronize()
    assert same_bytes(cupy.asnumpy(b), want)


def test_cupy_kernels(cupy):
    a_host = pattern((300, 200), np.float64)
    for name in ("padded", "tiled", "naive-row"):
        check(cupy, a_host, kernel=name)
    with pytest.raises(gt.GtValueError, match="unknown kernel 'nope'"):
        gt.transpose(to_cupy(cupy, a_host), kernel="nope")
    with pytest.raises(gt.GtValueError, match="kernel 'inplace-tiled' is not an out-of-place transpose"):
        gt.transpose(to_cupy(cupy, a_host), kernel="inplace-tiled")
    sq = to_cupy(cupy, pattern((64, 64), np.float64))
    with pytest.raises(gt.GtValueError, match="kernel 'padded' is not an in-place transpose"):
        gt.transpose(sq, inplace=True, kernel="padded")


def test_other_kinds_through_the_protocols(cupy):
    a_host = pattern((130, 70), np.float32)
    want = np.ascontiguousarray(a_host.T)
    a = to_cupy(cupy, a_host)
    out = cupy.zeros((70, 130), np.float32)
    gt.transpose(CaiOnly(a.__cuda_array_interface__, a), out=CaiOnly(out.__cuda_array_interface__, out))
    cupy.cuda.Stream.null.synchronize()
    assert same_bytes(cupy.asnumpy(out), want)
    out2 = cupy.zeros((70, 130), np.float32)
    gt.transpose(DLPackOnly(a), out=CaiOnly(out2.__cuda_array_interface__, out2))
    cupy.cuda.Stream.null.synchronize()
    assert same_bytes(cupy.asnumpy(out2), want)
    with pytest.raises(gt.GtValueError, match="pass out="):
        gt.transpose(DLPackOnly(a))
