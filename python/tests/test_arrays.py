"""transpose() of NumPy arrays: every element type and size, byte orders, odd
shapes, strided views, out=, inplace=True, and the library's engines; each
result compared bit for bit with NumPy's own a.T."""

import os
import signal
import threading
import time

import numpy as np
import pytest
from conftest import SIZED, gpu_reason, pattern, same_bytes

import gtranspose as gt

# The CLI's 14 element types, plus what NumPy adds of the same sizes.
DTYPES = ["i1", "u1", "i2", "u2", "f2", "i4", "u4", "f4", "i8", "u8", "f8", "c8", "c16",
          "?", "V1", "V2", "V4", "V8", "V16", "M8[s]", "m8[ms]", "S4", "U1", "U4",
          [("x", "<i4"), ("y", "<f4")], [("a", "u1"), ("b", "u1")]]
SHAPES = [(1, 1), (1, 9), (9, 1), (3, 5), (64, 64), (67, 131), (257, 33), (1000, 3)]


def check(a, **kw):
    b = gt.transpose(a, **kw)
    assert b.flags.c_contiguous
    assert same_bytes(b, np.ascontiguousarray(a.T))
    return b


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype(dtype):
    check(pattern((67, 131), dtype))


def test_bfloat16_of_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed (its bfloat16 is NumPy's bf16)")
    check(pattern((33, 70), ml_dtypes.bfloat16))


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("kind", ["i2", "u4", "f4", "f8", "c8", "c16", "f2"])
def test_byte_order_kept(order, kind):
    a = pattern((41, 29), order + kind)
    b = check(a)
    assert b.dtype == a.dtype and b.dtype.byteorder == a.dtype.byteorder


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("size", sorted(SIZED))
def test_odd_shapes_every_size(shape, size):
    check(pattern(shape, SIZED[size]))


def test_values_not_just_bytes():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(gt.transpose(a), a.T)
    np.testing.assert_array_equal(gt.transpose([[1, 2, 3], [4, 5, 6]]), [[1, 4], [2, 5], [3, 6]])


VIEWS = {
    "row slice": lambda b: b[3:40],
    "column slice (ld)": lambda b: b[:, 5:77],
    "every other row (ld)": lambda b: b[::2],
    "block (ld)": lambda b: b[7:50, 11:90],
    "transposed (F layout)": lambda b: b.T,
    "transposed block": lambda b: b[4:60, 10:99].T,
    "fortran copy": lambda b: np.asfortranarray(b),
    "column stride 3 (staged)": lambda b: b[:, ::3],
    "both strided (staged)": lambda b: b[::2, ::5],
    "reversed rows (staged)": lambda b: b[::-1],
    "reversed columns (staged)": lambda b: b[:, ::-1],
    "broadcast rows (staged)": lambda b: np.broadcast_to(b[0], (17, b.shape[1])),
    "single column": lambda b: b[:, 7:8],
    "single strided row": lambda b: b[5:6, ::4],
}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("size", sorted(SIZED))
def test_strided_views(view, size):
    base = pattern((120, 150), SIZED[size])
    a = VIEWS[view](base)
    check(a)
    assert same_bytes(base, pattern((120, 150), SIZED[size]))  # the input is never written


@pytest.mark.parametrize("size", sorted(SIZED))
def test_out_c_f_and_row_views(size):
    a = pattern((70, 45), SIZED[size])
    want = np.ascontiguousarray(a.T)
    out = np.empty((45, 70), a.dtype)
    assert gt.transpose(a, out=out) is out and same_bytes(out, want)
    out_f = np.empty((45, 70), a.dtype, order="F")
    assert gt.transpose(a, out=out_f) is out_f and same_bytes(out_f, want)
    big = np.zeros((60, 90), a.dtype)
    view = big[5:50, 10:80]
    gt.transpose(a, out=view)
    assert same_bytes(view, want)
    assert not big[:5].any() and not big[:, :10].any() and not big[50:].any() and not big[:, 80:].any()
    # a Fortran input into a Fortran output is a transpose again (both read as X.T)
    out_f2 = np.empty((45, 70), a.dtype, order="F")
    gt.transpose(np.asfortranarray(a), out=out_f2)
    assert same_bytes(out_f2, want)


def test_out_checked():
    a = pattern((6, 4), np.float32)
    with pytest.raises(gt.GtValueError, match=r"out has shape \(6, 4\): the transpose of a 6x4 array is \(4, 6\)"):
        gt.transpose(a, out=np.empty((6, 4), np.float32))
    with pytest.raises(ValueError, match="out has dtype float64, a has float32"):
        gt.transpose(a, out=np.empty((4, 6), np.float64))
    with pytest.raises(ValueError, match="byte order included"):
        gt.transpose(a, out=np.empty((4, 6), ">f4"))
    ro = np.empty((4, 6), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        gt.transpose(a, out=ro)
    with pytest.raises(ValueError, match="no axis of unit stride"):
        gt.transpose(a, out=np.empty((8, 12), np.float32)[::2, ::2])
    with pytest.raises(ValueError, match="out must be a NumPy array"):
        gt.transpose(a, out=[[0] * 6] * 4)
    sq = pattern((8, 8), np.float32)
    with pytest.raises(ValueError, match="out overlaps a"):
        gt.transpose(sq, out=sq)
    big = np.zeros((8, 16), np.float32)
    with pytest.raises(ValueError, match="out overlaps a"):
        gt.transpose(big[:, :8], out=big[:, 4:12])


@pytest.mark.parametrize("size", sorted(SIZED))
@pytest.mark.parametrize("n", [1, 2, 17, 64, 129])
def test_inplace_square(size, n):
    a = pattern((n, n), SIZED[size])
    want = np.ascontiguousarray(a.T)
    assert gt.transpose(a, inplace=True) is a
    assert same_bytes(a, want)


def test_inplace_views():
    base = pattern((50, 70), np.float64)
    keep = base.copy()
    sub = base[5:45, 20:60]  # 40x40 inside a wider matrix: ld 70
    want = np.ascontiguousarray(sub.T)
    gt.transpose(sub, inplace=True)
    assert same_bytes(sub, want)
    outside = np.ones(base.shape, bool)
    outside[5:45, 20:60] = False
    assert same_bytes(base[outside], keep[outside])  # nothing outside the view moved
    f = np.asfortranarray(pattern((33, 33), np.int16))
    want = f.T.copy()  # (f.T is C-contiguous: ascontiguousarray would not copy it)
    gt.transpose(f, inplace=True)
    assert same_bytes(f, want)


@pytest.mark.parametrize("size", sorted(SIZED))
@pytest.mark.parametrize("shape", [(3, 5), (6, 4), (1, 9), (9, 1), (40, 20), (97, 89), (128, 48)])
def test_inplace_rectangle(size, shape):
    # R = kC shapes go through the engines' stages, the others through the
    # gcd decomposition; either way the result is a view of a's memory.
    for order in "CF":
        a = np.asarray(pattern(shape, SIZED[size]), order=order)
        want = a.T.copy()  # (a Fortran a.T is C-contiguous: ascontiguousarray would not copy it)
        t = gt.transpose(a, inplace=True)
        assert t.shape == shape[::-1] and np.shares_memory(t, a)
        assert same_bytes(np.ascontiguousarray(t), want)


def test_inplace_refusals():
    with pytest.raises(gt.GtValueError, match="needs a contiguous array"):
        gt.transpose(np.zeros((6, 10))[:, :5], inplace=True)
    ro = np.zeros((4, 4))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gt.transpose(ro, inplace=True)
    with pytest.raises(ValueError, match="unit stride"):
        gt.transpose(np.zeros((8, 8))[::2, ::2], inplace=True)
    with pytest.raises(ValueError, match="drop out"):
        gt.transpose(np.zeros((4, 4)), out=np.zeros((4, 4)), inplace=True)


def test_empty_arrays():
    for shape in [(0, 5), (5, 0), (0, 0)]:
        b = gt.transpose(np.zeros(shape, np.float32))
        assert b.shape == shape[::-1] and b.dtype == np.float32
    assert gt.transpose(np.zeros((0, 0)), inplace=True).shape == (0, 0)


def test_refused_arrays():
    with pytest.raises(gt.GtValueError, match="2-D arrays: a is 3-D"):
        gt.transpose(np.zeros((2, 3, 4)))
    with pytest.raises(gt.GtValueError, match="1-D"):
        gt.transpose(np.zeros(5))
    with pytest.raises(gt.GtValueError, match="holds Python objects"):
        gt.transpose(np.array([[1, "x"]], dtype=object))
    with pytest.raises(gt.GtValueError, match="3-byte elements"):
        gt.transpose(np.zeros((2, 2), "V3"))


def test_engines_and_options():
    a = pattern((300, 200), np.float32)
    want = np.ascontiguousarray(a.T)
    assert same_bytes(gt.transpose(a, engine="cpu", threads=1, tile=4096, host_mem="64M"), want)
    rep = gt.transposer("cpu").last_report
    assert rep["engine"] == "cpu" and rep["threads"] == 1 and rep["tiles"] > 1
    assert rep["host_memory"]["budget_bytes"] == 64 << 20 and rep["input"]["format"] == "memory"
    assert same_bytes(gt.transpose(a, host_mem=1 << 26, register=True), want)  # staged where CUDA is absent
    with pytest.raises(gt.GtValueError, match="unknown engine 'tpu': use auto, cuda or cpu"):
        gt.transpose(a, engine="tpu")
    with pytest.raises(gt.GtValueError, match="host_mem: "):
        gt.transpose(a, host_mem="lots")
    with pytest.raises(gt.GtValueError, match="host_mem -1 is negative"):
        gt.transpose(a, host_mem=-1)
    with pytest.raises(gt.GtValueError, match="threads takes an int >= 0"):
        gt.transpose(a, threads=-2)
    with pytest.raises(gt.GtValueError, match="stream applies to GPU arrays"):
        gt.transpose(a, stream=5)


def test_named_kernel():
    a = pattern((64, 96), np.float32)
    if gpu_reason():
        # No CUDA engine here: the CPU engine refuses names it cannot know,
        # and a CUDA kernel's name, which it cannot run.
        with pytest.raises(gt.GtValueError, match="unknown kernel 'nope'"):
            gt.transpose(a, kernel="nope", engine="cpu")
        # A CUDA kernel's name is refused too, as the CLI refuses it: with the
        # way to run it where the build has CUDA, as unknown where it has not.
        want = "not the CUDA kernel 'padded'" if gt.built_with_cuda() else "unknown kernel 'padded'"
        with pytest.raises(gt.GtValueError, match=want):
            gt.transpose(a, kernel="padded", engine="cpu")
    else:
        assert same_bytes(gt.transpose(a, kernel="tiled", engine="cuda"), np.ascontiguousarray(a.T))
        assert gt.transposer("cuda").last_report["kernel"] == "tiled"


def test_cuda_engine_without_gpu():
    why = gpu_reason()
    if not why:
        pytest.skip("this machine has a GPU: the cuda engine runs (test_named_kernel)")
    with pytest.raises(gt.NoDeviceError, match="engine cuda: .*use engine cpu"):
        gt.transpose(np.zeros((4, 4)), engine="cuda")


def test_transposer_reuse_and_release():
    with gt.Transposer() as t:
        for seed in range(3):
            a = pattern((129, 77), np.float32, seed)
            assert same_bytes(t.transpose(a), np.ascontiguousarray(a.T))
        assert t.kind in ("cpu", "cuda") and t.last_report["engine"] == t.kind
        t.release()
        assert same_bytes(t.transpose(a), np.ascontiguousarray(a.T))  # usable after a release
    gt.release()
    assert same_bytes(gt.transpose(a), np.ascontiguousarray(a.T))


def test_threads_share_the_default_transposer():
    arrays = [pattern((200 + i, 150 - i), SIZED[[1, 2, 4, 8, 16][i % 5]], i) for i in range(10)]
    results = [None] * len(arrays)

    def work(i):
        results[i] = gt.transpose(arrays[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(arrays))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for a, b in zip(arrays, results):
        assert same_bytes(b, np.ascontiguousarray(a.T))


def test_pinned_arrays():
    why = gpu_reason()
    if why:
        with pytest.raises(gt.NoDeviceError, match="pinned host memory"):
            gt.empty_pinned((4, 4))
        pytest.skip(f"no GPU ({why}): pinned arrays are refused, as checked")
    a = gt.empty_pinned((513, 257), np.float32)
    a[...] = pattern(a.shape, a.dtype)
    out = gt.empty_pinned((257, 513), np.float32)
    gt.transpose(a, out=out)
    assert same_bytes(out, np.ascontiguousarray(a.T))
    assert gt._core.is_pinned_host(a.__array_interface__["data"][0])


def test_register_on_gpu():
    if gpu_reason():
        pytest.skip("no GPU: register=True stages as usual here (test_engines_and_options)")
    a = pattern((1000, 700), np.float32)
    b = gt.transpose(a, register=True, engine="cuda")
    assert same_bytes(b, np.ascontiguousarray(a.T))
    assert any("registered with CUDA" in n for n in gt.transposer("cuda").last_report["notes"])


def test_ctrl_c_stops_a_long_call():
    a = np.ones((8192, 8192), np.float32)
    out = np.zeros((8192, 8192), np.float32)

    def watch():  # Ctrl-C once the library has written the first tile
        deadline = time.monotonic() + 60
        while not out[:16, :16].any() and time.monotonic() < deadline:
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGINT)

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        # 4096 tiles of 64x64, the most the planner allows of tiles this small
        gt.transpose(a, out=out, engine="cpu", tile=4096, threads=1)
    th.join()
    assert out.any() and not out.all()  # begun, not finished
    assert time.monotonic() - t0 < 30
    assert same_bytes(gt.transpose(a, out=out, engine="cpu"), np.ascontiguousarray(a.T))  # usable after
