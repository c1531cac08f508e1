"""The new output of transpose(a): faulted in on every core beforehand
(gtranspose._host.new_array, the library's gt::prefault_host), and still an
ordinary NumPy array that owns its memory."""

import numpy as np
import pytest

import gtranspose as gt
from gtranspose import _core
from gtranspose._host import new_array


def test_new_output_is_an_ordinary_array():
    a = np.arange(3000 * 1001, dtype=np.float64).reshape(3000, 1001)
    b = gt.transpose(a, engine="cpu")
    assert b.flags.owndata and b.base is None
    assert b.flags.c_contiguous and b.flags.writeable and b.flags.aligned
    assert b.shape == (1001, 3000) and b.dtype == a.dtype
    assert np.array_equal(b, a.T)
    # Its memory is its own: resizing in place works only for an owner.
    b.resize((3000, 1001), refcheck=False)


@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (1024, 4099), (4096, 1029)])
def test_new_array(shape):
    for dtype in (np.uint8, np.float32, np.complex128):
        out = new_array(shape, dtype)
        assert out.shape == shape and out.dtype == dtype and out.flags.owndata and out.flags.c_contiguous
    assert new_array((0, 5), np.float32).shape == (0, 5)


@pytest.mark.parametrize("nbytes,offset", [(1, 0), (4095, 1), (4097, 4095), (3 << 20, 0), (37 << 20, 123)])
def test_prefault_keeps_contents(nbytes, offset):
    # A range that starts and ends inside pages: the pages around it hold
    # other data, which must be left as it is.
    buf = np.frombuffer(np.random.default_rng(nbytes).bytes(nbytes + offset + 8192), dtype=np.uint8).copy()
    want = buf.copy()
    threads = _core.prefault(buf.ctypes.data + offset, nbytes)
    assert threads >= 1
    assert np.array_equal(buf, want)


def test_prefault_refuses_null():
    assert _core.prefault(0, 0) == 0
    with pytest.raises(ValueError, match="null pointer"):
        _core.prefault(0, 10)
