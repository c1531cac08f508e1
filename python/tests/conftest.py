"""Shared fixtures: the package under test, the CLI beside it, and what this
machine has (a GPU, CuPy), so that GPU tests skip with the reason here and
run where both exist (`pytest python/tests` on the GPU machine, with
PYTHONPATH=build/python)."""

import os
import shutil

import numpy as np
import pytest

import gtranspose as gt


def cli_path():
    """The gtranspose CLI built beside the package (ctest sets GTRANSPOSE_CLI)."""
    path = os.environ.get("GTRANSPOSE_CLI")
    if path and os.access(path, os.X_OK):
        return path
    guess = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(gt.__file__))), "gtranspose")
    return guess if os.access(guess, os.X_OK) else shutil.which("gtranspose")


@pytest.fixture
def cli():
    path = cli_path()
    if not path:
        pytest.skip("the gtranspose CLI was not found: set GTRANSPOSE_CLI (ctest does)")
    return path


def gpu_reason():
    """Why GPU tests cannot run here, or "" when they can."""
    if not gt.built_with_cuda():
        return "this gtranspose is a CPU-only build"
    n, why = gt.gpu_count()
    return "" if n > 0 else why


@pytest.fixture
def cupy():
    why = gpu_reason()
    if why:
        pytest.skip(f"no GPU for the CuPy tests ({why}); they run on a GPU machine")
    try:
        import cupy
    except ImportError:
        pytest.skip("CuPy is not installed: the CuPy tests run where it is (the GPU machine)")
    return cupy


# Every element size the library moves, with a NumPy type of that size.
SIZED = {1: np.uint8, 2: np.uint16, 4: np.float32, 8: np.float64, 16: np.complex128}


def pattern(shape, dtype, seed=0):
    """An array whose elements' bytes are a hash of their position (and the
    seed), so a misplaced element shows at every element size; floats may
    hold NaNs, which is why results are compared as bytes (same_bytes)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    with np.errstate(over="ignore"):
        h = (np.arange(n, dtype=np.uint64) + np.uint64(seed + 1)) * np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    raw = np.tile(h.view(np.uint8).reshape(n, 8), (1, 2))[:, :dtype.itemsize]
    return np.ascontiguousarray(raw).view(dtype).reshape(shape)


def same_bytes(x, y):
    """Bit-exact: the same shape, dtype and bytes (NaNs and -0.0 included)."""
    return x.shape == y.shape and x.dtype == y.dtype and np.ascontiguousarray(x).tobytes() == \
        np.ascontiguousarray(y).tobytes()
